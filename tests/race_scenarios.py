"""Races between the days and the cross-day catch-up, driven deterministically through Dagster's
in-process APIs (run by tests/test_races.py in a fresh interpreter, so the code location loads
with the scenario's settings, as a deployment would load it).

The catch-up sensor's ticks are evaluated in process (``build_sensor_context``) at chosen times,
its check results reported as the sensor daemon reports them, and runs are executed by hand
(``LocalLauncher``). A race puts a daily run *inside* a cross-day run: a step of the cross-day
run calls a hook (the function it imports is wrapped), which runs the daily job to the end
before the step goes on. No thread, no sleep.

``python race_scenarios.py base LANDING``: build the base (two real days, one catch-up).
``python race_scenarios.py race NAME LANDING``: run race NAME on a copy of the base, print
``RESULT {json}``: the catch-up runs it took, the checks seen, and whether every release reads
every built day with its current content.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import dagster as dg
from release_check import releases_read_every_day

from corpus.store import Store
from corpus_assets.definitions import READS, defs
from corpus_assets.demo import QUIET
from corpus_assets.freshness import CHECK_NAME
from corpus_assets.launch import LocalLauncher

BASE_DAYS = ("2022-04-11", "2022-07-11")  # real landing days before the peS2o cutoff, both with TEI
# The sensor's clock (cron ticks on the hour), set by the scenario, ahead of the events' own.
T0 = dt.datetime(2030, 1, 1, 10, 5, tzinfo=dt.UTC)


class Harness:
    def __init__(self, landing: Path):
        import sensors.cross_day as cross_day

        self.landing = landing
        self.instance = dg.DagsterInstance.get()
        self.launcher = LocalLauncher(self.instance)
        self.sensor = defs.get_sensor_def("corpus_graph_catch_up")
        self.repo = defs.get_repository_def()
        self.module = cross_day
        self.clock = T0
        state = landing.parent / "harness.json"
        saved = json.loads(state.read_text()) if state.exists() else {}
        self.cursor: str | None = saved.get("cursor")
        if saved.get("clock"):
            self.clock = dt.datetime.fromisoformat(saved["clock"])
        self.graph_runs: list[bool] = []
        self.graph_run_ids: list[str] = []
        self.daily_runs: list[str] = []

    def save(self) -> None:
        body = {"cursor": self.cursor, "clock": self.clock.isoformat()}
        (self.landing.parent / "harness.json").write_text(json.dumps(body))

    # ----------------------------------------------------------------- ticks and runs
    def tick(self, minutes: float = 1) -> dg.SensorResult:
        self.clock += dt.timedelta(minutes=minutes)
        self.module.now = lambda: self.clock
        ctx = dg.build_sensor_context(instance=self.instance, cursor=self.cursor, repository_def=self.repo)
        result = self.sensor(ctx)
        for event in result.asset_events:  # what the sensor daemon does with them
            self.instance.report_runless_asset_event(event)
        self.cursor = result.cursor
        return result

    def daily(self, day: str) -> bool:
        run = self.launcher.run("corpus_daily", day, run_config=QUIET)
        self.daily_runs.append(run.run_id)
        return run.is_success

    def daily_range(self, first: str, last: str, backfill_id: str) -> bool:
        """One run of a backfill: the days first..last in one run, as a multi-run policy cuts them."""
        tags = {
            "dagster/asset_partition_range_start": first,
            "dagster/asset_partition_range_end": last,
            "dagster/backfill": backfill_id,
        }
        run = self.launcher.run("corpus_daily", tags=tags, run_config=QUIET)
        self.daily_runs.append(run.run_id)
        return run.is_success

    def run_request(self, request: dg.RunRequest) -> bool:
        run = self.launcher.run(
            "corpus_graph", tags=request.tags, run_config=QUIET, asset_selection=request.asset_selection
        )
        self.graph_runs.append(run.is_success)
        self.graph_run_ids.append(run.run_id)
        return run.is_success

    def interleaving(self, graph_run_id: str) -> list[dict]:
        """For each daily run that ran inside the cross-day run: whether its papers events come
        before or after citation_links' materialisation event of that run."""
        record = self.instance.get_run_record_by_id(graph_run_id)
        links = self.instance.fetch_materializations(dg.AssetKey("citation_links"), limit=20).records
        links_id = next(r.storage_id for r in links if r.run_id == graph_run_id)
        papers = self.instance.fetch_materializations(dg.AssetKey("papers"), limit=100).records
        out = []
        for run_id in self.daily_runs:
            daily = self.instance.get_run_record_by_id(run_id)
            if not (record.start_time <= daily.start_time and daily.end_time <= record.end_time):
                continue
            ids = [r.storage_id for r in papers if r.run_id == run_id]
            out.append({"days": len(ids), "before_links_event": all(i < links_id for i in ids)})
        return out

    def settle(self, rounds: int = 4) -> int:
        """Ticks on the next cron ticks, running what they ask, until a tick asks nothing; returns
        the cross-day runs it took."""
        runs = 0
        for _ in range(rounds):
            minutes = 61 - self.clock.minute  # one minute past the next hour
            result = self.tick(minutes)
            if not result.run_requests:
                return runs
            for request in result.run_requests:
                self.run_request(request)
                runs += 1
        return runs

    def checks(self) -> dict[str, bool]:
        keys = [dg.AssetCheckKey(dg.AssetKey(a), CHECK_NAME) for a in READS]
        latest = self.instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
        return {
            k.asset_key.to_user_string(): latest[k].status.value == "SUCCEEDED" for k in keys if k in latest
        }

    # ----------------------------------------------------------------- the landing zone
    def add_page(self, template: str, day: str) -> None:
        """A copy of a real page, re-dated: its records arrive again on ``day``."""
        text = (self.landing / "oai" / f"{template}.xml").read_text()
        text = re.sub(r"<datestamp>[^<]+</datestamp>", f"<datestamp>{day}</datestamp>", text)
        (self.landing / "oai" / f"{day}.xml").write_text(text)

    def change_page(self, day: str) -> None:
        """The same day delivered again with a changed record (a corrected title)."""
        path = self.landing / "oai" / f"{day}.xml"
        text = path.read_text()
        text, n = re.subn(r"<title>", "<title>Revised: ", text, count=1)
        assert n == 1, path
        path.write_text(text)

    # ----------------------------------------------------------------- what the releases read
    def consistency(self) -> dict[str, bool]:
        return releases_read_every_day(Store.from_env())

    def built_days(self) -> list[str]:
        return Store.from_env().partitions("papers")

    def close(self) -> None:
        self.save()
        self.launcher.close()


