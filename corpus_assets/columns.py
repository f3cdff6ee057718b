"""One-line descriptions of every stored column (SPEC.md's words), shown as each asset's
column schema in the Dagster UI (``dagster/column_schema``).

The types come from the Parquet files themselves (:func:`column_schema`), so a schema
shown in the UI is always the one on disk; this module only says what a column means.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import dagster as dg
import polars as pl

_FETCH = {
    "id": "arXiv id (no version)",
    "version": "arXiv version the file belongs to",
    "status": "fetch result: stored | cached | missing | failed",
    "source": "where the file came from: landing | arxiv | bulk | known (blob already stored)",
    "sha256": "sha256 of the file: its name in the blob store",
    "md5": "md5 of the file (arXiv's bulk manifests use md5)",
    "bytes": "file size in bytes",
    "fetch_reason": "why a fetch failed or was refused",
    "http_status": "HTTP status of the download, when there was one",
}
_PARSE = {
    "id": "arXiv id",
    "parser": "grobid (TEI) or latex",
    "status": "ok | failed | skipped",
    "reason": "why the parse failed or was skipped",
    "parser_version": "Grobid version, or this project's LaTeX parser version",
    "citation_style": "BRACKET | NAME-YEAR | OTHER (S2ORC §2.1, counted over all sections)",
    "title": "title found by the parser (not used for canonical metadata)",
    "n_paragraphs": "body paragraphs",
    "n_cite_spans": "inline citation spans",
    "n_linked_cite_spans": "citation spans linked to a bibliography entry",
    "n_bib_entries": "bibliography entries",
    "n_ref_entries": "figure/table/equation entries",
    "body_chars": "characters of body text",
    "warnings": "what the LaTeX parser repaired as TeX does (an unclosed brace closed at its paragraph's end...)",
    "doc": "the S2ORC pdf_parse-shaped document as JSON (abstract, body_text, bib_entries, ref_entries)",
}

DESCRIPTIONS: dict[str, dict[str, str]] = {
    "arxiv_metadata": {
        "id": "arXiv id, old (hep-th/9901001) or new (0704.0001) form, no version",
        "version": "latest version number in the record",
        "datestamp": "OAI-PMH datestamp: the daily partition",
        "sets": "OAI sets of the record",
        "deleted": "the OAI record is a deletion",
        "submitter": "who submitted the paper",
        "authors_raw": "authors as one string, as arXiv gives it",
        "authors": "parsed authors (keyname, forenames, suffix, affiliations)",
        "title": "title, whitespace normalised",
        "abstract": "abstract, whitespace normalised",
        "comments": "submitter's comments",
        "journal_ref": "journal reference",
        "doi": "DOI",
        "report_no": "report number",
        "msc_class": "MSC classes",
        "acm_class": "ACM classes",
        "categories": "arXiv categories; the first is the primary one",
        "license": "licence URL",
        "versions": "version history (version, date, size, source type) where the format carries it",
        "created": "date of the first version",
        "updated": "date of the latest version",
        "source_format": "metadata prefix the record came in: arXiv | arXivRaw | oai_dc",
        "primary_category": "first category",
        "is_new": "first version (not an update of an older paper)",
    },
    "arxiv_metadata_failures": {
        "source": "landing-zone file the record or page came from",
        "position": "record position in the page (-1: the whole page)",
        "identifier": "OAI identifier, when it could be read",
        "datestamp": "datestamp the failure is filed under",
        "reason": "why the record or page could not be read",
    },
    "arxiv_pdfs": {
        **_FETCH,
        "pages": "page count",
        "first_page_width": "first page width in points (after /Rotate)",
        "first_page_height": "first page height in points (after /Rotate)",
        "rotate": "first page /Rotate",
        "encrypted": "the PDF is encrypted",
        "probe_error": "why the PDF could not be read",
        "passed": "passes the S2ORC App. B filters: goes to Grobid",
        "filter_reason": "unreadable | too_many_pages | landscape | missing | failed, or null",
    },
    "arxiv_sources": {
        **_FETCH,
        "kind": "e-print kind: tar | gzip_tex | tex | pdf | ps | empty | unknown",
        "n_files": "files unpacked",
        "skipped": "members refused while unpacking (unsafe paths, links, caps)",
        "main": "main .tex file (has \\documentclass)",
        "has_bbl": "a .bbl was found",
        "n_bib_files": ".bib files found",
        "non_utf8": "files decoded with a fallback encoding",
        "warnings": "assembly warnings (missing \\input files, depth limits)",
        "failure": "failure code (unsafe_path, pdf_only, no_main_tex, input_loop, ...) or null",
        "failure_message": "failure in words",
        "latex_source": "assembled LaTeX (expanded main file, .bbl, .bib) as JSON",
    },
    "grobid_tei": {
        "id": "arXiv id",
        "pdf_sha256": "sha256 of the PDF: the TEI cache key",
        "status": "ok (fresh from Grobid) | cached | failed | pending (Grobid unavailable)",
        "source": "grobid | cache | landing",
        "tei_bytes": "TEI size in bytes",
        "grobid_version": "Grobid version that wrote the TEI",
        "http_status": "Grobid's HTTP status",
        "reason": "why the TEI is missing",
        "detail": "more on the reason",
        "attempts": "requests sent",
        "seconds": "time Grobid took",
    },
    "pdf_parses": _PARSE,
    "latex_parses": _PARSE,
    "papers": {
        "id": "arXiv id",
        "datestamp": "OAI datestamp of the delivery",
        "title": "canonical title (OAI first, then majority vote, S2ORC §2.3)",
        "norm_title": "title normalised for linking (S2ORC §2.6)",
        "authors": "canonical authors",
        "abstract": "canonical abstract",
        "year": "publication year",
        "created": "first version date",
        "updated": "latest version date",
        "n_versions": "arXiv versions",
        "latest_version": "latest arXiv version",
        "license": "licence URL",
        "primary_category": "primary arXiv category",
        "categories": "arXiv categories",
        "doi": "DOI",
        "journal_ref": "journal reference",
        "venue": "venue (journal reference, else arXiv)",
        "field": "CiteWorth field from the primary category",
        "field_of_study": "field of study",
        "parse_source": "chosen full text: grobid | latex | null",
        "parse_reason": "why that parse was chosen",
        "parser_version": "version of the chosen parser",
        "has_grobid": "a Grobid parse exists",
        "has_latex": "a LaTeX parse exists",
        "n_body_paragraphs": "paragraphs of the chosen parse",
        "n_bib_entries": "bibliography entries of the chosen parse",
        "title_source": "source of the title",
        "authors_source": "source of the authors",
        "abstract_source": "source of the abstract",
        "year_source": "source of the year",
        "doi_source": "source of the DOI",
        "venue_source": "source of the venue",
        "text_chars": "characters of abstract + body text",
        "language": "cld2 language of the text",
        "kept": "passes every S2ORC filter (§2.5)",
        "drop_reason": "first filter that dropped the paper: no_title | no_authors | too_short | not_english",
        "drop_detail": "the filter's evidence",
    },
    "fulltext_ids": {
        "citing_id": "paper whose body text names an arXiv id",
        "cited_id": "the arXiv id named (arXiv-as-a-dataset §2.3)",
        "mentions": "how often it is named",
    },
    "bib_entries": {
        "entry_id": "citing paper id and bibliography key",
        "citing_id": "paper the entry belongs to",
        "ref_id": "entry key in the parse (b0, b1, ... or the \\bibitem key)",
        "source": "parse the entry came from: grobid | latex",
        "title": "entry title",
        "norm_title": "title normalised for linking",
        "doi": "DOI in the entry",
        "arxiv_id": "arXiv id in the entry",
        "year": "year",
        "first_author_surname": "first author's surname",
        "n_authors": "authors listed",
        "venue": "venue",
        "raw_text": "the entry as printed",
        "mentions": "inline citations of this entry in the body",
        "pub_journal": "journal the entry names, canonical (corpus.papers.journals)",
        "pub_volume": "its volume (JHEP/JCAP: year and month)",
        "pub_page": "its first page or article number, as printed",
        "pub_year": "its year",
    },
    "citation_links": {
        "entry_id": "bibliography entry",
        "citing_id": "citing paper",
        "cited_id": "linked paper",
        "via": "arxiv_id | doi | title (S2ORC §2.6) | doi_derived | publication (journal, volume, page)",
        "score": "title score S (1.0 for identifiers)",
    },
    "citation_graph": {
        "citing_id": "citing paper",
        "cited_id": "cited paper",
        "via": "strongest evidence: arxiv_id | doi | title | doi_derived | publication | fulltext_id",
        "score": "best title score (1.0 for identifiers)",
        "mentions": "inline citations behind the edge",
    },
    "pes2o": {
        "id": "arXiv id",
        "source": "s2orc (full text) | s2ag (title + abstract)",
        "added": "when the document was added (peS2o card)",
        "created": "publication date (peS2o card)",
        "created_date": "publication date as a date",
        "year": "publication year",
        "v1_keep": "kept in peS2o v1",
        "v1_reason": "why v1 dropped it",
        "v2_keep": "kept in peS2o v2",
        "v2_reason": "why v2 dropped it",
        "detail": "the failing signal's value",
        "text": "released text: paragraphs joined by a blank line",
        "words": "whitespace words of the text",
        "signals": "every peS2o signal as JSON (languages, word probabilities, top word, OCR count)",
    },
    "citeworth_paragraphs": {
        "paper_id": "arXiv id",
        "section_index": "paragraph position in the paper",
        "section_title": "section header",
        "field": "CiteWorth field",
        "original_text": "paragraph as parsed",
        "samples": "sentences with label (check-worthy or not), cleaned text and removed citations",
        "kept": "every sentence passes CiteWorth's rules (App. A-B)",
        "reason": "first rule the paragraph failed",
        "detail": "the failing sentence or marker",
        "n_sentences": "sentences",
        "n_cite_worthy": "cite-worthy sentences",
    },
    "citeworth_candidates": {
        "paper_id": "arXiv id",
        "field": "CiteWorth field",
        "parse_source": "parse the paragraphs came from",
        "reason": "why the paper gave no paragraph, or null",
        "detail": "more on the reason",
        "paragraphs": "paragraphs of permissible sections",
        "kept_paragraphs": "paragraphs kept",
        "sentences": "sentences in kept paragraphs",
        "cite_worthy": "cite-worthy sentences",
    },
    "citeworth_splits": {
        "paper_id": "arXiv id",
        "section_index": "paragraph position",
        "field": "CiteWorth field",
        "split": "train | dev | test (80/10/10 by paper)",
        "n_sentences": "sentences",
        "n_cite_worthy": "cite-worthy sentences",
        "date": "daily partition the paragraph came from",
    },
}


def column_schema(asset: str, schema: Mapping[str, pl.DataType]) -> dg.TableSchema:
    """The table schema of ``asset`` for ``dagster/column_schema``: types from Parquet,
    descriptions from :data:`DESCRIPTIONS` (an unknown column says so, so gaps show)."""
    words = DESCRIPTIONS.get(asset, {})
    return dg.TableSchema(
        columns=[
            dg.TableColumn(name, str(dtype), description=words.get(name, "(not described yet)"))
            for name, dtype in schema.items()
        ]
    )


def parquet_column_schema(asset: str, path: Path) -> dg.TableSchema | None:
    """:func:`column_schema` of one written Parquet file (its footer only), or None."""
    try:
        return column_schema(asset, pl.read_parquet_schema(path))
    except (OSError, pl.exceptions.PolarsError):
        return None
