"""arxiv_metadata, its partitions, backfills and sensors through Dagster's in-process APIs."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from http_server import Reply, ScriptedServer

from corpus_assets.definitions import defs
from corpus_assets.ingest import METADATA_FAILURES, arxiv_metadata
from corpus_assets.partitions import daily_partitions
from resources.arxiv import ArxivResource
from resources.store import CorpusStore
from sensors.endpoint import arxiv_endpoint_sensor, days_to_check
from sensors.landing import landing_oai_sensor, plan_landing_runs

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def test_definitions_load_and_validate():
    dg.Definitions.validate_loadable(defs)
    assert defs.resolve_job_def("corpus_daily").partitions_def == daily_partitions
    assert defs.resolve_sensor_def("landing_oai_sensor").default_status == dg.DefaultSensorStatus.RUNNING
    assert defs.resolve_sensor_def("arxiv_endpoint_sensor").default_status == dg.DefaultSensorStatus.STOPPED
    spec = arxiv_metadata.backfill_policy
    assert spec is not None and spec.max_partitions_per_run == 4  # a backfill fans out in runs of 4 days


@pytest.fixture
def store(tmp_path, shared_landing) -> CorpusStore:
    return CorpusStore(home=str(tmp_path / "data"), landing=str(shared_landing))


def _materialize(store: CorpusStore, instance, partition_key=None, tags=None):
    return dg.materialize(
        [arxiv_metadata],
        partition_key=partition_key,
        tags=tags,
        resources={"corpus": store, "arxiv": ArxivResource(source="landing")},
        instance=instance,
        run_config=QUIET,
    )


def test_one_day_from_the_real_landing_zone_and_rerun_is_identical(store):
    with dg.instance_for_test() as instance:
        result = _materialize(store, instance, "2007-04-02")
        assert result.success
        path = Path(store.home) / "arxiv_metadata" / "date=2007-04-02" / "part-0.parquet"
        first = pl.read_parquet(path)
        assert first.height == 4 and first["id"].is_unique().all()
        assert set(first["datestamp"].cast(str)) == {"2007-04-02"}
        mats = {m.asset_key.to_user_string(): m for m in result.get_asset_materialization_events()}
        meta = mats["arxiv_metadata"].materialization.metadata
        assert (
            meta["dagster/partition_row_count"].value == 4 and meta["new"].value + meta["updated"].value == 4
        )
        assert "dagster/column_schema" in meta and mats[METADATA_FAILURES]
        assert meta["dagster/column_schema"].value.columns[0].description.startswith("arXiv id")
        checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
        assert checks == {
            "ids_unique": True,
            "ids_valid": True,
            "required_fields_present": True,
            "no_unreadable_records": True,
        }
        again = _materialize(store, instance, "2007-04-02")
        assert again.success
        assert pl.read_parquet(path).equals(first)  # same rows, never duplicates
        assert sorted(p.name for p in path.parent.iterdir()) == [
            "_landing",
            "_provenance",
            "part-0.parquet",
        ]  # no leftovers
        empty = _materialize(store, instance, "2007-04-03")  # a day with no records: an empty partition
        assert empty.success
        assert (
            pl.read_parquet(Path(store.home) / "arxiv_metadata" / "date=2007-04-03" / "part-0.parquet").height
            == 0
        )


def test_a_new_day_s_parquet_is_hashed_once(store, monkeypatch):
    """A day's Parquet is hashed when it is written (its provenance); the fingerprint on its
    materialisation, which the cross-day catch-up compares, is read from there, not hashed again
    (the review's leftover: it was hashed twice)."""
    from collections import Counter

    import corpus.store

    hashed: Counter[str] = Counter()
    real = corpus.store.file_sha256

    def counting(path: Path) -> str:
        hashed[Path(path).name] += 1
        return real(path)

    monkeypatch.setattr(corpus.store, "file_sha256", counting)
    with dg.instance_for_test() as instance:
        result = _materialize(store, instance, "2007-04-02")
        assert result.success
        events = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
        fingerprint = events["arxiv_metadata"].materialization.metadata["fingerprint"].value
    assert fingerprint == store.store.fingerprint("arxiv_metadata", "2007-04-02")
    assert hashed == {"part-0.parquet": 2}, hashed  # arxiv_metadata's and its failures', once each


def test_backfill_range_in_one_run(store):
    """A run of a backfill covers up to CORPUS_DAYS_PER_RUN days (4), each its own partition."""
    with dg.instance_for_test() as instance:
        tags = {
            "dagster/asset_partition_range_start": "2007-04-01",
            "dagster/asset_partition_range_end": "2007-04-04",
        }
        result = _materialize(store, instance, tags=tags)
        assert result.success
        counts = {
            d: pl.read_parquet(Path(store.home) / "arxiv_metadata" / f"date={d}" / "part-0.parquet").height
            for d in ("2007-04-01", "2007-04-02", "2007-04-03", "2007-04-04")
        }
        assert counts == {"2007-04-01": 4, "2007-04-02": 4, "2007-04-03": 0, "2007-04-04": 0}
        materialized = instance.get_materialized_partitions(dg.AssetKey("arxiv_metadata"))
        assert len(materialized) == 4
        # Each day's own counts on its own event: nothing in an event grows with the run's length.
        events = [
            e
            for e in result.get_asset_materialization_events()
            if e.asset_key == dg.AssetKey("arxiv_metadata")
        ]
        rows = {e.partition: e.materialization.metadata["dagster/partition_row_count"].value for e in events}
        assert rows == counts
        import duckdb

        con = duckdb.connect(str(Path(store.home) / "corpus.duckdb"), read_only=True)
        assert con.execute("select count(*) from arxiv_metadata").fetchone()[0] == 8
        con.close()


def test_unreadable_page_is_a_failure_row_not_a_crash(tmp_path, shared_landing):
    landing = tmp_path / "landing"
    shutil.copytree(shared_landing / "oai", landing / "oai")
    broken = landing / "oai" / "2007-04-01.xml"
    broken.write_bytes(broken.read_bytes()[:-2000])
    store = CorpusStore(home=str(tmp_path / "data"), landing=str(landing))
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [arxiv_metadata],
            partition_key="2007-04-01",
            resources={"corpus": store, "arxiv": ArxivResource()},
            instance=instance,
            run_config=QUIET,
            raise_on_error=False,
        )
        assert result.success
        checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
        assert checks["no_unreadable_records"] is False
    failures = pl.read_parquet(Path(store.home) / METADATA_FAILURES / "date=2007-04-01" / "part-0.parquet")
    page = failures.filter(pl.col("position") == -1)
    assert page.height == 1 and page["source"][0] == "oai/2007-04-01.xml"
    cut = failures.filter(pl.col("position") >= 0)  # the record the cut fell in: its own row
    assert cut.height == 1 and "cut off" in cut["reason"][0] and cut["identifier"][0].startswith("oai:arXiv")