def during(module: str, name: str, hook: Callable[[], None], after: bool = True) -> None:
    """Wrap ``module.name`` (imported by a cross-day step when it runs) so that ``hook`` runs once,
    after (or before) the first call."""
    import importlib

    mod = importlib.import_module(module)
    original = getattr(mod, name)
    done = []

    def wrapped(*args, **kwargs):
        if not after and not done:
            done.append(1)
            hook()
        result = original(*args, **kwargs)
        if after and not done:
            done.append(1)
            hook()
        return result

    setattr(mod, name, wrapped)


# --------------------------------------------------------------------------------- scenarios
LINKS_READ = ("corpus.graph.citation_links", "link_shard")  # links has read the store
GRAPH_FINISHING = ("corpus.graph.citation_graph", "finish_graph")  # links' event logged, run not over


def race_between_read_and_event(h: Harness, out: dict) -> None:
    """A day materialised after the cross-day run read its inputs, before its materialisation event."""
    h.add_page(BASE_DAYS[0], "2022-08-01")
    during(*LINKS_READ, lambda: out.setdefault("daily_ok", []).append(h.daily("2022-08-01")))


def race_after_event_before_end(h: Harness, out: dict) -> None:
    """A day materialised after citation_links' materialisation event, before the run ends."""
    h.add_page(BASE_DAYS[0], "2022-08-02")
    during(
        *GRAPH_FINISHING, lambda: out.setdefault("daily_ok", []).append(h.daily("2022-08-02")), after=False
    )


def race_two_days(h: Harness, out: dict) -> None:
    """Two days materialised during one cross-day run."""
    for d in ("2022-08-03", "2022-08-04"):
        h.add_page(BASE_DAYS[1], d)
    during(
        *LINKS_READ,
        lambda: out.setdefault("daily_ok", []).extend([h.daily("2022-08-03"), h.daily("2022-08-04")]),
    )


