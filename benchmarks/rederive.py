"""What re-deriving costs after a code change, against a full backfill, on a generated store.

    python benchmarks/rederive.py [--days 16] [--records-per-day 1000] [LANDING]

A generated full-text landing zone (or LANDING) of D days is backfilled (``make backfill``'s
command): (a). Then, from copies of the project whose code changed as a user's next checkout
would, ``python -m corpus_assets.rederive`` (``make rederive``'s command):

* (b) the LaTeX parser's version bumped with a change to every LaTeX paper's output (its first
  paragraph gets a word more): latex_parses re-derives every day, then everything that reads
  it (papers, fulltext_ids, bib_entries, pes2o, CiteWorth);
* (c) the LaTeX parser's version bumped again with no change to any output: latex_parses
  re-derives every day and nothing else runs;
* (d) bib_entries' version bumped, no output change: the cheapest stage alone.

CPU seconds and peak RSS are the whole process tree's (/proc samples: the command, its daemons
and code server, every run and Pipes worker). Goals (issue R): (b) at most the LaTeX-dependent
stages' share of (a) plus Dagster's per-run floor; (c) at most 10 % of (a). The share is taken
from the steps' durations in (a)'s runs. Ends with a RESULT line.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import REPO, TreeSampler, result
from backfill import backfill, generated, instance_home

LATEX_READERS = {
    "latex_parses",
    "papers",
    "fulltext_ids",
    "bib_entries",
    "pes2o",
    "citeworth_paragraphs",
    "citeworth_candidates",
}
CHANGE_EVERY_PAPER = (
    '    return parse_row(paper_id, "latex", doc.model_dump(), warnings=warnings)',
    "    dumped = doc.model_dump()\n"
    '    if dumped["body_text"]:\n'
    '        dumped["body_text"][0]["text"] += " Revised."\n'
    '    return parse_row(paper_id, "latex", dumped, warnings=warnings)',
)


def project_copy(root: Path, name: str, bumps: list[tuple[str, str, int]], edit=None) -> Path:
    """The project's code with version constants moved (module, constant, steps) and one edit."""
    copy = root / name
    for part in ("corpus", "corpus_assets", "resources", "sensors"):
        shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("workspace.yaml", "pyproject.toml"):
        shutil.copy(REPO / part, copy / part)
    for module, name_, steps in bumps:
        path = copy / "corpus" / module
        text = path.read_text()
        found = re.search(rf'^{name_} = "([^"]+)/(\d+)"', text, re.M)
        path.write_text(
            text.replace(found.group(0), f'{name_} = "{found.group(1)}/{int(found.group(2)) + steps}"')
        )
    if edit is not None:
        path = copy / "corpus" / "parse" / "days.py"
        path.write_text(path.read_text().replace(*edit, 1))
    return copy


def rederive(root: Path, landing: Path, code: Path) -> dict:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CORPUS_")},
        "CORPUS_HOME": str(root / "data"),
        "CORPUS_LANDING": str(landing),
        "DAGSTER_HOME": str(instance_home(root)),
        "GROBID_URL": "http://127.0.0.1:9",
        "PYTHONPATH": str(code),
    }
    before = materialisations(root)
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-W", "ignore", "-m", "corpus_assets.rederive"],
        cwd=code,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    with TreeSampler(proc.pid) as tree:
        out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"rederive failed ({proc.returncode}):\n{out[-3000:]}")
    added = materialisations(root) - before
    rounds = next((int(m) for m in re.findall(r"done, (\d+) round", out)), 0)
    return {
        "wall_s": time.perf_counter() - started,
        "cpu_s": tree.cpu_s,
        "peak_mb": tree.peak_rss_mb,
        "rounds": rounds,
        "rebuilt": dict(sorted(Counter(a for a, _ in added.elements()).items())),
    }


def _event_rows(root: Path, sql: str) -> list[tuple]:
    rows: list[tuple] = []
    for shard in (instance_home(root) / "history" / "runs").glob("*.db"):
        if shard.name == "index.db":
            continue
        con = sqlite3.connect(f"file:{shard}?mode=ro", uri=True)
        try:
            rows += con.execute(sql).fetchall()
        finally:
            con.close()
    return rows


