"""The compose deployment's instance storage against a real PostgreSQL server.

docker/dagster.yaml keeps runs, events, schedules and sensors, and the pool slots in Postgres
(dagster-postgres). A dependency that drifts (SQLAlchemy 2.1 made psycopg 3 the driver of
``postgresql://``, which dagster-postgres does not install) takes every Postgres deployment
down; here it fails in seconds. The server is Debian's ``postgresql`` package, started by the
test on 127.0.0.1 (tests/postgres_server.py; .ci/run installs the package).
"""

import dagster as dg
import pytest
from postgres_server import DATABASE, PASSWORD, USER, PostgresServer, find_bin

from corpus_assets import deployment as dep

BIN = find_bin()
pytestmark = pytest.mark.skipif(
    BIN is None,
    reason="PostgreSQL server binaries not found (Debian: apt-get install postgresql; .ci/run does)",
)


@pytest.fixture(scope="module")
def server():
    with PostgresServer(BIN) as pg:
        yield pg


@pytest.fixture
def instance(server, monkeypatch, tmp_path):
    """The instance docker/dagster.yaml describes: its storage block, read from the same
    environment variables compose sets, pointed at the test's server."""
    for name, value in {
        "DAGSTER_POSTGRES_HOST": "127.0.0.1",
        "DAGSTER_POSTGRES_USER": USER,
        "DAGSTER_POSTGRES_PASSWORD": PASSWORD,
        "DAGSTER_POSTGRES_DB": DATABASE,
    }.items():
        monkeypatch.setenv(name, value)
    storage = dep.instance_config("docker")["storage"]
    storage["postgres"]["postgres_db"]["port"] = server.port
    overrides = {"storage": storage, "run_coordinator": dep.instance_config("docker")["run_coordinator"]}
    with dg.instance_for_test(overrides=overrides, temp_dir=str(tmp_path)) as inst:
        yield inst


DAYS = dg.DailyPartitionsDefinition(start_date="2007-04-01")


@dg.asset(partitions_def=DAYS, pool="grobid")
def day_rows(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"rows": len(context.partition_key)})


@dg.asset(deps=[day_rows])
def cross_day() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"rows": 1})


def test_instance_runs_events_and_pools_are_in_postgres(instance, server):
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
    assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
    engine = instance.run_storage._engine  # noqa: SLF001 - the driver actually used
    assert engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg2"

    for day in ("2007-04-01", "2007-04-02"):
        result = dg.materialize([day_rows], partition_key=day, instance=instance)
        assert result.success
    assert dg.materialize([day_rows, cross_day], selection=[cross_day], instance=instance).success

    runs = instance.get_runs()
    assert len(runs) == 3 and {r.status for r in runs} == {dg.DagsterRunStatus.SUCCESS}
    record = instance.get_latest_materialization_event(dg.AssetKey("day_rows"))
    assert record is not None and record.asset_materialization.partition == "2007-04-02"
    assert instance.get_materialized_partitions(dg.AssetKey("day_rows")) == {"2007-04-01", "2007-04-02"}

    # what a user sees with psql: the same rows, in Postgres's own tables
    assert server.psql("select count(*) from runs where status = 'SUCCESS'") == "3"
    materialized = server.psql(
        "select count(*) from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION'"
    )
    assert materialized == "3"
    assert int(server.psql("select count(*) from event_logs")) > 20

    # pools: the slot a Grobid step claims (run monitoring frees a dead run's slot here)
    instance.event_log_storage.set_concurrency_slots("grobid", 1)
    claim = instance.event_log_storage.claim_concurrency_slot("grobid", runs[0].run_id, "day_rows")
    assert claim.is_claimed
    assert server.psql("select count(*) from concurrency_slots where concurrency_key = 'grobid'") == "1"
    instance.event_log_storage.free_concurrency_slots_for_run(runs[0].run_id)
    info = instance.event_log_storage.get_concurrency_info("grobid")
    assert info.slot_count == 1 and info.active_slot_count == 0


def test_sensor_state_and_ticks_are_in_postgres(instance, server):
    from corpus_assets.dagster_internals import add_sensor_tick

    stored, ticks = add_sensor_tick(instance, "landing_oai_sensor", "no new OAI page")
    assert stored is not None and stored.status.value == "RUNNING"
    (read,) = ticks
    assert read.status.value == "SKIPPED" and read.skip_reason == "no new OAI page"
    assert server.psql("select count(*) from jobs where job_type = 'SENSOR'") == "1"
    assert server.psql("select status from job_ticks") == "SKIPPED"
