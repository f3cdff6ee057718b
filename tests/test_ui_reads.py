"""What the UI reads after a multi-day run, read the way the UI reads it: each partition's
materialisation metadata, the check evaluations and the run's tags (issue 37).

One ``corpus_daily`` run over three real landing days (2007-04-01..03, the way a backfill run
covers a range; 04-01's page cut short so it has failure rows, 04-03 has no records) and one run
of the metadata job for a single day, both through their jobs as the UI launches them.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import dagster as dg
import pytest

from corpus_assets.definitions import defs
from corpus_assets.jobs import METADATA_JOB
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
RANGE = ("2007-04-01", "2007-04-03")
DAYS = ["2007-04-01", "2007-04-02", "2007-04-03"]
ONE_DAY = "2007-04-09"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, shared_landing):
    """``(instance, range run result, one-day run result, home, landing)``."""
    root = tmp_path_factory.mktemp("ui_reads")
    landing = root / "landing"
    (landing / "oai").mkdir(parents=True)
    for day in (*DAYS[:2], ONE_DAY):
        shutil.copy(shared_landing / "oai" / f"{day}.xml", landing / "oai")
    for folder in ("pdf", "src", "tei"):  # the files behind the papers, read in place
        (landing / folder).symlink_to(shared_landing / folder)
    cut = landing / "oai" / "2007-04-01.xml"
    cut.write_bytes(cut.read_bytes()[:-2000])  # a page cut short: one record and the page fail
    store = CorpusStore(home=str(root / "data"), landing=str(landing))
    resources = {"corpus": store, "arxiv": ArxivResource(source="landing")}
    job = defs.resolve_job_def("corpus_daily")
    with dg.instance_for_test() as instance:
        tags = {
            "dagster/asset_partition_range_start": RANGE[0],
            "dagster/asset_partition_range_end": RANGE[1],
        }
        several = job.execute_in_process(
            instance=instance, resources=resources, tags=tags, run_config=QUIET, raise_on_error=False
        )
        one = defs.resolve_job_def(METADATA_JOB).execute_in_process(
            instance=instance, resources=resources, partition_key=ONE_DAY, run_config=QUIET
        )
        yield instance, several, one, Path(store.home), landing


def _partition_metadata(result, asset: str) -> dict[str, dict]:
    """``{day: metadata}`` of ``asset``'s materialisation events in a run."""
    return {
        e.partition: e.materialization.metadata
        for e in result.get_asset_materialization_events()
        if e.asset_key == dg.AssetKey(asset)
    }


@pytest.mark.slow
def test_both_runs_succeed(runs):
    _, several, one, _, _ = runs
    assert several.success and one.success
    assert sorted(_partition_metadata(several, "papers")) == DAYS
    assert list(_partition_metadata(one, "arxiv_metadata")) == [ONE_DAY]


# ------------------------------------------------------------------ item 1: each partition's rows


@pytest.mark.slow
def test_each_partition_of_a_multi_day_run_shows_its_own_rows(runs):
    """Every daily asset's event of each day of the three-day run describes that day: its row
    count, its fingerprint and a preview of its own first rows (2007-04-03 has none; the run's
    last day's preview was shown on every partition)."""
    import polars as pl

    from corpus_assets.jobs import DAILY_ASSETS

    _, several, _, home, _ = runs
    store = CorpusStore(home=str(home)).store
    previews = 0
    for asset in DAILY_ASSETS:
        metadata = _partition_metadata(several, asset)
        assert sorted(metadata) == DAYS, asset
        for day, meta in metadata.items():
            rows = pl.read_parquet(home / asset / f"date={day}" / "part-0.parquet").height
            assert meta["dagster/partition_row_count"].value == rows, (asset, day)
            assert "dagster/row_count" not in meta  # Dagster's whole-table count: no one day knows it
            assert meta["fingerprint"].value == store.fingerprint(asset, day), (asset, day)
            if "preview" in meta:
                previews += 1
                label, blank, *lines = meta["preview"].value.splitlines()  # what it shows, then the table
                assert label.startswith(f"{asset} of {day}: ".replace("_", "\\_")) and blank == "", label
                assert label.endswith(f"{rows:,} row{'s' if rows != 1 else ''}"), label
                shown = len(lines) - 2 if rows else 0  # a header and its rule, then a line a row
                assert shown == min(rows, 10) and (rows or lines == ["_no rows_"]), (asset, day, lines)
    assert previews >= 3 * 6  # papers, bib_entries, pes2o and the others with a preview


