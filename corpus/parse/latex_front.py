"""Front matter: the title as LaTeX prints it, and where the body begins (front matter such as
``\\author``, ``\\affiliation`` and whatever precedes ``\\maketitle`` is no body text)."""

from __future__ import annotations

import re

from corpus.parse.latex_braces import LatexError, read_group, read_optional
from corpus.parse.latex_sections import HEADING_RE
from corpus.parse.latex_text import _plain

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
    """The body after ``\\maketitle`` when no heading comes before it."""
    mt = _MAKETITLE_RE.search(body)
    if mt and HEADING_RE.search(body, 0, mt.start()) is None:
        return body[mt.end() :]
    return body


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
