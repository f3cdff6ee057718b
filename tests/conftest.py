"""Shared fixtures: the real inputs live in ../shared and are read from there, never copied."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CORPUS_SHARED", REPO.parent / "shared")).resolve()
DATA = SHARED / "data"
LANDING = SHARED / "landing"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not DATA.exists():
        pytest.fail(f"real test data not found at {DATA} (set CORPUS_SHARED)")
    return DATA


@pytest.fixture(scope="session")
def shared_landing() -> Path:
    if not LANDING.exists():
        pytest.fail(f"real landing zone not found at {LANDING} (set CORPUS_SHARED)")
    return LANDING


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    """The test now running, in ``CORPUS_TEST_PROGRESS`` when set (one file per pytest-xdist
    worker, ``<path>.gw0`` ...): ``.ci/run`` names them when it has to stop a suite that outlived
    its time."""
    progress = os.environ.get("CORPUS_TEST_PROGRESS")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if progress:  # a worker writes its own file; the controller, hearing of every start, the last
        Path(f"{progress}.{worker}" if worker else progress).write_text(nodeid + "\n")


def pytest_configure(config: pytest.Config) -> None:
    """A suite started in the background of a shell (as CI may start it) inherits SIGINT ignored.
    After every in-process Dagster run, Dagster gives SIGTERM the disposition of SIGINT, so SIGTERM
    became ignored too, and every process the suite started afterwards inherited that: a
    ``multiprocessing`` pool's ``terminate()`` then waited for ever on a worker that ignored it
    (``test_event_log``, 1 run in 8 under load). Ctrl-C's usual handler makes both signals work."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig naming a cluster nobody serves (127.0.0.1:1): Kubernetes clients construct
    from it offline, and any real call fails at once."""
    import yaml

    path = tmp_path / "kubeconfig"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(config))
    return path
