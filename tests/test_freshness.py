"""The cross-day assets' verdict (corpus_assets.freshness.assess) and the catch-up sensor's tick
(sensors.cross_day.plan_tick), on an instance whose events are reported by hand: which days a
cross-day asset has not read is decided from the fingerprints and the read mark alone."""

from __future__ import annotations

import datetime as dt

import dagster as dg
import pytest

from corpus.versions import code_version
from corpus_assets.freshness import (
    CODE_VERSION_TAG,
    CUTOFF,
    FINGERPRINT,
    MAX_TRACKED,
    READ_THROUGH,
    assess,
    read_mark,
)
from sensors.cross_day import plan_tick

LINKS, PAPERS, BIB = dg.AssetKey("citation_links"), dg.AssetKey("papers"), dg.AssetKey("bib_entries")
READS = {"citation_links": ["bib_entries", "papers"], "citation_graph": ["citation_links", "papers"]}


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def day(instance, key: dg.AssetKey, partition: str, fp: str | None) -> None:
    """A daily partition's materialisation, with its content fingerprint (None: an event from
    before fingerprints were recorded)."""
    metadata = {FINGERPRINT: fp} if fp is not None else {}
    instance.report_runless_asset_event(dg.AssetMaterialization(key, partition=partition, metadata=metadata))


def cross_day(instance, key: dg.AssetKey, mark: int | None, version: str | None = None, **metadata) -> None:
    """A cross-day materialisation as a run makes it: with its mark and the code version tag."""
    tags = {CODE_VERSION_TAG: version or code_version(key.to_user_string())}
    if mark is not None:
        tags[READ_THROUGH] = str(mark)
    instance.report_runless_asset_event(dg.AssetMaterialization(key, metadata=metadata, tags=tags))


def verdict(instance, key=LINKS, inputs=(PAPERS, BIB), state=None):
    return assess(instance, key, list(inputs), state, code_version(key.to_user_string()))


def test_never_built_is_stale_once_an_input_has_partitions(instance):
    assert verdict(instance)[0].current  # nothing to read yet
    day(instance, PAPERS, "2024-01-01", "a")
    v, _ = verdict(instance)
    assert not v.current and "never built" in v.description()


def test_a_day_written_after_the_read_is_stale_whatever_the_event_order(instance):
    day(instance, PAPERS, "2024-01-01", "a")
    mark = read_mark(instance)  # the asset reads here ...
    day(instance, PAPERS, "2024-01-02", "b")  # ... a day lands after the read, before its event
    cross_day(instance, LINKS, mark)
    v, _ = verdict(instance)
    assert not v.current
    assert v.changed == {"papers": {"2024-01-02": v.changed["papers"]["2024-01-02"]}}
    assert "papers 2024-01-02" in v.description()
    # The next materialisation reads it: current.
    cross_day(instance, LINKS, read_mark(instance))
    assert verdict(instance)[0].current


def test_same_content_again_is_current_new_content_is_stale(instance):
    day(instance, PAPERS, "2024-01-01", "a")
    cross_day(instance, LINKS, read_mark(instance))
    day(instance, PAPERS, "2024-01-01", "a")  # re-delivered with the same rows
    assert verdict(instance)[0].current
    day(instance, PAPERS, "2024-01-01", "c")  # the same day, changed
    assert not verdict(instance)[0].current
    day(instance, PAPERS, "2024-01-01", "a")  # changed back to what was read
    assert verdict(instance)[0].current


def test_an_event_without_fingerprint_counts_as_changed(instance):
    day(instance, PAPERS, "2024-01-01", None)
    cross_day(instance, LINKS, read_mark(instance))
    day(instance, PAPERS, "2024-01-01", None)
    assert not verdict(instance)[0].current


def test_a_materialisation_without_mark_is_stale(instance):
    day(instance, PAPERS, "2024-01-01", "a")
    cross_day(instance, LINKS, None)
    v, _ = verdict(instance)
    assert not v.current and READ_THROUGH in v.description()


def test_days_after_the_cutoff_are_not_inputs(instance):
    pes2o, v1 = dg.AssetKey("pes2o"), dg.AssetKey("pes2o_v1")
    day(instance, pes2o, "2022-12-01", "a")
    cross_day(instance, v1, read_mark(instance), **{CUTOFF: "2023-01-03"})
    day(instance, pes2o, "2024-05-01", "b")
    assert verdict(instance, v1, [pes2o])[0].current
    day(instance, pes2o, "2023-01-03", "c")
    assert not verdict(instance, v1, [pes2o])[0].current


def test_an_unpartitioned_input_rebuilt_after_the_read_is_stale(instance):
    graph = dg.AssetKey("citation_graph")
    cross_day(instance, LINKS, 0)
    cross_day(instance, graph, read_mark(instance))
    assert verdict(instance, graph, [LINKS])[0].current
    cross_day(instance, LINKS, read_mark(instance))
    v, _ = verdict(instance, graph, [LINKS])
    assert not v.current and v.changed_names() == ["citation_links"]


