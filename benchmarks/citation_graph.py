"""The cross-day ``citation_graph`` build at scale: edges/s per core, each step timed, peak memory.

    python benchmarks/citation_graph.py [CORPUS_HOME] [--papers N] [--links-per-paper L]
                                        [--entries-per-paper E] [--days D] [--workdir DIR] [--keep]

With CORPUS_HOME, the asset's inputs found there are used as they are (``papers``,
``bib_entries``, ``fulltext_ids`` and ``citation_links`` partitions).
Otherwise a CORPUS_HOME is generated (in a child process: its CPU time and peak RSS
are reported apart) with ``--papers`` papers (default 1M) with arXiv ids
(``YYMM.NNNNN``, 20k a month, in date order) spread over ``--days`` daily partitions:

* ``papers``: ``id, version, kept`` (90 % kept); 8 % of papers are delivered again
  on a later day (a new version, kept re-drawn): the latest delivery decides.
* ``bib_entries``: ``entry_id`` (``<citing_id>#b<k>``), ``citing_id``, ``ref_id``,
  ``mentions`` (Poisson 1.3) for 95 % of deliveries, ~``--entries-per-paper`` entries
  each (default 2 x links), repeated on every delivery day.
* ``citation_links``: ~``--links-per-paper`` (negative binomial, default 15) of the latest
  delivery's entries are linked to a kept paper: half preferential over all earlier
  kept papers with Pareto(1.8) fitness (a few papers cited thousands of times, most a few
  times), half recency (an exponential look-back). ``via`` as the linker emits it:
  45 % ``arxiv_id``, 15 % ``doi`` (score 1.0), 40 % ``title`` (score in (0.8, 1]);
  3 % of entries repeat the pair of the entry before (two bib entries of one cited
  paper, often by different evidence). Citing papers include dropped ones (not nodes).
* ``fulltext_ids``: ``citing_id, cited_id, mentions`` per delivery, ~1.5 arXiv ids per
  paper: 60 % a paper it also cites by a bib link, 25 % another earlier paper, 15 %
  an id outside the corpus.

Then the body of the ``citation_graph`` asset (corpus_assets/graph.py) runs in this
process, the same calls in the same order and with the same variable lifetimes, each
step timed (CPU seconds of the process, all threads; wall alongside) with the RSS
after it; then, apart, the parts of ``graph_stats`` (``degrees``, ``weak_components``,
``powerlaw_fit`` in and out). ``peak_mb`` is the asset's peak RSS (before the
breakdown). Generated data goes to a TemporaryDirectory (or ``--workdir``, removed
afterwards unless ``--keep``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing as mp
import os
import shutil
import tempfile
import time
from pathlib import Path

from _common import cpu_timer, peak_mb, result

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

    from corpus.citation_links import ASSET as LINKS_ASSET
    from corpus.stages import FULLTEXT_IDS
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
    links = pl.DataFrame(
        {
            "entry_id": pl.select(pl.format("{}#b{}", citing_ids, pl.Series(k))).to_series(),
            "citing_id": citing_ids,
            "cited_id": ids.gather(cited),
            "via": pl.Series(np.array(VIA)[via]),
            "score": score,
        }
    )
    del citing_ids
    # stored as the linker stores them: in the citing paper's latest delivery day
    latest_day = np.where(again, day2, day1)[citing]
    for (d,), part in links.with_columns(_d=pl.Series(latest_day)).partition_by("_d", as_dict=True).items():
        path = (
            store.asset_dir(LINKS_ASSET)
            / f"date={(FIRST_DAY + dt.timedelta(days=int(d))).isoformat()}"
            / "part-0.parquet"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        part.drop("_d").sort("entry_id").write_parquet(path, compression="zstd")
    n_links = links.height
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


def _generate_child(queue, *args) -> None:
    start = time.process_time()
    counts = generate(*args)
    queue.put({**counts, "gen_cpu_s": time.process_time() - start, "gen_peak_mb": peak_mb()})


# --------------------------------------------------------------------------- the asset


class Steps:
    """CPU and wall seconds of each step, with the RSS after it."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, float, float]] = []

    def __call__(self, name: str, fn, *args, **kwargs):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        self.rows.append((name, cpu, wall, rss_mb(), peak_mb()))
        print(
            f"  {name:<22} cpu {cpu:8.2f} s  wall {wall:8.2f} s  rss {rss_mb():7.0f} MB  peak {peak_mb():7.0f} MB",
            flush=True,
        )
        return out

    @property
    def cpu(self) -> float:
        return sum(r[1] for r in self.rows)

    @property
    def wall(self) -> float:
        return sum(r[2] for r in self.rows)


