"""Front matter: the title as LaTeX prints it, and where the body begins (front matter such as
``\\author``, ``\\affiliation`` and whatever precedes ``\\maketitle`` is no body text)."""

from __future__ import annotations

import re

from corpus.parse.latex.braces import LatexError, read_group, read_optional
from corpus.parse.latex.environments import ABSTRACT_MARK
from corpus.parse.latex.sections import HEADING_RE
from corpus.parse.latex.text import _plain

_MAKETITLE_RE = re.compile(r"\\maketitle(?![A-Za-z])")


_TITLE_RE = re.compile(r"\\(?:title|icmltitle)\s*(?:\[[^\]]*\])?\s*\{")


def title(text: str) -> str:
    """The paper's title, notes (``\\thanks``, ``\\footnote``...) left out: the one the first
    ``\\maketitle`` prints, the last ``\\title`` given before it (a supplement's own title
    further on is not the paper's)."""
    made = _MAKETITLE_RE.search(text)
    m = None
    for m in _TITLE_RE.finditer(text, 0, made.start() if made else len(text)):  # noqa: B007
        pass  # the last one given
    if m is None:
        m = _TITLE_RE.search(text)
    if not m:
        return ""
    try:
        raw, _ = read_group(text, m.end() - 1)
    except LatexError:
        return ""
    raw = re.sub(r"\\\\", " ", raw or "")
    out, pos = [], 0
    for n in re.finditer(r"\\(?:thanks|footnote|tnoteref|fnref|titlenote)(?![A-Za-z])", raw):
        if n.start() < pos:
            continue
        _, i = read_optional(raw, n.end())
        try:
            note, end = read_group(raw, i)
        except LatexError:
            note, end = None, i
        out.append(raw[pos : n.start()])
        pos = end if note is not None else n.end()
    out.append(raw[pos:])
    return _plain("".join(out))


def body_start(body: str) -> str:
    """The body without its front matter (:func:`split_front`)."""
    return split_front(body)[1]


def split_front(body: str) -> tuple[str, str]:
    """The front matter and the body: what precedes ``\\maketitle`` when no heading comes
    before it; without ``\\maketitle`` (iopart and AGU print the title where it is given),
    what precedes the abstract environment, or a hand-made title page (a short, title-like
    first page before ``\\newpage``); then author-credit notes before the first heading leave
    the body. The front is still walked for its counters (acmart's teaser figure)."""
    heading = HEADING_RE.search(body)
    first = heading.start() if heading else len(body)
    mt = _MAKETITLE_RE.search(body)
    cut = 0
    if mt and mt.start() < first:
        cut = mt.end()
    elif mt is None:
        abstract = body.rfind(ABSTRACT_MARK, 0, first)
        page = _PAGE_BREAK_RE.search(body, 0, first)
        if abstract >= 0:
            cut = abstract + 1
        elif page and _TITLE_PAGE_RE.search(body, 0, page.start()) and len(body[: page.start()]) < 1500:
            cut = page.end()
    front, body = body[:cut], body[cut:]
    body = body.replace(ABSTRACT_MARK, "")
    heading = HEADING_RE.search(body)
    first = heading.start() if heading else len(body)
    return front, _credit_notes(body[:first]) + body[first:]


_PAGE_BREAK_RE = re.compile(r"\\(?:newpage|clearpage|cleardoublepage|pagebreak)(?![A-Za-z])")
_TITLE_PAGE_RE = re.compile(
    r"\\(?:LARGE|Large|huge|Huge|maketitle|thispagestyle|vfill|titlepage)(?![A-Za-z])|\\begin\s*\{(?:center|flushright)\}"
)
_NOTE_RE = re.compile(r"\\(?:footnotetext|footnote|thanks)(?![A-Za-z])")
_CREDIT_RE = re.compile(
    r"contributed equally|equal(?:ly)? contribut|these authors|all (?:\w+ )?authors|corresponding author|"
    r"to whom correspondence|e-?mail\s*(?:address(?:es)?)?\s*:|[\w.]@[\w-]+\.\w",
    re.I,
)


def _credit_notes(front: str) -> str:
    """Notes about the authors before the first heading ("All four authors contributed
    equally", a corresponding author's e-mail) are front matter, not footnotes of the text."""
    if not _NOTE_RE.search(front):
        return front
    out, pos = [], 0
    for m in _NOTE_RE.finditer(front):
        if m.start() < pos:
            continue
        _, i = read_optional(front, m.end())
        try:
            note, end = read_group(front, i)
        except LatexError:
            continue
        if note is not None and _CREDIT_RE.search(note):
            out.append(front[pos : m.start()])
            pos = end
    out.append(front[pos:])
    return "".join(out)


_FRONT_LINE_RE = re.compile(
    r"(?:Key ?words|Index terms|PACS(?: numbers)?|MSC(?: \d{4})?|Mathematics Subject Classification|"
    r"JEL(?: classification)?|Submitted to|Received|Accepted)\b\s*[:.—–-]",
    re.I,
)


def front_line(text: str) -> bool:
    """Whether a paragraph before the first heading is a front-matter line: keywords, PACS and
    subject classes, "Submitted to", dates of receipt."""
    return _FRONT_LINE_RE.match(text) is not None


_ABSTRACT_ENV_RE = re.compile(r"\\begin\s*\{abstract\}(.*?)\\end\s*\{abstract\}", re.S)
_ABSTRACT_CMD_RE = re.compile(r"\\abstract\s*\{")
# A&A's structured abstract: each part prints its name ("Context. Stars form.")
_AA_PARTS_RE = re.compile(r"\\(context|aims|methods|results|conclusions)\s*\{")


def abstracts(preamble: str, body: str, environments: list[str]) -> list[str]:
    """The LaTeX of the abstract: an ``abstract`` environment in the preamble or the body, or
    else the ``\\abstract{...}`` command (A&A, Springer Nature), wherever it is (before
    ``\\maketitle`` too)."""
    found = [m.group(1) for m in _ABSTRACT_ENV_RE.finditer(preamble)] + environments
    if not found:
        for text in (preamble, body):
            m = _ABSTRACT_CMD_RE.search(text)
            if m:
                try:
                    chunk, _ = read_group(text, m.end() - 1)
                except LatexError:
                    continue
                if chunk and chunk.strip():
                    found.append(chunk)
                    break
    return [_aa_parts(chunk) for chunk in found]


def _aa_parts(chunk: str) -> str:
    if "\\" not in chunk or not _AA_PARTS_RE.search(chunk):
        return chunk
    out, pos = [], 0
    for m in _AA_PARTS_RE.finditer(chunk):
        if m.start() < pos:
            continue
        try:
            part, end = read_group(chunk, m.end() - 1)
        except LatexError:
            continue
        out.append(chunk[pos : m.start()] + f" {m.group(1).capitalize()}. {part} ")
        pos = end
    out.append(chunk[pos:])
    return "".join(out)