def race_backfill(h: Harness, out: dict) -> None:
    """A 5-day backfill (runs of 3 and 2 days) overlapping a catch-up run: its first run starts
    inside the catch-up, its second after it, while the backfill is still in progress."""
    from corpus_assets.dagster_internals import AssetBackfill

    days = [f"2022-09-0{i}" for i in range(1, 6)]
    for i, d in enumerate(days):
        h.add_page(BASE_DAYS[i % 2], d)
    backfill = AssetBackfill(
        h.instance,
        h.launcher.repo.asset_graph,
        days,
        [dg.AssetKey("papers")],
        "race backfill",
        h.clock.timestamp(),
    )

    def first_run():
        backfill.add()  # in progress from here
        out.setdefault("daily_ok", []).append(h.daily_range(days[0], days[2], backfill.backfill_id))

    during(*LINKS_READ, first_run)
    out["after_hooks"] = after = []

    def second_run():
        # The catch-up run is over; the backfill is still in progress: no catch-up is asked.
        result = h.tick()
        after.append({"requests_while_backfilling": len(result.run_requests), "checks": h.checks()})
        out["daily_ok"].append(h.daily_range(days[3], days[4], backfill.backfill_id))
        backfill.complete()

    out["_after_run"] = second_run


def race_redelivery(h: Harness, out: dict) -> None:
    """A day delivered again (its page changed) while the cross-day run works."""

    def redeliver():
        h.change_page(BASE_DAYS[1])
        out.setdefault("daily_ok", []).append(h.daily(BASE_DAYS[1]))

    during(*LINKS_READ, redeliver)


RACES = {
    "between_read_and_event": race_between_read_and_event,
    "after_event_before_end": race_after_event_before_end,
    "two_days": race_two_days,
    "backfill": race_backfill,
    "redelivery": race_redelivery,
}


def base(landing: Path) -> dict:
    h = Harness(landing)
    out = {"daily_ok": [h.daily(d) for d in BASE_DAYS]}
    result = h.tick()
    out["first_requests"] = [
        sorted(k.to_user_string() for k in r.asset_selection) for r in result.run_requests
    ]
    for request in result.run_requests:
        h.run_request(request)
    out["settle_runs"] = h.settle()
    out["graph_ok"] = h.graph_runs
    out["checks"] = h.checks()
    out["consistent"] = h.consistency()
    h.close()
    return out


def race(name: str, landing: Path) -> dict:
    h = Harness(landing)
    out: dict = {"race": name}
    RACES[name](h, out)
    # The catch-up run the race happens in: a day landed before it (so the sensor asks for it).
    h.add_page(BASE_DAYS[1], "2022-06-01")
    out["daily_ok"] = [h.daily("2022-06-01"), *out.get("daily_ok", [])]
    result = h.tick(61 - h.clock.minute)  # the next cron tick asks for the catch-up the race runs in
    out["race_run_ok"] = h.run_request(result.run_requests[0]) if result.run_requests else None
    out["inside_race_run"] = h.interleaving(h.graph_run_ids[-1]) if out["race_run_ok"] else []
    after_run = out.pop("_after_run", None)
    if after_run is not None:
        after_run()
    result = h.tick()  # within one tick: stale, if the run missed something
    out["checks_after_race_run"] = h.checks()
    out["stale_reported"] = sorted(e.asset_key.to_user_string() for e in result.asset_events if not e.passed)
    # A new evaluator (a reset sensor, no cursor) reaches the same verdict and asks at once.
    fresh = h.sensor(dg.build_sensor_context(instance=h.instance, cursor=None, repository_def=h.repo))
    out["fresh_cursor_requests"] = [
        sorted(k.to_user_string() for k in r.asset_selection) for r in fresh.run_requests
    ]
    out["stale_after_race_run"] = sorted(a for a, ok in h.checks().items() if not ok)
    out["more_runs"] = h.settle()
    out["graph_runs_ok"] = h.graph_runs
    out["checks_final"] = h.checks()
    out["consistent"] = h.consistency()
    out["built_days"] = h.built_days()
    out["runs_total"] = len(h.graph_runs)
    h.close()
    return out


if __name__ == "__main__":
    mode, *rest = sys.argv[1:]
    if mode == "base":
        print("RESULT " + json.dumps(base(Path(rest[0]))))
    else:
        print("RESULT " + json.dumps(race(rest[0], Path(rest[1]))))
