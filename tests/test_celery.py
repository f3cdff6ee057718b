"""A run through the Celery executor, end to end: Redis on 127.0.0.1 and a Celery worker started here.

The job uses ``executor_def("celery", ...)`` from corpus_assets.deployment (the executor
``CORPUS_EXECUTOR=celery`` selects), so the executor config the deployment builds is the
one that runs. Every process started here has a bounded lifetime and is stopped at the end.
"""

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import dagster as dg
import pytest

from corpus_assets.deployment import DeploymentSettings, executor_def

# dagster_celery registers its task once per executor instance; harmless here
pytestmark = pytest.mark.filterwarnings("ignore:Task name 'execute_plan' is already registered")

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
RUN_TIMEOUT_S = 60
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
WORKER_LIFETIME_S = 120  # hard cap: the worker is killed after this even if the test hangs


@dg.op
def worker_pid() -> int:
    return os.getpid()


@dg.op
def landing_days(pid: int) -> dict:
    """Something real in the worker: the days the shared landing zone holds."""
    from corpus.ingest.landing import LandingZone

    landing = LandingZone(Path(os.environ["CORPUS_LANDING"]))
    return {"pid": pid, "pid_here": os.getpid(), "oai_files": len(list(landing.oai_dir.glob("*.xml")))}


def celery_job() -> dg.JobDefinition:
    """Built on import, in the test and in the worker alike, from CORPUS_CELERY_BROKER/BACKEND."""

    @dg.job(executor_def=executor_def("celery", DeploymentSettings.from_env()))
    def celery_smoke():
        landing_days(worker_pid())

    return celery_smoke


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@pytest.fixture
def redis_port(tmp_path):
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (.ci/run installs Debian's redis-server)")
    port = _free_port()
    process = subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):  # at most ~10 s
            if _ping(port):
                break
            if process.poll() is not None:
                pytest.fail(f"redis-server exited with code {process.returncode}")
            time.sleep(0.1)
        else:
            pytest.fail("redis-server did not answer PING within 10 s")
        yield port
    finally:
        _stop(process)


def test_a_job_runs_its_steps_on_a_celery_worker(redis_port, tmp_path, monkeypatch, shared_landing):
    broker, backend = f"redis://127.0.0.1:{redis_port}/0", f"redis://127.0.0.1:{redis_port}/1"
    env = {
        "CORPUS_CELERY_BROKER": broker,
        "CORPUS_CELERY_BACKEND": backend,
        "CORPUS_LANDING": str(shared_landing),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config_dir = tmp_path / "celery_config"  # what `dagster-celery worker start -y` writes
    config_dir.mkdir()
    (config_dir / "dagster_celery_config.py").write_text(
        f"broker_url = {broker!r}\nresult_backend = {backend!r}\n"
    )
    worker_env = {
        **os.environ,
        **env,
        "PYTHONPATH": os.pathsep.join([str(config_dir), str(TESTS), str(REPO)]),
    }
    worker = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "dagster_celery.app", "worker",
            "-Q", "dagster", "--pool", "solo", "-n", f"corpus-test-{redis_port}@%h",
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING",
        ],
        env=worker_env, cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    reaper = threading.Timer(WORKER_LIFETIME_S, worker.kill)
    reaper.start()
    outcome: dict = {}
    try:
        with dg.instance_for_test() as instance:

            def run():
                try:
                    with dg.execute_job(
                        dg.reconstructable(celery_job), instance=instance, run_config=QUIET
                    ) as result:
                        outcome["success"] = result.success
                        outcome["value"] = result.output_for_node("landing_days")
                except Exception as exc:  # reported below, with the worker's stderr
                    outcome["error"] = repr(exc)

            runner = threading.Thread(target=run, daemon=True)
            runner.start()
            runner.join(timeout=RUN_TIMEOUT_S)
            alive = runner.is_alive()
    finally:
        reaper.cancel()
        _stop(worker)
    stderr = worker.stderr.read()[-3000:] if worker.stderr else ""
    assert not alive, f"the celery run did not finish within {RUN_TIMEOUT_S} s; worker stderr:\n{stderr}"
    assert "error" not in outcome, f"{outcome['error']}\nworker stderr:\n{stderr}"
    assert outcome["success"] is True
    value = outcome["value"]
    assert value["pid"] == value["pid_here"] != os.getpid()  # both steps ran in the Celery worker
    assert value["pid"] == worker.pid  # the solo pool runs tasks in the worker process we started
    assert value["oai_files"] == len(list((shared_landing / "oai").glob("*.xml"))) == 30
