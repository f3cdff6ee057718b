"""Which daily partitions an improvement of the code changes, from what each partition records
of what made it (:class:`corpus.store.Provenance`).

A partition is stale when

* its stage's version moved since it was built (``code``): a better parser, a new rule; or
* a partition of the same day it read has other content now than when it read it (``inputs``):
  a re-derived upstream whose rows changed. An upstream re-derived to the same rows keeps its
  fingerprint, so a fix that changes nothing stops at its stage, and one that changes three
  papers of a day re-derives that day's downstream and nothing else.

:func:`stale_partitions` finds both over a store; :func:`next_wave` picks what one round of
re-deriving runs (every code-stale partition, and the input-stale ones whose upstream is not
being re-derived in the same round, since that may change them again), grouped into the
asset sets that run together over their days. ``make rederive`` runs rounds until nothing is
stale (corpus_assets/rederive.py). Reads only small marker files: one per partition and one per
input it names, never the partitions' rows (a partition written before provenance was recorded
is hashed once, and adopted).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from corpus.store import Store

Reason = Literal["code", "inputs"]


@dataclass(frozen=True, order=True)
class StalePartition:
    """One (asset, day) that re-deriving would change, and why."""

    asset: str
    day: str
    reason: Reason
    detail: str  # "corpus.parse.latex/2 -> corpus.parse.latex/3" | "latex_parses changed"


def built_version(store: Store, asset: str, day: str) -> str | None:
    """The version of the code that built the partition (None: no partition). One written
    before versions were recorded is taken as built by the version its rows name, or else its
    stage's first recorded one (:meth:`corpus.store.Store.recorded`)."""
    record = store.recorded(asset, day)
    return record.code_version if record is not None else None


@dataclass
class _Fingerprints:
    """Each partition's fingerprint, read once per plan."""

    store: Store
    known: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def __call__(self, asset: str, day: str) -> str | None:
        key = (asset, day)
        if key not in self.known:
            self.known[key] = self.store.fingerprint(asset, day)
        return self.known[key]


def stale_partitions(
    store: Store,
    versions: Mapping[str, str],
    days: Iterable[str] | None = None,
) -> list[StalePartition]:
    """Every stale partition of the assets in ``versions`` ({asset: today's code version}),
    over ``days`` (default: every day each asset has), sorted by asset and day."""
    wanted = None if days is None else set(days)
    fingerprint = _Fingerprints(store)
    out: list[StalePartition] = []
    for asset, current in versions.items():
        for day in store.partitions(asset):
            if wanted is not None and day not in wanted:
                continue
            built = built_version(store, asset, day)
            if built is None:
                continue
            if built != current:
                out.append(StalePartition(asset, day, "code", f"{built} -> {current}"))
                continue
            record = store.recorded(asset, day)
            changed = [
                name
                for name, read in sorted((record.inputs if record else {}).items())
                if fingerprint(name, day) != read
            ]
            if changed:
                out.append(StalePartition(asset, day, "inputs", f"{', '.join(changed)} changed"))
    return sorted(out)


def upstream_closure(deps: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """{asset: every asset it reads, directly or not} from {asset: the assets it reads}."""
    closed: dict[str, set[str]] = {}

    def walk(asset: str, seen: frozenset[str]) -> set[str]:
        if asset in closed:
            return closed[asset]
        found: set[str] = set()
        for dep in deps.get(asset, ()):
            if dep not in seen:
                found |= {dep} | walk(dep, seen | {asset})
        closed[asset] = found
        return found

    for asset in deps:
        walk(asset, frozenset())
    return closed


def next_wave(
    stale: Iterable[StalePartition],
    upstream: Mapping[str, set[str]],
    siblings: Mapping[str, frozenset[str]] | None = None,
) -> dict[frozenset[str], list[str]]:
    """What one round re-derives: ``{asset set: days}``, each asset set run together (in
    dependency order) over its days. Every code-stale partition is in; an input-stale one is
    in unless an asset it reads (``upstream``, transitively) is stale on its day too: that one
    is re-derived first, and may change it again. ``siblings`` ({asset: the assets one function
    writes with it}) are added, so a multi-asset's tables are reported together."""
    siblings = siblings or {}
    stale = list(stale)
    stale_on: dict[str, set[str]] = defaultdict(set)
    for item in stale:
        stale_on[item.day].add(item.asset)
    by_day: dict[str, set[str]] = defaultdict(set)
    for item in stale:
        if item.reason == "code" or not (upstream.get(item.asset, set()) & stale_on[item.day]):
            by_day[item.day].add(item.asset)
    groups: dict[frozenset[str], list[str]] = defaultdict(list)
    for day in sorted(by_day):
        assets = set(by_day[day])
        for asset in list(assets):
            assets |= siblings.get(asset, frozenset())
        if assets:
            groups[frozenset(assets)].append(day)
    return dict(groups)


def day_ranges(days: Iterable[str]) -> list[tuple[str, str]]:
    """Consecutive days as (first, last) ranges: how a long list of days is shown."""
    out: list[tuple[str, str]] = []
    for day in sorted(set(days)):
        if out and dt.date.fromisoformat(day) - dt.date.fromisoformat(out[-1][1]) == dt.timedelta(days=1):
            out[-1] = (out[-1][0], day)
        else:
            out.append((day, day))
    return out


def describe_days(days: Iterable[str], limit: int = 6) -> str:
    """``2007-03-31..2007-04-02, 2010-11-24 (4 days)``: days as ranges, the first ``limit`` shown."""
    days = sorted(set(days))
    ranges = day_ranges(days)
    shown = ", ".join(a if a == b else f"{a}..{b}" for a, b in ranges[:limit])
    more = f" and {len(ranges) - limit} more range(s)" if len(ranges) > limit else ""
    return f"{shown}{more} ({len(days)} day{'s' if len(days) != 1 else ''})" if days else "none"
