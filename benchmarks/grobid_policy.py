"""PDFs sent to Grobid per day under each Grobid policy (``CORPUS_GROBID``, ``CORPUS_GROBID_SAMPLE``).

    python benchmarks/grobid_policy.py [LANDING_DIR] [--records 1000] [--sample 0.05]

Builds every day of LANDING_DIR (copied to a temporary directory first: the landing zone is
never written), or of a generated ``--full-text`` day of ``--records`` papers (seed 7), with the
``corpus_daily`` job and no Grobid, then runs ``grobid_tei`` on each day under each policy
(``all``, ``fallback``, ``fallback`` with ``--sample``) and counts, per policy: the PDFs that
passed the filters, those whose TEI costs no Grobid time (cached, or in ``landing/tei``), the
PDFs the policy sends to Grobid (``needs_grobid``: with no Grobid running they are ``pending``),
the PDFs it skips, and why it sends the others. The engine-hours of all of arXiv under each
policy follow from the share sent: 2.4M PDFs x ``--seconds-per-pdf`` (Grobid's own rate,
benchmarks/grobid_client.py; ~1.5 s per PDF per engine) x the share of PDFs the policy sends.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from _common import REPO, result

warnings.filterwarnings("ignore", module=r"dagster\.")
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
ARXIV_PDFS = 2_400_000


def build(landing: Path, home: Path) -> list[str]:
    """Every day of ``landing`` built by ``corpus_daily`` (no Grobid), in a child process."""
    code = f"""
import os, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, {str(REPO)!r})
from corpus.ingest.landing import LandingZone
days = sorted(LandingZone({str(landing)!r}).datestamps())
os.environ.update(CORPUS_HOME={str(home)!r}, CORPUS_LANDING={str(landing)!r}, CORPUS_START_DATE=min(days),
                  GROBID_URL="http://127.0.0.1:9", CORPUS_DEPLOYMENT="inprocess", CORPUS_GROBID="fallback")
import dagster as dg
from corpus_assets.definitions import defs
with dg.instance_for_test() as instance:
    job = defs.resolve_job_def("corpus_daily")
    for day in days:
        assert job.execute_in_process(instance=instance, partition_key=day, run_config={QUIET!r}).success, day
print(",".join(days))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(done.stdout[-2000:] + done.stderr[-3000:])
    return done.stdout.strip().splitlines()[-1].split(",")


def policy_counts(home: Path, landing: Path, days: list[str], mode: str, sample: float) -> dict:
    from corpus.parse.days import grobid_tei_day

    status: Counter = Counter()
    wanted: Counter = Counter()
    per_day = []
    for day in days:
        s = grobid_tei_day(home, landing, day, None, policy={"mode": mode, "sample": sample})
        status.update(s["status"])
        wanted.update(s["wanted"])
        per_day.append(s["needs_grobid"])
    pdfs = sum(status.values())
    return {
        "pdfs": pdfs,
        "cached": status.get("cached", 0),
        "needs_grobid": sum(per_day),
        "skipped": status.get("skipped", 0),
        "per_day": per_day,
        "wanted": dict(wanted),
        # share of the PDFs that passed the filters that cost Grobid time, cache aside
        "share": sum(wanted.values()) and (sum(wanted.values()) - wanted.get("latex_parsed", 0)) / pdfs,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("landing", nargs="?", type=Path)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--sample", type=float, default=0.05)
    parser.add_argument("--seconds-per-pdf", type=float, default=1.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        landing = Path(tmp) / "landing"
        if args.landing:
            shutil.copytree(args.landing, landing)
            label = str(args.landing)
        else:
            cmd = [
                sys.executable,
                "-m",
                "corpus.sample",
                "--out",
                str(landing),
                "--records",
                str(args.records),
            ]
            cmd += ["--days", "1", "--seed", "7", "--full-text"]
            subprocess.run(
                cmd, check=True, capture_output=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}
            )
            label = f"generated, {args.records} papers, seed 7"
        home = Path(tmp) / "data"
        days = build(landing, home)
        figures: dict[str, float | int] = {"days": len(days)}
        for mode, sample in (("all", 0.0), ("fallback", 0.0), ("fallback", args.sample)):
            c = policy_counts(home, landing, days, mode, sample)
            name = mode if not sample else f"{mode}+sample{sample:g}"
            hours = ARXIV_PDFS * c["share"] * args.seconds_per_pdf / 3600
            print(
                f"{label}: {name}: {c['pdfs']} PDFs passed over {len(days)} day(s); TEI cached {c['cached']}; "
                f"sent to Grobid {c['needs_grobid']} ({c['needs_grobid'] / len(days):.1f}/day, "
                f"max {max(c['per_day'])}), skipped {c['skipped']}; policy's reasons "
                f"{json.dumps(c['wanted'], sort_keys=True)}; 2.4M PDFs in these proportions, cache aside: "
                f"{100 * c['share']:.1f} % of PDFs = {hours:,.0f} engine-hours",
                flush=True,
            )
            key = name.replace("+", "_").replace(".", "")
            figures.update(
                {
                    f"{key}_sent": c["needs_grobid"],
                    f"{key}_sent_per_day": round(c["needs_grobid"] / len(days), 2),
                    f"{key}_skipped": c["skipped"],
                    f"{key}_share": round(c["share"], 4),
                    f"{key}_arxiv_engine_hours": round(hours),
                }
            )
    result(**figures)


if __name__ == "__main__":
    main()
