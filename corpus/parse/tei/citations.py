"""Cite spans of a Grobid parse after the text walk: the style vote and the links Grobid left out.

SPEC.md §3 post-processing (s2orc-paper.txt §2.1) for :mod:`corpus.parse.tei`. Spans are the
walk's lists ``[start, end, text, ref_id]``, changed in place; Grobid's own links are
never changed, only spans it left unlinked are linked, and only on evidence:

* **printed numbers** (bracket papers): the map from ``[n]`` to a bib entry is anchored
  on Grobid's links, *per reference list*. A PDF with a supplement or a system card
  often has two numbered lists that Grobid merges into one ``listBibl``; their numbers
  restart, so a number means different entries in different parts of the paper. The
  lists are told apart by Grobid's links (printed numbers start again further down the
  bibliography), each part of the text takes the list of the links around it, and a
  part with links on one side only takes that list's map for the numbers no unexplained
  run of entries on its other side could hold. What no evidence supports stays unlinked;
* **ranges** ``[3]-[5]``, ``[3-5]``, Grobid's split ``[3-`` ``5]`` add one span per
  distinct entry (covering the range text); a chain such as ``[1-38-74]`` (Grobid's
  rendering of several callouts run together) or digits running across two refs has no
  single reading and adds nothing;
* **names** (author-year papers): ``Smith et al. (2019b)`` links when exactly one entry
  has that first author, the author count the citation implies (``A & B``: two, with
  that second author; ``A et al.``: three or more) and that year, with the year's
  letter suffix picking among same-label entries in bibliography order (natbib's a, b,
  ... order) or read from the entry itself (Grobid sometimes leaves ``2022a.`` in the title).

The span model has no field for a reason, so "unlinked" is the only trace of an
ambiguous citation.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["classify_citation_style", "link_citations", "postprocess_citations", "split_title_year"]

YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
_GAP = re.compile(r"[\s,;\-\u2013\u2014]*")
_NUM_TOKEN = re.compile(r"(\d{1,4})(?:\s*\]?\s*[-\u2013\u2014]\s*\[?\s*(\d{1,4}))?")
_DASH = r"\s*\]?\s*[-\u2013\u2014]\s*\[?\s*"
_CHAIN = re.compile(rf"\d{_DASH}\d+{_DASH}\d")  # a-b-c: no single reading
_HAS_LETTER = re.compile(r"[^\W\d_]")
_LABEL = re.compile(r"^\s*(?:\[(\d{1,4})\]|(\d{1,4})[.)]\s)")
_MAX_RANGE = 30
_MIN_UNEXPLAINED = 3  # this many entries no list explains could be another list

Grouped = list[tuple[dict, list[list], list[str]]]


# ---------------------------------------------------------------- groups and style


def _groups(text: str, spans: list) -> list[list]:
    """Runs of cite spans separated only by blanks, commas, semicolons or dashes."""
    groups: list[list] = []
    for s in spans:
        if groups and _GAP.fullmatch(text, groups[-1][-1][1], s[0]):
            groups[-1].append(s)
        else:
            groups.append([s])
    return groups


def _group_kind(text: str, group: list) -> str:
    start, end = group[0][0], group[-1][1]
    outer = text[max(0, start - 1) : end + 1]
    if "[" in outer or "]" in outer:
        return "BRACKET"
    inner = text[start:end]
    if YEAR.search(inner):
        return "NAME-YEAR"
    return "OTHER"


def classify_citation_style(paragraphs: Iterable) -> str:
    """BRACKET / NAME-YEAR / OTHER by counting citation groups over *all* paragraphs.

    A group (adjacent cite spans, so Grobid's split ``[3,`` ``4]`` counts once) is
    BRACKET when a bracket is inside it or right around it, NAME-YEAR when it holds
    a year, else OTHER. The paper's style is the more frequent of BRACKET and
    NAME-YEAR if it also makes at least a quarter of all groups; otherwise OTHER
    (superscript and parenthesised-number papers). Accepts dicts with ``text`` and
    ``cite_spans`` (lists ``[start, end, text, ref_id]`` or dicts) or Paragraph models.
    """
    counts = {"BRACKET": 0, "NAME-YEAR": 0, "OTHER": 0}
    for p in paragraphs:
        if isinstance(p, dict) and not p["cite_spans"]:
            continue  # most paragraphs cite nothing
        text, spans = _text_and_spans(p)
        for g in _groups(text, spans):
            counts[_group_kind(text, g)] += 1
    return _style_from_counts(counts)


def _style_from_counts(counts: dict[str, int]) -> str:
    total = sum(counts.values())
    b, ny = counts["BRACKET"], counts["NAME-YEAR"]
    if total == 0:
        return "OTHER"
    if b > ny and b * 4 >= total:
        return "BRACKET"
    if ny > b and ny * 4 >= total:
        return "NAME-YEAR"
    return "OTHER"


def _text_and_spans(p) -> tuple[str, list]:
    if isinstance(p, dict):
        text, spans = p["text"], p["cite_spans"]
    else:
        text, spans = p.text, p.cite_spans
    if spans and not isinstance(spans[0], list):
        spans = [
            [s["start"], s["end"], s["text"], s.get("ref_id")]
            if isinstance(s, dict)
            else [s.start, s.end, s.text, s.ref_id]
            for s in spans
        ]
    return text, spans


def _grouped(paragraphs: list[dict]) -> Grouped:
    """(paragraph, cite groups, group kinds) for the paragraphs that cite something.

    Computed once for both the style vote and the post-processing (linking by name in
    between changes no offsets, so the groups stay valid).
    """
    out = []
    for p in paragraphs:
        if p["cite_spans"]:
            text = p["text"]
            groups = _groups(text, p["cite_spans"])
            out.append((p, groups, [_group_kind(text, g) for g in groups]))
    return out


def _style_of(grouped: Grouped) -> str:
    counts = {"BRACKET": 0, "NAME-YEAR": 0, "OTHER": 0}
    for _, _, kinds in grouped:
        for kind in kinds:
            counts[kind] += 1
    return _style_from_counts(counts)


# ---------------------------------------------------------------- entry points


def link_citations(cited: list[dict], back: list[dict], entries: dict[str, dict], order: list[str]) -> str:
    """Link what Grobid left unlinked, in place, and return the citation style.

    ``cited`` is abstract + body (they vote on the style), ``back`` the back matter;
    ``order`` the bib keys in ``listBibl`` order. Names are linked first; bracket papers
    then get the false-positive drop, number links and range expansion.
    """
    _link_by_name(cited + back, entries)
    grouped = _grouped(cited)
    style = _style_of(grouped)
    if style == "BRACKET":
        grouped += _grouped(back)
        _postprocess_grouped(grouped, _number_maps(entries, order, grouped))
    return style


def postprocess_citations(paragraphs: list[dict], style: str, numbers: dict[int, str]) -> int:
    """S2ORC post-processing for bracket-style papers (s2orc-paper.txt §2.1), in place,
    with one number map for all ``paragraphs`` (:func:`link_citations` finds the maps).

    Only applies when ``style == "BRACKET"``: false positives dropped (a cite group with
    no bracket in or around it and no letter: superscript footnote marks, ``(1)``);
    unlinked numbers linked through ``numbers``; ranges expanded. Returns the number of
    spans dropped.
    """
    if style != "BRACKET":
        return 0
    grouped = _grouped(paragraphs)
    return _postprocess_grouped(grouped, [numbers] * sum(len(g) for _, g, _ in grouped))


def _postprocess_grouped(grouped: Grouped, maps: list[dict[int, str]]) -> int:
    """``maps``: one number map per cite group, in document order."""
    dropped = 0
    gi = 0
    for p, groups, kinds in grouped:
        text = p["text"]
        keep: list[list] = []
        for g, kind in zip(groups, kinds, strict=True):
            numbers = maps[gi]
            gi += 1
            if kind == "OTHER" and not _HAS_LETTER.search(text[g[0][0] : g[-1][1]]):
                dropped += len(g)
                continue
            keep.extend(g)
            if kind == "BRACKET":
                keep.extend(_expand_group(text, g, numbers))
        keep.sort(key=lambda s: (s[0], s[1]))
        p["cite_spans"] = keep
    return dropped


def _expand_group(text: str, group: list, numbers: dict[int, str]) -> list[list]:
    """Link the group's unlinked numbers and add a span per further entry it names.

    A group whose numbers cannot be read one way (a chain ``a-b-c``) is left as Grobid
    made it; a range whose ends Grobid linked elsewhere than the map says is not expanded.
    """
    # The group's text with "|" between refs that touch, so no number runs from one ref
    # into the next ("[1-3" + "8-74]" is not 38); owner[i]: the span of scan[i], -1 between.
    if len(group) == 1:  # the usual case
        scan = group[0][2]
        owner = None
    else:
        parts: list[str] = []
        owner = []
        for i, s in enumerate(group):
            if i:
                gap = text[group[i - 1][1] : s[0]] or "|"
                parts.append(gap)
                owner.extend([-1] * len(gap))
            parts.append(s[2])
            owner.extend([i] * len(s[2]))
        scan = "".join(parts)
    if _CHAIN.search(scan):
        return []
    linked = {s[3] for s in group if s[3]}
    added: list[list] = []
    singles: dict[int, list[int]] = {}  # span index -> numbers written inside it
    ranges: list[tuple[int, int, int, int]] = []
    for m in _NUM_TOKEN.finditer(scan):
        ia = owner[m.start(1)] if owner else 0
        singles.setdefault(ia, []).append(int(m.group(1)))
        if m.group(2):
            ib = owner[m.start(2)] if owner else 0
            singles.setdefault(ib, []).append(int(m.group(2)))
            ranges.append((int(m.group(1)), int(m.group(2)), ia, ib))
    if not numbers:
        return []
    for a, b, ia, ib in ranges:
        if not a < b <= a + _MAX_RANGE or _disagrees(group, singles, ia, a, numbers):
            continue
        if _disagrees(group, singles, ib, b, numbers):
            continue
        s0, s1 = group[ia][0], group[ib][1]
        for n in range(a + 1, b):
            rid = numbers.get(n)
            if rid and rid not in linked:
                linked.add(rid)
                added.append([s0, s1, text[s0:s1], rid])
    for i, nums in singles.items():
        span = group[i]
        for k, n in enumerate(nums):
            rid = numbers.get(n)
            if not rid:
                continue
            if k == 0 and span[3] is None:
                span[3] = rid
                linked.add(rid)
            elif rid not in linked:
                linked.add(rid)
                added.append([span[0], span[1], span[2], rid])
    return added


def _disagrees(group: list, singles: dict[int, list[int]], i: int, n: int, numbers: dict[int, str]) -> bool:
    """Grobid linked span ``i`` (whose first number is ``n``) elsewhere than the map says."""
    rid = group[i][3]
    mapped = numbers.get(n)
    return bool(rid and mapped and singles[i][0] == n and mapped != rid)


# ---------------------------------------------------------------- printed numbers


@dataclass
class _NumList:
    """One numbered reference list inside the merged ``listBibl``."""

    numbers: dict[int, str]  # printed number -> BIBREF key
    lo: int  # first and last position (in listBibl order) the list may claim
    hi: int
    max_n: int  # highest number with evidence
    before: int = 0  # entries right before it that no list explains (another list?)
    after: int = 0  # entries right after its last evidence that no list explains


def _number_maps(entries: dict[str, dict], order: list[str], grouped: Grouped) -> list[dict[int, str]]:
    """One printed-number map per cite group (document order).

    Evidence is each span Grobid linked whose text holds one number. Labels at the start
    of the raw references (``[12]``, ``12.``) give exact maps when Grobid's links agree
    with them; otherwise each list's offsets are read off the links (:func:`_offset_map`).
    A group takes the list of the nearest links before and after it when both point
    into the same list; with links on one side only, it takes that list's numbers except
    those an unexplained run of entries on the far side could hold; between two lists
    (or with no list at all) it gets nothing. With no links and no labels at all the
    n-th entry is number n.
    """
    pos = {key: i for i, key in enumerate(order) if key in entries}
    groups = [g for _, gs, _ in grouped for g in gs]
    evidence: list[tuple[int, int, int]] = []  # (group index, number, position)
    for gi, g in enumerate(groups):
        for s in g:
            if s[3] is None or s[3] not in pos:
                continue
            nums = _NUM_TOKEN.findall(s[2])
            if len(nums) == 1 and not nums[0][1]:
                evidence.append((gi, int(nums[0][0]), pos[s[3]]))
    lists = _label_lists(entries, order, evidence) or _evidence_lists(entries, order, evidence)
    if not lists:
        return [{i + 1: key for i, key in enumerate(order) if key in entries}] * len(groups)
    only = lists[0]
    if len(lists) == 1 and not only.before and not only.after:
        return [only.numbers] * len(groups)

    of_group: list[int | None] = [None] * len(groups)
    for gi, _, p in evidence:
        if of_group[gi] is None:
            if len(lists) == 1:
                of_group[gi] = 0
            else:
                of_group[gi] = next((k for k, lst in enumerate(lists) if lst.lo <= p <= lst.hi), None)
    prev: list[int | None] = []
    last = None
    for k in of_group:
        last = k if k is not None else last
        prev.append(last)
    nxt: list[int | None] = [None] * len(groups)
    last = None
    for gi in range(len(groups) - 1, -1, -1):
        last = of_group[gi] if of_group[gi] is not None else last
        nxt[gi] = last
    cache: dict[tuple[int, str], dict[int, str]] = {}

    def restricted(k: int, side: str) -> dict[int, str]:
        if (k, side) not in cache:
            lst = lists[k]
            if side == "leading":
                cache[k, side] = {n: r for n, r in lst.numbers.items() if n > lst.before}
            else:
                cache[k, side] = {n: r for n, r in lst.numbers.items() if n > lst.after or n > lst.max_n}
        return cache[k, side]

    maps: list[dict[int, str]] = []
    for gi in range(len(groups)):
        a, b = prev[gi], nxt[gi]
        if of_group[gi] is not None or (a is not None and a == b):
            maps.append(lists[a if of_group[gi] is None else of_group[gi]].numbers)  # type: ignore[index]
        elif a is None and b is not None:
            maps.append(restricted(b, "leading"))
        elif b is None and a is not None:
            maps.append(restricted(a, "trailing"))
        else:
            maps.append({})
    return maps


def _label_lists(entries: dict[str, dict], order: list[str], evidence: list) -> list[_NumList] | None:
    """Lists from labels written in the raw references, split where the labels start again;
    None unless at least half the entries are labelled and Grobid's links agree."""
    labelled: list[tuple[int, int]] = []
    for i, key in enumerate(order):
        e = entries.get(key)
        if e and e["raw_text"]:
            m = _LABEL.match(e["raw_text"])
            if m:
                labelled.append((i, int(m.group(1) or m.group(2))))
    if not labelled or len(labelled) * 2 < len(entries):
        return None
    lists: list[_NumList] = []
    for i, n in labelled:
        if not lists or n < lists[-1].max_n:
            lists.append(_NumList({}, i, i, n))
        lst = lists[-1]
        lst.numbers.setdefault(n, order[i])
        lst.hi, lst.max_n = i, max(lst.max_n, n)
    agree = sum(1 for _, n, p in evidence if any(lst.numbers.get(n) == order[p] for lst in lists))
    return lists if agree * 2 >= len(evidence) else None


def _evidence_lists(entries: dict[str, dict], order: list[str], evidence: list) -> list[_NumList]:
    """Lists read off Grobid's links: along the bibliography, printed numbers grow within
    a list and start again in the next one. A link that breaks the pattern alone (the
    next one does not share its offset) is taken as a Grobid error, not a new list."""
    counts: dict[tuple[int, int], int] = {}
    for _, n, p in evidence:
        counts[p, n] = counts.get((p, n), 0) + 1
    pairs = sorted(counts)
    runs: list[list[tuple[int, int]]] = []
    for i, (p, n) in enumerate(pairs):
        if runs and n >= runs[-1][-1][1]:
            runs[-1].append((p, n))
            continue
        if runs:
            nxt = pairs[i + 1] if i + 1 < len(pairs) else None
            if nxt is None or nxt[1] < n or abs((nxt[0] - nxt[1]) - (p - n)) > 2:
                continue
        runs.append([(p, n)])
    lists: list[_NumList] = []
    for k, run in enumerate(runs):
        lo = runs[k - 1][-1][0] + 1 if k else 0
        hi = runs[k + 1][0][0] - 1 if k + 1 < len(runs) else len(order) - 1
        numbers = _offset_map(run, counts, order, entries, lo, hi)
        first = run[0][0] - run[0][1] + 1  # where number 1 would be
        after = hi - max(p for p, _ in run)
        lists.append(
            _NumList(
                numbers,
                lo,
                hi,
                max(n for _, n in run),
                before=max(0, first - lo) if first - lo >= _MIN_UNEXPLAINED else 0,
                after=after if after >= _MIN_UNEXPLAINED else 0,
            )
        )
    return lists


def _offset_map(
    run: list[tuple[int, int]],
    counts: dict[tuple[int, int], int],
    order: list[str],
    entries: dict[str, dict],
    lo: int,
    hi: int,
) -> dict[int, str]:
    """Printed number -> key inside one list (positions ``lo..hi``) from its links.

    The offset between printed number and position is read off the links (``[19]`` ->
    ``b16`` means offset -3 there) and used for an unlinked number only when the nearest
    links on both sides share it, so a list where Grobid lost entries is never
    mis-linked; beyond the first or last link only when the list has a single offset.
    """
    offsets_of: dict[int, dict[int, int]] = {}
    for p, n in run:
        o = offsets_of.setdefault(n, {})
        o[p - n] = o.get(p - n, 0) + counts[p, n]
    nums = sorted(offsets_of)
    best = {n: max(o, key=o.get) for n, o in offsets_of.items()}
    offsets = set(best.values())
    out: dict[int, str] = {}
    k = 0
    for n in range(1, hi - min(offsets) + 1):
        while k < len(nums) and nums[k] < n:
            k += 1
        if k < len(nums) and nums[k] == n:
            off = best[n]
        else:
            below = best[nums[k - 1]] if k > 0 else None
            above = best[nums[k]] if k < len(nums) else None
            if below is not None and above is not None:
                off = below if below == above else None
            else:
                off = (below if below is not None else above) if len(offsets) == 1 else None
        if off is None:
            continue
        i = n + off
        if lo <= i <= hi and order[i] in entries:
            out[n] = order[i]
    return out


# ---------------------------------------------------------------- names

_NAME_WORD = re.compile(r"[^\W\d_][^\W\d_'\-]+(?:[-'][^\W\d_]+)*")
_YEAR_SUFFIX = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)([a-z])?(?![\da-z])")
_SUFFIXED = re.compile(r"\d[a-z]\b")
_ET_AL = re.compile(r"\bet\.?\s*al\b", re.IGNORECASE)
_AND = re.compile(r"\s(?:&|and)\s", re.IGNORECASE)
_NAME_LIST = re.compile(r"\W*[^\W\d_][\w'\-]*(?:\s*,\s*[^\W\d_][\w'\-]*(?:\s+[^\W\d_][\w'\-]*)?)+\s*,?\s*")
_TITLE_YEAR = re.compile(r"((?:1[5-9]|20)\d\d)([a-z])[.,]\s+(?=\S)")