def test_the_state_gives_the_same_verdicts_reading_only_new_events(instance):
    day(instance, PAPERS, "2024-01-01", "a")
    cross_day(instance, LINKS, read_mark(instance))
    v, state = verdict(instance)
    assert v.current and state["through"]["papers"] == state["through"]["bib_entries"]
    day(instance, PAPERS, "2024-01-02", "b")
    v, state = verdict(instance, state=state)
    assert not v.current
    day(instance, PAPERS, "2024-01-02", "b2")
    day(instance, BIB, "2024-01-03", "x")
    v, state = verdict(instance, state=state)
    fresh, _ = verdict(instance)
    assert v.changed_names() == fresh.changed_names() == ["bib_entries 2024-01-03", "papers 2024-01-02"]
    # A new materialisation of the asset drops the old state.
    cross_day(instance, LINKS, read_mark(instance))
    v, state = verdict(instance, state=state)
    assert v.current and not state["changed"]


def test_more_changed_days_than_tracked_stay_stale_until_the_next_run(instance):
    cross_day(instance, LINKS, read_mark(instance))
    start = dt.date(2024, 1, 1)
    for i in range(MAX_TRACKED + 5):
        day(instance, PAPERS, (start + dt.timedelta(days=i)).isoformat(), f"fp{i}")
    v, state = verdict(instance)
    assert not v.current and v.more and v.n_changed == MAX_TRACKED
    assert "(and more)" in v.description()
    cross_day(instance, LINKS, read_mark(instance))
    assert verdict(instance, state=state)[0].current


AT = dt.datetime(2030, 1, 1, 10, 5, tzinfo=dt.UTC)


def tick(instance, cursor, at):
    """One tick; its check results reported as the sensor daemon reports them."""
    plan = plan_tick(instance, READS, cursor, at, "0 * * * *", lambda job: set())
    for evaluation in plan.evaluations:
        instance.report_runless_asset_event(evaluation)
    return plan


def test_tick_requests_on_a_fresh_cursor_then_once_per_cron_tick(instance):
    day(instance, PAPERS, "2024-01-01", "a")
    plan = tick(instance, None, AT)
    assert plan.run_assets == ["citation_links", "citation_graph"]  # a new sensor catches up at once
    assert [e.passed for e in plan.evaluations] == [False, False]
    cursor = plan.cursor
    # The run: links, then the graph (which reads the links' materialisation).
    cross_day(instance, LINKS, read_mark(instance))
    cross_day(instance, dg.AssetKey("citation_graph"), read_mark(instance))
    plan = tick(instance, cursor, AT + dt.timedelta(minutes=1))
    assert plan.run_assets == [] and [e.passed for e in plan.evaluations] == [True, True]
    cursor = plan.cursor
    # A new day before the next cron tick: stale at once, caught up on the tick.
    day(instance, PAPERS, "2024-01-02", "b")
    plan = tick(instance, cursor, AT + dt.timedelta(minutes=2))
    assert plan.run_assets == [] and "wait for the next tick" in plan.message
    assert [e.passed for e in plan.evaluations] == [False, False]
    cursor = plan.cursor
    plan = tick(instance, cursor, AT + dt.timedelta(minutes=3))
    assert plan.run_assets == [] and plan.evaluations == []  # nothing new to report
    plan = tick(instance, plan.cursor, AT + dt.timedelta(minutes=56))
    assert plan.run_assets == ["citation_links", "citation_graph"]
    # Requested at 11:01: not again before 12:00, even if the run has not read the day.
    plan = tick(instance, plan.cursor, AT + dt.timedelta(minutes=57))
    assert plan.run_assets == []
    assert set(plan.state["handled"]) == {"citation_links", "citation_graph"}


def test_tick_waits_while_an_input_or_a_cross_day_run_is_being_built(instance, monkeypatch):
    import sensors.cross_day as cross_day_sensor

    day(instance, PAPERS, "2024-01-01", "a")
    monkeypatch.setattr(cross_day_sensor, "busy_assets", lambda inst, job_assets, relevant=None: {"papers"})
    plan = tick(instance, None, AT)
    assert plan.run_assets == [] and "inputs being built: papers" in plan.message
    monkeypatch.setattr(
        cross_day_sensor, "busy_assets", lambda inst, job_assets, relevant=None: {"citation_graph"}
    )
    plan = tick(instance, None, AT)
    assert plan.run_assets == [] and "cross-day run is queued or running" in plan.message


