"""The cross-day job after one new day, against its full run, on a store of D days.

    python benchmarks/corpus_graph.py [--days 16 64] [--records-per-day 1000]
                                      [--keep DIR] [--code CHECKOUT ...] [--repeats 1]

For each D: a generated full-text landing zone of D + 1 days; the first D days backfilled as
users do (``python -m corpus_assets.backfill``); then the ``corpus_graph`` job (citation links,
citation graph, peS2o v1/v2, CiteWorth) run three times with ``dagster job execute`` in a fresh
process each: the full run over D days, a run with nothing new (the floor: Dagster's start-up
and the change checks), and after day D + 1 is backfilled, the new-day run. CPU seconds and peak
RSS are the whole process tree's (/proc samples). Targets: a new day's run <= 20 % of the full
run at 64 days (issue J); <= 10 CPU s at 128 days, and no growth from 64 days to 128 or 256
beyond the noise (issue V).

``--keep DIR`` backfills max(D) + 1 days once into DIR (kept between invocations: on 2 cores
256 days of 1,000 papers take hours) and builds each D's store from it: the daily partitions of
days 1..D linked (hard links; a daily partition depends on its own day only), a fresh Dagster
instance, then day D + 1 linked in for the new-day run. ``--code A B`` runs the cross-day job
of other checkouts (e.g. a ``git archive`` of the commit before a change) on the same stores,
interleaved, so that the load of the shared machine weighs on each alike. ``--new-day-repeats N``
(with ``--keep``) runs the new day N times on the same bytes: the cross-day state (every
non-daily folder of the store and the Dagster home) is copied after the nothing-new run and put
back before each new-day run, so before/after figures compare runs on one state, not stores
that differ by chance (the spread of the N runs is the noise to report). Each D's new day is
another day of the generator, with its own size: the run also reports the day's papers and its
CPU per paper above the nothing-new run.

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
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, TreeSampler, result
from backfill import backfill, generated, instance_home

START = dt.date(2024, 1, 1)


def release_config(root: Path, cutoff: str) -> Path:
    """Run config putting the peS2o cutoff after the generated days: with the default (2023-01-03)
    the releases would read none of them and cost nothing here."""
    path = root / "graph_job_config.json"
    release = {"config": {"cutoff": cutoff}}
    path.write_text(json.dumps({"ops": {"pes2o_v1": release, "pes2o_v2": release}}))
    return path


def graph_job(root: Path, landing: Path, code: Path = REPO, cutoff: str | None = None) -> dict:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CORPUS_") and k != "PYTHONPATH"},
        "CORPUS_HOME": str(root / "data"),
        "CORPUS_LANDING": str(landing),
        "DAGSTER_HOME": str(root / "dagster_home"),
        "PYTHONPATH": str(code),
    }
    cmd = [sys.executable, "-W", "ignore", "-m", "dagster", "job", "execute"]
    cmd += ["-m", "corpus_assets.definitions", "-j", "corpus_graph"]
    if cutoff:
        cmd += ["-c", str(release_config(root, cutoff))]
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=code, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    with TreeSampler(proc.pid) as tree:
        out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"corpus_graph failed ({proc.returncode}):\n{out[-3000:]}")
    return {"wall_s": time.perf_counter() - started, "cpu_s": tree.cpu_s, "peak_mb": tree.peak_rss_mb}


def kept_store(keep: Path, days: int, per_day: int, landing_days: int) -> Path:
    """``keep`` with a landing zone of ``landing_days`` generated days (made once) whose first
    ``days`` are backfilled (the days not yet backfilled there are added)."""
    landing, made = keep / "landing", keep / f"landing-{landing_days}x{per_day}"
    if not made.exists():
        generated(keep, landing_days, per_day, START)
        made.write_text("ok\n")
    mark = keep / "backfilled"
    have = int(mark.read_text()) if mark.exists() else 0
    if have < days:
        first, last = START + dt.timedelta(days=have), START + dt.timedelta(days=days - 1)
        backfill(landing, first.isoformat(), last.isoformat(), keep)
        mark.write_text(f"{days}\n")
    return landing


def link_days(source: Path, target: Path, days: list[str]) -> None:
    """Hard-link the daily partitions of ``days`` from data root ``source`` into ``target``."""
    for asset in sorted(p for p in source.iterdir() if p.is_dir()):
        if not any(asset.glob("date=*")):
            continue
        for day in days:
            part = asset / f"date={day}"
            if part.is_dir() and not (target / asset.name / part.name).exists():
                shutil.copytree(part, target / asset.name / part.name, copy_function=os.link)


def _cross_day(root: Path, keep: Path) -> list[Path]:
    """What the cross-day job writes: the Dagster home and the store's folders and files but the
    daily assets' (the kept store's folders holding only daily partitions, linked from it)."""

    def daily(p: Path) -> bool:
        return (keep / "data" / p.name).is_dir() and all(c.name.startswith("date=") for c in p.iterdir())

    return [*(p for p in (root / "data").iterdir() if not (p.is_dir() and daily(p))), root / "dagster_home"]


def save_state(root: Path, keep: Path, snap: Path) -> None:
    for path in _cross_day(root, keep):
        target = snap / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, target, symlinks=True)
        else:
            shutil.copy2(path, target)


def restore_state(root: Path, keep: Path, snap: Path, new_day: str) -> None:
    """``root`` as :func:`save_state` found it: its cross-day state copied back, the new day's
    daily partitions unlinked."""
    for path in _cross_day(root, keep):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    for saved in [*(snap / "data").iterdir(), snap / "dagster_home"]:
        target = root / saved.relative_to(snap)
        if saved.is_dir():
            shutil.copytree(saved, target, symlinks=True)
        else:
            shutil.copy2(saved, target)
    for asset in (root / "data").iterdir():
        if (asset / f"date={new_day}").is_dir():
            shutil.rmtree(asset / f"date={new_day}")


def day_papers(root: Path, day: str) -> int:
    """Papers the new day delivers. The generator's days differ in size (days 17 / 65 / 129 / 257
    of the 1,000-a-day store: 1,233 / 933 / 919 / 1,195), so a new day's cost is also given per
    paper above the nothing-new run, which compares stores of different D."""
    import polars as pl

    files = sorted((root / "data" / "papers" / f"date={day}").glob("*.parquet"))
    return int(pl.scan_parquet(files).select(pl.len()).collect().item()) if files else 0


def measure(
    days: int, per_day: int, tmp: Path, keep: Path | None, codes: list[Path], new_day_repeats: int = 1
) -> dict[Path, dict]:
    """The three runs (full, nothing new, new day) at ``days`` for each checkout in ``codes``;
    ``new``: the first new-day run, ``new_runs``: all ``new_day_repeats`` of them."""
    names = [(START + dt.timedelta(days=i)).isoformat() for i in range(days + 1)]
    out: dict[Path, dict] = {}
    for code in codes:
        root = tmp / f"d{days}-{len(out)}"
        if keep is None:
            landing = generated(root, days + 1, per_day, START)
            backfill(landing, names[0], names[-2], root)
        else:
            landing = keep / "landing"
            instance_home(root)
            link_days(keep / "data", root / "data", names[:-1])
        cutoff = (START + dt.timedelta(days=days + 1)).isoformat()  # every day read by the releases
        full = graph_job(root, landing, code, cutoff)
        idle = graph_job(root, landing, code, cutoff)
        snap = tmp / f"snap-d{days}-{len(out)}"
        if new_day_repeats > 1:
            assert keep is not None  # main() refuses repeats without --keep
            save_state(root, keep, snap)
        runs = []
        for rep in range(new_day_repeats):
            if rep:
                restore_state(root, keep, snap, names[-1])  # type: ignore[arg-type]
            if keep is None:
                backfill(landing, names[-1], names[-1], root)
            else:
                link_days(keep / "data", root / "data", names[-1:])
            runs.append(graph_job(root, landing, code, cutoff))
        out[code] = {
            "full": full,
            "idle": idle,
            "new": runs[0],
            "new_runs": runs,
            "papers": day_papers(root, names[-1]),
        }
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(snap, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--records-per-day", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="build the daily store once here and reuse it")
    parser.add_argument("--code", type=Path, nargs="+", default=[REPO], help="checkouts to compare")
    parser.add_argument("--landing-days", type=int, help="days generated in --keep (default: max D + 1)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--new-day-repeats", type=int, default=1, help="new-day runs on one saved state (--keep)"
    )
    args = parser.parse_args()
    if args.new_day_repeats > 1 and args.keep is None:
        parser.error("--new-day-repeats needs --keep (the state is put back around the kept daily store)")
    codes = [c.resolve() for c in args.code]
    keep = args.keep.resolve() if args.keep else None
    if keep is not None:
        kept_store(keep, max(args.days) + 1, args.records_per_day, args.landing_days or max(args.days) + 1)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for days in args.days:
            for rep in range(args.repeats):
                runs = measure(days, args.records_per_day, Path(tmp), keep, codes, args.new_day_repeats)
                for i, (code, r) in enumerate(runs.items()):
                    full, idle, inc = r["full"], r["idle"], r["new"]
                    share = inc["cpu_s"] / full["cpu_s"]
                    label = f"[{code.name}] " if len(codes) > 1 else ""
                    print(
                        f"{label}{days} days x {args.records_per_day}: full {full['cpu_s']:.1f} CPU s "
                        f"(peak {full['peak_mb']:.0f} MB), nothing new {idle['cpu_s']:.1f} s, one new day "
                        f"{inc['cpu_s']:.1f} s (peak {inc['peak_mb']:.0f} MB) = {100 * share:.1f} % of the full run",
                        flush=True,
                    )
                    tag = f"c{i}_" if len(codes) > 1 else ""
                    rep_tag = f"_r{rep}" if args.repeats > 1 else ""
                    figures.update(
                        {
                            f"{tag}d{days}{rep_tag}_full_cpu_s": round(full["cpu_s"], 2),
                            f"{tag}d{days}{rep_tag}_idle_cpu_s": round(idle["cpu_s"], 2),
                            f"{tag}d{days}{rep_tag}_new_day_cpu_s": round(inc["cpu_s"], 2),
                            f"{tag}d{days}{rep_tag}_new_day_share": round(share, 4),
                            f"{tag}d{days}{rep_tag}_peak_mb": round(max(full["peak_mb"], inc["peak_mb"]), 1),
                        }
                    )
                    cpu = sorted(x["cpu_s"] for x in r["new_runs"])
                    above = (cpu[len(cpu) // 2] - idle["cpu_s"]) / max(r["papers"], 1)
                    print(f"{label}{days} days: the new day has {r['papers']} papers, "
                          f"{1000 * above:.1f} ms a paper above the nothing-new run", flush=True)  # fmt: skip
                    figures[f"{tag}d{days}{rep_tag}_new_day_papers"] = r["papers"]
                    figures[f"{tag}d{days}{rep_tag}_new_day_ms_per_paper"] = round(1000 * above, 2)
                    if len(r["new_runs"]) > 1:
                        print(f"{label}{days} days: {len(cpu)} new-day runs on one state: "
                              f"{', '.join(f'{c:.2f}' for c in cpu)} CPU s", flush=True)  # fmt: skip
                        figures.update(
                            {
                                f"{tag}d{days}{rep_tag}_new_day_cpu_s_min": round(cpu[0], 2),
                                f"{tag}d{days}{rep_tag}_new_day_cpu_s_median": round(cpu[len(cpu) // 2], 2),
                                f"{tag}d{days}{rep_tag}_new_day_cpu_s_max": round(cpu[-1], 2),
                            }
                        )
    result(**figures)


if __name__ == "__main__":
    main()
