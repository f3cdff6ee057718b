"""Grobid TEI XML -> the S2ORC-style structured document: :mod:`.parser` walks the document,
:mod:`.text` reads element text fast, :mod:`.bibliography` the people and references,
:mod:`.citations` the cite-span post-processing (SPEC.md §3)."""

from corpus.parse.tei.parser import (
    TEI_PARSER_VERSION,
    SectionNester,
    TeiError,
    classify_citation_style,
    find_arxiv_ids,
    find_dois,
    normalize_space,
    parse_tei,
    parse_tei_dict,
    postprocess_citations,
)

__all__ = [
    "TEI_PARSER_VERSION",
    "SectionNester",
    "TeiError",
    "classify_citation_style",
    "find_arxiv_ids",
    "find_dois",
    "normalize_space",
    "parse_tei",
    "parse_tei_dict",
    "postprocess_citations",
]
