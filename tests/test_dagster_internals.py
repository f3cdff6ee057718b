"""What corpus_assets/dagster_internals.py takes from Dagster's private modules still does what
the project relies on (a Dagster upgrade that changes one fails here first)."""

from __future__ import annotations

import datetime as dt
import time

import dagster as dg
import pytest

from corpus_assets import dagster_internals as internals


def test_cron_ticks_are_the_schedules_own():
    """7: CORPUS_GRAPH_CRON's ticks (the catch-up sensor waits for the next one)."""
    at = dt.datetime(2026, 12, 7, 10, 17, 5, tzinfo=dt.UTC)
    assert internals.latest_cron_tick("0 * * * *", at) == dt.datetime(2026, 12, 7, 10, 0, tzinfo=dt.UTC)
    assert internals.next_cron_tick("0 * * * *", at) == dt.datetime(2026, 12, 7, 11, 0, tzinfo=dt.UTC)
    on_tick = dt.datetime(2026, 12, 7, 11, 0, tzinfo=dt.UTC)
    assert internals.latest_cron_tick("0 * * * *", on_tick) == on_tick
    assert internals.next_cron_tick("*/15 * * * *", on_tick) == on_tick  # at or after
    assert internals.next_cron_tick("*/15 * * * *", at) == dt.datetime(2026, 12, 7, 10, 30, tzinfo=dt.UTC)
    assert internals.is_cron("0 3 * * 1-5") and not internals.is_cron("hourly")


def test_graph_cron_refuses_what_is_not_a_cron_string(monkeypatch):
    from corpus_assets.jobs import graph_cron

    monkeypatch.setenv("CORPUS_GRAPH_CRON", "every hour")
    with pytest.raises(ValueError, match="not a cron string"):
        graph_cron()
    monkeypatch.setenv("CORPUS_GRAPH_CRON", "*/5 * * * *")
    assert graph_cron() == "*/5 * * * *"


def test_a_backfill_is_unfinished_until_dagster_ends_it():
    """4: what the catch-up and re-derive sensors wait for, and what make backfill waits on."""
    from corpus_assets.definitions import defs

    with dg.instance_for_test() as instance:
        assert internals.unfinished_backfill_ids(instance) == []
        assert internals.backfill_state(instance, "nope") == ("NOT_FOUND", True)
        backfill = internals.AssetBackfill(
            instance,
            defs.get_repository_def().asset_graph,
            ["2007-04-01", "2007-04-02"],
            [dg.AssetKey("papers")],
            "a test backfill",
            time.time(),
        )
        backfill.add()
        assert internals.unfinished_backfill_ids(instance) == [backfill.backfill_id]
        assert [b.backfill_id for b in internals.unfinished_backfills(instance)] == [backfill.backfill_id]
        assert internals.backfill_state(instance, backfill.backfill_id) == ("REQUESTED", False)
        backfill.complete()
        assert internals.unfinished_backfill_ids(instance) == []
        assert internals.backfill_state(instance, backfill.backfill_id) == ("COMPLETED_SUCCESS", True)


def test_an_engine_event_carries_its_metadata():
    """3: the run's log keeps the worker's pid and a cross-day asset's read mark."""
    with dg.instance_for_test() as instance:
        run = internals.create_test_run(instance, job_name="corpus_graph")
        instance.report_engine_event(
            "marked", run, internals.engine_event_data({"mark": dg.MetadataValue.int(7)})
        )
        (event,) = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
        assert event.dagster_event.engine_event_data.metadata["mark"].value == 7
