"""``make rederive`` on real landing days, after the code changes as a user's checkout would
(a copy of the project with a stage's version bumped): exactly that stage's days are rebuilt,
then downstream only the days whose inputs' content changed; the stale-code check names the
days first; a failing day makes the command fail."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest

from corpus_assets.jobs import DAILY_ASSETS

REPO = Path(__file__).resolve().parents[1]
DAYS = ["2007-03-31", "2020-10-03", "2023-08-02", "2025-03-22"]  # 2020-10-03: 2004.14974 with LaTeX
FILES = ["src/2004.14974.tar.gz", "src/2408.12714.tar.gz", "pdf/1706.03762.pdf", "tei/1706.03762.tei.xml"]
DAILY = DAILY_ASSETS
pytestmark = pytest.mark.slow


def _env(base: Path) -> dict[str, str]:
    return {
        **os.environ,
        "CORPUS_HOME": str(base / "data"),
        "DAGSTER_HOME": str(base / "dagster_home"),
        "CORPUS_LANDING": str(base / "landing"),
        "CORPUS_START_DATE": "2007-03-31",
    }


def _project_copy(base: Path, name: str) -> Path:
    """The project's code as a user's next checkout would hold it (edited by the test)."""
    copy = base / name
    for part in ("corpus", "corpus_assets", "resources", "sensors"):
        shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("workspace.yaml", "pyproject.toml"):
        shutil.copy(REPO / part, copy / part)
    return copy


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _bump(copy: Path, module: str, name: str) -> str:
    """Move a stage's version constant one step, as a change to that stage would."""
    path = copy / "corpus" / module
    text = path.read_text()
    found = re.search(rf'^{name} = "([^"]+)/(\d+)"', text, re.M)
    assert found, f"no {name} in {path}"
    new = f"{found.group(1)}/{int(found.group(2)) + 1}"
    path.write_text(text.replace(found.group(0), f'{name} = "{new}"'))
    return new


def _rederive(base: Path, code: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**_env(base), "PYTHONPATH": str(code)}
    return subprocess.run(
        [sys.executable, "-m", "corpus_assets.rederive", *args],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _counts(base: Path) -> Counter:
    """Materialisations per (asset, day) in the instance."""
    os.environ["DAGSTER_HOME"] = str(base / "dagster_home")
    counts: Counter = Counter()
    with dg.DagsterInstance.get() as instance:
        for asset in DAILY:
            for rec in instance.fetch_materializations(dg.AssetKey(asset), limit=10_000).records:
                counts[(asset, rec.partition_key)] += 1
    return counts


@pytest.fixture(scope="module")
def built(tmp_path_factory, shared_landing):
    base = tmp_path_factory.mktemp("rederive")
    landing = base / "landing"
    for kind in ("oai", "pdf", "src", "tei"):
        (landing / kind).mkdir(parents=True)
    for day in DAYS:
        shutil.copy(shared_landing / "oai" / f"{day}.xml", landing / "oai")
    for name in FILES:
        shutil.copy(shared_landing / name, landing / name)
    (base / "dagster_home").mkdir()
    shutil.copy(REPO / "dagster.yaml", base / "dagster_home" / "dagster.yaml")
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "corpus_assets.demo", "--landing", str(landing)],
        cwd=REPO,
        env=_env(base),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    saved = os.environ.get("DAGSTER_HOME")
    yield base
    if saved is None:
        os.environ.pop("DAGSTER_HOME", None)
    else:
        os.environ["DAGSTER_HOME"] = saved


def test_a_build_leaves_nothing_to_rederive(built):
    done = _rederive(built, REPO)
    assert done.returncode == 0, done.stderr
    assert "nothing to re-derive" in done.stdout


