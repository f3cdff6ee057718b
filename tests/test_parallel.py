"""corpus.parallel: per-paper work over processes, in order, one paper's failure kept to it."""

from __future__ import annotations

import contextlib
import os
import signal
import time

import pytest

from corpus.parallel import (
    DEFAULT_PAPER_TIMEOUT_S,
    PAPER_TIMEOUT_ENV,
    TIMEOUT,
    WORKER_DIED,
    PaperClock,
    map_papers,
    paper_timeout_s,
)


def square(x: int) -> int:
    if x == 13:
        raise ValueError("unlucky")
    if x == 7:
        os.kill(os.getpid(), signal.SIGKILL)  # a worker killed mid-paper (segfault, OOM killer)
    return x * x


def failed(x: int, reason: str) -> str:
    return f"failed {x}: {reason}"


def test_serial_and_parallel_give_the_same_results_in_order():
    items = [x for x in range(40) if x not in (7, 13)]
    expected = [x * x for x in items]
    assert map_papers(square, items, 1, failed) == expected
    assert map_papers(square, items, 3, failed) == expected
    assert map_papers(square, items, 2, failed, chunk_size=5) == expected


def test_an_exception_fails_only_its_item():
    out = map_papers(square, [12, 13, 14], 1, failed)
    assert out == [144, "failed 13: ValueError: unlucky", 196]
    out = map_papers(square, list(range(10, 20)), 2, failed, chunk_size=3)
    assert out[3] == "failed 13: ValueError: unlucky" and out[4] == 196


def test_a_dead_worker_fails_only_the_paper_it_was_on():
    items = list(range(30))
    out = map_papers(square, items, 2, failed, chunk_size=4)
    assert out[7] == f"failed 7: {WORKER_DIED}"
    assert out[13] == "failed 13: ValueError: unlucky"
    assert [o for i, o in enumerate(out) if i not in (7, 13)] == [x * x for x in items if x not in (7, 13)]


def pid_of(_: int) -> int:
    return os.getpid()


def test_a_pool_process_gets_at_least_min_per_worker_items(monkeypatch):
    monkeypatch.setattr("corpus.parallel.available_cpus", lambda: 8)
    pids = map_papers(pid_of, range(10), 8, failed, min_per_worker=20)
    assert set(pids) == {os.getpid()}  # too few items for even one pool process: in process
    pids = map_papers(pid_of, range(10), 8, failed, chunk_size=1, min_per_worker=5)
    assert os.getpid() not in pids and len(set(pids)) <= 2  # 10 items, at least 5 each


def stuck_on_13(x: int) -> int:
    """A parser that loops for ever on one paper, swallowing ordinary exceptions as parsers do."""
    while x == 13:
        with contextlib.suppress(Exception):
            time.sleep(0.01)
    return x * x


def deaf_on_13(x: int) -> int:
    """A stall no alarm breaks (a C call that never returns to Python): SIGALRM is blocked."""
    if x == 13:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(3600)
    return x * x


def test_a_paper_past_the_time_limit_fails_alone_in_process_and_in_the_pool():
    items = list(range(10, 20))
    expected = [f"failed 13: {TIMEOUT}" if x == 13 else x * x for x in items]
    for workers in (1, 2):
        start = time.monotonic()
        assert map_papers(stuck_on_13, items, workers, failed, chunk_size=3, timeout_s=1) == expected
        assert time.monotonic() - start < 8, workers


def test_the_time_limit_comes_from_the_settings(monkeypatch):
    monkeypatch.setenv(PAPER_TIMEOUT_ENV, "0.5")
    assert paper_timeout_s() == 0.5
    assert map_papers(stuck_on_13, [12, 13], 1, failed) == [144, f"failed 13: {TIMEOUT}"]
    monkeypatch.setenv(PAPER_TIMEOUT_ENV, "0")
    assert paper_timeout_s() is None
    monkeypatch.setenv(PAPER_TIMEOUT_ENV, "five minutes")
    with pytest.raises(ValueError, match=PAPER_TIMEOUT_ENV):
        paper_timeout_s()
    monkeypatch.delenv(PAPER_TIMEOUT_ENV)
    assert paper_timeout_s() == DEFAULT_PAPER_TIMEOUT_S