def test_landing_sensor_requests_each_day_once(store, shared_landing):
    with dg.instance_for_test() as instance:
        context = dg.build_sensor_context(instance=instance, resources={"corpus": store})
        result = landing_oai_sensor(context)
        days = sorted(r.partition_key for r in result.run_requests)
        # 30 days in the landing zone; 2007-03-31 is before the first partition (2007-04-01): logged, skipped
        assert len(days) == 29 and days[0] == "2007-04-01" and days[-1] == "2025-03-22"
        cursor = result.cursor
        again = landing_oai_sensor(
            dg.build_sensor_context(instance=instance, cursor=cursor, resources={"corpus": store})
        )
        assert not again.run_requests  # each file handled once


def test_landing_sensor_plan_changed_day_and_cap():
    today = dt.date(2024, 1, 10)
    now = {"2024-01-01": "f1", "2024-01-02": "f2", "2024-01-03": "f3", "2030-01-01": "f4"}
    runs, outside, complete = plan_landing_runs(now, {}, today)
    assert [d for d, _ in runs] == ["2024-01-01", "2024-01-02", "2024-01-03"] and complete
    assert len(outside) == 1 and "2030-01-01" in outside[0]
    # Built from the same pages: nothing to do; one day's pages changed: that day, a new run key.
    built = {"2024-01-01": "f1", "2024-01-02": "f2", "2024-01-03": "f3"}
    assert plan_landing_runs({k: v for k, v in now.items() if k < "2030"}, built, today)[0] == []
    runs2, _, _ = plan_landing_runs({**now, "2024-01-02": "f2b"}, built, today)
    assert [d for d, _ in runs2] == ["2024-01-02"] and runs2[0][1] != dict(runs)["2024-01-02"]
    capped, _, complete = plan_landing_runs(now, {}, today, max_days=2)
    assert [d for d, _ in capped] == ["2024-01-01", "2024-01-02"] and not complete


