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


ANSWER = "__typename ... on LaunchBackfillSuccess { backfillId } ... on Error { message }"


class BackfillRefused(RuntimeError):
    """Dagster refused a backfill (the message is its own: a day outside the partitions ...)."""


def _graphql_command() -> list[str]:
    """``dagster-graphql``, from the interpreter's own environment when it is there."""
    beside = Path(sys.executable).with_name("dagster-graphql")
    return [str(beside)] if beside.exists() else ["dagster-graphql"]


def _literal(value) -> str:
    """``value`` (dicts, lists, strings, numbers) as a GraphQL input literal."""
    import json

    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return json.dumps(value)  # a JSON string or number is a GraphQL one


def workspace_file() -> Path:
    """The workspace the instance's daemons load: ``$DAGSTER_HOME/workspace.yaml`` where there is
    one (the compose image: the code server over gRPC), else this checkout's (``make ui``'s)."""
    home = os.environ.get("DAGSTER_HOME")
    beside = Path(home) / "workspace.yaml" if home else None
    return beside if beside is not None and beside.is_file() else REPO / "workspace.yaml"


def launch_backfills(requests: list[dict], workspace: Path | None = None) -> list[str]:
    """Job backfills of ``corpus_daily``, one per request (``days``, ``assets``, ``tags``,
    ``title``), made by the GraphQL mutation the job page's "Materialize all" sends, through
    Dagster's ``dagster-graphql`` command (which loads the code location of ``workspace`` the way
    the daemons do, so they find it): its runs are ``corpus_daily`` runs, under the job in the UI,
    cut into ranges by the assets' backfill policy, their logs quiet in the terminal
    (:data:`QUIET`; the UI has them whole). Returns the backfills' ids, in order; raises
    :class:`BackfillRefused` with Dagster's message if one is refused.

    Its row in the UI names the assets it builds beside the job's partition set
    (``corpus_daily_partition_set``: Dagster's name for the days of a job). Its runs also
    evaluate the daily assets' checks of the assets it names: Dagster subsets the job by those
    assets with every check of them."""
    import json
    import subprocess
    import tempfile

    from corpus_assets.jobs import DAILY_JOB

    workspace = workspace or workspace_file()
    from corpus_assets.launch import LOCATION

    params = [
        {
            "selector": {
                "partitionSetName": f"{DAILY_JOB}_partition_set",
                "repositorySelector": {
                    "repositoryName": "__repository__",
                    "repositoryLocationName": LOCATION,
                },
            },
            "partitionNames": list(r["days"]),
            "assetSelection": [{"path": [a]} for a in sorted(r["assets"])],
            "tags": [{"key": k, "value": v} for k, v in sorted(r.get("tags", {}).items())],
            "title": r["title"],
            "runConfigData": QUIET,
        }
        for r in requests
    ]
    # One document, one mutation per backfill (one load of the code location for all of them),
    # read from a file: a range of all of arXiv is longer than one command-line argument may be.
    document = "mutation Launch {{ {} }}".format(
        " ".join(
            f"b{i}: launchPartitionBackfill(backfillParams: {_literal(p)}) {{ {ANSWER} }}"
            for i, p in enumerate(params)
        )
    )
    with tempfile.TemporaryDirectory(prefix="corpus-backfill-") as tmp:
        query, out = Path(tmp) / "launch.graphql", Path(tmp) / "result.json"
        query.write_text(document)
        command = [*_graphql_command(), "-w", str(workspace), "--file", str(query), "-o", str(out)]
        done = subprocess.run(command, cwd=workspace.parent, capture_output=True, text=True, check=False)
        if done.returncode or not out.exists():
            raise BackfillRefused(f"dagster-graphql failed ({done.returncode}): {done.stderr[-2000:]}")
        result = json.loads(out.read_text())
    if result.get("errors"):
        raise BackfillRefused("; ".join(e.get("message", str(e)) for e in result["errors"]))
    ids = []
    for i in range(len(params)):
        answer = result["data"][f"b{i}"]
        if answer["__typename"] != "LaunchBackfillSuccess":
            raise BackfillRefused(f"{answer['__typename']}: {answer.get('message', '')}")
        ids.append(answer["backfillId"])
    return ids


