"""Runs that die, runs side by side, runs again: none blocks, breaks or changes another.

* a run killed with -9 during ``arxiv_pdfs`` is failed by Dagster's run monitoring (as
  configured in dagster.yaml) and its ``arxiv_api`` pool slot freed; the next run on the
  instance completes without manual clean-up, and the temporary files the killed run
  left under the data root's scratch area are gone;
* two processes on one data root never share a scratch path;
* re-materialising an unchanged day writes the same rows (per-run facts go to metadata).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
import yaml
from hostile import page, record
from http_server import Reply, ScriptedServer
from waiting import wait_until

from corpus import scratch
from corpus.ingest.landing import LandingZone
from corpus.ingest.records import records_frame
from corpus.store import Store
from corpus_assets.definitions import defs
from corpus_assets.jobs import METADATA_JOB
from corpus_assets.run_monitoring import LocalRunLauncher, process_alive, process_start
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

REPO = Path(__file__).resolve().parents[1]
DAY = "2025-01-15"
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
DAGSTER = str(Path(sys.executable).with_name("dagster"))


# ------------------------------------------------------------------------- kill -9


@contextmanager
def _run_stuck_on_arxiv(tmp_path: Path, monkeypatch, log_name: str, **monitoring):
    """An ``arxiv_pdfs`` run of the CLI (``dagster asset materialize``) on the instance users get
    (``run_monitoring`` edited by ``monitoring``), mid-way through fetching from an arXiv that
    answers slowly, holding the ``arxiv_api`` slot. Yields ``(instance, process, command, env)``."""
    home, landing, dagster_home = tmp_path / "data", tmp_path / "landing", tmp_path / "dagster_home"
    (landing / "oai").mkdir(parents=True)
    dagster_home.mkdir()
    ids = [f"2501.{i:05d}" for i in range(1, 13)]
    (landing / "oai" / f"{DAY}.xml").write_text(page([record(i) for i in ids]))
    config = yaml.safe_load((REPO / "dagster.yaml").read_text())  # the instance users get ...
    config["run_monitoring"].update(monitoring)  # ... with shorter waits, for the test
    (dagster_home / "dagster.yaml").write_text(yaml.safe_dump(config))
    found = LandingZone(landing).read_days([DAY])
    Store(home).write_partition("arxiv_metadata", DAY, records_frame(found.records[DAY]))

    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))  # the event log's base_dir is under it
    instance = dg.DagsterInstance.from_config(str(dagster_home))
    assert isinstance(instance.run_launcher, LocalRunLauncher)
    assert instance.run_monitoring_enabled
    instance.get_runs()  # storage initialised before the CLI opens it
    command = [DAGSTER, "asset", "materialize", "-m", "corpus_assets.definitions"]
    command += ["--select", "arxiv_pdfs", "--partition", DAY]
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home), "CORPUS_HOME": str(home)}
    env.update(CORPUS_LANDING=str(landing), CORPUS_EXECUTOR="inprocess", CORPUS_DEPLOYMENT="local")
    env["CORPUS_RUN_TIMEOUT_S_PER_DAY"] = "0"  # the instance's limit (monitoring=), not an hour a day
    with ScriptedServer(max_lifetime_s=240) as server, open(tmp_path / log_name, "w") as out:
        for i in ids:  # arXiv answers slowly: the step is surely mid-way when it is stopped
            server.script(f"/pdf/{i}", Reply(404, delay_s=5))
        env.update(CORPUS_SOURCE="arxiv", CORPUS_ARXIV_URL=server.url("").rstrip("/"))
        run_process = subprocess.Popen(
            command, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:

            def fetching():
                info = instance.event_log_storage.get_concurrency_info("arxiv_api")
                return server.requests and info.claimed_slots

            wait_until(fetching, 180, "arxiv_pdfs to hold the arxiv_api slot and fetch")
            yield instance, run_process, command, env
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run_process.pid, signal.SIGKILL)
            run_process.wait(timeout=30)
    instance.dispose()


def _monitor(instance: dg.DagsterInstance) -> None:
    """The daemon's run monitoring loop, once, as it runs every poll_interval_seconds."""
    from corpus_assets.dagster_internals import monitor_runs_once

    monitor_runs_once(instance, logging.getLogger("run_monitoring_test"))


