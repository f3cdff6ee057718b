"""The keep-it-current flow, driven through Dagster's own in-process APIs (run by
tests/test_automation.py in a fresh interpreter, so the code location is loaded with the
scenario's settings, as a deployment would load it).

Steps, each recorded in the JSON printed at the end:
1. build the landing zone's days as ``make demo`` does (ordinary corpus_daily / corpus_graph runs);
2. first sensor and automation ticks: nothing to redo;
3. a new OAI page: one corpus_daily run for its day, once; then, when CORPUS_GRAPH_CRON ticks,
   one cross-day run with every cross-day asset; a later tick does nothing;
4. ten new pages in one hour: ten daily runs, then one cross-day run.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path

import dagster as dg
from dagster._core.definitions.automation_tick_evaluation_context import build_run_requests

from corpus_assets.definitions import defs
from corpus_assets.demo import QUIET
from corpus_assets.jobs import AUTOMATION_RUN_TAGS, UNPARTITIONED_ASSETS
from corpus_assets.launch import LocalLauncher
from resources.store import CorpusStore
from sensors.landing import landing_oai_sensor


def sensor_tick(instance, cursor):
    ctx = dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"corpus": CorpusStore.from_env()}
    )
    result = landing_oai_sensor(ctx)
    return result, result.cursor if result.cursor is not None else cursor


def add_page(landing: Path, template: str, day: str) -> None:
    """A copy of a real page, re-dated: the records arrive again on ``day`` (as re-deliveries do)."""
    text = (landing / "oai" / template).read_text()
    text = re.sub(r"<datestamp>[^<]+</datestamp>", f"<datestamp>{day}</datestamp>", text)
    (landing / "oai" / f"{day}.xml").write_text(text)


def main(landing: Path, template: str) -> dict:
    out: dict = {}
    instance = dg.DagsterInstance.get()
    launcher = LocalLauncher(instance)
    days = sorted(p.stem for p in (landing / "oai").glob("*.xml"))
    out["initial_days"] = days
    out["initial_runs_ok"] = [launcher.run("corpus_daily", d, run_config=QUIET).is_success for d in days]
    out["initial_graph_ok"] = launcher.run("corpus_graph", run_config=QUIET).is_success

    # Evaluation times in the future (cron ticks are simulated; updates are read from the event log).
    now = dt.datetime.now(dt.UTC).replace(minute=5, second=0, microsecond=0) + dt.timedelta(hours=1)
    result, cursor = sensor_tick(instance, None)
    out["after_demo_sensor_requests"] = len(result.run_requests or [])
    auto = dg.evaluate_automation_conditions(defs=defs, instance=instance, evaluation_time=now)
    out["after_demo_automation_requests"] = auto.total_requested

    def graph_tick(at: dt.datetime) -> list[str]:
        """One automation tick; its runs executed. Returns what each run was: "graph" (every
        cross-day asset, their checks riding along) or "checks" (the up_to_date checks alone)."""
        nonlocal auto
        auto = dg.evaluate_automation_conditions(
            defs=defs, instance=instance, cursor=auto.cursor, evaluation_time=at
        )
        # Grouped into runs the way the automation daemon groups them.
        runs = build_run_requests(
            auto._requested_subsets, defs.resolve_asset_graph(), AUTOMATION_RUN_TAGS, True
        )
        kinds = []
        for r in runs:
            assets = sorted(k.to_user_string() for k in r.asset_selection or [])
            if assets:
                assert assets == sorted(UNPARTITIONED_ASSETS), r
                run = launcher.run("corpus_graph", tags=r.tags, run_config=QUIET)
                out.setdefault("graph_runs_ok", []).append(run.is_success)
                kinds.append("graph")
            else:
                job = defs.resolve_implicit_global_asset_job_def().get_subset(
                    asset_selection=set(), asset_check_selection=set(r.asset_check_keys)
                )
                result = job.execute_in_process(instance=instance, run_config=QUIET)
                out.setdefault("check_runs", []).append(
                    {
                        e.check_name: e.passed
                        for e in result.get_asset_check_evaluations()
                        if e.asset_key.path == ["pes2o_v1"]
                    }
                )
                kinds.append("checks")
        return kinds

    # One new page.
    new_day = "2025-03-24"
    add_page(landing, template, new_day)
    result, cursor = sensor_tick(instance, cursor)
    out["new_page_requests"] = [(r.partition_key, r.run_key) for r in result.run_requests]
    for r in result.run_requests:
        out.setdefault("daily_runs_ok", []).append(
            launcher.run("corpus_daily", r.partition_key, r.tags, QUIET).is_success
        )
    result, cursor = sensor_tick(instance, cursor)
    out["second_sensor_tick_requests"] = len(result.run_requests or [])
    out["before_cron_requests"] = graph_tick(now + dt.timedelta(minutes=10))
    out["on_cron_requests"] = graph_tick(now + dt.timedelta(minutes=60))
    out["next_cron_requests"] = graph_tick(now + dt.timedelta(minutes=120))
    out["later_requests"] = graph_tick(now + dt.timedelta(minutes=125))

    # Ten new pages within one hour.
    ten = [(dt.date(2025, 4, 1) + dt.timedelta(days=i)).isoformat() for i in range(10)]
    for day in ten:
        add_page(landing, template, day)
    result, cursor = sensor_tick(instance, cursor)
    out["ten_pages_requests"] = sorted(r.partition_key for r in result.run_requests)
    for r in result.run_requests:
        out["daily_runs_ok"].append(launcher.run("corpus_daily", r.partition_key, r.tags, QUIET).is_success)
    out["ten_before_cron_requests"] = graph_tick(now + dt.timedelta(minutes=150))
    out["ten_on_cron_requests"] = graph_tick(now + dt.timedelta(minutes=180))
    launcher.close()
    return out


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(Path(sys.argv[1]), sys.argv[2])))
