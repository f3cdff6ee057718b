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
  ``dagster job execute``, ``execute_in_process``), which records itself in the run's
  tags when it sets up :class:`resources.store.CorpusStore` (:func:`record_run_worker`).

A worker is gone when no process has its pid, or it is a zombie, or the pid now
belongs to a process started later (pid reuse: the start time is compared). A worker on
another host, or a run with no worker recorded, is not judged. Docker and Kubernetes
launchers check their containers and pods themselves.

A run that stops progressing (a stage stuck outside the per-paper time limits of
``corpus.parallel``: a lock, a read that never returns) is alive, so the health check
passes it; Dagster's maximum runtime fails it instead. The daily jobs carry
``dagster/max_runtime`` (:func:`daily_run_tags`: ``CORPUS_RUN_TIMEOUT_S_PER_DAY``, one hour
by default, times the days a run covers), every other run the instance's
``run_monitoring.max_runtime_seconds``. Dagster then asks the launcher to terminate the run:
Dagster's own way reaches runs it launched through a code server; for a run executed in
its own process (``dagster asset materialize``, a code server restarted since) this
launcher interrupts the recorded worker as Ctrl-C would (the step fails, the Pipes worker
is interrupted too), and kills it when it does not end.

A step that waits for a pool slot while one is free is handed it (:func:`assign_free_pool_slots`,
the ``pool_slots`` sensor): Dagster 1.13.27 gives a waiting step a slot only when another step
frees one, and a slot freed while a step was queueing itself is given to nobody.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import time
from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster._core.events import DagsterEventType
from dagster._core.launcher import CheckRunHealthResult, WorkerStatus
from dagster._core.storage.dagster_run import DagsterRun

WORKER_TAG = "corpus/run_worker"
RUNTIME_PER_DAY_ENV = "CORPUS_RUN_TIMEOUT_S_PER_DAY"
# A day of arXiv (1,000-1,500 papers) takes minutes on a laptop, Grobid included; an hour a day
# is a run that has stopped, not a slow one.
DEFAULT_RUNTIME_PER_DAY_S = 3600
INTERRUPT_GRACE_S = (
    30.0  # after Ctrl-C, before kill -9  # "<pid>@<host>:<start ticks>" of the process executing the run
)
POOL_WAIT_GRACE_S = 10.0  # a step queued this recently may still be handed its slot by Dagster itself
_PID_EVENT = re.compile(r"Started process for (?:run|resuming job) \(pid: (\d+)\)")


def process_start(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, /proc), "" where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    return fields[19].decode() if len(fields) > 19 else ""  # field 22 of stat(5)


def worker_identity(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{pid}@{socket.gethostname()}:{process_start(pid)}"


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
    """Tag ``run`` with this process when it executes the run's steps itself (the in-process
    executor: ``CORPUS_EXECUTOR`` unset or ``inprocess``), so :class:`LocalRunLauncher` can
    tell when it is gone. Step workers of other executors never tag: their end is not the run's."""
    from corpus_assets.deployment import executor_kind

    if instance is None or run is None or executor_kind() != "inprocess":
        return
    import multiprocessing

    if multiprocessing.parent_process() is not None:  # a multiprocessing child: a step, not the run
        return
    identity = worker_identity()
    if run.tags.get(WORKER_TAG) != identity:
        instance.add_run_tags(run.run_id, {WORKER_TAG: identity})


def run_worker(instance: dg.DagsterInstance, run: DagsterRun) -> tuple[int, str, str] | None:
    """``(pid, host, start)`` of the process executing ``run``, or None when none is known."""
    events = instance.all_logs(run.run_id, of_type=DagsterEventType.ENGINE_EVENT)
    for event in reversed(events):
        m = _PID_EVENT.search(event.message or "")
        if m:
            return int(m.group(1)), socket.gethostname(), ""  # launched beside this daemon
    fresh = instance.get_run_by_id(run.run_id) or run
    tag = fresh.tags.get(WORKER_TAG)
    m = re.fullmatch(r"(\d+)@(.*):(\d*)", tag or "")
    return (int(m.group(1)), m.group(2), m.group(3)) if m else None


def daily_run_tags() -> dict[str, str]:
    """``dagster/max_runtime`` of a daily job's runs: ``CORPUS_RUN_TIMEOUT_S_PER_DAY`` (default
    :data:`DEFAULT_RUNTIME_PER_DAY_S`; ``0``: the instance's limit only) times the days a
    backfill run covers (``CORPUS_DAYS_PER_RUN``)."""
    from dagster._core.storage.tags import MAX_RUNTIME_SECONDS_TAG

    from corpus_assets.partitions import days_per_run

    raw = os.environ.get(RUNTIME_PER_DAY_ENV, "").strip()
    try:
        per_day = float(raw) if raw else DEFAULT_RUNTIME_PER_DAY_S
    except ValueError as exc:
        raise ValueError(f"{RUNTIME_PER_DAY_ENV}={raw!r} is not a number of seconds") from exc
    if per_day <= 0:
        return {}
    return {MAX_RUNTIME_SECONDS_TAG: str(int(per_day * days_per_run()))}


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
    whole maximum runtime). Steps queued less than ``grace_s`` ago are left to Dagster.
    """
    from dagster._core.storage.dagster_run import RunsFilter

    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return {}
    now = time.time()
    given: dict[str, int] = {}
    for key in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(key)  # read again per pool: it moves while we look
        assigned = sum(1 for step in info.pending_steps if step.assigned_timestamp is not None)
        waiting = [
            step
            for step in info.pending_steps
            if step.assigned_timestamp is None and step.enqueued_timestamp.timestamp() <= now - grace_s
        ]
        if not waiting or info.slot_count <= assigned:
            continue
        runs = instance.get_runs(RunsFilter(run_ids=sorted({step.run_id for step in waiting})))
        live = {run.run_id for run in runs if not run.is_finished}  # a dead run's steps: the daemon's
        count = min(info.slot_count - assigned, sum(1 for step in waiting if step.run_id in live))
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
