"""Citation graph edges and Table-2 statistics on a graph worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy.special import zeta

from corpus.graph.network import (
    EDGE_SCHEMA,
    VIA_ORDER,
    GraphInputError,
    build_edges,
    degree_plot_svg,
    degrees,
    graph_stats,
    powerlaw_fit,
    weak_components,
)
from corpus.papers.fulltext_ids import fulltext_id_edges

# a -> b, a -> c, b -> c, c -> a, e -> f, a -> zz (not a node); d and g isolated
EDGES = pl.DataFrame(
    {"citing_id": ["a", "a", "b", "c", "e", "a", "a"], "cited_id": ["b", "c", "c", "a", "f", "zz", "b"]}
)
NODES = pl.Series(["a", "b", "c", "d", "e", "f", "g"])


def test_graph_stats_by_hand():
    s = graph_stats(EDGES, NODES)
    assert s["nodes"] == 7
    assert s["edges"] == 5  # a->b counted once, a->zz left out
    assert s["edges_outside"] == 1
    assert s["mean_degree"] == pytest.approx(2 * 5 / 7)
    assert s["wcc_share"] == pytest.approx(3 / 7)  # {a, b, c}
    assert s["isolated_share"] == pytest.approx(2 / 7)  # d, g
    # in-degrees of nodes with any: a1 b1 c2 f1 -> fit from x_min = 1
    assert s["xmin_in"] == 1 and s["alpha_in"] > 1


def test_weak_components_chain_and_cycle():
    # 9 - 8 - ... - 0 chain plus a 3-cycle 10 -> 11 -> 12 -> 10 and a lone 13
    src = np.array([9, 8, 7, 6, 5, 4, 3, 2, 1, 10, 11, 12])
    dst = np.array([8, 7, 6, 5, 4, 3, 2, 1, 0, 11, 12, 10])
    labels = weak_components(14, src, dst)
    assert labels.tolist() == [0] * 10 + [1, 1, 1, 2]
    # edges given in any order, repeated, and both ways give the same partition
    order = np.random.default_rng(0).permutation(len(src))
    both = weak_components(14, np.r_[src[order], dst, dst], np.r_[dst[order], src, src])
    assert both.tolist() == labels.tolist()
    none = np.array([], dtype=np.int64)
    assert weak_components(3, none, none).tolist() == [0, 1, 2]


def test_powerlaw_mle():
    # degrees {1, 1, 2}: the MLE solves zeta'(a,1)/zeta(a,1) = -mean(log x); check by finite differences
    fit = powerlaw_fit(np.array([1, 1, 2, 0]), xmin=1)
    a, h = fit.alpha, 1e-5
    dlog = (math.log(zeta(a + h, 1.0)) - math.log(zeta(a - h, 1.0))) / (2 * h)
    assert dlog == pytest.approx(-math.log(2) / 3, abs=1e-6)
    # samples from a discrete power law with alpha = 2.5 above x_min = 5 (Clauset et al. eq. D.6)
    rng = np.random.default_rng(0)
    x = np.floor((5 - 0.5) * (1 - rng.random(50_000)) ** (-1 / 1.5) + 0.5).astype(int)
    assert powerlaw_fit(x, xmin=5).alpha == pytest.approx(2.5, abs=0.05)
    auto = powerlaw_fit(x)
    assert auto.xmin >= 5 and auto.alpha == pytest.approx(2.5, abs=0.1)
    assert math.isnan(powerlaw_fit(np.array([3, 3, 3])).alpha)


def test_build_edges_precedence_and_mentions():
    links = pl.DataFrame(
        {
            "entry_id": ["1", "2", "3", "4", "5"],
            "citing_id": ["a", "a", "b", "b", "c"],
            "cited_id": ["b", "b", "c", "c", "c"],
            "via": ["title", "doi", "title", "title", "arxiv_id"],
            "score": [0.85, 1.0, 0.9, 0.95, 1.0],
            "mentions": [2, 1, 3, 0, 1],
        }
    )
    full = pl.DataFrame({"citing_id": ["a", "b", "d"], "cited_id": ["b", "a", "a"], "mentions": [4, 1, 2]})
    e = build_edges(links, full)
    assert e.rows() == [
        ("a", "b", "doi", 1.0, 7),
        ("b", "a", "fulltext_id", 1.0, 1),
        ("b", "c", "title", 0.95, 3),
        ("d", "a", "fulltext_id", 1.0, 2),
    ]  # c -> c is a self-citation
    with pytest.raises(GraphInputError):
        build_edges(links.drop("via"))


def test_fulltext_id_edges():
    docs = pl.DataFrame(
        {
            "paper_id": ["1806.01261", "hep-th/9901001", "2101.00001"],
            "text": [
                "As in arXiv:hep-th/9901001 and hep-th/9901001v2, unlike arXiv:1806.01261 (ours).",
                "Table 1203.4567 shows doi 10.1145/1105.321114; see https://arxiv.org/abs/2101.00001.",
                None,
            ],
        }
    )
    e = fulltext_id_edges(docs)
    assert e.rows() == [("1806.01261", "hep-th/9901001", 2), ("hep-th/9901001", "2101.00001", 1)]
    only = fulltext_id_edges(docs, known_ids=pl.Series(["2101.00001"]))
    assert only.rows() == [("hep-th/9901001", "2101.00001", 1)]


def test_degree_plot_svg_marks_each_distinct_positive_degree():
    from lxml import etree

    svg = etree.fromstring(degree_plot_svg(EDGES, NODES))
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    text = "".join(svg.itertext())
    assert "Degree distributions (7 nodes)" in text and "in-degree" in text and "out-degree" in text
    paths = [p.get("d") for p in svg.iter("{http://www.w3.org/2000/svg}path") if "stroke-opacity" in p.attrib]
    # in-degrees of nodes: a1 b1 c2 f1 (d, e, g: 0) -> k = 1, 2; out: a2 b1 c1 e1 -> k = 1, 2
    assert [d.count("M") for d in paths] == [2, 2]


# The string-sort / string-join implementations that build_edges and degrees replaced
# (same results, ~2-3x the CPU and memory at 1M papers): the integer-code versions must agree.


def _reference_build_edges(links: pl.DataFrame, fulltext: pl.DataFrame) -> pl.DataFrame:
    rank = {v: i for i, v in enumerate(VIA_ORDER)}
    rows = pl.concat(
        [
            links.select("citing_id", "cited_id", "via", "score", pl.col("mentions").cast(pl.Int64)),
            fulltext.select(
                "citing_id",
                "cited_id",
                pl.lit("fulltext_id").alias("via"),
                pl.lit(1.0).alias("score"),
                pl.col("mentions").cast(pl.Int64),
            ),
        ]
    ).filter(
        pl.col("citing_id").is_not_null()
        & pl.col("cited_id").is_not_null()
        & (pl.col("citing_id") != pl.col("cited_id"))
    )
    rows = rows.with_columns(pl.col("via").replace_strict(rank, return_dtype=pl.Int8).alias("_r"))
    return (
        rows.sort(["citing_id", "cited_id", "_r", "score"], descending=[False, False, False, True])
        .group_by("citing_id", "cited_id", maintain_order=True)
        .agg(pl.col("via").first(), pl.col("score").first(), pl.col("mentions").sum())
        .select(list(EDGE_SCHEMA))
        .cast(EDGE_SCHEMA)
    )


def _reference_degrees(edges: pl.DataFrame, nodes: pl.Series) -> tuple[np.ndarray, np.ndarray, int, int]:
    ids = nodes.drop_nulls().unique().sort()
    table = pl.DataFrame({"id": ids}).with_row_index("i")
    e = edges.select("citing_id", "cited_id").unique().filter(pl.col("citing_id") != pl.col("cited_id"))
    j = e.join(table.rename({"id": "citing_id", "i": "s"}), on="citing_id").join(
        table.rename({"id": "cited_id", "i": "d"}), on="cited_id"
    )
    s, d = j["s"].to_numpy().astype(np.int64), j["d"].to_numpy().astype(np.int64)
    n = len(ids)
    return np.bincount(d, minlength=n), np.bincount(s, minlength=n), len(s), e.height - j.height


def _random_ids(rng: np.random.Generator, n: int, pool: list[str], null_share: float) -> list[str | None]:
    return [None if rng.random() < null_share else pool[i] for i in rng.integers(0, len(pool), n)]


def test_integer_codes_agree_with_string_reference():
    rng = np.random.default_rng(7)
    # ids of unequal length and shared prefixes, so string order differs from length order
    pool = [f"{rng.integers(1, 30)}{'x' * rng.integers(0, 3)}.{i}" for i in range(60)]
    n = 4000
    links = pl.DataFrame(
        {
            "citing_id": _random_ids(rng, n, pool, 0.02),
            "cited_id": _random_ids(rng, n, pool, 0.02),
            "via": [[*VIA_ORDER[:3], None][i] for i in rng.choice(4, n, p=[0.4, 0.2, 0.39, 0.01])],
            "score": [None if rng.random() < 0.02 else round(float(x), 2) for x in rng.random(n)],
            "mentions": [None if rng.random() < 0.05 else int(x) for x in rng.integers(0, 4, n)],
        },
        schema={
            "citing_id": pl.String,
            "cited_id": pl.String,
            "via": pl.String,
            "score": pl.Float64,
            "mentions": pl.Int64,
        },
    )
    fulltext = pl.DataFrame(
        {
            "citing_id": _random_ids(rng, 800, pool, 0.0),
            "cited_id": _random_ids(rng, 800, pool + ["9999.99999"], 0.0),
            "mentions": rng.integers(1, 3, 800),
        }
    )
    got, want = build_edges(links, fulltext), _reference_build_edges(links, fulltext)
    assert want.height > 1000 and want["via"].null_count() and want["score"].null_count()
    assert got.equals(want)  # same rows, same order (citing_id, cited_id), same types
    nodes = pl.Series([*pool[5:], None, pool[7]])  # some ids are not nodes, one is listed twice
    for edges in (links.select("citing_id", "cited_id"), got):
        k_in, k_out, src, dst, dropped = degrees(edges, nodes)
        r_in, r_out, r_edges, r_dropped = _reference_degrees(edges, nodes)
        assert r_dropped > 0 and r_edges > 0
        assert (k_in.tolist(), k_out.tolist(), len(src), dropped) == (
            r_in.tolist(),
            r_out.tolist(),
            r_edges,
            r_dropped,
        )
    with pytest.raises(GraphInputError, match="bogus"):
        build_edges(
            links.with_columns(
                pl.when(pl.int_range(n) == 5).then(pl.lit("bogus")).otherwise("via").alias("via")
            )
        )


# ---------------------------------------------------------------------------
# the graph over days, kept up to date incrementally (corpus.graph.citation_graph)
# ---------------------------------------------------------------------------


def _graph_nodes(store) -> pl.Series:
    days = store.partitions("papers")
    papers = pl.concat([store.read_partition("papers", d).with_columns(pl.lit(d).alias("day")) for d in days])
    return papers.sort("day").unique("id", keep="last").filter(pl.col("kept"))["id"]


def _graph_reference(store) -> tuple[pl.DataFrame, dict]:
    """Edges and Table 2 by definition: every input of each paper's latest delivery at once."""
    from corpus.graph.citation_links import read_links

    days = store.partitions("papers")
    papers = pl.concat([store.read_partition("papers", d).with_columns(pl.lit(d).alias("day")) for d in days])
    latest = papers.sort("day").unique("id", keep="last")
    nodes = latest.filter(pl.col("kept"))["id"]
    decided = latest.select(pl.col("id").alias("citing_id"), "day")
    bib = pl.concat(
        [store.read_partition("bib_entries", d).with_columns(pl.lit(d).alias("day")) for d in days]
    )
    bib = bib.join(decided, on=["citing_id", "day"], how="semi")
    links = read_links(store).join(bib.select("entry_id", "mentions"), on="entry_id", how="left")
    ft = pl.concat(
        [
            store.read_partition("fulltext_ids", d).with_columns(pl.lit(d).alias("day"))
            for d in days
            if store.has_partition("fulltext_ids", d)
        ]  # fmt: skip
    ).join(decided, on=["citing_id", "day"], how="semi")
    ft = ft.group_by("citing_id", "cited_id").agg(pl.col("mentions").sum())
    edges = build_edges(links.with_columns(pl.col("mentions").fill_null(0)), ft)
    edges = edges.filter(
        pl.col("citing_id").is_in(nodes.implode()) & pl.col("cited_id").is_in(nodes.implode())
    )
    return edges.sort("citing_id", "cited_id"), graph_stats(edges, nodes)


