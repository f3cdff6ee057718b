"""The stack the chaos test (test_chaos.py) and the upgrade test (test_upgrade.py) share: one
start-up, one set of landing days, one data volume.

The data volume is a size-limited tmpfs (compose.chaos.yml) that a small container keeps
mounted while the stack is stopped or down (a local volume with mount options is unmounted
when its last container stops, and a tmpfs would lose its files). At the end: ``down -v``, and
nothing of the stack may be left (containers, volumes, network).
"""

from __future__ import annotations

import csv
import json
import os
import random
import time
from pathlib import Path

import pytest
from chaos import CHAOS_LABEL, HOLDER, Chaos
from stack import RUN_ID_LABEL, WORKER_LABEL, Stack, StackError

REPO = Path(__file__).resolve().parents[1]
LANDING = Path(os.environ.get("CORPUS_STACK_LANDING", REPO.parent / "shared" / "landing")).resolve()
REPORT = Path(os.environ.get("CORPUS_CHAOS_REPORT", "/tmp/corpus-test-chaos.json"))
SEED = int(os.environ.get("CORPUS_CHAOS_SEED") or random.SystemRandom().randrange(1, 10**6))

# Nine real days of ../shared/landing in six backfill runs: three consecutive metadata-only days
# of 2007 (one run), a day with only a LaTeX source, four days whose PDF goes to Grobid (the
# stand-in holds their real TEI), and a consecutive pair of 2025 whose 76-page PDF the filters
# keep from Grobid (one run).
DAYS = [
    "2007-03-31",
    "2007-04-01",
    "2007-04-02",
    "2020-01-08",
    "2020-10-03",
    "2021-08-17",
    "2023-08-02",
    "2025-02-17",
    "2025-02-18",
]
GROBID_DAYS = ["2020-01-08", "2021-08-17", "2023-08-02", "2025-02-18"]
STACK_ENV = {"CORPUS_START_DATE": DAYS[0]}  # the compose default starts at 2007-04-01
USED: list[Chaos] = []  # the session's Chaos, when a test asked for it (the summary says so)
UPGRADE_IMAGE = "corpus-local/corpus:upgrade-test"  # built by test_upgrade.py
PROJECT_VOLUMES = {"corpus_data", "corpus_landing", "dagster_logs", "dagster_postgres", "redis_data"}


def landing_ids(days: list[str]) -> list[str]:
    with open(LANDING / "MANIFEST.tsv", newline="") as fh:
        return [row["file_stem"] for row in csv.DictReader(fh, delimiter="\t") if row["datestamp"] in days]


def left_behind(s: Stack) -> dict:
    """What of the stack still exists: containers (its own, runs', workers', the holder),
    volumes, the network."""
    containers = set()
    for label in ("com.docker.compose.project=corpus", RUN_ID_LABEL, WORKER_LABEL, CHAOS_LABEL):
        containers |= set(s.docker("ps", "-aq", "--filter", f"label={label}", check=False).stdout.split())
    volumes = set(s.docker("volume", "ls", "-q").stdout.split()) & PROJECT_VOLUMES
    networks = set(s.docker("network", "ls", "-q", "--filter", "name=^corpus$").stdout.split())
    return {"containers": sorted(containers), "volumes": sorted(volumes), "networks": sorted(networks)}


def remove_holder(s: Stack) -> None:
    s.docker("rm", "-f", HOLDER, check=False)


@pytest.fixture(scope="session")
def stack_image() -> str | None:
    """The project image the stack starts on: None, the env file's (the one
    docker/build-local-base.sh built from this checkout). test_upgrade.py starts it on the
    project built on the previous Dagster release instead."""
    return None