def _free_slots(instance: dg.DagsterInstance) -> None:
    from corpus_assets.dagster_internals import free_pool_slots_once

    free_pool_slots_once(instance, logging.getLogger("run_monitoring_test"))


@pytest.mark.slow
def test_killed_run_is_failed_its_slot_freed_and_the_next_run_completes(tmp_path, monkeypatch):
    with _run_stuck_on_arxiv(tmp_path, monkeypatch, "killed_run.log", free_slots_after_run_end_seconds=1) as (
        instance,
        run_process,
        command,
        env,
    ):
        os.killpg(run_process.pid, signal.SIGKILL)  # the run and its Pipes worker: kill -9
        run_process.wait(timeout=30)

        (run,) = instance.get_runs()
        assert run.status == dg.DagsterRunStatus.STARTED  # what the issue saw: started for ever ...
        assert instance.event_log_storage.get_concurrency_info(
            "arxiv_api"
        ).claimed_slots  # ... holding the slot
        home = Path(env["CORPUS_HOME"])
        leftovers = sorted((home / "scratch").iterdir())
        killed_scratch = [p for p in leftovers if f"-{os.getpid()}-" not in p.name]
        assert killed_scratch, leftovers  # the killed Pipes worker's temporary files

        _monitor(instance)
        run = instance.get_run_by_id(run.run_id)
        assert run.status == dg.DagsterRunStatus.FAILURE
        time.sleep(1.5)  # free_slots_after_run_end_seconds
        _free_slots(instance)
        assert not instance.event_log_storage.get_concurrency_info("arxiv_api").claimed_slots

        # the next run on the same instance: no manual clean-up
        env["CORPUS_SOURCE"] = "landing"
        again = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        statuses = sorted(r.status.value for r in instance.get_runs())
        assert statuses == ["FAILURE", "SUCCESS"]
        rows = Store(home).read_partition("arxiv_pdfs", DAY)
        assert rows.height == 12 and set(rows["status"]) == {"missing"}
        assert not any(p.exists() for p in killed_scratch)  # swept by the next run


@pytest.mark.slow
def test_a_run_that_stops_progressing_is_stopped_and_failed_at_its_max_runtime(tmp_path, monkeypatch):
    """A run alive but stuck (here: an arXiv that never answers in time) holds its slot for
    ever; past the instance's max runtime, run monitoring interrupts its process (a run of the
    CLI: no code server to cancel it through), fails it and frees its slot."""
    with _run_stuck_on_arxiv(
        tmp_path, monkeypatch, "stuck_run.log", max_runtime_seconds=4, free_slots_after_run_end_seconds=1
    ) as (instance, run_process, _, _):
        (run,) = instance.get_runs()
        assert run.status == dg.DagsterRunStatus.STARTED
        _monitor(instance)
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.STARTED  # not yet
        wait_until(
            lambda: time.time() - instance.get_run_record_by_id(run.run_id).start_time > 4.5, 30, "4 s"
        )
        started = time.monotonic()
        _monitor(instance)
        rc = run_process.wait(timeout=60)
        assert rc != 0  # interrupted: it ended, as a failed run does
        assert time.monotonic() - started < 40
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
        messages = [e.message for e in instance.all_logs(run.run_id)]
        assert any("maximum runtime of 4 seconds" in (m or "") for m in messages), messages[-5:]
        # it ended on the interrupt (the step failed), not by kill -9: polars' SA_RESTART SIGINT
        # handler no longer keeps the wait for the Pipes worker from seeing it
        assert not any("did not end" in (m or "") for m in messages), messages[-5:]
        time.sleep(1.5)  # free_slots_after_run_end_seconds
        _free_slots(instance)
        assert not instance.event_log_storage.get_concurrency_info("arxiv_api").claimed_slots