# ------------------------------------------------------------------ item 6: run tags


@pytest.mark.slow
def test_a_run_carries_the_max_runtime_of_the_days_it_covers_and_no_internal_tag(runs):
    """dagster/max_runtime is 3,600 s times the days of the run (README), set when it starts;
    no tag names the process that executed it (that is in the run's log, for run monitoring)."""
    instance, several, one, _, _ = runs
    tags_several = instance.get_run_by_id(several.run_id).tags
    tags_one = instance.get_run_by_id(one.run_id).tags
    assert tags_several["dagster/max_runtime"] == str(3 * 3600)
    assert tags_one["dagster/max_runtime"] == "3600"
    for tags in (tags_several, tags_one):
        assert not [k for k in tags if k.startswith("corpus/")], tags
    logged = instance.all_logs(one.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
    assert any("Executing the run in process" in (e.message or "") for e in logged)


def test_materialize_on_arxiv_metadata_runs_a_job_of_the_project():
    """The UI's Materialize on an asset's page launches the first of the asset's jobs in the
    order the asset node lists them (sorted names): for arxiv_metadata that is the project's
    metadata job, not Dagster's implicit __ASSET_JOB."""
    from corpus_assets.dagster_internals import asset_job_names

    jobs = asset_job_names(defs.get_repository_def())
    for asset in ("arxiv_metadata", "arxiv_metadata_failures"):
        assert jobs[asset][0] == METADATA_JOB, jobs[asset]
        assert "__ASSET_JOB" in jobs[asset]  # still there, but not first


@pytest.mark.slow
def test_the_rest_of_a_metadata_only_day_follows_as_a_corpus_daily_run(runs):
    """After Arxiv_metadata_job (the asset page's Materialize), the corpus_rest_of_day sensor asks
    corpus_daily for the rest of that day, once (keyed by the run)."""
    from sensors.rest_of_day import REST_OF_METADATA

    instance, _, one, _, _ = runs
    run = instance.get_run_by_id(one.run_id)
    assert run.job_name == METADATA_JOB
    success = next(
        e.dagster_event for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_SUCCESS)
    )
    sensor = defs.resolve_sensor_def("corpus_rest_of_day")
    context = dg.build_run_status_sensor_context(
        sensor_name=sensor.name, dagster_event=success, dagster_instance=instance, dagster_run=run
    )
    request = sensor(context)
    assert isinstance(request, dg.RunRequest) and sensor.job_name == "corpus_daily"
    assert request.tags["dagster/partition"] == ONE_DAY and request.run_key == run.run_id
    assert sorted(k.to_user_string() for k in request.asset_selection) == sorted(REST_OF_METADATA)
    assert request.asset_check_keys == []  # the job has no checks of them (not the code checks)


def test_every_partial_run_is_followed_by_a_corpus_daily_run_of_what_reads_it():
    """Whoever built some daily assets of a day (an asset page: Dagster's __ASSET_JOB; the CLI: a run
    of no code location; a selection in corpus_daily's graph), the rest follows as a corpus_daily
    run of exactly the daily assets downstream; a whole day, a re-derive's run or a check's run
    asks for nothing. No asset has an automation condition: Dagster would run what one asks for
    as __ASSET_JOB (the Overview's "Jobless asset materializations")."""
    from corpus_assets.definitions import DAILY
    from corpus_assets.jobs import DAILY_ASSETS
    from sensors.rest_of_day import rest_of_day_request

    def run(job: str, assets=None, **tags) -> dg.DagsterRun:
        keys = None if assets is None else frozenset(dg.AssetKey(a) for a in assets)
        return dg.DagsterRun(job_name=job, asset_selection=keys, tags={"dagster/partition": ONE_DAY, **tags})

    request = rest_of_day_request(run("__ASSET_JOB", ["papers"]), DAILY)
    assert isinstance(request, dg.RunRequest) and request.tags["dagster/partition"] == ONE_DAY
    assert {k.to_user_string() for k in request.asset_selection} == {
        "bib_entries", "pes2o", "citeworth_paragraphs", "citeworth_candidates"
    }  # fmt: skip
    request = rest_of_day_request(run("corpus_daily", ["latex_parses"]), DAILY)
    assert "grobid_tei" in {k.to_user_string() for k in request.asset_selection}
    whole = rest_of_day_request(run("corpus_daily"), DAILY)
    assert isinstance(whole, str) and "every daily asset that reads them" in whole
    assert isinstance(rest_of_day_request(run("corpus_daily", DAILY_ASSETS), DAILY), str)
    assert "re-derive" in rest_of_day_request(
        run("corpus_daily", ["papers"], **{"corpus/rederive": "x"}), DAILY
    )
    check_only = dg.DagsterRun(
        job_name="__ASSET_JOB",
        asset_selection=frozenset(),
        asset_check_selection=frozenset({dg.AssetCheckKey(dg.AssetKey("papers"), "built_by_current_code")}),
        tags={"dagster/partition": ONE_DAY},
    )
    assert isinstance(rest_of_day_request(check_only, DAILY), str)  # a check's Execute
    in_process = rest_of_day_request(run(METADATA_JOB, []), DAILY)  # a whole job executed in process
    assert isinstance(in_process, dg.RunRequest) and "papers" in {
        k.to_user_string() for k in in_process.asset_selection
    }
    assert isinstance(rest_of_day_request(run("corpus_graph", ["citation_graph"]), DAILY), str)
    repo = defs.get_repository_def()
    assert not [
        k for k in repo.asset_graph.get_all_asset_keys() if repo.asset_graph.get(k).automation_condition
    ]
    assert "corpus_automation" not in [s.name for s in defs.sensors]


