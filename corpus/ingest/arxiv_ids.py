"""arXiv identifiers: parse, validate and normalise every form arXiv has used.

Forms (https://info.arxiv.org/help/arxiv_identifier.html):

* old style (1991 -- March 2007): ``archive[.SC]/YYMMNNN`` -- ``hep-th/9901001``,
  ``math.GT/0309136`` (the subject class is not part of the id: the canonical
  id is ``math/0309136``);
* new style: ``YYMM.NNNN`` from 0704 to 1412, ``YYMM.NNNNN`` from 1501 on;
* either with a version suffix ``vN`` and optional ``arXiv:`` prefix.

The canonical id has no version and no prefix; the file-name form replaces
``/`` with ``_`` (landing zone and blob names). Digits are ASCII only: ``\\d``
would also match Arabic-Indic or fullwidth digits, which no arXiv id has.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from typing import NamedTuple

# Archives that issued old-style identifiers (arXiv's list, including retired ones).
OLD_ARCHIVES = frozenset(
    """acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg
    comp-gas cond-mat cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph
    mtrl-th nlin nucl-ex nucl-th patt-sol physics plasm-ph q-alg q-bio q-fin quant-ph
    solv-int stat supr-con""".split()
)

_ARCHIVE_ALT = "|".join(sorted((re.escape(a) for a in OLD_ARCHIVES), key=len, reverse=True))
_NEW_RE = re.compile(r"(?P<yymm>[0-9]{4})\.(?P<num>[0-9]{4,5})(?:v(?P<v>[0-9]+))?")
_OLD_RE = re.compile(
    rf"(?P<archive>{_ARCHIVE_ALT})(?:\.(?P<sc>[A-Za-z]{{2}}))?/(?P<yymm>[0-9]{{4}})(?P<num>[0-9]{{3}})(?:v(?P<v>[0-9]+))?"
)
_PREFIX_RE = re.compile(r"^\s*(?:arxiv\s*:\s*|oai:arxiv\.org:)?", re.IGNORECASE)


class ArxivId(NamedTuple):
    id: str  # canonical, without version
    version: int | None
    old_style: bool

    @property
    def file_name(self) -> str:
        return to_file_name(self.id)

    @property
    def year(self) -> int:
        yy = int((self.id.split("/")[1] if self.old_style else self.id)[:2])
        return 1900 + yy if yy >= 91 else 2000 + yy


class InvalidArxivId(ValueError):
    pass


_MONTH_CACHE: list = [0.0, (0, 0)]  # [monotonic time read, (yy, mm)]: the clock is read once a minute


def _this_month() -> tuple[int, int]:
    now = time.monotonic()
    if now - _MONTH_CACHE[0] > 60 or _MONTH_CACHE[1] == (0, 0):
        today = dt.datetime.now(dt.UTC).date()
        _MONTH_CACHE[:] = [now, (today.year % 100, today.month)]
    return _MONTH_CACHE[1]


def _valid_new(yymm: str, num: str) -> bool:
    """0704 .. this month; 4 digits to 1412, 5 from 1501; paper number from 1.
    Ids dated after the current month cannot exist yet (numbers in tables often look like ids)."""
    yy, mm = int(yymm[:2]), int(yymm[2:])
    if not 1 <= mm <= 12 or (yy, mm) < (7, 4) or (yy, mm) > _this_month():
        return False
    return len(num) == (5 if yy >= 15 else 4) and int(num) > 0


def _valid_old(yymm: str, num: str) -> bool:
    """Old-style ids ran from August 1991 to March 2007; paper number from 1."""
    yy, mm = int(yymm[:2]), int(yymm[2:])
    if not 1 <= mm <= 12 or int(num) == 0:
        return False
    return (yy, mm) >= (91, 8) if yy >= 91 else (yy, mm) <= (7, 3)


def parse(raw: str) -> ArxivId:
    """Parse any id form; raise :class:`InvalidArxivId` naming the input if it is not one."""
    s = _PREFIX_RE.sub("", raw.strip(), count=1).strip()
    m = _NEW_RE.fullmatch(s)
    if m and _valid_new(m["yymm"], m["num"]) and m["v"] != "0":
        return ArxivId(f"{m['yymm']}.{m['num']}", int(m["v"]) if m["v"] else None, False)
    if "_" in s and "/" not in s:  # file-name form of an old id
        s = s.replace("_", "/", 1)
    m = _OLD_RE.fullmatch(s)
    if m and _valid_old(m["yymm"], m["num"]) and m["v"] != "0":
        return ArxivId(f"{m['archive']}/{m['yymm']}{m['num']}", int(m["v"]) if m["v"] else None, True)
    raise InvalidArxivId(f"not an arXiv identifier: {raw!r}")


def normalize(raw: str) -> str:
    """Canonical id (no prefix, no version, no subject class)."""
    return parse(raw).id


def try_normalize(raw: str | None) -> str | None:
    """Like :func:`normalize` but ``None`` for anything that is not an id."""
    if not raw:
        return None
    try:
        return parse(raw).id
    except InvalidArxivId:
        return None


def is_valid(raw: str) -> bool:
    return try_normalize(raw) is not None


def strip_version(raw: str) -> str:
    return normalize(raw)


def to_file_name(arxiv_id: str) -> str:
    """``hep-th/9901001`` -> ``hep-th_9901001`` (safe as a file name)."""
    return normalize(arxiv_id).replace("/", "_")


def from_file_name(name: str) -> str:
    """Inverse of :func:`to_file_name`; accepts names with extensions (``0704.0001.pdf``)."""
    stem = name.rsplit("/", 1)[-1]
    for ext in (".tei.xml", ".tar.gz", ".pdf", ".gz", ".xml", ".tar", ".abs"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return normalize(stem)


# ---------------------------------------------------------------------------
# arXiv ids in running text (co-citation edges, SPEC.md §5)
# ---------------------------------------------------------------------------

# Candidates are found by their digits (fast: a digit-led pattern), then the text
# just before them is read for a prefix or an old-style archive name.  Prefixes:
# ``arXiv:``, ``arXiv ``, ``arXiv.`` (the 10.48550/arXiv.* DOI), ``arxiv.org/abs/``,
# ``arxiv.org/pdf/``, DBLP's ``abs/`` (``CoRR abs/1503.05543``) and ``pdf/``.
# Old-style ids may carry a subject class (``math.GT/0309136``,
# ``cond-mat.stat-mech/0501001``), which is dropped from the canonical id.
_TEXT_ID_RE = re.compile(
    r"(?<![0-9])(?<![0-9]\.)(?:(?P<new>(?P<yymm>[0-9]{4})\.(?P<num>[0-9]{4,5}))|/(?P<oyymm>[0-9]{4})(?P<onum>[0-9]{3}))"
    r"(?:v(?P<v>[0-9]+))?(?![\w]|\.[0-9])",
    re.IGNORECASE,
)
_PREFIX_BEFORE = re.compile(
    r"(?:arxiv(?:\.org)?\s*[:.]?\s*(?:/?(?:abs|pdf)/)?|(?<![\w.])(?:abs|pdf)/)$", re.IGNORECASE
)
_ARCHIVE_BEFORE = re.compile(
    rf"(?<![\w.-])(?P<arch>{_ARCHIVE_ALT})(?:\.[A-Za-z][A-Za-z-]{{1,15}})?$", re.IGNORECASE
)
# A bare number right after one of these words is a table/figure/page number, not an id.
_NUMBER_WORDS = re.compile(
    r"(?:^|[^\w])(?:table|tables|tab|fig|figs|figure|figures|eq|eqs|equation|equations|sec|section|"
    r"sections|chapter|page|pages|p|pp|vol|volume|no|nos|line|lines|row|rows|col|column|item|step)"
    r"\.?\s*$",
    re.IGNORECASE,
)
_NUMBER_BEFORE = re.compile(r"(?:[0-9][0-9.,]*|[&|])\s*$")  # another number / a table cell before
_NUMBER_AFTER = re.compile(r"^\s*(?:[&|]|[-+]?[0-9])")  # another number / a table cell after
_BAD_BEFORE = frozenset("./-+=_,:#@%$")


def find_arxiv_ids(text: str) -> list[tuple[str, int, int]]:
    """Every valid arXiv id in ``text`` as ``(canonical id, start, end)``, in order.

    ``text[start:end]`` is the whole mention, prefix and version included
    (``arXiv:1806.01261v2``, ``arxiv.org/abs/hep-th/9901001v3``).  Accepted:
    new ids (:func:`_valid_new`: 4-digit numbers 0704-1412, 5-digit from 1501,
    no month after the current one), old ids (Aug 1991 - Mar 2007) of the arXiv
    archives, versions from 1, ``arXiv:`` / URL / ``abs/`` prefixes.  Rejected:
    digits glued to other characters (so nothing inside a DOI such as
    ``10.1145/1105.321114`` or a longer number), and *bare* new-style numbers
    that read as numbers: after "Table", "Fig.", "p.", ... or next to other
    numbers / table cells (``1203.4567 & 0.25``).  Prefixed mentions are always
    accepted when valid.
    """
    found: list[tuple[str, int, int]] = []
    for m in _TEXT_ID_RE.finditer(text):
        start, end = m.span()
        if m["v"] == "0":
            continue
        head = text[max(0, start - 48) : start]
        if m["new"]:
            if not _valid_new(m["yymm"], m["num"]):
                continue
            canonical = m["new"]
        else:
            arch = _ARCHIVE_BEFORE.search(head)
            if arch is None or not _valid_old(m["oyymm"], m["onum"]):
                continue
            canonical = f"{arch['arch'].lower()}/{m['oyymm']}{m['onum']}"
            start -= len(arch.group(0))
            head = head[: len(head) - len(arch.group(0))]
        pre = _PREFIX_BEFORE.search(head)
        if pre:
            start -= len(pre.group(0))
        else:
            before = head[-1:] or " "
            if before.isalnum() or before in _BAD_BEFORE:
                continue
            if m["new"] and (
                _NUMBER_WORDS.search(head)
                or _NUMBER_BEFORE.search(head)
                or _NUMBER_AFTER.match(text[end : end + 20])
            ):
                continue
        found.append((canonical, start, end))
    return found


def arxiv_ids_in(text: str) -> list[str]:
    """Distinct canonical ids mentioned in ``text`` (:func:`find_arxiv_ids`), in order of first mention."""
    return list(dict.fromkeys(aid for aid, _, _ in find_arxiv_ids(text)))