@pytest.mark.parametrize("whole_graph_always", [500_000, 0])
def test_incremental_graph_equals_the_definition(tmp_path, monkeypatch, whole_graph_always):
    """Papers delivered again (dropped, kept again, new titles), full-text ids of papers that
    come later, an old day changed and one deleted: after every day, links then graph, the
    edges and statistics equal a computation from scratch, and only affected days are built.
    The counts come from the kept degrees; with ``WHOLE_GRAPH_ALWAYS`` 0 the statistics that
    need every edge are redone only when the graph moved ``WHOLE_GRAPH_REFRESH``, and are the
    last ones computed in between (``whole_graph_at`` says when)."""
    import random

    from corpus.graph import citation_graph

    monkeypatch.setattr(citation_graph, "WHOLE_GRAPH_ALWAYS", whole_graph_always)
    monkeypatch.setattr(citation_graph, "WHOLE_GRAPH_REFRESH", 0.3)  # this small graph moves fast

    from corpus.graph.citation_graph import read_edges, update_graph
    from corpus.graph.citation_links import update_links
    from corpus.papers.bibliography import bib_frame
    from corpus.papers.metadata import papers_frame
    from corpus.papers.normalize import normalize_title
    from corpus.store import Store

    rng = random.Random(5)
    words = "graph neural network quantum field theory dark matter galaxy survey protein folding".split()
    ids = [f"2103.{i:05d}" for i in range(50)]
    title = {i: " ".join(rng.sample(words, rng.randint(4, 7))) for i in ids}
    store = Store(tmp_path / "data")
    days = [f"2021-03-{d:02d}" for d in (1, 2, 4, 3, 5, 6, 7)]
    results, refreshed, whole = [], [], {}
    for day in days + ["change", "delete"]:
        if day == "delete":
            import shutil

            shutil.rmtree(store.partition_dir("papers", days[2]))
        else:
            day = days[0] if day == "change" else day
            papers, entries, ft = [], [], []
            for pid in rng.sample(ids, 15):
                if rng.random() < 0.2:
                    title[pid] = " ".join(rng.sample(words, rng.randint(4, 7)))
                papers.append({"id": pid, "title": title[pid], "norm_title": normalize_title(title[pid]),
                               "kept": rng.random() > 0.2, "drop_reason": None})  # fmt: skip
                for k in range(rng.randint(0, 5)):
                    target = rng.choice(ids)
                    entries.append({"entry_id": f"{pid}#b{k}", "citing_id": pid, "ref_id": f"b{k}",
                                    "title": title[target], "norm_title": normalize_title(title[target]),
                                    "mentions": rng.randint(0, 3)})  # fmt: skip
                for _ in range(rng.randint(0, 2)):
                    ft.append({"citing_id": pid, "cited_id": rng.choice(ids + ["9999.00001"]), "mentions": 1})
            store.write_partition("papers", day, papers_frame(papers))
            store.write_partition("bib_entries", day, bib_frame(entries))
            schema = {"citing_id": pl.String, "cited_id": pl.String, "mentions": pl.Int64}
            store.write_partition("fulltext_ids", day, pl.DataFrame(ft, schema=schema))
        update_links(store.home)
        summary = update_graph(store.home, plot=tmp_path / "plot.svg")
        results.append(summary["mode"])
        edges, stats = _graph_reference(store)
        assert read_edges(store).equals(edges), day
        at = summary["whole_graph_at"]
        if (at["nodes"], at["edges"]) == (stats["nodes"], stats["edges"]):
            whole = stats  # computed on this graph: exact
            refreshed.append(day)
        else:  # the last ones computed, on a graph within WHOLE_GRAPH_REFRESH of this one
            assert whole_graph_always == 0
            assert abs(at["edges"] - stats["edges"]) <= citation_graph.WHOLE_GRAPH_REFRESH * at["edges"]
        for key, value in stats.items():
            if key != "edges_outside":
                expect = whole[key] if key in citation_graph.WHOLE_GRAPH_STATS else value
                assert summary[key] == pytest.approx(expect, nan_ok=True), (day, key)
        assert summary["via"] == dict(edges.group_by("via").len().iter_rows())
        assert (tmp_path / "plot.svg").read_bytes() == degree_plot_svg(edges, _graph_nodes(store)), day
    assert results == ["full"] + ["incremental"] * 8
    assert len(refreshed) == 9 if whole_graph_always else 1 < len(refreshed) < 9, refreshed
    assert update_graph(store.home)["mode"] == "unchanged" and update_graph(store.home)["nodes"] > 0
    # an unchanged graph still draws its plot where there is none yet (a store upgraded to SVG)
    fresh = tmp_path / "fresh.svg"
    assert update_graph(store.home, plot=fresh)["mode"] == "unchanged"
    assert fresh.read_bytes() == (tmp_path / "plot.svg").read_bytes()
    # a day that changes no other day's edges: only it is built
    store.write_partition("papers", "2021-03-09", papers_frame([{"id": "2103.09999", "kept": False}]))
    store.write_partition("bib_entries", "2021-03-09", bib_frame([]))
    update_links(store.home)
    summary = update_graph(store.home)
    assert summary["mode"] == "incremental" and summary["days_built"] == 1
    assert read_edges(store).equals(_graph_reference(store)[0])
    assert (tmp_path / "plot.svg").read_bytes().startswith(b"<svg ")


