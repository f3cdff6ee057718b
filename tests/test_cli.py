"""The CLI entry points users rely on: `dagster asset materialize --partition` on any landing day (no
settings: the first partition is the landing zone's earliest day) and `dagster dev`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import polars as pl
from waiting import stop_group

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _env(tmp_path: Path, landing: Path) -> dict[str, str]:
    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    return {
        **os.environ,
        "CORPUS_HOME": str(tmp_path / "data"),
        "CORPUS_LANDING": str(landing),
        "DAGSTER_HOME": str(home),
    }


def test_materialize_the_earliest_landing_day_from_the_cli(tmp_path, shared_landing):
    """2007-03-31 is before 2007-04-01: it is a partition because the landing zone holds it."""
    env = {k: v for k, v in _env(tmp_path, shared_landing).items() if k != "CORPUS_START_DATE"}
    cmd = [
        str(BIN / "dagster"), "asset", "materialize", "-m", "corpus_assets.definitions",
        "--select", "arxiv_metadata", "--partition", "2007-03-31",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    frame = pl.read_parquet(tmp_path / "data" / "arxiv_metadata" / "date=2007-03-31" / "part-0.parquet")
    assert frame.height == 4 and frame["id"].n_unique() == 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dagster_dev_serves_the_code_location(tmp_path, shared_landing):
    port = _free_port()
    cmd = [str(BIN / "dagster"), "dev", "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"]
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=_env(tmp_path, shared_landing),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the whole tree stops on SIGTERM
    )
    try:
        body = ""
        deadline = time.monotonic() + 120
        query = (
            b'{"query": "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"}'
        )
        while time.monotonic() < deadline:
            try:
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/graphql",
                    data=query,
                    headers={"Content-Type": "application/json"},
                )
                body = urllib.request.urlopen(req, timeout=5).read().decode()
                if '"LOADED"' in body:
                    break
            except OSError:
                pass
            time.sleep(1)
        assert '"name": "corpus"' in body.replace('":"', '": "') and '"LOADED"' in body, body[:500]
    finally:
        stop_group(proc)
