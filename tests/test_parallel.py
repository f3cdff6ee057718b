"""corpus.parallel: per-paper work over processes, in order, one paper's failure kept to it."""

from __future__ import annotations

import os
import signal

from corpus.parallel import WORKER_DIED, map_papers


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
