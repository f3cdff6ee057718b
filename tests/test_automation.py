"""H: new OAI metadata reaches every asset with no human action, once; the demo leaves the
sensors nothing to redo; every landing day works from the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from corpus.ingest.landing import LandingZone

REPO = Path(__file__).resolve().parents[1]
# Two real days of ../shared/landing (one TEI paper, one LaTeX paper): the new pages re-deliver 2023-02-14's.
DAYS = ("2023-01-30", "2023-02-14")


def small_landing(shared_landing: Path, dest: Path, days: tuple[str, ...] = DAYS) -> Path:
    """A copy of a few real days of the landing zone, with their PDFs, e-prints and TEI."""
    for sub in ("oai", "pdf", "src", "tei"):
        (dest / sub).mkdir(parents=True)
    zone = LandingZone(shared_landing)
    for day in days:
        shutil.copy(shared_landing / "oai" / f"{day}.xml", dest / "oai")
    ids = [r.id for recs in zone.read_days(days).records.values() for r in recs]
    for sub in ("pdf", "src", "tei"):
        for path in (shared_landing / sub).iterdir():
            if any(path.name.startswith(i.replace("/", "_") + ".") for i in ids):
                shutil.copy(path, dest / sub)
    return dest


def scenario_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORPUS_")}
    return {
        **env,
        "CORPUS_HOME": str(tmp_path / "data"),
        "DAGSTER_HOME": str(home),
        "PYTHONPATH": str(REPO / "tests"),
    }


@pytest.mark.slow
def test_new_pages_flow_through_every_asset_once(tmp_path, shared_landing):
    landing = small_landing(shared_landing, tmp_path / "landing")
    env = {**scenario_env(tmp_path), "CORPUS_LANDING": str(landing)}
    proc = subprocess.run(
        [sys.executable, str(REPO / "tests" / "automation_scenario.py"), str(landing), f"{DAYS[1]}.xml"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))[7:])
    assert all(out["initial_runs_ok"]) and out["initial_graph_ok"]
    # The demo-then-UI case: the sensors and automation find nothing to redo, the checks are green.
    assert out["after_demo_sensor_requests"] == 0
    assert out["after_demo_automation_requests"] == 0
    assert out["after_demo_catch_up_requests"] == 0
    assert all(out["after_demo_checks"].values()) and len(out["after_demo_checks"]) == 5
    # One new page: one daily run for its day, once; one cross-day run on the next cron tick.
    assert [day for day, _ in out["new_page_requests"]] == ["2025-03-24"]
    assert out["second_sensor_tick_requests"] == 0
    # Before the cron tick the cross-day assets only say they are stale (their up_to_date checks);
    # the peS2o releases read days up to their cutoff (2023-01-03): a 2025 day is not theirs.
    assert out["before_cron_requests"] == []
    stale = {"citation_links", "citation_graph", "citeworth_splits"}
    assert {a for a, ok in out["before_cron_checks"].items() if not ok} == stale
    assert out["on_cron_requests"] == [sorted(stale)]
    # The checks are green again; then nothing more happens.
    assert out["next_cron_requests"] == [] and all(out["next_cron_checks"].values())
    assert out["later_requests"] == []
    # Ten new days in one hour: ten daily runs, one cross-day run.
    assert len(out["ten_pages_requests"]) == 10
    assert out["ten_before_cron_requests"] == []
    assert out["ten_on_cron_requests"] == [sorted(stale)]
    assert all(out["ten_after_checks"].values())
    assert all(out["daily_runs_ok"]) and all(out["graph_runs_ok"]) and len(out["graph_runs_ok"]) == 2
    # The new days reached the releases.
    data = tmp_path / "data"
    for day in ["2025-03-24", "2025-04-10"]:
        for asset in ("arxiv_metadata", "papers", "bib_entries", "pes2o", "citeworth_paragraphs"):
            assert (data / asset / f"date={day}" / "part-0.parquet").exists(), (asset, day)
    for version in ("v1", "v2"):  # (their documents are after the default cutoff: released as none)
        assert (data / "releases" / "pes2o" / version / "manifest.json").exists()
    assert (data / "releases" / "citeworth" / "train.jsonl").exists()
