"""citation_links over a growing corpus: full runs and new days at several sizes; CPU s and peak RSS.

    python benchmarks/citation_links.py [--sizes 20,60,100] [--papers-per-day 1000]
        [--entries-per-paper 40] [--daily 3] [--shards 1] [--redelivered 0.3] [--future 0.02]
        [--workdir DIR]

Generates daily ``papers`` and ``bib_entries`` partitions (titles as in benchmarks/linking.py:
Zipf-drawn words). Each day has ``--papers-per-day`` papers, ``--redelivered`` of them new versions
of earlier papers (as on real arXiv days: 70 % first delivered in the last 30 days, the rest any
time before; 10 % of them with a new title, kept re-drawn). Each paper has Poisson
``--entries-per-paper`` entries; an entry cites a paper delivered up to that day, or with
probability ``--future`` one delivered later (a paper not on arXiv yet: what makes old entries link
to a new day's papers); 70 % copy the cited title with bibliography noise, the rest are other
titles; 15 % also carry the arXiv id.

The corpus grows day by day. At each size S of ``--sizes``: a full run over the S days (its own
CORPUS_HOME whose inputs are symbolic links to the generated ones), then ``--daily`` new days linked
incrementally on top of it; the corpus linked day by day since the first size (the index as it
grows in production: a segment a day, merged in tiers) links the same new days, and its links
are checked equal to the full run's. Every update runs in a fresh child process: CPU seconds and
peak RSS are that process's (the whole tree: it starts no other). The RESULT line has the full
run's CPU s and the mean and max CPU s of a new day at each size.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from _common import in_child, result
from linking import generate_titles, perturb

from corpus.papers.bibliography import bib_schema
from corpus.papers.metadata import papers_frame
from corpus.store import Store

START = dt.date(2020, 1, 1)


def _day(i: int) -> str:
    return str(START + dt.timedelta(days=i))


class Corpus:
    """Generated days, written one at a time."""

    def __init__(self, home: Path, args, total_days: int, seed: int = 0):
        self.store = Store(home)
        self.args = args
        self.rng = np.random.default_rng(seed)
        k = args.papers_per_day
        n = total_days * k  # upper bound on distinct papers
        self.ids = [f"{2001 + i // 99999}.{i % 99999 + 1:05d}" for i in range(n)]
        self.titles = generate_titles(n, self.rng)
        self.first_day: list[int] = []  # per delivered paper index, its first day
        self.days = 0
        self.fresh = 0  # papers delivered so far (indices 0..fresh-1)
        self.entries = 0

    def add_day(self) -> int:
        a, rng, d = self.args, self.rng, self.days
        k = a.papers_per_day
        n_old = int(k * a.redelivered) if self.fresh else 0
        new = list(range(self.fresh, self.fresh + k - n_old))
        old: list[int] = []
        if n_old:
            recent = [i for i in range(self.fresh) if self.first_day[i] >= d - 30]
            n_recent = min(int(n_old * 0.7), len(recent))
            old = list(rng.choice(recent, size=n_recent, replace=False)) if n_recent else []
            rest = np.setdiff1d(np.arange(self.fresh), old)
            old += list(rng.choice(rest, size=min(n_old - n_recent, len(rest)), replace=False))
        for i in old[: len(old) // 10]:  # a new version with a new title
            self.titles[i] = generate_titles(1, rng)[0]
        self.first_day += [d] * len(new)
        self.fresh += len(new)
        papers = new + [int(i) for i in old]
        self.entries += self._write(_day(d), papers)
        self.days += 1
        return len(papers)

    def _write(self, day: str, papers: list[int]) -> int:
        a, rng = self.args, self.rng
        ids = [self.ids[i] for i in papers]
        titles = [self.titles[i] for i in papers]
        kept = rng.random(len(papers)) > 0.1
        norm = pl.Series(titles).str.to_lowercase().str.replace_all(r"[^\p{L}\p{N}]+", "").to_list()
        rows = [{"id": i, "title": t, "norm_title": nt, "kept": bool(k), "drop_reason": None if k else "not_english"}
                for i, t, nt, k in zip(ids, titles, norm, kept, strict=True)]  # fmt: skip
        self.store.write_partition("papers", day, papers_frame(rows))
        counts = rng.poisson(a.entries_per_paper, size=len(papers))
        citing = np.repeat(np.arange(len(papers)), counts)
        m = len(citing)
        future = rng.random(m) < a.future
        total = len(self.ids)
        target = np.where(
            future & (self.fresh < total),
            rng.integers(min(self.fresh, total - 1), total, size=m),
            rng.integers(0, max(self.fresh, 1), size=m),
        )
        copy = rng.random(m) < 0.7
        other = iter(generate_titles(int((~copy).sum()), rng))
        e_titles = [
            perturb(self.titles[t], rng) if c else next(other) for t, c in zip(target, copy, strict=True)
        ]
        ref = np.concatenate([np.arange(c) for c in counts]) if m else np.zeros(0, int)
        with_id = rng.random(m) < 0.15
        entries = pl.DataFrame(
            {
                "entry_id": [f"{ids[c]}#b{r}" for c, r in zip(citing, ref, strict=True)],
                "citing_id": [ids[c] for c in citing],
                "title": e_titles,
                "arxiv_id": [self.ids[t] if w else None for t, w in zip(target, with_id, strict=True)],
            }
        ).with_columns(
            pl.col("title").str.to_lowercase().str.replace_all(r"[^\p{L}\p{N}]+", "").alias("norm_title")
        )
        schema = bib_schema()
        entries = entries.with_columns(
            [pl.lit(None, t).alias(c) for c, t in schema.items() if c not in entries.columns]
        ).select(list(schema))
        self.store.write_partition("bib_entries", day, entries.cast(schema))
        return m


def _update(home: str, shards: int, queue) -> None:
    from corpus.graph.citation_links import update_links

    c0, w0 = time.process_time(), time.perf_counter()
    summary = update_links(home, n_shards=shards)
    queue.put(
        {
            "cpu": time.process_time() - c0,
            "wall": time.perf_counter() - w0,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            **{k: v for k, v in summary.items() if k != "via"},
        }
    )


def run_update(home: Path, shards: int) -> dict:
    """update_links in a fresh process: its CPU s, wall s, peak RSS and summary."""
    return in_child(_update, str(home), shards)


def _mirror(src: Path, dst: Path) -> None:
    """A CORPUS_HOME whose inputs are the generated ones (symbolic links), with its own links."""
    dst.mkdir(parents=True)
    for name in ("papers", "bib_entries"):
        os.symlink(src / name, dst / name)


def _same_links(a: Path, b: Path) -> bool:
    from corpus.graph.citation_links import read_links

    return read_links(Store(a)).equals(read_links(Store(b)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="20,60,100")
    ap.add_argument("--papers-per-day", type=int, default=1000)
    ap.add_argument("--entries-per-paper", type=float, default=40.0)
    ap.add_argument("--daily", type=int, default=3, help="new days measured at each size")
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--redelivered", type=float, default=0.3)
    ap.add_argument("--future", type=float, default=0.02)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        inputs, grown = Path(tmp) / "inputs", Path(tmp) / "grown"
        corpus = Corpus(inputs, args, sizes[-1] + args.daily + 1)
        _mirror(inputs, grown)
        gen_s = 0.0
        first = True
        for size in sizes:
            t0 = time.perf_counter()
            grown_cpu = []
            while corpus.days < size:
                corpus.add_day()
                if not first:  # the day-by-day corpus links every day as it comes
                    grown_cpu.append(run_update(grown, args.shards)["cpu"])
            gen_s += time.perf_counter() - t0
            home = Path(tmp) / f"full-{size}"
            _mirror(inputs, home)
            full = run_update(home, args.shards)
            if first:
                full_grown = run_update(grown, args.shards)
                assert full_grown["mode"] == "full"
                first = False
            print(f"{size} days, {corpus.fresh} papers, {corpus.entries} entries: full {full['links']} links "
                  f"{full['cpu']:.1f} CPU s, {full['wall']:.1f} s wall, peak {full['peak_mb']:.0f} MB"
                  + (f"; the {len(grown_cpu)} days before linked one by one: mean {np.mean(grown_cpu):.2f} "
                     f"max {max(grown_cpu):.2f} CPU s" if grown_cpu else ""), flush=True)  # fmt: skip
            daily, daily_grown, peak = [], [], 0.0
            for _ in range(args.daily):
                n = corpus.add_day()
                inc = run_update(home, args.shards)
                grow = run_update(grown, args.shards)
                assert inc["mode"] == grow["mode"] == "incremental", (inc["mode"], grow["mode"])
                daily.append(inc["cpu"])
                daily_grown.append(grow["cpu"])
                peak = max(peak, inc["peak_mb"], grow["peak_mb"])
                print(f"  new day ({n} papers, {inc['new_entries']} entries; {inc['stale']} relinked, "
                      f"{inc['changed']} old links changed, {inc['days_rewritten']} day files rewritten): "
                      f"{inc['cpu']:.2f} CPU s ({inc['wall']:.2f} wall, peak {inc['peak_mb']:.0f} MB) after the full "
                      f"run, {grow['cpu']:.2f} CPU s (peak {grow['peak_mb']:.0f} MB) day by day", flush=True)  # fmt: skip
            assert _same_links(home, grown), "day-by-day links differ from the full run's"
            figures[f"full_cpu_s_{size}"] = full["cpu"]
            figures[f"full_peak_mb_{size}"] = full["peak_mb"]
            figures[f"day_cpu_s_{size}"] = float(np.mean(daily + daily_grown))
            figures[f"day_max_cpu_s_{size}"] = float(max(daily + daily_grown))
            figures[f"day_peak_mb_{size}"] = peak
            figures[f"day_share_{size}"] = float(np.mean(daily + daily_grown)) / full["cpu"]
            print(f"  -> a new day costs {figures[f'day_share_{size}']:.1%} of a full run's CPU", flush=True)
        print(f"generation {gen_s:.0f} s wall (with the day-by-day links)", file=sys.stderr)
    result(papers_per_day=args.papers_per_day, entries=corpus.entries, shards=args.shards, **figures)


if __name__ == "__main__":
    main()