def test_daily_runs_carry_a_max_runtime_by_their_days(monkeypatch):
    from corpus_assets.run_monitoring import RUNTIME_PER_DAY_ENV, max_runtime_tags, run_days

    monkeypatch.delenv(RUNTIME_PER_DAY_ENV, raising=False)
    assert run_days({"dagster/partition": "2007-04-01"}) == 1
    four = {
        "dagster/asset_partition_range_start": "2007-04-01",
        "dagster/asset_partition_range_end": "2007-04-04",
    }
    assert run_days(four) == 4 and run_days({}) is None
    assert max_runtime_tags(1) == {"dagster/max_runtime": "3600"}
    assert max_runtime_tags(4) == {"dagster/max_runtime": str(4 * 3600)}
    assert max_runtime_tags(None) == {}  # a run of no partition: the instance's limit
    monkeypatch.setenv(RUNTIME_PER_DAY_ENV, "600")
    assert max_runtime_tags(4) == {"dagster/max_runtime": "2400"}
    monkeypatch.setenv(RUNTIME_PER_DAY_ENV, "0")
    assert max_runtime_tags(4) == {}
    monkeypatch.setenv(RUNTIME_PER_DAY_ENV, "an hour")
    with pytest.raises(ValueError, match=RUNTIME_PER_DAY_ENV):
        max_runtime_tags(1)
    # the job carries none: a run of one day and a backfill run of 16 differ (set at their start)
    assert "dagster/max_runtime" not in defs.resolve_job_def("corpus_daily").tags


def _worker_event(instance, run, pid: int, host: str, start: str) -> None:
    from corpus_assets.dagster_internals import engine_event_data

    metadata = {"pid": dg.MetadataValue.int(pid), "host": host, "process_start": start}
    instance.report_engine_event("Executing the run in process", run, engine_event_data(metadata))