def materialisations(root: Path) -> Counter:
    """(asset, partition) materialisations so far (the runs' event logs)."""
    rows = _event_rows(
        root, "select asset_key, partition from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION'"
    )
    return Counter((key.strip('["]'), part) for key, part in rows if part)


def step_shares(root: Path) -> dict[str, float]:
    """Each daily asset's share of the steps' time in the runs so far (a step per asset, or
    per multi-asset: its share goes to the assets it writes)."""
    times: dict[str, list[float]] = {}
    rows = _event_rows(
        root,
        "select step_key, dagster_event_type, timestamp from event_logs where dagster_event_type in "
        "('STEP_START', 'STEP_SUCCESS')",
    )
    for key, kind, stamp in rows:
        t = dt.datetime.fromisoformat(stamp).timestamp()
        times.setdefault(key, []).append(t if kind == "STEP_SUCCESS" else -t)
    spent = {k: sum(v) for k, v in times.items()}
    total = sum(spent.values()) or 1.0
    return {k: s / total for k, s in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("landing", nargs="?", type=Path)
    parser.add_argument("--days", type=int, default=16)
    parser.add_argument("--records-per-day", type=int, default=1000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-rederive-"))
    try:
        start = dt.date(2024, 3, 1)
        landing = args.landing or generated(root, args.days, args.records_per_day, start)
        days = sorted(p.stem[:10] for p in (landing / "oai").glob("*.xml"))
        print(f"landing zone: {len(days)} days {days[0]}..{days[-1]}", flush=True)
        full = backfill(landing, days[0], days[-1], root)
        shares = step_shares(root)
        latex_share = sum(s for k, s in shares.items() if k.split(".")[0] in LATEX_READERS)
        print(f"(a) full backfill: {full['cpu_s']:.1f} CPU s, {full['wall_s']:.0f} s wall, "
              f"{full['peak_mb']:.0f} MB peak; LaTeX-dependent steps' share {100 * latex_share:.1f} %", flush=True)  # fmt: skip
        cases = {
            "b": project_copy(root, "code_b", [("parse/latex/parser.py", "PARSER_VERSION", 1)], CHANGE_EVERY_PAPER),
            "c": project_copy(root, "code_c", [("parse/latex/parser.py", "PARSER_VERSION", 2)], CHANGE_EVERY_PAPER),
            "d": project_copy(
                root, "code_d", [("parse/latex/parser.py", "PARSER_VERSION", 2), ("papers/bibliography.py", "BIB_ENTRIES_VERSION", 1)],
                CHANGE_EVERY_PAPER,
            ),
        }  # fmt: skip
        found = {}
        for case, code in cases.items():
            found[case] = rederive(root, landing, code)
            f = found[case]
            print(f"({case}) rederive: {f['cpu_s']:.1f} CPU s ({100 * f['cpu_s'] / full['cpu_s']:.1f} % of (a)), "
                  f"{f['wall_s']:.0f} s wall, {f['peak_mb']:.0f} MB peak, {f['rounds']} round(s); rebuilt {f['rebuilt']}",
                  flush=True)  # fmt: skip
        result(
            days=len(days),
            records_per_day=args.records_per_day,
            full_cpu_s=round(full["cpu_s"], 1),
            latex_share_pct=round(100 * latex_share, 1),
            latex_bump_cpu_s=round(found["b"]["cpu_s"], 1),
            latex_bump_pct=round(100 * found["b"]["cpu_s"] / full["cpu_s"], 1),
            no_change_cpu_s=round(found["c"]["cpu_s"], 1),
            no_change_pct=round(100 * found["c"]["cpu_s"] / full["cpu_s"], 1),
            cheap_no_change_cpu_s=round(found["d"]["cpu_s"], 1),
            peak_mb=round(max(full["peak_mb"], *(f["peak_mb"] for f in found.values())), 0),
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
