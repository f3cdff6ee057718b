"""``make ui`` behaves like a service: started the way a supervisor or a CI step starts it (its own
process group, no terminal, SIGINT ignored as in the background of a non-interactive shell), it
serves the UI on 127.0.0.1, and SIGTERM to its process group ends every process of it within
seconds (issue 37 item 7: 60 s after SIGTERM and SIGINT, six processes were still running)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from waiting import wait_until

REPO = Path(__file__).resolve().parents[1]
STOP_WITHIN_S = 15.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def _group(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _ignore_sigint() -> None:  # what a shell without job control does to a background command
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.slow
def test_make_ui_stops_within_seconds_of_sigterm_and_leaves_no_process(tmp_path):
    landing = tmp_path / "landing"
    (landing / "oai").mkdir(parents=True)  # nothing to build: no run starts while it serves
    port = _free_port()
    env = {
        **os.environ,
        "CORPUS_LANDING": str(landing),
        "CORPUS_HOME": str(tmp_path / "data"),
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
    }
    # `-o` the install stamp: the test uses the venv it runs in, never reinstalls into it
    command = ["make", "-o", ".venv/.installed-base", "ui", f"UI_PORT={port}"]
    with open(tmp_path / "ui.log", "wb") as log:
        ui = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_ignore_sigint,
        )
    try:
        wait_until(
            lambda: _answers(port),
            150,
            "the UI to answer",
            poll_s=1,
            detail=lambda: (tmp_path / "ui.log").read_text(errors="replace")[-3000:],
        )
        started = _group(ui.pid)
        assert len(started) >= 5, started  # make, dagster dev, its code server(s), webserver, daemon
        t0 = time.monotonic()
        os.killpg(ui.pid, signal.SIGTERM)
        wait_until(lambda: not _group(ui.pid), STOP_WITHIN_S, "every process of make ui to end", poll_s=0.2)
        assert time.monotonic() - t0 < STOP_WITHIN_S
        assert not _answers(port)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(ui.pid, signal.SIGKILL)
        ui.wait(timeout=30)
