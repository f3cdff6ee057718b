"""A day's per-paper pool never hangs: not when one of its workers dies beside a large result,
not when a parser never returns on one paper (issue Q).

The setting that hung Python's ``ProcessPoolExecutor`` for good: the run's process defers
SIGTERM (Dagster's ``capture_interrupts`` during a step; forked workers inherit the handler),
one worker dies on its paper (``os._exit``: a segfault in C, the OOM killer), and another
worker then returns a result larger than a pipe buffer. The old pool, once broken, SIGTERMed
the survivor (deferred) and joined it while the survivor was blocked writing into a pipe
nobody read any more: 5 hangs in 5 rounds (``benchmarks/pool_deadlock.py``).

The papers are real LaTeX e-prints from ../shared parsed by the ``latex_parses`` stage's own
per-paper function; each row carries the paper's structured text as JSON, the survivor's
137 KB, more than a pipe buffer holds (64 KiB). The order is forced, not hoped for: the victim
dies only once the survivor has parsed its paper, and the survivor returns only once the
victim's process is gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# only names the pool before pebble had too, so benchmarks/pool_deadlock.py can run it on both
from corpus.parallel import WORKER_DIED, map_papers
from corpus.parse import days as parse_days

SHARED = Path(os.environ.get("CORPUS_SHARED", Path(__file__).resolve().parents[2] / "shared")).resolve()
SOURCES = [
    "latex_sources/engrafo/1708.00137",
    "latex_sources/paper_repos/DropImpact_PRL_arXiv",
    "latex_sources/engrafo/1707.08043",
    "latex_sources/korzen_benchmark/astro-ph0001004",
]
VICTIM, SURVIVOR = "DropImpact_PRL_arXiv", "1708.00137"
WAIT_S = 20  # every wait below is bounded


def _tasks() -> list[tuple[str, str | None, str | None]]:
    from corpus.ingest.eprint import assemble_source, find_main_tex

    tasks = []
    for rel in SOURCES:
        path = SHARED / "data" / rel
        tasks.append((path.name, assemble_source(path, find_main_tex(path)).model_dump_json(), None))
    return tasks


def _wait_for(check, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {WAIT_S} s for {what}")
        time.sleep(0.01)


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a sibling we cannot reap: absent, or a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _row_in_order(item: tuple[tuple, Path]) -> dict:
    """The stage's row function, with one paper's process dying while another returns; the
    markers that order them live in the directory that comes with each task."""
    task, markers = item
    victim, survivor = markers / "victim", markers / "survivor"
    if task[0] == VICTIM:
        victim.write_text(str(os.getpid()))
        _wait_for(survivor.exists, "the survivor's parse")
        os._exit(3)  # a crash in C code, the OOM killer
    row = parse_days._latex_row(task)
    if task[0] == SURVIVOR:
        survivor.touch()
        _wait_for(victim.exists, "the victim to start")
        pid = int(victim.read_text())
        _wait_for(lambda: _gone(pid), "the victim's death")
        time.sleep(0.3)  # the pool notices the death before the large result is written
    return row


def one_round(tasks, tmp: Path) -> list[dict]:
    """The scenario once, under a deferring SIGTERM handler (Dagster's own), which forked
    workers inherit."""
    from corpus_assets.dagster_internals import interrupts_captured

    for name in ("victim", "survivor"):
        (tmp / name).unlink(missing_ok=True)
    term, intr = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        with interrupts_captured():
            return map_papers(
                _row_in_order,
                [(task, tmp) for task in tasks],
                2,
                lambda item, reason: parse_days._latex_failed(item[0], reason),
                chunk_size=1,
            )
    finally:
        signal.signal(signal.SIGTERM, term)
        signal.signal(signal.SIGINT, intr)


@pytest.fixture
def forked(monkeypatch):
    """Workers forked as in a run's or a Pipes worker's process (one thread: fork), even from this
    test process, whose other tests leave threads behind (the pool would use forkserver)."""
    import multiprocessing as mp

    from corpus import parallel

    monkeypatch.setattr(parallel, "_context", lambda: mp.get_context("fork"))


@pytest.fixture(scope="module")
def papers():
    tasks = _tasks()
    alone = [parse_days._latex_row(t) for t in tasks]
    assert all(r["status"] == "ok" for r in alone), [r["reason"] for r in alone]
    survivor = next(r for r in alone if r["id"] == SURVIVOR)
    assert len(survivor["doc"]) > 2 * 64 * 1024  # more than a pipe buffer holds
    return tasks, alone


def _check(out: list[dict], alone: list[dict]) -> None:
    assert [r["id"] for r in out] == [r["id"] for r in alone]
    for got, want in zip(out, alone, strict=True):
        if want["id"] == VICTIM:
            assert got["status"] == "failed" and got["reason"] == f"parse_error: {WORKER_DIED}"
        else:
            assert got == want


def test_a_dying_worker_beside_a_large_result_does_not_hang_the_day(papers, tmp_path, forked):
    tasks, alone = papers
    _check(one_round(tasks, tmp_path), alone)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_fifty_rounds_under_a_cpu_hog(papers, tmp_path, forked):
    """The same 50 times in one invocation with a busy core beside it: every round finishes."""
    tasks, alone = papers
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for _ in range(50):
            _check(one_round(tasks, tmp_path), alone)
    finally:
        hog.kill()
        hog.wait()


def _never_returns_on_victim(task):
    """The stage's row function with a parser that loops for ever on one paper."""
    if task[0] == VICTIM:
        while True:
            time.sleep(0.05)
    return parse_days._latex_row(task)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_paper_whose_parser_never_returns_gets_a_timeout_row(papers, monkeypatch, workers):
    """The limit from the settings (CORPUS_PAPER_TIMEOUT_S): the day ends soon after it, the
    stuck paper with a ``timeout`` row and every other paper with its own rows."""
    from corpus.parallel import PAPER_TIMEOUT_ENV, TIMEOUT

    tasks, alone = papers
    monkeypatch.setenv(PAPER_TIMEOUT_ENV, "2")
    start = time.monotonic()
    out = map_papers(_never_returns_on_victim, tasks, workers, parse_days._latex_failed, chunk_size=1)
    assert time.monotonic() - start < 2 + 10
    for got, want in zip(out, alone, strict=True):
        if want["id"] == VICTIM:
            assert (got["status"], got["reason"]) == ("failed", f"parse_error: {TIMEOUT}")
        else:
            assert got == want