def split_title_year(title: str) -> tuple[str, int | None, str]:
    """(title, year, suffix) from a title Grobid started with the label year, ``2022a. Title``."""
    m = _TITLE_YEAR.match(title)
    if not m:
        return title, None, ""
    return title[m.end() :], int(m.group(1)), m.group(2)


@dataclass
class _Cited:
    """What an author-year citation says: first surname, author count, year, suffix."""

    surname: str  # lower case, as written
    many: bool  # "et al."
    second: str  # second surname for "A & B" / "A and B" (lower case), else ""
    year: int | None
    suffix: str


class _Entry:
    """A bib entry as author-year citations name it; the label letter is read on demand."""

    __slots__ = ("key", "last", "n_authors", "second", "year", "_entry", "_suffix")

    def __init__(self, key: str, e: dict) -> None:
        authors = e["authors"]
        self.key = key
        self.last = authors[0]["last"].lower()
        self.n_authors = len(authors)
        self.second = _fold(authors[1]["last"]) if len(authors) > 1 else ""
        self.year = e["year"]
        self._entry = e
        self._suffix: str | None = None
        if e["title"][:1].isdigit() or self.year is None:
            self.year, self._suffix = _entry_year(e)

    @property
    def suffix(self) -> str:
        if self._suffix is None:
            self._suffix = _entry_year(self._entry)[1]
        return self._suffix


