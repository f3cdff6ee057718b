"""Every use of Dagster's private modules (``dagster._...``), in one place.

Dagster is pinned (1.13.27) and upgraded in place; a private module may change at any release
without notice. Everything else in corpus_assets/, sensors/, resources/, benchmarks/ and tests/
uses Dagster's public API only (``import dagster as dg``, the ``dagster-graphql`` command, the
GraphQL schema the UI uses), and tests/test_house.py counts the private imports outside this
module: none. Each entry below says what it uses, why no public API serves, and the test that
fails if an upgrade changes it; an upgrade reads this module first.

Used by the project:

1. **Storage classes named in dagster.yaml** (:mod:`corpus_assets.event_log`,
   :mod:`corpus_assets.compute_logs`): Dagster's SQLite event log and local compute log
   manager, subclassed. An instance's storage is configured by class; Dagster exports no storage
   class to extend. Tests: tests/test_event_log.py, tests/test_compute_logs.py.
2. **The run launcher's health check** (:class:`corpus_assets.run_monitoring.LocalRunLauncher`):
   ``CheckRunHealthResult`` and ``WorkerStatus``, the types run monitoring asks a launcher for;
   ``dg.DefaultRunLauncher`` is public, what its health check returns is not. Test:
   tests/test_run_safety.py::test_launcher_judges_the_recorded_worker.
3. **Metadata on an engine event** (:func:`engine_event_data`): ``DagsterInstance.report_engine_event``
   is public but takes its metadata as ``EngineEventData``, which is not exported. A run's own
   log is where the run's worker process and a cross-day asset's read mark are kept. Tests:
   tests/test_run_safety.py::test_launcher_judges_the_recorded_worker,
   tests/test_freshness.py::test_a_graph_asset_s_mark_is_kept_in_its_run_s_log_and_found_by_a_retry.
4. **Backfills' state** (:func:`unfinished_backfill_ids`, :func:`backfill_state`): the instance's
   ``get_backfills`` filters by ``BulkActionsFilter`` / ``BulkActionStatus``, and a backfill's end is
   one of ``BULK_ACTION_TERMINAL_STATUSES``; none is exported. (Backfills are *made* through the
   public GraphQL mutation the UI uses: :func:`corpus_assets.backfill.launch_backfill`.) Tests:
   tests/test_dagster_internals.py, tests/test_backfill.py.
5. **Dagster's daemons inside ``make backfill`` / ``make rederive``** (:func:`serve_daemons`): the
   backfill, run-queue and run-monitoring daemons, without the sensor daemon (``dagster-daemon
   run`` would start the sensors too, and the landing sensor would build more than the range),
   the backfill one iterating every 2 s instead of every 30 s. Test:
   tests/test_backfill.py::test_backfill_runs_side_by_side_and_equals_single_day_runs.
6. **Runs of the code location executed in this process** (:class:`InProcessLocation`,
   ``make demo``): a run made from the code location's origins, so the UI files it under its job,
   and executed here. ``execute_in_process`` / ``dg.execute_job`` make runs with no code location
   (the UI shows them under no job); ``dagster job launch`` needs a daemon to dequeue them. Test:
   tests/test_ui_reads.py::test_a_run_of_make_demo_is_listed_under_its_job_as_the_ui_lists_them.
7. **Cron ticks** (:func:`latest_cron_tick`, :func:`next_cron_tick`, :func:`is_cron`): when the
   cross-day assets may catch up (``CORPUS_GRAPH_CRON``), the same cron arithmetic schedules use;
   Dagster exports schedules, not their tick iterator. Test: tests/test_dagster_internals.py.

Used by tests only (what they build or run is Dagster's own, not the project's):
``dagster_instance_config`` (validates dagster.yaml as Dagster reads it), ``create_run_for_test``
and the remote origins (runs and sensor states that look launched from the code location),
``RepositorySnap`` (what the UI reads about an asset), the run-monitoring and pool-slot daemon
iterations (driven once), the interrupt helpers a step runs under, an asset backfill
(``PartitionBackfill``) and the K8s launcher's ``LaunchRunContext``. Each is imported by the test
that uses it, which fails if it changes.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

# 1. Storage classes named in dagster.yaml
from dagster._core.execution.compute_logs import redirect_to_file
from dagster._core.launcher import CheckRunHealthResult, WorkerStatus  # 2.
from dagster._core.storage.compute_log_manager import CapturedLogContext, ComputeIOType
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
    SqliteEventLogStorageWatchdog,
)
from dagster._core.storage.local_compute_log_manager import IO_TYPE_EXTENSION, LocalComputeLogManager

__all__ = [
    "IO_TYPE_EXTENSION",
    "SQLITE_BUSY_TIMEOUT_SECONDS",
    "CapturedLogContext",
    "CheckRunHealthResult",
    "ComputeIOType",
    "InProcessLocation",
    "LocalComputeLogManager",
    "SqliteEventLogStorage",
    "SqliteEventLogStorageWatchdog",
    "WorkerStatus",
    "backfill_state",
    "engine_event_data",
    "is_cron",
    "latest_cron_tick",
    "next_cron_tick",
    "redirect_to_file",
    "serve_daemons",
    "unfinished_backfill_ids",
]


# --------------------------------------------------------------------------- 3. engine events


def engine_event_data(metadata: dict[str, Any]):
    """What ``DagsterInstance.report_engine_event`` takes as its event's metadata."""
    from dagster._core.events import EngineEventData

    return EngineEventData(metadata=metadata)


