"""The cross-day ``citation_graph`` build at scale: edges/s per core, each step timed, peak memory.

    python benchmarks/citation_graph.py [CORPUS_HOME] [--papers N] [--links-per-paper L]
                                        [--entries-per-paper E] [--days D] [--new-days K]
                                        [--touched T] [--workdir DIR] [--keep]

With CORPUS_HOME, the asset's inputs found there are used as they are (``papers``,
``bib_entries``, ``fulltext_ids`` partitions and ``citation_links/date=*/part-*.parquet``;
new days are added to it).
Otherwise a CORPUS_HOME is generated (in a child process: its CPU time and peak RSS
are reported apart) with ``--papers`` papers (default 1M) with arXiv ids
(``YYMM.NNNNN``, 20k a month, in date order) spread over ``--days`` daily partitions:

* ``papers``: ``id, version, kept`` (90 % kept); 8 % of papers are delivered again
  on a later day (a new version, kept re-drawn): the latest delivery decides.
* ``bib_entries``: ``entry_id`` (``<citing_id>#b<k>``), ``citing_id``, ``ref_id``,
  ``mentions`` (Poisson 1.3) for 95 % of deliveries, ~``--entries-per-paper`` entries
  each (default 2 x links), repeated on every delivery day.
* ``citation_links`` (a file per day of the citing paper's latest delivery, as the asset
  stores them): ~``--links-per-paper`` (negative binomial, default 15) of the latest
  delivery's entries are linked to a kept paper: half preferential over all earlier
  kept papers with Pareto(1.8) fitness (a few papers cited thousands of times, most a few
  times), half recency (an exponential look-back). ``via`` as the linker emits it:
  45 % ``arxiv_id``, 15 % ``doi`` (score 1.0), 40 % ``title`` (score in (0.8, 1]);
  3 % of entries repeat the pair of the entry before (two bib entries of one cited
  paper, often by different evidence). Citing papers include dropped ones (not nodes).
* ``fulltext_ids``: ``citing_id, cited_id, mentions`` per delivery, ~1.5 arXiv ids per
  paper: 60 % a paper it also cites by a bib link, 25 % another earlier paper, 15 %
  an id outside the corpus.

Then the body of the ``citation_graph`` asset (corpus_assets/graph.py: plan_graph,
build_days, finish_graph with the plot) runs in a fresh process, each step timed (CPU seconds
of the process, all threads; wall alongside) with the RSS after it; ``peak_mb`` is that
process's peak RSS (it starts no other). Then ``--new-days`` days are added as the pipeline
would (2,000 papers, 8 % of them new versions of recent papers whose links move to the new
day; ``--touched`` old days whose link files citation_links rewrote) and the asset runs again
on each: ``day_cpu_s`` (the largest) and ``day_share`` (of the full run's CPU). Generated data
goes to a TemporaryDirectory (or ``--workdir``, removed afterwards unless ``--keep``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import tempfile
import time
from pathlib import Path

from _common import in_child, peak_mb, result

MONTH = 20_000  # arXiv ids per month (2015-2019 had ~10-15k; 20k keeps 5-digit numbers)
FIRST_DAY = dt.date(2015, 1, 2)
VIA = ("arxiv_id", "doi", "title")
VIA_P = (0.45, 0.15, 0.40)


def rss_mb() -> float:
    """Current resident memory (``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


# --------------------------------------------------------------------------- generation


def _ids(index, month_offset: int = 0, seq_offset: int = 0):
    """arXiv ids ``YYMM.NNNNN`` of paper indices (MONTH per month from 1501)."""
    import numpy as np
    import polars as pl

    index = np.asarray(index, dtype=np.int64)
    m = index // MONTH + month_offset
    yymm = (15 + m // 12) * 100 + m % 12 + 1
    seq = index % MONTH + seq_offset
    return pl.select(
        pl.format(
            "{}.{}",
            pl.Series(yymm).cast(pl.String).str.zfill(4),
            pl.Series(seq).cast(pl.String).str.zfill(5),
        )
    ).to_series()


def generate(home: str, papers: int, links_per_paper: float, entries_per_paper: float, days: int) -> dict:
    """Write the asset's inputs for ``papers`` papers under ``home``; return counts."""
    import numpy as np
    import polars as pl

    from corpus.graph.citation_links import ASSET as LINKS_ASSET
    from corpus.papers.fulltext_ids import FULLTEXT_IDS
    from corpus.store import Store

    rng = np.random.default_rng(20240501)
    store = Store(Path(home))
    n = papers
    ids = _ids(np.arange(n))
    day1 = (np.arange(n, dtype=np.int64) * days) // n
    kept1 = rng.random(n) < 0.90
    # 8 % delivered again 1-30 days later (a new version); the latest delivery decides
    again = (rng.random(n) < 0.08) & (day1 < days - 1)
    day2 = np.where(again, np.minimum(day1 + rng.integers(1, 31, n), days - 1), -1)
    kept2 = np.where(again, rng.random(n) < 0.90, False)
    kept = np.where(again, kept2, kept1)
    parsed = rng.random(n) < 0.95
    # entries: L linked + U unlinked; only the latest delivery's entries are linked
    # bibliography sizes vary a lot (negative binomial: Poisson of a Gamma(2) rate, same mean)
    size = rng.gamma(2.0, 0.5, n)
    n_link = np.where(parsed, rng.poisson(links_per_paper * size), 0)
    n_unl = np.where(parsed, rng.poisson(max(entries_per_paper - links_per_paper, 0.0) * size), 0)
    n_ent = n_link + n_unl

    # cited papers: kept papers only (the linker links to kept papers)
    kept_idx = np.flatnonzero(kept)
    prev_kept = np.full(n, -1, dtype=np.int64)  # largest kept index <= j
    prev_kept[kept_idx] = kept_idx
    prev_kept = np.maximum.accumulate(prev_kept)
    fitness = (rng.pareto(1.8, n) + 1.0) * kept
    cum = np.cumsum(fitness)
    citing = np.repeat(np.arange(n, dtype=np.int64), n_link)
    total = len(citing)
    # half preferential (by fitness over all kept papers; a later one falls back to recency:
    # drawing only among earlier papers would make the first few papers cited by everyone)
    pref = rng.random(total) < 0.5
    cited_pref = np.searchsorted(cum, rng.random(total) * cum[-1], side="right")
    back = 1 + np.floor(rng.exponential(n / 12, total)).astype(np.int64) % np.maximum(citing, 1)
    cited_rec = prev_kept[np.maximum(citing - back, 0)]  # wraps, so no paper soaks up the overflow
    cited = np.where(pref & (cited_pref < citing), cited_pref, cited_rec)
    ok = (cited >= 0) & (cited < citing)
    citing, cited = citing[ok], cited[ok]
    # 3 %: a second bib entry of the same cited paper
    dup = np.flatnonzero(rng.random(len(citing)) < 0.03)
    dup = dup[(dup > 0) & (citing[dup] == citing[np.maximum(dup - 1, 0)])]
    cited[dup] = cited[dup - 1]
    # the k-th linked entry of a citing paper is its entry b<k>
    starts = np.zeros(n + 1, dtype=np.int64)
    np.add.at(starts, citing + 1, 1)
    starts = np.cumsum(starts)
    k = np.arange(len(citing)) - starts[citing]
    via = rng.choice(3, len(citing), p=VIA_P)
    score = np.where(via == 2, np.nextafter(0.8, 1.0) + 0.2 * rng.beta(4, 1.5, len(citing)), 1.0)
    score = np.minimum(score, 1.0)
    citing_ids = ids.gather(citing)
    latest_day = np.where(again, day2, day1)
    links = pl.DataFrame(
        {
            "entry_id": pl.select(pl.format("{}#b{}", citing_ids, pl.Series(k))).to_series(),
            "citing_id": citing_ids,
            "cited_id": ids.gather(cited),
            "via": pl.Series(np.array(VIA)[via]),
            "score": score,
            "day": latest_day[citing],
        }
    )
    del citing_ids
    n_links = links.height
    # as citation_links stores them: a file per day of the citing paper's latest delivery
    for (d,), part in links.partition_by("day", as_dict=True).items():
        date = (FIRST_DAY + dt.timedelta(days=int(d))).isoformat()
        path = store.asset_dir(LINKS_ASSET) / f"date={date}" / "part-0.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        part.drop("day").sort("entry_id").write_parquet(path, compression="zstd")
    del links

    # full-text arXiv ids per paper (each delivery): 60 % also bib-linked, 25 % earlier, 15 % outside
    n_ft = np.where(parsed, rng.poisson(1.5, n), 0)
    ft_citing = np.repeat(np.arange(n, dtype=np.int64), n_ft)
    kind = rng.choice(3, len(ft_citing), p=(0.60, 0.25, 0.15))
    has_link = starts[ft_citing + 1] > starts[ft_citing]
    pick = starts[ft_citing] + np.floor(
        rng.random(len(ft_citing)) * (starts[ft_citing + 1] - starts[ft_citing])
    ).astype(np.int64)
    ft_cited = np.where(
        (kind == 0) & has_link,
        cited[np.minimum(pick, len(cited) - 1)],
        np.floor(rng.random(len(ft_citing)) * ft_citing),
    ).astype(np.int64)
    outside = kind == 2
    ft_ok = outside | (ft_cited < ft_citing)
    ft_citing, ft_cited, outside = ft_citing[ft_ok], ft_cited[ft_ok], outside[ft_ok]
    ft_ids = pl.Series(ids.gather(ft_cited))
    ft_ids = pl.select(
        pl.when(pl.Series(outside)).then(_ids(ft_cited, seq_offset=MONTH)).otherwise(ft_ids)
    ).to_series()
    ft = (
        pl.DataFrame(
            {
                "i": ft_citing,
                "citing_id": ids.gather(ft_citing),
                "cited_id": ft_ids,
                "m": 1 + rng.poisson(0.5, len(ft_citing)),
            }
        )
        .group_by("i", "citing_id", "cited_id")
        .agg(pl.col("m").sum().alias("mentions"))
    )

    # daily partitions: every delivery (first, and again) with its papers, entries, full-text ids
    base = pl.DataFrame({"i": np.arange(n), "id": ids, "n_ent": n_ent, "parsed": parsed})
    deliveries = pl.concat(
        [
            base.with_columns(day=pl.Series(day1), version=pl.lit(1), kept=pl.Series(kept1)),
            base.with_columns(day=pl.Series(day2), version=pl.lit(2), kept=pl.Series(kept2)).filter(
                pl.Series(again)
            ),
        ]
    )
    n_entries = 0
    for (d,), part in deliveries.partition_by("day", as_dict=True).items():
        date = (FIRST_DAY + dt.timedelta(days=int(d))).isoformat()
        store.write_partition("papers", date, part.select("id", "version", "kept"))
        ent = (
            part.filter(pl.col("parsed"))
            .select("id", pl.int_ranges(0, pl.col("n_ent")).alias("k"))
            .explode("k")
            .drop_nulls("k")
        )
        ent = ent.select(
            pl.format("{}#b{}", "id", "k").alias("entry_id"),
            pl.col("id").alias("citing_id"),
            pl.format("b{}", "k").alias("ref_id"),
            pl.Series(rng.poisson(1.3, ent.height)).cast(pl.Int64).alias("mentions"),
        )
        n_entries += ent.height
        store.write_partition("bib_entries", date, ent)
        store.write_partition(
            "fulltext_ids",
            date,
            ft.join(part.filter(pl.col("parsed")).select("i"), on="i", how="semi")
            .select("citing_id", "cited_id", pl.col("mentions").cast(pl.Int64))
            .sort("citing_id", "cited_id"),
        )
    assert FULLTEXT_IDS == "fulltext_ids"
    return {
        "papers": n,
        "nodes": int(kept.sum()),
        "deliveries": deliveries.height,
        "entries": n_entries,
        "links": n_links,
        "fulltext_rows": ft.height,
        "days": days,
    }


def _generate_child(*args) -> None:
    *args, queue = args
    start = time.process_time()
    counts = generate(*args)
    queue.put({**counts, "gen_cpu_s": time.process_time() - start, "gen_peak_mb": peak_mb()})


# --------------------------------------------------------------------------- a new day


def add_day(home: str, papers_per_day: int, touched: int, seed: int) -> dict:
    """One more day as the pipeline would write it: ``papers_per_day`` papers, 8 % of them new
    versions of papers of the last 30 days (their bibliography and links move to the new day),
    each new paper citing ~15 earlier kept ones, ~1.5 full-text ids; and ``touched`` old days
    whose links citation_links rewrote (an old entry now links a new paper)."""
    import numpy as np
    import polars as pl

    from corpus.graph.citation_links import ASSET as LINKS_ASSET
    from corpus.store import Store

    rng = np.random.default_rng(seed)
    store = Store(Path(home))
    days = store.partitions("papers")
    new_day = (dt.date.fromisoformat(days[-1]) + dt.timedelta(days=1)).isoformat()
    recent = pl.concat(
        [store.read_partition("papers", d).with_columns(pl.lit(d).alias("day")) for d in days[-30:]]
    )
    kept = recent.filter(pl.col("kept"))["id"]
    n_again = int(papers_per_day * 0.08)
    again = recent.sample(n_again, seed=seed)["id"]
    fresh = [
        f"9{seed % 1000:03d}.{i:05d}" for i in range(papers_per_day - n_again)
    ]  # unlike any generated id
    ids = pl.Series(fresh + again.to_list(), dtype=pl.String)
    store.write_partition(
        "papers", new_day, pl.DataFrame({"id": ids, "version": 1, "kept": rng.random(len(ids)) < 0.9})
    )
    n_link = rng.poisson(15, len(ids))
    citing = np.repeat(np.arange(len(ids)), n_link)
    k = np.concatenate([np.arange(c) for c in n_link])
    entries = pl.DataFrame(
        {
            "entry_id": [f"{ids[int(c)]}#b{j}" for c, j in zip(citing, k, strict=True)],
            "citing_id": ids.gather(citing),
            "ref_id": [f"b{j}" for j in k],
            "mentions": rng.poisson(1.3, len(citing)),
        }
    )
    store.write_partition("bib_entries", new_day, entries)
    links = entries.select(
        "entry_id",
        "citing_id",
        kept.gather(rng.integers(0, len(kept), len(citing))).alias("cited_id"),
        pl.lit("arxiv_id").alias("via"),
        pl.lit(1.0).alias("score"),
    ).filter(pl.col("citing_id") != pl.col("cited_id"))
    root = store.asset_dir(LINKS_ASSET)
    (root / f"date={new_day}").mkdir(parents=True)
    links.write_parquet(root / f"date={new_day}" / "part-0.parquet")
    ft = pl.DataFrame({"citing_id": ids.gather(rng.integers(0, len(ids), int(1.5 * len(ids)))),
                       "cited_id": kept.gather(rng.integers(0, len(kept), int(1.5 * len(ids)))), "mentions": 1})  # fmt: skip
    store.write_partition(
        "fulltext_ids", new_day, ft.group_by("citing_id", "cited_id").agg(pl.col("mentions").sum())
    )
    # the re-delivered papers' links leave their old days; some old entries link a new paper
    moved = set(recent.filter(pl.col("id").is_in(again.implode()))["day"])
    old_days = [d for d in days if (root / f"date={d}" / "part-0.parquet").exists()]
    picked = set(rng.choice(old_days, size=min(touched, len(old_days)), replace=False).tolist())
    for day in sorted(moved | picked):
        path = root / f"date={day}" / "part-0.parquet"
        if not path.exists():
            continue
        frame = pl.read_parquet(path).filter(~pl.col("citing_id").is_in(again.implode()))
        if day in picked and frame.height:
            frame = frame.with_columns(
                pl.when(pl.int_range(frame.height) == 0)
                .then(pl.lit(fresh[0]))
                .otherwise("cited_id")
                .alias("cited_id")
            )
        frame.write_parquet(path)
    return {
        "day": new_day,
        "papers": len(ids),
        "again": n_again,
        "links": links.height,
        "old_days": len(moved | picked),
    }


# --------------------------------------------------------------------------- the asset


def _run_child(home: str, queue) -> None:
    """The citation_graph asset's calls (plan, build every planned day, finish with the plot),
    each timed in CPU s with the RSS after it."""
    from corpus.graph.citation_graph import build_days, finish_graph, plan_graph

    steps, out = [], {}
    for name, fn in (
        ("plan_graph", lambda: plan_graph(home)),
        ("build_days", lambda: build_days(home)),
        (
            "finish_graph",
            lambda: finish_graph(home, plot=Path(home) / "reports" / "citation_graph_degrees.svg"),
        ),
    ):
        c0, w0 = time.process_time(), time.perf_counter()
        out[name] = fn()
        steps.append((name, time.process_time() - c0, time.perf_counter() - w0, rss_mb()))
    summary = out["finish_graph"]
    queue.put({"steps": steps, "summary": {k: v for k, v in summary.items()}, "peak_mb": peak_mb(),
               "cpu": sum(s[1] for s in steps), "wall": sum(s[2] for s in steps)})  # fmt: skip


def run_asset(home: Path) -> dict:
    """One run of the asset's body in a fresh process (its CPU s and peak RSS are the run's)."""
    out = in_child(_run_child, str(home))
    for name, cpu, wall, rss in out["steps"]:
        print(f"  {name:<14} cpu {cpu:8.2f} s  wall {wall:8.2f} s  rss {rss:7.0f} MB", flush=True)
    s = out["summary"]
    print(
        f"  {s['mode']}: {s['days_built']} day(s) built; nodes {s['nodes']:,}, edges {s['edges']:,}, via {s['via']}; "
        f"mean degree {s.get('mean_degree', float('nan')):.3f}, alpha in/out {s.get('alpha_in')}/{s.get('alpha_out')}, "
        f"wcc {s.get('wcc_share')}, isolated {s.get('isolated_share')}; {out['cpu']:.2f} CPU s, "
        f"{out['wall']:.2f} s wall, peak {out['peak_mb']:.0f} MB",
        flush=True,
    )
    return out


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", nargs="?", help="an existing CORPUS_HOME (else generated)")
    ap.add_argument("--papers", type=int, default=1_000_000)
    ap.add_argument("--links-per-paper", type=float, default=15.0)
    ap.add_argument(
        "--entries-per-paper", type=float, default=None, help="bib entries a paper (default 2 x links)"
    )
    ap.add_argument("--days", type=int, default=None, help="daily partitions (default papers / 2000)")
    ap.add_argument("--new-days", type=int, default=2, help="new days run incrementally after the full run")
    ap.add_argument("--touched", type=int, default=50, help="old days whose links change with a new day")
    ap.add_argument("--workdir", help="generate here (removed afterwards unless --keep)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    tmp = None
    gen: dict = {}
    if args.home:
        home = Path(args.home)
    else:
        if args.workdir:
            home = Path(args.workdir) / "corpus"
            home.mkdir(parents=True, exist_ok=False)
        else:
            tmp = tempfile.TemporaryDirectory(prefix="citation_graph_bench_")
            home = Path(tmp.name) / "corpus"
        days = args.days or max(1, args.papers // 2000)
        epp = args.entries_per_paper if args.entries_per_paper is not None else 2 * args.links_per_paper
        wall0 = time.perf_counter()
        gen = in_child(_generate_child, str(home), args.papers, args.links_per_paper, epp, days)
        disk = sum(p.stat().st_size for p in home.rglob("*") if p.is_file()) / 2**20
        print(
            f"generated {gen['papers']:,} papers ({gen['nodes']:,} nodes, {gen['deliveries']:,} deliveries over "
            f"{gen['days']} days), {gen['entries']:,} bib entries, {gen['links']:,} links, "
            f"{gen['fulltext_rows']:,} full-text id rows, {disk:.0f} MB on disk in "
            f"{time.perf_counter() - wall0:.1f} s wall ({gen['gen_cpu_s']:.1f} CPU s, peak {gen['gen_peak_mb']:.0f} MB)",
            flush=True,
        )
    try:
        print("citation_graph, full run:", flush=True)
        full = run_asset(home)
        daily = []
        for k in range(args.new_days):
            day = add_day(str(home), 2000, args.touched, seed=k)
            print(f"new day {day['day']}: {day['papers']} papers ({day['again']} again), {day['links']} links, "
                  f"{day['old_days']} old days' links changed:", flush=True)  # fmt: skip
            daily.append(run_asset(home))
        s = full["summary"]
        result(
            papers=gen.get("papers", s["nodes"]),
            nodes=s["nodes"],
            edges=s["edges"],
            cpu_s=full["cpu"],
            wall_s=full["wall"],
            edges_per_cpu_s=s["edges"] / full["cpu"] if full["cpu"] else float("nan"),
            peak_mb=full["peak_mb"],
            day_cpu_s=max((d["cpu"] for d in daily), default=float("nan")),
            day_peak_mb=max((d["peak_mb"] for d in daily), default=float("nan")),
            day_share=max((d["cpu"] for d in daily), default=float("nan")) / full["cpu"],
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
        elif args.workdir and not args.keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
