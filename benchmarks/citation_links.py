"""citation_links over many days: a full run, then one new day incrementally; entries/s and peak memory.

    python benchmarks/citation_links.py [--days 100] [--papers-per-day 1000] [--entries-per-paper 40]
                                        [--chunk-entries 1000000] [--redelivered 0.3]

Generates a store of ``papers`` and ``bib_entries`` partitions (titles as in
benchmarks/linking.py: Zipf-drawn words, entries that copy a paper's title with
bibliography noise 70 % of the time; 15 % of entries also carry the arXiv id),
then times ``corpus.citation_links.update_links``: a full run over every day,
then one new day in which ``--redelivered`` of the papers are new versions of
old ones (as on real arXiv days), linked incrementally. Memory is the point:
the linker works on at most ``--chunk-entries`` entries at a time, so peak RSS
should not grow with the number of days. CPU seconds are of this process.
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from _common import peak_mb, result
from linking import generate_titles, perturb

from corpus.bibliography import bib_schema
from corpus.citation_links import CHUNK_ENTRIES, update_links
from corpus.linking import normalize_titles
from corpus.metadata import papers_frame
from corpus.store import Store


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _write_day(store: Store, day: str, ids: list[str], titles: list[str], rng, all_ids, all_titles, epp):
    n = len(ids)
    kept = rng.random(n) > 0.1
    norm = normalize_titles(pl.Series(titles)).to_list()
    rows = [{"id": i, "title": t, "norm_title": nt, "kept": bool(k), "drop_reason": None if k else "not_english"}
            for i, t, nt, k in zip(ids, titles, norm, kept, strict=True)]  # fmt: skip
    store.write_partition("papers", day, papers_frame(rows))
    counts = rng.poisson(epp, size=n)
    citing = np.repeat(np.arange(n), counts)
    target = rng.integers(0, len(all_ids), size=len(citing))
    copy = rng.random(len(citing)) < 0.7
    fresh = iter(generate_titles(int((~copy).sum()), rng))
    e_titles = [perturb(all_titles[t], rng) if c else next(fresh) for t, c in zip(target, copy, strict=True)]
    ref = np.concatenate([np.arange(c) for c in counts]) if len(citing) else np.zeros(0, int)
    with_id = rng.random(len(citing)) < 0.15
    entries = pl.DataFrame(
        {
            "entry_id": [f"{ids[c]}#b{r}" for c, r in zip(citing, ref, strict=True)],
            "citing_id": [ids[c] for c in citing],
            "title": e_titles,
            "arxiv_id": [all_ids[t] if w else None for t, w in zip(target, with_id, strict=True)],
        }
    ).with_columns(normalize_titles(pl.col("title")).alias("norm_title"))
    schema = bib_schema()
    entries = entries.with_columns(
        [pl.lit(None, t).alias(c) for c, t in schema.items() if c not in entries.columns]
    ).select(list(schema))
    store.write_partition("bib_entries", day, entries.cast(schema))
    return len(citing)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=100)
    ap.add_argument("--papers-per-day", type=int, default=1000)
    ap.add_argument("--entries-per-paper", type=float, default=40.0)
    ap.add_argument("--chunk-entries", type=int, default=CHUNK_ENTRIES)
    ap.add_argument("--redelivered", type=float, default=0.3)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n_papers = args.days * args.papers_per_day
    all_ids = [f"{2001 + i // 99999}.{i % 99999 + 1:05d}" for i in range(n_papers + args.papers_per_day)]
    all_titles = generate_titles(len(all_ids), rng)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        store = Store(Path(tmp))
        start = dt.date(2020, 1, 1)
        t0 = time.perf_counter()
        entries = 0
        for d in range(args.days):
            lo = d * args.papers_per_day
            sl = slice(lo, lo + args.papers_per_day)
            entries += _write_day(store, str(start + dt.timedelta(days=d)), all_ids[sl], all_titles[sl], rng,
                                  all_ids[:n_papers], all_titles[:n_papers], args.entries_per_paper)  # fmt: skip
        gen_s = time.perf_counter() - t0
        print(f"generated {args.days} days, {n_papers} papers, {entries} entries in {gen_s:.0f} s;"
              f" RSS so far {_rss_mb():.0f} MB", flush=True)  # fmt: skip
        c0, w0 = time.process_time(), time.perf_counter()
        full = update_links(tmp, chunk_entries=args.chunk_entries)
        full_cpu, full_wall = time.process_time() - c0, time.perf_counter() - w0
        full_peak = _rss_mb()
        print(f"full: {full['links']} links in {full_wall:.0f} s wall, {full_cpu:.0f} CPU s, peak {full_peak:.0f} MB",
              flush=True)  # fmt: skip

        # one new day: fresh papers plus new versions of old ones (new titles for some)
        k = args.papers_per_day
        n_old = int(k * args.redelivered)
        old = rng.choice(n_papers, size=n_old, replace=False)
        ids = all_ids[n_papers : n_papers + k - n_old] + [all_ids[i] for i in old]
        titles = generate_titles(k - n_old, rng) + [perturb(str(all_ids[i]), rng) for i in old[: n_old // 5]]
        titles += generate_titles(n_old - n_old // 5, rng)
        day = str(start + dt.timedelta(days=args.days))
        new_entries = _write_day(store, day, ids, titles, rng, all_ids[:n_papers], all_titles[:n_papers],
                                 args.entries_per_paper)  # fmt: skip
        c0, w0 = time.process_time(), time.perf_counter()
        inc = update_links(tmp, chunk_entries=args.chunk_entries)
        inc_cpu, inc_wall = time.process_time() - c0, time.perf_counter() - w0
        assert inc["mode"] == "incremental", inc["mode"]
        print(f"incremental day ({new_entries} entries, {n_old} re-delivered papers): {inc['links']} links in "
              f"{inc_wall:.0f} s wall, {inc_cpu:.0f} CPU s, peak {_rss_mb():.0f} MB")  # fmt: skip
    result(
        papers=n_papers,
        entries=entries,
        full_entries_per_cpu_s=entries / full_cpu,
        full_wall_s=full_wall,
        full_peak_mb=full_peak,
        incremental_cpu_s=inc_cpu,
        incremental_wall_s=inc_wall,
        peak_mb=peak_mb(),
    )


if __name__ == "__main__":
    sys.exit(main())
