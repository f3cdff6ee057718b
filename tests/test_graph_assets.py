"""citation_links (incremental == full) and citation_graph on real landing papers that cite each other."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from corpus.citation_links import read_links, read_state
from corpus.linking import link_entries
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
        for day in LATER:
            assert _daily(store, instance, day).success
        second = _graph(store, instance)
        assert _daily(store, instance, LATER[-1]).success  # a day re-materialised
        third = _graph(store, instance)
        fourth = _graph(store, instance)  # nothing changed
        assert _meta(fourth, "citation_links")["mode"].value == "unchanged"
        assert _meta(fourth, "citation_graph")["mode"].value == "unchanged"
        assert _meta(third, "citation_graph")["mode"].value == "full"
        yield home, first, second, third


def _meta(result, asset):
    return result.asset_materializations_for_node(asset)[0].metadata


def test_incremental_equals_full_recomputation(runs):
    home, first, second, third = runs
    assert _meta(first, "citation_links")["mode"].value == "full"
    assert _meta(second, "citation_links")["mode"].value == "incremental"
    assert _meta(third, "citation_links")["mode"].value == "full"  # a changed day: recompute everything
    links, state = read_links(Store(home)), read_state(Store(home))
    assert sorted(state) == sorted(FIRST + LATER)
    entries = pl.read_parquet(home / "bib_entries" / "date=*" / "*.parquet")
    papers = (
        pl.read_parquet(home / "papers" / "date=*" / "*.parquet")
        .filter(pl.col("kept"))
        .select(pl.col("id").alias("paper_id"), "doi", "norm_title")
    )
    full = link_entries(entries.select("entry_id", "citing_id", "arxiv_id", "doi", "norm_title"), papers)
    assert links.sort("entry_id").equals(full.sort("entry_id"))
    second_links = _meta(second, "citation_links")["links"].value
    assert second_links == full.height


def test_graph_edges_and_statistics(runs):
    home, _, second, _ = runs
    edges = pl.read_parquet(home / "citation_graph" / "part-0.parquet")
    pairs = set(edges.select("citing_id", "cited_id").iter_rows())
    assert ("2111.09883", "2103.14030") in pairs and ("2203.03605", "2111.09883") in pairs
    assert ("2004.07180", "1706.03762") in pairs  # found by title
    assert all(c != d for c, d in pairs)
    meta = _meta(second, "citation_graph")
    assert meta["nodes"].value == 8 and meta["edges"].value == len(pairs)
    assert meta["mean_degree"].value == pytest.approx(2 * len(pairs) / 8, abs=1e-3)
    assert 0 < meta["wcc_share"].value <= 1
    ours, paper = (r.data for r in meta["table_2"].value.records)  # Table 2: our row beside the paper's
    assert ours["dataset"] == "this corpus" and ours["edges"] == str(len(pairs))
    assert paper["alpha_in"] == "2.93" and paper["wcc_pct"] == "62"
    png = Path(meta["degree_plot_path"].value)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