# --------------------------------------------------------------------------- 4. backfills' state

UNFINISHED = ("REQUESTED", "CANCELING", "FAILING")  # a backfill still submitting or ending its runs


def unfinished_backfill_ids(instance) -> list[str]:
    """The ids of the instance's backfills not finished (:data:`UNFINISHED`), newest first."""
    from dagster._core.execution.backfill import BulkActionsFilter, BulkActionStatus

    statuses = [BulkActionStatus(s) for s in UNFINISHED]
    return [b.backfill_id for b in instance.get_backfills(filters=BulkActionsFilter(statuses=statuses))]


def unfinished_backfills(instance) -> list:
    """The instance's backfills not finished, as Dagster stores them (their asset selection or
    job name say what they write)."""
    from dagster._core.execution.backfill import BulkActionsFilter, BulkActionStatus

    statuses = [BulkActionStatus(s) for s in UNFINISHED]
    return list(instance.get_backfills(filters=BulkActionsFilter(statuses=statuses)))


def backfill_state(instance, backfill_id: str) -> tuple[str, bool]:
    """``(status, ended)`` of a backfill: its status's name and whether it is one Dagster ends a
    backfill with (its runs may still be finishing)."""
    from dagster._core.execution.backfill import BULK_ACTION_TERMINAL_STATUSES

    backfill = instance.get_backfill(backfill_id)
    if backfill is None:
        return "NOT_FOUND", True
    return backfill.status.value, backfill.status in BULK_ACTION_TERMINAL_STATUSES


# --------------------------------------------------------------------------- 5. daemons in process

POLL_S = 2.0
IDLE_PER_BUSY = 5.0  # the in-command backfill daemon sleeps >= 5x its last iteration: <= 1/6 of a core


def _prompt_backfill_daemon(instance):
    """Dagster's backfill daemon, iterating every :data:`POLL_S` instead of every 30 s (a fixed
    interval in Dagster): it marks a backfill complete only on an iteration after its last run
    ends, so a day's backfill that ran in 10 s was reported after 35. After an iteration that
    takes long (a range of years) it waits :data:`IDLE_PER_BUSY` times that iteration's length,
    so it never keeps a core busy."""
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


def serve_daemons(stack: ExitStack, instance, workspace: Path) -> None:
    """Run the backfill, run-queue and run-monitoring daemons in this process until ``stack``
    closes; their heartbeats are wiped on the way out, so the next command does not take them
    for a daemon that still serves the instance (a live daemon writes its heartbeat again within
    30 s)."""
    from dagster._core.workspace.load_target import WorkspaceFileTarget
    from dagster._daemon.controller import create_daemon_of_type, daemon_controller_from_instance

    def daemons(inst):
        others = [create_daemon_of_type(t, inst) for t in ("QUEUED_RUN_COORDINATOR", "MONITORING")]
        return [_prompt_backfill_daemon(inst), *others]

    stack.callback(instance.wipe_daemon_heartbeats)
    stack.enter_context(
        daemon_controller_from_instance(
            instance,
            WorkspaceFileTarget(paths=[str(workspace)]),
            gen_daemons=daemons,
            log_level="warning",
        )
    )


# --------------------------------------------------------------------------- 6. runs executed here