def test_the_rest_of_a_day_runs_the_job_s_steps_of_it_and_no_code_check():
    """Dagster subsets corpus_daily by the assets and checks a run request names, as the sensor
    daemon does; a selection of assets alone brings every check of them, the
    built_by_current_code ones too, which the job leaves to their sensor (the control)."""
    from corpus_assets.definitions import DAILY
    from corpus_assets.jobs import CODE_CHECK
    from sensors.rest_of_day import REST_OF_METADATA, rest_of_day_request

    job = defs.resolve_job_def("corpus_daily")

    def steps(chosen: dg.JobDefinition) -> set[str]:
        return {f"{n.name}.{out.name}" for n in chosen.graph.nodes for out in n.definition.output_defs}

    run = dg.DagsterRun(job_name=METADATA_JOB, tags={"dagster/partition": ONE_DAY})
    request = rest_of_day_request(run, DAILY)
    asked = job.get_subset(
        asset_selection=set(request.asset_selection), asset_check_selection=set(request.asset_check_keys)
    )
    whole = steps(job)
    assert not [s for s in whole if CODE_CHECK in s]
    assert steps(asked) == {s for s in whole if not s.startswith("arxiv_metadata.")}
    alone = job.get_subset(asset_selection={dg.AssetKey(a) for a in REST_OF_METADATA})
    assert [s for s in steps(alone) if CODE_CHECK in s]


def test_check_and_automation_texts_read_as_written_and_name_both_ways_to_act():
    """Issue 46, 4: the UI shows a check's texts as Markdown in one place and as plain text in
    another, so they hold nothing Markdown would change (no backticks, emphasis, links, HTML);
    the texts that ask for an action name the UI's sensor and the command."""
    from corpus_assets.freshness import Verdict
    from corpus_assets.rederive_plan import check_description

    repo = defs.get_repository_def()
    texts = {f"sensor {s.name}": s.description for s in repo.sensor_defs}
    texts |= {f"job {j.name}": j.description for j in repo.get_all_jobs() if j.description}
    for key in repo.asset_graph.asset_check_keys:
        texts[f"check {key.asset_key.to_user_string()}.{key.name}"] = repo.asset_graph.get_check_spec(
            key
        ).description
    stale_code = check_description("papers", "corpus.papers/9", ["2007-03-31", "2007-04-01", "2020-10-03"])
    stale_graph = Verdict("citation_graph", False, "never built").check_description()
    texts |= {"result built_by_current_code": stale_code, "result up_to_date": stale_graph}
    for name, text in texts.items():
        assert text and not re.search(r"`|\*\S|\S\*|\[|<|(^|\s)_", text.replace("'0 * * * *'", "")), (
            name,
            text,
        )
    for text in (stale_code, texts["check papers.built_by_current_code"]):
        assert "corpus_rederive sensor" in text and "make rederive" in text, text
    for text in (stale_graph, texts["check citation_graph.up_to_date"]):
        assert "corpus_graph_catch_up sensor" in text and "dagster job launch" in text, text
    assert "2007-03-31..2007-04-01, 2020-10-03 (3 days)" in stale_code and "today's" not in stale_code
    for key in repo.asset_graph.get_all_asset_keys():  # Markdown, where a <day> is a tag the UI drops
        assert "<" not in (repo.asset_graph.get(key).description or ""), key


