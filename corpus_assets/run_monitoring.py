"""Dead runs are failed and their pool slots freed: the local instance's run launcher.

A run whose process is killed (``kill -9``, the OOM killer, a crashed laptop) stays
STARTED for ever, holding its pool slot (``arxiv_api``, ``grobid``): the next run on
the instance waits for a slot that never comes back. Dagster's run monitoring (the
daemon, ``run_monitoring`` in dagster.yaml) fails such a run when the run launcher can
tell its worker is gone, and the daemon's concurrency loop then frees the slots of
finished runs (``free_slots_after_run_end_seconds``). Dagster's DefaultRunLauncher
cannot tell (``supports_check_run_worker_health`` is False); :class:`LocalRunLauncher`
is that launcher plus a check of the worker process:

* the process Dagster names in the run's "Started process for run (pid: N)" event
  (runs launched by the daemon or the UI, ``dagster api execute_run``), else
* the process that executes the run in process (``dagster asset materialize``,
  ``dagster job execute``, ``execute_in_process``, ``make demo``), which names itself in an
  engine event of the run's log when it sets up :class:`resources.store.CorpusStore`
  (:func:`record_run_worker`).

A worker is gone when no process has its pid, or it is a zombie, or the pid now
belongs to a process started later (pid reuse: the start time is compared). A worker on
another host, or a run with no worker recorded, is not judged. Docker and Kubernetes
launchers check their containers and pods themselves.

A run that stops progressing (a stage stuck outside the per-paper time limits of
``corpus.parallel``: a lock, a read that never returns) is alive, so the health check
passes it; Dagster's maximum runtime fails it instead. A run of daily partitions sets its own
``dagster/max_runtime`` when it starts (:func:`set_max_runtime`: ``CORPUS_RUN_TIMEOUT_S_PER_DAY``,
one hour by default, times the days the run covers: a run of one day 3,600 s, a backfill run of
16 days 57,600 s); every other run has the instance's ``run_monitoring.max_runtime_seconds``. Dagster then asks the launcher to terminate the run:
Dagster's own way reaches runs it launched through a code server; for a run executed in
its own process (``dagster asset materialize``, a code server restarted since) this
launcher interrupts the recorded worker as Ctrl-C would (the step fails, the Pipes worker
is interrupted too), and kills it when it does not end.

A step that waits for a pool slot while one is free is handed it (:func:`assign_free_pool_slots`,
the ``pool_slots`` sensor): Dagster 1.13.27 gives a waiting step a slot only when another step
frees one, and a slot freed while a step was queueing itself is given to nobody.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import socket
import time
from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster import DagsterRun

from corpus_assets.dagster_internals import (  # what a health check returns (dagster_internals, 2)
    CheckRunHealthResult,
    WorkerStatus,
    engine_event_data,
)
from resources.store import RUN_START_HOOKS

RUNTIME_PER_DAY_ENV = "CORPUS_RUN_TIMEOUT_S_PER_DAY"
# A day of arXiv (1,000-1,500 papers) takes minutes on a laptop, Grobid included; an hour a day
# is a run that has stopped, not a slow one.
DEFAULT_RUNTIME_PER_DAY_S = 3600
INTERRUPT_GRACE_S = 30.0  # after Ctrl-C, before kill -9
POOL_WAIT_GRACE_S = 10.0  # a step queued this recently may still be handed its slot by Dagster itself
_PID_EVENT = re.compile(r"Started process for (?:run|resuming job) \(pid: (\d+)\)")
WORKER_PID, WORKER_HOST, WORKER_START = "pid", "host", "process_start"  # the worker's engine event
# Dagster's documented tags of a run's partition, or of the range a backfill run covers.
PARTITION_TAG = "dagster/partition"
RANGE_START_TAG, RANGE_END_TAG = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def process_start(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, /proc), "" where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    return fields[19].decode() if len(fields) > 19 else ""  # field 22 of stat(5)


def process_alive(pid: int, start: str = "") -> bool:
    """Whether ``pid`` is a live process (not a zombie) that started at ``start`` (when given)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by someone else
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except OSError:
        return True  # no /proc (macOS): kill(0) is all we know
    if fields and fields[0] in (b"Z", b"X"):
        return False
    return not start or (len(fields) > 19 and fields[19].decode() == start)