class InProcessLocation:
    """A code location loaded in this process (the one ``workspace.yaml`` names, built from the
    same module and working directory), making runs the way the UI and ``dagster job launch``
    make them and executing them here."""

    def __init__(self, instance, module: str, working_directory: Path, location_name: str):
        from dagster._core.remote_origin import InProcessCodeLocationOrigin
        from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

        self.instance = instance
        origin = InProcessCodeLocationOrigin(
            loadable_target_origin=LoadableTargetOrigin(
                executable_path=sys.executable, module_name=module, working_directory=str(working_directory)
            ),
            location_name=location_name,
        )
        self.location = origin.create_location(instance)
        self.repo = next(iter(self.location.get_repositories().values()))

    def execute(self, job_name: str, run_config: dict, tags: dict, asset_selection) -> str:
        """Create a run of ``job_name`` from its definition, given the code location's origins
        (``DagsterInstance.create_run_for_job``, what Dagster's own ``execute_job`` uses), execute
        it here; returns its id."""
        from dagster._core.execution.api import execute_run
        from dagster._utils.hosted_user_process import recon_job_from_origin

        remote_job = self.repo.get_full_job(job_name)
        job = recon_job_from_origin(remote_job.get_python_origin())
        definition = job.get_definition()
        run = self.instance.create_run_for_job(
            definition,
            run_config=run_config,
            tags={**definition.run_tags, **tags},
            asset_selection=asset_selection,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=job.get_python_origin(),
        )
        execute_run(job, run, self.instance)
        return run.run_id

    def close(self) -> None:
        self.location.cleanup()


# --------------------------------------------------------------------------- 7. cron ticks


def is_cron(value: str) -> bool:
    """Whether ``value`` is a cron string Dagster schedules accept."""
    from dagster._utils.schedules import is_valid_cron_string

    return is_valid_cron_string(value)


def latest_cron_tick(cron: str, at: dt.datetime) -> dt.datetime:
    """The latest tick of ``cron`` (UTC) at or before ``at``."""
    from dagster._utils.schedules import get_latest_completed_cron_tick

    return get_latest_completed_cron_tick(cron, at, "UTC")


def next_cron_tick(cron: str, at: dt.datetime) -> dt.datetime:
    """The first tick of ``cron`` (UTC) at or after ``at``."""
    from dagster._utils.schedules import get_next_cron_tick

    return get_next_cron_tick(cron, at, "UTC")


# --------------------------------------------------------------------------- tests only


def instance_config_problems(dagster_home: str) -> None:
    """Validate ``dagster_home``'s dagster.yaml as Dagster does when it opens the instance
    (raises on an error)."""
    from dagster._core.instance.config import dagster_instance_config

    dagster_instance_config(dagster_home)


def create_test_run(instance, **kwargs):
    """A run stored on ``instance`` as Dagster's own tests make one (any status, origins)."""
    from dagster._core.test_utils import create_run_for_test

    return create_run_for_test(instance, **kwargs)


def remote_repository_origin(location: str = "corpus", repository: str = "__repository__", grpc=None):
    """The origin of a repository of a code location, as the daemons name one: registered by name,
    or served by a gRPC server ``grpc=(host, port)``."""
    from dagster._core.remote_origin import (
        GrpcServerCodeLocationOrigin,
        RegisteredCodeLocationOrigin,
        RemoteRepositoryOrigin,
    )

    if grpc is not None:
        host, port = grpc
        location_origin = GrpcServerCodeLocationOrigin(host=host, port=port, location_name=location)
    else:
        location_origin = RegisteredCodeLocationOrigin(location)
    return RemoteRepositoryOrigin(location_origin, repository)


def job_python_origin(job: str, module: str, executable: str, image: str | None, container_context: dict):
    """Where a run's job is loaded from in its process (what a run launcher hands its worker)."""
    from dagster._core.code_pointer import ModuleCodePointer
    from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin

    repo = RepositoryPythonOrigin(
        executable_path=executable,
        code_pointer=ModuleCodePointer(module, "defs", working_directory=None),
        container_image=image,
        container_context=container_context,
    )
    return JobPythonOrigin(job, repo)


def launch_run_context(run):
    """What ``RunLauncher.launch_run`` is called with."""
    from dagster._core.launcher import LaunchRunContext

    return LaunchRunContext(dagster_run=run, workspace=None)


