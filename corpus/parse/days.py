"""The parse stages, one day at a time (no Dagster): ``grobid_tei``, ``pdf_parses`` and
``latex_parses``, called in process or by the Pipes worker like corpus.ingest.days."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import polars as pl

from corpus.day_io import frame, previous_rows, upstream
from corpus.parallel import map_papers
from corpus.store import BlobStore, Store

PARSE_SCHEMA = {
    "id": pl.Utf8,
    "parser": pl.Utf8,  # grobid | latex
    "status": pl.Utf8,  # ok | failed | skipped
    "reason": pl.Utf8,
    "parser_version": pl.Utf8,
    "citation_style": pl.Utf8,
    "title": pl.Utf8,
    "n_paragraphs": pl.Int64,
    "n_cite_spans": pl.Int64,
    "n_linked_cite_spans": pl.Int64,
    "n_bib_entries": pl.Int64,
    "n_ref_entries": pl.Int64,
    "body_chars": pl.Int64,
    "warnings": pl.List(pl.Utf8),  # what the parser repaired as TeX would (unbalanced braces, ...)
    "doc": pl.Utf8,  # corpus.parse.document.StructuredDoc as JSON (the S2ORC pdf_parse shape)
}


def parse_row(
    paper_id: str,
    parser: str,
    doc: dict | None = None,
    status: str = "ok",
    reason: str | None = None,
    warnings: list[str] | None = None,
) -> dict:
    """One row of ``pdf_parses`` / ``latex_parses`` from a StructuredDoc dict
    (``model_dump()`` or ``corpus.parse.tei.parse_tei_dict``): counts for S2ORC Table 4, and the document."""
    if doc is None:
        return {"id": paper_id, "parser": parser, "status": status, "reason": reason}
    body = doc["body_text"]
    cites = [s for p in body for s in p["cite_spans"]]
    return {
        "id": paper_id,
        "parser": parser,
        "status": status,
        "reason": reason,
        "parser_version": doc["parser_version"],
        "citation_style": doc["citation_style"],
        "title": doc["title"],
        "n_paragraphs": len(body),
        "n_cite_spans": len(cites),
        "n_linked_cite_spans": sum(1 for s in cites if s["ref_id"]),
        "n_bib_entries": len(doc["bib_entries"]),
        "n_ref_entries": len(doc["ref_entries"]),
        "body_chars": sum(len(p["text"]) for p in body),
        "warnings": warnings or [],
        "doc": json.dumps(doc, ensure_ascii=False, separators=(",", ":")),
    }


def parse_summary(rows: list[dict]) -> dict:
    """Per-paper averages like S2ORC Table 4 and the citation-style histogram."""
    ok = [r for r in rows if r["status"] == "ok"]
    n = len(ok) or 1
    styles = Counter(r.get("citation_style") or "OTHER" for r in ok)
    return {
        "papers": len(rows),
        "parsed": len(ok),
        "failed": sum(1 for r in rows if r["status"] == "failed"),
        "status": dict(Counter(r["status"] for r in rows)),
        "reasons": dict(Counter(r["reason"] for r in rows if r.get("reason"))),
        "paragraphs_per_paper": round(sum(r["n_paragraphs"] for r in ok) / n, 2),
        "cite_spans_per_paper": round(sum(r["n_cite_spans"] for r in ok) / n, 2),
        "linked_cite_spans_per_paper": round(sum(r["n_linked_cite_spans"] for r in ok) / n, 2),
        "bib_entries_per_paper": round(sum(r["n_bib_entries"] for r in ok) / n, 2),
        "citation_styles": dict(styles),
    }


def _latex_row(task: tuple[str, str | None, str | None]) -> dict:
    """One paper's ``latex_parses`` row (a worker process)."""
    from corpus.ingest.eprint import LatexSource
    from corpus.parse.latex import LatexError, parse_latex

    paper_id, latex_source, failure = task
    if latex_source is None:
        return parse_row(paper_id, "latex", status="skipped", reason=failure or "no_source")
    warnings: list[str] = []
    try:
        doc = parse_latex(LatexSource.model_validate_json(latex_source), paper_id, warnings)
    except LatexError as exc:
        return parse_row(paper_id, "latex", status="failed", reason=exc.failure().code)
    except (RecursionError, ValueError, IndexError) as exc:  # a parser bug must not sink the day
        return parse_row(paper_id, "latex", status="failed", reason=f"parse_error: {type(exc).__name__}")
    return parse_row(paper_id, "latex", doc.model_dump(), warnings=warnings)