def record_run_worker(instance: dg.DagsterInstance | None, run: DagsterRun | None) -> None:
    """Name this process in ``run``'s log (an engine event: pid, host, start time) when it
    executes the run's steps itself (the in-process executor: ``CORPUS_EXECUTOR`` unset or
    ``inprocess``), so :class:`LocalRunLauncher` can tell when it is gone. Nothing when the run's
    log names this process already (Dagster's own "Started process for run" of a launched run).
    Step workers of other executors never record: their end is not the run's."""
    from corpus_assets.deployment import executor_kind

    if instance is None or run is None or executor_kind() != "inprocess":
        return
    import multiprocessing

    if multiprocessing.parent_process() is not None:  # a multiprocessing child: a step, not the run
        return
    pid, host = os.getpid(), socket.gethostname()
    known = run_worker(instance, run)
    if known is not None and known[:2] == (pid, host):
        return
    instance.report_engine_event(
        f"Executing the run in process {pid} on {host}: if it dies, run monitoring fails the run.",
        run,
        engine_event_data(
            {
                WORKER_PID: dg.MetadataValue.int(pid),
                WORKER_HOST: dg.MetadataValue.text(host),
                WORKER_START: dg.MetadataValue.text(process_start(pid)),
            }
        ),
    )


def run_worker(instance: dg.DagsterInstance, run: DagsterRun) -> tuple[int, str, str] | None:
    """``(pid, host, start)`` of the process executing ``run`` (the latest its log names), or
    None when none is known."""
    for event in reversed(instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)):
        data = event.dagster_event.engine_event_data if event.dagster_event else None
        meta = data.metadata if data is not None else {}
        if WORKER_PID in meta and WORKER_HOST in meta:
            start = meta.get(WORKER_START)
            return (
                int(meta[WORKER_PID].value),
                str(meta[WORKER_HOST].value),
                str(start.value if start else ""),
            )
        m = _PID_EVENT.search(event.message or "")
        if m:
            return int(m.group(1)), socket.gethostname(), ""  # launched beside this daemon
    return None


def runtime_per_day() -> float:
    """``CORPUS_RUN_TIMEOUT_S_PER_DAY`` (default :data:`DEFAULT_RUNTIME_PER_DAY_S`; ``0``: none)."""
    raw = os.environ.get(RUNTIME_PER_DAY_ENV, "").strip()
    try:
        return float(raw) if raw else DEFAULT_RUNTIME_PER_DAY_S
    except ValueError as exc:
        raise ValueError(f"{RUNTIME_PER_DAY_ENV}={raw!r} is not a number of seconds") from exc


def run_days(tags: Mapping[str, str]) -> int | None:
    """How many daily partitions a run covers, from its tags (one partition, or a range as a
    backfill run has); None for a run of no partition."""
    if tags.get(PARTITION_TAG):
        return 1
    start, end = tags.get(RANGE_START_TAG), tags.get(RANGE_END_TAG)
    if not (start and end):
        return None
    try:
        return (dt.date.fromisoformat(end) - dt.date.fromisoformat(start)).days + 1
    except ValueError:
        return None


def max_runtime_tags(days: int | None) -> dict[str, str]:
    """``dagster/max_runtime`` of a run of ``days`` daily partitions: ``CORPUS_RUN_TIMEOUT_S_PER_DAY``
    times ``days``; none for a run of no partition or when the setting is 0 (the instance's
    limit then holds)."""
    per_day = runtime_per_day()
    if not days or per_day <= 0:
        return {}
    return {dg.MAX_RUNTIME_SECONDS_TAG: str(int(per_day * days))}


def set_max_runtime(instance: dg.DagsterInstance | None, run: DagsterRun | None) -> None:
    """Give a starting run of daily partitions its ``dagster/max_runtime`` by the days it covers
    (a job's tags are the same for a run of one day and a backfill run of 16); a run that has
    one (set by whoever launched it, or on an earlier start) keeps it. Run monitoring measures
    the runtime from the run's start, so a tag set now is in time."""
    if instance is None or run is None or dg.MAX_RUNTIME_SECONDS_TAG in run.tags:
        return
    tags = max_runtime_tags(run_days(run.tags))
    if tags:
        instance.add_run_tags(run.run_id, tags)


def on_run_start(context: dg.InitResourceContext) -> None:
    """What the store resource does in the process that executes a run (resources.store.RUN_START_HOOKS)."""
    set_max_runtime(context.instance, context.run)
    record_run_worker(context.instance, context.run)


if on_run_start not in RUN_START_HOOKS:
    RUN_START_HOOKS.append(on_run_start)


