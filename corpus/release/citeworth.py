"""CiteWorth paragraphs of a day (SPEC.md §7): the ``citeworth_paragraphs`` and
``citeworth_candidates`` stage over the store, and every name of the CiteWorth code.

The code is in three parts, each one idea:

* :mod:`corpus.release.citeworth_rules`: the rules for one paper's paragraphs (App. A-B:
  sections, citation forms, sentence checks, labels), and why they follow the paper where the
  published code differs;
* :mod:`corpus.release.citeworth_splits`: the rules over many papers (splits, balance over
  fields, Table 2's statistics, the audit of leftover markers);
* this module: one day of the store through the rules (``citeworth_day``), the tables' schemas,
  and the stage's version. The release over every day is
  :func:`corpus.release.citeworth_release.build_release`.

Every public name of the first two still imports from here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from corpus.papers.fields import CITEWORTH_FIELDS
from corpus.parallel import map_papers
from corpus.release.citeworth_rules import (  # noqa: F401  (the CiteWorth code's names, importable from here)
    BRACKET_PATTERN,
    BRACKET_RE,
    ET_AL_PATTERN,
    ET_AL_RE,
    HANGING_PATTERN,
    HANGING_RE,
    LABEL_CITE_WORTHY,
    LABEL_NOT_CITE_WORTHY,
    MIN_CHARS,
    PERMISSIBLE_SECTION_TITLES,
    R_CROSSES,
    R_EMPTY,
    R_END_PUNCT,
    R_FEW_SENTENCES,
    R_FORM,
    R_HANGING,
    R_LOWER,
    R_MISSED,
    R_NO_CITATION,
    R_NOT_AT_END,
    R_SECTION,
    R_SHORT,
    R_SPAN_OFFSETS,
    REASONS,
    YEAR_PATTERN,
    YEAR_RE,
    ParagraphRejected,
    ParagraphResult,
    Sample,
    audit_leftover_markers,
    check_paragraph,
    clean_hanging_punctuation,
    extract_paragraphs,
    leftover_marker,
    normalize_section_title,
    paper_candidate,
    permissible_section,
)
from corpus.release.citeworth_splits import (  # noqa: F401
    CITEWORTH_LEFTOVER_RATE,
    SPLIT_NAMES,
    audit_release,
    balance,
    balanced_keys,
    default_cap,
    split_for,
    split_rows,
    stats,
    write_release,
)
from corpus.release.settings import CANDIDATES, PARAGRAPHS

# The version of citeworth_paragraphs and citeworth_candidates (corpus.versions): bump it whenever their rows change.
CITEWORTH_VERSION = "corpus.release.citeworth/1"


# --- store stages: one day of paragraphs, the release over every day --------------------------
# The Dagster assets (corpus_assets/citeworth.py) are thin loops over these; a script can call
# them the same way. Layout (DESIGN.md §3, §7):
#   $CORPUS_HOME/citeworth_paragraphs/date=D/   every body paragraph of D's papers, kept or with its reason
#   $CORPUS_HOME/citeworth_candidates/date=D/   every paper of D: candidate, or why it gave no paragraphs
#   $CORPUS_HOME/citeworth_splits/part-0.parquet  the released paragraphs' keys with their split
#   $CORPUS_HOME/releases/citeworth/<split>.jsonl the release (ParagraphResult.release_row shape)
SPLITS = "citeworth_splits"

# Paper-level reasons (citeworth_candidates.reason); paper_candidate() adds no_abstract/no_body_text/no_bibliography.
P_DROPPED = "paper_dropped"  # the papers asset's S2ORC filters dropped it (detail: its drop_reason)
P_NO_TEXT = "no_full_text"  # kept, but no parse was chosen or the chosen parse is missing
P_NO_FIELD = "no_field"  # no CiteWorth field for its categories
P_ERROR = "extract_error"  # the parse could not be read (detail: the exception)

_SAMPLE_DTYPE = pl.Struct(
    {
        "text": pl.Utf8,
        "label": pl.Utf8,
        "original_text": pl.Utf8,
        "ref_ids": pl.List(pl.List(pl.Utf8)),
        "citation_text": pl.List(pl.Utf8),
    }
)
PARAGRAPH_SCHEMA: dict[str, pl.DataType] = {
    "paper_id": pl.Utf8,
    "section_index": pl.Int64,
    "section_title": pl.Utf8,
    "field": pl.Utf8,
    "original_text": pl.Utf8,
    "samples": pl.List(_SAMPLE_DTYPE),
    "kept": pl.Boolean,
    "reason": pl.Utf8,
    "detail": pl.Utf8,
    "n_sentences": pl.Int64,
    "n_cite_worthy": pl.Int64,
}
CANDIDATE_SCHEMA: dict[str, pl.DataType] = {
    "paper_id": pl.Utf8,
    "field": pl.Utf8,
    "parse_source": pl.Utf8,
    "reason": pl.Utf8,  # null: a candidate (its paragraphs are in citeworth_paragraphs)
    "detail": pl.Utf8,
    "paragraphs": pl.Int64,
    "kept_paragraphs": pl.Int64,
    "sentences": pl.Int64,
    "cite_worthy": pl.Int64,
}
SPLITS_SCHEMA: dict[str, pl.DataType] = {
    "paper_id": pl.Utf8,
    "section_index": pl.Int64,
    "field": pl.Utf8,
    "split": pl.Utf8,
    "n_sentences": pl.Int64,
    "n_cite_worthy": pl.Int64,
    "date": pl.Utf8,
}
#: Columns of a release line, in order (the released CiteWorth data plus ``field``).
RELEASE_COLUMNS: tuple[str, ...] = (
    "paper_id", "section_index", "section_title", "mag_field_of_study", "field", "original_text", "samples",
)  # fmt: skip


def release_dir(home: str | Path) -> Path:
    return Path(home) / "releases" / "citeworth"


@dataclass(slots=True)
class _LightSpan:
    start: int
    end: int
    text: str
    ref_id: str | None


class _LightParagraph:
    """A body paragraph whose cite spans are built only when read (most sections never are)."""

    __slots__ = ("text", "section", "_raw", "_spans")

    def __init__(self, text: str, section: str, raw_spans: list[dict]) -> None:
        self.text, self.section, self._raw = text, section, raw_spans
        self._spans: list[_LightSpan] | None = None

    @property
    def cite_spans(self) -> list[_LightSpan]:
        if self._spans is None:
            self._spans = [_LightSpan(s["start"], s["end"], s["text"], s.get("ref_id")) for s in self._raw]
        return self._spans


@dataclass(slots=True)
class _LightDoc:
    """The attributes of :class:`StructuredDoc` that :func:`extract_paragraphs` and
    :func:`paper_candidate` read (duck-typed). Pydantic's ``model_construct`` costs about
    15 µs an object: most of a day's time, for documents our own parsers already validated."""

    paper_id: str
    abstract: list[_LightParagraph]
    body_text: list[_LightParagraph]
    bib_entries: dict