def _latex_failed(task: tuple[str, str | None, str | None], reason: str) -> dict:
    return parse_row(task[0], "latex", status="failed", reason=f"parse_error: {reason}"[:300])


def latex_parses_day(home: str | Path, day: str, workers: int = 1) -> dict:
    """Parse every assembled LaTeX source of one day into the S2ORC structure, over ``workers``
    processes."""
    store = Store(Path(home))
    sources = upstream(store, "arxiv_sources", day)
    tasks = list(sources.select("id", "latex_source", "failure").iter_rows())
    rows = map_papers(_latex_row, tasks, workers, _latex_failed)
    store.write_partition("latex_parses", day, frame(rows, PARSE_SCHEMA))
    return parse_summary(rows)


TEI_SCHEMA = {
    "id": pl.Utf8,
    "pdf_sha256": pl.Utf8,
    "status": pl.Utf8,  # ok (fresh from Grobid) | cached | failed | pending (Grobid unavailable) | skipped
    "source": pl.Utf8,  # grobid | cache | landing
    "tei_bytes": pl.Int64,  # the TEI itself: blobs/tei/<pdf_sha256[:2]>/<pdf_sha256>
    "grobid_version": pl.Utf8,
    "http_status": pl.Int64,
    "reason": pl.Utf8,  # why it failed, is pending, or (skipped) why it is not sent
    "detail": pl.Utf8,
    "attempts": pl.Int64,
    "seconds": pl.Float64,
}
LATEX_SIGNALS = ["id", "status", "body_chars", "n_bib_entries"]  # what the Grobid policy reads


def grobid_tei_day(
    home: str | Path, landing: str | Path, day: str, grobid: dict | None, log=None, policy: dict | None = None
) -> dict:
    """TEI for the PDFs of one day that passed the filters: from the cache (TEI keyed by the
    PDF's sha256, seeded from ``landing/tei``), whatever the policy, or from Grobid for the
    PDFs the policy sends (:mod:`corpus.parse.grobid_policy`; ``policy``: its fields, default
    ``fallback``: the day's ``latex_parses`` say which papers' LaTeX parse serves, and their
    PDFs are ``skipped``).

    ``grobid``: keyword arguments of :class:`corpus.parse.grobid.GrobidClient` (``options``
    as a dict), or ``None`` for no Grobid. When Grobid does not answer, the cached
    TEI is still materialised and the rest is ``pending``: the run does not fail.
    """
    from corpus.ingest import arxiv_ids
    from corpus.ingest.landing_files import LandingReader
    from corpus.parse.grobid import GrobidClient, GrobidOptions, PdfItem, TeiCache, TeiRunSummary, collect_tei
    from corpus.parse.grobid_policy import SKIP_REASON, GrobidPolicy, send_reason

    rules = GrobidPolicy(**(policy or {}))
    store, blobs = Store(Path(home)), BlobStore(Path(home) / "blobs")
    pdfs = upstream(store, "arxiv_pdfs", day).filter(pl.col("passed"))
    latex: dict[str, dict] = {}
    if rules.reads_latex:  # read through the store: a re-derived LaTeX parse makes this day stale
        if not store.has_partition("latex_parses", day):
            raise FileNotFoundError(
                f"latex_parses has no partition {day} under {store.home}: CORPUS_GROBID=fallback "
                "sends a PDF to Grobid only where the LaTeX parse cannot serve; materialise it first"
            )
        rows = store.read_partition("latex_parses", day, columns=LATEX_SIGNALS)
        latex = {r["id"]: r for r in rows.iter_rows(named=True)}
    tei_dir = Path(landing) / "tei"
    items, wanted = [], Counter()
    for r in pdfs.select("id", "sha256", "pages").iter_rows(named=True):
        why = send_reason(rules, r["id"], latex.get(r["id"]), r["pages"])
        wanted[why or SKIP_REASON] += 1
        items.append(
            PdfItem(
                key=r["id"],
                pdf=blobs.path("pdf", r["sha256"]),
                sha256=r["sha256"],
                tei_hint=tei_dir / f"{arxiv_ids.to_file_name(r['id'])}.tei.xml",
                skip=None if why else SKIP_REASON,
            )
        )
    summary = TeiRunSummary()
    client = None
    if grobid is not None:
        kwargs = dict(grobid)
        kwargs["options"] = GrobidOptions(**kwargs.get("options", {}))
        client = GrobidClient(log=log, **kwargs)
    try:
        reader = LandingReader(landing)
        rows = [row.as_dict() for row in collect_tei(items, TeiCache(blobs), client, summary, reader)]
    finally:
        if client is not None:
            client.close()
    # this run: ok (Grobid now) | cached | failed | pending | skipped
    status = Counter(r["status"] for r in rows)
    previous = previous_rows(store, "grobid_tei", day)
    for i, row in enumerate(rows):
        row["id"] = row.pop("key")
        row.pop("tei_path", None)  # absolute; the blob is found again from pdf_sha256
        # A TEI the cache already held keeps the row that first brought it (ok from Grobid,
        # or cached from the landing zone): re-running an unchanged day writes the same rows.
        before = previous.get(row["id"])
        if (
            row["status"] == "cached"
            and before
            and before["pdf_sha256"] == row["pdf_sha256"]
            and before["status"] in ("ok", "cached")
        ):
            rows[i] = before
    # in the day's PDF order, not the order Grobid answered in: the same rows, the same bytes
    order = {item.key: i for i, item in enumerate(items)}
    rows.sort(key=lambda r: order[r["id"]])
    store.write_partition("grobid_tei", day, frame(rows, TEI_SCHEMA))
    return {
        "day": day,
        "pdfs": len(rows),
        "status": dict(status),
        "reasons": dict(summary.reasons),
        "sent": summary.sent,
        "unavailable": summary.unavailable,
        "policy": {"mode": rules.mode, "sample": rules.sample},
        "wanted": dict(wanted),  # why each PDF goes to Grobid (latex_parsed: it does not)
        "needs_grobid": status.get("ok", 0) + status.get("failed", 0) + status.get("pending", 0),
    }


