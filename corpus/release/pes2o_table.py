"""peS2o per day: the ``pes2o`` table, each kept paper's signals measured once and its v1/v2
verdicts (the release writer, corpus.release.pes2o_release, reads it).

**Daily** (:func:`pes2o_day`): for every paper ``papers`` kept on a day, the
signals are computed once, on the paper as peS2o sees it: the canonical title
and abstract (the card takes them from metadata, not from Grobid) and, when
``papers`` chose a full text, that parse's body paragraphs. Two rows follow,
one per source: ``s2orc`` (full text; a paper without one is dropped as
``no_full_text``) and ``s2ag`` (title and abstract; metadata-only papers too),
each with the v1 and v2 verdict and drop reason, the signals as JSON, and the
released ``text`` (with its whitespace word count) when either version keeps
it. v1 and v2 keep the same text for a source, so it is stored once.
``added`` is the partition's day: the OAI datestamp on which the paper came into
the corpus (a date, not the wall clock, so a re-run gives the same bytes);
``created`` is the paper's arXiv ``created`` date (its year's 1 January when
only the year is known). A paper that cannot be measured gets rows with reason
``failed`` and the error in ``detail``; the day goes on. A paper the S2ORC
filters of ``papers`` dropped gets rows too, with reason ``paper_filter`` and
the ``papers`` drop reason in ``detail`` and no signals: so the funnel starts
from every paper, and a paper dropped on a later day is not released from an
earlier day's row.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict

from corpus.day_io import upstream
from corpus.papers.days import chosen_texts
from corpus.parallel import map_papers
from corpus.parse.document import Paragraph, ParseSource, StructuredDoc
from corpus.release import pes2o
from corpus.store import Store

ASSET = "pes2o"
SOURCES = ("s2orc", "s2ag")

# Drop reasons in the order corpus.release.pes2o applies them (the funnel's order); "paper_filter"
# (dropped by the S2ORC filters of ``papers``), "failed" (not measurable) and
# "no_full_text" (s2orc without a chosen parse) come first.
RULES: dict[str, tuple[str, ...]] = {
    "s2orc": (
        "paper_filter",
        "failed",
        "no_full_text",
        "no_title",
        "no_abstract",
        "not_english",
        "too_few_words",
        "no_year",
        "published_before_1970",
        "too_few_paragraphs",
        "top_word_not_alpha",
        "top_word_too_frequent",
    ),
    "s2ag": (
        "paper_filter",
        "failed",
        "no_title",
        "no_abstract",
        "abstract_not_english",
        "title_not_english",
        "abstract_low_probability",
        "abstract_too_short",
        "abstract_too_long",
        "top_word_not_alpha",
        "no_year",
        "published_before_1970",
        "ocr_spaced_letters",
    ),
}

PES2O_SCHEMA: dict[str, Any] = {
    "id": pl.Utf8,
    "source": pl.Utf8,  # s2orc | s2ag
    "added": pl.Utf8,  # peS2o timestamp of the partition's day
    "created": pl.Utf8,  # peS2o timestamp of the paper's created date (null: unknown)
    "created_date": pl.Date,
    "year": pl.Int64,
    "v1_keep": pl.Boolean,
    "v1_reason": pl.Utf8,
    "v2_keep": pl.Boolean,
    "v2_reason": pl.Utf8,
    "detail": pl.Utf8,  # the error (reason "failed") or the papers drop reason ("paper_filter")
    "text": pl.Utf8,  # the released text when v1 or v2 keeps it
    "words": pl.Int64,  # whitespace words of text
    "signals": pl.Utf8,  # corpus.release.pes2o.Signals as JSON (null when not measured)
}

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


# --------------------------------------------------------------------------- daily


def timestamp(day: dt.date) -> str:
    return f"{day.isoformat()}T00:00:00.000Z"


def _created(row: Mapping[str, Any]) -> dt.date | None:
    created = row.get("created")
    if isinstance(created, dt.date):
        return created
    year = row.get("year")
    return dt.date(year, 1, 1) if isinstance(year, int) and 1 <= year <= 9999 else None


class _BodyParagraph(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: str
    section: str | None = ""


class _ChosenBody(BaseModel):
    """What peS2o reads of a stored parse: its source and its body paragraphs' text and section."""

    model_config = ConfigDict(extra="ignore")
    source: ParseSource
    body_text: list[_BodyParagraph]


def paper_doc(row: Mapping[str, Any], parse_json: str | bytes | None) -> StructuredDoc:
    """The paper as peS2o measures it: canonical title and abstract, the chosen body.

    ``parse_json`` is the chosen parse as stored (a :class:`StructuredDoc` as JSON).
    Only what :func:`corpus.release.pes2o.compute_signals` reads is decoded and validated
    (paragraph text and section, in pydantic's JSON parser); bibliography, spans
    and the rest are skipped without becoming Python objects, which makes this
    about twice as fast as ``json.loads`` alone. Bad JSON raises ``ValueError``.
    """
    abstract = [Paragraph(text=t) for t in _PARAGRAPH_BREAK.split(row.get("abstract") or "") if t.strip()]
    body: list[Paragraph] = []
    source = "s2orc"  # no parse: the value is unused (ocr_prone is passed explicitly)
    if parse_json is not None:
        parse = _ChosenBody.model_validate_json(parse_json)
        source = parse.source
        body = [Paragraph(text=p.text, section=p.section or "") for p in parse.body_text]
    return StructuredDoc(
        paper_id=row["id"],
        source=source,
        title=row.get("title") or "",
        year=row.get("year"),
        abstract=abstract,
        body_text=body,
    )