def _light_doc(d: dict, n_bib: int | None = None) -> _LightDoc:
    """A :class:`_LightDoc` from a StructuredDoc dict, or from the parts :data:`_DOC_DTYPE`
    decodes with the bibliography's size in ``n_bib`` (only its emptiness matters).

    Malformed spans become a paragraph reason (``bad_span_offsets``) in
    :func:`check_paragraph`; a paragraph without text raises ``ValueError``.
    """

    def para(p: dict) -> _LightParagraph:
        text = p.get("text")
        if not isinstance(text, str):
            raise ValueError(f"paragraph without text: {str(p)[:80]}")
        return _LightParagraph(text, p.get("section") or "", p.get("cite_spans") or [])

    bib = d["bib_entries"] if "bib_entries" in d else dict.fromkeys(f"BIBREF{i}" for i in range(n_bib or 0))
    return _LightDoc(
        paper_id=d.get("paper_id") or "",
        abstract=[para(p) for p in d.get("abstract") or ()],
        body_text=[para(p) for p in d.get("body_text") or ()],
        bib_entries=bib or {},
    )


_SPAN_DTYPE = pl.Struct({"start": pl.Int64, "end": pl.Int64, "text": pl.Utf8, "ref_id": pl.Utf8})
_PARA_DTYPE = pl.Struct({"text": pl.Utf8, "section": pl.Utf8, "cite_spans": pl.List(_SPAN_DTYPE)})
_DOC_DTYPE = pl.Struct(
    {
        "paper_id": pl.Utf8,
        "source": pl.Utf8,
        "abstract": pl.List(_PARA_DTYPE),
        "body_text": pl.List(_PARA_DTYPE),
    }
)


