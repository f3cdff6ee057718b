"""What one automation tick costs on a store of D days: the catch-up sensor (cross-day assets,
sensors/cross_day.py) and the code-versions sensor, against the event-timing conditions the
cross-day assets had before issue 28. (The daily assets have no automation condition since issue
46: the rest of a partly built day is a run-status sensor's, corpus_rest_of_day.)

    python benchmarks/automation_tick.py [--days 64 1024] [--ticks 5]

For each D, in a fresh process: an instance (the project's dagster.yaml: pooled SQLite) holding
what D built days leave in the event log, reported as runless materialisations: every daily
asset's partition of every day (the cross-day inputs with their content fingerprint), then one
materialisation of each cross-day asset with its read mark (and metadata of their real size:
the degree plot, the tables). Then CPU seconds per tick of:

* ``catch_up_*``: the catch-up sensor's evaluation (``corpus_graph_catch_up``), its check results
  reported as the daemon reports them, with its cursor when nothing is new (``steady``), with no
  cursor (``fresh``: a reset sensor), on the tick after one new day (``new_day``: every daily
  asset of it; the checks turn stale), on the tick after its catch-up (``after_run``: green
  again), and after 100 old days re-delivered with the same content (``same_100``, fresh cursor:
  each one's fingerprints compared; nothing is asked). Medians over ``--ticks``;
* ``code_*``: the code-versions sensor (``corpus_code_versions``, sensors/rederive.py) over a
  store holding a tiny partition of every daily asset of every day: ``steady``, on the tick after
  a new day, and ``fresh`` (no cursor: every partition's provenance read once);
* ``before_auto``: the same evaluation with the cross-day assets' conditions before issue 28
  (``cron_tick_passed`` and ``any_deps_updated().since_last_handled()`` over every daily
  partition), steady: what one tick cost then.

Ends with ``RESULT`` for the largest D.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, hwm_mb, in_child, result

INPUTS = ["papers", "fulltext_ids", "bib_entries", "pes2o", "citeworth_paragraphs", "citeworth_candidates"]
OTHERS = ["arxiv_metadata", "arxiv_metadata_failures", "arxiv_pdfs", "arxiv_sources", "grobid_tei",
          "pdf_parses", "latex_parses"]  # fmt: skip
BLOB = {"citation_graph": 40_000, "pes2o_v1": 12_000, "pes2o_v2": 12_000, "citeworth_splits": 6_000}


def _days(n: int) -> list[str]:
    start = dt.date(2007, 4, 1)
    return [(start + dt.timedelta(days=i)).isoformat() for i in range(n)]


def _build(instance, days: list[str], fp: str = "a") -> None:
    import dagster as dg

    from corpus_assets.freshness import FINGERPRINT

    for day in days:
        for asset in OTHERS + INPUTS:
            meta = {"dagster/partition_row_count": 1000}
            if asset in INPUTS:
                meta[FINGERPRINT] = f"{fp}{day}{asset}"
            instance.report_runless_asset_event(dg.AssetMaterialization(asset, partition=day, metadata=meta))


def _store(days: list[str]) -> None:
    """What those days leave in the store for the code-versions sensor: a (tiny) partition of
    every daily asset, with its provenance."""
    import polars as pl

    from corpus.store import Store

    store, frame = Store.from_env(), pl.DataFrame({"id": ["x"]})
    for day in days:
        for asset in OTHERS + INPUTS:
            store.write_partition(asset, day, frame)


def _cross_day(instance) -> None:
    import dagster as dg

    from corpus.versions import code_version
    from corpus_assets.freshness import CODE_VERSION_TAG, CUTOFF, read_mark, read_through_metadata

    for asset in ("citation_links", "citation_graph", "pes2o_v1", "pes2o_v2", "citeworth_splits"):
        meta = {**read_through_metadata(read_mark(instance)), "mode": "incremental", "days": 1000}
        if asset in BLOB:
            meta["plot"] = dg.MetadataValue.md("x" * BLOB[asset])
        if asset.startswith("pes2o"):
            meta[CUTOFF] = "2023-01-03"
        tags = {CODE_VERSION_TAG: code_version(asset)}  # as a run of today's code records it
        instance.report_runless_asset_event(dg.AssetMaterialization(asset, metadata=meta, tags=tags))


def _cpu(fn, *args):
    start = time.process_time()
    out = fn(*args)
    return time.process_time() - start, out


def measure(n_days: int, ticks: int, root: str, queue) -> None:
    os.environ.update(
        DAGSTER_HOME=str(Path(root) / "dagster_home"),
        CORPUS_HOME=str(Path(root) / "data"),
        CORPUS_START_DATE="2007-04-01",
    )
    import dagster as dg

    import sensors.cross_day as cross_day
    from corpus.versions import code_version
    from corpus_assets.definitions import defs
    from corpus_assets.jobs import DAILY_ASSETS

    instance = dg.DagsterInstance.get()
    days = _days(n_days)
    started = time.perf_counter()
    _build(instance, days)
    _cross_day(instance)
    build_s = time.perf_counter() - started
    sensor = defs.get_sensor_def("corpus_graph_catch_up")
    repo = defs.get_repository_def()
    clock = [dt.datetime(2030, 1, 1, 10, 5, tzinfo=dt.UTC)]
    cross_day.now = lambda: clock[0]

    def tick(cursor):
        clock[0] += dt.timedelta(minutes=1)
        res = sensor(dg.build_sensor_context(instance=instance, cursor=cursor, repository_def=repo))
        for e in res.asset_events:
            instance.report_runless_asset_event(e)
        return res

    out: dict = {"days": n_days, "events": n_days * (len(INPUTS) + len(OTHERS)), "build_s": build_s}
    res = tick(None)  # the process's first tick pays one-time costs (serdes maps, caches): not counted
    fresh = [_cpu(tick, None)[0] for _ in range(ticks)]
    out["catch_up_fresh"] = statistics.median(fresh)
    cursor = res.cursor
    steady = []
    for _ in range(ticks):
        cpu, res = _cpu(tick, cursor)
        steady.append(cpu)
        cursor = res.cursor
    out["catch_up_steady"] = statistics.median(steady)
    new_days, after = [], []
    day = dt.date.fromisoformat(days[-1])
    for _ in range(ticks):  # a new day; the tick that sees it; the catch-up; the tick after it
        day += dt.timedelta(days=1)
        _build(instance, [day.isoformat()], fp="b")
        cpu, res = _cpu(tick, cursor)
        new_days.append(cpu)
        _cross_day(instance)
        cpu, res = _cpu(tick, res.cursor)
        after.append(cpu)
        cursor = res.cursor
    out["catch_up_new_day"] = statistics.median(new_days)
    out["catch_up_after_run"] = statistics.median(after)
    _build(instance, days[:100])  # 100 old days again, same content
    out["catch_up_same_100"], res = _cpu(tick, None)
    out["same_100_requested"] = len(res.run_requests)

    # The code-versions sensor (sensors/rederive.py): steady, fresh (a full read of every
    # partition's provenance) and on the tick after a new day.
    from resources.store import CorpusStore
    from sensors.rederive import code_version_tick

    _store(days)
    store = CorpusStore.from_env().store
    versions = {a: code_version(a) for a in OTHERS + INPUTS}

    def code_tick(cursor):
        found, cursor = code_version_tick(instance, store, versions, cursor)
        for e in found:
            instance.report_runless_asset_event(e)
        return cursor

    code_cursor = code_tick(None)
    out["code_fresh"] = statistics.median(_cpu(code_tick, None)[0] for _ in range(max(1, ticks // 2)))
    steady = []
    for _ in range(ticks):
        cpu, code_cursor = _cpu(code_tick, code_cursor)
        steady.append(cpu)
    out["code_steady"] = statistics.median(steady)
    new_days = []
    for _ in range(ticks):
        day += dt.timedelta(days=1)
        _build(instance, [day.isoformat()], fp="c")
        _store([day.isoformat()])
        cpu, code_cursor = _cpu(code_tick, code_cursor)
        new_days.append(cpu)
    out["code_new_day"] = statistics.median(new_days)

    before = _before_defs(defs, DAILY_ASSETS)
    first = dg.evaluate_automation_conditions(defs=before, instance=instance)
    cpu = []
    cursor_auto = first.cursor
    for _ in range(ticks):
        t, r = _cpu(
            lambda c: dg.evaluate_automation_conditions(defs=before, instance=instance, cursor=c), cursor_auto
        )
        cpu.append(t)
        cursor_auto = r.cursor
    out["before_auto"] = statistics.median(cpu)
    out["peak_mb"] = hwm_mb()
    queue.put(out)


def _before_defs(defs, daily_assets):
    """The definitions with the cross-day assets' automation conditions before issue 28."""
    import dagster as dg

    from corpus_assets.jobs import UNPARTITIONED_ASSETS

    AC = dg.AutomationCondition
    cron = "0 * * * *"
    old = (
        AC.cron_tick_passed(cron).since_last_handled()
        & AC.any_deps_updated().since_last_handled()
        & ~AC.any_deps_in_progress()
        & ~AC.in_progress()
    )

    def condition(spec):
        name = spec.key.to_user_string()
        return spec.replace_attributes(automation_condition=old) if name in UNPARTITIONED_ASSETS else spec

    assets = dg.map_asset_specs(condition, list(defs.assets))
    return dg.Definitions(assets=assets, resources=defs.resources)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, nargs="+", default=[64, 1024])
    parser.add_argument("--ticks", type=int, default=5)
    args = parser.parse_args()
    last = None
    for n in args.days:
        root = tempfile.mkdtemp(prefix="automation-tick-")
        try:
            home = Path(root) / "dagster_home"
            home.mkdir()
            shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
            last = in_child(measure, n, args.ticks, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        print(
            f"{n:>6} days ({last['events']} events, built in {last['build_s']:.0f} s): catch-up tick "
            f"steady {last['catch_up_steady']:.3f} / fresh {last['catch_up_fresh']:.3f} / new day "
            f"{last['catch_up_new_day']:.3f} / after its catch-up "
            f"{last['catch_up_after_run']:.3f} / 100 days again, fresh {last['catch_up_same_100']:.3f} "
            f"(asked {last['same_100_requested']}) CPU s; "
            f"before issue 28: {last['before_auto']:.3f} CPU s a tick; code-versions tick steady "
            f"{last['code_steady']:.3f} / after a new day {last['code_new_day']:.3f} / fresh (every "
            f"partition's provenance) {last['code_fresh']:.3f} CPU s; peak {last['peak_mb']:.0f} MB",
            flush=True,
        )
    sys.stdout.flush()
    result(
        days=last["days"],
        catch_up_steady_cpu_s=last["catch_up_steady"],
        catch_up_fresh_cpu_s=last["catch_up_fresh"],
        catch_up_new_day_cpu_s=last["catch_up_new_day"],
        before_cpu_s=last["before_auto"],
        code_versions_steady_cpu_s=last["code_steady"],
        code_versions_new_day_cpu_s=last["code_new_day"],
        code_versions_fresh_cpu_s=last["code_fresh"],
        peak_mb=last["peak_mb"],
    )


if __name__ == "__main__":
    main()