LIST_IDENTIFIERS = """<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2025-01-01T00:00:00Z</responseDate>
<request verb="ListIdentifiers">http://export.arxiv.org/oai2</request><ListIdentifiers>
<header><identifier>oai:arXiv.org:2401.00001</identifier><datestamp>{day}</datestamp><setSpec>cs</setSpec></header>
</ListIdentifiers></OAI-PMH>"""


def test_endpoint_sensor_requests_days_with_records(shared_data):
    today = dt.datetime.now(dt.UTC).date()
    d1, d2 = (today - dt.timedelta(days=2)).isoformat(), (today - dt.timedelta(days=1)).isoformat()
    no_match = (
        shared_data / "oai_pmh" / "mikesaelim_arXivOAIHarvester" / "ErrorResponseNoRecordsMatch.xml"
    ).read_bytes()
    with ScriptedServer() as server, dg.instance_for_test() as instance:
        server.script("/oai", Reply(200, LIST_IDENTIFIERS.format(day=d1).encode()), Reply(200, no_match))
        arxiv = ArxivResource(source="arxiv", oai_url=server.url("/oai"), min_interval_s=0.0)
        instance.report_runless_asset_event(
            dg.AssetMaterialization("arxiv_metadata", partition=(today - dt.timedelta(days=3)).isoformat())
        )
        result = arxiv_endpoint_sensor(dg.build_sensor_context(instance=instance, resources={"arxiv": arxiv}))
        assert [r.partition_key for r in result.run_requests] == [d1]
        assert result.cursor == d2
        assert server.hits("/oai") == 2
        assert "verb=ListIdentifiers" in server.seen("/oai")[0].query


def test_endpoint_sensor_window():
    today = dt.date(2024, 3, 10)
    assert days_to_check("2024-03-07", None, today) == ["2024-03-08", "2024-03-09"]
    assert days_to_check("2024-03-07", "2024-03-08", today) == ["2024-03-09"]
    assert len(days_to_check(None, None, today)) == 5  # bounded per tick, from a week back


def test_live_harvest_saves_pages_into_landing_first(tmp_path, shared_landing):
    page = (shared_landing / "oai" / "2007-04-09.xml").read_bytes()
    landing = tmp_path / "landing"
    (landing / "oai").mkdir(parents=True)
    (landing / "oai" / "2007-04-09_arXiv-p0002.xml").write_bytes(page)  # stale page of an earlier harvest
    store = CorpusStore(home=str(tmp_path / "data"), landing=str(landing))
    with ScriptedServer() as server, dg.instance_for_test() as instance:
        server.script("/oai", Reply(200, page))
        arxiv = ArxivResource(source="arxiv", oai_url=server.url("/oai"), min_interval_s=0.0)
        result = dg.materialize(
            [arxiv_metadata],
            partition_key="2007-04-09",
            resources={"corpus": store, "arxiv": arxiv},
            instance=instance,
            run_config=QUIET,
        )
        assert result.success
        query = server.seen("/oai")[0].query
    assert "from=2007-04-09" in query and "until=2007-04-09" in query and "metadataPrefix=arXiv" in query
    assert sorted(p.name for p in (landing / "oai").iterdir() if not p.name.startswith(".")) == [
        "2007-04-09_arXiv-p0001.xml"
    ]
    assert (landing / "oai" / "2007-04-09_arXiv-p0001.xml").read_bytes() == page
    rows = pl.read_parquet(Path(store.home) / "arxiv_metadata" / "date=2007-04-09" / "part-0.parquet")
    assert rows.height == 3


def test_cursor_is_short_and_an_unchanged_listing_costs_nothing(store):
    with dg.instance_for_test() as instance:
        result = landing_oai_sensor(dg.build_sensor_context(instance=instance, resources={"corpus": store}))
        assert result.cursor.startswith("30 pages ") and len(result.cursor) < 40
        again = landing_oai_sensor(
            dg.build_sensor_context(instance=instance, cursor=result.cursor, resources={"corpus": store})
        )
        assert not again.run_requests and "no new or changed" in again.skip_reason.skip_message
