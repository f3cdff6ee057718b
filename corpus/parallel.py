"""Per-paper work of one day spread over processes, each paper's failure kept to that paper
(:func:`map_papers`); and a run's per-day work over processes in order (:func:`map_ordered`, for
the releases' and the graph's full builds, where a failure fails the run).

Stages call :func:`map_papers` with a module-level function of one item (PDF probing,
e-print unpacking, LaTeX and TEI parsing, peS2o signals, CiteWorth paragraphs). With one
worker it is a plain loop in this process. With more, items go to a ``pebble.ProcessPool``
in chunks and results come back in input order. Whatever happens to one paper stays that
paper's failure row, and the day always finishes:

* an exception raised by the function: ``on_failure(item, "ExcType: message")``;
* a paper that runs past the time limit (``CORPUS_PAPER_TIMEOUT_S``, a loop or a stall in a
  parser): ``on_failure(item, "timeout")``, raised in the paper's own process by an alarm
  (:class:`PaperClock`), in process too;
* a worker process that dies (a segfault in a C parser, the kernel's OOM killer,
  ``os._exit``): the items of its chunk are tried again one per task, and the one that kills
  its process again gets ``on_failure(item, "worker_died")``.

Why pebble, not ``concurrent.futures``: Python 3.11's ``ProcessPoolExecutor`` treats one dead
worker as a broken pool, SIGTERMs the survivors and joins them; a forked worker inherits a
SIGTERM handler that only records the signal (Dagster's ``capture_interrupts`` during a
step), so a survivor blocked writing a large result into the pipe nobody reads any more
neither finishes nor dies, and the day hangs for ever (5 runs out of 5 in
``tests/test_parallel_deadlock.py``'s setting). pebble's pool keeps reading results while a
worker is replaced, reports a death or a timeout as that task's own failure, and stops a
worker with SIGTERM then SIGKILL under a handler of its own. One hazard is left to us: a
worker killed in the middle of writing its result leaves pebble's result channel locked and
half-written, so nothing more arrives; when no task completes for longer than any task in
flight may take, the pool is abandoned (its workers killed) and its tasks retried.
loky was measured too: it fails every task in flight when one worker dies and has no
per-task time limit, so the day would need the retry logic this module no longer carries.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pebble import ProcessPool

T = TypeVar("T")
R = TypeVar("R")
WORKER_DIED = "worker_died"  # reason given when a process died on an item
TIMEOUT = "timeout"  # reason given when an item ran past the time limit
PAPER_TIMEOUT_ENV = "CORPUS_PAPER_TIMEOUT_S"
# The slowest real input in ../shared takes under a second of wall time in any stage on a loaded
# 2-core machine (LaTeX 0.79 s, e-print unpacking 0.67, PDF probing 0.54, TEI 0.27): a paper
# still running after two minutes is stuck, not slow.
DEFAULT_PAPER_TIMEOUT_S = 120.0
TASK_GRACE_S = 15.0  # on top of a task's papers' limits: raising the alarm, sending the result
STALL_GRACE_S = 30.0  # on top of the longest task in flight before a silent pool is abandoned
log = logging.getLogger(__name__)


class PaperTimeout(BaseException):
    """A paper ran past its time limit. A BaseException, so a parser's own ``except
    Exception`` cannot swallow it (and the alarm repeats every second if something does)."""


def paper_timeout_s() -> float | None:
    """``CORPUS_PAPER_TIMEOUT_S`` (seconds a paper may take in any per-paper stage; default
    :data:`DEFAULT_PAPER_TIMEOUT_S`); ``0`` means no limit."""
    raw = os.environ.get(PAPER_TIMEOUT_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_PAPER_TIMEOUT_S
    except ValueError as exc:
        raise ValueError(f"{PAPER_TIMEOUT_ENV}={raw!r} is not a number of seconds") from exc
    return value if value > 0 else None


def available_cpus() -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup v2 CPU quota (a
    container or pod limit; ``os.cpu_count()`` would report the whole host)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cpus)


class PaperClock:
    """SIGALRM deadlines for papers worked one after another: :class:`PaperTimeout` is raised
    in this thread once a paper has had ``limit`` seconds (between :meth:`start` and
    :meth:`stop`). It interrupts Python loops, regular expressions and sleeps, not a C call
    that never returns to Python (pool tasks have their own limit for that).

    The handler is installed once for the block (a chunk of papers) and each paper costs two
    ``setitimer`` calls. Only the main thread gets signals, so elsewhere papers run unlimited.
    A timer already armed outside (pytest-timeout's, say) is kept: its handler runs when it is
    due, and it is re-armed for the time it had left when the block ends.
    """

    def __init__(self, limit: float | None) -> None:
        main = threading.current_thread() is threading.main_thread()
        self.limit = limit if limit and main else None
        self.due: float | None = None  # the current paper's deadline
        self.outer_due: float | None = None
        self.outer_handler: Any = None
        self.outer_interval = 0.0

    def __enter__(self) -> PaperClock:
        if self.limit is not None:
            now = time.monotonic()
            self.outer_handler = signal.getsignal(signal.SIGALRM)
            delay, self.outer_interval = signal.getitimer(signal.ITIMER_REAL)
            self.outer_due = now + delay if delay > 0 else None
            signal.signal(signal.SIGALRM, self._on_alarm)
        return self

    def start(self) -> None:
        if self.limit is not None:
            now = time.monotonic()
            self.due = now + self.limit
            self._arm(now)

    def stop(self) -> None:
        if self.limit is not None:
            self.due = None  # first: from here on the handler cannot raise for this paper
            self._arm(time.monotonic())

    def _arm(self, now: float) -> None:
        due = [t for t in (self.due, self.outer_due) if t is not None]
        signal.setitimer(signal.ITIMER_REAL, max(1e-3, min(due) - now) if due else 0)

    def _on_alarm(self, signum: int, frame: Any) -> None:
        now = time.monotonic()
        if self.outer_due is not None and now >= self.outer_due - 1e-3:
            self.outer_due = None  # its turn: it may raise (a test's time-out) or return
            if callable(self.outer_handler):
                self.outer_handler(signum, frame)
        if self.due is not None and now >= self.due - 1e-3:
            signal.setitimer(signal.ITIMER_REAL, 1.0)  # again in a second if this is swallowed
            raise PaperTimeout(f"no result after {self.limit:g} s")
        self._arm(now)

    def __exit__(self, *_: object) -> None:
        if self.limit is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.outer_handler)
            if self.outer_due is not None:
                left = max(1e-3, self.outer_due - time.monotonic())
                signal.setitimer(signal.ITIMER_REAL, left, self.outer_interval)


def _run_chunk(
    fn: Callable[[Any], Any], chunk: Sequence[Any], limit: float | None = None
) -> list[tuple[bool, Any]]:
    out: list[tuple[bool, Any]] = []
    with PaperClock(limit) as clock:
        for item in chunk:
            result: tuple[bool, Any] | None = None
            try:
                clock.start()
                try:
                    result = (True, fn(item))
                finally:
                    clock.stop()
            except PaperTimeout:
                result = result or (False, TIMEOUT)  # a result that came as time ran out is kept
            except Exception as exc:  # a bug on one paper: its own failure, not the chunk's
                result = (False, f"{type(exc).__name__}: {exc}"[:500])
            out.append(result)
    return out


def interrupts_end_waits() -> None:
    """Make SIGINT end this process's blocking waits (a pool's results, a worker process's exit)
    at once. polars installs a SIGINT handler with SA_RESTART when it is imported (chaining to
    the one before it), so the kernel restarted a wait a signal broke off and the handler that
    raises the interrupt (Dagster's, in a step; Python's, in a Pipes worker) ran only when the
    wait ended by itself: a terminated run went on until a paper or a worker finished. Called once
    per process, after polars is imported (here, if it was not): no SA_RESTART handler comes later,
    and Python's own handlers never ask for restarts."""
    import polars  # noqa: F401 - its handler is installed on import: now, not after this call

    signal.siginterrupt(signal.SIGINT, True)


def _context() -> mp.context.BaseContext:
    """fork when this process has one thread (cheap, inherits the imported parsers), else
    forkserver (forking a threaded process can deadlock the child)."""
    return mp.get_context("fork" if threading.active_count() == 1 else "forkserver")


def map_ordered(
    fn: Callable[..., Any], items: Iterable[tuple], workers: int, window: int = 2
) -> Iterator[Any]:
    """``fn(*item)`` for each item, yielded in input order; over ``workers`` processes when more
    than one, with at most ``window`` x ``workers`` results waiting at once (memory stays that
    of a few items however many there are). For one run's whole-table work split by day (a
    release's full build): an exception or a dead worker fails the call, and so the run, unlike
    :func:`map_papers`' per-paper failure rows. ``fn`` must be a module-level function."""
    if workers <= 1:
        for item in items:
            yield fn(*item)
        return
    from concurrent.futures import ProcessPoolExecutor

    # spawn: a forked child of a process whose polars threads hold a lock deadlocks on it
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        pending: deque[Future] = deque()
        for item in items:
            pending.append(pool.submit(fn, *item))
            if len(pending) >= window * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def map_papers(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    on_failure: Callable[[T, str], R],
    chunk_size: int | None = None,
    min_per_worker: int = 1,
    timeout_s: float | None = None,
) -> list[R]:
    """``[fn(item) for item in items]`` over ``workers`` processes, in order, failures isolated.

    ``min_per_worker``: items a process must get to be worth starting, for work whose start-up
    (a fresh process importing its module) outweighs a few items (a small day stays in process).
    ``timeout_s``: seconds one item may take (default :func:`paper_timeout_s`; ``0``: none).
    """
    items = list(items)
    limit = paper_timeout_s() if timeout_s is None else (timeout_s if timeout_s > 0 else None)
    workers = max(1, min(workers, len(items) // max(1, min_per_worker), available_cpus()))
    if workers == 1:
        return [
            r if ok else on_failure(item, r)
            for item, (ok, r) in zip(items, _run_chunk(fn, items, limit), strict=True)
        ]
    size = chunk_size or max(1, min(32, len(items) // (workers * 4)))
    chunks = [list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size)]
    results: list[Any] = [None] * len(items)
    retry = _run_pool(fn, items, chunks, workers, results, on_failure, limit)
    # Items of chunks whose process died or ran out of time: again, one item per task, so the
    # one at fault fails alone (each task has its own process and time limit in pebble).
    if retry:
        _run_pool(fn, items, [[i] for i in retry], workers, results, on_failure, limit, last_try=True)
    return results


def _task_limit(limit: float | None, n_items: int) -> float | None:
    """pebble's limit for a task of ``n_items``: each item has ``limit`` (the alarm inside the
    task), so more than their sum means a stall the alarm could not break."""
    return None if limit is None else limit * n_items + TASK_GRACE_S


def _run_pool(
    fn: Callable[[Any], Any],
    items: list,
    tasks: list[list[int]],
    workers: int,
    results: list,
    on_failure: Callable[[Any, str], Any],
    limit: float | None,
    last_try: bool = False,
) -> list[int]:
    """Run ``tasks`` (lists of item indices) and fill ``results``; returns the indices of items
    to try again alone. On ``last_try`` (one item per task) what befalls a task is its item's
    failure. A pool that goes silent for longer than its tasks may take is replaced; its tasks
    in flight are tried once more, then given up with ``timeout``."""
    from pebble import ProcessPool  # here: its import (asyncio and all, ~0.07 CPU s) only where a pool runs

    pending = deque((task, 0) for task in tasks)
    retry: list[int] = []
    while pending:
        pool = ProcessPool(max_workers=min(workers, len(pending)), context=_context())
        inflight: dict[Future, tuple[list[int], int]] = {}
        stalled = False
        try:
            while (pending or inflight) and not stalled:
                while pending and len(inflight) < workers * 2:
                    task, attempt = pending.popleft()
                    chunk = [items[i] for i in task]
                    future = pool.schedule(
                        _run_chunk, args=(fn, chunk, limit), timeout=_task_limit(limit, len(task))
                    )
                    inflight[future] = (task, attempt)
                window = None
                if limit is not None:
                    window = max(_task_limit(limit, len(t)) or 0 for t, _ in inflight.values())
                    window += STALL_GRACE_S
                done, _ = wait(inflight, timeout=window, return_when=FIRST_COMPLETED)
                if not done:
                    stalled = True
                for future in done:
                    task, attempt = inflight.pop(future)
                    _settle(future, task, items, results, on_failure, retry, last_try)
        except BaseException:
            _close(pool, abandon=True)  # an interrupt (a terminated run): papers in flight are not waited for
            raise
        _close(pool, abandon=stalled)
        if stalled:
            log.warning("per-paper pool stalled; %d task(s) in flight are tried again", len(inflight))
            for task, attempt in inflight.values():
                if not last_try:
                    retry.extend(task)
                elif attempt == 0:
                    pending.appendleft((task, 1))
                else:
                    results[task[0]] = on_failure(items[task[0]], TIMEOUT)
    return sorted(retry)


def _settle(
    future: Future,
    task: list[int],
    items: list,
    results: list,
    on_failure: Callable[[Any, str], Any],
    retry: list[int],
    last_try: bool,
) -> None:
    """Put a finished task's outcome into ``results`` (or its items into ``retry``)."""
    from pebble import ProcessExpired

    try:
        outcome = future.result()
    except ProcessExpired:
        reason = WORKER_DIED
    except FutureTimeout:
        reason = TIMEOUT
    except BaseException as exc:  # noqa: BLE001 - an unpicklable item or result, a SystemExit
        reason = f"{type(exc).__name__}: {exc}"[:500]
    else:
        for i, (ok, value) in zip(task, outcome, strict=True):
            results[i] = value if ok else on_failure(items[i], value)
        return
    if last_try:
        results[task[0]] = on_failure(items[task[0]], reason)
    else:
        retry.extend(task)


def _close(pool: ProcessPool, abandon: bool) -> None:
    """Stop ``pool``'s workers. An abandoned pool may have a thread stuck reading a half-written
    result: it is stopped from a helper thread that is given a few seconds, then left behind."""
    if not abandon:
        pool.close()
        pool.join()
        return
    pool.stop()
    stopper = threading.Thread(target=pool.join, name="corpus-pool-stop", daemon=True)
    stopper.start()
    stopper.join(timeout=10)
