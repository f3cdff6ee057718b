"""J: `make backfill` — a range as one Dagster backfill of runs of a few days that run side by
side into one store — gives the same partitions as single-day runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest

from corpus_assets.backfill import MAX_DAYS_PER_RUN, days_between, days_per_run_for
from corpus_assets.definitions import defs
from corpus_assets.jobs import DAILY_ASSETS
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

REPO = Path(__file__).resolve().parents[1]
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
FIRST, LAST = "2007-04-01", "2007-04-09"  # 9 days, 3 of them with records: 3 runs of <= 4 days
VOLATILE = {"grobid_tei": ["seconds"]}  # how long a request took is not part of the data


def _frame(home: Path, asset: str, day: str) -> pl.DataFrame:
    frame = pl.read_parquet(home / asset / f"date={day}" / "part-0.parquet")
    return frame.drop([c for c in VOLATILE.get(asset, []) if c in frame.columns])


def test_days_per_run_follow_the_range_and_the_runs_side_by_side():
    assert days_per_run_for(9, 4) == 3  # this file's backfill: 3 runs, all side by side
    assert days_per_run_for(8, 2) == 4 and days_per_run_for(64, 2) == MAX_DAYS_PER_RUN == 16
    assert days_per_run_for(30, 64) == 1  # a short range on a big machine: a run per day
    assert days_per_run_for(12_000, 64) == 16  # all of arXiv: 750 runs, not 3,000
    assert days_per_run_for(5, 0) == 5


def test_days_between():
    assert days_between("2024-02-28", "2024-03-01") == ["2024-02-28", "2024-02-29", "2024-03-01"]
    with pytest.raises(ValueError):
        days_between("2024-03-02", "2024-03-01")


def test_backfills_are_made_against_the_workspace_the_daemons_load(tmp_path, monkeypatch):
    """The compose image keeps its workspace (the code server over gRPC) beside dagster.yaml; a
    checkout's is the repository's (make ui's)."""
    from corpus_assets.backfill import workspace_file

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    assert workspace_file() == REPO / "workspace.yaml"
    (tmp_path / "workspace.yaml").write_text("load_from: []\n")
    assert workspace_file() == tmp_path / "workspace.yaml"


@pytest.mark.slow
def test_backfill_runs_side_by_side_and_equals_single_day_runs(tmp_path, shared_landing, monkeypatch):
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    shutil.copy(REPO / "dagster.yaml", dagster_home / "dagster.yaml")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CORPUS_")},
        "CORPUS_HOME": str(tmp_path / "backfill"),
        "CORPUS_LANDING": str(shared_landing),
        "DAGSTER_HOME": str(dagster_home),
    }
    cmd = [sys.executable, "-m", "corpus_assets.backfill", "--from", FIRST, "--to", LAST]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "COMPLETED_SUCCESS" in proc.stdout and "3 run(s), 0 failed" in proc.stdout
    assert "runs of 3 day(s), 4 side by side" in proc.stdout  # sized from the range (dagster.yaml: 4)
    # The backfill is marked complete within seconds of its last run (Dagster's daemon: up to 30 s).
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    with dg.DagsterInstance.get() as instance:
        (backfill,) = instance.get_backfills()
        runs = instance.get_run_records(dg.RunsFilter(tags={"dagster/backfill": backfill.backfill_id}))
        # Its runs are corpus_daily runs (the job page's latest run, the Overview's row), not __ASSET_JOB.
        assert {r.dagster_run.job_name for r in runs} == {"corpus_daily"}
        last_run_end = max(r.end_time for r in runs)
        assert backfill.backfill_end_timestamp - last_run_end < 10, "the backfill was reported late"

    # The same days, one run per day, in process.
    single = tmp_path / "single"
    store = CorpusStore(home=str(single), landing=str(shared_landing))
    resources = {**defs.resources, "corpus": store, "arxiv": ArxivResource(source="landing")}
    daily = [a for a in defs.assets if a.partitions_def is not None]
    days = days_between(FIRST, LAST)
    with dg.instance_for_test() as instance:
        for day in days:
            result = dg.materialize(
                daily, partition_key=day, resources=resources, instance=instance, run_config=QUIET
            )
            assert result.success, day
    backfilled = tmp_path / "backfill"
    for asset in DAILY_ASSETS:
        for day in days:
            a, b = _frame(backfilled, asset, day), _frame(single, asset, day)
            assert a.equals(b), (asset, day)
    # Views over the store written by concurrent runs read every partition.
    con = duckdb.connect(str(backfilled / "corpus.duckdb"), read_only=True)
    try:
        for asset in ("arxiv_metadata", "papers", "bib_entries", "pes2o"):
            n = con.execute(f'select count(*) from "{asset}"').fetchone()[0]
            assert n == sum(_frame(backfilled, asset, d).height for d in days), asset
    finally:
        con.close()
    assert not list(backfilled.glob("*/.date=*staging*")), "a partition swap left its staging dir"
