"""A day's per-paper stages over the process pool: CPU seconds and peak memory of each.

    python benchmarks/day_stages.py [LANDING_DIR] [--records 1000] [--workers 2] [--repeats 3] [--repo PATH]

Builds one day (a generated ``--full-text`` landing zone of ``--records`` papers, or the
busiest day of LANDING_DIR) with the ``corpus_daily`` job, then runs each stage that spreads
its papers over processes (:func:`corpus.parallel.map_papers`: PDF probing, e-print
unpacking, LaTeX and TEI parsing, peS2o signals, CiteWorth paragraphs) again on that day with
``--workers`` processes, each in a fresh process, ``--repeats`` times. Per stage: CPU seconds
of the whole tree (the stage's process and every pool worker, from the kernel's accounting of
reaped children, so no short-lived worker is missed), the best of the repeats; and the
peak RSS of the tree. ``--repo A B`` runs the stages from other checkouts' ``corpus`` on the
same store, their runs interleaved (A, B, A, B ...) so that other work on the machine weighs on
both alike: to compare two versions of a stage or of the pool on the same day.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from _common import REPO, TreeSampler, result

warnings.filterwarnings("ignore", module=r"dagster\.")
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}

CHILD = """
import sys, json
sys.path.insert(0, {repo!r})
from corpus_assets.worker import STAGES, StageParams
import logging
params = StageParams(home={home!r}, landing={landing!r}, workers={workers})
{call}
"""
CALLS = {
    "arxiv_pdfs": "STAGES['arxiv_pdfs_day'](params, {day!r}, logging.getLogger())",
    "arxiv_sources": "STAGES['arxiv_sources_day'](params, {day!r}, logging.getLogger())",
    "latex_parses": "STAGES['latex_parses_day'](params, {day!r}, logging.getLogger())",
    "pdf_parses": "STAGES['pdf_parses_day'](params, {day!r}, logging.getLogger())",
    "pes2o": "from corpus.release.pes2o_table import pes2o_day; pes2o_day({home!r}, {day!r}, workers={workers})",
    "citeworth_paragraphs": (
        "from corpus.release.citeworth import citeworth_day; citeworth_day({home!r}, {day!r}, workers={workers})"
    ),
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build_day(landing: Path, home: Path, records: int) -> str:
    """The store of one day, built by the daily job; returns the day."""
    from corpus.ingest.landing import LandingZone

    days = LandingZone(landing).datestamps()
    day = max(days, key=lambda d: days[d])
    os.environ.update(
        CORPUS_HOME=str(home),
        CORPUS_LANDING=str(landing.resolve()),
        CORPUS_START_DATE=min(days),
        GROBID_URL="http://127.0.0.1:9",  # nothing there: cached TEI only
    )
    import dagster as dg

    from corpus_assets.definitions import defs

    with dg.instance_for_test() as instance:
        job = defs.resolve_job_def("corpus_daily")
        res = job.execute_in_process(instance=instance, partition_key=day, run_config=QUIET)
        assert res.success, "the daily job failed"
    return day


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("landing", nargs="?", type=Path)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--repo", type=Path, nargs="+", default=[REPO])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="day-stages-") as tmp:
        landing = args.landing
        if landing is None:
            from corpus.sample.landing_zone import generate_landing

            landing = Path(tmp) / "landing"
            generate_landing(
                landing, n_records=args.records, days=1, start="2024-03-04", seed=11, full_text=True
            )
        home = Path(tmp) / "data"
        day = build_day(landing, home, args.records)
        from corpus.store import Store

        papers = Store(home).read_partition("papers", day).height
        paths = {"home": str(home), "landing": str(landing.resolve())}
        repos = [str(r.resolve()) for r in args.repo]
        figures: dict[str, dict[str, tuple[float, float]]] = {r: {} for r in repos}
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        for stage, call in CALLS.items():
            runs: dict[str, list[tuple[float, float]]] = {r: [] for r in repos}
            for _ in range(args.repeats):
                for repo in repos:
                    code = CHILD.format(
                        repo=repo,
                        **paths,
                        workers=args.workers,
                        call=call.format(**paths, day=day, workers=args.workers),
                    )
                    before = children_cpu()
                    child = subprocess.Popen([sys.executable, "-c", code], env=env)
                    with TreeSampler(child.pid) as tree:
                        rc = child.wait()
                    if rc != 0:
                        raise SystemExit(f"{stage} failed in {repo} (exit {rc})")
                    runs[repo].append((children_cpu() - before, tree.peak_rss_mb))
            for repo in repos:
                cpu, rss = min(c for c, _ in runs[repo]), max(r for _, r in runs[repo])
                figures[repo][stage] = (cpu, rss)
                print(
                    f"{stage:22s} {cpu:6.2f} CPU s (best of {args.repeats})  peak tree RSS {rss:6.0f} MB  {repo}",
                    flush=True,
                )
    print(json.dumps({"day": day, "papers": papers, "workers": args.workers}))
    for repo in repos:
        stages = figures[repo]
        result(
            papers=papers,
            workers=args.workers,
            total_cpu_s=round(sum(c for c, _ in stages.values()), 2),
            **{f"{s}_cpu_s": round(c, 2) for s, (c, _) in stages.items()},
            peak_tree_mb=round(max(r for _, r in stages.values()), 1),
            repo=Path(repo).name,
        )


if __name__ == "__main__":
    main()