def add_sensor_tick(instance, sensor: str, skip_reason: str):
    """A running sensor's state and one skipped tick of it, stored as the sensor daemon stores them;
    returns ``(stored state, ticks)`` read back."""
    from dagster._core.definitions.run_request import InstigatorType
    from dagster._core.remote_origin import RemoteInstigatorOrigin
    from dagster._core.scheduler.instigation import InstigatorState, InstigatorStatus, TickData, TickStatus

    origin = RemoteInstigatorOrigin(remote_repository_origin(), sensor)
    state = InstigatorState(origin, InstigatorType.SENSOR, InstigatorStatus.RUNNING)
    instance.add_instigator_state(state)
    tick = instance.create_tick(
        TickData(
            instigator_origin_id=origin.get_id(),
            instigator_name=sensor,
            instigator_type=InstigatorType.SENSOR,
            status=TickStatus.STARTED,
            timestamp=time.time(),
            selector_id=state.selector_id,
        )
    )
    instance.update_tick(tick.with_status(TickStatus.SKIPPED).with_reason(skip_reason))
    stored = instance.get_instigator_state(origin.get_id(), state.selector_id)
    return stored, instance.get_ticks(origin.get_id(), state.selector_id)


def asset_job_names(repository_def) -> dict[str, list[str]]:
    """``{asset: job names}`` as the UI reads them (its Materialize runs the first)."""
    from dagster._core.remote_representation.external_data import RepositorySnap

    snap = RepositorySnap.from_def(repository_def)
    return {n.asset_key.to_user_string(): list(n.job_names) for n in snap.asset_nodes}


def check_job_names(repository_def) -> dict[tuple[str, str], list[str]]:
    """``{(asset, check): job names}`` as the UI reads them (a check's Execute runs the first)."""
    from dagster._core.remote_representation.external_data import RepositorySnap

    snap = RepositorySnap.from_def(repository_def)
    return {(n.asset_key.to_user_string(), n.name): list(n.job_names) for n in snap.asset_check_nodes}


def monitor_runs_once(instance, logger) -> None:
    """The daemon's run monitoring loop, once, as it runs every poll_interval_seconds."""
    from types import SimpleNamespace

    from dagster._daemon.monitoring.run_monitoring import execute_run_monitoring_iteration

    daemon = SimpleNamespace(instance=instance, create_request_context=lambda: None)
    list(execute_run_monitoring_iteration(daemon, logger))


def free_pool_slots_once(instance, logger) -> None:
    """The daemon's loop that frees finished runs' pool slots, once."""
    from types import SimpleNamespace

    from dagster._daemon.monitoring.concurrency import execute_concurrency_slots_iteration

    daemon = SimpleNamespace(instance=instance, create_request_context=lambda: None)
    list(execute_concurrency_slots_iteration(daemon, logger))


def interrupts_raised_as_step():
    """The context a step runs in: an interrupt raises Dagster's ``DagsterExecutionInterruptedError``."""
    import dagster as dg
    from dagster._utils.interrupts import raise_interrupts_as

    return raise_interrupts_as(dg.DagsterExecutionInterruptedError)


def interrupts_captured() -> Iterator[None]:
    """The context Dagster's step processes run in: SIGINT / SIGTERM deferred until it ends."""
    from dagster._utils.interrupts import capture_interrupts

    return capture_interrupts()


class AssetBackfill:
    """An asset backfill of ``assets`` over ``days`` (the asset catalog's kind), made but not
    stored until :meth:`add`."""

    def __init__(self, instance, asset_graph, days: list[str], assets: list, title: str, at: float):
        from dagster._core.execution.backfill import PartitionBackfill
        from dagster._core.utils import make_new_backfill_id

        self.instance = instance
        self.backfill = PartitionBackfill.from_asset_partitions(
            backfill_id=make_new_backfill_id(),
            asset_graph=asset_graph,
            partition_names=days,
            asset_selection=assets,
            backfill_timestamp=at,
            tags={},
            dynamic_partitions_store=instance,
            all_partitions=False,
            title=title,
            description=None,
            run_config=None,
        )
        self.backfill_id = self.backfill.backfill_id

    def add(self) -> None:
        """Stored as requested: in progress from here."""
        self.instance.add_backfill(self.backfill)

    def complete(self) -> None:
        """Marked as completed successfully."""
        from dagster._core.execution.backfill import BulkActionStatus

        self.instance.update_backfill(self.backfill.with_status(BulkActionStatus.COMPLETED_SUCCESS))


def repository_label_tag() -> str:
    """The hidden run tag by which the UI lists a job's runs of one code location."""
    from dagster._core.storage.tags import REPOSITORY_LABEL_TAG

    return REPOSITORY_LABEL_TAG
