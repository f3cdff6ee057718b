"""One paragraph as it is built: its text and its spans with exact offsets, and what the
conversion knows of the paper (bibliography, labels, how it prints citations)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from corpus.parse.document import EqSpan, Paragraph, Span
from corpus.parse.latex.bib.item import _Item
from corpus.parse.latex.braces import WS
from corpus.parse.latex.labels import Target
from corpus.parse.latex.style import CiteForm, NumberForm

GAP = "\ue020"  # where a display equation was: a space, never a paragraph break
_GAP_RE = re.compile("\ue020(?:(\\d+)\ue023)?")


def equation_mark(n: int) -> str:
    """What a display equation leaves in the body: a :data:`GAP` naming its ``EQREFn``."""
    return f"{GAP}{n}\ue023"


@dataclass
class Context:
    bib: dict[str, _Item]
    style: str  # BRACKET or NAME-YEAR
    labels: dict[str, Target] = field(default_factory=dict)
    # plain \cite: natbib's \citet, \citep (ACL, AAAI, acmart) or biblatex's bare form
    cite_form: CiteForm = "textual"
    aliases: dict[str, str] = field(default_factory=dict)  # natbib's \defcitealias{key}{Paper I}
    cite_as: dict[str, str] = field(default_factory=dict)  # a cite command the class makes another one
    numbers: NumberForm = "list"  # several numbered keys: "[1, 2]", "[1–3]", "[1], [2]"
    alpha: bool = False  # alphabetic labels
    alpha_style: str = "bibtex"  # "biblatex": labels joined with "; "
    footnotes: list[Paragraph] = field(default_factory=list)
    equations: dict[str, str] = field(default_factory=dict)  # EQREFn -> its LaTeX
    orphan_eqs: list[EqSpan] = field(default_factory=list)  # equations no paragraph has taken yet
    held_notes: dict[str, str] = field(default_factory=dict)  # footnote texts set aside, by key
    ref_names: Any = None  # the names refs print (corpus.parse.latex.refs.RefNames)


class Builder:
    """Accumulates one paragraph's text and spans with exact offsets."""

    def __init__(self, equations: dict[str, str] | None = None) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.last = ""
        self.cites: list[Span] = []
        self.refs: list[Span] = []
        self.eqs: list[EqSpan] = []
        self.equations = equations or {}

    def add(self, text: str) -> None:
        marks: list[tuple[int, str]] = []  # display equations: (offset in the collapsed text, ref id)
        if GAP in text:  # each a space, as before, and an equation span of no width where it stood
            pieces = _GAP_RE.split(text)
            raw = "".join(p or "" if i % 2 == 0 else " " for i, p in enumerate(pieces))
            at = 0
            for i, piece in enumerate(pieces):
                if i % 2 == 0:
                    at += len(piece or "")
                    continue
                if piece is not None:
                    marks.append((len(WS.sub(" ", raw[:at]).rstrip()), f"EQREF{piece}"))
                at += 1
            text = raw
        text = WS.sub(" ", text)
        if not text:
            return
        shift = 0
        if text[0] == " " and (not self.size or self.last == " "):
            text = text[1:]
            shift = -1
        if text and text[0] in ".,;:)" and self.last == " " and self.parts:
            self.parts[-1] = self.parts[-1][:-1]
            self.size -= 1
        for offset, ref in marks:
            pos = max(self.size + offset + shift, 0) if offset else max(self.size - (self.last == " "), 0)
            self.eqs.append(
                EqSpan(start=pos, end=pos, text="", ref_id=ref, latex=self.equations.get(ref, ""))
            )
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
        for e in self.eqs:  # at the end of a text whose trailing space went
            e.start = e.end = min(e.start, len(text))
        return Paragraph(
            text=text,
            cite_spans=self.cites,
            ref_spans=self.refs,
            eq_spans=self.eqs,
            section=section,
            sec_num=sec_num,
        )
