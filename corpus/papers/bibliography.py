"""Bibliography-entry rows (the ``bib_entries`` asset): one row per entry of a chosen parse.

Each row carries what linking needs (SPEC.md §5, ``corpus.graph.linking.ENTRY_COLUMNS``):
``entry_id`` (``"<citing_id>#<ref_id>"``: stable across re-runs, unique per
partition), ``citing_id``, a normalised title (:func:`corpus.papers.normalize.normalize_title`),
a normalised DOI and a canonical arXiv id, plus year, first-author surname,
venue, raw text and ``mentions``.

* ``doi``: the entry's ``other_ids["DOI"]`` first, then a DOI in the raw text,
  then in its URLs; lower-cased, ``https://doi.org/`` / ``doi:`` and trailing
  ``.,;`` removed: :func:`corpus.papers.normalize.normalize_doi`.
* ``arxiv_id``: ``other_ids["arXiv"]`` (any id form, canonicalised by
  :func:`corpus.ingest.arxiv_ids.try_normalize`), then an id written with arXiv context in
  the raw text, then in its URLs (:func:`corpus.ingest.arxiv_ids.arxiv_ids_in`: ``arXiv:``,
  ``arxiv.org/abs/``, so numbers inside DOIs are not taken for ids); an arXiv
  DataCite DOI (``10.48550/arXiv.2101.00001``) counts as ``other_ids``. A bare
  ``1234.5678`` without context is not an id (it is a page range as often).
* ``first_author_surname``: the first author's ``last`` (its ``first`` when a
  parser put a single name there), None without authors.
* ``pub_journal``, ``pub_volume``, ``pub_page``, ``pub_year``: the publication the entry names
  (:mod:`corpus.papers.publication`): from its structured fields (BibTeX ``journal``/``volume``/
  ``pages``, Grobid's ``biblStruct``) when they give journal, volume and page, else from its raw
  text; journal canonical ("Phys. Rev. D"), volume canonical ("200805" for JHEP's May 2008),
  first page or article number as printed ("013009": APS DOIs keep the zero); null when none.
* ``mentions``: cite spans in ``body_text`` whose ``ref_id`` is this entry
  (abstract and back matter not counted: the body is where citation contexts live).

Entries without a title are kept (they may link by DOI or arXiv id; DESIGN §5).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from corpus.ingest.arxiv_ids import arxiv_ids_in as find_arxiv_ids
from corpus.ingest.arxiv_ids import try_normalize
from corpus.papers.normalize import normalize_doi, normalize_title
from corpus.papers.publication import parse_publication, publication_from_fields
from corpus.parse.document import StructuredDoc

# The version of bib_entries (corpus.versions): bump it whenever their rows change.
# 2: the publication columns; 3: more journal names read; 4: issues 43/44 (the LaTeX parses' bibliography
# fields: titles, names, years and lists read as the styles print them)
BIB_ENTRIES_VERSION = "corpus.papers.bibliography/4"

__all__ = ["BibInputError", "bib_frame", "bib_rows", "bib_schema", "raw_entry_ids"]

_ARXIV_DOI = "10.48550/arxiv."
_NAME_STRIP = " \t\"'{}.,;"  # BibTeX quoting/bracing left around a surname


class BibInputError(ValueError):
    """A parse that cannot give bibliography rows (no paper id, not a parse); says why."""


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _strings(values: Any) -> list[str]:
    if not values:
        return []
    if isinstance(values, str):
        return [values]
    return [v for v in values if isinstance(v, str) and v]


def _ids(other_ids: Mapping[str, Any], *names: str) -> list[str]:
    out: list[str] = []
    for key, vals in other_ids.items():
        if key.lower() in names:
            out.extend(_strings(vals))
    return out


def _entry_doi(other_ids: Mapping[str, Any], raw: str, urls: list[str]) -> str | None:
    for v in _ids(other_ids, "doi"):
        d = normalize_doi(v)
        if d:
            return d
    if "10." in raw:
        d = normalize_doi(raw)
        if d:
            return d
    for u in urls:
        if "10." in u:
            d = normalize_doi(u)
            if d:
                return d
    return None


def _entry_arxiv(other_ids: Mapping[str, Any], doi: str | None, raw: str, urls: list[str]) -> str | None:
    for v in _ids(other_ids, "arxiv", "arxiv_id"):
        a = try_normalize(v) or next(iter(find_arxiv_ids(v)), None)
        if a:
            return a
    if doi and doi.startswith(_ARXIV_DOI):  # arXiv's own DataCite DOI names the paper
        a = try_normalize(doi[len(_ARXIV_DOI) :])
        if a:
            return a
    low = raw.lower()
    if "arxiv" in low or "abs/" in low:
        found = find_arxiv_ids(raw)
        if found:
            return found[0]
    for u in urls:
        if "arxiv" in u.lower():
            found = find_arxiv_ids(u)
            if found:
                return found[0]
    return None


def raw_entry_ids(raw: str) -> tuple[str | None, str | None]:
    """(arXiv id, DOI) of a bibliography entry known only by its raw text, by the rules of
    :func:`bib_rows` (used to link reference strings the way bibliography entries are linked)."""
    doi = _entry_doi({}, raw, [])
    return _entry_arxiv({}, doi, raw, []), doi


def _surname(authors: Any) -> str | None:
    for a in authors or ():
        name = (_get(a, "last") or "").strip(_NAME_STRIP) or (_get(a, "first") or "").strip(_NAME_STRIP)
        return name or None
    return None


def _mentions(doc: Any) -> Counter:
    counts: Counter = Counter()
    for p in _get(doc, "body_text") or ():
        spans = p["cite_spans"] if isinstance(p, dict) else p.cite_spans
        for s in spans:
            rid = s["ref_id"] if isinstance(s, dict) else s.ref_id
            if rid:
                counts[rid] += 1
    return counts


def bib_rows(paper_id: str, doc: StructuredDoc | dict) -> list[dict]:
    """One row per bibliography entry of ``doc`` (a StructuredDoc or its dict form), in the
    parse's order; columns of :func:`bib_schema`. Raises :class:`BibInputError` for an
    empty ``paper_id`` or a ``doc`` without ``bib_entries``."""
    if not isinstance(paper_id, str) or not paper_id.strip():
        raise BibInputError(f"bib_rows needs a paper id, got {paper_id!r}")
    entries = _get(doc, "bib_entries", None) if doc is not None else None
    if entries is None:
        raise BibInputError(f"{paper_id}: not a parse (no bib_entries): {type(doc).__name__}")
    source = _get(doc, "source") or None
    mentions = _mentions(doc)
    rows = []
    for key, e in entries.items():
        if isinstance(e, dict):
            ref_id, other, raw = e.get("ref_id") or key, e.get("other_ids") or {}, e.get("raw_text") or ""
            urls, title, year, authors = e.get("urls"), e.get("title") or "", e.get("year"), e.get("authors")
            venue, volume, issue, pages = e.get("venue"), e.get("volume"), e.get("issue"), e.get("pages")
        else:
            ref_id, other, raw = e.ref_id or key, e.other_ids, e.raw_text
            urls, title, year, authors, venue = e.urls, e.title, e.year, e.authors, e.venue
            volume, issue, pages = e.volume, e.issue, e.pages
        urls = _strings(urls)
        year = year if isinstance(year, int) else None
        pub = publication_from_fields(venue, volume, pages, year, issue) or parse_publication(raw)
        doi = _entry_doi(other, raw, urls)
        rows.append(
            {
                "entry_id": f"{paper_id}#{ref_id}",
                "citing_id": paper_id,
                "ref_id": ref_id,
                "source": source,
                "title": title,
                "norm_title": normalize_title(title) or None,
                "doi": doi,
                "arxiv_id": _entry_arxiv(other, doi, raw, urls),
                "year": year,
                "first_author_surname": _surname(authors),
                "n_authors": len(authors or ()),
                "venue": venue or None,
                "raw_text": raw or None,
                "mentions": mentions.get(ref_id, 0),
                "pub_journal": pub.journal if pub else None,
                "pub_volume": pub.volume if pub else None,
                "pub_page": pub.page_raw.upper() if pub else None,
                "pub_year": pub.year if pub else None,
            }
        )
    return rows


def bib_schema() -> dict[str, pl.DataType]:
    """Column types of the ``bib_entries`` asset (fixed, so empty partitions keep them)."""
    return {
        "entry_id": pl.Utf8,
        "citing_id": pl.Utf8,
        "ref_id": pl.Utf8,
        "source": pl.Utf8,
        "title": pl.Utf8,
        "norm_title": pl.Utf8,
        "doi": pl.Utf8,
        "arxiv_id": pl.Utf8,
        "year": pl.Int64,
        "first_author_surname": pl.Utf8,
        "n_authors": pl.Int64,
        "venue": pl.Utf8,
        "raw_text": pl.Utf8,
        "mentions": pl.Int64,
        "pub_journal": pl.Utf8,
        "pub_volume": pl.Utf8,
        "pub_page": pl.Utf8,
        "pub_year": pl.Int64,
    }


def bib_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows of :func:`bib_rows` -> a DataFrame with exactly :func:`bib_schema`.
    Raises :class:`BibInputError` on a duplicate ``entry_id`` (linking needs them unique)."""
    schema = bib_schema()
    rows = list(rows)
    df = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    if df.height and df["entry_id"].n_unique() != df.height:
        dup = df.filter(pl.col("entry_id").is_duplicated())["entry_id"].unique().head(3).to_list()
        raise BibInputError(f"duplicate entry_id, e.g. {dup}")
    return df
