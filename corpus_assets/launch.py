"""Run a job of the ``corpus`` code location in this process as an ordinary run.

``JobDefinition.execute_in_process`` makes runs the UI cannot place: they carry no code
location, so they show neither under their job nor on the Overview timeline. Here a run is
created the way the UI and ``dagster job launch`` create it (from the code location
``corpus``, with its origin and the partition tags) and then executed in this process, so
``make demo``'s runs are the same runs a user would have launched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import dagster as dg

LOCATION = "corpus"
MODULE = "corpus_assets.definitions"
REPO = Path(__file__).resolve().parents[1]


class LocalLauncher:
    """The ``corpus`` code location loaded in process, launching runs of its jobs."""

    def __init__(self, instance: dg.DagsterInstance):
        from corpus_assets.dagster_internals import InProcessLocation

        self.instance = instance
        self._location = InProcessLocation(instance, MODULE, REPO, LOCATION)
        self.repo = self._location.repo

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
        returns the finished run (``run.is_success`` says how it went). The UI files it under the
        job of the code location ``corpus`` (corpus_assets/dagster_internals.py, 6)."""
        run_tags = dict(tags or {})
        if partition_key is not None:
            run_tags["dagster/partition"] = partition_key
        run_id = self._location.execute(
            job_name,
            run_config=dict(run_config or {}),
            tags=run_tags,
            asset_selection=frozenset(asset_selection) if asset_selection is not None else None,
        )
        return self.instance.get_run_by_id(run_id)

    def close(self) -> None:
        self._location.close()
