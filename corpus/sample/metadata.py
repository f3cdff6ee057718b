"""Synthetic arXiv records in datestamp order (:func:`iter_sample_records`): new submissions with
ids consistent with their creation month, revisions of papers seen earlier and of older papers,
English-like titles and abstracts, authors with particles, suffixes, affiliations and
collaborations; everything derived from the seed, memory bounded (see
:mod:`corpus.sample.landing_zone`)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass

from corpus.ingest.records import ArxivRecord, AuthorName, Version
from corpus.sample import vocabulary as vocab

NEW_STYLE_START = dt.date(2007, 4, 1)
FIVE_DIGIT_START = dt.date(2015, 1, 1)


# ---------------------------------------------------------------- text synthesis


class _Rng(random.Random):
    """``random.Random`` with a cheaper ``choice`` (one float instead of getrandbits loops)."""

    def choice(self, seq):  # type: ignore[override]
        return seq[int(self.random() * len(seq))]


_IRREGULAR = {
    "spectrum": "spectra",
    "matrix": "matrices",
    "analysis": "analyses",
    "criterion": "criteria",
    "phenomenon": "phenomena",
    "series": "series",
}


def _plural(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _title(rng: random.Random, nouns: list[str]) -> str:
    a, n = rng.choice, nouns

    def p(words: list[str]) -> str:
        return _plural(a(words))

    forms = (
        lambda: f"{a(vocab.ADJ)} {a(n)} {a(vocab.CONNECT)} {a(vocab.ADJ)} {p(n)}",
        lambda: f"On the {a(n)} of {a(vocab.ADJ)} {p(n)}",
        lambda: f"{a(vocab.ADJ)} {p(n)} for {a(n)} {a(n)}: {a(vocab.ADJ)} {p(n)} and {p(n)}",
        lambda: f"Towards {a(vocab.ADJ)} {a(n)} {a(vocab.CONNECT)} {a(vocab.ADJ)} {p(n)}",
        lambda: f"{_a(a(vocab.ADJ))} {a(n)} for {a(vocab.ADJ)} {a(n)} {a(n)}",
        lambda: f"{a(n)} {a(n)} and {a(vocab.ADJ)} {a(n)} {a(vocab.CONNECT)} {a(vocab.ADJ)} {p(n)}",
    )
    text = rng.choice(forms)()
    return text[0].upper() + text[1:]


def _sentence(rng: random.Random, nouns: list[str]) -> str:
    a, n = rng.choice, nouns

    def p(words: list[str]) -> str:
        return _plural(a(words))

    r = rng.random()
    if r < 0.25:
        s = f"{a(vocab.OPENERS)} {a(vocab.VERB)} {_a(a(vocab.ADJ))} {a(n)} {a(vocab.CONNECT)} {a(vocab.ADJ)} {p(n)}"
    elif r < 0.5:
        s = f"{a(vocab.FINDINGS)} the {a(vocab.ADJ)} {a(n)} {a(vocab.VERB3)} the {a(n)} {a(vocab.CONNECT)} {a(vocab.ADJ)} {p(n)}"
    elif r < 0.7:
        s = f"The {a(n)} {a(vocab.VERB3)} {a(vocab.ADJ)} {p(n)}, and the {a(n)} {a(vocab.VERB3)} the {a(vocab.ADJ)} {a(n)}"
    elif r < 0.85:
        s = f"Using {a(vocab.ADJ)} {p(n)}, we {a(vocab.VERB)} the {a(n)} {a(vocab.CONNECT)} {p(n)} with {a(vocab.MATH_BITS)}"
    else:
        s = f"This {a(n)} {a(vocab.VERB3)} the {a(vocab.ADJ)} {a(n)} by {rng.randint(2, 60)}% compared to previous {p(n)}"
    return s[0].upper() + s[1:] + "."


def _abstract(rng: random.Random, nouns: list[str]) -> str:
    n = rng.randint(5, 11)
    sentences = [_sentence(rng, nouns) for _ in range(n)]
    while sum(s.count(" ") + 1 for s in sentences) < 60:  # peS2o keeps abstracts of 50+ words
        sentences.append(_sentence(rng, nouns))
    if rng.random() < 0.05:
        sentences.insert(1, "We discuss R&D needs and the regime $x<1$ & $y>2$.")  # XML escaping
    return " ".join(sentences)


def _wrap(text: str, width: int, indent: str) -> list[str]:
    """Greedy hard wrap (arXiv's style); continuation lines start with ``indent``."""
    lines: list[str] = []
    cur: list[str] = []
    size = 0
    limit = width
    for word in text.split(" "):
        extra = len(word) + (1 if cur else 0)
        if cur and size + extra > limit:
            lines.append(" ".join(cur))
            cur, size, limit = [word], len(word), width - len(indent)
        else:
            cur.append(word)
            size += extra
    if cur:
        lines.append(" ".join(cur))
    return lines


def wrap_title(text: str) -> str:
    """Titles and comments: 72 columns, continuation lines indented by two spaces."""
    return "\n  ".join(_wrap(text, 72, "  "))


def wrap_abstract(text: str) -> str:
    """Abstracts: two leading spaces, 79 columns, a final newline (as arXiv serves them)."""
    return "\n".join(_wrap("  " + text, 79, "")) + "\n"


# ---------------------------------------------------------------- papers


def _rfc(day: dt.date, rng: random.Random) -> str:
    h, m, s = rng.randrange(24), rng.randrange(60), rng.randrange(60)
    return f"{vocab.WEEKDAYS[day.weekday()]}, {day.day} {vocab.MONTHS[day.month - 1]} {day.year} {h:02d}:{m:02d}:{s:02d} GMT"


def _person(rng: random.Random) -> AuthorName:
    r = rng.random()
    if r < 0.35:
        first = rng.choice(vocab.FIRST)
    elif r < 0.7:
        first = f"{rng.choice('ABCDEFGHIJKLMNOPRSTVWYZ')}."
    elif r < 0.9:
        first = f"{rng.choice('ABCDEFGHJKLMNPRSTVW')}. {rng.choice('ABCDEFGHJKLMNPRSTVW')}."
    else:
        first = f"{rng.choice(vocab.FIRST)} {rng.choice('ABCDEFGHJKLMNPRSTVW')}."
    last = rng.choice(vocab.PARTICLE_LAST) if rng.random() < 0.08 else rng.choice(vocab.LAST)
    suffix = rng.choice(vocab.SUFFIXES) if rng.random() < 0.03 else ""
    return _construct(AuthorName, {"keyname": last, "forenames": first, "suffix": suffix, "affiliations": []})


def _authors(rng: random.Random, primary: str) -> list[AuthorName]:
    archive = vocab.archive_of(primary)
    group = "hep" if archive in ("hep-ex", "hep-ph") else "astro" if archive == "astro-ph" else None
    group = group or ("nucl" if archive in ("nucl-ex",) else None)
    if group and rng.random() < 0.3:
        collab = rng.choice(vocab.COLLABORATIONS[group])
        style = rng.random()
        keyname = f"{collab} Collaboration" if style < 0.5 else f"The {collab} Collaboration"
        name = _construct(AuthorName, {"keyname": keyname, "forenames": "", "suffix": "", "affiliations": []})
        if style < 0.5:
            return [name]
        people = [_person(rng) for _ in range(rng.randint(1, 4))]
        return [name, *people] if style < 0.75 else [*people, name]
    k = min(int(rng.expovariate(1 / 3.0)) + 1, 40)
    people = [_person(rng) for _ in range(k)]
    mode = rng.random()
    if mode < 0.25:  # one affiliation each, written "Name (Aff)"
        for p in people:
            p.affiliations = [rng.choice(vocab.AFFILIATIONS)]
    elif mode < 0.37:  # numbered: "Name (1, 2) ... ((1) Aff, (2) Aff)"
        pool = rng.sample(vocab.AFFILIATIONS, 3)
        for p in people:
            p.affiliations = sorted(rng.sample(pool, rng.randint(1, 2)), key=pool.index)
    return people


def authors_to_raw(authors: list[AuthorName]) -> str:
    """The arXiv author string for structured names (what arXivRaw, Kaggle and ``.abs`` carry)."""

    def name(a: AuthorName) -> str:
        return " ".join(p for p in (a.forenames, a.keyname, a.suffix) if p)

    numbered = any(len(a.affiliations) > 1 for a in authors)
    pool: list[str] = []
    parts: list[str] = []
    for a in authors:
        text = name(a)
        if a.affiliations and numbered:
            refs = []
            for aff in a.affiliations:
                if aff not in pool:
                    pool.append(aff)
                refs.append(str(pool.index(aff) + 1))
            text += f" ({', '.join(refs)})"
        elif a.affiliations:
            text += f" ({a.affiliations[0]})"
        parts.append(text)
    raw = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if pool:
        raw += " (" + ", ".join(f"({i}) {aff}" for i, aff in enumerate(pool, 1)) + ")"
    return raw


def _construct(cls: type, values: dict):
    """``cls.model_construct(**values)`` without its per-field loop (values are complete and valid).

    The generator makes ~6 models per record; this halves its run time. Tests check
    that the result equals a validated model."""
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", set(values))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


@dataclass
class _Paper:
    """What is remembered of a paper so that it can be revised later (small, bounded)."""

    id: str
    created: dt.date
    dates: list[str]  # RFC dates of the versions so far


def _content(seed: int, paper: _Paper, archive: str | None) -> dict:
    """Everything about a paper that does not change between versions, from (seed, id)."""
    rng = _Rng(f"{seed}:{paper.id}")
    if archive:  # old style: a subject class of the id's archive
        options = vocab.OLD_CATS[archive]
        primary = options[rng.randrange(len(options))]
    else:
        primary = rng.choices(vocab.CAT_NAMES, cum_weights=vocab.CAT_CUM)[0]
    cats = [primary]
    for _ in range(rng.choice((0, 0, 0, 1, 1, 2, 3))):
        near = vocab.NEAR.get(vocab.archive_of(primary), vocab.CAT_NAMES)
        c = rng.choice(near)
        if c not in cats:
            cats.append(c)
    fld = vocab.field_of(primary)
    nouns = vocab.NOUN[fld]
    authors = _authors(rng, primary)
    out = {
        "categories": cats,
        "title": _title(rng, nouns),
        "abstract": _abstract(rng, nouns),
        "authors": authors,
        "submitter": next((f"{a.forenames} {a.keyname}" for a in authors if a.forenames), "arXiv Admin"),
        "comments": f"{rng.randint(4, 60)} pages, {rng.randint(0, 15)} figures" if rng.random() < 0.7 else "",
        "report_no": f"{rng.choice(['CERN-TH', 'SLAC-PUB', 'DESY', 'MIT-CTP', 'KEK-TH'])}-{rng.randint(1000, 9999)}"
        if fld == "phys" and rng.random() < 0.1
        else "",
        "msc_class": "; ".join(rng.sample(vocab.MSC, rng.randint(1, 2)))
        if fld == "math" and rng.random() < 0.3
        else "",
        "acm_class": rng.choice(vocab.ACM) if fld == "cs" and rng.random() < 0.1 else "",
        "license": rng.choice(vocab.LICENSES)
        if paper.created >= dt.date(2004, 1, 1) and rng.random() < 0.85
        else "",
        "journal": rng.choice(vocab.JOURNALS[fld]),
        "doi_prefix": vocab.DOI_PREFIX[fld],
        "pub_roll": rng.random(),
    }
    return out


def _record(seed: int, paper: _Paper, datestamp: dt.date, archive: str | None) -> ArxivRecord:
    c = _content(seed, paper, archive)
    nv = len(paper.dates)
    published = c["pub_roll"] < 0.08 + 0.12 * (nv - 1)  # later versions are more often published
    journal_ref = doi = ""
    comments = c["comments"]
    if published:
        year = (paper.created + dt.timedelta(days=200)).year
        journal_ref = (
            f"{c['journal']} {10 + int(c['pub_roll'] * 900)} ({year}) {100 + int(c['pub_roll'] * 9000)}"
        )
        suffix = paper.id.replace("/", ".").replace("-", "")
        doi = f"{c['doi_prefix']}/{suffix}"
        comments = (comments + "; " if comments else "") + "published version"
    versions = [
        _construct(Version, {"version": i + 1, "date": d, "size": "", "source_type": ""})
        for i, d in enumerate(paper.dates)
    ]
    cats = c["categories"]
    return _construct(
        ArxivRecord,
        {
            "id": paper.id,
            "version": nv,
            "datestamp": datestamp,
            "sets": sorted({vocab.oai_set(x) for x in cats}),
            "deleted": False,
            "submitter": c["submitter"],
            "authors_raw": authors_to_raw(c["authors"]),
            "authors": c["authors"],
            "title": c["title"],
            "abstract": c["abstract"],
            "comments": comments,
            "journal_ref": journal_ref,
            "doi": doi,
            "report_no": c["report_no"],
            "msc_class": c["msc_class"],
            "acm_class": c["acm_class"],
            "categories": cats,
            "license": c["license"],
            "versions": versions,
            "created": paper.created,
            "updated": datestamp if nv > 1 else None,
            "source_format": "arXiv",
        },
    )


# ---------------------------------------------------------------- ids and days


def day_counts(n_records: int, days: int, start: dt.date, seed: int) -> list[int]:
    """Records per datestamp day: weekdays heavier than weekends, jittered, summing to ``n_records``."""
    if days < 1 or n_records < 0:
        raise ValueError("need days >= 1 and n_records >= 0")
    rng = random.Random(f"{seed}:days")
    weights = []
    for i in range(days):
        d = start + dt.timedelta(days=i)
        base = 1.0 if d.weekday() < 5 else 0.35
        weights.append(base * rng.uniform(0.7, 1.3))
    total = sum(weights)
    raw = [n_records * w / total for w in weights]
    counts = [int(x) for x in raw]
    rest = n_records - sum(counts)
    order = sorted(range(days), key=lambda i: (raw[i] - counts[i], -i), reverse=True)
    for i in order[:rest]:
        counts[i] += 1
    return counts


class _Ids:
    """Unique ids consistent with their month: one counter per (archive or new-style, YYMM)."""

    def __init__(self) -> None:
        self.counters: dict[tuple[str, str], int] = {}

    def new(self, created: dt.date, rng: random.Random) -> tuple[str, str | None] | None:
        """A fresh id for a paper created on ``created`` (old style before April 2007); None if full."""
        yymm = f"{created.year % 100:02d}{created.month:02d}"
        if created < NEW_STYLE_START:
            ym = created.year * 100 + created.month
            eligible = [a for a, first, _ in vocab.OLD_ARCHIVES if vocab.yymm_key(first) <= ym]
            for archive in rng.sample(eligible, min(3, len(eligible))):
                n = self.counters.get((archive, yymm), 0) + 1
                if n <= 999:
                    self.counters[(archive, yymm)] = n
                    return f"{archive}/{yymm}{n:03d}", archive
            return None
        digits = 5 if created >= FIVE_DIGIT_START else 4
        n = self.counters.get(("new", yymm), 0) + 1
        if n >= 10**digits:
            return None
        self.counters[("new", yymm)] = n
        return f"{yymm}.{n:0{digits}d}", None


_EARLIEST = dt.date(1991, 8, 14)
_RESERVOIR_CAP = 20_000


class _Generator:
    """The state of one run: id counters and a capped reservoir of papers that may be revised."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = _Rng(seed)
        self.ids = _Ids()
        self.reservoir: list[tuple[_Paper, str | None]] = []
        self.stats = {"new_ids": 0, "revisions": 0, "old_style": 0}

    def run_revision(self, day: dt.date) -> tuple[_Paper, str | None] | None:
        """A paper announced earlier in the run gets its next version today."""
        if not self.reservoir:
            return None
        rng, res = self.rng, self.reservoir
        j = rng.randrange(len(res))
        res[j], res[-1] = res[-1], res[j]
        paper, archive = res.pop()
        paper.dates.append(_rfc(day, rng))
        return paper, archive

    def old_revision(self, day: dt.date) -> tuple[_Paper, str | None] | None:
        """A paper from before the run (often old-style) gets a new version today."""
        rng = self.rng
        span = (day - _EARLIEST).days - 30
        back = min(int(rng.expovariate(1 / 1500.0)) + 30, span) if span > 30 else 30
        created = max(day - dt.timedelta(days=back), _EARLIEST)
        got = self.ids.new(created, rng)
        if got is None:
            return None
        dates = [_rfc(created, rng)]
        middle = sorted(
            min(
                created + dt.timedelta(days=rng.randrange(1, max(2, (day - created).days))),
                day - dt.timedelta(days=1),
            )
            for _ in range(rng.choice((0, 0, 1, 2)))
        )
        dates.extend(_rfc(d, rng) for d in middle)
        dates.append(_rfc(day, rng))
        return _Paper(got[0], created, dates), got[1]

    def new_submission(self, day: dt.date) -> tuple[_Paper, str | None] | None:
        """A new paper announced today, submitted 0-3 days before (its id is from that month)."""
        rng = self.rng
        created = day - dt.timedelta(days=rng.choice((0, 0, 1, 1, 2, 3)))
        got = self.ids.new(created, rng)
        if got is None:
            created = day
            got = self.ids.new(day, rng)
        if got is None:
            return None
        return _Paper(got[0], created, [_rfc(created, rng)]), got[1]

    def day(self, day: dt.date, count: int) -> Iterator[ArxivRecord]:
        rng, stats = self.rng, self.stats
        today: list[tuple[_Paper, str | None]] = []
        for _ in range(count):
            r = rng.random()
            item = self.run_revision(day) if r < 0.15 else None
            if item is None and r < 0.27:
                item = self.old_revision(day)
                stats["new_ids"] += item is not None
            if item is None:
                item = self.new_submission(day)
                stats["new_ids"] += item is not None
            tries = 0
            while item is None and tries < 20:  # this month's id space is full: revise older papers
                item = self.old_revision(day)
                stats["new_ids"] += item is not None
                tries += 1
            if item is None:
                raise ValueError(f"no free arXiv ids left around {day}: too many records for these days")
            paper, archive = item
            rec = _record(self.seed, paper, day, archive)
            today.append(item)
            stats["revisions"] += len(paper.dates) > 1
            stats["old_style"] += archive is not None
            yield rec
        for item in today:  # revisable from tomorrow on: never twice on one day
            if len(self.reservoir) < _RESERVOIR_CAP:
                self.reservoir.append(item)
            else:
                self.reservoir[rng.randrange(_RESERVOIR_CAP)] = item


def iter_sample_records(
    n_records: int,
    days: int = 7,
    start: dt.date | str = "2007-03-30",
    seed: int = 0,
    counts: list[int] | None = None,
    stats: dict[str, int] | None = None,
) -> Iterator[ArxivRecord]:
    """Records in datestamp order (day by day, ``counts[i]`` on day ``i``); deterministic by seed.

    ``stats``, if given, is filled with ``new_ids`` (ids first seen in this run),
    ``revisions`` (records with version > 1) and ``old_style`` (records with old-style ids)."""
    start = dt.date.fromisoformat(start) if isinstance(start, str) else start
    counts = counts if counts is not None else day_counts(n_records, days, start, seed)
    gen = _Generator(seed)
    if stats is not None:
        stats.update(gen.stats)
        gen.stats = stats
    for i, count in enumerate(counts):
        yield from gen.day(start + dt.timedelta(days=i), count)
