"""Per-paper work of one day spread over processes, each paper's failure kept to that paper.

Stages call :func:`map_papers` with a module-level function of one item (PDF probing,
e-print unpacking, LaTeX and TEI parsing). With one worker it is a plain loop in this
process. With more, items go to a process pool in chunks, results come back in input
order, and a worker process that dies (a segfault in a C parser, the kernel's OOM killer,
``os._exit``) fails only the item it was working on: the items of the chunks in flight are
retried one at a time in a fresh process, and the one that kills it again gets
``on_failure(item, reason)`` as its result. An exception raised by the function becomes
``on_failure(item, "ExcType: message")`` too, so one bad paper never sinks the day.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")
WORKER_DIED = "worker_died"  # reason given when a process died on an item


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


def _run_chunk(fn: Callable[[Any], Any], chunk: Sequence[Any]) -> list[tuple[bool, Any]]:
    out = []
    for item in chunk:
        try:
            out.append((True, fn(item)))
        except Exception as exc:  # a bug on one paper: its own failure, not the chunk's
            out.append((False, f"{type(exc).__name__}: {exc}"[:500]))
    return out


def _context() -> mp.context.BaseContext:
    """fork when this process has one thread (cheap, inherits the imported parsers), else
    forkserver (forking a threaded process can deadlock the child)."""
    return mp.get_context("fork" if threading.active_count() == 1 else "forkserver")


def map_papers(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    on_failure: Callable[[T, str], R],
    chunk_size: int | None = None,
    min_per_worker: int = 1,
) -> list[R]:
    """``[fn(item) for item in items]`` over ``workers`` processes, in order, failures isolated.

    ``min_per_worker``: items a process must get to be worth starting, for work whose start-up
    (a fresh process importing its module) outweighs a few items (a small day stays in process).
    """
    items = list(items)
    workers = max(1, min(workers, len(items) // max(1, min_per_worker), available_cpus()))
    if workers == 1:
        return [
            r if ok else on_failure(item, r)
            for item, (ok, r) in zip(items, _run_chunk(fn, items), strict=True)
        ]
    size = chunk_size or max(1, min(32, len(items) // (workers * 4)))
    chunks = [list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size)]
    results: list[Any] = [None] * len(items)
    suspects = _run_pool(fn, items, chunks, workers, results, on_failure)
    # Items of chunks that were in flight when a worker died: one at a time, one process each.
    while suspects:
        suspects = _run_pool(fn, items, [[i] for i in suspects], 1, results, on_failure, last_try=True)
    return results


def _run_pool(
    fn: Callable[[Any], Any],
    items: list,
    chunks: list[list[int]],
    workers: int,
    results: list,
    on_failure: Callable[[Any, str], Any],
    last_try: bool = False,
) -> list[int]:
    """Run ``chunks`` (lists of item indices); returns the indices of chunks cut short by a dead
    worker (to retry alone). On ``last_try`` (one item per chunk, one in flight) a dead worker
    is that item's failure."""
    pending = deque(chunks)
    suspects: list[int] = []
    while pending:
        with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
            inflight: dict[Future, list[int]] = {}
            broken = False
            while (pending or inflight) and not broken:
                while pending and len(inflight) < (1 if last_try else workers * 2):
                    chunk = pending.popleft()
                    inflight[pool.submit(_run_chunk, fn, [items[i] for i in chunk])] = chunk
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for future in done:
                    chunk = inflight.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        broken = True
                        if last_try:
                            results[chunk[0]] = on_failure(items[chunk[0]], WORKER_DIED)
                        else:
                            suspects.extend(chunk)
                        continue
                    for i, (ok, value) in zip(chunk, outcome, strict=True):
                        results[i] = value if ok else on_failure(items[i], value)
            if broken:  # the others in flight are lost with the pool: retry them (alone, if suspect)
                for chunk in inflight.values():
                    if last_try:
                        pending.appendleft(chunk)
                    else:
                        suspects.extend(chunk)
    return sorted(suspects)
