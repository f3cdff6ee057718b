"""No lost updates: a day that lands while the cross-day assets run is caught up by at most one
more cross-day run, and the up_to_date checks are green only when every release reads every
built day (tests/race_scenarios.py drives each race through Dagster's in-process APIs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_automation import small_landing

REPO = Path(__file__).resolve().parents[1]
BASE_DAYS = ("2022-04-11", "2022-07-11")
RACES = ["between_read_and_event", "after_event_before_end", "two_days", "backfill", "redelivery"]


def _run(args: list[str], env: dict[str, str]) -> dict:
    proc = subprocess.run(
        [sys.executable, str(REPO / "tests" / "race_scenarios.py"), *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))[7:])


@pytest.fixture(scope="module")
def race_env(tmp_path_factory, shared_landing):
    """A base (two real days built, the cross-day assets caught up) and one work directory every
    race restores it into: the same absolute paths each time, as a deployment's are."""
    root = tmp_path_factory.mktemp("races")
    base, work = root / "base", root / "work"
    base.mkdir()
    small_landing(shared_landing, base / "landing", days=BASE_DAYS)
    home = base / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORPUS_")}
    env.update(
        CORPUS_HOME=str(work / "data"),
        CORPUS_LANDING=str(work / "landing"),
        DAGSTER_HOME=str(work / "dagster_home"),
        CORPUS_DEPLOYMENT="inprocess",  # the races are about ordering, not where steps run
        PYTHONPATH=str(REPO),
    )
    shutil.copytree(base, work)
    out = _run(["base", str(work / "landing")], env)
    shutil.rmtree(base)
    shutil.copytree(work, base)
    return {"base": base, "work": work, "env": env, "base_result": out}


def test_base_is_caught_up_and_consistent(race_env):
    out = race_env["base_result"]
    assert all(out["daily_ok"]) and all(out["graph_ok"])
    assert out["first_requests"] == [
        sorted(["citation_links", "citation_graph", "pes2o_v1", "pes2o_v2", "citeworth_splits"])
    ]
    assert out["settle_runs"] == 0
    assert all(out["checks"].values()) and len(out["checks"]) == 5
    assert all(out["consistent"].values()), out["consistent"]


@pytest.mark.parametrize("race", RACES)
def test_race(race_env, race):
    work = race_env["work"]
    shutil.rmtree(work)
    shutil.copytree(race_env["base"], work)
    out = _run(["race", race, str(work / "landing")], race_env["env"])
    assert all(out["daily_ok"]) and out["race_run_ok"] and all(out["graph_runs_ok"]), out
    # At most one more cross-day run catches up what the race's run missed ...
    assert out["more_runs"] <= 1, out
    # ... and then every release reads every built day, with its current content, and says so.
    assert all(out["consistent"].values()), out["consistent"]
    assert all(out["checks_final"].values()) and len(out["checks_final"]) == 5, out["checks_final"]
    # Whenever the race's run missed a day, the checks said so within a tick (never green while stale).
    if out["more_runs"]:
        assert not all(out["checks_after_race_run"].values()), out
        # A fresh evaluator (a reset sensor, a new daemon) asks for the same catch-up at once.
        assert out["fresh_cursor_requests"] == [out["stale_after_race_run"]], out
    # The race happened as named: the day(s) materialised inside the catch-up run, before or after
    # citation_links' materialisation event.
    inside = out["inside_race_run"]
    before = {"after_event_before_end": False}.get(race, True)
    assert inside and all(i["before_links_event"] is before for i in inside), inside
    assert sum(i["days"] for i in inside) == {"two_days": 2, "backfill": 3}.get(race, 1), inside
    if race == "backfill":
        assert out["after_hooks"][0]["requests_while_backfilling"] == 0, out