def test_busy_assets_reads_busy_runs_a_page_at_a_time_until_every_relevant_asset_is_busy():
    """A backfill of all of arXiv queues thousands of runs: the sensor's tick must not load them
    all when the first page already names every asset it asks about."""
    from types import SimpleNamespace

    from sensors.cross_day import RUNS_PAGE, busy_assets

    runs = [
        SimpleNamespace(run_id=str(i), asset_selection=None, job_name="corpus_daily") for i in range(1000)
    ]
    runs[500].job_name = "corpus_graph"
    calls = []

    def get_runs(filters, cursor=None, limit=None):
        start = 0 if cursor is None else int(cursor) + 1
        calls.append(start)
        return runs[start : start + limit]

    instance = SimpleNamespace(get_backfills=lambda filters: [], get_runs=get_runs)
    jobs = {"corpus_daily": {"papers", "bib_entries"}, "corpus_graph": {"citation_links"}}
    assert busy_assets(instance, jobs.__getitem__, {"papers"}) == {"papers", "bib_entries"}
    assert calls == [0]
    calls.clear()
    assert busy_assets(instance, jobs.__getitem__, {"citation_links"}) == {
        "papers",
        "bib_entries",
        "citation_links",
    }
    assert calls == list(range(0, 501, RUNS_PAGE))  # no page after the one holding run 500
    calls.clear()
    assert busy_assets(instance, jobs.__getitem__) == {"papers", "bib_entries", "citation_links"}
    assert len(calls) == 11  # unbounded: every page, then the short last one


def test_built_by_other_code_is_stale_until_built_again(instance):
    """A release of the linking code (its version moved) makes the links stale whatever their
    inputs say: the catch-up rebuilds them, and the incremental state then relinks everything."""
    day(instance, PAPERS, "2020-01-01", "a")
    cross_day(instance, LINKS, read_mark(instance), version="corpus.graph.linking/0")
    found, _ = verdict(instance)
    assert not found.current
    assert found.description() == (
        f"stale: built by other code (corpus.graph.linking/0) than this ({code_version('citation_links')})"
    )
    cross_day(instance, LINKS, read_mark(instance))
    assert verdict(instance)[0].current


def test_the_cursor_says_why_the_sensor_waits_and_the_state_stays_out_of_it(instance):
    """The sensor page shows the cursor on every tick: it reads as the tick's decision (not ~900
    characters of JSON); the state the next tick needs is in the instance, tied to the cursor,
    so a reset or edited cursor starts afresh and an old JSON cursor is still read."""
    import json

    from sensors.cross_day import load_state

    day(instance, PAPERS, "2024-01-01", "a")
    plan = tick(instance, None, AT)
    assert plan.cursor == "asked for citation_links, citation_graph (as of 2030-01-01 10:05:00 UTC)"
    cross_day(instance, LINKS, read_mark(instance))
    cross_day(instance, dg.AssetKey("citation_graph"), read_mark(instance))
    day(instance, PAPERS, "2024-01-02", "b")
    plan = tick(instance, plan.cursor, AT + dt.timedelta(minutes=2))
    assert plan.cursor == (
        "waits for 11:00 UTC (0 * * * *): citation_links, citation_graph (as of 2030-01-01 10:07:00 UTC)"
    )
    assert load_state(instance, plan.cursor) == plan.state and plan.state["state"]
    assert load_state(instance, None) == load_state(instance, "edited by hand") == {}
    assert load_state(instance, "x (as of 2030-01-01 10:05:00 UTC)") == {}  # not the stored tick's
    assert load_state(instance, json.dumps(plan.state)) == plan.state  # a cursor of before
    # the checks the sensor reports say what a user can check, not the event-log mark
    (evaluation, _) = plan.evaluations
    assert set(evaluation.metadata) == {"materialized_at", "changed_partitions", "changed"}


def test_a_mark_kept_in_metadata_before_the_tag_is_still_read(instance):
    day(instance, PAPERS, "2024-01-01", "a")
    tags = {CODE_VERSION_TAG: code_version("citation_links")}
    metadata = {"inputs_read_through": dg.MetadataValue.int(read_mark(instance))}
    instance.report_runless_asset_event(dg.AssetMaterialization(LINKS, metadata=metadata, tags=tags))
    assert verdict(instance)[0].current


def test_a_graph_asset_s_mark_is_kept_in_its_run_s_log_and_found_by_a_retry(instance):
    """The first step of citation_links / citation_graph keeps the mark for the last in the run's
    log: nothing is left under the data root by a run that fails in between, and a retry from
    failure (a child run, the first step not run again) finds its parent's mark."""
    from dagster import DagsterRun

    from corpus_assets.freshness import save_mark, take_mark

    first = DagsterRun(job_name="corpus_graph", run_id="a" * 8 + "-0000-0000-0000-000000000001")
    retry = DagsterRun(
        job_name="corpus_graph",
        run_id="b" * 8 + "-0000-0000-0000-000000000002",
        parent_run_id=first.run_id,
        root_run_id=first.run_id,
    )
    other = DagsterRun(job_name="corpus_graph", run_id="c" * 8 + "-0000-0000-0000-000000000003")
    for run in (first, retry, other):
        instance.add_run(run)
    save_mark(instance, first, "citation_links", 41)
    save_mark(instance, first, "citation_graph", 42)
    assert take_mark(instance, first, "citation_links") == 41
    assert take_mark(instance, retry, "citation_graph") == 42  # from the run it re-executes
    assert take_mark(instance, other, "citation_links") is None
    save_mark(instance, retry, "citation_links", 50)  # the retry ran the first step again: its own
    assert take_mark(instance, retry, "citation_links") == 50