def paper_rows(row: Mapping[str, Any], parse_json: str | bytes | None, day: dt.date) -> list[dict]:
    """The s2orc and s2ag rows of one kept paper (raises on input it cannot measure).

    ``row``: its ``papers`` row; ``parse_json``: its chosen parse as stored (None when
    it has none). What :func:`pes2o_day` does for every kept paper of a day.
    """
    has_parse = parse_json is not None
    doc = paper_doc(row, parse_json)
    created = _created(row)
    signals = pes2o.compute_signals(
        doc,
        row.get("year"),
        ocr_prone=(row.get("abstract_source") or "") in pes2o.OCR_PRONE_SOURCES,
    )
    outcomes = pes2o.release(doc, signals, day, created or dt.date(1970, 1, 1))
    base = {
        "id": row["id"],
        "added": timestamp(day),
        "created": timestamp(created) if created else None,
        "created_date": created,
        "year": row.get("year"),
        "signals": signals.model_dump_json(),
    }
    rows = []
    for source in SOURCES:
        out = {**base, "source": source}
        texts = set()
        for o in outcomes:
            if o.source != source:
                continue
            keep, reason = o.keep, o.reason
            if source == "s2orc" and not has_parse:
                keep, reason = False, "no_full_text"
            out[f"{o.version}_keep"], out[f"{o.version}_reason"] = keep, reason
            if keep:
                texts.add(o.document["text"])
        if len(texts) > 1:  # corpus.release.pes2o keeps one text per source; anything else is a bug there
            raise ValueError(f"{row['id']}: v1 and v2 {source} texts differ")
        if texts:
            out["text"] = texts.pop()
            out["words"] = pes2o.count_tokens(out["text"])
        rows.append(out)
    return rows


def _dropped_rows(row: Mapping[str, Any], day: dt.date, reason: str, detail: str | None) -> list[dict]:
    """Both sources dropped before measuring, for ``reason`` (``failed`` / ``paper_filter``)."""
    created = _created(row)
    return [
        {
            "id": row["id"],
            "source": source,
            "added": timestamp(day),
            "created": timestamp(created) if created else None,
            "created_date": created,
            "year": row.get("year"),
            "v1_keep": False,
            "v1_reason": reason,
            "v2_keep": False,
            "v2_reason": reason,
            "detail": detail,
        }
        for source in SOURCES
    ]


def pes2o_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows -> a frame with exactly :data:`PES2O_SCHEMA`, sorted by (id, source)."""
    rows = [{k: r.get(k) for k in PES2O_SCHEMA} for r in rows]
    frame = (
        pl.DataFrame(rows, schema=PES2O_SCHEMA, orient="row") if rows else pl.DataFrame(schema=PES2O_SCHEMA)
    )
    return frame.sort("id", "source")


PAPERS_PER_WORKER = 200  # ~1 s of signals: below that a pool process costs more than it saves

_Task = tuple[dict, "str | bytes | None", dt.date]  # a kept paper's row, its chosen parse, the day


def _measured(task: _Task) -> list[dict]:
    return paper_rows(*task)


def _not_measured(task: _Task, reason: str) -> list[dict]:
    row, _, date = task
    return _dropped_rows(row, date, "failed", reason)


def pes2o_day(home: str | Path, day: str, workers: int = 1) -> dict:
    """Signals and v1/v2 verdicts of one day's kept papers; writes ``pes2o/date=<day>``.

    The kept papers are measured over ``workers`` processes (:func:`corpus.parallel.map_papers`,
    at least :data:`PAPERS_PER_WORKER` papers each); a paper that cannot be measured, even one
    that kills its process, is a ``failed`` row, never a failed day.

    Returns a JSON-able summary: ``papers`` (all of the day's, kept or not), ``rows``, ``kept`` (``{"s2orc_v1": n, ...}``),
    ``reasons`` (``{"s2orc_v1": {reason: n}}``), ``failures`` (``[{id, reason}]``),
    ``duplicates`` (ids listed twice in the day's ``papers``; the first row counts).
    """
    store = Store(Path(home))
    date = dt.date.fromisoformat(day)
    papers = upstream(store, "papers", day)
    texts = chosen_texts(store, day)  # decoded one paper at a time (paper_doc)
    rows: list[dict] = []
    tasks: list[_Task] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    cols = ["id", "title", "abstract", "abstract_source", "year", "created", "kept", "drop_reason"]
    for row in papers.select(cols).iter_rows(named=True):
        if row["id"] in seen:
            duplicates.append(row["id"])
            continue
        seen.add(row["id"])
        if not row["kept"]:
            rows.extend(_dropped_rows(row, date, "paper_filter", row["drop_reason"]))
        else:
            tasks.append((row, texts.get(row["id"]), date))
    failures: list[dict] = []
    for (row, _, _), measured in zip(
        tasks,
        map_papers(_measured, tasks, workers, _not_measured, min_per_worker=PAPERS_PER_WORKER),
        strict=True,
    ):
        if "detail" in measured[0]:  # _not_measured's rows: one paper failed, not the day
            failures.append({"id": row["id"], "reason": measured[0]["detail"]})
        rows.extend(measured)
    frame = pes2o_frame(rows)
    store.write_partition(ASSET, day, frame)
    kept: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {}
    for r in rows:
        for v in pes2o.VERSIONS:
            key = f"{r['source']}_{v}"
            kept[key] += bool(r[f"{v}_keep"])
            if not r[f"{v}_keep"]:
                reasons.setdefault(key, Counter())[r[f"{v}_reason"]] += 1
    return {
        "day": day,
        "papers": len(seen),
        "rows": frame.height,
        "kept": {f"{s}_{v}": kept[f"{s}_{v}"] for s in SOURCES for v in pes2o.VERSIONS},
        "reasons": {k: dict(c) for k, c in sorted(reasons.items())},
        "failures": failures,
        "duplicates": duplicates,
    }
