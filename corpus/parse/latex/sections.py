"""The body split at its headings, numbered as LaTeX numbers them (appendices lettered), nested
titles joined with ``::`` (S2ORC's convention), each heading a ``SECREFn`` ref entry."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from corpus.parse.document import RefEntry
from corpus.parse.latex.braces import LatexError, read_group, read_optional
from corpus.parse.latex.environments import LABEL_RE
from corpus.parse.latex.labels import Heading, Target, TheoremHead
from corpus.parse.latex.text import _plain

HEADING_RE = re.compile(
    r"\\(part|chapter|section|subsection|subsubsection|paragraph|subparagraph)(?![A-Za-z])(\*?)"
    r"|\\(appendix)(?![A-Za-z])|\\begin\s*\{(appendix|appendices)\}"
    # Copernicus' \introduction[title] and \conclusions[title] are sections (A&A's \conclusions{...}
    # inside an abstract takes a group: not a heading)
    r"|\\(introduction|conclusions)(?![A-Za-z])(?!\s*\{)"
)
_LEVELS = {
    "part": -1,
    "chapter": 0,
    "section": 1,
    "subsection": 2,
    "subsubsection": 3,
    "paragraph": 4,
    "subparagraph": 5,
}
_ACK_TITLE = re.compile(r"acknowledge?ments?|acknowledgment", re.I)


@dataclass
class Segment:
    """The body between two headings."""

    path: str  # section titles, outermost first, joined with "::"
    num: str | None
    start: int  # where its LaTeX begins in the body
    latex: str
    back_matter: bool  # under an acknowledgments heading


def split_sections(
    body: str, ref_entries: dict[str, RefEntry], labels: dict[str, Target]
) -> tuple[list[Segment], list[Heading]]:
    """The body's segments and its headings; each heading is added to ``ref_entries`` and a
    label in a heading's title to ``labels``."""
    segments: list[Segment] = []
    stack: list[tuple[int, str]] = []
    numbers = [0] * 7
    chapters = re.search(r"\\chapter(?![A-Za-z])\s*\{", body) is not None  # sections numbered 2.1
    appendix = False
    ack = False
    pos, path, num = 0, "", None
    secref = 0
    headings: list[Heading] = []
    for m in HEADING_RE.finditer(body):
        if m.start() < pos:
            continue
        segments.append(Segment(path, num, pos, body[pos : m.start()], ack))
        if m.group(3) or m.group(4):
            appendix = True
            numbers[0 if chapters else 1 :] = [0] * (7 if chapters else 6)
            pos = m.end()
            continue
        cmd, star = m.group(1) or "section", m.group(2)
        opt, i = read_optional(body, m.end())
        if m.group(5):  # \introduction, \conclusions: the optional argument is the title
            title_latex = opt if opt is not None else m.group(5).capitalize()
        else:
            try:
                title_latex, i = read_group(body, i)
            except LatexError:
                title_latex, i = None, i
        pos = i
        title_labels = LABEL_RE.findall(title_latex or "")
        title = _plain(LABEL_RE.sub("", title_latex or ""))
        level = _LEVELS[cmd]
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        path = "::".join(t for _, t in stack if t)
        num = None
        if not star and 0 <= level <= 3:
            numbers[level] += 1
            numbers[level + 1 :] = [0] * (6 - level)
            num = _number(numbers, level, chapters, appendix)
        if level <= 1:
            ack = bool(_ACK_TITLE.search(title))
        ref_id = f"SECREF{secref}"
        secref += 1
        ref_entries[ref_id] = RefEntry(text=title, type="other", num=num)
        target = Target(ref_id, num or title, "section")
        headings.append(Heading(m.start(), level, target, num))
        for lab in title_labels:  # \section{\label{sec:x}Title}
            labels.setdefault(lab.strip(), target)
    segments.append(Segment(path, num, pos, body[pos:], ack))
    return segments, headings


def _number(numbers: list[int], level: int, chapters: bool, appendix: bool) -> str:
    """A heading's number as LaTeX prints it: "2.1" (with chapters "3.2.1"), appendices lettered
    at the top level that is numbered ("A.1", or chapter "A" and its section "A.1")."""
    top = 0 if chapters else 1
    parts = [str(n) for n in numbers[top : level + 1]]
    if appendix and numbers[top] and parts:
        parts[0] = chr(ord("A") + numbers[top] - 1)
    return ".".join(parts) if parts else str(numbers[level])


_RUN_IN_RE = re.compile(r"(?:\s|\\label\s*\{[^{}]*\})*")
_BLANK_RE = re.compile(r"\s*\n\s*\n\s*")


def with_heads(segment: Segment, heads: list[TheoremHead]) -> str:
    """The segment's LaTeX with each theorem-like environment's heading printed after its
    ``\\begin`` (its optional note read into the heading)."""
    lo, hi = segment.start, segment.start + len(segment.latex)
    starts = [h.start for h in heads]  # in body order (assign_labels walks the body)
    mine = heads[bisect.bisect_left(starts, lo) : bisect.bisect_left(starts, hi)]
    if not mine:
        return segment.latex
    out, pos = [], lo
    for h in mine:
        out.append(segment.latex[pos - lo : h.start - lo])
        out.append("\\begin{" + h.name + "}" + h.latex)
        # TeX sets the heading with the first paragraph after it: blank lines (and labels)
        # between them start none, so they are no paragraph break here either
        gap = _RUN_IN_RE.match(segment.latex, h.end - lo)
        out.append(_BLANK_RE.sub(" ", gap.group()))
        pos = lo + gap.end()
    out.append(segment.latex[pos - lo :])
    return "".join(out)
