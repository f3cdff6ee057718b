"""Heavy stages, one day at a time, as plain functions (no Dagster).

An asset calls these in process, or a Dagster Pipes worker calls the same
function in a subprocess / container / pod (``CORPUS_DEPLOYMENT``): the worker
code does not change with the deployment. Each function reads its inputs from
the store, writes exactly one partition atomically and returns a JSON-able
summary that becomes the materialisation's metadata.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from corpus.fetch import Fetcher
from corpus.http import PoliteClient, RetryPolicy
from corpus.parallel import map_papers
from corpus.pdf import PdfProbe, pdf_row, probe_pdf
from corpus.scratch import process_scratch
from corpus.store import BlobStore, Store


@dataclass(frozen=True)
class FetchSettings:
    """How files are fetched: from the landing zone only, from arXiv (politely), or from
    arXiv's bulk archives (``bulk``: the root ``bulk``, falling back to arXiv for what it
    does not hold when ``bulk_fallback`` is ``arxiv``)."""

    mode: str = "landing"  # landing | arxiv | bulk
    bulk: str = ""  # bulk root: a directory, s3:// or gs:// URL (CORPUS_BULK)
    bulk_fallback: str = "arxiv"  # arxiv | none
    bulk_layout: str = "tars"  # tars (s3://arxiv) | kaggle (gs://arxiv-dataset/arxiv, PDFs only)
    web_url: str = "https://arxiv.org"
    min_interval_s: float = 3.0
    timeout_s: float = 120.0
    max_retries: int = 5

    def client(self, log=None) -> PoliteClient | None:
        if self.mode != "arxiv" and not (self.mode == "bulk" and self.bulk_fallback == "arxiv"):
            return None
        return PoliteClient(
            min_interval_s=self.min_interval_s,
            timeout_s=self.timeout_s,
            retry=RetryPolicy(max_retries=self.max_retries),
            log=log,
        )

    def fetcher_options(self, home: str | Path) -> dict:
        """Fetcher keyword arguments for the bulk mode (none for the others)."""
        if self.mode != "bulk":
            return {}
        from corpus.bulk_fetch import BulkReader

        if not self.bulk:
            raise ValueError("CORPUS_SOURCE=bulk needs CORPUS_BULK: a directory, s3:// or gs:// URL")
        reader = BulkReader.open(self.bulk, home, layout=self.bulk_layout)
        return {"bulk": reader, "bulk_fallback": self.bulk_fallback == "arxiv"}


PDF_SCHEMA = {
    "id": pl.Utf8,
    "version": pl.Int64,
    "status": pl.Utf8,  # stored (the blob is in the store) | missing | failed (fetch)
    "source": pl.Utf8,  # landing | bulk | arxiv: where the blob came from (this run's facts: its metadata)
    "sha256": pl.Utf8,
    "md5": pl.Utf8,
    "bytes": pl.Int64,
    "pages": pl.Int64,
    "first_page_width": pl.Float64,
    "first_page_height": pl.Float64,
    "rotate": pl.Int64,
    "encrypted": pl.Boolean,
    "probe_error": pl.Utf8,
    "passed": pl.Boolean,  # goes to Grobid
    "filter_reason": pl.Utf8,  # unreadable | too_many_pages | landscape | missing | failed
    "fetch_reason": pl.Utf8,
    "http_status": pl.Int64,
}


def upstream(store: Store, asset: str, day: str) -> pl.DataFrame:
    """An upstream partition, or a clear error naming what to materialise first."""
    if not store.has_partition(asset, day):
        raise FileNotFoundError(f"{asset} has no partition {day} under {store.home}: materialise it first")
    return store.read_partition(asset, day)


def previous_rows(store: Store, asset: str, day: str) -> dict[str, dict]:
    """The rows of this day's previous materialisation, by id (none when there is none)."""
    if not store.has_partition(asset, day):
        return {}
    return {r["id"]: r for r in store.read_partition(asset, day).iter_rows(named=True)}


def known_blobs(store: Store, asset: str, day: str) -> dict[str, tuple[str, str]]:
    """Blobs the previous materialisation of this day already stored: never fetched again."""
    return {
        pid: (r["sha256"], r["md5"]) for pid, r in previous_rows(store, asset, day).items() if r["sha256"]
    }


