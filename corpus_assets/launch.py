"""Run a job of the ``corpus`` code location in this process as an ordinary run.

``JobDefinition.execute_in_process`` makes runs the UI cannot place: they carry no code
location, so they show neither under their job nor on the Overview timeline. Here a run is
created the way the UI and ``dagster job launch`` create it (from the code location
``corpus``, with its origin and the partition tags) and then executed in this process, so
``make demo``'s runs are the same runs a user would have launched.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import dagster as dg

LOCATION = "corpus"
MODULE = "corpus_assets.definitions"
REPO = Path(__file__).resolve().parents[1]


class LocalLauncher:
    """The ``corpus`` code location loaded in process, launching runs of its jobs."""

    def __init__(self, instance: dg.DagsterInstance):
        from dagster._core.remote_origin import InProcessCodeLocationOrigin
        from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

        self.instance = instance
        origin = InProcessCodeLocationOrigin(
            loadable_target_origin=LoadableTargetOrigin(
                executable_path=sys.executable, module_name=MODULE, working_directory=str(REPO)
            ),
            location_name=LOCATION,
        )
        self.location = origin.create_location(instance)
        self.repo = next(iter(self.location.get_repositories().values()))

    def run(
        self,
        job_name: str,
        partition_key: str | None = None,
        tags: Mapping[str, str] | None = None,
        run_config: Mapping | None = None,
        asset_selection: Sequence[dg.AssetKey] | None = None,
    ) -> dg.DagsterRun:
        """Create a run of ``job_name`` (one partition, or none; the whole job or the assets in
        ``asset_selection`` with their checks, as a sensor's run request asks) and execute it here;
        returns the finished run (``run.is_success`` says how it went).

        The run is made by ``DagsterInstance.create_run_for_job`` (what Dagster's own
        ``execute_job`` uses) from the job's definition, given the code location's origins, so
        the UI files it under the job of the code location ``corpus``."""
        from dagster._core.execution.api import execute_run
        from dagster._utils.hosted_user_process import recon_job_from_origin

        remote_job = self.repo.get_full_job(job_name)
        job = recon_job_from_origin(remote_job.get_python_origin())
        definition = job.get_definition()
        run_tags = {**definition.run_tags, **(tags or {})}
        if partition_key is not None:
            run_tags["dagster/partition"] = partition_key
        run = self.instance.create_run_for_job(
            definition,
            run_config=dict(run_config or {}),
            tags=run_tags,
            asset_selection=frozenset(asset_selection) if asset_selection is not None else None,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=job.get_python_origin(),
        )
        execute_run(job, run, self.instance)
        return self.instance.get_run_by_id(run.run_id)

    def close(self) -> None:
        self.location.cleanup()
