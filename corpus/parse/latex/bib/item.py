"""One bibliography item as the parser reads it: its cite key, the label it prints, natbib's
short author list and year, and the :class:`~corpus.parse.document.BibEntry`; and the
identifiers (DOI, arXiv id) found in a reference's text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.ingest.arxiv_ids import try_normalize
from corpus.parse.document import BibEntry
from corpus.parse.latex.braces import read_group

_DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s{}\"<>,]+)")
_ARXIV_RES = (
    re.compile(
        r"arxiv(?:\.org/(?:abs|pdf)/|\s*:\s*|\s+preprint\s+(?:arxiv:)?\s*)([A-Za-z\-.]+/\d{7}|\d{4}\.\d{4,5})",
        re.I,
    ),
    re.compile(r"\babs/(\d{4}\.\d{4,5})"),
    re.compile(r"\\eprint\s*\{([^{}]+)\}"),
)
_YEAR_RE = re.compile(r"(?<![\d/.])(1[89]\d\d|20\d\d)(?![\d/])")
# a year, not a page ("1945–1954", "38(5):2023"), an arXiv id ("1908.02289") or a date ("2022-09-11")
_YEAR_CANDIDATE = re.compile(
    r"(?<![\d/.:\-\u2013\u2014])(1[89]\d\d|20\d\d)(?![\d/]|\.\d|\s*[\-\u2013\u2014]+\s*\d)"
)
_CLOSES_YEAR = re.compile(r"[a-z]?\)")


_ACCESSED = re.compile(r"\b(?:accessed|retrieved|visited|viewed|access date)\b[^()]{0,30}$", re.I)


def year_in(text: str) -> int | None:
    """The year a reference prints: the first one in parentheses ("(2012)", "(1979a)", "(Oct.
    2020)"), else the first one that is no page, id or date; never the day a link was read
    ("accessed 2 January 2024")."""
    first = None
    for m in _YEAR_CANDIDATE.finditer(text):
        if _ACCESSED.search(text, max(0, m.start() - 45), m.start()):
            continue
        if _CLOSES_YEAR.match(text, m.end()):
            return int(m.group(1))
        first = first or m
    return int(first.group(1)) if first else None


@dataclass
class _Item:
    key: str
    label: str | None  # the bibitem's optional label, as text
    entry: BibEntry
    short: str = ""  # natbib short author list
    year_label: str = ""  # natbib year (may carry a letter: 2019a)
    alpha: bool = False  # ``label`` is an alphabetic label ("Knu84"), printed in BRACKET papers
    long_label: str = ""  # natbib's full author list ("Smith, Jones, and Lee"), when the label has one

    @property
    def long(self) -> str:
        """natbib's full author list: the label's, else the entry's surnames as natbib joins them."""
        if self.long_label:
            return self.long_label
        lasts = [a.last for a in self.entry.authors if a.last]
        if len(lasts) <= 2:
            return " and ".join(lasts)
        return ", ".join(lasts[:-1]) + ", and " + lasts[-1]


def _ids(latex: str, text: str) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    m = _DOI_RE.search(latex) or _DOI_RE.search(text)
    if m:
        ids["DOI"] = [m.group(1).rstrip(".")]
    for rx in _ARXIV_RES:
        for m in rx.finditer(latex):
            aid = try_normalize(m.group(1).rstrip("."))
            if aid:
                ids["arXiv"] = [aid]
                return ids
    return ids


_TRAILING_YEAR = re.compile(r"\s*,\s*(?:1[89]|20)\d\d[a-z]?\s*$")
_TRAILING_ARXIV = re.compile(
    r"[\s,.]*\b(?:arxiv\s+(?:preprint|e-prints?)\s*,?\s*)?arxiv\s*:?\s*[\w./\-]+\s*(?:\[[\w.\-]+\])?\s*$|(?<=[a-z])ArXiv:\S+$",
    re.I,
)
_VOLUME_RE = re.compile(r"\b[Vv]ol(?:ume)?\.?\s*(\d+)")


def clean_title(title: str) -> str:
    """A title as printed: no braces (a .bib's escaped ``\\{ATLAS\\}`` protects case, it prints
    no brace), no year or arXiv id after it (natbib's @misc prints "Title, 2023."), no closing period."""
    if "{" in title or "}" in title:
        title = title.replace("{", "").replace("}", "")
    if "rxiv" in title.lower():  # "..., arXiv:2010.00836", "... for europeArXiv:2205.11901"
        title = _TRAILING_ARXIV.sub("", title)
    return _TRAILING_YEAR.sub("", title).strip(" .,")


def volume_of(text: str) -> str:
    """The volume a reference names ("Vol. 485"), or ""."""
    m = _VOLUME_RE.search(text)
    return m.group(1) if m else ""


def read_groups(s: str, i: int, n: int) -> tuple[list[str], int]:
    """Up to ``n`` ``{...}`` groups in a row from ``s[i]`` (fewer where one is missing) and where
    they end; raises :class:`~corpus.parse.latex.braces.LatexError` on an unclosed group."""
    args: list[str] = []
    while len(args) < n:
        group, j = read_group(s, i)
        if group is None:
            break
        args.append(group)
        i = j
    return args, i