def _decode_doc(text: str) -> dict:
    """The parts of a StructuredDoc JSON that CiteWorth reads (polars decodes only those: half
    the time of ``json.loads``); a document polars refuses is read again by ``json``, whose
    error says why (raises ValueError)."""
    try:
        return pl.Series([text], dtype=pl.Utf8).str.json_decode(_DOC_DTYPE).to_list()[0]
    except pl.exceptions.PolarsError:
        pass
    doc = json.loads(text)
    if not isinstance(doc, dict):
        raise ValueError(f"not a JSON object: {text[:40]!r}")
    return doc


def _paragraph_row(res: ParagraphResult) -> dict:
    return {
        "paper_id": res.paper_id,
        "section_index": res.section_index,
        "section_title": res.section_title,
        "field": res.field,
        "original_text": res.original_text,
        "samples": [s.to_dict() for s in res.samples],
        "kept": res.kept,
        "reason": res.reason,
        "detail": res.detail,
        "n_sentences": len(res.samples),
        "n_cite_worthy": sum(s.label == LABEL_CITE_WORTHY for s in res.samples),
    }


def _frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    """Rows -> a frame with exactly ``schema`` (by row: polars builds nested rows in Rust)."""
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _chosen_texts(store, day: str) -> dict[tuple[str, str], tuple[str, int | None]]:
    """``{(parse source, paper id): (StructuredDoc JSON, bibliography size)}`` of a day's
    successful parses. JSON stays a string until its paper's chunk is decoded, so a day never
    holds every parsed document at once (as ``corpus.papers.days.chosen_docs`` does too)."""
    out: dict[tuple[str, str], tuple[str, int | None]] = {}
    for source, asset in (("grobid", "pdf_parses"), ("latex", "latex_parses")):
        if store.has_partition(asset, day):
            part = store.read_partition(asset, day).filter(pl.col("status") == "ok")
            rows = part.select("id", "doc", "n_bib_entries").iter_rows()
            out.update(((source, pid), (doc, n_bib)) for pid, doc, n_bib in rows)
    return out


PAPERS_PER_WORKER = 200  # below that a pool process costs more than it saves (its imports)

# (paper id, field, StructuredDoc JSON, bibliography size, require_citation, min_sentences)
_PaperTask = tuple[str, "str | None", str, "int | None", bool, int]


def _paper_paragraphs(task: _PaperTask) -> tuple[str | None, tuple[pl.DataFrame, dict]]:
    """One candidate paper: its candidate reason (None: a candidate), its paragraph rows as a
    frame and their counts (raises on a document it cannot read)."""
    paper_id, fld, text, n_bib, require_citation, min_sentences = task
    doc = _light_doc(_decode_doc(text), n_bib)
    reason = paper_candidate(doc)
    results = [] if reason else extract_paragraphs(
        doc, paper_id, fld, min_sentences=min_sentences, require_citation=require_citation
    )  # fmt: skip
    mine = [_paragraph_row(r) for r in results]
    kept = [r for r in mine if r["kept"]]
    counts = {
        "candidate": {
            "paragraphs": len(mine),
            "kept_paragraphs": len(kept),
            "sentences": sum(r["n_sentences"] for r in kept),
            "cite_worthy": sum(r["n_cite_worthy"] for r in kept),
        },
        "reasons": Counter(r["reason"] or "kept" for r in mine),
        "fields": Counter(r["field"] for r in kept),
    }
    return reason, (_frame(mine, PARAGRAPH_SCHEMA), counts)


