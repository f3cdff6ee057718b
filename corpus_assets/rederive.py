"""``make rederive``: re-derive what an improvement of the code changes, in rounds, each one
backfill of the ``corpus_daily`` job per set of assets (its runs show under the job, tagged
``corpus/rederive``), until nothing is stale, then wait; the cross-day assets follow through their
catch-up. What is stale and why Dagster's own staleness does not serve: corpus_assets/rederive_plan.py;
the same rounds from the UI: the ``corpus_rederive`` sensor (sensors/rederive.py).
"""

import datetime as dt
import os
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack

import dagster as dg

from corpus.store import Store
from corpus_assets.jobs import DAILY_ASSETS
from corpus_assets.rederive_plan import plan_round, rederive_tags

MAX_ROUNDS = len(DAILY_ASSETS) + 2  # the longest chain of daily assets, and some room


def submit_round(
    groups: Mapping[frozenset[str], Sequence[str]], tags: Mapping[str, str], title: str
) -> list[str]:
    """One backfill of the ``corpus_daily`` job per asset set (its runs show under the job, cut
    into runs by the assets' backfill policy), as the job page makes them; returns their ids."""
    from corpus_assets.backfill import launch_backfills

    return launch_backfills(
        [
            {
                "days": list(days),
                "assets": sorted(assets),
                "tags": dict(tags),
                "title": _title(f"{title}: {', '.join(sorted(assets))}"),
            }
            for assets, days in groups.items()
        ]
    )


def _title(text: str) -> str:
    """A backfill title as Dagster takes it (at most 100 characters)."""
    return text if len(text) <= 100 else text[:99] + "…"


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

    from corpus_assets.backfill import BackfillRefused, daemon_running, serve_daemons, wait

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
            try:
                backfills = submit_round(planned.groups, rederive_tags(rederive_id, round_no), title)
            except BackfillRefused as exc:
                print(f"make rederive: round {round_no} refused: {exc}", file=sys.stderr)
                return 1
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