def _ended(pid: int, start: str, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while process_alive(pid, start):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


class LocalRunLauncher(dg.DefaultRunLauncher):
    """Dagster's DefaultRunLauncher that also answers run monitoring's health check."""

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Mapping[str, Any]) -> LocalRunLauncher:
        return cls(inst_data=inst_data)

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        worker = run_worker(self._instance, run)
        if worker is None:
            return CheckRunHealthResult(WorkerStatus.RUNNING, "no worker process recorded: not judged")
        pid, host, start = worker
        if host != socket.gethostname():
            return CheckRunHealthResult(WorkerStatus.RUNNING, f"worker {pid} runs on {host}: not judged")
        if process_alive(pid, start):
            return CheckRunHealthResult(WorkerStatus.RUNNING, f"worker process {pid} is alive")
        return CheckRunHealthResult(
            WorkerStatus.FAILED, f"the run's worker process {pid} on {host} is gone (killed or crashed)"
        )

    def terminate(self, run_id: str) -> bool:
        """Dagster's termination; where it cannot reach the run (no code server launched it), the
        recorded worker on this host is interrupted, then killed if it has not ended."""
        if super().terminate(run_id):
            return True
        run = self._instance.get_run_by_id(run_id)
        worker = None if run is None or run.is_finished else run_worker(self._instance, run)
        if worker is None or worker[1] != socket.gethostname() or not process_alive(worker[0], worker[2]):
            return False
        pid, _, start = worker
        self._instance.report_engine_event(f"Interrupting the run's worker process {pid}.", run)
        os.kill(pid, signal.SIGINT)  # Dagster's interrupt: the step fails and the run ends
        if _ended(pid, start, INTERRUPT_GRACE_S):
            return True
        self._instance.report_engine_event(
            f"The run's worker process {pid} did not end {INTERRUPT_GRACE_S:g} s after an interrupt: killed.",
            run,
        )
        os.kill(pid, signal.SIGKILL)
        return _ended(pid, start, 10)


def _free_and_waiting(info, queued_by: float) -> tuple[int, list]:
    """A pool's slots not assigned to a step, and its unassigned steps queued before ``queued_by``."""
    assigned = sum(1 for step in info.pending_steps if step.assigned_timestamp is not None)
    waiting = [
        step
        for step in info.pending_steps
        if step.assigned_timestamp is None and step.enqueued_timestamp.timestamp() <= queued_by
    ]
    return info.slot_count - assigned, waiting


def assign_free_pool_slots(
    instance: dg.DagsterInstance, grace_s: float = POOL_WAIT_GRACE_S
) -> dict[str, int]:
    """Hand each pool's free slots to the steps of live runs waiting for one; returns how many
    per pool.

    Dagster 1.13.27 queues a step for a pool (``claim_concurrency_slot``) by asking whether a
    slot is unassigned and then inserting the step, assigned or not by that answer; a step that
    frees its slot assigns it to the first step already queued. A slot freed between the two
    reads goes to nobody: the step waits for a free slot until some other step of the pool ends,
    for ever if none does (the last run of a backfill waited on a free ``grobid`` slot for its
    whole maximum runtime). Steps queued less than ``grace_s`` ago are left to Dagster. A
    finished run's queued steps are removed first, as run monitoring would, so that the slot goes
    to a live run's step.
    """
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return {}
    now = time.time()
    given: dict[str, int] = {}
    for key in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(key)  # read again per pool: it moves while we look
        free, waiting = _free_and_waiting(info, now - grace_s)
        if not waiting or free <= 0:
            continue
        runs = instance.get_runs(dg.RunsFilter(run_ids=sorted({step.run_id for step in waiting})))
        live = {run.run_id for run in runs if not run.is_finished}
        finished = [run.run_id for run in runs if run.is_finished]
        for run_id in finished:  # Dagster hands slots out in queue order: a dead run's step ahead
            storage.free_concurrency_slots_for_run(run_id)  # of a live one would take its slot
        if finished:
            free, waiting = _free_and_waiting(storage.get_concurrency_info(key), now - grace_s)
        count = min(free, sum(1 for step in waiting if step.run_id in live))
        for _ in range(count):
            storage.assign_pending_steps([key])  # the first queued step, as Dagster itself would
        if count:
            given[key] = count
    return given


@dg.sensor(
    name="pool_slots",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Hands a pool's free slots to steps left waiting for them (a race in Dagster 1.13.27 "
    "can leave a step waiting for a free slot until its run's maximum runtime).",
)
def pool_slots(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    given = assign_free_pool_slots(context.instance)
    if not given:
        return dg.SkipReason("no step waits for a free pool slot")
    for key, count in given.items():
        context.log.warning(f"pool {key}: {count} free slot(s) handed to steps waiting for them")
    return dg.SkipReason(
        "handed free slots to waiting steps: " + ", ".join(f"{k} {n}" for k, n in given.items())
    )
