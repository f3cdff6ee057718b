"""One day end to end: every daily asset on a 1,000-paper day (TEI cached, LaTeX, no network).

    python benchmarks/day_end_to_end.py [LANDING_DIR] [--records 1000]

Without a landing zone it generates one day with ``corpus.sample.landing_zone --full-text``
(PDFs, TEI for most of them, LaTeX e-prints), then runs the ``corpus_daily`` job
for that day in process (Pipes workers as subprocesses, as locally) and the
cross-day job after it. Target (DESIGN.md §6): <= 120 s on 2 cores for the day.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

from _common import TreeSampler, result

# Dagster's beta/preview notices (backfill_policy, Pipes) would bury the figures.
warnings.filterwarnings("ignore", module=r"dagster\.")

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("landing", nargs="?", type=Path)
    parser.add_argument("--records", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        landing = args.landing
        if landing is None:
            from corpus.sample.landing_zone import generate_landing

            landing = Path(tmp) / "landing"
            generate_landing(
                landing, n_records=args.records, days=1, start="2024-03-04", seed=11, full_text=True
            )
        from corpus.ingest.landing import LandingZone

        days = list(LandingZone(landing).datestamps())
        os.environ.update(
            CORPUS_HOME=str(Path(tmp) / "data"),
            CORPUS_LANDING=str(landing.resolve()),
            CORPUS_START_DATE=min(days),
            GROBID_URL="http://127.0.0.1:9",  # nothing there: cached TEI only, the rest pending
        )
        import dagster as dg

        from corpus_assets.definitions import defs

        day = max(days, key=lambda d: LandingZone(landing).datestamps()[d])
        with dg.instance_for_test() as instance:
            start = time.perf_counter()
            with TreeSampler(os.getpid()) as day_tree:  # this process, Pipes workers, pool workers
                daily = defs.resolve_job_def("corpus_daily").execute_in_process(
                    partition_key=day, instance=instance, run_config=QUIET, raise_on_error=False
                )
            day_s = time.perf_counter() - start
            start = time.perf_counter()
            with TreeSampler(os.getpid()) as cross_tree:
                cross = defs.resolve_job_def("corpus_graph").execute_in_process(
                    instance=instance, run_config=QUIET, raise_on_error=False
                )
            cross_s = time.perf_counter() - start
        from corpus.store import Store

        papers = Store(Path(tmp) / "data").read_partition("papers", day).height
        print(
            f"day {day}: {papers} papers, daily job {'ok' if daily.success else 'FAILED'} in {day_s:.1f}s; "
            f"cross-day job {'ok' if cross.success else 'FAILED'} in {cross_s:.1f}s",
            file=sys.stderr,
        )
        result(
            papers=papers,
            day_s=round(day_s, 1),
            day_cpu_s=round(day_tree.cpu_s, 1),
            day_busy_cores=round(day_tree.busy_cores(), 2),
            cross_day_s=round(cross_s, 1),
            cross_day_cpu_s=round(cross_tree.cpu_s, 1),
            ok=int(daily.success and cross.success),
            peak_tree_mb=round(max(day_tree.peak_rss_mb, cross_tree.peak_rss_mb), 1),
        )


if __name__ == "__main__":
    main()