def run_asset(home: Path, steps: Steps) -> dict:
    """The body of ``corpus_assets.graph.citation_graph`` without Dagster (same calls, same order)."""
    import polars as pl

    from corpus.citation_links import fulltext_links, graph_nodes, link_rows
    from corpus.graph import EDGE_SCHEMA, build_edges, degree_plot_png, graph_stats
    from corpus.stages import FULLTEXT_IDS
    from corpus.store import Store, atomic_write_bytes

    store = Store(home)
    nodes = steps("graph_nodes", graph_nodes, store)
    links = steps("link_rows", link_rows, store)
    fulltext = steps("fulltext_links", fulltext_links, store, FULLTEXT_IDS)
    n_link_rows = links.height
    edges = steps(
        "build_edges",
        lambda: (
            build_edges(links, fulltext)
            if links.height or fulltext is not None
            else pl.DataFrame(schema=EDGE_SCHEMA)
        ),
    )
    edges = steps(
        "filter_nodes",
        lambda: edges.filter(
            pl.col("citing_id").is_in(nodes.implode()) & pl.col("cited_id").is_in(nodes.implode())
        ),
    )
    steps("sort_write", lambda: store.write_table("citation_graph", edges.sort("citing_id", "cited_id")))
    steps("refresh_views", store.refresh_views)
    stats: dict = {}
    if len(nodes):
        stats = steps("graph_stats", graph_stats, edges, nodes)
        png = steps("degree_plot_png", degree_plot_png, edges, nodes)
        steps(
            "write_png",
            atomic_write_bytes,
            store.home / "reports" / "citation_graph_degrees.png",
            png,
        )
    via = steps("via_counts", lambda: dict(edges.group_by("via").len().iter_rows()) if edges.height else {})
    return {
        "nodes": len(nodes),
        "edges": edges.height,
        "link_rows": n_link_rows,
        "stats": stats,
        "via": via,
        "_edges": edges,
        "_nodes": nodes,
    }


def breakdown(edges, nodes, steps: Steps) -> None:
    """The parts of ``graph_stats`` one by one (its work, done again)."""
    from corpus.graph import degrees, powerlaw_fit, weak_components

    k_in, k_out, src, dst, _ = steps("degrees", degrees, edges, nodes)
    steps("weak_components", weak_components, len(k_in), src, dst)
    steps("powerlaw_fit_in", powerlaw_fit, k_in)
    steps("powerlaw_fit_out", powerlaw_fit, k_out)
    print(
        f"  max in-degree {int(k_in.max())}, max out-degree {int(k_out.max())}, "
        f"in-degree >= 1000: {int((k_in >= 1000).sum())} papers, median in-degree of cited "
        f"{float(__import__('numpy').median(k_in[k_in > 0])):.0f}",
        flush=True,
    )


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
    ap.add_argument("--workdir", help="generate here (removed afterwards unless --keep)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-breakdown", action="store_true")
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
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        wall0 = time.perf_counter()
        proc = ctx.Process(
            target=_generate_child, args=(queue, str(home), args.papers, args.links_per_paper, epp, days)
        )
        proc.start()
        gen = queue.get()
        proc.join()
        if proc.exitcode:
            raise SystemExit(f"generation failed ({proc.exitcode})")
        disk = sum(p.stat().st_size for p in home.rglob("*") if p.is_file()) / 2**20
        print(
            f"generated {gen['papers']:,} papers ({gen['nodes']:,} nodes, {gen['deliveries']:,} deliveries over "
            f"{gen['days']} days), {gen['entries']:,} bib entries, {gen['links']:,} links, "
            f"{gen['fulltext_rows']:,} full-text id rows, {disk:.0f} MB on disk in "
            f"{time.perf_counter() - wall0:.1f} s wall ({gen['gen_cpu_s']:.1f} CPU s, peak {gen['gen_peak_mb']:.0f} MB)",
            flush=True,
        )
    try:
        print("citation_graph asset body:", flush=True)
        steps = Steps()
        with cpu_timer() as cpu:
            wall0 = time.perf_counter()
            out = run_asset(home, steps)
            wall = time.perf_counter() - wall0
        asset_peak = peak_mb()
        s = out["stats"]
        print(
            f"nodes {out['nodes']:,}, link rows {out['link_rows']:,}, edges {out['edges']:,}, via {out['via']}; "
            f"mean degree {s.get('mean_degree', float('nan')):.3f}, alpha in/out {s.get('alpha_in')}/"
            f"{s.get('alpha_out')}, xmin in/out {s.get('xmin_in')}/{s.get('xmin_out')}, wcc {s.get('wcc_share')}, "
            f"isolated {s.get('isolated_share')}",
            flush=True,
        )
        edges_cpu = out["edges"] / cpu["s"] if cpu["s"] else float("nan")
        print(
            f"asset: {cpu['s']:.2f} CPU s, {wall:.2f} s wall -> {edges_cpu:,.0f} edges/CPU-s, "
            f"{out['edges'] / wall:,.0f} edges/s wall; peak {asset_peak:.0f} MB",
            flush=True,
        )
        if not args.no_breakdown and out["nodes"]:
            print("graph_stats parts (again):", flush=True)
            breakdown(out["_edges"], out["_nodes"], Steps())
        slow = max(steps.rows, key=lambda r: r[1])
        result(
            papers=gen.get("papers", out["nodes"]),
            nodes=out["nodes"],
            link_rows=out["link_rows"],
            edges=out["edges"],
            cpu_s=cpu["s"],
            wall_s=wall,
            edges_per_cpu_s=edges_cpu,
            edges_per_s=out["edges"] / wall,
            slowest=f"{slow[0]}:{slow[1]:.1f}s",
            peak_mb=asset_peak,
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
        elif args.workdir and not args.keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
