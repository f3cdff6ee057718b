"""One paragraph as it is built: its text and its spans with exact offsets, and what the
conversion knows of the paper (bibliography, labels, how it prints citations)."""

from __future__ import annotations

from dataclasses import dataclass, field

from corpus.parse.document import Paragraph, Span
from corpus.parse.latex_bib import _Item
from corpus.parse.latex_braces import WS
from corpus.parse.latex_labels import Target
from corpus.parse.latex_style import CiteForm, NumberForm

GAP = "\ue020"  # where a display equation was: a space, never a paragraph break


@dataclass
class Context:
    bib: dict[str, _Item]
    style: str  # BRACKET or NAME-YEAR
    labels: dict[str, Target] = field(default_factory=dict)
    # plain \cite: natbib's \citet, \citep (ACL, AAAI, acmart) or biblatex's bare form
    cite_form: CiteForm = "textual"
    aliases: dict[str, str] = field(default_factory=dict)  # natbib's \defcitealias{key}{Paper I}
    numbers: NumberForm = "list"  # several numbered keys: "[1, 2]", "[1–3]", "[1], [2]"
    alpha: bool = False  # alphabetic labels
    alpha_style: str = "bibtex"  # "biblatex": labels joined with "; "
    footnotes: list[Paragraph] = field(default_factory=list)
    held_notes: dict[str, str] = field(default_factory=dict)  # footnote texts set aside, by key


class Builder:
    """Accumulates one paragraph's text and spans with exact offsets."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.last = ""
        self.cites: list[Span] = []
        self.refs: list[Span] = []

    def add(self, text: str) -> None:
        text = WS.sub(" ", text.replace(GAP, " "))
        if not text:
            return
        if text[0] == " " and (not self.size or self.last == " "):
            text = text[1:]
        if text and text[0] in ".,;:)" and self.last == " " and self.parts:
            self.parts[-1] = self.parts[-1][:-1]
            self.size -= 1
        if text:
            self.parts.append(text)
            self.size += len(text)
            self.last = text[-1]

    def span(self, text: str, ref_id: str | None, into: list[Span]) -> None:
        if not text:
            return
        into.append(Span(start=self.size, end=self.size + len(text), text=text, ref_id=ref_id))
        self.parts.append(text)
        self.size += len(text)
        self.last = text[-1]

    def paragraph(self, section: str, sec_num: str | None) -> Paragraph | None:
        text = "".join(self.parts).rstrip()
        if not text or not any(c.isalnum() for c in text):
            return None
        return Paragraph(
            text=text, cite_spans=self.cites, ref_spans=self.refs, section=section, sec_num=sec_num
        )
