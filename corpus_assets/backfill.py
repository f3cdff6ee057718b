"""``make backfill FROM=YYYY-MM-DD TO=YYYY-MM-DD``: every daily asset over a range, as one
Dagster backfill of the ``corpus_daily`` job (what the job page's "Materialize all" makes), and
wait for it.

The backfill daemon cuts the range into runs of ``CORPUS_DAYS_PER_RUN`` days (the assets'
multi-run backfill policy); the run queue starts up to ``max_concurrent_runs`` of them side by
side (the machine's cores, ``make dagster-home``), each in its own process; inside a run each
day's per-paper work uses the cores left to it (:func:`corpus_assets.deployment.paper_workers`).
When this command serves the daemons and ``CORPUS_DAYS_PER_RUN`` is not set, it sizes the runs
from the range (:func:`days_per_run_for`) for the code server it starts.
When no daemon serves this instance (``make ui`` runs one), the backfill, run-queue and
run-monitoring daemons run inside this command while it waits — not the sensors, so nothing
but the range is built. Exit status: 0 when every run succeeded, 1 when a day failed, 2 on
bad arguments.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
POLL_S = 2.0
IDLE_PER_BUSY = 5.0  # the in-command backfill daemon sleeps >= 5x its last iteration: <= 1/6 of a core
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
DAEMON_FRESH_S = 60.0  # a heartbeat younger than this means another daemon serves the instance
STALL_S = 90.0  # no run of the backfill after this long: serve it here after all


MAX_DAYS_PER_RUN = 16  # a failed run re-runs its days: keep that bounded


def days_per_run_for(days: int, side_by_side: int) -> int:
    """Days per run for a range: as many runs as can run side by side (every core gets one),
    at most :data:`MAX_DAYS_PER_RUN` days each, so a long range pays few run start-ups (3-4 CPU s
    each) and a short one still spreads over every core (30 days on 64 cores: 30 runs of a day,
    where a fixed 4 would give 8)."""
    return max(1, min(MAX_DAYS_PER_RUN, -(-days // max(1, side_by_side))))


def days_between(first: str, last: str) -> list[str]:
    start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
    if end < start:
        raise ValueError(f"FROM {first} is after TO {last}")
    return [(start + dt.timedelta(days=i)).isoformat() for i in range((end - start).days + 1)]


def daemon_running(instance) -> bool:
    now = time.time()
    beats = instance.get_daemon_heartbeats()
    return any(
        t in beats and now - beats[t].timestamp < DAEMON_FRESH_S
        for t in ("BACKFILL", "QUEUED_RUN_COORDINATOR")
    )


def submit(instance, launcher, days: list[str], title: str) -> str:
    """Add a backfill of the ``corpus_daily`` job over ``days``; returns its id. A job backfill
    of the job's assets, as the job page's "Materialize all" launches it, rather than an asset
    backfill (the asset catalog's): its runs are ``corpus_daily`` runs, under the job in the UI,
    cut into ranges by the assets' backfill policy all the same. Its row in the UI names the
    assets it builds beside the job's partition set (``corpus_daily_partition_set``: Dagster's
    name for the days of a job, which it shows for every job backfill). Its runs also evaluate
    the daily assets' ``built_by_current_code`` checks, which the job itself leaves to their
    sensor: a job backfill can name assets but no checks, and Dagster subsets the job by those
    assets with every check of them (as for ``make rederive``'s backfills)."""
    import dagster as dg
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.utils import make_new_backfill_id

    from corpus_assets.jobs import DAILY_ASSETS, DAILY_JOB

    partition_set = next(ps for ps in launcher.repo.get_partition_sets() if ps.job_name == DAILY_JOB)
    backfill = PartitionBackfill(
        backfill_id=make_new_backfill_id(),
        partition_set_origin=partition_set.get_remote_origin(),
        status=BulkActionStatus.REQUESTED,
        partition_names=days,
        from_failure=False,
        reexecution_steps=None,
        tags={},
        backfill_timestamp=time.time(),
        asset_selection=[dg.AssetKey(a) for a in DAILY_ASSETS],
        title=title,
        description=None,
        run_config=QUIET,  # the runs' full logs are in the UI; the terminal shows progress
    )
    instance.add_backfill(backfill)
    return backfill.backfill_id


def prompt_backfill_daemon(instance):
    """Dagster's backfill daemon, iterating every :data:`POLL_S` instead of every 30 s (a fixed
    interval in Dagster): it marks a backfill complete only on an iteration after its last run
    ends, so a day's backfill that ran in 10 s was reported after 35. This command serves one
    backfill and nothing else; after an iteration that takes long (a range of years) it waits
    :data:`IDLE_PER_BUSY` times that iteration's length, so it never keeps a core busy.
    ``make ui``'s daemon keeps Dagster's interval."""
    from dagster._daemon.backfill import execute_backfill_iteration
    from dagster._daemon.daemon import BackfillDaemon, SpanMarker
    from dagster._daemon.utils import DaemonErrorCapture

    class PromptBackfillDaemon(BackfillDaemon):
        def core_loop(self, workspace_process_context, shutdown_event):  # Dagster's loop, shorter sleep
            futures: dict = {}
            while True:
                began = time.monotonic()
                yield SpanMarker.START_SPAN
                try:
                    yield from execute_backfill_iteration(
                        workspace_process_context,
                        self._logger,
                        threadpool_executor=self._threadpool_executor,
                        backfill_futures=futures,
                        submit_threadpool_executor=self._submit_threadpool_executor,
                    )
                except Exception:
                    yield DaemonErrorCapture.process_exception(
                        exc_info=sys.exc_info(),
                        logger=self._logger,
                        log_message="BackfillDaemon caught an error",
                    )
                yield SpanMarker.END_SPAN
                shutdown_event.wait(max(POLL_S, (time.monotonic() - began) * IDLE_PER_BUSY))
                yield None

    return PromptBackfillDaemon(settings=instance.get_backfill_settings())


def serve_daemons(stack: ExitStack, instance) -> None:
    """Run the backfill, run-queue and run-monitoring daemons in this process until exit; their
    heartbeats are wiped on the way out, so the next command does not take them for a daemon
    that still serves the instance (a live daemon writes its heartbeat again within 30 s)."""
    from dagster._core.workspace.load_target import WorkspaceFileTarget
    from dagster._daemon.controller import create_daemon_of_type, daemon_controller_from_instance

    def daemons(inst):
        others = [create_daemon_of_type(t, inst) for t in ("QUEUED_RUN_COORDINATOR", "MONITORING")]
        return [prompt_backfill_daemon(inst), *others]

    stack.callback(instance.wipe_daemon_heartbeats)
    stack.enter_context(
        daemon_controller_from_instance(
            instance,
            WorkspaceFileTarget(paths=[str(REPO / "workspace.yaml")]),
            gen_daemons=daemons,
            log_level="warning",
        )
    )


def wait(instance, backfill_id: str, timeout_s: float, on_stall=None) -> tuple[str, Counter]:
    """Poll until the backfill ends; print progress when it changes. Returns (status, runs by
    status). ``on_stall`` is called once if nothing has happened after STALL_S (the daemon
    thought to serve the instance is gone): it starts daemons here."""
    from dagster._core.execution.backfill import BULK_ACTION_TERMINAL_STATUSES
    from dagster._core.storage.dagster_run import RunsFilter

    started = time.monotonic()
    deadline = started + timeout_s
    last = None
    while True:
        backfill = instance.get_backfill(backfill_id)
        runs = instance.get_runs(filters=RunsFilter(tags={"dagster/backfill": backfill_id}))
        statuses = Counter(r.status.value for r in runs)
        line = f"  backfill {backfill_id}: {backfill.status.value}; runs " + (
            ", ".join(f"{k.lower()} {v}" for k, v in sorted(statuses.items())) or "none yet"
        )
        if line != last:
            print(line, flush=True)
            last = line
        if backfill.status in BULK_ACTION_TERMINAL_STATUSES and not any(
            s in statuses for s in ("QUEUED", "NOT_STARTED", "STARTING", "STARTED", "CANCELING")
        ):
            return backfill.status.value, statuses
        if time.monotonic() > deadline:
            return "TIMED_OUT", statuses
        if on_stall is not None and not runs and time.monotonic() > started + STALL_S:
            print("  no daemon picked the backfill up: starting one here", flush=True)
            on_stall()
            on_stall = None
        time.sleep(POLL_S)


def submit_main(days: list[str]) -> int:
    """``--submit``: check the range, add the backfill, print its id. Run in a child process, so
    the project's code (and its libraries) never stays in the waiting process's memory."""
    import dagster as dg

    from corpus_assets.launch import LocalLauncher
    from corpus_assets.partitions import start_date

    if days[0] < start_date():
        print(f"make backfill: {days[0]} is before the first partition {start_date()}", file=sys.stderr)
        return 2
    instance = dg.DagsterInstance.get()
    launcher = LocalLauncher(instance)
    try:
        print(f"BACKFILL {submit(instance, launcher, days, f'make backfill {days[0]}..{days[-1]}')}")
    finally:
        launcher.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m corpus_assets.backfill", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--from", dest="first", required=True, help="first day, YYYY-MM-DD")
    parser.add_argument("--to", dest="last", required=True, help="last day, YYYY-MM-DD (inclusive)")
    parser.add_argument("--timeout-hours", type=float, default=72.0)
    parser.add_argument("--submit", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        days = days_between(args.first, args.last)
    except ValueError as exc:
        print(f"make backfill: {exc}", file=sys.stderr)
        return 2
    today = dt.datetime.now(dt.UTC).date().isoformat()
    days = [d for d in days if d < today]
    if not days:
        print("make backfill: no complete day in the range", file=sys.stderr)
        return 2
    if args.submit:
        return submit_main(days)

    import subprocess

    import dagster as dg

    instance = dg.DagsterInstance.get()
    served = daemon_running(instance)  # also creates the instance's databases before the child opens them
    if not served and not os.environ.get("CORPUS_DAYS_PER_RUN", "").strip():
        limit = instance.get_concurrency_config().run_queue_config.max_concurrent_runs
        side_by_side = limit if limit and limit > 0 else (os.cpu_count() or 1)
        os.environ["CORPUS_DAYS_PER_RUN"] = str(days_per_run_for(len(days), side_by_side))
        print(
            f"  runs of {os.environ['CORPUS_DAYS_PER_RUN']} day(s), {side_by_side} side by side", flush=True
        )
    # The range is checked and submitted by a child (the project's code never stays in this
    # process) while this process starts the daemons and their code server: both load the
    # definitions, on two cores at once.
    child = subprocess.Popen(
        [sys.executable, "-m", "corpus_assets.backfill", "--submit", "--from", days[0], "--to", days[-1]],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = time.perf_counter()
    with ExitStack() as stack:
        on_stall = None
        if served:
            print("  a Dagster daemon serves this instance: it runs the backfill", flush=True)
            on_stall = lambda: serve_daemons(stack, instance)  # noqa: E731
        else:
            serve_daemons(stack, instance)
        out, err = child.communicate()
        found = [line.split()[1] for line in out.splitlines() if line.startswith("BACKFILL ")]
        if child.returncode or not found:
            sys.stderr.write(err)
            return child.returncode or 1
        backfill_id = found[0]
        print(f"backfill {backfill_id}: {len(days)} day(s) {days[0]}..{days[-1]}", flush=True)
        status, runs = wait(instance, backfill_id, args.timeout_hours * 3600, on_stall)
    took = time.perf_counter() - started
    failed = runs.get("FAILURE", 0) + runs.get("CANCELED", 0)
    print(f"backfill {backfill_id}: {status} in {took:.0f}s; {sum(runs.values())} run(s), {failed} failed")
    return 0 if status == "COMPLETED_SUCCESS" and not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
