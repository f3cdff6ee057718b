"""The Pipes path for real: arxiv_pdfs_day in a worker subprocess on real landing-zone days, and the
same stage called in the run's process (CORPUS_DEPLOYMENT=inprocess) with the same rows and errors."""

from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from corpus_assets import deployment as dep
from corpus_assets.deployment import (
    DeploymentSettings,
    StageFailed,
    StderrTailSubprocessClient,
    pipes_client,
    run_stage,
)
from corpus_assets.ingest import arxiv_metadata
from corpus_assets.partitions import daily_partitions, partition_dates
from corpus_assets.worker import STAGES, StageRequest
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
PDF_DAY = "2023-08-02"  # 1706.03762, its PDF in landing/pdf
META_ONLY_DAY = "2007-04-02"  # four 0704.* records, no files
LANDING_ONLY_DAY = "2007-04-09"  # in the landing zone, never materialised here


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, shared_landing) -> CorpusStore:
    """A temp CORPUS_HOME with arxiv_metadata materialised for two real days."""
    store = CorpusStore(home=str(tmp_path_factory.mktemp("pipes") / "data"), landing=str(shared_landing))
    with dg.instance_for_test() as instance:
        for day in (PDF_DAY, META_ONLY_DAY):
            result = dg.materialize(
                [arxiv_metadata],
                partition_key=day,
                resources={"corpus": store, "arxiv": ArxivResource(source="landing")},
                instance=instance,
                run_config=QUIET,
            )
            assert result.success
    return store


def _stage_asset(stage: str, days: list[str] | None, params: dict, out: dict, deployment: str = "local"):
    """A small partitioned asset that hands its days to the worker, as the heavy assets do."""

    @dg.asset(name="pipes_probe", partitions_def=daily_partitions)
    def pipes_probe(context: dg.AssetExecutionContext, pipes: dg.PipesSubprocessClient):
        settings = DeploymentSettings(deployment=deployment)
        out["summaries"] = run_stage(
            context, pipes, stage, days or partition_dates(context), params, settings=settings
        )
        # the asset's own result (metadata from the store, in the real assets) closes the step
        return dg.MaterializeResult(metadata={"days": len(out["summaries"])})

    return pipes_probe


def _run(asset, partition_key: str):
    client = pipes_client(DeploymentSettings(deployment="local"))
    assert isinstance(client, dg.PipesSubprocessClient) and isinstance(client, StderrTailSubprocessClient)
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [asset],
            partition_key=partition_key,
            resources={"pipes": client},
            instance=instance,
            run_config=QUIET,
            raise_on_error=False,
        )
        return result, [r.user_message for r in instance.all_logs(result.run_id)]


@pytest.mark.parametrize("deployment", ["local", "inprocess"])
def test_worker_writes_the_partition_and_returns_summaries_in_day_order(corpus, deployment, monkeypatch):
    trims: list[bool] = []
    monkeypatch.setattr(dep, "return_free_heap", lambda: trims.append(True) or True)
    out: dict = {}
    params = {"home": corpus.home, "landing": corpus.landing, "fetch": {"mode": "landing"}}
    asset = _stage_asset("arxiv_pdfs_day", [PDF_DAY, META_ONLY_DAY], params, out, deployment)
    result, logs = _run(asset, PDF_DAY)
    assert result.success
    # the run's process hands its free heap back before it waits on a worker (none in process)
    assert trims == ([True] if deployment == "local" else [])
    first, second = out["summaries"]
    assert first["day"] == PDF_DAY and first["papers"] == 1
    # stored on the day's first run, cached when the other deployment re-runs it (this run's
    # facts); the rows below are the same either way
    assert first["status"] in ({"stored": 1}, {"cached": 1})
    assert first["downloads"] == 0
    assert second["day"] == META_ONLY_DAY and second["papers"] == 4
    assert second["status"] == {"missing": 4} and second["filter_reasons"] == ["missing"] * 4

    pdfs = pl.read_parquet(f"{corpus.home}/arxiv_pdfs/date={PDF_DAY}/*.parquet")
    row = pdfs.row(0, named=True)
    assert (row["id"], row["status"], row["source"]) == ("1706.03762", "stored", "landing")
    assert row["pages"] == 15 and row["passed"] is True and len(row["sha256"]) == 64
    missing = pl.read_parquet(f"{corpus.home}/arxiv_pdfs/date={META_ONLY_DAY}/*.parquet")
    assert missing.height == 4 and not missing["passed"].any()

    # the worker's log lines reach the run's event log (through Pipes, or directly in process)
    assert any(f"arxiv_pdfs_day {META_ONLY_DAY}: done" in m for m in logs)


@pytest.mark.parametrize("deployment", ["local", "inprocess"])
def test_worker_failure_raises_with_the_workers_error(corpus, deployment):
    out: dict = {}
    params = {"home": corpus.home, "landing": corpus.landing}
    asset = _stage_asset("arxiv_pdfs_day", None, params, out, deployment)
    result, _ = _run(asset, LANDING_ONLY_DAY)  # no arxiv_metadata partition for that day
    assert not result.success and "summaries" not in out
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    text = str(failure.event_specific_data.error)
    assert (
        "StageFailed" in text
        or f"failed in {'the local worker' if deployment == 'local' else 'process'}" in text
    )
    assert f"arxiv_metadata has no partition {LANDING_ONLY_DAY}" in text
    assert "FileNotFoundError" in text
    assert not (Path(corpus.home) / "arxiv_pdfs" / f"date={LANDING_ONLY_DAY}").exists()


def test_requests_are_checked_before_a_worker_starts(corpus):
    ok = {"home": corpus.home, "landing": corpus.landing}
    assert set(STAGES) == {
        "arxiv_pdfs_day", "arxiv_sources_day", "grobid_tei_day", "latex_parses_day", "pdf_parses_day",
    }  # fmt: skip
    StageRequest.model_validate({"stage": "latex_parses_day", "days": [PDF_DAY], "params": {"home": "x"}})
    bad = [
        ({"stage": "os.system", "days": [PDF_DAY], "params": ok}, "stage"),
        ({"stage": "arxiv_pdfs_day", "days": ["2023-8-2"], "params": ok}, "YYYY-MM-DD"),
        ({"stage": "arxiv_pdfs_day", "days": [], "params": ok}, "at least one day"),
        ({"stage": "arxiv_pdfs_day", "days": [PDF_DAY, PDF_DAY], "params": ok}, "repeat"),
        ({"stage": "arxiv_pdfs_day", "days": [PDF_DAY], "params": {"home": "x"}}, "needs params.landing"),
        ({"stage": "arxiv_pdfs_day", "days": [PDF_DAY], "params": {**ok, "fetch": {"speed": 1}}}, "speed"),
        ({"stage": "arxiv_pdfs_day", "days": [PDF_DAY], "params": {**ok, "token": "x"}}, "token"),
    ]
    for request, expected in bad:
        with pytest.raises(ValueError, match=expected):
            StageRequest.model_validate(request)


def test_stage_failed_is_a_dagster_failure():
    assert issubclass(StageFailed, dg.Failure)