def papers_of_day(store: Store, day: str) -> list[tuple[str, int | None]]:
    meta = upstream(store, "arxiv_metadata", day).filter(~pl.col("deleted"))
    return list(meta.select("id", "version").iter_rows())


def fetch_columns(paper_id: str, version: int | None, fetched, previous: dict | None = None) -> dict:
    """The columns every file asset shares: which file, from where, and how the fetch went.

    They describe the file, not this run, so re-running an unchanged day writes the same
    rows: ``status`` is ``stored`` whenever the blob is in the store (whether this run
    copied it or found it there), and a blob known from the previous materialisation
    keeps that row's ``source`` (landing | arxiv) and HTTP status. What this run did
    (stored/cached, known, downloads) goes into the stage summary, i.e. the run's metadata.
    """
    status, source, http_status = fetched.status, fetched.source, fetched.http_status
    if status == "cached":
        status = "stored"
    if source == "known" and previous and previous.get("sha256") == fetched.sha256:
        source, http_status = previous.get("source") or source, previous.get("http_status")
    return {
        "id": paper_id,
        "version": version,
        "status": status,
        "source": source,
        "sha256": fetched.sha256,
        "md5": fetched.md5,
        "bytes": fetched.bytes,
        "fetch_reason": fetched.reason,
        "http_status": http_status,
    }


def _probe_row(path: str) -> dict:
    """One PDF's probe columns and App. B verdict (run in a worker process)."""
    return pdf_row(probe_pdf(path))


def _probe_failed(path: str, reason: str) -> dict:
    return pdf_row(PdfProbe(error=f"probe failed: {reason}"))


def arxiv_pdfs_day(
    home: str | Path, landing: str | Path, day: str, fetch: FetchSettings, log=None, workers: int = 1
) -> dict:
    """Fetch, store and probe the PDFs of one day; write ``arxiv_pdfs/date=<day>``.

    Fetching is sequential (one connection, politely); probing, the CPU-bound part, runs
    over ``workers`` processes (:func:`corpus.parallel.map_papers`)."""
    store, blobs = Store(Path(home)), BlobStore(Path(home) / "blobs")
    rows = []
    status: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    client = fetch.client(log)
    previous = previous_rows(store, "arxiv_pdfs", day)
    with Fetcher(
        blobs, Path(landing), mode=fetch.mode, client=client, base_url=fetch.web_url,
        known=known_blobs(store, "arxiv_pdfs", day), **fetch.fetcher_options(home),
    ) as fetcher:  # fmt: skip
        for paper_id, version in papers_of_day(store, day):
            fetched = fetcher.fetch(paper_id, "pdf", version)
            sources[fetched.source or "none"] += 1
            row = fetch_columns(paper_id, version, fetched, previous.get(paper_id))
            if not fetched.sha256:
                row.update(passed=False, filter_reason=fetched.status)  # missing | failed
            rows.append(row)
            status[fetched.status] += 1
    probed = [r for r in rows if r["sha256"]]
    paths = [str(blobs.path("pdf", r["sha256"])) for r in probed]
    for row, probe in zip(probed, map_papers(_probe_row, paths, workers, _probe_failed), strict=True):
        row["probe_error"] = probe.pop("error", None)
        row.update(probe)
    frame = pl.DataFrame([{k: r.get(k) for k in PDF_SCHEMA} for r in rows], schema=PDF_SCHEMA)
    store.write_partition("arxiv_pdfs", day, frame)
    return {
        "day": day,
        "papers": frame.height,
        "status": dict(status),  # this run: stored (copied now) | cached (already there) | ...
        "sources": dict(sources),  # this run: known (previous materialisation) | landing | arxiv
        "filter_reasons": [r.get("filter_reason") for r in rows],
        "downloads": fetcher.downloads,
    }


# ---------------------------------------------------------------- e-prints and LaTeX

