"""The local instance's pooled SQLite event log (corpus_assets/event_log.py): the files and
rows of Dagster's own storage, readable by it either way, safe across processes, and the
UI's live watch of a run still woken by new events."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import threading
from pathlib import Path

import dagster as dg
import pytest
import yaml

from corpus_assets import event_log

REPO = Path(__file__).resolve().parents[1]
parts = dg.StaticPartitionsDefinition([f"p{i}" for i in range(12)])


@dg.asset(partitions_def=parts)
def numbers(context) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"key": context.partition_key})


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


def materialized(instance: dg.DagsterInstance) -> set[str]:
    return set(instance.get_materialized_partitions(dg.AssetKey("numbers")))


def _materialize(key: str) -> None:
    with dg.DagsterInstance.get() as instance:
        assert dg.materialize([numbers], instance=instance, partition_key=key).success


def test_repo_instance_uses_it_and_dagsters_default_reads_the_same_files(home: Path) -> None:
    with dg.DagsterInstance.get() as instance:
        storage = instance.event_log_storage
        assert isinstance(storage, event_log.PooledSqliteEventLogStorage)
        assert Path(storage._base_dir) == home / "history" / "runs"
        for key in ("p0", "p1"):
            assert dg.materialize([numbers], instance=instance, partition_key=key).success
        assert materialized(instance) == {"p0", "p1"}
        assert len(storage._engines) <= event_log.MAX_ENGINES

    config = yaml.safe_load((home / "dagster.yaml").read_text())
    del config["event_log_storage"]  # the stock storage on the same home
    (home / "dagster.yaml").write_text(yaml.safe_dump(config))
    with dg.DagsterInstance.get() as stock:
        assert type(stock.event_log_storage).__name__ == "SqliteEventLogStorage"
        assert materialized(stock) == {"p0", "p1"}
        assert dg.materialize([numbers], instance=stock, partition_key="p2").success

    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.get() as instance:
        assert materialized(instance) == {"p0", "p1", "p2"}


def test_many_runs_keep_the_engines_bounded(home: Path) -> None:
    with dg.DagsterInstance.get() as instance:
        for i in range(event_log.MAX_ENGINES + 3):
            assert dg.materialize([numbers], instance=instance, partition_key=f"p{i}").success
        storage = instance.event_log_storage
        assert len(storage._engines) <= event_log.MAX_ENGINES
        runs = instance.get_runs()
        assert all(instance.all_logs(r.run_id) for r in runs)  # evicted shards still read
        assert materialized(instance) == {f"p{i}" for i in range(event_log.MAX_ENGINES + 3)}


def test_processes_writing_side_by_side_lose_nothing(home: Path) -> None:
    keys = [f"p{i}" for i in range(6)]
    dg.DagsterInstance.get().dispose()  # the home's databases exist before the workers start
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        pool.map(_materialize, keys, chunksize=1)
        # Workers end on the pool's sentinel, not on SIGTERM (terminate(), the with-block's exit):
        # a worker that ran Dagster in process can be left with Dagster's interrupt-capturing
        # handler, which only records SIGTERM, and terminate() then waited on it for ever.
        pool.close()
        pool.join()
    with dg.DagsterInstance.get() as instance:
        assert materialized(instance) == set(keys)
        runs = instance.get_runs()
        assert len(runs) == len(keys) and all(r.is_success for r in runs)


def test_the_ui_watch_of_a_run_sees_new_events(home: Path) -> None:
    with dg.DagsterInstance.get() as instance:
        assert dg.materialize([numbers], instance=instance, partition_key="p0").success
        run_id = instance.get_runs()[0].run_id
        before = len(instance.all_logs(run_id))
        seen: list[str] = []
        woken = threading.Event()

        def callback(entry, cursor):
            seen.append(entry.dagster_event.message if entry.dagster_event else entry.user_message)
            if seen.count("after the watch began") == 3:
                woken.set()

        instance.event_log_storage.watch(run_id, None, callback)
        try:
            for _ in range(3):  # new events go to the shard's -wal file while connections stay open
                instance.report_engine_event("after the watch began", instance.get_run_by_id(run_id))
            assert os.path.exists(instance.event_log_storage.path_for_shard(run_id) + "-wal")
            assert woken.wait(timeout=20), f"the watch saw {seen[before:]}"
        finally:
            instance.event_log_storage.end_watch(run_id, callback)
        assert len(instance.all_logs(run_id)) == before + 3