def test_a_stall_the_alarm_cannot_break_is_ended_by_the_task_limit(monkeypatch):
    """The pool kills the task's process after its papers' limits; its chunk is tried again one
    paper per task, and only the deaf paper gets ``timeout``."""
    monkeypatch.setattr("corpus.parallel.TASK_GRACE_S", 0.5)
    items = list(range(10, 20))
    start = time.monotonic()
    out = map_papers(deaf_on_13, items, 2, failed, chunk_size=3, timeout_s=1)
    assert out == [f"failed 13: {TIMEOUT}" if x == 13 else x * x for x in items]
    assert time.monotonic() - start < 20


def test_an_outer_alarm_is_kept():
    """A timer armed outside (pytest-timeout's, another deadline) fires when it is due and is
    re-armed for what it had left."""
    fired: list[float] = []
    start = time.monotonic()
    old = signal.signal(signal.SIGALRM, lambda *_: fired.append(time.monotonic() - start))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with PaperClock(5) as clock:
            clock.start()
            time.sleep(0.5)  # the outer alarm is due in here: its handler runs, the sleep goes on
            clock.stop()
        assert len(fired) == 1 and 0.25 < fired[0] < 0.5
        signal.setitimer(signal.ITIMER_REAL, 0.6)
        with PaperClock(5) as clock:
            clock.start()
            time.sleep(0.1)
            clock.stop()
        assert 0.3 < signal.getitimer(signal.ITIMER_REAL)[0] <= 0.5  # what it had left
        time.sleep(0.6)
        assert len(fired) == 2
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# A step as Dagster runs it: its interrupt handler raises, and polars is first imported inside the
# step, so polars' SA_RESTART handler chains to Dagster's. Then it blocks as a stage does: on a
# Pipes worker's exit (deployment.PipesSubprocess) or on a pool's results with no time limit.
_STEP = """
import subprocess, sys, time
from dagster import DagsterExecutionInterruptedError
from corpus_assets.dagster_internals import interrupts_raised_as_step
wait, fix = sys.argv[1], sys.argv[2] == "fix"
with interrupts_raised_as_step():
    import polars
    if fix:
        from corpus.parallel import interrupts_end_waits
        interrupts_end_waits()
    worker = None
    try:
        if wait == "worker":
            worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            print("waiting", flush=True)
            worker.wait()
        else:
            from corpus.parallel import map_papers
            print("waiting", flush=True)
            map_papers(time.sleep, [60, 60], 2, lambda item, reason: reason, chunk_size=1, timeout_s=0)
    except DagsterExecutionInterruptedError:
        print("interrupted", flush=True)
    finally:
        if worker is not None:
            worker.kill()
"""


def _interrupted_within(wait: str, fix: bool, seconds: float) -> bool:
    """Whether a SIGINT ends the step's wait within ``seconds`` (the step is killed otherwise)."""
    import subprocess
    import sys

    step = subprocess.Popen(
        [sys.executable, "-c", _STEP, wait, "fix" if fix else "nofix"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its pool's workers go with it
    )
    try:
        assert step.stdout.readline().strip() == "waiting"
        time.sleep(0.5)  # in the wait
        step.send_signal(signal.SIGINT)
        out, _ = step.communicate(timeout=seconds)
        return "interrupted" in out
    except subprocess.TimeoutExpired:
        return False
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(step.pid, signal.SIGKILL)
        step.communicate()


@pytest.mark.slow
@pytest.mark.parametrize("wait", ["worker", "pool"])
def test_an_interrupt_ends_a_step_s_blocking_wait_with_polars_loaded(wait):
    """interrupts_end_waits (one siginterrupt after polars is imported) ends the wait at once,
    where the kernel restarted it for as long as the worker or the papers took (the control)."""
    assert _interrupted_within(wait, fix=True, seconds=8)
    assert not _interrupted_within(wait, fix=False, seconds=3)