SOURCE_SCHEMA = {
    "id": pl.Utf8,
    "version": pl.Int64,
    "status": pl.Utf8,  # fetch: stored | cached | missing | failed
    "source": pl.Utf8,
    "sha256": pl.Utf8,
    "md5": pl.Utf8,
    "bytes": pl.Int64,
    "kind": pl.Utf8,  # tar | gzip_tex | tex | pdf | ps | empty | unknown
    "n_files": pl.Int64,
    "skipped": pl.List(pl.Utf8),
    "main": pl.Utf8,
    "has_bbl": pl.Boolean,
    "n_bib_files": pl.Int64,
    "non_utf8": pl.List(pl.Utf8),
    "warnings": pl.List(pl.Utf8),
    "failure": pl.Utf8,  # a failure code (unsafe_path, pdf_only, no_main_tex, input_loop, ...) or null
    "failure_message": pl.Utf8,
    "fetch_reason": pl.Utf8,
    "http_status": pl.Int64,
    "latex_source": pl.Utf8,  # corpus.eprint.LatexSource as JSON: expanded text, .bbl, .bib
}

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
    "doc": pl.Utf8,  # corpus.papers.StructuredDoc as JSON (the S2ORC pdf_parse shape)
}


def parse_row(
    paper_id: str, parser: str, doc: dict | None = None, status: str = "ok", reason: str | None = None
) -> dict:
    """One row of ``pdf_parses`` / ``latex_parses`` from a StructuredDoc dict
    (``model_dump()`` or ``corpus.tei.parse_tei_dict``): counts for S2ORC Table 4, and the document."""
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
        "doc": json.dumps(doc, ensure_ascii=False, separators=(",", ":")),
    }


def frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)


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