def test_launcher_judges_the_recorded_worker(tmp_path):
    """The pid Dagster logs for a launched run, or the one an in-process run logs: a dead one fails."""
    from corpus_assets.run_monitoring import record_run_worker

    host = os.uname().nodename
    with dg.instance_for_test(
        overrides={"run_launcher": {"module": "corpus_assets.run_monitoring", "class": "LocalRunLauncher"}}
    ) as instance:
        launcher = instance.run_launcher
        assert launcher.supports_check_run_worker_health
        job = defs.resolve_job_def(METADATA_JOB)
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        alive = instance.create_run_for_job(job)
        record_run_worker(instance, alive)  # this process executes it
        record_run_worker(instance, alive)  # named once
        events = instance.all_logs(alive.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
        assert len(events) == 1 and f"process {os.getpid()} on {host}" in events[0].message
        assert not instance.get_run_by_id(alive.run_id).tags  # no tag: nothing internal in the run's tags
        assert launcher.check_run_worker_health(alive).status.value == "RUNNING"
        gone = instance.create_run_for_job(job)
        _worker_event(instance, gone, dead.pid, host, "1")
        assert launcher.check_run_worker_health(gone).status.value == "FAILED"
        launched = instance.create_run_for_job(job)
        instance.report_engine_event(f"Started process for run (pid: {dead.pid}).", launched)
        assert launcher.check_run_worker_health(launched).status.value == "FAILED"
        unknown = instance.create_run_for_job(job)
        assert launcher.check_run_worker_health(unknown).status.value == "RUNNING"  # not judged
        elsewhere = instance.create_run_for_job(job)
        _worker_event(instance, elsewhere, dead.pid, "other-host", "1")
        assert launcher.check_run_worker_health(elsewhere).status.value == "RUNNING"
    assert process_alive(os.getpid()) and not process_alive(dead.pid)
    assert process_alive(os.getpid(), start=process_start(os.getpid()))
    assert not process_alive(os.getpid(), start="1")  # same pid, another start time: reused


def test_a_slot_freed_while_a_step_queues_is_handed_to_it(tmp_path):
    """Dagster 1.13.27's race, played in its order: B sees no free slot, A frees its slot (handed to
    nobody: nothing is queued yet), B queues itself unassigned. B then waits on a free slot for
    ever; the pool_slots sensor's function hands it over, and only to live runs' steps."""
    from corpus_assets.run_monitoring import assign_free_pool_slots

    with dg.instance_for_test(overrides={"concurrency": {"pools": {"default_limit": 1}}}) as instance:
        storage = instance.event_log_storage
        job = defs.resolve_job_def(METADATA_JOB)
        a, b, dead = (instance.create_run_for_job(job) for _ in range(3))
        storage.initialize_concurrency_limit_to_default("grobid")
        assert storage.claim_concurrency_slot("grobid", a.run_id, "grobid_tei").is_claimed
        b_saw_a_free_slot = storage.has_unassigned_slots("grobid")  # B looks: A holds the slot
        storage.free_concurrency_slot_for_step(a.run_id, "grobid_tei")  # A ends its step
        storage.add_pending_step("grobid", b.run_id, "grobid_tei", should_assign=b_saw_a_free_slot)
        # the dead run's step ranks first in Dagster's queue order (priority, then time queued)
        storage.add_pending_step("grobid", dead.run_id, "grobid_tei", priority=1, should_assign=False)
        instance.report_run_failed(dead)
        for _ in range(3):  # B asks again as its run would: blocked, with the slot free
            assert not storage.claim_concurrency_slot("grobid", b.run_id, "grobid_tei").is_claimed
        assert storage.get_concurrency_info("grobid").claimed_slots == []

        assert assign_free_pool_slots(instance, grace_s=60) == {}  # queued just now: Dagster's turn
        assert assign_free_pool_slots(instance, grace_s=0) == {"grobid": 1}
        assert storage.claim_concurrency_slot("grobid", b.run_id, "grobid_tei").is_claimed
        assert assign_free_pool_slots(instance, grace_s=0) == {}  # the one slot is taken
        pending = storage.get_concurrency_info("grobid").pending_steps
        assert dead.run_id not in {p.run_id for p in pending}  # a finished run's queued step is gone


# ------------------------------------------------------------------------- scratch per process


def test_scratch_is_per_process_and_a_dead_process_leaves_nothing(tmp_path):
    home = tmp_path / "data"
    code = (
        "import sys, time; from corpus.scratch import process_scratch; "
        "d = process_scratch(sys.argv[1]); (d / 'half.tmp').write_bytes(b'x' * 1000); "
        "print(d, flush=True); time.sleep(60)"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(home)], stdout=subprocess.PIPE, text=True)
    theirs = Path(child.stdout.readline().strip())
    mine = scratch.process_scratch(home)
    assert mine != theirs and mine.parent == theirs.parent == home / "scratch"
    assert scratch.sweep(home) == [] and theirs.exists()  # alive: left alone
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert scratch.sweep(home) == [theirs] and not theirs.exists()  # dead: removed
    assert mine.exists()
    scratch.release(home)
    assert not mine.exists()