def _tei_row(task: tuple[str, str, str]) -> dict:
    """One paper's ``pdf_parses`` row from its TEI (a worker process)."""
    from corpus.parse.tei import TeiError, parse_tei_dict

    paper_id, tei_path, grobid_version = task
    try:
        doc = parse_tei_dict(Path(tei_path).read_bytes(), paper_id, parser_version=grobid_version)
    except (TeiError, OSError) as exc:
        return parse_row(paper_id, "grobid", status="failed", reason=f"{type(exc).__name__}: {exc}"[:300])
    return parse_row(paper_id, "grobid", doc)


def _tei_failed(task: tuple[str, str, str], reason: str) -> dict:
    return parse_row(task[0], "grobid", status="failed", reason=reason[:300])


def pdf_parses_day(home: str | Path, day: str, workers: int = 1) -> dict:
    """Every TEI of one day -> the S2ORC structure (``corpus.parse.tei``), over ``workers`` processes."""
    from corpus.parse.grobid import TeiCache

    store = Store(Path(home))
    cache = TeiCache(BlobStore(Path(home) / "blobs"))
    tei = upstream(store, "grobid_tei", day)
    rows: list[dict | None] = []
    tasks, slots = [], []
    for rec in tei.iter_rows(named=True):
        if rec["status"] not in ("ok", "cached") or not rec["pdf_sha256"]:
            rows.append(
                parse_row(rec["id"], "grobid", status="skipped", reason=rec["reason"] or rec["status"])
            )
            continue
        slots.append(len(rows))
        rows.append(None)
        tasks.append((rec["id"], str(cache.path(rec["pdf_sha256"])), rec["grobid_version"] or ""))
    for slot, row in zip(slots, map_papers(_tei_row, tasks, workers, _tei_failed), strict=True):
        rows[slot] = row
    store.write_partition("pdf_parses", day, frame(rows, PARSE_SCHEMA))
    return parse_summary(rows)
