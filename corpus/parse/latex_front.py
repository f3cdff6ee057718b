"""Front matter: the title as LaTeX prints it, and where the body begins (front matter such as
``\\author``, ``\\affiliation`` and whatever precedes ``\\maketitle`` is no body text)."""

from __future__ import annotations

import re

from corpus.parse.latex_braces import LatexError, read_group, read_optional
from corpus.parse.latex_sections import HEADING_RE
from corpus.parse.latex_text import _plain

_MAKETITLE_RE = re.compile(r"\\maketitle(?![A-Za-z])")


def title(text: str) -> str:
    """The paper's title, notes (``\\thanks``, ``\\footnote``...) left out."""
    m = re.search(r"\\title\s*(?:\[[^\]]*\])?\s*\{", text)
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
    """The body after ``\\maketitle`` when no heading comes before it."""
    mt = _MAKETITLE_RE.search(body)
    if mt and HEADING_RE.search(body, 0, mt.start()) is None:
        return body[mt.end() :]
    return body
