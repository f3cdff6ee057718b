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
        returns the finished run (``run.is_success`` says how it went)."""
        from dagster._core.definitions.selector import JobSubsetSelector
        from dagster._core.execution.api import execute_run
        from dagster._utils.hosted_user_process import recon_job_from_origin

        run_tags = dict(tags or {})
        if partition_key is not None:
            run_tags["dagster/partition"] = partition_key
        remote_job = self.location.get_job(
            JobSubsetSelector(
                location_name=self.location.name,
                repository_name=self.repo.name,
                job_name=job_name,
                op_selection=None,
                asset_selection=asset_selection,
            )
        )
        plan = self.location.get_execution_plan(
            remote_job,
            dict(run_config or {}),
            step_keys_to_execute=None,
            known_state=None,
            instance=self.instance,
        ).execution_plan_snapshot
        run = self.instance.create_run(
            job_name=job_name,
            run_id=None,
            run_config=dict(run_config or {}),
            resolved_op_selection=remote_job.resolved_op_selection,
            step_keys_to_execute=plan.step_keys_to_execute,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags={**(remote_job.run_tags or {}), **run_tags},
            job_snapshot=remote_job.job_snapshot,
            execution_plan_snapshot=plan,
            parent_job_snapshot=remote_job.parent_job_snapshot,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(),
            asset_selection=frozenset(asset_selection) if asset_selection is not None else None,
            asset_check_selection=None,
            asset_graph=self.repo.asset_graph,
        )
        execute_run(recon_job_from_origin(run.job_code_origin), run, self.instance)
        return self.instance.get_run_by_id(run.run_id)

    def close(self) -> None:
        self.location.cleanup()
