"""The S2ORC-style structured full-text schema shared by TEI and LaTeX parsing.

Field names follow s2orc-doc2json's ``pdf_parse`` JSON exactly, so tools built for
S2ORC (the cite-worth code, for one) read our output unchanged. Both
``corpus.parse.tei`` and ``corpus.parse.latex`` produce a :class:`StructuredDoc`; everything
downstream (papers, bib_entries, pes2o, citeworth) reads only this shape.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CitationStyle = Literal["BRACKET", "NAME-YEAR", "OTHER"]
ParseSource = Literal["grobid", "latex", "s2orc"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Span(_Model):
    """A character span in a paragraph's ``text``; ``text[start:end] == span.text`` always."""

    start: int
    end: int
    text: str
    ref_id: str | None = None


class EqSpan(Span):
    latex: str = ""


class Paragraph(_Model):
    text: str
    cite_spans: list[Span] = Field(default_factory=list)
    ref_spans: list[Span] = Field(default_factory=list)
    eq_spans: list[EqSpan] = Field(default_factory=list)
    section: str = ""  # nested sections joined with "::" (S2ORC convention)
    sec_num: str | None = None


class Author(_Model):
    first: str = ""
    middle: list[str] = Field(default_factory=list)
    last: str = ""
    suffix: str = ""
    affiliation: dict = Field(default_factory=dict)
    email: str = ""


class BibEntry(_Model):
    ref_id: str  # "BIBREFn"
    title: str = ""
    authors: list[Author] = Field(default_factory=list)
    year: int | None = None
    venue: str = ""
    volume: str = ""
    issue: str = ""
    pages: str = ""
    other_ids: dict[str, list[str]] = Field(default_factory=dict)  # {"DOI": [...], "arXiv": [...]}
    num: int | None = None
    urls: list[str] = Field(default_factory=list)
    raw_text: str = ""


class RefEntry(_Model):
    """A figure, table or equation pulled out of the body text ("FIGREFn", "TABREFn")."""

    text: str = ""  # the caption
    latex: str | None = None
    type: Literal["figure", "table", "equation", "other"] = "figure"
    num: str | None = None


class StructuredDoc(_Model):
    """One paper's structured full text: the S2ORC ``pdf_parse`` plus its header."""

    paper_id: str
    source: ParseSource
    title: str = ""
    authors: list[Author] = Field(default_factory=list)
    year: int | None = None
    date: str = ""
    venue: str = ""
    identifiers: dict[str, list[str]] = Field(default_factory=dict)  # idnos: DOI, arXiv, ...
    abstract: list[Paragraph] = Field(default_factory=list)
    body_text: list[Paragraph] = Field(default_factory=list)
    back_matter: list[Paragraph] = Field(default_factory=list)
    bib_entries: dict[str, BibEntry] = Field(default_factory=dict)
    ref_entries: dict[str, RefEntry] = Field(default_factory=dict)
    citation_style: CitationStyle = "OTHER"
    parser_version: str = ""  # e.g. the Grobid version that made the TEI

    def to_s2orc(self) -> dict:
        """The s2orc-doc2json JSON layout (header fields outside, ``pdf_parse`` inside)."""
        parse = self.model_dump(
            include={"paper_id", "abstract", "body_text", "back_matter", "bib_entries", "ref_entries"}
        )
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "authors": [a.model_dump() for a in self.authors],
            "year": self.year,
            "abstract": "\n\n".join(p.text for p in self.abstract),
            "pdf_parse": parse,
        }
