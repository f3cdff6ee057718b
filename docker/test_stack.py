"""`make test-containers`: the compose deployment run for real, checked through its own interfaces.

The stack is docker/docker-compose.yml (+ compose.test.yml) on the images docker/build-local-base.sh
built from Debian packages: Postgres, the Docker socket proxy, the Grobid stand-in answering
recorded real Grobid TEI, the code server, webserver and daemon; runs in their own containers
(DockerRunLauncher), heavy stages in Pipes containers. The landing volume gets real days from
../shared/landing without their TEI, so every TEI crosses the network from Grobid.

Each check asserts on data: partitions and rows in the data volume (read with polars in the code
container), runs, events, pool slots and sensor state in Postgres (psql in its container),
Docker's own record of container starts and exit codes (``docker events``), Celery's engine
events. What each check saw is written to $CORPUS_STACK_REPORT (default
/tmp/corpus-test-stack.json) for the issue note. Run in file order: a check builds on the last.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import pytest
from stack import RUN_ID_LABEL, WORKER_LABEL, Stack, StackError, docker_cpu_seconds

REPO = Path(__file__).resolve().parents[1]
LANDING = Path(os.environ.get("CORPUS_STACK_LANDING", REPO.parent / "shared" / "landing")).resolve()
REPORT = Path(os.environ.get("CORPUS_STACK_REPORT", "/tmp/corpus-test-stack.json"))
RUN_TIMEOUT_S = 600

# Real days of ../shared/landing, each with a PDF whose real Grobid TEI the stand-in holds.
DAY_A = ("2020-01-08", ["1906.06843"])  # (a) launched from GraphQL
DAY_C = ("2020-01-23", ["2001.07966"])  # (c) dropped into the landing volume for the sensor
DAY_E = ("2021-08-17", ["2103.14030"])  # (e) its run container is killed mid-step
# (f) the README's backfill; 2502.12102 has 76 pages: S2ORC's App. B filter keeps it from Grobid
DAYS_F = (["2025-02-17", "2025-02-18"], ["2502.12102", "2502.13138"])
OVER_50_PAGES = {"2025-02-17"}
DAY_D = ("2020-05-21", ["2004.07180"])  # (d) on a Celery worker
DAILY = ["arxiv_metadata", "arxiv_pdfs", "grobid_tei", "pdf_parses", "papers", "bib_entries", "pes2o"]
CROSS_DAY = ["citation_links", "citation_graph", "pes2o_v1", "pes2o_v2", "citeworth_splits"]
PIPES_STAGES = 5  # arxiv_pdfs, arxiv_sources, grobid_tei, pdf_parses, latex_parses: one worker each
seen: dict = {}


def note(check: str, **values) -> None:
    seen.setdefault(check, {}).update(values)
    REPORT.write_text(json.dumps(seen, indent=1, sort_keys=True))


@pytest.fixture(scope="module")
def stack():
    if not (LANDING / "oai").is_dir():
        pytest.fail(f"no landing zone at {LANDING} (../shared/landing beside the repository)")
    s = Stack(landing_source=LANDING)
    s.down()  # a stack left by an interrupted run
    t0 = time.monotonic()
    try:
        s.up()
        s.sensor("landing_oai_sensor", running=False)  # (a) launches its day itself
        s.wait_daemon()
        note("stack", up_seconds=round(time.monotonic() - t0, 1), compose=" ".join(s.compose), port=s.port)
        yield s
    finally:
        with contextlib.suppress(StackError):
            note("teardown", containers_left_before_down=len(s.live_containers(RUN_ID_LABEL)))
        s.down()
        left = s.docker("volume", "ls", "-q").stdout.split()
        note("teardown", volumes_after_down=[v for v in left if v.startswith(("corpus_", "dagster_"))])
        REPORT.with_suffix(".log").write_text("\n".join(s.log))


def assert_day_built(s: Stack, day: str, papers: int, parsed: bool = True) -> dict:
    """Every daily partition of the day is there, with the day's papers; ``parsed``: its PDFs
    went through Grobid (a bibliography came out), else none did (the PDF filters)."""
    rows = s.partition_rows(DAILY, [day])
    missing = [k for k, v in rows.items() if v is None]
    assert not missing, f"no partition for {missing}"
    assert rows[f"arxiv_metadata/{day}"] == papers and rows[f"papers/{day}"] == papers
    assert rows[f"arxiv_pdfs/{day}"] == papers, rows
    if parsed:
        assert rows[f"grobid_tei/{day}"] == papers and rows[f"bib_entries/{day}"] > 0, rows
    else:
        assert rows[f"grobid_tei/{day}"] == 0 and rows[f"bib_entries/{day}"] == 0, rows
    return rows


def grobid_rows(s: Stack, day: str) -> list[dict]:
    return s.code_python(
        "import json, sys, polars as pl; print(json.dumps(pl.read_parquet(f'/data/grobid_tei/date={sys.argv[1]}/*.parquet')"
        ".select('id', 'status', 'source', 'http_status').to_dicts()))",
        day,
    )  # fmt: skip


def grobid_stats(s: Stack) -> dict:
    return s.code_python(
        "import urllib.request; print(urllib.request.urlopen('http://grobid:8070/fake/stats', timeout=10).read().decode())"
    )


def test_a_corpus_daily_runs_in_a_run_container_with_pipes_containers(stack):
    day, ids = DAY_A
    stack.fill_landing([day], ids)
    since = time.time() - 1
    served_before = grobid_stats(stack)["fulltext"]
    idle_cpu, t_idle = docker_cpu_seconds(), time.monotonic()
    time.sleep(30)  # the stack idle: daemon loops, sensors, health checks
    cpu0, t0 = docker_cpu_seconds(), time.monotonic()
    idle_per_s = (cpu0 - idle_cpu) / (t0 - t_idle) if cpu0 is not None else None
    run_id = stack.launch_daily(day)
    assert stack.wait_run(run_id, RUN_TIMEOUT_S) == "SUCCESS"
    wall = time.monotonic() - t0
    cpu1 = docker_cpu_seconds()
    time.sleep(2)  # the run container exits just after its run reports success
    containers = stack.containers_of(run_id, since)
    assert containers["run"] == [0], containers  # one run container, exit 0
    assert containers["worker"] == [0] * PIPES_STAGES, containers  # each heavy stage in its own container
    assert stack.run_tag(run_id, "docker/container_id"), "the run launcher recorded its container"
    rows = assert_day_built(stack, day, papers=len(ids))
    tei = grobid_rows(stack, day)
    assert [(r["status"], r["source"], r["http_status"]) for r in tei] == [("ok", "grobid", 200)], tei
    served = grobid_stats(stack)["fulltext"] - served_before
    assert served == len(ids), "each PDF went to the Grobid container once"
    cpu = None if cpu0 is None else {
        "stack_cpu_s_during_run": round(cpu1 - cpu0, 1),
        "stack_idle_cpu_s_per_s": round(idle_per_s, 3),
        "run_cpu_s_above_idle": round(cpu1 - cpu0 - idle_per_s * wall, 1),
    }  # fmt: skip
    note(
        "a",
        run_id=run_id,
        wall_s=round(wall, 1),
        containers=containers,
        rows=rows,
        grobid_served=served,
        cpu=cpu,
    )


def test_b_runs_and_events_are_in_postgres(stack):
    run_id = seen["a"]["run_id"]
    runs = stack.runs(f"run_id = '{run_id}'")
    assert runs == [{"run_id": run_id, "job": "corpus_daily", "status": "SUCCESS", "partition": DAY_A[0]}]
    counts = dict(
        stack.psql(
            f"select dagster_event_type, count(*) from event_logs where run_id = '{run_id}' "
            "and dagster_event_type is not null group by 1"
        )
    )
    assert int(counts["STEP_SUCCESS"]) >= 10 and "STEP_FAILURE" not in counts, counts
    assert int(counts["ASSET_MATERIALIZATION"]) >= len(DAILY), counts
    assert counts.get("PIPELINE_SUCCESS") == "1", counts  # DagsterEventType.RUN_SUCCESS
    materialized = {
        r[0]
        for r in stack.psql(
            "select distinct asset_key from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION' "
            f"and run_id = '{run_id}'"
        )
    }
    assert {f'["{a}"]' for a in DAILY} <= materialized, materialized
    totals = {
        t: int(stack.psql(f"select count(*) from {t}")[0][0]) for t in ("runs", "event_logs", "run_tags")
    }
    note("b", events_of_run=counts, tables=totals)


def test_c_new_oai_page_is_picked_up_and_cross_day_assets_catch_up(stack):
    day, ids = DAY_C
    # what (a) set going settles first (its own cross-day catch-up): a day landing while a
    # cross-day run is in flight is a separate case (see the issue note)
    stack.wait_quiet()
    days_before = stack.latest_materialization("citation_links")[1]["days"]  # days linked so far
    before = {r["run_id"] for r in stack.runs()}
    assert stack.sensor("landing_oai_sensor", running=True) == "RUNNING"
    try:
        stack.fill_landing([day], ids)  # pdf first, then the page renamed into place
        deadline = time.monotonic() + RUN_TIMEOUT_S
        daily = None
        while time.monotonic() < deadline and daily is None:
            new = [r for r in stack.runs("pipeline_name = 'corpus_daily'") if r["run_id"] not in before]
            assert not any(r["status"] == "FAILURE" for r in new), new
            daily = next((r for r in new if r["partition"] == day and r["status"] == "SUCCESS"), None)
            time.sleep(5)
        assert daily is not None, f"no corpus_daily run of {day} after its page landed"
        assert stack.run_tag(daily["run_id"], "dagster/sensor_name") == "landing_oai_sensor"
    finally:
        stack.sensor("landing_oai_sensor", running=False)  # the next checks launch their own days
    assert_day_built(stack, day, papers=len(ids))

    # the catch-up sensor (CORPUS_GRAPH_CRON every minute here) catches every cross-day asset
    # up: each is materialised again by a run that started after the day's run ended, and the
    # links count the new day
    ended = float(stack.psql(f"select end_time from runs where run_id = '{daily['run_id']}'")[0][0])
    deadline = time.monotonic() + RUN_TIMEOUT_S
    state: dict[str, dict] = {}
    while time.monotonic() < deadline:
        for asset in CROSS_DAY:
            run_id, values = stack.latest_materialization(asset)
            started = stack.psql(f"select coalesce(start_time, 0) from runs where run_id = '{run_id}'")[0][0]
            state[asset] = {"run_id": run_id, "after_day": float(started) >= ended, **values}
        if state["citation_links"].get("days") == days_before + 1 and all(
            s["after_day"] for s in state.values()
        ):
            break
        time.sleep(5)
    summary = {a: {k: v for k, v in s.items() if k in ("run_id", "after_day", "days", "days_built", "nodes",
                                                       "documents", "paragraphs")} for a, s in state.items()}  # fmt: skip
    assert state["citation_links"].get("days") == days_before + 1, summary
    assert all(s["after_day"] for s in state.values()), summary  # each rebuilt after the day was built
    for asset in CROSS_DAY:  # by the catch-up sensor (issue 28), in corpus_graph runs
        assert stack.run_tag(state[asset]["run_id"], "dagster/sensor_name") == "corpus_graph_catch_up", asset
    note("c", daily_run=daily["run_id"], cross_day=summary)


def test_e_a_killed_run_container_fails_its_run_and_frees_its_pool_slot(stack):
    day, ids = DAY_E
    stack.fill_landing([day], ids)
    since = time.time() - 1
    run_id = stack.launch_daily(day)
    # wait for the grobid_tei step (pool "grobid") to hold its slot with its Pipes worker running
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        started = stack.step_events(run_id, "STEP_START")
        workers = [
            c
            for c in stack.live_containers(WORKER_LABEL)
            if run_id in c["Labels"] and c["State"] == "running"
        ]
        if "grobid_tei" in started and workers:
            break
        assert stack.run_status(run_id) not in {"SUCCESS", "FAILURE"}, (
            "the run ended before it could be killed"
        )
        time.sleep(0.5)
    else:
        raise StackError("grobid_tei never started with a running worker")
    slots = stack.psql(f"select count(*) from concurrency_slots where run_id = '{run_id}'")[0][0]
    assert slots == "1", "the grobid step holds its pool slot"
    container = stack.run_tag(run_id, "docker/container_id")
    killed_at = time.monotonic()
    stack.docker("kill", "--signal", "KILL", container)

    assert stack.wait_run(run_id, 300) == "FAILURE"  # run monitoring saw the dead container
    failed_after = time.monotonic() - killed_at
    monitor = stack.psql(
        f"select count(*) from event_logs where run_id = '{run_id}' and event like '%Container status is exited%'"
    )[0][0]
    assert int(monitor) >= 1, "the failure is run monitoring's verdict on the container"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        held = stack.psql(f"select count(*) from concurrency_slots where run_id = '{run_id}'")[0][0]
        if held == "0":
            break
        time.sleep(3)
    assert held == "0", "the dead run's pool slot was not freed"
    freed_after = time.monotonic() - killed_at
    exit_codes = stack.containers_of(run_id, since)
    assert 137 in exit_codes["run"], exit_codes  # SIGKILL

    rerun = stack.reexecute(run_id)
    assert stack.wait_run(rerun, RUN_TIMEOUT_S) == "SUCCESS"
    rows = assert_day_built(stack, day, papers=len(ids))
    note("e", run_id=run_id, rerun_id=rerun, failed_after_s=round(failed_after, 1),
         slot_freed_after_s=round(freed_after, 1), exit_codes=exit_codes, rows=rows)  # fmt: skip


def test_f_the_readme_backfill_command(stack):
    days, ids = DAYS_F
    stack.fill_landing(days, ids)
    t0 = time.monotonic()
    done = stack.dc(
        "exec", "-T", "daemon", "python", "-m", "corpus_assets.backfill", "--from", days[0], "--to", days[-1],
        timeout=RUN_TIMEOUT_S,
    )  # fmt: skip
    wall = time.monotonic() - t0
    rows = {}
    for day, paper in zip(days, ids, strict=True):
        rows |= assert_day_built(stack, day, papers=1, parsed=day not in OVER_50_PAGES)
        expected = [] if day in OVER_50_PAGES else ["ok"]
        assert [r["status"] for r in grobid_rows(stack, day)] == expected, paper
    backfills = stack.psql("select key, status from bulk_actions order by timestamp desc limit 1")
    assert backfills and backfills[0][1] in ("COMPLETED", "COMPLETED_SUCCESS"), backfills
    key = backfills[0][0]
    runs = stack.runs(
        f"run_id in (select run_id from run_tags where key = 'dagster/backfill' and value = '{key}')"
    )
    assert runs and all(r["status"] == "SUCCESS" for r in runs), runs
    note("f", wall_s=round(wall, 1), backfill=backfills[0], runs=[r["status"] for r in runs], rows=rows,
         output_tail=done.stdout.strip().splitlines()[-3:])  # fmt: skip


def celery_worker(event: str) -> str:
    """The "Celery worker" (its hostname) of a dagster-celery engine event, as stored in Postgres."""
    data = json.loads(event)["dagster_event"]["event_specific_data"]
    entries = data.get("metadata_entries") or [
        {"label": k, "entry_data": v} for k, v in (data.get("metadata") or {}).items()
    ]
    (entry,) = [e for e in entries if e["label"] == "Celery worker"]
    value = entry["entry_data"]
    return value.get("text") or value.get("value") or value.get("raw_value")


def test_d_the_celery_profile_runs_a_days_steps_on_a_celery_worker(stack):
    day, ids = DAY_D
    stack.extra_env["CORPUS_EXECUTOR"] = "celery"
    stack.up(profiles=("celery",))  # recreates code, webserver, daemon with the Celery executor
    stack.sensor("landing_oai_sensor", running=False)
    stack.fill_landing([day], ids)
    worker_host = stack.docker(
        "inspect", "-f", "{{.Config.Hostname}}", stack.container("celery-worker")
    ).stdout.strip()
    run_id = stack.launch_daily(day)
    assert stack.wait_run(run_id, RUN_TIMEOUT_S) == "SUCCESS"
    events = stack.psql(
        f"select step_key, event from event_logs where run_id = '{run_id}' and dagster_event_type = 'ENGINE_EVENT' "
        "and event like '%in celery worker%'"
    )
    hosts = {celery_worker(event) for _, event in events}
    assert len(events) >= 10, "every step went to Celery"
    assert all(h.endswith(worker_host) for h in hosts), (hosts, worker_host)
    rows = assert_day_built(stack, day, papers=len(ids))
    note("d", run_id=run_id, celery_steps=len(events), celery_hosts=sorted(hosts), rows=rows)


def test_g_the_image_ships_the_package_data_and_extensions(stack):
    """The installed package (a wheel built in the image) holds what the code loads besides its
    modules: the saved journal table, made from the lists it ships (else every process would
    build it again, 0.3 s), and the two C extensions."""
    check = (
        "import corpus._prefix, corpus._tally; from corpus.papers import journals; "
        "t = journals.read_table_file(); "
        "assert t is not None and t['sources'] == journals.sources_digest(), 'stale or missing table'; "
        "print(len(t['canon']), journals.TABLE_FILE)"
    )
    done = stack.dc("exec", "-T", "daemon", "python", "-c", check, timeout=120)
    keys, path = done.stdout.split()
    assert int(keys) > 10_000 and "site-packages" in path, done.stdout
    note("g", table_keys=int(keys), table_file=path)


def test_z_finished_runs_leave_no_containers(stack):
    """The cleanup sensor removes every run and worker container of finished runs (1 min grace)."""
    deadline = time.monotonic() + 240
    left = []
    while time.monotonic() < deadline:
        live = {r["run_id"] for r in stack.runs("status in ('STARTED', 'STARTING', 'QUEUED', 'CANCELING')")}
        left = [c for c in stack.live_containers(RUN_ID_LABEL) if not any(r in c["Labels"] for r in live)]
        if not left:
            break
        time.sleep(10)
    assert not left, [(c["Names"], c["Status"]) for c in left]
    stack.wait_quiet()
    note("z", idle_core_share_by_service=stack.service_cpu(60))
    note(
        "z",
        runs=len(stack.runs()),
        runs_by_status=dict(stack.psql("select status, count(*) from runs group by 1")),
    )