def serve_daemons(stack: ExitStack, instance) -> None:
    """Run the backfill, run-queue and run-monitoring daemons in this process until exit (not
    the sensors: nothing but what this command asked for is built), the backfill daemon
    iterating every 2 s instead of Dagster's 30 (corpus_assets/dagster_internals.py, 5)."""
    from corpus_assets.dagster_internals import serve_daemons as serve

    serve(stack, instance, workspace_file())


RUNNING = ("QUEUED", "NOT_STARTED", "STARTING", "STARTED", "CANCELING")


def wait(instance, backfill_id: str, timeout_s: float, on_stall=None) -> tuple[str, Counter]:
    """Poll until the backfill ends; print progress when it changes. Returns (status, runs by
    status). ``on_stall`` is called once if nothing has happened after STALL_S (the daemon
    thought to serve the instance is gone): it starts daemons here."""
    import dagster as dg

    from corpus_assets.dagster_internals import backfill_state

    started = time.monotonic()
    deadline = started + timeout_s
    last = None
    while True:
        status, ended = backfill_state(instance, backfill_id)
        runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
        statuses = Counter(r.status.value for r in runs)
        line = f"  backfill {backfill_id}: {status}; runs " + (
            ", ".join(f"{k.lower()} {v}" for k, v in sorted(statuses.items())) or "none yet"
        )
        if line != last:
            print(line, flush=True)
            last = line
        if ended and not any(s in statuses for s in RUNNING):
            return status, statuses
        if time.monotonic() > deadline:
            return "TIMED_OUT", statuses
        if on_stall is not None and not runs and time.monotonic() > started + STALL_S:
            print("  no daemon picked the backfill up: starting one here", flush=True)
            on_stall()
            on_stall = None
        time.sleep(POLL_S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m corpus_assets.backfill", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--from", dest="first", required=True, help="first day, YYYY-MM-DD")
    parser.add_argument("--to", dest="last", required=True, help="last day, YYYY-MM-DD (inclusive)")
    parser.add_argument("--timeout-hours", type=float, default=72.0)
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
    from corpus_assets.partitions import start_date

    if days[0] < start_date():
        print(f"make backfill: {days[0]} is before the first partition {start_date()}", file=sys.stderr)
        return 2

    from concurrent.futures import ThreadPoolExecutor

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
    from corpus_assets.jobs import DAILY_ASSETS

    request = {"days": days, "assets": DAILY_ASSETS, "title": f"make backfill {days[0]}..{days[-1]}"}
    started = time.perf_counter()
    # The backfill is made by dagster-graphql (a child process: the project's code never stays in
    # this one) while this process starts the daemons and their code server, on two cores at once.
    with ThreadPoolExecutor(1) as pool, ExitStack() as stack:
        submitted = pool.submit(launch_backfills, [request])
        on_stall = None
        if served:
            print("  a Dagster daemon serves this instance: it runs the backfill", flush=True)
            on_stall = lambda: serve_daemons(stack, instance)  # noqa: E731
        else:
            serve_daemons(stack, instance)
        try:
            (backfill_id,) = submitted.result()
        except BackfillRefused as exc:
            print(f"make backfill: {exc}", file=sys.stderr)
            return 1
        print(f"backfill {backfill_id}: {len(days)} day(s) {days[0]}..{days[-1]}", flush=True)
        status, runs = wait(instance, backfill_id, args.timeout_hours * 3600, on_stall)
    took = time.perf_counter() - started
    failed = runs.get("FAILURE", 0) + runs.get("CANCELED", 0)
    print(f"backfill {backfill_id}: {status} in {took:.0f}s; {sum(runs.values())} run(s), {failed} failed")
    return 0 if status == "COMPLETED_SUCCESS" and not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
