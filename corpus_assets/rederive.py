"""Re-derive what an improvement of the code changes: ``make rederive``, the ``corpus_rederive``
sensor (off by default) and the ``built_by_current_code`` check of every daily asset.

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
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

import dagster as dg

from corpus.provenance import StalePartition, day_ranges, describe_days, next_wave, upstream_closure
from corpus.store import Store
from corpus.versions import code_version
from corpus_assets.jobs import CODE_CHECK, DAILY_ASSETS, DAILY_JOB, REDERIVE_TAG

CHECK_NAME = CODE_CHECK
PARTITION_SET = f"{DAILY_JOB}_partition_set"
MAX_ROUNDS = len(DAILY_ASSETS) + 2  # the longest chain of daily assets, and some room


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


def check_description(asset: str, version: str, days: Sequence[str]) -> str:
    if not days:
        return f"every built day of {asset} was made by {version}"
    return (
        f"built by older code: {describe_days(days)}; today's is {version}. "
        "`make rederive` (or the corpus_rederive sensor) re-derives them and what they change"
    )


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
        description="Every built day was made by the code version the asset has now (its stage's "
        "version, corpus.versions); failed (warn) names the days built by older code, which "
        "`make rederive` re-derives.",
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


def submit_round(
    instance: dg.DagsterInstance,
    partition_set_origin,
    groups: Mapping[frozenset[str], Sequence[str]],
    tags: Mapping[str, str],
    title: str,
) -> list[str]:
    """One backfill of the ``corpus_daily`` job per asset set (its runs show under the job, cut
    into runs by the assets' backfill policy); returns their ids."""
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.utils import make_new_backfill_id

    from corpus_assets.backfill import QUIET

    ids = []
    for assets, days in groups.items():
        backfill = PartitionBackfill(
            backfill_id=make_new_backfill_id(),
            partition_set_origin=partition_set_origin,
            status=BulkActionStatus.REQUESTED,
            partition_names=list(days),
            from_failure=False,
            reexecution_steps=None,
            tags=dict(tags),
            backfill_timestamp=time.time(),
            asset_selection=[dg.AssetKey(a) for a in sorted(assets)],
            title=_title(f"{title}: {', '.join(sorted(assets))}"),
            description=None,
            run_config=QUIET,
        )
        instance.add_backfill(backfill)
        ids.append(backfill.backfill_id)
    return ids


def _title(text: str) -> str:
    """A backfill title as Dagster takes it (at most 100 characters)."""
    return text if len(text) <= 100 else text[:99] + "…"


def rederive_tags(rederive_id: str, round_no: int) -> dict[str, str]:
    return {REDERIVE_TAG: rederive_id, "corpus/rederive_round": str(round_no)}


# --------------------------------------------------------------------------- make rederive


def partition_set_origin(location=None, repository: str = "__repository__"):
    """Where the ``corpus_daily`` job's partition set is, as a backfill names it (the daemons find
    the code location by its name): ``location`` (a sensor's code location origin), or this
    checkout's, built without loading the code."""
    from dagster._core.remote_origin import (
        InProcessCodeLocationOrigin,
        RemotePartitionSetOrigin,
        RemoteRepositoryOrigin,
    )
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

    from corpus_assets.launch import LOCATION, MODULE, REPO

    if location is None:
        location = InProcessCodeLocationOrigin(
            loadable_target_origin=LoadableTargetOrigin(
                executable_path=sys.executable, module_name=MODULE, working_directory=str(REPO)
            ),
            location_name=LOCATION,
        )
    return RemotePartitionSetOrigin(
        repository_origin=RemoteRepositoryOrigin(code_location_origin=location, repository_name=repository),
        partition_set_name=PARTITION_SET,
    )


def _days_arg(args) -> list[str] | None:
    if not args.first and not args.last:
        return None
    from corpus_assets.backfill import days_between

    return days_between(args.first or "1991-01-01", args.last or dt.date.today().isoformat())


def _size_runs(instance: dg.DagsterInstance, days: int) -> None:
    """Days per run for the code server this command starts (as ``make backfill`` sizes them)."""
    from corpus_assets.backfill import days_per_run_for

    if os.environ.get("CORPUS_DAYS_PER_RUN", "").strip():
        return
    limit = instance.get_concurrency_config().run_queue_config.max_concurrent_runs
    side_by_side = limit if limit and limit > 0 else (os.cpu_count() or 1)
    os.environ["CORPUS_DAYS_PER_RUN"] = str(days_per_run_for(max(1, days), side_by_side))


def _days_the_data_root_lacks(instance: dg.DagsterInstance, store: Store) -> str | None:
    """Why "nothing to re-derive" would be a lie: the instance has materialised arxiv_metadata days
    that this data root does not hold (run where the data is not mounted, e.g. a compose service
    without the data volume, or CORPUS_HOME pointing elsewhere); None when the root holds them."""
    if store.partitions("arxiv_metadata"):
        return None
    key = dg.AssetKey("arxiv_metadata")
    built = (
        instance.get_materialized_partitions(key) if instance.get_latest_materialization_event(key) else set()
    )
    if not built:
        return None
    return (
        f"make rederive: this instance has built {len(built)} day(s) of arxiv_metadata, but the data root "
        f"{store.home} holds none: run it where the corpus data is (CORPUS_HOME; in the compose stack, "
        "in the code service: docker-compose exec code python -m corpus_assets.rederive)"
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    from corpus_assets.backfill import daemon_running, serve_daemons, wait

    parser = argparse.ArgumentParser(
        prog="python -m corpus_assets.rederive", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--from", dest="first", help="first day to consider (default: every day)")
    parser.add_argument("--to", dest="last", help="last day to consider")
    parser.add_argument("--dry-run", action="store_true", help="print the first round, run nothing")
    parser.add_argument("--timeout-hours", type=float, default=72.0)
    args = parser.parse_args(argv)
    try:
        days = _days_arg(args)
    except ValueError as exc:
        print(f"make rederive: {exc}", file=sys.stderr)
        return 2
    from corpus_assets.definitions import DAILY  # the lineage (the code this command runs)

    store = Store.from_env()
    instance = dg.DagsterInstance.get()
    served = daemon_running(instance)
    rederive_id = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    origin = partition_set_origin()
    started = time.perf_counter()
    with ExitStack() as stack:
        on_stall = None
        for round_no in range(1, MAX_ROUNDS + 1):
            planned = plan_round(store, DAILY, days)
            plan = "\n".join(planned.lines())
            if args.dry_run:
                print(f"make rederive --dry-run: round 1 would be\n{plan or '  nothing'}")
                return 0
            if not planned.groups:
                took = time.perf_counter() - started
                if round_no == 1:
                    if missing := _days_the_data_root_lacks(instance, store):
                        print(missing, file=sys.stderr)
                        return 2
                    print(
                        "make rederive: nothing to re-derive: every built partition was made by today's code "
                        "from the inputs it has now"
                    )
                else:
                    print(
                        f"make rederive {rederive_id}: done, {round_no - 1} round(s) in {took:.0f}s; the "
                        "cross-day assets follow at the corpus_graph_catch_up sensor's next tick"
                    )
                return 0
            print(f"round {round_no}:\n{plan}", flush=True)
            if round_no == 1:
                if served:
                    print("  a Dagster daemon serves this instance: it runs the backfills", flush=True)
                    on_stall = lambda: serve_daemons(stack, instance)  # noqa: E731
                else:
                    _size_runs(instance, max(len(d) for d in planned.groups.values()))
                    serve_daemons(stack, instance)
            title = f"rederive {rederive_id} round {round_no}"
            backfills = submit_round(
                instance, origin, planned.groups, rederive_tags(rederive_id, round_no), title
            )
            failed = []
            for backfill_id in backfills:
                status, runs = wait(instance, backfill_id, args.timeout_hours * 3600, on_stall)
                on_stall = None
                bad = runs.get("FAILURE", 0) + runs.get("CANCELED", 0)
                if status != "COMPLETED_SUCCESS" or bad:
                    failed.append(f"backfill {backfill_id}: {status}, {bad} run(s) failed")
            if failed:
                print("\n".join(failed), file=sys.stderr)
                print(
                    f"make rederive: round {round_no} failed (runs above); once fixed, `make rederive` "
                    "goes on from what is still stale",
                    file=sys.stderr,
                )
                return 1
    print(
        f"make rederive: still stale after {MAX_ROUNDS} rounds (a stage whose rows change on every run?)",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
