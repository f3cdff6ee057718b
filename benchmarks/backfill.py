"""A range backfill of every daily asset, as users launch it (``make backfill``), at two sizes.

    python benchmarks/backfill.py [LANDING_DIR] [--days 8 64] [--records-per-day 150] [--empty 8 40]

For each size it generates a full-text landing zone with ``corpus.sample.landing_zone`` (or reads
LANDING_DIR, whose days are backfilled whole), backfills it into a fresh data root and
Dagster instance with ``python -m corpus_assets.backfill`` (runs of CORPUS_DAYS_PER_RUN days,
max_concurrent_runs = the machine's cores) and samples the whole process tree from /proc:
CPU seconds, peak RSS of the tree (daemons, code server, run workers, Pipes workers; the
processes at the peak are printed), the mean cores used while the tree was busy, and the mean
cores used from the first step of the backfill's runs to the last (``step_cores``: the run
phase, without the command's start-up and the wait for the daemon).

``--empty`` backfills ranges of days the landing zone holds no record for, so only overhead
is measured, split in its two parts: the per-partition cost (planning, events, metadata,
stage calls; the CPU slope between the sizes, each cut into as many runs as cores, so the
run count stays the same) and the start-up of a run (process, code, Pipes workers; the
smallest size again as one run per day). ``overhead_cpu_s_per_day`` is both at the
defaults: per partition + start-up / CORPUS_DAYS_PER_RUN. Targets (issue J): >= 1.6 busy
cores on 2 cores; peak RSS at 64 days within 10 % of 8 days and <= 1 GB; per-partition
overhead <= 0.1 CPU s.
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
SETTINGS = ("CORPUS_DEPLOYMENT", "CORPUS_DAYS_PER_RUN", "CORPUS_EXECUTOR", "CORPUS_WORKERS")


def instance_home(root: Path) -> Path:
    """A Dagster home with the repo's dagster.yaml, max_concurrent_runs = this machine's cores."""
    home = root / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    text = (REPO / "dagster.yaml").read_text()
    text = re.sub(r"(?m)^(    max_concurrent_runs:) \d+", rf"\1 {os.cpu_count()}", text)
    (home / "dagster.yaml").write_text(text)
    return home


def backfill(landing: Path, first: str, last: str, root: Path, days_per_run: int | None = None) -> dict:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CORPUS_") or k in SETTINGS},
        **({"CORPUS_DAYS_PER_RUN": str(days_per_run)} if days_per_run else {}),
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
    first_step, last_step = step_window(instance_home(root))
    parts = ", ".join(f"{mb:.0f} {what}" for mb, what in tree.peak_parts)
    print(f"  {first}..{last} at the peak (MB): {parts}", flush=True)
    return {
        "wall_s": wall,
        "cpu_s": tree.cpu_s,
        "peak_mb": tree.peak_rss_mb,
        "pss_mb": tree.pss_at_peak_mb,
        "cores": tree.busy_cores(),
        "step_cores": tree.cores_between(first_step, last_step),
    }


def step_window(home: Path) -> tuple[float, float]:
    """When the backfill's first step started and its last step ended (the runs' event logs:
    Dagster's SQLite shards under ``history/runs``)."""
    import sqlite3

    first, last = float("inf"), 0.0
    for shard in (home / "history" / "runs").glob("*.db"):
        if shard.name == "index.db":
            continue
        con = sqlite3.connect(f"file:{shard}?mode=ro", uri=True)
        try:
            rows = con.execute(
                "select dagster_event_type, timestamp from event_logs where dagster_event_type in "
                "('STEP_START', 'STEP_SUCCESS', 'STEP_FAILURE')"
            ).fetchall()
        finally:
            con.close()
        for kind, stamp in rows:
            t = dt.datetime.fromisoformat(stamp).replace(tzinfo=dt.UTC).timestamp()
            first, last = (min(first, t), last) if kind == "STEP_START" else (first, max(last, t))
    return first, last


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
    parser.add_argument("--empty", type=int, nargs="*", default=[8, 40])
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
                f"busy cores {m['cores']:.2f} ({m['step_cores']:.2f} from the first step to the last), peak tree RSS {m['peak_mb']:.0f} MB (PSS then {m['pss_mb']:.0f} MB)",
                flush=True,
            )
            figures.update(
                {
                    f"{label}_cpu_s": m["cpu_s"],
                    f"{label}_busy_cores": m["cores"],
                    f"{label}_step_cores": m["step_cores"],
                    f"{label}_peak_mb": m["peak_mb"],
                    f"{label}_pss_at_peak_mb": m["pss_mb"],
                }
            )
        cores = os.cpu_count() or 1

        def empty(days: int, per_run: int) -> float:
            root = Path(tmp) / f"empty{days}x{per_run}"
            landing = root / "landing"
            (landing / "oai").mkdir(parents=True)  # a landing zone with no records: overhead only
            first = dt.date(2024, 6, 1)
            last = first + dt.timedelta(days=days - 1)
            m = backfill(landing, first.isoformat(), last.isoformat(), root, per_run)
            runs = -(-days // per_run)
            print(
                f"empty {days} days in {runs} runs: CPU {m['cpu_s']:.1f}s, wall {m['wall_s']:.1f}s",
                flush=True,
            )
            return m["cpu_s"]

        if len(args.empty) >= 2:
            lo, hi = min(args.empty), max(args.empty)
            same_runs = {d: empty(d, -(-d // cores)) for d in (lo, hi)}  # `cores` runs each
            per_partition = (same_runs[hi] - same_runs[lo]) / (hi - lo)
            one_a_day = empty(lo, 1)
            startup = (one_a_day - same_runs[lo]) / (lo - min(cores, lo))
            from corpus_assets.partitions import days_per_run

            per_run = int(os.environ.get("CORPUS_DAYS_PER_RUN") or days_per_run())
            figures.update(
                per_partition_cpu_s=per_partition,
                run_startup_cpu_s=startup,
                overhead_cpu_s_per_day=per_partition + startup / per_run,
            )
    result(cores=os.cpu_count() or 1, **figures)


if __name__ == "__main__":
    main()