def test_the_readme_lists_every_asset_and_documents_every_sensor():
    """Issue 46, 4: the README's asset table has a row per asset, and every sensor (the compose
    one too) has a row in its sensor table."""
    from pathlib import Path

    from sensors.containers import docker_container_cleanup

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    table = set()
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2:
            table |= set(re.findall(r"`([a-z0-9_]+)`", cells[1]))
    repo = defs.get_repository_def()
    assets = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert assets - table == set(), sorted(assets - table)
    sensors = {s.name for s in repo.sensor_defs} | {docker_container_cleanup.name}
    rows = {m.group(1) for m in re.finditer(r"^\| `([a-z0-9_]+)` \|", readme, re.M)}
    assert sensors - rows == set(), sorted(sensors - rows)


# ------------------------------------------------------------------ item 2: percentages


def _count_tables(metadata: dict) -> dict[str, list[dict]]:
    """Every (name, count, percent) table in an event's metadata, as rows."""
    out = {}
    for key, value in metadata.items():
        if isinstance(value, dg.TableMetadataValue) and [c.name for c in value.schema.columns][1:] == [
            "count",
            "percent",
        ]:
            out[key] = [dict(r.data) for r in value.records]
    return out


def _implied_total(rows: list[dict]) -> float | None:
    """What a table's percents are a share of (count x 100 / percent), from its rows."""
    totals = {round(r["count"] * 100 / r["percent"]) for r in rows if r["percent"]}
    assert len(totals) <= 1, rows  # every row a share of the same total
    return totals.pop() if totals else None


@pytest.mark.slow
def test_every_count_table_is_a_share_of_what_it_counts(runs):
    """A percent is a share of what the table counts: no share above 100, one total per table;
    S2ORC's Table 3 (statistics that overlap) and the largest categories are shares of the
    day's papers / records, not of the sum of the rows (1 paper with LaTeX read 16.67 %)."""
    _, several, _, _, _ = runs
    seen = 0
    for event in several.get_asset_materialization_events():
        metadata = event.materialization.metadata
        for name, rows in _count_tables(metadata).items():
            seen += 1
            assert all(0 <= r["percent"] <= 100 for r in rows), (event.asset_key, name, rows)
            total = _implied_total(rows)
            assert total is None or total >= max(r["count"] for r in rows), (event.asset_key, name, rows)
    assert seen > 20
    for day, metadata in _partition_metadata(several, "papers").items():
        counts = {r["statistic"]: r for r in _count_tables(metadata)["paper_counts"]}
        papers_in = counts["papers_in"]["count"]
        assert papers_in == metadata["dagster/partition_row_count"].value
        for row in counts.values():
            assert row["percent"] == (round(100 * row["count"] / papers_in, 2) if papers_in else 0.0)
        if papers_in:
            assert counts["papers_in"]["percent"] == 100.0, day
    for day, metadata in _partition_metadata(several, "arxiv_metadata").items():
        rows = _count_tables(metadata)["primary_categories"]
        if rows:
            assert _implied_total(rows) == metadata["dagster/partition_row_count"].value, day


# ------------------------------------------------------------------ item 3: failures


@pytest.mark.slow
def test_the_failures_preview_shows_whole_reasons_and_paths_in_the_landing_zone(runs):
    """The page's failure row keeps the parser's line and column, names the page relative to
    the landing zone (never the local path, in any column), and the schema says position
    counts from 0."""
    import polars as pl

    _, several, _, home, landing = runs
    metadata = _partition_metadata(several, "arxiv_metadata_failures")
    rows = pl.read_parquet(home / "arxiv_metadata_failures" / "date=2007-04-01" / "part-0.parquet")
    page = rows.filter(pl.col("position") == -1).row(0, named=True)
    assert page["source"] == "oai/2007-04-01.xml"
    assert page["reason"].startswith("unreadable page: not well-formed XML") and ", column " in page["reason"]
    preview = metadata["2007-04-01"]["preview"].value
    assert page["reason"].replace("<", "&lt;") in preview.replace("\\", "")  # whole, as md_text shows it
    assert str(landing) not in preview and str(landing) not in " ".join(rows["reason"])
    assert metadata["2007-04-02"]["dagster/partition_row_count"].value == 0
    columns = {c.name: c.description for c in metadata["2007-04-01"]["dagster/column_schema"].value.columns}
    assert "counting from 0" in columns["position"]


