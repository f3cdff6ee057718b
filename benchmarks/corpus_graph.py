"""The cross-day job after one new day, against its full run, on a store of D days.

    python benchmarks/corpus_graph.py [--days 16 64] [--records-per-day 1000]

For each D: a generated full-text landing zone of D + 1 days; the first D days backfilled as
users do (``python -m corpus_assets.backfill``); then the ``corpus_graph`` job (citation links,
citation graph, peS2o v1/v2, CiteWorth) run three times with ``dagster job execute`` in a fresh
process each: the full run over D days, a run with nothing new (the floor: Dagster's start-up
and the change checks), and after day D + 1 is backfilled, the new-day run. CPU seconds and peak
RSS are the whole process tree's (/proc samples). Target (issue J): a new day's run <= 20 % of
the full run at 64 days.

Days are arXiv's size by default: 1,000 records (arXiv announces 1,000-1,500 a day; the issue's
citation_links benchmark is at the same scale, 100k papers over 100 days), 15 % of them
revisions of earlier papers, as the generator makes them. A revision moves its paper from the
day it was delivered on to the new day, so a new day also rewrites the links and edges of the
older days it takes papers from: at most one per revision, whatever D. The day size matters
for the share: a run's fixed cost (~1.7 CPU s: Dagster's start-up, the change checks) is ~3 %
of the full run over 64 days of 1,000 papers, ~17 % over 64 days of 150
(``--records-per-day 150``). ~11 minutes on 2 cores at the defaults, ~4 at 150 a day.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, TreeSampler, result
from backfill import backfill, generated


def graph_job(root: Path, landing: Path) -> dict:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CORPUS_")},
        "CORPUS_HOME": str(root / "data"),
        "CORPUS_LANDING": str(landing),
        "DAGSTER_HOME": str(root / "dagster_home"),
    }
    cmd = [sys.executable, "-W", "ignore", "-m", "dagster", "job", "execute"]
    cmd += ["-m", "corpus_assets.definitions", "-j", "corpus_graph"]
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    with TreeSampler(proc.pid) as tree:
        out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"corpus_graph failed ({proc.returncode}):\n{out[-3000:]}")
    return {"wall_s": time.perf_counter() - started, "cpu_s": tree.cpu_s, "peak_mb": tree.peak_rss_mb}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--records-per-day", type=int, default=1000)
    args = parser.parse_args()
    start = dt.date(2024, 1, 1)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for days in args.days:
            root = Path(tmp) / f"d{days}"
            landing = generated(root, days + 1, args.records_per_day, start)
            last = start + dt.timedelta(days=days - 1)
            backfill(landing, start.isoformat(), last.isoformat(), root)
            full = graph_job(root, landing)
            idle = graph_job(root, landing)
            new = (last + dt.timedelta(days=1)).isoformat()
            backfill(landing, new, new, root)
            inc = graph_job(root, landing)
            share = inc["cpu_s"] / full["cpu_s"]
            print(
                f"{days} days x {args.records_per_day}: full {full['cpu_s']:.1f} CPU s (peak {full['peak_mb']:.0f} MB), "
                f"nothing new {idle['cpu_s']:.1f} s, one new day {inc['cpu_s']:.1f} s "
                f"(peak {inc['peak_mb']:.0f} MB) = {100 * share:.1f} % of the full run",
                flush=True,
            )
            figures.update(
                {
                    f"d{days}_full_cpu_s": round(full["cpu_s"], 2),
                    f"d{days}_idle_cpu_s": round(idle["cpu_s"], 2),
                    f"d{days}_new_day_cpu_s": round(inc["cpu_s"], 2),
                    f"d{days}_new_day_share": round(share, 4),
                    f"d{days}_peak_mb": round(max(full["peak_mb"], inc["peak_mb"]), 1),
                }
            )
    result(**figures)


if __name__ == "__main__":
    main()
