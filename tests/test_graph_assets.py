"""citation_links (incremental, day by day, == full) and citation_graph on real landing papers that cite
each other."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from corpus.graph.citation_graph import read_edges
from corpus.graph.citation_links import links_by_definition, read_links
from corpus.store import Store
from corpus_assets.definitions import defs
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
FIRST = ["2020-01-23", "2021-08-17", "2022-04-11", "2023-08-02"]
LATER = ["2020-05-21", "2021-10-06", "2022-07-11", "2023-08-11"]


UPSTREAM = {
    "arxiv_metadata",
    "arxiv_pdfs",
    "arxiv_sources",
    "grobid_tei",
    "pdf_parses",
    "latex_parses",
    "papers",
}


def _daily(store, instance, day):
    assets = [a for a in defs.assets if {k.path[0] for k in a.keys} & (UPSTREAM | {"bib_entries"})]
    resources = {**defs.resources, "corpus": store, "arxiv": ArxivResource(source="landing")}
    return dg.materialize(assets, partition_key=day, resources=resources, instance=instance, run_config=QUIET)


def _graph(store, instance):
    assets = [a for a in defs.assets if a.partitions_def is None and a.key.path[0].startswith("citation")]
    return dg.materialize(assets, resources={"corpus": store}, instance=instance, run_config=QUIET)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, shared_landing):
    home = tmp_path_factory.mktemp("graph") / "data"
    store = CorpusStore(home=str(home), landing=str(shared_landing))
    with dg.instance_for_test() as instance:
        for day in FIRST:
            assert _daily(store, instance, day).success
        first = _graph(store, instance)
        later = []
        for day in LATER:  # day by day: each an incremental update, checked against the definition
            assert _daily(store, instance, day).success
            later.append(_graph(store, instance))
            assert read_links(Store(home)).equals(_reference(home)), day
        assert _daily(store, instance, LATER[-1]).success  # a day re-materialised
        third = _graph(store, instance)
        edges = read_edges(Store(home))
        # three link shards and two graph steps (dynamic steps of the two graph assets)
        os.environ.update({"CORPUS_LINK_SHARDS": "3", "CORPUS_GRAPH_SHARDS": "2"})
        try:
            sharded = _graph(store, instance)
        finally:
            del os.environ["CORPUS_LINK_SHARDS"], os.environ["CORPUS_GRAPH_SHARDS"]
        assert read_edges(Store(home)).equals(edges)
        yield home, first, later[-1], third, later, sharded


def _meta(result, asset):
    return result.asset_materializations_for_node(asset)[0].metadata


def _reference(home: Path) -> pl.DataFrame:
    return links_by_definition(home)


def test_incremental_equals_full_recomputation(runs):
    home, first, second, third, later, _ = runs
    assert _meta(first, "citation_links")["mode"].value == "full"
    assert [_meta(r, "citation_links")["mode"].value for r in later] == ["incremental"] * len(LATER)
    # the same day materialised again gives the same bytes: no work at all (content fingerprints)
    assert _meta(third, "citation_links")["mode"].value == "unchanged"
    assert _meta(third, "citation_graph")["mode"].value == "unchanged"
    links = read_links(Store(home))
    full = _reference(home)
    assert links.equals(full.sort("entry_id")) and full.height >= 10
    assert _meta(second, "citation_links")["links"].value == full.height


def test_shards_give_the_same_links(runs):
    home, *_, sharded = runs
    meta = _meta(sharded, "citation_links")
    assert meta["mode"].value == "full" and meta["shards"].value == 3  # laid out again, in 3 shards
    assert read_links(Store(home)).equals(_reference(home).sort("entry_id"))
    names = {p.name for p in (home / "citation_links").glob("date=*/*.parquet")}
    assert names <= {"part-0.parquet", "part-1.parquet", "part-2.parquet"} and len(names) > 1
    steps = {e.step_key for e in sharded.all_events if e.event_type_value == "STEP_START"}
    assert {s for s in steps if "link_one_shard" in s} == {
        f"citation_links.link_one_shard[shard_{k}_of_3]" for k in range(3)
    }


def test_graph_edges_and_statistics(runs):
    home, _, second, _, _, _ = runs
    edges = read_edges(Store(home))
    pairs = set(edges.select("citing_id", "cited_id").iter_rows())
    assert ("2111.09883", "2103.14030") in pairs and ("2203.03605", "2111.09883") in pairs
    assert ("2004.07180", "1706.03762") in pairs  # found by title
    assert all(c != d for c, d in pairs)
    meta = _meta(second, "citation_graph")
    assert meta["nodes"].value == 8 and meta["edges"].value == len(pairs)
    assert meta["dagster/row_count"].value == len(pairs)  # the asset overview's "Row count": the whole table
    label, _, *table = meta["preview"].value.splitlines()  # the first edges, saying of how many
    assert f"of {len(pairs)} edges" in label or label.startswith("citation\\_graph: all"), label
    assert len(table) == 2 + min(10, len(pairs))
    assert meta["mean_degree"].value == pytest.approx(2 * len(pairs) / 8, abs=1e-3)
    assert 0 < meta["wcc_share"].value <= 1
    ours, paper = (r.data for r in meta["table_2"].value.records)  # Table 2: our row beside the paper's
    assert ours["dataset"] == "this corpus" and ours["edges"] == str(len(pairs))
    assert paper["alpha_in"] == "2.93" and paper["wcc_pct"] == "62"
    svg = Path(meta["degree_plot_path"].value)
    assert svg.suffix == ".svg" and b"Degree distributions (8 nodes)" in svg.read_bytes()
    assert "data:image/svg+xml;base64," in meta["degree_plot"].value