def test_partition_and_blob_temp_files_live_in_scratch(tmp_path, monkeypatch):
    """What a killed write leaves is under scratch/, never beside the data."""
    import corpus.store as store_mod

    home = tmp_path / "data"
    store = Store(home)
    seen = []
    real_swap = store_mod.swap_dir

    def spy(staging, final):
        seen.append(staging)
        return real_swap(staging, final)

    monkeypatch.setattr(store_mod, "swap_dir", spy)
    store.write_partition("x", DAY, pl.DataFrame({"a": [1]}))
    store.write_partition("x", DAY, pl.DataFrame({"a": [2]}))  # the old one goes aside in scratch too
    assert all(scratch.scratch_root(home) in s.parents for s in seen)
    assert [p.name for p in (home / "x").iterdir()] == [f"date={DAY}"]
    ref = store_mod.BlobStore(home / "blobs").put_bytes("pdf", b"%PDF-1.4")
    assert [p for p in (home / "blobs").rglob("*") if p.is_file()] == [ref.path]


def _sources_day(home: Path, landing: Path) -> subprocess.Popen:
    code = (
        "import sys; from corpus.ingest.days import arxiv_sources_day, FetchSettings; "
        "print(arxiv_sources_day(sys.argv[1], sys.argv[2], sys.argv[3], FetchSettings()))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, str(home), str(landing), DAY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_two_runs_of_one_day_on_one_data_root(tmp_path, shared_landing):
    """Two processes unpacking the same day's e-prints at once (two instances, a CLI run
    beside ``dagster dev``): each has its own scratch, both succeed with the same rows."""
    home, landing = tmp_path / "data", tmp_path / "landing"
    (landing / "oai").mkdir(parents=True)
    (landing / "src").mkdir()
    real = (shared_landing / "src" / "2004.14974.tar.gz").read_bytes()
    ids = [f"2501.{i:05d}" for i in range(1, 41)]
    for i in ids:
        (landing / "src" / f"{i}.tar.gz").write_bytes(real)
    (landing / "oai" / f"{DAY}.xml").write_text(page([record(i) for i in ids]))
    Store(home).write_partition(
        "arxiv_metadata", DAY, records_frame(LandingZone(landing).read_days([DAY]).records[DAY])
    )
    first, second = _sources_day(home, landing), _sources_day(home, landing)
    outs = [p.communicate(timeout=600) for p in (first, second)]
    assert first.returncode == second.returncode == 0, [o[1][-2000:] for o in outs]
    rows = Store(home).read_partition("arxiv_sources", DAY)
    assert rows.height == 40 and rows["failure"].null_count() == 40 and rows["main"].n_unique() == 1
    assert not [p for p in (home / "scratch").rglob("*") if p.name != ".lock" and p.is_file()]


# ------------------------------------------------------------------------- re-runs write the same rows


DAYS = ["2023-08-02", "2020-10-03"]  # a PDF with landing TEI; a LaTeX source


def _partitions(home: Path) -> dict[tuple[str, str], pl.DataFrame]:
    return {
        (p.parent.name, p.name): pl.read_parquet(p / "part-0.parquet") for p in sorted(home.glob("*/date=*"))
    }


@pytest.mark.slow
def test_rematerialising_an_unchanged_day_writes_the_same_rows(tmp_path, shared_landing):
    home = tmp_path / "data"
    resources = {
        **defs.resources,
        "corpus": CorpusStore(home=str(home), landing=str(shared_landing)),
        "arxiv": ArxivResource(source="landing"),
    }
    daily = [a for a in defs.assets if a.partitions_def is not None]
    snapshots = []
    with dg.instance_for_test() as instance:
        for _ in range(2):
            for day in DAYS:
                result = dg.materialize(
                    daily, partition_key=day, resources=resources, instance=instance, run_config=QUIET
                )
                assert result.success
            snapshots.append(_partitions(home))
    first, second = snapshots
    assert set(first) == set(second) and len(first) >= 2 * 9
    changed = [key for key in first if not first[key].equals(second[key])]
    assert not changed, changed
    pdf = first[("arxiv_pdfs", "date=2023-08-02")].row(0, named=True)
    assert (pdf["status"], pdf["source"]) == ("stored", "landing")
    tei = first[("grobid_tei", "date=2023-08-02")].row(0, named=True)
    assert (tei["status"], tei["source"]) == ("cached", "landing")
