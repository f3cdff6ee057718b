"""A range backfill of every daily asset, as users launch it (``make backfill``), at two sizes.

    python benchmarks/backfill.py [LANDING_DIR] [--days 8 64] [--records-per-day 150] [--empty 8 64]

For each size it generates a full-text landing zone with ``corpus.sample.landing_zone`` (or reads
LANDING_DIR, whose days are backfilled whole), backfills it into a fresh data root and
Dagster instance with ``python -m corpus_assets.backfill`` (runs of CORPUS_DAYS_PER_RUN days,
max_concurrent_runs = the machine's cores) and samples the whole process tree from /proc:
CPU seconds, peak RSS of the tree (daemons, run workers, Pipes workers), and the mean cores
used while the tree was busy. ``--empty`` backfills ranges of days the landing zone holds
no record for: the slope of their CPU per day is the per-partition overhead (planning, run
start-up, views, metadata). Targets (issue J): >= 1.6 busy cores on 2 cores; peak RSS at 64
days within 10 % of 8 days and <= 1 GB; overhead <= 0.1 CPU s per day.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, TreeSampler, result

# Deployment settings a measurement may vary (the data paths are the benchmark's own).
SETTINGS = ("CORPUS_DEPLOYMENT", "CORPUS_DAYS_PER_RUN", "CORPUS_EXECUTOR")


def instance_home(root: Path) -> Path:
    """A Dagster home with the repo's dagster.yaml, max_concurrent_runs = this machine's cores."""
    home = root / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    text = (REPO / "dagster.yaml").read_text()
    text = re.sub(r"(?m)^(    max_concurrent_runs:) \d+", rf"\1 {os.cpu_count()}", text)
    (home / "dagster.yaml").write_text(text)
    return home


def backfill(landing: Path, first: str, last: str, root: Path) -> dict:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CORPUS_") or k in SETTINGS},
        "CORPUS_HOME": str(root / "data"),
        "CORPUS_LANDING": str(landing),
        "DAGSTER_HOME": str(instance_home(root)),
        "GROBID_URL": "http://127.0.0.1:9",  # nothing there: cached TEI, the rest pending
    }
    cmd = [sys.executable, "-W", "ignore", "-m", "corpus_assets.backfill", "--from", first, "--to", last]
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    with TreeSampler(proc.pid) as tree:
        out, _ = proc.communicate()
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"backfill {first}..{last} failed ({proc.returncode}):\n{out[-3000:]}")
    parts = ", ".join(f"{mb:.0f} {what}" for mb, what in tree.peak_parts)
    print(f"  {first}..{last} at the peak (MB): {parts}", flush=True)
    return {"wall_s": wall, "cpu_s": tree.cpu_s, "peak_mb": tree.peak_rss_mb, "cores": tree.busy_cores()}


def generated(root: Path, days: int, per_day: int, start: dt.date) -> Path:
    from corpus.sample.landing_zone import generate_landing

    landing = root / "landing"
    generate_landing(landing, n_records=days * per_day, days=days, start=start, seed=5, full_text=True)
    return landing


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("landing", nargs="?", type=Path)
    parser.add_argument("--days", type=int, nargs="+", default=[8, 64])
    parser.add_argument("--records-per-day", type=int, default=150)
    parser.add_argument("--empty", type=int, nargs="*", default=[8, 64])
    args = parser.parse_args()
    start = dt.date(2024, 1, 1)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sizes = [None] if args.landing else args.days
        for days in sizes:
            root = Path(tmp) / f"run{days}"
            if args.landing:
                from corpus.ingest.landing import LandingZone

                landing = args.landing.resolve()
                stamps = list(LandingZone(landing).datestamps())
                first, last, label = stamps[0], stamps[-1], "given"
            else:
                landing = generated(root, days, args.records_per_day, start)
                first, last, label = (
                    start.isoformat(),
                    (start + dt.timedelta(days=days - 1)).isoformat(),
                    f"d{days}",
                )
            m = backfill(landing, first, last, root)
            print(
                f"{label}: {first}..{last} wall {m['wall_s']:.1f}s, CPU {m['cpu_s']:.1f}s, "
                f"busy cores {m['cores']:.2f}, peak tree RSS {m['peak_mb']:.0f} MB",
                flush=True,
            )
            figures.update(
                {
                    f"{label}_cpu_s": m["cpu_s"],
                    f"{label}_busy_cores": m["cores"],
                    f"{label}_peak_mb": m["peak_mb"],
                }
            )
        empty: dict[int, float] = {}
        for days in args.empty:
            root = Path(tmp) / f"empty{days}"
            landing = root / "landing"
            (landing / "oai").mkdir(parents=True)  # a landing zone with no records: overhead only
            first = dt.date(2024, 6, 1)
            m = backfill(landing, first.isoformat(), (first + dt.timedelta(days=days - 1)).isoformat(), root)
            empty[days] = m["cpu_s"]
            print(f"empty {days} days: CPU {m['cpu_s']:.1f}s, wall {m['wall_s']:.1f}s", flush=True)
        if len(empty) >= 2:
            lo, hi = min(empty), max(empty)
            figures["overhead_cpu_s_per_day"] = (empty[hi] - empty[lo]) / (hi - lo)
            figures[f"empty{lo}_cpu_s"] = empty[lo]
    result(cores=os.cpu_count() or 1, **figures)


if __name__ == "__main__":
    main()
