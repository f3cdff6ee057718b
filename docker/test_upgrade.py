"""`make test-upgrade` (also in `make test-containers`): the compose deployment upgrades in place,
Dagster included (issue 32, item 5; issue 46, part 6).

The stack (docker/conftest.py's, shared with the chaos test; when run alone, it first builds two
days) starts on the project built on the previous Dagster release, ``CORPUS_UPGRADE_FROM``
(default below: the release before the pin, with its matching integrations; the image is built
here from a copy of the build context whose pyproject.toml has every Dagster pin moved,
``docker/requirements.py --repin``; only the image's Dagster layer and the ones after it are new).
Its runs write history with that Dagster. Then the stack is stopped and started on an image of the
pinned Dagster whose code also differs in one stage's version (CiteWorth's paragraph rules,
``corpus.release.citeworth.CITEWORTH_VERSION``, bumped in a copy of the build context; the build
argument ``CORPUS_CODE_VERSION`` names it): ``CORPUS_IMAGE=<new tag> docker-compose up -d``, the
README's upgrade. The one-shot ``migrate`` service runs ``dagster instance migrate`` with the new
image and exits before the webserver and the daemon start.

Afterwards every service runs the new image and the pinned Dagster (the webserver says so),
run history, event log and materialisations are all there, as they were, and the new webserver
reads the old runs and their events; the ``built_by_current_code`` checks of the bumped stage's
two assets name every day built before (the ``corpus_code_versions`` sensor, within a tick) while
every other daily asset's passes, and ``python -m corpus_assets.rederive`` (``make rederive``) run
in the code server's container (the one with the data volume) rebuilds exactly those (asset, day)
pairs in runs of the new image, which all succeed; their rows do not change, so nothing
downstream runs, and the checks pass again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import UPGRADE_IMAGE
from requirements import dagster_pins, repin
from stack import DOCKER, DOCKER_DIR, StackError

PINNED = dagster_pins((DOCKER_DIR.parent / "pyproject.toml").read_text())["dagster"]
# The Dagster release the stack is built on before the upgrade: by default the patch release before
# the pin (with its integrations at their matching release); CORPUS_UPGRADE_FROM=1.12.22 picks another.
_major, _minor, _patch = (int(x) for x in PINNED.split("."))
UPGRADE_FROM = os.environ.get("CORPUS_UPGRADE_FROM") or f"{_major}.{_minor}.{max(_patch - 1, 0)}"
BEFORE_IMAGE = f"corpus-local/corpus:dagster-{UPGRADE_FROM}"
BUILD_TIMEOUT_S = 1200
BEFORE_BUILD: dict = {}  # what building the "before" image took (the test's report)

UPGRADE_VERSION = "upgrade-test-2"  # what the new image says it carries (CORPUS_CODE_VERSION)
SERVICES = ("code", "webserver", "daemon")
# The stage whose version the new image bumps, and the daily assets it writes.
BUMPED_FILE, BUMPED_CONSTANT = "corpus/release/citeworth.py", "CITEWORTH_VERSION"
BUMPED_ASSETS = ("citeworth_paragraphs", "citeworth_candidates")
CONTEXT = (
    "pyproject.toml",
    "setup.py",
    ".dockerignore",
    "docker",
    "corpus",
    "corpus_assets",
    "resources",
    "sensors",
)
CHECK_TIMEOUT_S = 180  # the corpus_code_versions sensor ticks every 30 s, after the location loads


def copy_context(into: Path) -> None:
    """A copy of the image's build context (what the Dockerfile copies)."""
    repo = DOCKER_DIR.parent
    for name in CONTEXT:
        src = repo / name
        if src.is_dir():
            shutil.copytree(src, into / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, into / name)


