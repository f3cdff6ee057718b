"""Canonical paper metadata, the chosen full-text parse and the S2ORC paper filters.

A paper is a cluster of documents (SPEC.md §4): its arXiv OAI record, the Grobid
parse of its PDF, the LaTeX parse of its e-print and, optionally, other metadata
records (a Kaggle snapshot line, an ``.abs`` file, a publisher record). This
module turns one cluster into one ``papers`` row, explaining every choice.

**Canonical fields** (s2orc-paper.txt §2.3; :func:`select_fields`), per field of
:data:`VOTED_FIELDS` (title, authors, abstract, year, doi, venue):

1. the OAI record's value when it has one: arXiv is the "publisher" here, and
   "if the selected PDF is associated with publisher-provided metadata, we select
   those publisher-provided metadata fields to be canonical";
2. otherwise a **majority vote** among the other metadata records that offer the
   field (values compared after normalisation, see :func:`_vote_key`); a tie is
   broken as S2ORC does, by **minimising the total number of sources** the
   canonical record is assembled from: the smallest set of sources that can
   supply a winning value for *every* voted field is found (exact, by
   enumerating subsets: clusters have a handful of sources), and each field takes
   its value from the first source of that set in the caller's order (the last,
   deterministic tie-break);
3. otherwise, for title, authors, abstract, year and DOI, the **Grobid header**
   of the PDF parse ("in cases where the title and authors are not provided by
   any publishers, we derive the values for these fields from the parsed PDF").
   The PDF header is a fallback, not a voter. Grobid's venue is too noisy to use.

The LaTeX parse is **never** a source of canonical fields (s2orc-paper.txt §2.2:
LaTeX metadata is worse than the PDF's). ``<field>_source`` columns name the
winner: ``"oai"``, ``"grobid"``, the name of an extra record, or None.

**Authors** have S2ORC's shape ``{first, middle: [..], last, suffix}`` (the shape
of :class:`corpus.parse.document.Author` and of released S2ORC metadata). An arXiv
``keyname`` is ``last``; ``forenames`` split on whitespace give ``first`` (the
first word) and ``middle`` (the rest): "Jim A. C." -> first "Jim", middle
["A.", "C."]. A collaboration ("ATLAS Collaboration") is a ``last`` alone.

**Full text** (:func:`choose_parse`): S2ORC keeps the LaTeX parse wherever arXiv
source exists (§2.2: spans, references, sections and equations from source are
"near-perfect"; the released S2ORC JSON and ``corpus.parse.s2orc_json`` prefer
``latex_parse`` when it has body text). A LaTeX parse that clearly failed loses
to Grobid; see :data:`PARSE_REASONS` for every reason code.

**Filters** (s2orc-paper.txt §2.5, Table 2; :func:`paper_filters`), in series,
the first failure being ``drop_reason``: :data:`FILTERS`.

* ``short_text`` counts characters of the canonical abstract plus the chosen
  parse's body paragraphs (Grobid's ``EQUATION`` placeholders excluded); fewer
  than :data:`MIN_TEXT_CHARS` drops the paper.
* ``not_english`` runs :func:`corpus.papers.langid.is_english_paper` (cld2, SPEC §4
  choice: English top language with >= 90 % of the text, or reliable English
  when short) on the first :data:`LANG_MAX_CHARS` characters of abstract +
  body, after :func:`corpus.papers.langid.clean_for_cld2` removed the control
  characters pycld2 rejects. 10,000 characters are ~10 body paragraphs: cld2's
  verdict on them equals its verdict on the whole text for every real paper in
  ``shared/`` and costs 0.3 ms instead of up to 5 ms. cld2's "unknown" (nothing
  it can score) also fails this filter; ``drop_detail`` says which.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from corpus.papers.fields import UnknownCategory, citeworth_field, field_of_study
from corpus.papers.langid import clean_for_cld2, detect, is_english_paper
from corpus.papers.normalize import normalize_doi, normalize_title
from corpus.parse.document import StructuredDoc

# The version of papers and fulltext_ids (corpus.versions): bump it whenever their rows change.
PAPERS_VERSION = "corpus.papers.metadata/1"

__all__ = [
    "FILTERS",
    "LANG_MAX_CHARS",
    "LATEX_MIN_BODY_SHARE",
    "MIN_TEXT_CHARS",
    "PARSE_REASONS",
    "PaperInputError",
    "VOTED_FIELDS",
    "canonical_paper",
    "canonical_papers",
    "choose_parse",
    "filter_table",
    "paper_counts",
    "paper_filters",
    "papers_frame",
    "papers_schema",
    "select_fields",
]

MIN_TEXT_CHARS = 100
"""s2orc-paper.txt §2.5: fewer than 100 characters of abstract + body text drops a paper."""

LANG_MAX_CHARS = 10_000
"""Characters of abstract + body text given to cld2 (module doc)."""

LATEX_MIN_BODY_SHARE = 0.5
"""A LaTeX parse with less body text than this share of the Grobid parse's is taken
as a failed expansion (missing ``\\input`` files, unknown macros) and loses to Grobid."""

FILTERS: tuple[tuple[str, str], ...] = (
    ("no_title", "no title"),
    ("no_authors", "no authors"),
    ("short_text", f"fewer than {MIN_TEXT_CHARS} characters of abstract + body text"),
    ("not_english", "not English (cld2)"),
)
"""The paper filters of SPEC.md §4 in the order they are applied: (reason code, description)."""

PARSE_REASONS: dict[str, str] = {
    "no_parse": "neither a Grobid nor a LaTeX parse was given",
    "empty_parse": "the parses given hold no abstract, body text or bibliography",
    "only_grobid": "only the Grobid parse has content",
    "only_latex": "only the LaTeX parse has content",
    "latex_preferred": "both have content; LaTeX wins (S2ORC §2.2: cleaner spans and structure)",
    "latex_no_body": "the LaTeX parse has no body text; Grobid's has",
    "latex_body_short": f"the LaTeX body is under {LATEX_MIN_BODY_SHARE:.0%} of Grobid's (failed expansion)",
    "latex_no_bib": "the LaTeX parse has no bibliography entries; Grobid's has",
}
"""Every ``parse_reason`` :func:`choose_parse` gives, with its meaning."""

VOTED_FIELDS: tuple[str, ...] = ("title", "authors", "abstract", "year", "doi", "venue")
PDF_FALLBACK_FIELDS = frozenset({"title", "authors", "abstract", "year", "doi"})
_EQUATION = "EQUATION"
_DATE_PREFIX = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


class PaperInputError(ValueError):
    """A metadata record that cannot become a paper row (no id, wrong type); says why."""


# ---------------------------------------------------------------- doc access
# Parses arrive as StructuredDoc or as its plain dict (corpus.parse.tei.parse_tei_dict,
# Parquet rows): both are read through these few accessors, never converted.


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _texts(paragraphs: Iterable) -> list[str]:
    out = []
    for p in paragraphs or ():
        t = p["text"] if isinstance(p, dict) else p.text
        if t and t != _EQUATION:
            out.append(t)
    return out


def _body_chars(doc: Any) -> int:
    return sum(len(t) for t in _texts(_get(doc, "body_text")))


def _has_content(doc: Any) -> bool:
    return bool(_get(doc, "body_text") or _get(doc, "abstract") or _get(doc, "bib_entries"))


# ---------------------------------------------------------------- choose_parse


def choose_parse(grobid: StructuredDoc | dict | None, latex: StructuredDoc | dict | None):
    """The full text of a paper and why: ``(doc or None, reason)``, reasons in :data:`PARSE_REASONS`.

    Rule, in order: a parse without abstract, body text and bibliography counts as
    absent; with one parse left, that one; with both, LaTeX unless its body is
    empty (``latex_no_body``), under :data:`LATEX_MIN_BODY_SHARE` of Grobid's body
    characters (``latex_body_short``), or it has no bibliography while Grobid has
    one (``latex_no_bib``: the citation graph would lose the paper's references).
    """
    if grobid is None and latex is None:
        return None, "no_parse"
    g = grobid if grobid is not None and _has_content(grobid) else None
    lx = latex if latex is not None and _has_content(latex) else None
    if g is None and lx is None:
        return None, "empty_parse"
    if lx is None:
        return g, "only_grobid"
    if g is None:
        return lx, "only_latex"
    g_chars, l_chars = _body_chars(g), _body_chars(lx)
    if l_chars == 0 and g_chars > 0:
        return g, "latex_no_body"
    if l_chars < LATEX_MIN_BODY_SHARE * g_chars:
        return g, "latex_body_short"
    if not _get(lx, "bib_entries") and _get(g, "bib_entries"):
        return g, "latex_no_bib"
    return lx, "latex_preferred"


# ---------------------------------------------------------------- authors and values


def _split_forenames(forenames: str) -> tuple[str, list[str]]:
    words = forenames.split()
    return (words[0], words[1:]) if words else ("", [])


def _author(a: Any) -> dict | None:
    """Any author form -> ``{first, middle, last, suffix}`` (None for an empty one).

    Accepted: arXiv's ``{keyname, forenames, suffix}``, S2ORC's ``{first, middle,
    last, suffix}`` (dict or :class:`corpus.parse.document.Author`), or a plain "First Last" string.
    """
    if isinstance(a, str):
        words = a.split()
        if not words:
            return None
        first, middle = _split_forenames(" ".join(words[:-1]))
        return {"first": first, "middle": middle, "last": words[-1], "suffix": ""}
    if isinstance(a, dict) and "keyname" in a:
        first, middle = _split_forenames(a.get("forenames") or "")
        out = {"first": first, "middle": middle, "last": (a.get("keyname") or "").strip()}
        out["suffix"] = (a.get("suffix") or "").strip()
    else:
        middle = _get(a, "middle") or []
        if isinstance(middle, str):
            middle = middle.split()
        out = {
            "first": (_get(a, "first") or "").strip(),
            "middle": [m for m in middle if m],
            "last": (_get(a, "last") or "").strip(),
            "suffix": (_get(a, "suffix") or "").strip(),
        }
    if not (out["first"] or out["last"] or out["middle"]):
        return None
    return out


def _authors(value: Any) -> list[dict]:
    if not value:
        return []
    return [a for a in map(_author, value) if a is not None]


def _year(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.date):
        return value.year
    if isinstance(value, int):
        return value if 1000 <= value <= 2999 else None
    m = re.search(r"(?<!\d)(1[5-9]\d\d|2\d\d\d)(?!\d)", str(value))
    return int(m.group(1)) if m else None


def _date(value: Any) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    m = _DATE_PREFIX.match(str(value).strip())
    if not m:
        raise PaperInputError(f"not an ISO date: {value!r}")
    return dt.date(int(m[1]), int(m[2]), int(m[3]))


def _clean_value(field: str, value: Any) -> Any:
    """A source's value for ``field`` in canonical form, or None when it offers none."""
    if field == "authors":
        return _authors(value) or None
    if field == "year":
        return _year(value)
    if field == "doi":
        return normalize_doi(value)
    if isinstance(value, list):  # abstract as paragraphs
        value = "\n\n".join(_texts(value))
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value or None


def _vote_key(field: str, value: Any) -> Any:
    """What two sources must share to agree: normalised titles/abstracts/venues
    (corpus.papers.normalize.normalize_title: case, accents, punctuation, spaces ignored),
    the ordered list of normalised surnames, the year, the normalised DOI."""
    if field == "authors":
        return tuple(normalize_title(a["last"] or a["first"]) for a in value)
    if field in ("title", "abstract", "venue"):
        return normalize_title(value) or value
    return value


# ---------------------------------------------------------------- the vote


def _min_cover(voters: list[str], fields: dict[str, list[set[str]]]) -> tuple[str, ...]:
    """Smallest (then earliest in ``voters`` order) set of sources that supplies a winning
    value for every field; ``fields[f]`` lists the supporter sets of f's tied winners."""
    needed = [set().union(*sets) for sets in fields.values()]
    useful = [v for v in voters if any(v in n for n in needed)]
    if len(useful) > 12:  # far beyond a real cluster: greedy is good enough
        chosen: list[str] = []
        todo = list(needed)
        while todo:
            best = max(useful, key=lambda v: (sum(v in n for n in todo), -useful.index(v)))
            chosen.append(best)
            todo = [n for n in todo if best not in n]
        return tuple(chosen)
    for size in range(1, len(useful) + 1):
        for combo in itertools.combinations(useful, size):
            s = set(combo)
            if all(n & s for n in needed):
                return combo
    return tuple(useful)


def select_fields(
    sources: Mapping[str, Mapping[str, Any]],
    *,
    publisher: str | None = "oai",
    pdf: str | None = "grobid",
    fields: Iterable[str] = VOTED_FIELDS,
) -> dict[str, tuple[Any, str | None]]:
    """Canonical value and winning source per field: ``{field: (value, source)}``.

    ``sources`` maps a source name to its raw values (``{"title": ..., "authors":
    [...], ...}``); the order of the mapping is the final tie-break. ``publisher``
    (OAI) wins where it has a value; the other non-``pdf`` sources vote (majority,
    ties by fewest sources, module doc); ``pdf`` (Grobid) fills the
    :data:`PDF_FALLBACK_FIELDS` nobody else has. A field nobody has is ``(None, None)``.
    """
    fields = tuple(fields)
    clean: dict[str, dict[str, Any]] = {}
    for name, vals in sources.items():
        if vals is None:
            continue
        clean[name] = {f: _clean_value(f, vals.get(f)) for f in fields if vals.get(f) not in (None, "", [])}
    out: dict[str, tuple[Any, str | None]] = {}
    voters = [n for n in clean if n not in (publisher, pdf)]
    contested: dict[str, list[tuple[Any, list[str]]]] = {}  # field -> tied winners (value, supporters)
    for f in fields:
        pub = clean.get(publisher, {}).get(f) if publisher else None
        if pub is not None:
            out[f] = (pub, publisher)
            continue
        tally: dict[Any, list] = {}  # key -> [count, first value, supporters]
        for v in voters:
            val = clean[v].get(f)
            if val is None:
                continue
            slot = tally.setdefault(_vote_key(f, val), [0, val, []])
            slot[0] += 1
            slot[2].append(v)
        if tally:
            top = max(s[0] for s in tally.values())
            contested[f] = [(s[1], s[2]) for s in tally.values() if s[0] == top]
            continue
        fallback = clean.get(pdf, {}).get(f) if pdf and f in PDF_FALLBACK_FIELDS else None
        out[f] = (fallback, pdf) if fallback is not None else (None, None)
    if contested:
        cover = _min_cover(voters, {f: [set(s) for _, s in w] for f, w in contested.items()})
        rank = {v: i for i, v in enumerate(cover)}
        for f, winners in contested.items():
            best = None
            for _value, supporters in winners:
                for s in supporters:
                    if s in rank and (best is None or rank[s] < best[0]):
                        # the value as that source wrote it
                        best = (rank[s], clean[s][f], s)
            assert best is not None  # the cover supplies every contested field
            out[f] = (best[1], best[2])
    return out


# ---------------------------------------------------------------- filters


def _filter_text(abstract: str, doc: Any) -> tuple[int, str]:
    """(characters of abstract + body text, the first LANG_MAX_CHARS of it for cld2)."""
    pieces = [abstract] if abstract else []
    pieces.extend(_texts(_get(doc, "body_text")) if doc is not None else ())
    n_chars = sum(len(p) for p in pieces)
    lang_parts, size = [], 0
    for p in pieces:
        lang_parts.append(p)
        size += len(p) + 2
        if size >= LANG_MAX_CHARS:
            break
    return n_chars, "\n\n".join(lang_parts)[:LANG_MAX_CHARS]


def _run_filters(row: Mapping[str, Any], doc: Any) -> dict[str, Any]:
    """The filters in series; also the measurements behind them (for the row)."""
    n_chars, text = _filter_text(row.get("abstract") or "", doc)
    out: dict[str, Any] = {"text_chars": n_chars, "language": None, "drop_detail": None}
    text = clean_for_cld2(text)
    lang_detail = ""
    if text.strip():
        res = detect(text)
        out["language"] = res.lang
        lang_detail = f"cld2 {res.lang} {res.percent}% reliable={res.reliable} of {res.text_bytes} bytes"
    if not (row.get("title") or "").strip():
        return {**out, "kept": False, "drop_reason": "no_title"}
    if not row.get("authors"):
        return {**out, "kept": False, "drop_reason": "no_authors"}
    if n_chars < MIN_TEXT_CHARS:
        detail = f"{n_chars} characters of abstract + body text"
        return {**out, "kept": False, "drop_reason": "short_text", "drop_detail": detail}
    english, why = is_english_paper(text)
    if not english:
        detail = f"{why}: {lang_detail}"
        return {**out, "kept": False, "drop_reason": "not_english", "drop_detail": detail}
    return {**out, "kept": True, "drop_reason": None}


def paper_filters(row: Mapping[str, Any], doc: StructuredDoc | dict | None) -> tuple[bool, str | None]:
    """SPEC §4 filters in series on a canonical row (title, authors, abstract) and its
    chosen parse: ``(True, None)`` or ``(False, code)`` with code from :data:`FILTERS`."""
    res = _run_filters(row, doc)
    return res["kept"], res["drop_reason"]


# ---------------------------------------------------------------- the row


def _record_dict(record: Any) -> dict:
    if hasattr(record, "to_row"):  # an ArxivRecord
        return record.to_row()
    if not isinstance(record, Mapping):
        raise PaperInputError(f"metadata record must be a mapping, got {type(record).__name__}")
    return dict(record)


def _versions(rec: dict) -> tuple[int | None, int | None]:
    nums = []
    for v in rec.get("versions") or ():
        n = _get(v, "version")
        if isinstance(n, int):
            nums.append(n)
    latest = rec.get("version") if isinstance(rec.get("version"), int) else None
    if nums:
        latest = max(nums + ([latest] if latest else []))
        return len(nums), latest
    return (latest, latest) if latest else (None, None)


def _field(categories: list[str], fn) -> str | None:
    if not categories:
        return None
    try:
        return fn(categories)
    except UnknownCategory:
        return None


def _grobid_values(doc: Any) -> dict | None:
    if doc is None:
        return None
    ids = _get(doc, "identifiers") or {}
    return {
        "title": _get(doc, "title"),
        "authors": _get(doc, "authors"),
        "abstract": _get(doc, "abstract"),
        "year": _get(doc, "year"),
        "doi": (ids.get("DOI") or [None])[0],
    }


def canonical_paper(
    record: Mapping[str, Any],
    grobid: StructuredDoc | dict | None,
    latex: StructuredDoc | dict | None,
    *,
    extra_sources: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict:
    """One ``papers`` row (columns of :func:`papers_schema`) for an ``arxiv_metadata`` row.

    ``grobid`` / ``latex`` are the paper's parses (None when missing or failed);
    ``extra_sources`` are further metadata records of the cluster, by name, with
    any of :data:`VOTED_FIELDS` (authors in any form :func:`_author` accepts).
    Raises :class:`PaperInputError` for a record without an id.
    """
    rec = _record_dict(record)
    pid = rec.get("id")
    if not isinstance(pid, str) or not pid.strip():
        raise PaperInputError(f"metadata record without an id: {sorted(rec)[:6]}")
    created = _date(rec.get("created"))
    oai = {
        "title": rec.get("title"),
        "authors": rec.get("authors"),
        "abstract": rec.get("abstract"),
        "year": created.year if created else None,
        "doi": rec.get("doi"),
        "venue": rec.get("journal_ref"),
    }
    sources: dict[str, Any] = {"oai": oai}
    for name, vals in (extra_sources or {}).items():
        if name in ("oai", "grobid"):
            raise PaperInputError(f"{pid}: extra source may not be named {name!r}")
        sources[name] = vals
    sources["grobid"] = _grobid_values(grobid)
    chosen = select_fields(sources)

    doc, reason = choose_parse(grobid, latex)
    parse_source = None if doc is None else "grobid" if doc is grobid else "latex"
    categories = list(rec.get("categories") or [])
    n_versions, latest = _versions(rec)
    title = chosen["title"][0] or ""
    row: dict[str, Any] = {
        "id": pid.strip(),
        "datestamp": _date(rec.get("datestamp")),
        "title": title,
        "norm_title": normalize_title(title),
        "authors": chosen["authors"][0] or [],
        "abstract": chosen["abstract"][0] or "",
        "year": chosen["year"][0],
        "created": created,
        "updated": _date(rec.get("updated")),
        "n_versions": n_versions,
        "latest_version": latest,
        "license": rec.get("license") or None,
        "primary_category": categories[0] if categories else None,
        "categories": categories,
        "doi": chosen["doi"][0],
        "journal_ref": rec.get("journal_ref") or None,
        "venue": chosen["venue"][0],
        "field": _field(categories, citeworth_field),
        "field_of_study": _field(categories, field_of_study),
        "parse_source": parse_source,
        "parse_reason": reason,
        "parser_version": (_get(doc, "parser_version") or None) if doc is not None else None,
        "has_grobid": grobid is not None and _has_content(grobid),
        "has_latex": latex is not None and _has_content(latex),
        "n_body_paragraphs": len(_get(doc, "body_text") or ()) if doc is not None else 0,
        "n_bib_entries": len(_get(doc, "bib_entries") or ()) if doc is not None else 0,
    }
    for f in VOTED_FIELDS:
        row[f"{f}_source"] = chosen[f][1]
    row.update(_run_filters(row, doc))
    return row


def canonical_papers(
    records: Iterable[Mapping[str, Any]],
    grobid: Mapping[str, Any] | None = None,
    latex: Mapping[str, Any] | None = None,
) -> tuple[list[dict], list[dict]]:
    """A day's rows: ``(rows, failures)``; parses looked up by paper id. A record that
    cannot become a row is a failure ``{id, reason}`` and the batch goes on."""
    grobid, latex = grobid or {}, latex or {}
    rows, failures = [], []
    for i, rec in enumerate(records):
        pid = rec.get("id") if isinstance(rec, Mapping) else getattr(rec, "id", None)
        try:
            rows.append(canonical_paper(rec, grobid.get(pid), latex.get(pid)))
        except (PaperInputError, TypeError, ValueError, AttributeError) as exc:
            failures.append(
                {"id": pid if isinstance(pid, str) else f"#{i}", "reason": f"{type(exc).__name__}: {exc}"}
            )
    return rows, failures


# ---------------------------------------------------------------- tables


def papers_schema() -> dict[str, pl.DataType]:
    """Column types of the ``papers`` asset (fixed, so empty partitions keep them)."""
    author = pl.Struct({"first": pl.Utf8, "middle": pl.List(pl.Utf8), "last": pl.Utf8, "suffix": pl.Utf8})
    schema: dict[str, Any] = {
        "id": pl.Utf8,
        "datestamp": pl.Date,
        "title": pl.Utf8,
        "norm_title": pl.Utf8,
        "authors": pl.List(author),
        "abstract": pl.Utf8,
        "year": pl.Int64,
        "created": pl.Date,
        "updated": pl.Date,
        "n_versions": pl.Int64,
        "latest_version": pl.Int64,
        "license": pl.Utf8,
        "primary_category": pl.Utf8,
        "categories": pl.List(pl.Utf8),
        "doi": pl.Utf8,
        "journal_ref": pl.Utf8,
        "venue": pl.Utf8,
        "field": pl.Utf8,
        "field_of_study": pl.Utf8,
        "parse_source": pl.Utf8,
        "parse_reason": pl.Utf8,
        "parser_version": pl.Utf8,
        "has_grobid": pl.Boolean,
        "has_latex": pl.Boolean,
        "n_body_paragraphs": pl.Int64,
        "n_bib_entries": pl.Int64,
    }
    for f in VOTED_FIELDS:
        schema[f"{f}_source"] = pl.Utf8
    schema.update(
        {
            "text_chars": pl.Int64,
            "language": pl.Utf8,
            "kept": pl.Boolean,
            "drop_reason": pl.Utf8,
            "drop_detail": pl.Utf8,
        }
    )
    return schema


def papers_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows of :func:`canonical_paper` -> a DataFrame with exactly :func:`papers_schema`."""
    schema = papers_schema()
    rows = list(rows)
    for r in rows:
        extra = set(r) - set(schema)
        if extra:
            raise PaperInputError(f"{r.get('id')}: columns not in the papers schema: {sorted(extra)}")
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _reasons(rows: Any) -> list[str | None]:
    if isinstance(rows, pl.DataFrame):
        return rows["drop_reason"].to_list()
    return [r.get("drop_reason") for r in rows]


def filter_table(rows: Any) -> list[dict]:
    """S2ORC Table 2 for these rows: one ``{filter, description, dropped, remaining}`` per
    filter in series order, after a first ``input`` line. Raises ValueError on a
    ``drop_reason`` that is not a filter (it would be lost from the table)."""
    reasons = _reasons(rows)
    known = {code for code, _ in FILTERS}
    unknown = {r for r in reasons if r is not None and r not in known}
    if unknown:
        raise ValueError(f"drop reasons that are not paper filters: {sorted(unknown)}")
    remaining = len(reasons)
    table = [{"filter": "input", "description": "papers in", "dropped": 0, "remaining": remaining}]
    for code, desc in FILTERS:
        n = reasons.count(code)
        remaining -= n
        table.append({"filter": code, "description": desc, "dropped": n, "remaining": remaining})
    return table


def paper_counts(rows: Any) -> dict[str, int]:
    """S2ORC Table 3 for these rows: ``papers_in`` and, over the kept papers, ``papers``
    and how many have a Grobid / LaTeX parse, any full text, bibliography entries,
    an OAI (publisher) abstract, a DOI, a journal reference; every arXiv paper has
    an arXiv id (``with_arxiv_id`` = ``papers``)."""
    df = rows if isinstance(rows, pl.DataFrame) else papers_frame(rows)
    kept = df.filter(pl.col("kept"))
    return {
        "papers_in": df.height,
        "papers": kept.height,
        "with_full_text": kept.filter(
            pl.col("parse_source").is_not_null() & (pl.col("n_body_paragraphs") > 0)
        ).height,
        "with_grobid": int(kept["has_grobid"].sum()),
        "with_latex": int(kept["has_latex"].sum()),
        "with_bib_entries": kept.filter(pl.col("n_bib_entries") > 0).height,
        "with_oai_abstract": kept.filter(pl.col("abstract_source") == "oai").height,
        "with_doi": kept.filter(pl.col("doi").is_not_null()).height,
        "with_journal_ref": kept.filter(pl.col("journal_ref").is_not_null()).height,
        "with_arxiv_id": kept.height,
    }
