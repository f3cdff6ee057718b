"""The keep-it-current flow, driven through Dagster's own in-process APIs (run by
tests/test_automation.py in a fresh interpreter, so the code location is loaded with the
scenario's settings, as a deployment would load it).

Steps, each recorded in the JSON printed at the end:
1. build the landing zone's days as ``make demo`` does (ordinary corpus_daily / corpus_graph runs);
2. first sensor, automation and catch-up ticks: nothing to redo;
3. a new OAI page: one corpus_daily run for its day, once; the up_to_date checks say "stale" on
   the next catch-up tick; on the next tick of CORPUS_GRAPH_CRON one corpus_graph run of the
   stale assets; a later tick does nothing and the checks are green;
4. ten new pages in one hour: ten daily runs, then one cross-day run.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import dagster as dg
from race_scenarios import Harness

from corpus_assets.definitions import DAILY
from corpus_assets.demo import QUIET
from corpus_assets.jobs import UNPARTITIONED_ASSETS
from resources.store import CorpusStore
from sensors.landing import landing_oai_sensor
from sensors.rest_of_day import rest_of_day_request


def sensor_tick(instance, cursor):
    ctx = dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"corpus": CorpusStore.from_env()}
    )
    result = landing_oai_sensor(ctx)
    return result, result.cursor if result.cursor is not None else cursor


def main(landing: Path, template: str) -> dict:
    out: dict = {}
    h = Harness(landing)
    instance, launcher = h.instance, h.launcher
    days = sorted(p.stem for p in (landing / "oai").glob("*.xml"))
    out["initial_days"] = days
    initial = [launcher.run("corpus_daily", d, run_config=QUIET) for d in days]
    out["initial_runs_ok"] = [run.is_success for run in initial]
    out["initial_graph_ok"] = launcher.run("corpus_graph", run_config=QUIET).is_success

    result, cursor = sensor_tick(instance, None)
    out["after_demo_sensor_requests"] = len(result.run_requests or [])
    follow_ups = [rest_of_day_request(run, DAILY) for run in initial]  # the corpus_rest_of_day sensor
    out["after_demo_automation_requests"] = sum(isinstance(r, dg.RunRequest) for r in follow_ups)
    result = h.tick()
    out["after_demo_catch_up_requests"] = len(result.run_requests)
    out["after_demo_checks"] = h.checks()

    def graph_tick(minutes: float) -> list[list[str]]:
        """One catch-up tick ``minutes`` later; its runs executed. Returns the assets of each run."""
        result = h.tick(minutes)
        kinds = []
        for r in result.run_requests:
            kinds.append(sorted(k.to_user_string() for k in r.asset_selection))
            h.run_request(r)
        return kinds

    # One new page.
    new_day = "2025-03-24"
    h.add_page(template.removesuffix(".xml"), new_day)
    result, cursor = sensor_tick(instance, cursor)
    out["new_page_requests"] = [(r.partition_key, r.run_key) for r in result.run_requests]
    for r in result.run_requests:
        out.setdefault("daily_runs_ok", []).append(
            launcher.run("corpus_daily", r.partition_key, r.tags, QUIET).is_success
        )
    result, cursor = sensor_tick(instance, cursor)
    out["second_sensor_tick_requests"] = len(result.run_requests or [])
    out["before_cron_requests"] = graph_tick(1)
    out["before_cron_checks"] = h.checks()
    out["on_cron_requests"] = graph_tick(61 - h.clock.minute)
    out["next_cron_requests"] = graph_tick(60)
    out["next_cron_checks"] = h.checks()
    out["later_requests"] = graph_tick(5)

    # Ten new pages within one hour.
    ten = [(dt.date(2025, 4, 1) + dt.timedelta(days=i)).isoformat() for i in range(10)]
    for day in ten:
        h.add_page(template.removesuffix(".xml"), day)
    result, cursor = sensor_tick(instance, cursor)
    out["ten_pages_requests"] = sorted(r.partition_key for r in result.run_requests)
    for r in result.run_requests:
        out["daily_runs_ok"].append(launcher.run("corpus_daily", r.partition_key, r.tags, QUIET).is_success)
    out["ten_before_cron_requests"] = graph_tick(1)
    out["ten_on_cron_requests"] = graph_tick(61 - h.clock.minute)
    out["ten_after_checks"] = h.checks()
    out["graph_runs_ok"] = h.graph_runs
    out["cross_day_assets"] = sorted(UNPARTITIONED_ASSETS)
    h.close()
    return out


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(Path(sys.argv[1]), sys.argv[2])))