@pytest.fixture(scope="session")
def chaos(stack_image):
    if not (LANDING / "oai").is_dir():
        pytest.fail(f"no landing zone at {LANDING} (../shared/landing beside the repository)")
    if os.geteuid() != 0:
        pytest.skip("the chaos test kills the stack's processes from the host (kill -9): run it as root")
    env = dict(STACK_ENV) | ({"CORPUS_IMAGE": stack_image} if stack_image else {})
    s = Stack(landing_source=LANDING, extra_files=("compose.chaos.yml",), extra_env=env)
    from corpus_assets.jobs import DAILY_ASSETS

    c = Chaos(s, DAYS, list(DAILY_ASSETS), GROBID_DAYS)
    c.seed = SEED
    USED.append(c)
    print(f"\nchaos seed {SEED} (CORPUS_CHAOS_SEED={SEED} repeats it)", flush=True)
    remove_holder(s)
    s.down()  # a stack left by an interrupted run
    t0 = c.started = time.monotonic()
    try:
        s.up()
        s.docker(
            "run", "-d", "--name", HOLDER, "--label", f"{CHAOS_LABEL}=1", "--network", "none",
            "-v", "corpus_data:/data", s.image("TOOLS_IMAGE"), "sleep", "86400",
        )  # fmt: skip
        # the test launches its own backfills: the landing sensor would build the days too
        # (a stop sent while the webserver still loads the location answers an error: again)
        for name in ("landing_oai_sensor",):
            for _ in range(30):
                said = s.sensor(name, running=False)
                if said == "STOPPED":
                    break
                time.sleep(2)
            assert said == "STOPPED", f"{name} not stopped: {said}"
        s.wait_daemon()
        s.fill_landing(DAYS, landing_ids(DAYS))
        c.timings = {"stack_up_s": round(time.monotonic() - t0, 1)}
        yield c
    finally:
        t_down = time.monotonic()
        try:
            remove_holder(s)
            s.down()
            s.docker("rmi", "-f", UPGRADE_IMAGE, check=False)  # test_upgrade.py's image, if it made one
            left = left_behind(s)
        except StackError as exc:
            left = {"error": str(exc)}
        c.timings = {**getattr(c, "timings", {}), "down_s": round(time.monotonic() - t_down, 1)}
        c.left_after_down = left
        write_report(c)
        REPORT.with_suffix(".log").write_text("\n".join(s.log))
        assert left == {"containers": [], "volumes": [], "networks": []}, f"left after down -v: {left}"


def write_report(c: Chaos) -> None:
    REPORT.write_text(
        json.dumps(
            {
                "seed": getattr(c, "seed", None),
                "timings": getattr(c, "timings", {}),
                "faults": c.report,
                "left_after_down": getattr(c, "left_after_down", None),
            },
            indent=1,
            default=str,
        )
    )


def pytest_terminal_summary(terminalreporter):
    """The seed and each fault's recovery, at the end of the run (the full report is the JSON)."""
    if not USED or not REPORT.exists():
        return
    data = json.loads(REPORT.read_text())
    terminalreporter.write_sep("-", f"chaos: seed {data['seed']}, report {REPORT}")
    for entry in data["faults"]:
        if "not_run" in entry:
            terminalreporter.write_line(f"  {entry['fault']:<20} not run: {entry['not_run']}")
        elif "fault" in entry:
            terminalreporter.write_line(
                f"  {entry['fault']:<20} at {entry['progress_at_injection']}: service back "
                f"{entry['service_back_s']} s, recovered {entry['recovered_s']} s"
                + (f"; operator: {entry['operator']}" if entry.get("operator") else "")
            )
        elif "upgrade" in entry:
            terminalreporter.write_line(
                f"  upgrade: Dagster {entry['dagster']}, {entry['runs_kept']} runs and {entry['events_kept']} "
                f"events kept, up on the new image {entry['up_on_new_image_s']} s, re-derive "
                f"{entry['rederive_s']} s ({entry['rederive_runs']} runs), {entry['seconds']} s in all; "
                f"images: before {entry['before_image'].get('build_s')} s, after {entry['image_build_s']} s"
            )
        elif "round" in entry:
            terminalreporter.write_line(
                f"  round {entry['round']}: {entry.get('seconds')} s, {entry.get('runs')}"
            )
    terminalreporter.write_line(f"  timings: {data['timings']}")
