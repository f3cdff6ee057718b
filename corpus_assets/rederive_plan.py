"""What an improvement of the code makes stale, and the rounds that re-derive it: the
``built_by_current_code`` check of every daily asset and the plan that ``make rederive``
(corpus_assets/rederive.py) and the ``corpus_rederive`` sensor (sensors/rederive.py) run.

Every daily partition records the version of the stage that wrote it and the fingerprints of
the partitions it read (corpus.store.Provenance). After a stage's version moves (a better
parser), :mod:`corpus.provenance` names the partitions it built with older code, and, once
those are re-derived, the downstream partitions whose inputs' content changed. A re-derive runs
in rounds, each one or a few Dagster backfills of the ``corpus_daily`` job (its runs show
under the job, tagged ``corpus/rederive``), until nothing is stale: a fix that changes three
papers of a day re-derives that day's downstream; a fix that changes nothing stops at its
stage. Fetches and Grobid re-run only when something they depend on changed, and then find
their files and TEI in the store. The cross-day assets follow through their catch-up.

Why not Dagster's own staleness (1.13.27): it records the code version of every materialisation
(the ``dagster/code_version`` tag, set here from :mod:`corpus.versions`), but computes stale
status per asset, not per partition (the UI's "Materialize stale" is for unpartitioned
assets), cannot say "inputs' content unchanged" for partitions built several days a run (one
data version per run), and ``AutomationCondition.code_version_changed()`` is "since the last
tick", so a deploy seen by nobody is never caught up.
"""

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import dagster as dg

from corpus.provenance import StalePartition, day_ranges, describe_days, next_wave, upstream_closure
from corpus.store import Store
from corpus.versions import code_version
from corpus_assets.jobs import CODE_CHECK, DAILY_ASSETS, REDERIVE_TAG

CHECK_NAME = CODE_CHECK


@dataclass(frozen=True)
class DailyGraph:
    """The daily assets' lineage: what each reads (of the daily assets) and which ones one
    function writes together (a multi-asset's tables)."""

    deps: Mapping[str, Sequence[str]]
    siblings: Mapping[str, frozenset[str]]

    @property
    def upstream(self) -> dict[str, set[str]]:
        return upstream_closure(self.deps)


def daily_graph(assets_defs: Iterable[dg.AssetsDefinition]) -> DailyGraph:
    """From the assets' definitions (their deps are the lineage the UI shows)."""
    daily = set(DAILY_ASSETS)
    deps: dict[str, list[str]] = {}
    siblings: dict[str, frozenset[str]] = {}
    for assets_def in assets_defs:
        names = frozenset(k.to_user_string() for k in assets_def.keys) & daily
        for key in assets_def.keys:
            name = key.to_user_string()
            if name in daily:
                deps[name] = sorted(
                    k.to_user_string() for k in assets_def.asset_deps[key] if k.to_user_string() in daily
                )
                siblings[name] = names
    return DailyGraph(deps, siblings)


def current_versions(assets: Iterable[str] = DAILY_ASSETS) -> dict[str, str]:
    """Today's code version of each asset (the code this process runs: the code location's)."""
    return {asset: code_version(asset) for asset in assets}


# --------------------------------------------------------------------------- the check


def stale_code_days(store: Store, asset: str, version: str) -> list[str]:
    """The days of ``asset`` built by code other than ``version``."""
    from corpus.provenance import built_version

    return [day for day in store.partitions(asset) if built_version(store, asset, day) not in (None, version)]


def expand_days(text: str) -> set[str]:
    """The days of a ``first..last, day`` list (what the check's metadata keeps)."""
    days: set[str] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part or part == "none":
            continue
        first, _, last = part.partition("..")
        start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last or first)
        days |= {(start + dt.timedelta(days=i)).isoformat() for i in range((end - start).days + 1)}
    return days


def ranges_text(days: Iterable[str]) -> str:
    return ", ".join(a if a == b else f"{a}..{b}" for a, b in day_ranges(days)) or "none"


# Both ways to act, in words that read the same as Markdown and as plain text (the UI shows check
# texts either way): no backticks, asterisks or leading underscores.
TO_REDERIVE = (
    "To re-derive them and what they change: turn on the corpus_rederive sensor (Automation page), "
    "or run make rederive."
)


def check_description(asset: str, version: str, days: Sequence[str]) -> str:
    if not days:
        return f"Every built day of {asset} was made by this code ({version})."
    return f"Built by older code than this ({version}): {describe_days(days)}. {TO_REDERIVE}"


def check_metadata(version: str, days: Sequence[str]) -> dict[str, dg.MetadataValue]:
    return {
        "code_version": dg.MetadataValue.text(version),
        "stale_days": dg.MetadataValue.int(len(days)),
        "days": dg.MetadataValue.text(ranges_text(days)),  # every one, as ranges
    }


def code_check_evaluation(asset: str, version: str, days: Sequence[str]) -> dg.AssetCheckEvaluation:
    """The check's result as a sensor reports it."""
    return dg.AssetCheckEvaluation(
        asset_key=dg.AssetKey(asset),
        check_name=CHECK_NAME,
        passed=not days,
        severity=dg.AssetCheckSeverity.WARN,
        description=check_description(asset, version, days),
        metadata=check_metadata(version, days),
    )


def code_check(asset: str) -> dg.AssetChecksDefinition:
    """The ``built_by_current_code`` check of a daily asset. The ``corpus_code_versions`` sensor
    reports it within a tick of a code location reload or of a day being built; it runs in no
    job (a run would read every partition's provenance), but can be executed from the UI."""

    @dg.asset_check(
        asset=dg.AssetKey(asset),
        name=CHECK_NAME,
        description="Every built day was made by the code the asset has now (its stage's version, "
        "corpus.versions). A warning names the days built by older code. " + TO_REDERIVE + " Reported "
        "by the corpus_code_versions sensor within 30 s of a code location reload or of a day being built.",
        required_resource_keys={"corpus"},
    )
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        version = code_version(asset)
        days = stale_code_days(context.resources.corpus.store, asset, version)
        return dg.AssetCheckResult(
            passed=not days,
            severity=dg.AssetCheckSeverity.WARN,
            description=check_description(asset, version, days),
            metadata=check_metadata(version, days),
        )

    return _check


def code_check_keys() -> list[dg.AssetCheckKey]:
    return [dg.AssetCheckKey(dg.AssetKey(a), CHECK_NAME) for a in DAILY_ASSETS]


# --------------------------------------------------------------------------- planning a round


@dataclass
class Round:
    """One round of a re-derive: what is stale, and the ``{asset set: days}`` it runs."""

    stale: list[StalePartition]
    groups: dict[frozenset[str], list[str]]

    def lines(self) -> list[str]:
        by_reason: dict[tuple[str, str], list[str]] = {}
        for item in self.stale:
            by_reason.setdefault((item.asset, item.detail), []).append(item.day)
        out = [
            f"  {asset}: {detail}: {describe_days(days)}"
            for (asset, detail), days in sorted(by_reason.items())
        ]
        out += [
            f"  run {', '.join(sorted(assets))} over {describe_days(days)}"
            for assets, days in self.groups.items()
        ]
        return out


def plan_round(store: Store, graph: DailyGraph, days: Iterable[str] | None = None) -> Round:
    from corpus.provenance import stale_partitions

    stale = stale_partitions(store, current_versions(graph.deps), days)
    return Round(stale, next_wave(stale, graph.upstream, graph.siblings))


def rederive_tags(rederive_id: str, round_no: int) -> dict[str, str]:
    return {REDERIVE_TAG: rederive_id, "corpus/rederive_round": str(round_no)}
