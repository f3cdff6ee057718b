"""The data root and the landing zone as one Dagster resource."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import dagster as dg

from corpus.ingest.landing import DEFAULT_LANDING, LandingZone
from corpus.store import DEFAULT_HOME, BlobStore, Store

# What a process that executes a run does when it sets the store up, registered by the Dagster
# layer (corpus_assets/run_monitoring.py: name the run's worker process, give the run its maximum
# runtime), so that resources never import it.
RUN_START_HOOKS: list[Callable[[dg.InitResourceContext], None]] = []


class CorpusStore(dg.ConfigurableResource):
    """Where the corpus lives (``CORPUS_HOME``) and where its inputs land (``CORPUS_LANDING``)."""

    home: str = DEFAULT_HOME
    landing: str = DEFAULT_LANDING

    @classmethod
    def from_env(cls) -> CorpusStore:
        return cls(
            home=os.environ.get("CORPUS_HOME", DEFAULT_HOME),
            landing=os.environ.get("CORPUS_LANDING", DEFAULT_LANDING),
        )

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """An interrupt (a terminated run, Ctrl-C) ends the step's blocking waits at once
        (corpus.parallel.interrupts_end_waits); then :data:`RUN_START_HOOKS` run: the process
        executing a run in process names itself in the run's log, so a run whose process dies
        (kill -9) is failed by run monitoring and frees its pool slots, and a run of daily
        partitions gets its maximum runtime by the days it covers (corpus_assets/run_monitoring.py)."""
        from corpus.parallel import interrupts_end_waits

        interrupts_end_waits()
        for hook in RUN_START_HOOKS:
            hook(context)

    @property
    def store(self) -> Store:
        return Store(Path(self.home))

    @property
    def blobs(self) -> BlobStore:
        return BlobStore(Path(self.home) / "blobs")

    @property
    def landing_zone(self) -> LandingZone:
        return LandingZone(Path(self.landing))

    @property
    def landing_index_cache(self) -> Path:
        return Path(self.home) / ".index" / "landing_oai.json"