class _NameIndex:
    """First word of the first author's surname (lower case) -> entries in bibliography
    order; an entry's :class:`_Entry` is made the first time a citation names it."""

    def __init__(self, entries: dict[str, dict]) -> None:
        self.entries = entries
        self.keys: dict[str, list[str]] = {}
        self.made: dict[str, _Entry] = {}
        for key, e in entries.items():
            authors = e["authors"]
            if authors:
                last = authors[0]["last"]
                if last:
                    self.keys.setdefault(last.split()[0].lower(), []).append(key)

    def get(self, word: str) -> list[_Entry] | None:
        keys = self.keys.get(word)
        if not keys:
            return None
        made = self.made
        for k in keys:
            if k not in made:
                made[k] = _Entry(k, self.entries[k])
        return [made[k] for k in keys]


def _entry_year(e: dict) -> tuple[int | None, str]:
    """The entry's year and label letter: ``2022a`` in the raw reference, a title Grobid
    began with it, or (for an entry without a year) anywhere in its raw text, title or venue."""
    year = e["year"]
    if e["title"][:1].isdigit():
        _, t_year, suffix = split_title_year(e["title"])
        if t_year and (year is None or year == t_year):
            return t_year, suffix
    for text in (e["raw_text"], e["venue"]) if year is None else (e["raw_text"],):
        if not text:
            continue
        for m in _YEAR_SUFFIX.finditer(text):
            if m.group(2) and (year is None or int(m.group(1)) == year):
                return int(m.group(1)), m.group(2)
    return year, ""


