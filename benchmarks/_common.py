"""Small helpers every benchmark uses: wall time, peak memory, the RESULT line."""

from __future__ import annotations

import resource
import sys
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def peak_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def cpu_timer():
    """CPU seconds of this process (per-core rates stay honest while other work shares the cores)."""
    box = {"s": 0.0}
    start = time.process_time()
    try:
        yield box
    finally:
        box["s"] = time.process_time() - start


@contextmanager
def timer():
    box = {"s": 0.0}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["s"] = time.perf_counter() - start


def result(**values: float | int | str) -> None:
    """Print the one ``RESULT k=v ...`` line that ends every benchmark (DESIGN.md §7)."""
    parts = []
    for key, value in values.items():
        parts.append(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}")
    print("RESULT " + " ".join(parts), flush=True)


def _command(pid: int) -> str:
    """What a process runs, shortly: its arguments after the interpreter, cut to 60 characters."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    words = [a.decode(errors="replace") for a in args if a]
    words = [w for w in words[1:] if w not in ("-W", "ignore", "-u")] or words
    return " ".join(" ".join([Path(words[0]).name, *words[1:]]).split())[:60] if words else "?"


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeSampler:
    """CPU and resident memory of a process and all its descendants, sampled from /proc.

    ``cpu_s`` adds each process's own CPU time as seen at its last sample (a process that
    exits between samples loses at most one interval); ``peak_rss_mb`` is the largest sum of
    RSS over the live tree; ``busy_cores`` the mean CPU rate over the intervals in which the
    tree used at least ``busy_floor`` of a core (a backfill's waits between runs left out);
    ``peak_parts`` the processes at the peak, as (MB, what each runs), largest first, and
    ``pss_at_peak_mb`` their proportional set size then (shared pages, e.g. of a forked pool's
    children or of the libraries every process maps, counted once in all).
    """

    def __init__(self, pid: int, interval_s: float = 0.2):
        import os
        import threading

        self.pid, self.interval_s = pid, interval_s
        self._tick = os.sysconf("SC_CLK_TCK")
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._cpu: dict[int, float] = {}
        self._base: dict[int, float] = {}  # CPU the processes alive at the start had already used
        self.peak_rss_mb = 0.0
        self.peak_parts: list[tuple[float, str]] = []
        self.pss_at_peak_mb = 0.0
        self.rates: list[float] = []
        self.stamps: list[float] = []  # time.time() at the end of each rate's interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self) -> list[int]:
        import os

        parent: dict[int, int] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                    parent[int(name)] = int(fields[1])
                except (OSError, IndexError, ValueError):
                    continue
        out, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(c for c, pp in parent.items() if pp == p)
        return out

    def _sample(self) -> float:
        total_rss, rss = 0, {}
        for p in self._tree():
            try:
                with open(f"/proc/{p}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{p}/statm") as fh:
                    rss[p] = int(fh.read().split()[1]) * self._page
            except (OSError, IndexError, ValueError):
                continue
            total_rss += rss[p]
            cpu = (int(fields[11]) + int(fields[12])) / self._tick  # utime + stime
            self._cpu[p] = max(self._cpu.get(p, 0.0), cpu)
        cpu_now = sum(v - self._base.get(p, 0.0) for p, v in self._cpu.items())
        if total_rss / 2**20 > self.peak_rss_mb:
            self.peak_rss_mb = total_rss / 2**20
            self.peak_parts = sorted(((b / 2**20, _command(p)) for p, b in rss.items()), reverse=True)
            self.pss_at_peak_mb = sum(_pss_kb(p) for p in rss) / 1024  # read only at a new peak: rare
        return cpu_now

    def _run(self) -> None:
        last_t, last_cpu = time.perf_counter(), self._sample()
        self._base = dict(self._cpu)
        last_cpu = 0.0
        while not self._stop.wait(self.interval_s):
            cpu = self._sample()
            now = time.perf_counter()
            self.rates.append((cpu - last_cpu) / (now - last_t))
            self.stamps.append(time.time())
            last_t, last_cpu = now, cpu

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def cpu_s(self) -> float:
        return sum(v - self._base.get(p, 0.0) for p, v in self._cpu.items())

    def busy_cores(self, busy_floor: float = 0.25) -> float:
        busy = [r for r in self.rates if r >= busy_floor]
        return sum(busy) / len(busy) if busy else 0.0

    def cores_between(self, start: float, end: float) -> float:
        """Mean cores used from ``start`` to ``end`` (``time.time()``), idle moments included."""
        inside = [
            r for r, t in zip(self.rates, self.stamps, strict=True) if start + self.interval_s <= t <= end
        ]
        return sum(inside) / len(inside) if inside else 0.0


def hwm_mb() -> float:
    """Peak RSS of this process image (VmHWM: unlike ru_maxrss, not inherited across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return peak_mb()


def in_child(target, *args):
    """``target(*args, queue)`` in a fresh (spawned) process, so its CPU s and peak RSS are its own;
    returns what it put on the queue, or exits naming the target when the child failed."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=target, args=(*args, queue))
    child.start()
    out = queue.get()
    child.join()
    if child.exitcode:
        raise SystemExit(f"{target.__name__} failed ({child.exitcode})")
    return out