def test_kept_degrees_drop_the_edges_of_a_node_that_left_before_the_links_caught_up(tmp_path):
    """A paper delivered again as not kept stops being a node; a day whose links still name it
    (citation_links not run yet) is not built again, so its rows still count it: the kept degrees
    notice and count from the rows, and the statistics equal a graph built from scratch."""
    import shutil

    from corpus.graph.citation_graph import STATE_DIR, update_graph
    from corpus.graph.citation_links import update_links
    from corpus.papers.bibliography import bib_frame
    from corpus.papers.metadata import papers_frame
    from corpus.papers.normalize import normalize_title
    from corpus.store import Store

    store = Store(tmp_path / "data")
    titles = {f"2103.{i:05d}": f"graph neural network paper number {i} about dark matter" for i in range(6)}

    def paper(pid: str, kept: bool = True) -> dict:
        return {"id": pid, "title": titles[pid], "norm_title": normalize_title(titles[pid]), "kept": kept}

    def cites(pid: str, targets: list[str]) -> list[dict]:
        return [{"entry_id": f"{pid}#b{k}", "citing_id": pid, "ref_id": f"b{k}", "title": titles[t],
                 "norm_title": normalize_title(titles[t]), "mentions": 1} for k, t in enumerate(targets)]  # fmt: skip

    ids = list(titles)
    store.write_partition("papers", "2021-03-01", papers_frame([paper(p) for p in ids[:3]]))
    store.write_partition(
        "bib_entries", "2021-03-01", bib_frame(cites(ids[0], ids[1:3]) + cites(ids[1], [ids[2]]))
    )
    store.write_partition("papers", "2021-03-02", papers_frame([paper(p) for p in ids[3:]]))
    store.write_partition(
        "bib_entries", "2021-03-02", bib_frame(cites(ids[3], ids[:3]) + cites(ids[4], [ids[5]]))
    )
    update_links(store.home)
    assert update_graph(store.home)["edges"] == 7  # 0->1 0->2 1->2 3->0 3->1 3->2 4->5
    # ids[2] delivered again, not kept; the links are not brought up to date first
    store.write_partition("papers", "2021-03-03", papers_frame([paper(ids[2], kept=False)]))
    store.write_partition("bib_entries", "2021-03-03", bib_frame([]))
    summary = update_graph(store.home)
    # the new day and the one ids[2] left; not 2021-03-02, whose links still name it (3->2)
    assert summary["mode"] == "incremental" and summary["days_built"] == 2
    shutil.rmtree(store.asset_dir("citation_graph") / STATE_DIR)
    scratch = update_graph(store.home)
    assert scratch["mode"] == "full"
    for key in ("nodes", "edges", "mean_degree", "isolated_share", "wcc_share", "via"):
        assert summary[key] == scratch[key], key
    assert summary["edges"] == 4  # 0->1 3->0 3->1 4->5: the three into ids[2] left with it