def _paper_unreadable(task: _PaperTask, reason: str) -> tuple[str, str]:
    return P_ERROR, reason[:300]


def citeworth_day(
    home: str | Path, day: str, *, require_citation: bool = True, min_sentences: int = 1, workers: int = 1
) -> dict:
    """Every body paragraph of one day's papers, kept or with its reason (SPEC.md §7).

    Reads ``papers`` (kept flag, CiteWorth ``field``, chosen ``parse_source``) and the
    chosen parse; writes ``citeworth_paragraphs`` and ``citeworth_candidates`` for
    ``day`` atomically. The candidate papers are read over ``workers`` processes
    (:func:`corpus.parallel.map_papers`, at least :data:`PAPERS_PER_WORKER` papers each). A
    paper whose parse cannot be read, or that kills its process, is a candidate row with
    reason ``extract_error``, never a failed day. Returns a JSON-able summary.
    """
    from corpus.day_io import upstream
    from corpus.store import Store

    store = Store(Path(home))
    papers = upstream(store, "papers", day).select("id", "field", "kept", "drop_reason", "parse_source")
    texts = _chosen_texts(store, day)
    candidates: list[dict] = []
    todo: list[tuple[dict, str, int | None]] = []  # (candidate row, doc JSON, bibliography size)
    for pid, fld, kept, drop_reason, source in sorted(papers.iter_rows()):
        cand = {"paper_id": pid, "field": fld, "parse_source": source, "paragraphs": 0, "kept_paragraphs": 0}
        cand.update(sentences=0, cite_worthy=0)
        candidates.append(cand)
        text = texts.get((source, pid)) if source else None
        if not kept:
            cand.update(reason=P_DROPPED, detail=drop_reason)
        elif text is None:
            cand.update(reason=P_NO_TEXT, detail=source)
        elif fld not in CITEWORTH_FIELDS:
            cand.update(reason=P_NO_FIELD, detail=fld)
        else:
            todo.append((cand, *text))
    frames: list[pl.DataFrame] = []  # a frame per paper: few Python objects alive (GC time)
    reasons: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    tasks = [
        (cand["paper_id"], cand["field"], doc, n_bib, require_citation, min_sentences)
        for cand, doc, n_bib in todo
    ]
    outcomes = map_papers(
        _paper_paragraphs, tasks, workers, _paper_unreadable, min_per_worker=PAPERS_PER_WORKER
    )
    for (cand, _, _), (reason, found) in zip(todo, outcomes, strict=True):
        if reason == P_ERROR:
            cand.update(reason=P_ERROR, detail=found)
            continue
        frame, counts = found
        cand["reason"] = reason
        cand.update(counts["candidate"])
        reasons.update(counts["reasons"])
        fields.update(counts["fields"])
        if frame.height:
            frames.append(frame)
    paragraphs = pl.concat(frames, how="vertical").rechunk() if frames else _frame([], PARAGRAPH_SCHEMA)
    store.write_partition(PARAGRAPHS, day, paragraphs)
    store.write_partition(CANDIDATES, day, _frame(candidates, CANDIDATE_SCHEMA))
    return {
        "day": day,
        "papers": len(candidates),
        "candidates": sum(c.get("reason") is None for c in candidates),
        "paper_reasons": dict(Counter(c.get("reason") or "candidate" for c in candidates)),
        "errors": [(c["paper_id"], c["detail"]) for c in candidates if c.get("reason") == P_ERROR],
        "paragraphs": sum(reasons.values()),
        "kept": reasons.get("kept", 0),
        "reasons": dict(reasons),
        "sentences": sum(c["sentences"] for c in candidates),
        "cite_worthy": sum(c["cite_worthy"] for c in candidates),
        "fields": dict(fields),
    }
