"""Containers of finished runs removed (docker compose: ``CORPUS_DEPLOYMENT=docker``).

DockerRunLauncher starts one container per run and never removes it; a run killed mid-step
(``kill -9``, OOM) also leaves its Pipes worker running on, with nobody reading it. Exited
containers hold the data volumes, so ``docker compose down -v`` failed on them, and on a long
backfill they pile up by the thousand. This sensor removes the run containers and Pipes
workers of runs that have finished, a grace period after the end (the run container is still
exiting when its run reports success). A container that exited non-zero, or had to be
stopped, leaves the tail of its log in its run's event log first. Only containers of runs in
this instance are touched: other Dagster deployments on the same Docker host are left alone.
"""

from __future__ import annotations

import time

import dagster as dg

RUN_CONTAINER_LABEL = "io.corpus.run-container"  # docker/dagster.yaml puts it on run containers
GRACE_SECONDS = 60.0
LOG_TAIL_LINES = 40
STOP_TIMEOUT_SECONDS = 10


def finished_runs(instance: dg.DagsterInstance, run_ids: list[str], now: float) -> dict[str, dg.DagsterRun]:
    """The runs among ``run_ids`` that ended at least the grace period ago."""
    if not run_ids:
        return {}
    records = instance.get_run_records(dg.RunsFilter(run_ids=run_ids))
    return {
        r.dagster_run.run_id: r.dagster_run
        for r in records
        if r.dagster_run.is_finished and (r.end_time or r.update_timestamp.timestamp()) <= now - GRACE_SECONDS
    }


def remove_finished(instance: dg.DagsterInstance, client, now: float | None = None) -> dict[str, int]:
    """Remove the run and worker containers of finished runs; counts by kind."""
    from corpus_assets.deployment import RUN_ID_LABEL, WORKER_LABEL

    now = time.time() if now is None else now
    found = []
    for kind, label in (("run", RUN_CONTAINER_LABEL), ("worker", WORKER_LABEL)):
        for container in client.containers.list(all=True, filters={"label": [label, RUN_ID_LABEL]}):
            found.append((kind, container))
    runs = finished_runs(instance, sorted({c.labels[RUN_ID_LABEL] for _, c in found}), now)
    counts = {"run": 0, "worker": 0, "stopped": 0}
    for kind, container in found:
        run = runs.get(container.labels[RUN_ID_LABEL])
        if run is None:
            continue
        stopped = container.status in ("running", "restarting", "paused")
        if stopped:
            container.stop(timeout=STOP_TIMEOUT_SECONDS)
            container.reload()
            counts["stopped"] += 1
        code = container.attrs.get("State", {}).get("ExitCode", 0)
        if stopped or code != 0:
            tail = container.logs(tail=LOG_TAIL_LINES).decode("utf-8", "replace")
            what = "stopped after its run ended" if stopped else f"exited with code {code}"
            instance.report_engine_event(
                f"{kind} container {container.short_id} {what}; removed. Last lines of its log:\n{tail}",
                dagster_run=run,
            )
        container.remove(force=True)
        counts[kind] += 1
    return counts


@dg.sensor(
    name="docker_container_cleanup",
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Removes the run and Pipes worker containers of finished runs (docker compose).",
)
def docker_container_cleanup(context: dg.SensorEvaluationContext):
    import docker

    client = docker.from_env()
    try:
        counts = remove_finished(context.instance, client)
    finally:
        client.close()
    return dg.SkipReason(
        f"removed {counts['run']} run and {counts['worker']} worker containers of finished runs"
        + (f" ({counts['stopped']} still running, stopped)" if counts["stopped"] else "")
    )