def test_patched_days_give_the_bytes_of_a_build(tmp_path, monkeypatch):
    """A day whose own inputs did not change is patched (the rows of the papers that left it, or
    whose links or full-text targets changed, built again alone): after every new day the edge
    files are byte for byte those of a graph built from scratch, and most old days were patched."""
    import random
    import shutil

    from corpus.graph import citation_graph
    from corpus.graph.citation_graph import update_graph
    from corpus.graph.citation_links import update_links
    from corpus.papers.bibliography import bib_frame
    from corpus.papers.metadata import papers_frame
    from corpus.papers.normalize import normalize_title
    from corpus.store import Store

    patched = []
    real = citation_graph._patched_rows
    monkeypatch.setattr(
        citation_graph, "_patched_rows", lambda *a, **k: patched.append(a[1]) or real(*a, **k)
    )
    rng = random.Random(11)
    words = "graph neural network quantum field theory dark matter galaxy survey protein folding lens".split()
    title: dict[str, str] = {}
    bib: dict[str, list[str]] = {}
    store = Store(tmp_path / "data")

    def deliver(day: str, pids: list[str]) -> None:
        papers, entries, ft = [], [], []
        for pid in pids:
            papers.append({"id": pid, "title": title[pid], "norm_title": normalize_title(title[pid]),
                           "kept": rng.random() > 0.1, "drop_reason": None})  # fmt: skip
            for k, target in enumerate(bib[pid]):
                entries.append({"entry_id": f"{pid}#b{k}", "citing_id": pid, "ref_id": f"b{k}",
                                "title": title[target], "norm_title": normalize_title(title[target]),
                                "mentions": 1 + k % 3})  # fmt: skip
            if bib[pid]:
                ft.append({"citing_id": pid, "cited_id": bib[pid][0], "mentions": 2})
        store.write_partition("papers", day, papers_frame(papers))
        store.write_partition("bib_entries", day, bib_frame(entries))
        schema = {"citing_id": pl.String, "cited_id": pl.String, "mentions": pl.Int64}
        store.write_partition("fulltext_ids", day, pl.DataFrame(ft, schema=schema))

    for d in range(1, 10):
        day = f"2021-04-{d:02d}"
        new = [f"2104.{d:02d}{i:03d}" for i in range(12)]
        for pid in new:
            title[pid] = " ".join(rng.sample(words, 6))
            bib[pid] = rng.sample(sorted(title), min(len(title), rng.randint(0, 6)))
        again = rng.sample(sorted(set(title) - set(new)), min(4, len(title) - len(new)))
        for pid in again[:1]:  # a new version with another title: entries citing it link again
            title[pid] = " ".join(rng.sample(words, 6))
        deliver(day, new + again)
        update_links(store.home)
        update_graph(store.home)
        built = {p.name: p.read_bytes() for p in store.asset_dir("citation_graph").glob("edges-*.parquet")}
        scratch = Store(tmp_path / f"scratch-{d}")
        for asset in ("papers", "bib_entries", "fulltext_ids"):
            shutil.copytree(store.asset_dir(asset), scratch.asset_dir(asset))
        update_links(scratch.home)
        assert update_graph(scratch.home)["mode"] == "full"
        expect = {p.name: p.read_bytes() for p in scratch.asset_dir("citation_graph").glob("edges-*.parquet")}
        assert built.keys() == expect.keys() and all(built[k] == expect[k] for k in built), day
    assert len(patched) >= 10
    # a full build's days shared out over two processes: the same files
    monkeypatch.setattr(citation_graph, "_DAYS_PER_WORKER", 2)
    monkeypatch.setattr(citation_graph, "available_cpus", lambda: 2)
    calls = []
    real_map = citation_graph.map_ordered
    monkeypatch.setattr(
        citation_graph,
        "map_ordered",
        lambda fn, items, w, **k: calls.append(w) or real_map(fn, items, w, **k),
    )
    scratch = Store(tmp_path / "scratch-processes")
    for asset in ("papers", "bib_entries", "fulltext_ids"):
        shutil.copytree(store.asset_dir(asset), scratch.asset_dir(asset))
    update_links(scratch.home)
    assert update_graph(scratch.home)["mode"] == "full" and calls == [2]
    spread = {p.name: p.read_bytes() for p in scratch.asset_dir("citation_graph").glob("edges-*.parquet")}
    assert spread.keys() == built.keys() and all(spread[k] == built[k] for k in built)