def _fold(name: str) -> str:
    """Lower case without accents, for comparing a surname as printed with Grobid's."""
    name = name.lower()
    if not name.isascii():
        name = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return name


def _cited(text: str, index: _NameIndex) -> tuple[_Cited, list[_Entry]] | None:
    """The citation written in a span, and the entries whose first author it names."""
    low = text.lower()
    for m in _NAME_WORD.finditer(text):
        cands = index.get(m.group().lower())
        if not cands:
            continue
        found = [c for c in cands if low.startswith(c.last, m.start())]
        if not found:
            continue
        ym = _YEAR_SUFFIX.search(text, m.end())
        head = text[m.start() : ym.start() if ym else len(text)]
        second = ""
        many = bool(_ET_AL.search(head))
        and_m = _AND.search(head)
        if and_m and not many:
            if _NAME_LIST.fullmatch(head, 0, and_m.start()):
                many = True  # "A, B, and C": three or more
            else:
                nm = _NAME_WORD.search(head, and_m.end())
                second = _fold(nm.group()) if nm else ""
        cited = _Cited(
            surname=m.group().lower(),
            many=many,
            second=second,
            year=int(ym.group(1)) if ym else None,
            suffix=(ym.group(2) or "") if ym else "",
        )
        return cited, found
    return None