def test_a_data_root_without_the_built_days_is_an_error_not_nothing_to_do(built, tmp_path):
    """Run where the data is not mounted (a compose service without the data volume), the store
    is empty while the instance has built days: saying "nothing to re-derive" would be a lie."""
    env = {**_env(built), "PYTHONPATH": str(REPO), "CORPUS_HOME": str(tmp_path / "elsewhere")}
    done = subprocess.run([sys.executable, "-m", "corpus_assets.rederive"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "holds none" in done.stderr and "nothing to re-derive" not in done.stdout


def test_the_code_versions_sensor_reports_every_daily_assets_check(built):
    from resources.store import CorpusStore
    from sensors.rederive import corpus_code_versions, read_through

    os.environ["DAGSTER_HOME"] = str(built / "dagster_home")
    resources = {"corpus": CorpusStore(home=str(built / "data"), landing=str(built / "landing"))}
    with dg.DagsterInstance.get() as instance:
        context = dg.build_sensor_context(
            instance=instance, resources=resources, sensor_name="corpus_code_versions"
        )
        found = corpus_code_versions(context)
    assert {e.asset_key.to_user_string() for e in found.asset_events} == set(DAILY)
    assert read_through(found.cursor) > 0  # the first tick: every check reported once
    assert not found.cursor.startswith("{")  # in words on the sensor's page


def test_the_check_names_the_days_built_by_older_code(built):
    from corpus.store import Store
    from corpus_assets.rederive_plan import current_versions
    from sensors.rederive import code_version_tick

    os.environ["DAGSTER_HOME"] = str(built / "dagster_home")
    store = Store(built / "data")
    versions = current_versions(DAILY)
    with dg.DagsterInstance.get() as instance:
        first, cursor = code_version_tick(instance, store, versions, None)
        assert {e.asset_key.to_user_string() for e in first} == set(DAILY) and all(e.passed for e in first)
        for e in first:
            instance.report_runless_asset_event(e)
        again, cursor = code_version_tick(instance, store, versions, cursor)
        assert again == []  # nothing changed: nothing reported
        newer = {**versions, "latex_parses": "corpus.parse.latex/999"}  # the code location reloaded
        changed, _ = code_version_tick(instance, store, newer, cursor)
    assert [e.asset_key.to_user_string() for e in changed] == ["latex_parses"]
    (check,) = changed
    assert not check.passed
    assert "2007-03-31, 2020-10-03, 2023-08-02, 2025-03-22 (4 days)" in check.description
    assert check.metadata["days"].value == "2007-03-31, 2020-10-03, 2023-08-02, 2025-03-22"


def _evaluated_for_latest(
    instance: dg.DagsterInstance, asset: str, check: str = "built_by_current_code"
) -> bool:
    """What the UI shows for a check of ``asset``: its latest result only if it was reported after
    the asset's latest materialisation (any day; Dagster's AssetCheckExecutionRecord
    .targets_latest_materialization for a result with no target), else "Not evaluated"."""
    key = dg.AssetCheckKey(dg.AssetKey(asset), check)
    record = instance.event_log_storage.get_latest_asset_check_execution_by_key([key]).get(key)
    (latest,) = instance.fetch_materializations(dg.AssetKey(asset), limit=1).records
    if record is None or record.status.value == "PLANNED":
        return False
    return record.run_id == latest.run_id or latest.timestamp < record.create_timestamp


def test_every_check_of_what_a_run_built_is_evaluated_within_a_tick(built):
    """Issue 46, 1: after any run that builds days, whoever launched it (here: two days executed in
    process; the browser check did an asset page's run), one tick of corpus_code_versions reports
    the built_by_current_code check of
    every daily asset the run built, though no stale day changed: the UI shows a check whose result
    is older than the asset's latest materialisation as "Not evaluated"."""
    from corpus_assets.definitions import defs
    from corpus_assets.demo import QUIET
    from resources.arxiv import ArxivResource
    from resources.store import CorpusStore
    from sensors.rederive import corpus_code_versions

    os.environ["DAGSTER_HOME"] = str(built / "dagster_home")
    store = CorpusStore(home=str(built / "data"), landing=str(built / "landing"))
    resources = {"corpus": store, "arxiv": ArxivResource(source="landing")}
    with dg.DagsterInstance.get() as instance:
        cursor = None
        for _ in range(2):  # caught up with what the fixture built
            context = dg.build_sensor_context(
                instance=instance,
                resources={"corpus": store},
                sensor_name="corpus_code_versions",
                cursor=cursor,
            )
            result = corpus_code_versions(context)
            for event in result.asset_events:
                instance.report_runless_asset_event(event)
            cursor = result.cursor
        assert result.asset_events == [] and all(_evaluated_for_latest(instance, a) for a in DAILY)

        whole = defs.resolve_job_def("corpus_daily").execute_in_process(
            instance=instance, resources=resources, partition_key=DAYS[1], run_config=QUIET
        )
        one = defs.resolve_job_def("corpus_daily").execute_in_process(
            instance=instance, resources=resources, partition_key=DAYS[2], run_config=QUIET
        )
        assert whole.success and one.success
        assert not [a for a in DAILY if _evaluated_for_latest(instance, a)]  # "Not evaluated" (the control)
        # SQLite keeps a check result's create_timestamp in whole seconds, and the UI compares it with
        # the materialisation's: a tick in the same second as the build reads as older. A real tick
        # comes seconds after a run; here the runs end within the second, so let it pass.
        time.sleep(max(0.0, math.ceil(time.time()) - time.time()) + 0.05)
        context = dg.build_sensor_context(
            instance=instance, resources={"corpus": store}, sensor_name="corpus_code_versions", cursor=cursor
        )
        result = corpus_code_versions(context)
        for event in result.asset_events:
            instance.report_runless_asset_event(event)
        assert {e.asset_key.to_user_string() for e in result.asset_events} == set(DAILY)
        assert all(e.passed for e in result.asset_events)
        assert [a for a in DAILY if not _evaluated_for_latest(instance, a)] == []
        context = dg.build_sensor_context(
            instance=instance,
            resources={"corpus": store},
            sensor_name="corpus_code_versions",
            cursor=result.cursor,
        )
        assert corpus_code_versions(context).asset_events == []  # nothing built since: nothing again


def test_a_fix_of_one_paper_rederives_its_stage_and_that_days_downstream_only(built):
    code = _project_copy(built, "code_v2")
    version = _bump(code, "parse/latex/parser.py", "PARSER_VERSION")
    _edit(  # the "fix": one paper's first paragraph reads differently
        code / "corpus" / "parse" / "days.py",
        '    return parse_row(paper_id, "latex", doc.model_dump(), warnings=warnings)',
        "    dumped = doc.model_dump()\n"
        '    if paper_id == "2004.14974":\n'
        '        dumped["body_text"][0]["text"] += " Revised."\n'
        '    return parse_row(paper_id, "latex", dumped, warnings=warnings)',
    )
    before = _counts(built)
    dry = _rederive(built, code, "--dry-run")
    assert dry.returncode == 0 and f"-> {version}" in dry.stdout, dry.stdout + dry.stderr
    assert _counts(built) == before  # a dry run runs nothing
    done = _rederive(built, code)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    # latex_parses; grobid_tei (its Grobid policy reads the LaTeX parse: the same rows); papers &
    # co. (they read pdf_parses, below grobid_tei); pes2o (reads papers)
    assert "done, 4 round(s)" in done.stdout, done.stdout[-3000:]
    added = _counts(built) - before
    changed_day = {
        "grobid_tei",
        "papers",
        "fulltext_ids",
        "bib_entries",
        "pes2o",
        "citeworth_paragraphs",
        "citeworth_candidates",
    }
    expected = Counter({("latex_parses", d): 1 for d in DAYS})
    expected.update({(a, "2020-10-03"): 1 for a in changed_day})
    assert added == expected
    os.environ["DAGSTER_HOME"] = str(built / "dagster_home")
    with dg.DagsterInstance.get() as instance:
        rederive_runs = [r for r in instance.get_runs() if "corpus/rederive" in r.tags]
    assert rederive_runs and {r.job_name for r in rederive_runs} == {"corpus_daily"}  # not __ASSET_JOB
    assert all(r.is_success for r in rederive_runs)
    again = _rederive(built, code)
    assert again.returncode == 0 and "nothing to re-derive" in again.stdout
    assert _counts(built) - before == expected


def test_a_bump_that_changes_no_row_stops_at_its_stage(built):
    code = _project_copy(built, "code_v3")
    _bump(code, "parse/latex/parser.py", "PARSER_VERSION")
    _bump(code, "parse/latex/parser.py", "PARSER_VERSION")  # past code_v2's, and its paper fix is not here:
    _bump(
        code, "parse/tei/parser.py", "TEI_PARSER_VERSION"
    )  # the one paper changes back; pdf_parses: nothing
    before = _counts(built)
    done = _rederive(built, code)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    added = _counts(built) - before
    assert {a for a, _ in added} == {
        "latex_parses",
        "pdf_parses",
        "grobid_tei",  # its Grobid policy reads latex_parses (the same rows: pdf_parses not for its sake)
        *("papers", "fulltext_ids", "bib_entries", "pes2o", "citeworth_paragraphs", "citeworth_candidates"),
    }
    assert {(a, d) for a, d in added if a == "pdf_parses"} == {("pdf_parses", d) for d in DAYS}
    # pdf_parses gave the same rows: nothing below it ran for its sake, only 2020-10-03's paper
    assert {d for a, d in added if a not in ("latex_parses", "pdf_parses")} == {"2020-10-03"}


def test_a_day_that_fails_makes_the_command_fail(built):
    code = _project_copy(built, "code_broken")
    _bump(code, "papers/bibliography.py", "BIB_ENTRIES_VERSION")
    _edit(
        code / "corpus" / "papers" / "days.py",
        "    store = Store(Path(home))\n    rows = []\n",
        '    if day == "2023-08-02":\n        raise RuntimeError("a broken stage")\n'
        "    store = Store(Path(home))\n    rows = []\n",
    )
    done = _rederive(built, code, "--from", "2023-08-02", "--to", "2025-03-22")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "round 1 failed" in done.stderr


OLD_SCHEMA_SCRIPT = """
import json, sys
from pathlib import Path
import dagster as dg
from corpus.store import PROVENANCE, Store
from corpus_assets.launch import LocalLauncher
store, day = Store(Path(sys.argv[1])), sys.argv[2]
for asset in sys.argv[3:]:
    frame = store.read_partition(asset, day)
    store.write_partition(asset, day, frame.drop(frame.columns[-1]))  # as written before that column
    marker = store.partition_dir(asset, day) / f"_{PROVENANCE}"
    record = json.loads(marker.read_text())
    marker.write_text(json.dumps({**record, "code_version": "an older version"}))
with dg.DagsterInstance.get() as instance:
    launcher = LocalLauncher(instance)
    run = launcher.run("corpus_graph", run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}}})
    launcher.close()
print("RUN", run.status.value)
"""


def test_days_written_before_a_new_column_are_read_with_it_null_then_rederived(built):
    """The policy for a new column in a daily table: the cross-day assets read the days written
    before it with the column null (corpus.store.scan_days); those days were built by an older
    stage version, so they are named stale and `make rederive` rebuilds them."""
    read_cross_day = [
        "papers",
        "bib_entries",
        "fulltext_ids",
        "pes2o",
        "citeworth_paragraphs",
        "citeworth_candidates",
    ]
    done = subprocess.run(
        [sys.executable, "-c", OLD_SCHEMA_SCRIPT, str(built / "data"), "2023-08-02", *read_cross_day],
        cwd=REPO,
        env=_env(built),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "RUN SUCCESS" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    plan = _rederive(built, REPO, "--dry-run")
    assert plan.returncode == 0, plan.stderr
    for asset in read_cross_day:
        assert f"  {asset}: an older version -> " in plan.stdout


def test_the_rederive_sensor_asks_for_a_round_of_runs_then_waits_for_them(built):
    """corpus_rederive (off by default) from the UI: one round's corpus_daily runs per tick, tagged
    corpus/rederive, as the tick's run requests (the tick list counts them), its state in a cursor
    in words; nothing more while they run; a round whose runs failed is not asked for again at once."""
    from corpus_assets.dagster_internals import create_test_run
    from corpus_assets.definitions import DAILY
    from resources.store import CorpusStore
    from sensors.rederive import build_rederive_sensor, read_state

    os.environ["DAGSTER_HOME"] = str(built / "dagster_home")
    sensor = build_rederive_sensor(DAILY)
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED and sensor.job_name == "corpus_daily"
    resources = {"corpus": CorpusStore(home=str(built / "data"), landing=str(built / "landing"))}
    with dg.DagsterInstance.get() as instance:
        context = dg.build_sensor_context(
            instance=instance, resources=resources, sensor_name="corpus_rederive"
        )
        first = sensor(context)
        requests = first.run_requests
        assert requests and all(r.tags["corpus/rederive_round"] == "1" for r in requests), first.skip_reason
        assert {k.to_user_string() for r in requests for k in r.asset_selection} >= {"papers", "pes2o"}
        assert all(
            ("dagster/partition" in r.tags) != ("dagster/asset_partition_range_start" in r.tags)
            for r in requests
        )
        assert first.cursor.startswith(f"round 1: {len(requests)} run(s) asked for (re-derive sensor-"), (
            first.cursor
        )
        state = read_state(first.cursor)
        assert state["round"] == 1 and state["id"].startswith("sensor-")
        run = create_test_run(  # one of the round's runs, started
            instance, job_name="corpus_daily", status=dg.DagsterRunStatus.STARTED, tags=requests[0].tags
        )
        context = dg.build_sensor_context(
            instance=instance, resources=resources, sensor_name="corpus_rederive", cursor=first.cursor
        )
        second = sensor(context)
        assert not second.run_requests and "still running" in second.skip_reason.skip_message
        instance.report_run_failed(run)
        context = dg.build_sensor_context(
            instance=instance, resources=resources, sensor_name="corpus_rederive", cursor=second.cursor
        )
        third = sensor(context)  # the same round again, an hour later at the earliest: no run storm
        assert not third.run_requests and "round 1 failed" in third.skip_reason.skip_message
