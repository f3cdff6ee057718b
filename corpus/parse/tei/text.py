"""The text of Grobid TEI elements, read the way :mod:`corpus.parse.tei` needs it fast: local
names, child lookups, whitespace collapsed exactly once, a paragraph's text built with its
spans' offsets, and the arXiv ids and DOIs written in a string."""

from __future__ import annotations

import re

from corpus.ingest.arxiv_ids import try_normalize
from corpus.parse.tei.citations import YEAR as _YEAR

# C0/C1 controls (XML 1.0 admits the C1 range): pycld2 and JSON consumers choke on them.
# They are replaced by spaces before parsing, so text normalisation is a plain
# ``str.split`` (Unicode whitespace) + join, which is several times faster than a regex.
CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_ARXIV_IN_TEXT = re.compile(
    r"(?:arxiv\s*(?:preprint|e-prints?)?\s*[:.]?\s*(?:arxiv\s*:\s*)?|arxiv\.org/(?:abs|pdf)/|\babs/|arxiv\.)"
    r"((?:[a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?/\d{7})|\d{4}\.\d{4,5})(?:v\d+)?",
    re.IGNORECASE,
)
_DOI_IN_TEXT = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)")
_DOI_TRAIL = ".,;:)]}>'\""


def normalize_space(text: str | None) -> str:
    """Collapse whitespace/control runs to one space and strip (the text form used everywhere)."""
    if not text:
        return ""
    if CONTROLS.search(text):
        text = CONTROLS.sub(" ", text)
    return " ".join(text.split())


def find_arxiv_ids(text: str) -> list[str]:
    """Canonical arXiv ids written in ``text`` with an arXiv context (``arXiv:``, ``abs/``,
    ``arxiv.org/abs/``), so numbers inside DOIs or page ranges are not mistaken for ids."""
    out: list[str] = []
    for m in _ARXIV_IN_TEXT.finditer(text):
        aid = try_normalize(m.group(1))
        if aid and aid not in out:
            out.append(aid)
    return out


def find_dois(text: str) -> list[str]:
    out: list[str] = []
    for m in _DOI_IN_TEXT.finditer(text):
        doi = m.group(1).rstrip(_DOI_TRAIL)
        if doi and doi not in out:
            out.append(doi)
    return out


class LocalNames(dict):
    """tag -> local name (namespace or not; comments/PIs give ""), filled on first sight.

    Subscripting a dict subclass stays a C-level lookup, which matters: it runs for
    every element of every document.
    """

    def __missing__(self, tag: object) -> str:
        if isinstance(tag, str):
            i = tag.find("}")
            ln = tag[i + 1 :] if i >= 0 else tag
        else:
            ln = ""
        if len(self) < 4096:
            self[tag] = ln
        return ln


LN = LocalNames()


def is_clean(s: str) -> bool:
    """True when ``" ".join(s.split())`` is just ``s.strip(" ")``: the only whitespace is
    single ASCII spaces. Most Grobid text is like that, and these checks are several times
    cheaper than splitting and joining. ASCII text: no tab, newline or CR (``in`` is a
    memchr; VT, FF and FS..US cannot occur, XML 1.0 forbids them). Other text:
    ``isprintable()`` is False for every whitespace character but the ASCII space (they
    are all in Unicode categories Zs, Zl, Zp or Cc). Double spaces are looked for last.
    """
    if s.isascii():
        if "\n" in s or "\t" in s or "\r" in s:
            return False
    elif not s.isprintable():
        return False
    return "  " not in s


def find_children(el, name: str) -> list:
    """Child elements with local name ``name``, like ``el.findall("{*}name")``.

    A plain loop over the children costs a third of ElementPath's ``find`` (~0.7 vs 2.2 µs),
    which adds up over every div, figure and header author.
    """
    return [c for c in el if LN[c.tag] == name]


def find_child(el, *names: str):
    """First element at the path of local names, like ``el.find("{*}a/{*}b")`` (same
    document-order search: a later ``a`` is tried when the first has no ``b``)."""
    name, rest = names[0], names[1:]
    for c in el:
        if LN[c.tag] == name:
            found = find_child(c, *rest) if rest else c
            if found is not None:
                return found
    return None


def text_of(el) -> str:
    """Normalised text content (controls were removed at parse time)."""
    if el is None:
        return ""
    if len(el):
        return " ".join("".join(el.itertext()).split())
    t = el.text
    if not t:
        return ""
    return t.strip(" ") if is_clean(t) else " ".join(t.split())


def year_of(value: str | None) -> int | None:
    if not value:
        return None
    m = _YEAR.search(value)
    return int(m.group(1)) if m else None


class ParagraphBuilder:
    """Accumulates one paragraph's text and spans while normalising whitespace.

    Offsets are taken in the *output* text, so ``text[start:end] == span text`` holds
    by construction; span texts are stripped of surrounding blanks.
    """

    __slots__ = ("parts", "n", "space", "cites", "refs", "eqs")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.n = 0
        self.space = True  # at start: drop leading blanks
        self.cites: list[list] = []
        self.refs: list[list] = []
        self.eqs: list[list] = []

    def _blank(self) -> None:
        if not self.space:
            self.parts.append(" ")
            self.n += 1
            self.space = True

    def text(self, s: str | None) -> None:
        if not s:
            return
        if is_clean(s):  # fast path: no split/join for text that is already normalised
            core = s.strip(" ")
            if not core:
                self._blank()
                return
            if s[0] == " ":
                self._blank()
            self.parts.append(core)
            self.n += len(core)
            self.space = False
            if s[-1] == " ":
                self._blank()
            return
        words = s.split()
        if not words:
            self._blank()
            return
        if s[0].isspace():
            self._blank()
        core = " ".join(words)
        self.parts.append(core)
        self.n += len(core)
        self.space = False
        if s[-1].isspace():
            self._blank()

    def span(self, s: str, bucket: list, ref_id: str | None) -> None:
        if not s:
            return
        core = s.strip(" ") if is_clean(s) else " ".join(s.split())
        if not core:
            self._blank()
            return
        if s[0].isspace():
            self._blank()
        start = self.n
        self.parts.append(core)
        self.n += len(core)
        self.space = False
        bucket.append([start, self.n, core, ref_id])
        if s[-1].isspace():
            self._blank()

    def finish(self) -> str:
        text = "".join(self.parts)
        return text[:-1] if text.endswith(" ") else text


def fresh_key(entries: dict, prefix: str) -> str:
    """The first ``<prefix><n>`` not in ``entries``, from ``n = len(entries)``: the key of an
    entry Grobid gave no usable number."""
    i = len(entries)
    while f"{prefix}{i}" in entries:
        i += 1
    return f"{prefix}{i}"