@pytest.mark.slow
def test_arxiv_metadata_counts_its_own_day_and_the_check_reads_as_text(runs):
    """Pages read and duplicates dropped are each partition's own (they were the run's, shown on
    every partition); no_unreadable_records gives its reasons as a table and the first failures
    as lines, not as a Python list of tuples."""
    instance, several, _, _, _ = runs
    metadata = _partition_metadata(several, "arxiv_metadata")
    assert {d: m["landing_files_read"].value for d, m in metadata.items()} == {
        "2007-04-01": 1,
        "2007-04-02": 1,
        "2007-04-03": 0,
    }
    assert {m["duplicates_dropped"].value for m in metadata.values()} == {0}
    (check,) = [c for c in several.get_asset_check_evaluations() if c.check_name == "no_unreadable_records"]
    assert not check.passed
    reasons = {r.data["reason"]: r.data["count"] for r in check.metadata["reasons"].value.records}
    assert reasons == {"unreadable page": 1, "record cut off": 1}
    first = [r.data for r in check.metadata["first"].value.records]
    assert first[-1]["source"] == "oai/2007-04-01.xml" and first[-1]["record"] == "page"
    assert first[-1]["reason"].startswith("unreadable page: not well-formed XML")
    assert not any("[(" in str(v.value) for v in check.metadata.values())
    for other in several.get_asset_check_evaluations():
        assert not any(str(v.value).startswith("[") for v in other.metadata.values()), other


# ------------------------------------------------------------------ item 5: the catch-up sensor


@pytest.mark.slow
def test_the_catch_up_sensor_page_says_what_it_decided_in_words(runs):
    """After the days are built the sensor asks for the cross-day assets: its cursor (on the
    sensor's page, every tick) says so in a line, and the up_to_date checks it reports carry
    no event-log id (nothing meaningless shown or plotted)."""
    instance, _, _, _, _ = runs
    sensor = defs.resolve_sensor_def("corpus_graph_catch_up")
    context = dg.build_sensor_context(instance=instance, repository_def=defs.get_repository_def())
    result = sensor(context)
    assert len(result.cursor) < 120 and result.cursor.startswith("asked for citation_links"), result.cursor
    assert not result.cursor.lstrip().startswith("{")
    assert result.asset_events
    for evaluation in result.asset_events:
        assert evaluation.check_name == "up_to_date" and not evaluation.passed
        assert "never built" in evaluation.description
        assert not [k for k in evaluation.metadata if "read_through" in k], evaluation.metadata


# ------------------------------------------------------------------ make demo's runs


_DEMO_RUN = """
import dagster as dg
from corpus_assets.dagster_internals import repository_label_tag
from corpus_assets.launch import LocalLauncher
instance = dg.DagsterInstance.get()
launcher = LocalLauncher(instance)
run = launcher.run("Arxiv_metadata_job", partition_key="2007-04-09")
job = launcher.repo.get_full_job("Arxiv_metadata_job")
label = job.get_remote_origin().repository_origin.get_label()
listed = instance.get_runs(dg.RunsFilter(job_name=job.name, tags={repository_label_tag(): label}))
print(run.is_success, [r.run_id for r in listed] == [run.run_id], run.tags.get("dagster/partition"))
launcher.close()
"""


@pytest.mark.slow
def test_a_run_of_make_demo_is_listed_under_its_job_as_the_ui_lists_them(tmp_path, shared_landing):
    """LocalLauncher (make demo) makes ordinary runs of the code location: the job page lists a
    job's runs by its name and its code location's label, and finds this one."""
    import os
    import subprocess
    import sys

    landing = tmp_path / "landing"
    (landing / "oai").mkdir(parents=True)
    shutil.copy(shared_landing / "oai" / f"{ONE_DAY}.xml", landing / "oai")
    (tmp_path / "dagster_home").mkdir()
    env = {
        **os.environ,
        "CORPUS_LANDING": str(landing),
        "CORPUS_HOME": str(tmp_path / "data"),
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
    }
    done = subprocess.run(
        [sys.executable, "-c", _DEMO_RUN], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-3:] == ["True", "True", ONE_DAY], done.stdout[-2000:]
