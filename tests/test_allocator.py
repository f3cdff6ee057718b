"""Polars' allocator hands freed pages back at once in every process that loads corpus_assets
(corpus_assets/__init__.py), also when a parent that imported polars first passed polars' own
defaults down in the environment; a user's own setting is kept. Such a process also exits
without collecting its whole heap, its exit handlers still run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_assets import PROMPT_RETURN, jemalloc_conf

REPO = Path(__file__).resolve().parents[1]
POLARS_DEFAULTS = "dirty_decay_ms:500,muzzy_decay_ms:1000"


@pytest.mark.parametrize(
    ("inherited", "expected"),
    [
        (None, PROMPT_RETURN),
        ("", PROMPT_RETURN),
        (POLARS_DEFAULTS, PROMPT_RETURN),  # a parent imported polars before corpus_assets
        (f"{POLARS_DEFAULTS},{POLARS_DEFAULTS}", PROMPT_RETURN),  # and its child did too
        ("dirty_decay_ms:2000", "dirty_decay_ms:2000"),  # the user's
        (f"{POLARS_DEFAULTS},{PROMPT_RETURN}", f"{POLARS_DEFAULTS},{PROMPT_RETURN}"),  # ours, last wins
    ],
)
def test_conf_rule(inherited: str | None, expected: str) -> None:
    assert jemalloc_conf(inherited) == expected


def _conf_polars_starts_with(inherited: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    if inherited is not None:
        env["_RJEM_MALLOC_CONF"] = inherited
    code = "import os, corpus_assets, polars; print(os.environ['_RJEM_MALLOC_CONF'])"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_polars_runs_with_prompt_return_after_a_polars_parent() -> None:
    # jemalloc reads the options left to right, the last one of a name wins
    assert _conf_polars_starts_with(POLARS_DEFAULTS).endswith(PROMPT_RETURN)
    assert _conf_polars_starts_with(None).endswith(PROMPT_RETURN)
    assert _conf_polars_starts_with("dirty_decay_ms:2000").endswith("dirty_decay_ms:2000")


EXIT_PROBE = """
import atexit, sys, time
import corpus_assets.definitions
atexit.register(lambda: print("handler ran", flush=True))
print(time.process_time(), flush=True)
"""


def test_a_process_that_loaded_the_definitions_exits_without_a_heap_collection() -> None:
    """Interpreter shutdown collects the whole heap (~0.2 CPU s here, more for a run worker
    after its run); frozen at exit, it takes a few ms, and exit handlers still run."""
    proc = subprocess.Popen([sys.executable, "-c", EXIT_PROBE], cwd=REPO, stdout=subprocess.PIPE, text=True)
    with proc.stdout:
        script_cpu = float(proc.stdout.readline())
        _, status, usage = os.wait4(proc.pid, 0)  # reaped here for its CPU time
        proc.returncode = os.waitstatus_to_exitcode(status)
        assert proc.returncode == 0
        assert proc.stdout.read().strip() == "handler ran"
    exit_cpu = usage.ru_utime + usage.ru_stime - script_cpu
    assert exit_cpu < 0.1, f"exit took {exit_cpu:.3f} CPU s"
