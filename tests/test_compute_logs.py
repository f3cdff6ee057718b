"""The local compute-log manager (corpus_assets/compute_logs.py): run output lands in Dagster's
files and on the terminal as before, with one ``tail`` per stream and no Python watchers, and
the ``tail`` ends by itself when the run worker dies without cleaning up."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import pytest

from corpus_assets import compute_logs

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    not compute_logs.parent_death_signal(), reason="needs util-linux setpriv --pdeathsig"
)

# Captures a step's output, reports its own child processes while capturing, then either
# leaves the capture cleanly or dies by SIGKILL inside it (argv[3] == "die").
CAPTURE = textwrap.dedent(
    """
    import json, os, signal, sys, time
    from pathlib import Path
    from corpus_assets import compute_logs
    if sys.argv[4] == "stock":
        compute_logs.parent_death_signal = lambda: False  # as on macOS
    manager = compute_logs.TailComputeLogManager(base_dir=sys.argv[1])

    def children():
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                pid, rest = stat.read_text().split(" (", 1)
                name, fields = rest.rsplit(") ", 1)
            except OSError:
                continue
            if int(fields.split()[1]) == os.getpid():
                found.append({"pid": int(pid), "name": name})
        return found

    def settled():  # the children once each setpriv has exec'd its tail (a race otherwise)
        deadline = time.monotonic() + 10
        while any(k["name"] == "setpriv" for k in children()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return children()

    with manager.capture_logs(["run1", "compute_logs", "step"]):
        print("step says hello", flush=True)
        print("step warns", file=sys.stderr, flush=True)
        Path(sys.argv[2]).write_text(json.dumps(settled()))
        if sys.argv[3] == "die":
            os.kill(os.getpid(), signal.SIGKILL)
    """
)


def start(tmp_path: Path, how: str, mirror: str = "tail") -> subprocess.Popen:
    """Runs CAPTURE with files for its terminal, so a lingering ``tail`` cannot hold up a wait."""
    env = {**os.environ, "DAGSTER_COMPUTE_LOG_TAIL_WAIT_AFTER_FINISH": "1", "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-c", CAPTURE, str(tmp_path / "logs"), str(tmp_path / "children.json")]
    with open(tmp_path / "term.out", "w") as out, open(tmp_path / "term.err", "w") as err:
        return subprocess.Popen([*args, how, mirror], stdout=out, stderr=err, env=env)


def capture(tmp_path: Path, mirror: str = "tail") -> tuple[int, str, str, list]:
    """Return code, terminal stdout and stderr, and the children seen during the capture."""
    code = start(tmp_path, "finish", mirror).wait(timeout=120)
    kids = json.loads((tmp_path / "children.json").read_text())
    return code, (tmp_path / "term.out").read_text(), (tmp_path / "term.err").read_text(), kids


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_output_is_kept_and_mirrored_by_one_tail_per_stream(tmp_path: Path) -> None:
    code, out, err, kids = capture(tmp_path)
    assert code == 0, err
    assert sorted(k["name"] for k in kids) == ["tail", "tail"]  # no Python watchers
    assert "step says hello" in out and "step warns" in err  # the terminal mirror
    files = {p.suffix: p.read_text() for p in (tmp_path / "logs").rglob("*") if p.is_file()}
    assert "step says hello" in files[".out"] and "step warns" in files[".err"]
    assert ".complete" in files  # Dagster's mark of a finished capture: the UI stops polling
    assert not any(alive(k["pid"]) for k in kids)


def test_stock_mirror_where_tail_is_not_gnu(tmp_path: Path) -> None:
    code, out, err, kids = capture(tmp_path, mirror="stock")
    assert code == 0, err
    names = sorted(k["name"] for k in kids)
    assert names.count("tail") == 2 and len(names) == 4  # Dagster's own: a watcher per tail
    assert "step says hello" in out


def test_tail_ends_when_the_worker_is_killed_before_it_is_reaped(tmp_path: Path) -> None:
    worker = start(tmp_path, "die")
    try:
        deadline = time.monotonic() + 120
        while alive(worker.pid) and time.monotonic() < deadline:  # until SIGKILL made it a zombie
            time.sleep(0.1)
        assert not alive(worker.pid), "the worker did not die"
        kids = json.loads((tmp_path / "children.json").read_text())
        tails = [k["pid"] for k in kids if k["name"] == "tail"]
        assert len(tails) == 2
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in tails) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in tails), "an orphaned tail outlived the dead worker"
    finally:
        worker.kill()
    assert worker.wait(timeout=60) == -9


def test_repo_instance_uses_it_in_dagsters_default_place(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:
        manager = instance.compute_log_manager
        assert isinstance(manager, compute_logs.TailComputeLogManager)
        assert Path(manager._base_dir) == home / "storage"