def _unpack_row(task: tuple[str, str, str]) -> dict:
    """Unpack one e-print into its own scratch directory and assemble its LaTeX (a worker
    process): the columns of ``arxiv_sources`` that describe the source."""
    import shutil

    from corpus.eprint import load_eprint

    _paper_id, blob, scratch = task
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        unpacked, source, failure = load_eprint(Path(blob), Path(scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    row: dict = {"kind": unpacked.kind, "n_files": len(unpacked.files), "skipped": unpacked.skipped}
    if failure is not None:  # the scratch path is this process's: not in the row
        row.update(failure=failure.code, failure_message=failure.message.replace(str(scratch), "<e-print>"))
    if source is not None:
        row.update(
            main=source.main,
            has_bbl=bool(source.bbl),
            n_bib_files=len(source.bib),
            non_utf8=source.non_utf8,
            warnings=source.warnings,
            latex_source=source.model_dump_json(),
        )
    return row


def _unpack_failed(task: tuple[str, str, str], reason: str) -> dict:
    return {"failure": "unpack_error", "failure_message": reason}


def arxiv_sources_day(
    home: str | Path, landing: str | Path, day: str, fetch: FetchSettings, log=None, workers: int = 1
) -> dict:
    """Fetch the e-prints of one day (sequentially), then unpack each without trusting it and
    assemble its LaTeX over ``workers`` processes."""
    import shutil

    from corpus import arxiv_ids

    store, blobs = Store(Path(home)), BlobStore(Path(home) / "blobs")
    # This process's own scratch (corpus.scratch): two runs of one day never share it, and
    # what a killed run leaves there is removed by the next run.
    scratch_root = process_scratch(home) / "eprints"
    rows = []
    status: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    previous = previous_rows(store, "arxiv_sources", day)
    with Fetcher(
        blobs, Path(landing), mode=fetch.mode, client=fetch.client(log), base_url=fetch.web_url,
        known=known_blobs(store, "arxiv_sources", day), **fetch.fetcher_options(home),
    ) as fetcher:  # fmt: skip
        for paper_id, version in papers_of_day(store, day):
            fetched = fetcher.fetch(paper_id, "eprint", version)
            status[fetched.status] += 1
            sources[fetched.source or "none"] += 1
            columns = fetch_columns(paper_id, version, fetched, previous.get(paper_id))
            row = {**columns, "skipped": [], "non_utf8": [], "warnings": []}
            if not fetched.sha256:
                row.update(failure=fetched.status, failure_message=fetched.reason)
            rows.append(row)
    fetched_rows = [r for r in rows if r["sha256"]]
    tasks = [
        (r["id"], str(blobs.path("eprint", r["sha256"])), str(scratch_root / arxiv_ids.to_file_name(r["id"])))
        for r in fetched_rows
    ]
    for row, unpacked in zip(
        fetched_rows, map_papers(_unpack_row, tasks, workers, _unpack_failed), strict=True
    ):
        row.update(unpacked)
    shutil.rmtree(scratch_root, ignore_errors=True)
    store.write_partition("arxiv_sources", day, frame(rows, SOURCE_SCHEMA))
    return {
        "day": day,
        "papers": len(rows),
        "status": dict(status),  # this run: stored (copied now) | cached (already there) | ...
        "sources": dict(sources),  # this run: known (previous materialisation) | landing | arxiv
        "kinds": dict(Counter(r.get("kind") or "none" for r in rows)),
        "failures": dict(Counter(r.get("failure") or "ok" for r in rows)),
    }


def _latex_row(task: tuple[str, str | None, str | None]) -> dict:
    """One paper's ``latex_parses`` row (a worker process)."""
    from corpus.eprint import LatexSource
    from corpus.latex import LatexError, parse_latex

    paper_id, latex_source, failure = task
    if latex_source is None:
        return parse_row(paper_id, "latex", status="skipped", reason=failure or "no_source")
    try:
        doc = parse_latex(LatexSource.model_validate_json(latex_source), paper_id)
    except LatexError as exc:
        return parse_row(paper_id, "latex", status="failed", reason=exc.failure().code)
    except (RecursionError, ValueError, IndexError) as exc:  # a parser bug must not sink the day
        return parse_row(paper_id, "latex", status="failed", reason=f"parse_error: {type(exc).__name__}")
    return parse_row(paper_id, "latex", doc.model_dump())


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


# ---------------------------------------------------------------- Grobid TEI and PDF parses

TEI_SCHEMA = {
    "id": pl.Utf8,
    "pdf_sha256": pl.Utf8,
    "status": pl.Utf8,  # ok (fresh from Grobid) | cached | failed | pending (Grobid unavailable)
    "source": pl.Utf8,  # grobid | cache | landing
    "tei_bytes": pl.Int64,  # the TEI itself: blobs/tei/<pdf_sha256[:2]>/<pdf_sha256>
    "grobid_version": pl.Utf8,
    "http_status": pl.Int64,
    "reason": pl.Utf8,
    "detail": pl.Utf8,
    "attempts": pl.Int64,
    "seconds": pl.Float64,
}


def grobid_tei_day(home: str | Path, landing: str | Path, day: str, grobid: dict | None, log=None) -> dict:
    """TEI for every PDF of one day that passed the filters: from the cache (TEI keyed by
    the PDF's sha256, seeded from ``landing/tei``) or from Grobid.

    ``grobid``: keyword arguments of :class:`corpus.grobid.GrobidClient` (``options``
    as a dict), or ``None`` for no Grobid. When Grobid does not answer, the cached
    TEI is still materialised and the rest is ``pending``: the run does not fail.
    """
    from corpus import arxiv_ids
    from corpus.grobid import GrobidClient, GrobidOptions, PdfItem, TeiCache, TeiRunSummary, collect_tei
    from corpus.landing_files import LandingReader

    store, blobs = Store(Path(home)), BlobStore(Path(home) / "blobs")
    pdfs = upstream(store, "arxiv_pdfs", day).filter(pl.col("passed"))
    tei_dir = Path(landing) / "tei"
    items = [
        PdfItem(
            key=r["id"],
            pdf=blobs.path("pdf", r["sha256"]),
            sha256=r["sha256"],
            tei_hint=tei_dir / f"{arxiv_ids.to_file_name(r['id'])}.tei.xml",
        )
        for r in pdfs.select("id", "sha256").iter_rows(named=True)
    ]
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
    status = Counter(r["status"] for r in rows)  # this run: ok (Grobid now) | cached | failed | pending
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
    store.write_partition("grobid_tei", day, frame(rows, TEI_SCHEMA))
    return {
        "day": day,
        "pdfs": len(rows),
        "status": dict(status),
        "reasons": dict(summary.reasons),
        "sent": summary.sent,
        "unavailable": summary.unavailable,
    }


def _tei_row(task: tuple[str, str, str]) -> dict:
    """One paper's ``pdf_parses`` row from its TEI (a worker process)."""
    from corpus.tei import TeiError, parse_tei_dict

    paper_id, tei_path, grobid_version = task
    try:
        doc = parse_tei_dict(Path(tei_path).read_bytes(), paper_id, parser_version=grobid_version)
    except (TeiError, OSError) as exc:
        return parse_row(paper_id, "grobid", status="failed", reason=f"{type(exc).__name__}: {exc}"[:300])
    return parse_row(paper_id, "grobid", doc)


def _tei_failed(task: tuple[str, str, str], reason: str) -> dict:
    return parse_row(task[0], "grobid", status="failed", reason=reason[:300])


def pdf_parses_day(home: str | Path, day: str, workers: int = 1) -> dict:
    """Every TEI of one day -> the S2ORC structure (``corpus.tei``), over ``workers`` processes."""
    from corpus.grobid import TeiCache

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


# ---------------------------------------------------------------- papers, bibliographies


def parsed_texts(store: Store, asset: str, day: str) -> dict[str, str]:
    """``{paper id: StructuredDoc JSON}`` for the successful parses of a day (missing table = none)."""
    if not store.has_partition(asset, day):
        return {}
    rows = store.read_partition(asset, day).filter(pl.col("status") == "ok").select("id", "doc")
    return dict(rows.iter_rows())


def parsed_docs(store: Store, asset: str, day: str) -> dict[str, dict]:
    """``{paper id: StructuredDoc dict}`` for the successful parses of a day (missing table = none)."""
    return {pid: json.loads(doc) for pid, doc in parsed_texts(store, asset, day).items()}


def chosen_texts(store: Store, day: str) -> dict[str, str]:
    """The full text ``papers`` chose for each kept paper of a day (Grobid or LaTeX), as JSON.

    Callers decode one paper at a time (:func:`chosen_docs`): decoded documents are
    several times the size of their JSON, so a day never holds all of them at once.
    """
    papers = upstream(store, "papers", day).filter(pl.col("kept") & pl.col("parse_source").is_not_null())
    by_source = {
        "grobid": parsed_texts(store, "pdf_parses", day),
        "latex": parsed_texts(store, "latex_parses", day),
    }
    return {
        pid: by_source[src][pid]
        for pid, src in papers.select("id", "parse_source").iter_rows()
        if pid in by_source.get(src, {})
    }


def chosen_docs(store: Store, day: str) -> Iterator[tuple[str, dict]]:
    """(paper id, StructuredDoc dict) of :func:`chosen_texts`, decoded one paper at a time."""
    for pid, text in chosen_texts(store, day).items():
        yield pid, json.loads(text)


FULLTEXT_IDS = "fulltext_ids"  # side table: arXiv ids named in each paper's body text (co-citation edges)


def papers_day(home: str | Path, day: str) -> dict:
    """Canonical metadata, the chosen parse and the S2ORC filters for one day's papers."""
    from corpus.graph import fulltext_id_edges
    from corpus.metadata import canonical_papers, paper_counts, papers_frame

    store = Store(Path(home))
    meta = upstream(store, "arxiv_metadata", day).filter(~pl.col("deleted"))
    grobid = parsed_docs(store, "pdf_parses", day)
    latex = parsed_docs(store, "latex_parses", day)
    rows, failures = canonical_papers(meta.to_dicts(), grobid, latex)
    papers = papers_frame(rows)
    store.write_partition("papers", day, papers)
    by_source = {"grobid": grobid, "latex": latex}
    docs = pl.DataFrame(
        {
            "paper_id": [r["id"] for r in rows if r["kept"] and r["parse_source"]],
            "text": [
                "\n".join(p["text"] for p in by_source[r["parse_source"]][r["id"]]["body_text"])
                for r in rows
                if r["kept"] and r["parse_source"]
            ],
        },
        schema={"paper_id": pl.Utf8, "text": pl.Utf8},
    )
    store.write_partition(FULLTEXT_IDS, day, fulltext_id_edges(docs))
    return {
        "day": day,
        "papers": papers.height,
        "failures": failures,
        "drop_reasons": papers["drop_reason"].to_list(),
        "counts": paper_counts(papers),
        "parse_reasons": dict(Counter(papers["parse_reason"].to_list())),
    }


def bib_entries_day(home: str | Path, day: str) -> dict:
    """Every bibliography entry of every chosen parse of one day, normalised for linking."""
    from corpus.bibliography import bib_frame, bib_rows

    store = Store(Path(home))
    rows = []
    for pid, doc in chosen_docs(store, day):
        rows.extend(bib_rows(pid, doc))
    entries = bib_frame(rows)
    store.write_partition("bib_entries", day, entries)
    return {
        "day": day,
        "entries": entries.height,
        "with_title": int(entries["norm_title"].is_not_null().sum()),
        "with_doi": int(entries["doi"].is_not_null().sum()),
        "with_arxiv_id": int(entries["arxiv_id"].is_not_null().sum()),
    }
