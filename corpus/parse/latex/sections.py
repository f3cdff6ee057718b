"""The body split at its headings, numbered as LaTeX numbers them (appendices lettered), nested
titles joined with ``::`` (S2ORC's convention), each heading a ``SECREFn`` ref entry."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from corpus.parse.document import RefEntry
from corpus.parse.latex.braces import LatexError, read_group, read_optional
from corpus.parse.latex.environments import LABEL_RE
from corpus.parse.latex.labels import Heading, TheoremHead
from corpus.parse.latex.numbering import strip_marks
from corpus.parse.latex.text import _plain

# A sectioning command given as an argument (titlesec's \titlespacing*{\section}{0pt}{4pt}{4pt},
# \let\oldsection\section) is no heading: one takes a title
HEADING_RE = re.compile(
    r"\\(part|chapter|section|subsection|subsubsection|paragraph|subparagraph)(?![A-Za-z])(?!\*?\s*[}=\\])(\*?)"
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

    heading: int | None  # the heading it follows (None: the text before the first)
    start: int  # where its LaTeX begins in the body
    latex: str
    path: str = ""  # section titles, outermost first, joined with "::"
    num: str | None = None
    back_matter: bool = False  # under an acknowledgments heading


def split_sections(body: str) -> tuple[list[Segment], list[Heading]]:
    """The body's segments and its headings (``SECREFn`` in order), not yet numbered: the
    walk of :mod:`corpus.parse.latex.numbering` numbers them, then :func:`name_sections`
    names each segment. ``\\appendix`` starts no segment."""
    segments: list[Segment] = []
    pos = 0
    headings: list[Heading] = []
    for m in HEADING_RE.finditer(body):
        if m.start() < pos:
            continue
        if m.group(3) or m.group(4):
            continue  # \appendix: the walk letters what follows
        segments.append(Segment(len(headings) - 1 if headings else None, pos, body[pos : m.start()]))
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
        title_latex = title_latex or ""
        title = _plain(LABEL_RE.sub("", title_latex))
        headings.append(
            Heading(m.start(), _LEVELS[cmd], bool(star), f"SECREF{len(headings)}", title, title_latex)
        )
    segments.append(Segment(len(headings) - 1 if headings else None, pos, body[pos:]))
    return segments, headings


def name_sections(
    segments: list[Segment],
    headings: list[Heading],
    ref_entries: dict[str, RefEntry],
    title_text: Callable[[str], str],
) -> None:
    """Each heading's title as the paper prints it (``title_text``: a ``\\ref`` in it prints
    its number), a ``SECREFn`` entry each; each segment's path (nested titles joined with
    ``::``), its heading's number, and whether it is back matter (under acknowledgments)."""
    titles = [title_text(LABEL_RE.sub("", h.title_latex)) if h.title_latex else "" for h in headings]
    stack: list[tuple[int, str]] = []
    paths: list[str] = []
    acks: list[bool] = []
    ack = False
    for h, title in zip(headings, titles, strict=True):
        ref_entries[h.ref_id] = RefEntry(text=title, type="other", num=h.num)
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        stack.append((h.level, title))
        paths.append("::".join(t for _, t in stack if t))
        if h.level <= 1:
            ack = bool(_ACK_TITLE.search(title))
        acks.append(ack)
    for seg in segments:
        if seg.heading is not None:
            seg.path, seg.num, seg.back_matter = (
                paths[seg.heading],
                headings[seg.heading].num,
                acks[seg.heading],
            )


_RUN_IN_RE = re.compile(r"(?:\s|\\label\s*\{[^{}]*\})*")
_BLANK_RE = re.compile(r"\s*\n\s*\n\s*")


def with_heads(segment: Segment, heads: list[TheoremHead]) -> str:
    """The segment's LaTeX with each theorem-like environment's heading printed after its
    ``\\begin`` (its optional note read into the heading), the walk's marks removed."""
    lo, hi = segment.start, segment.start + len(segment.latex)
    starts = [h.start for h in heads]  # in body order (assign_labels walks the body)
    mine = heads[bisect.bisect_left(starts, lo) : bisect.bisect_left(starts, hi)]
    if not mine:
        return strip_marks(segment.latex)
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
    return strip_marks("".join(out))