def _fits(c: _Cited, e: _Entry) -> int:
    """How well the entry's author list matches the one the citation prints: 2 as
    expected, 1 with fewer authors (Grobid drops authors), 0 with more (another paper:
    "A & B" is never the three-author paper)."""
    if c.many:
        return 2 if e.n_authors >= 3 else 1
    if c.second:
        if e.n_authors > 2:
            return 0
        return 2 if e.n_authors == 2 else 1
    return 2 if e.n_authors == 1 else 1  # a single name: Grobid may have merged others in


def _pick(c: _Cited, cands: list[_Entry], grobid: dict[tuple, set[str]]) -> str | None:
    """The one entry the citation names, or None when none or several could be meant."""
    cands = [e for e in cands if _fits(c, e)]
    pool = cands if c.year is None else [e for e in cands if e.year == c.year]
    pool = [e for e in pool if _fits(c, e) == 2] or pool  # the expected author count first
    if c.second and len(pool) > 1:  # then the second author's name, as far as it is spelled alike
        pool = [e for e in pool if e.second[:3] == c.second[:3]] or pool
    if not c.suffix:
        return pool[0].key if len(pool) == 1 else None
    named = grobid.get((c.surname, c.many, c.second, c.year, c.suffix))
    if named and len(named) == 1:
        return next(iter(named))
    taken: set[str] = set()  # entries Grobid linked with another suffix of this label
    for (sur, many, second, year, suffix), keys in grobid.items():
        if (sur, many, second, year) == (c.surname, c.many, c.second, c.year) and suffix != c.suffix:
            taken |= keys
    explicit = [e for e in pool if e.suffix == c.suffix and e.key not in taken]
    if explicit:
        return explicit[0].key if len(explicit) == 1 else None
    if any(e.year is None for e in cands):
        return None  # an entry without a year could be this one
    k = ord(c.suffix) - ord("a")  # natbib gives a, b, ... in bibliography order
    if 0 <= k < len(pool):
        e = pool[k]
        if (not e.suffix or e.suffix == c.suffix) and e.key not in taken:
            return e.key
    return None