@pytest.fixture(scope="session")
def stack_image() -> str:
    """The project image on the previous Dagster, which conftest.py starts the stack on: the
    build context with every Dagster pin moved back (docker's cache holds every layer below
    Dagster's, from the pinned image docker/build-local-base.sh built)."""
    assert UPGRADE_FROM != PINNED, f"CORPUS_UPGRADE_FROM={UPGRADE_FROM} is the pin itself"
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="corpus-before-") as tmp:
        copy_context(Path(tmp))
        pyproject = Path(tmp) / "pyproject.toml"
        pyproject.write_text(repin(pyproject.read_text(), UPGRADE_FROM))
        done = subprocess.run(
            [DOCKER, "build", "-q", "--build-arg", "BASE_IMAGE=corpus-base:bookworm",
             "-f", str(Path(tmp) / "docker" / "Dockerfile"), "-t", BEFORE_IMAGE, tmp],
            capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        pytest.fail(
            f"the image on Dagster {UPGRADE_FROM} did not build:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )
    BEFORE_BUILD.update(image=BEFORE_IMAGE, build_s=round(time.monotonic() - t0, 1))
    return BEFORE_IMAGE


def bumped_context(into: Path) -> tuple[str, str]:
    """A copy of the build context whose stage version differs; (old, new) version."""
    copy_context(into)
    path = into / BUMPED_FILE
    text = path.read_text()
    line = next(x for x in text.splitlines() if x.startswith(f"{BUMPED_CONSTANT} = "))
    old = line.split('"')[1]
    new = f"{old}+{UPGRADE_VERSION}"
    path.write_text(text.replace(line, f'{BUMPED_CONSTANT} = "{new}"'))
    return old, new


def code_checks(c) -> dict[str, tuple[str, dict]]:
    """Each daily asset's latest built_by_current_code result: (status, metadata)."""
    rows = c.psql(
        "select distinct on (asset_key) asset_key, execution_status, evaluation_event from "
        "asset_check_executions where check_name = 'built_by_current_code' order by asset_key, id desc"
    )
    out = {}
    for key, status, event in rows:
        data = json.loads(event or "{}").get("dagster_event", {}).get("event_specific_data", {})
        meta = {k: v.get("text", v.get("value")) for k, v in (data.get("metadata") or {}).items()}
        out[json.loads(key)[0]] = (status, meta)
    return out


def wait_checks(c, want, what: str) -> dict:
    """Until ``want(checks)`` holds."""
    deadline, checks = time.monotonic() + CHECK_TIMEOUT_S, {}
    for _ in range(CHECK_TIMEOUT_S // 3 + 2):
        checks = code_checks(c)
        if want(checks):
            return checks
        if time.monotonic() > deadline:
            break
        time.sleep(3)
    raise StackError(f"{what}: not within {CHECK_TIMEOUT_S} s: {checks}")


def snapshot(c) -> dict:
    """Run history, event log and materialisations as Postgres holds them."""
    runs = dict(c.psql("select run_id, status from runs"))
    events = dict(c.psql("select coalesce(dagster_event_type, 'log'), count(*) from event_logs group by 1"))
    latest = c.psql(
        "select asset_key, coalesce(partition, ''), max(id) from event_logs where "
        "dagster_event_type = 'ASSET_MATERIALIZATION' group by 1, 2"
    )
    return {
        "runs": runs,
        "events": {k: int(v) for k, v in events.items()},
        "max_event_id": c.max_event_id(),
        "latest_materialization": {f"{json.loads(a)[0]}/{p}": int(i) for a, p, i in latest},
    }


def dagster_versions(s) -> dict[str, str]:
    """The Dagster each long-running service has installed, and the one the webserver says it runs."""
    script = "import dagster; print(dagster.__version__)"
    found = {service: s.exec(service, "python", "-c", script).strip() for service in SERVICES}
    return found | {"webserver GraphQL": s.gql("{ version }")["version"]}


def runs_through_ui(s, run_ids: list[str]) -> dict[str, tuple[str, int]]:
    """(status, events) of runs as the webserver reads them from the storage."""
    found = {}
    for run_id in run_ids:
        data = s.gql(
            "query($id: ID!) { runOrError(runId: $id) { __typename ... on Run { status } } "
            "logsForRun(runId: $id, limit: 100000) { __typename ... on EventConnection { events { __typename } } } }",
            {"id": run_id},
        )
        run, logs = data["runOrError"], data["logsForRun"]
        found[run_id] = (run.get("status", run["__typename"]), len(logs.get("events", [])))
    return found


def container(c, service: str) -> dict:
    cid = c.s.docker("ps", "-aq", "--filter", "label=com.docker.compose.project=corpus",
                     "--filter", f"label=com.docker.compose.service={service}").stdout.split()[0]  # fmt: skip
    return json.loads(c.s.docker("inspect", cid).stdout)[0]


@pytest.mark.timeout(1800)  # with the stack's start and the image of the previous Dagster
def test_the_stack_upgrades_in_place(chaos):
    c, s = chaos, chaos.s
    t0 = time.monotonic()
    if not c.psql("select 1 from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION' limit 1"):
        backfill = c.launch(c.grobid_days[:2])  # run alone: build some days first
        c.round = None
        c.wait_no_daily_runs(600)
        c.wait_backfill(backfill)
    c.wait_no_daily_runs(600)
    before = snapshot(c)
    old_image = container(c, "daemon")["Image"]
    # the history was written by the previous Dagster: every service, and every run's container
    versions_before = dagster_versions(s)
    assert set(versions_before.values()) == {UPGRADE_FROM}, versions_before
    assert {s.run_tag(r, "dagster/image") for r in before["runs"]} == {BEFORE_IMAGE}, before["runs"]
    ui_before = runs_through_ui(s, sorted(before["runs"]))

    from corpus_assets.rederive_plan import ranges_text

    built = {
        a: sorted({k.split("/", 1)[1] for k in before["latest_materialization"] if k.startswith(f"{a}/")})
        for a in BUMPED_ASSETS
    }
    assert all(built.values()), f"no day of {BUMPED_ASSETS} built before the upgrade: {built}"

    s.dc("stop", profiles=c.profiles, timeout=300)
    with tempfile.TemporaryDirectory(prefix="corpus-upgrade-") as tmp:
        old_version, new_version = bumped_context(Path(tmp))
        t_build = time.monotonic()
        s.docker(
            "build", "-q", "--build-arg", "BASE_IMAGE=corpus-base:bookworm", "--build-arg",
            f"CORPUS_CODE_VERSION={UPGRADE_VERSION}", "-f", str(Path(tmp) / "docker" / "Dockerfile"),
            "-t", UPGRADE_IMAGE, tmp, timeout=1200,
        )  # fmt: skip
        build_s = round(time.monotonic() - t_build, 1)
    s.extra_env["CORPUS_IMAGE"] = UPGRADE_IMAGE
    t_up = time.monotonic()
    s.dc("up", "-d", profiles=c.profiles, timeout=600)
    s.wait_webserver()
    c.wait_back(_upgrade_fault(), {"at": time.time() - (time.monotonic() - t_up)})
    up_s = round(time.monotonic() - t_up, 1)

    # the storage was migrated by the new image before the webserver and the daemon started
    migrate = container(c, "migrate")
    assert migrate["Config"]["Image"] == UPGRADE_IMAGE
    assert migrate["State"]["ExitCode"] == 0 and migrate["State"]["Status"] == "exited", migrate["State"]
    said = s.docker("logs", migrate["Id"]).stdout + s.docker("logs", migrate["Id"]).stderr
    assert "Storage schema state after migration" in said, said[-2000:]
    for service in ("webserver", "daemon"):
        started = container(c, service)["State"]["StartedAt"]
        assert started >= migrate["State"]["FinishedAt"], (service, started, migrate["State"])
    for service in SERVICES:
        info = container(c, service)
        assert info["Config"]["Image"] == UPGRADE_IMAGE and info["Image"] != old_image, service
        assert f"CORPUS_CODE_VERSION={UPGRADE_VERSION}" in info["Config"]["Env"], service
    versions_after = dagster_versions(s)
    assert set(versions_after.values()) == {PINNED}, versions_after

    # run history, event log and materialisations: all there, as they were
    after = snapshot(c)
    assert {r: after["runs"].get(r) for r in before["runs"]} == before["runs"]
    assert after["max_event_id"] >= before["max_event_id"]
    assert all(after["events"].get(k, 0) >= n for k, n in before["events"].items()), (before, after)
    latest = {
        k: v for k, v in after["latest_materialization"].items() if k in before["latest_materialization"]
    }
    assert latest == before["latest_materialization"]
    # and the new Dagster reads them: each old run, its status and its events, through the webserver
    assert runs_through_ui(s, sorted(before["runs"])) == ui_before

    # the stale checks name the days the old code built, for the bumped stage only
    t_check = time.monotonic()
    checks = wait_checks(
        c,
        lambda ch: all(ch.get(a, ("", {}))[1].get("code_version") == new_version for a in BUMPED_ASSETS),
        "the bumped stage's built_by_current_code checks",
    )
    check_s = round(time.monotonic() - t_check, 1)
    for asset in BUMPED_ASSETS:
        status, meta = checks[asset]
        assert status == "FAILED" and meta["days"] == ranges_text(built[asset]), (asset, checks[asset])
        assert meta["stale_days"] == len(built[asset]), (asset, meta)
    others = {a: st for a, (st, _) in checks.items() if a not in BUMPED_ASSETS}
    assert others and all(st == "SUCCEEDED" for st in others.values()), others

    # make rederive against the stack: exactly the stale (asset, day) pairs, in the new image
    mark = c.max_event_id()
    t_rederive = time.monotonic()
    # in the code server's container: the one with the data volume (the daemon has none: the
    # sensors run in the code server); the daemon runs the backfills it submits
    done = s.dc("exec", "-T", "code", "python", "-W", "ignore", "-m", "corpus_assets.rederive",
                profiles=c.profiles, timeout=900, check=False)  # fmt: skip
    rederive_s = round(time.monotonic() - t_rederive, 1)
    print(
        f"\nmake rederive in the code container ({rederive_s} s):\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = c.psql(
        "select asset_key, partition, run_id from event_logs where dagster_event_type = "
        f"'ASSET_MATERIALIZATION' and id > {mark} and partition is not null"
    )  # the daily assets (the cross-day ones follow at the catch-up sensor's pace)
    rebuilt: dict[str, list[str]] = {}
    for key, day, _ in rows:
        rebuilt.setdefault(json.loads(key)[0], []).append(day)
    assert {a: sorted(d) for a, d in rebuilt.items()} == built, (rebuilt, built, done.stdout[-2000:])
    runs = sorted({r for _, _, r in rows})
    assert {s.run_tag(r, "dagster/image") for r in runs} == {UPGRADE_IMAGE}, runs
    # the runs after the upgrade succeeded (the new Dagster, in run containers of the new image)
    assert {r: s.run_status(r) for r in runs} == dict.fromkeys(runs, "SUCCESS")
    checks = wait_checks(
        c,
        lambda ch: all(ch.get(a, ("", {}))[0] == "SUCCEEDED" for a in BUMPED_ASSETS),
        "the checks passing after make rederive",
    )
    c.report.append(
        {
            "upgrade": UPGRADE_IMAGE,
            "dagster": f"{UPGRADE_FROM} -> {PINNED}",
            "before_image": BEFORE_BUILD,
            "bumped": f"{BUMPED_CONSTANT} {old_version} -> {new_version}",
            "image_build_s": build_s,
            "runs_kept": len(before["runs"]),
            "events_kept": before["max_event_id"],
            "materialised_partitions_kept": len(before["latest_materialization"]),
            "up_on_new_image_s": up_s,
            "stale_check_s": check_s,
            "stale_days": {a: ranges_text(d) for a, d in built.items()},
            "rederive_s": rederive_s,
            "rederive_said": done.stdout.strip().splitlines()[-3:],
            "rederived": {a: len(d) for a, d in rebuilt.items()},
            "rederive_runs": len(runs),
            "seconds": round(time.monotonic() - t0, 1),
        }
    )


def _upgrade_fault():
    from chaos import Fault

    return Fault("stop-start", None, 0)  # the daemon restarted: its heartbeats must be new