def _link_by_name(paragraphs: list[dict], entries: dict[str, dict]) -> int:
    """Link cite spans Grobid left unlinked by first-author surname, author count, year
    and year suffix (:func:`_pick`); returns the number of spans linked."""
    todo = [s for p in paragraphs for s in p["cite_spans"] if s[3] is None and _HAS_LETTER.search(s[2])]
    if not todo:  # Grobid linked every named citation: no surname index needed
        return 0
    index = _NameIndex(entries)
    if not index.keys:
        return 0
    grobid: dict[tuple, set[str]] | None = None  # what Grobid linked each suffixed citation to
    linked = 0
    for s in todo:
        found = _cited(s[2], index)
        if found is None:
            continue
        if found[0].suffix and grobid is None:
            grobid = _grobid_suffixes(paragraphs, index)
        key = _pick(found[0], found[1], grobid or {})
        if key is not None:
            s[3] = key
            linked += 1
    return linked


def _grobid_suffixes(paragraphs: list[dict], index: _NameIndex) -> dict[tuple, set[str]]:
    """(surname, et al., second surname, year, letter) -> the entries Grobid linked
    citations written so to, from its own links of suffixed author-year citations."""
    out: dict[tuple, set[str]] = {}
    for p in paragraphs:
        for s in p["cite_spans"]:
            if s[3] is not None and _SUFFIXED.search(s[2]):
                found = _cited(s[2], index)
                if found and found[0].suffix:
                    c = found[0]
                    out.setdefault((c.surname, c.many, c.second, c.year, c.suffix), set()).add(s[3])
    return out
