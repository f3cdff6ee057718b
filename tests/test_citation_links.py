"""citation_links over days: the latest delivery of a paper decides, and days that re-deliver
old papers (new arXiv versions) are linked incrementally with the same links as a full run."""

from __future__ import annotations

import json
import random

import polars as pl
import pytest

from corpus.bibliography import bib_frame
from corpus.citation_links import (
    ASSET,
    CHUNK_ENTRIES,
    STATE_FILE,
    latest_delivery,
    read_links,
    read_state,
    update_links,
)
from corpus.linking import normalize_title
from corpus.metadata import papers_frame
from corpus.store import Store

TITLES = {
    "2101.00001": "Attention is all you need for graphs",
    "2101.00002": "Contrastive learning of sentence embeddings",
    "2101.00003": "Scaling laws for neural language models",
    "2101.00004": "A survey of retrieval augmented generation",
    "2101.00005": "Sparse mixtures of experts at scale",
}


def _paper(pid: str, title: str | None = None, kept: bool = True) -> dict:
    title = title or TITLES[pid]
    return {"id": pid, "title": title, "norm_title": normalize_title(title), "kept": kept,
            "drop_reason": None if kept else "not_english"}  # fmt: skip


def _entry(citing: str, k: int, title: str) -> dict:
    return {"entry_id": f"{citing}#b{k}", "citing_id": citing, "ref_id": f"b{k}",
            "title": title, "norm_title": normalize_title(title)}  # fmt: skip


def _day(store: Store, day: str, papers: list[dict], entries: list[dict]) -> None:
    store.write_partition("papers", day, papers_frame(papers))
    store.write_partition("bib_entries", day, bib_frame(entries))


def _full_links(store: Store, **kwargs) -> pl.DataFrame:
    """What a first run over the same days gives (in a copy of the store without links)."""
    import shutil

    copy = Store(store.home.parent / f"{store.home.name}-full")
    shutil.rmtree(copy.home, ignore_errors=True)
    shutil.copytree(store.home, copy.home, ignore=shutil.ignore_patterns(ASSET))
    summary = update_links(copy.home, **kwargs)
    assert summary["mode"] == "full"
    return read_links(copy)


@pytest.mark.parametrize("chunk", [CHUNK_ENTRIES, 1])
def test_redelivered_papers_are_linked_incrementally_and_the_latest_delivery_decides(tmp_path, chunk):
    store = Store(tmp_path)
    _day(store, "2021-01-04", [_paper("2101.00001"), _paper("2101.00002"), _paper("2101.00003")], [
        _entry("2101.00001", 0, TITLES["2101.00002"]),
        _entry("2101.00001", 1, TITLES["2101.00003"]),
        _entry("2101.00002", 0, TITLES["2101.00003"]),
        _entry("2101.00003", 0, TITLES["2101.00004"]),  # not in the corpus yet
    ])  # fmt: skip
    assert update_links(tmp_path, chunk_entries=chunk)["mode"] == "full"

    # Day 2: 2101.00004 is new; 2101.00002 comes back as a new version that fails a filter
    # (no entries); 2101.00003 comes back with a new title and bibliography.
    renamed = "Scaling laws for autoregressive generative modeling"
    _day(store, "2021-01-05", [_paper("2101.00004"), _paper("2101.00002", kept=False),
                               _paper("2101.00003", renamed)], [
        _entry("2101.00004", 0, TITLES["2101.00001"]),
        _entry("2101.00003", 5, TITLES["2101.00001"]),
    ])  # fmt: skip
    summary = update_links(tmp_path, chunk_entries=chunk)
    assert summary["mode"] == "incremental" and summary["new_entries"] == 2
    links = read_links(store)
    assert links.equals(_full_links(store))
    cited = dict(zip(links["entry_id"], links["cited_id"], strict=True))
    assert "2101.00002#b0" not in cited  # the dropped version's old bibliography is gone
    assert "2101.00001#b0" not in cited  # nothing links to a paper that left the corpus
    assert cited["2101.00003#b5"] == "2101.00001" and "2101.00003#b0" not in cited  # new bibliography
    assert cited["2101.00004#b0"] == "2101.00001"
    assert "2101.00001#b1" not in cited  # 2101.00003's title changed: the old title no longer matches

    # Day 3, materialised late: an *older* day re-delivering 2101.00002 as kept. The later
    # delivery (2021-01-05, dropped) still decides; 2101.00005 is new.
    _day(store, "2021-01-03", [_paper("2101.00002"), _paper("2101.00005")], [
        _entry("2101.00002", 0, TITLES["2101.00003"]),
        _entry("2101.00005", 0, TITLES["2101.00004"]),
    ])  # fmt: skip
    assert update_links(tmp_path, chunk_entries=chunk)["mode"] == "incremental"
    links = read_links(store)
    assert links.equals(_full_links(store))
    cited = dict(zip(links["entry_id"], links["cited_id"], strict=True))
    assert "2101.00002#b0" not in cited and cited["2101.00005#b0"] == "2101.00004"
    latest = dict(latest_delivery(store, store.partitions("papers")).iter_rows())
    assert latest["2101.00002"] == "2021-01-05" and latest["2101.00005"] == "2021-01-03"

    # Day 4: only a paper that is dropped at once: old days are carried over as they are
    before = {p.name: p.stat().st_ino for p in store.asset_dir(ASSET).glob("date=*/part-0.parquet")}
    _day(store, "2021-01-06", [_paper("2101.00006", "Un article en francais", kept=False)], [])
    assert update_links(tmp_path, chunk_entries=chunk)["mode"] == "incremental"
    assert read_links(store).equals(links)
    after = {p.name: p.stat().st_ino for p in store.asset_dir(ASSET).glob("date=*/part-0.parquet")}
    assert after == before  # hard links: nothing rewritten


def test_random_days_incremental_equals_full(tmp_path):
    """Sixty papers over six days, a third delivered again (title changes, drops), entries
    that copy titles with noise or cite arXiv ids: after every day, incremental == full."""
    rng = random.Random(7)
    words = (
        "graph neural network language model learning deep sparse attention quantum field "
        "theory dark matter galaxy survey protein folding spectral method optimal transport".split()
    )
    title = {f"2101.{i:05d}": " ".join(rng.sample(words, rng.randint(4, 8))) for i in range(60)}
    ids = sorted(title)
    store = Store(tmp_path)
    days = [f"2021-02-{d:02d}" for d in (3, 1, 5, 2, 6, 4)]  # materialised out of order
    for n, day in enumerate(days):
        papers, entries = [], []
        for pid in rng.sample(ids, 18):
            if rng.random() < 0.3:
                title[pid] = " ".join(rng.sample(words, rng.randint(4, 8)))
            papers.append(_paper(pid, title[pid], kept=rng.random() > 0.15))
            for k in range(rng.randint(0, 5)):
                target = rng.choice(ids)
                row = _entry(pid, k, title[target] if rng.random() < 0.8 else target.upper())
                if rng.random() < 0.2:
                    row["arxiv_id"] = target
                entries.append(row)
        _day(store, day, papers, entries)
        summary = update_links(tmp_path, chunk_entries=7)
        assert summary["mode"] == ("full" if n == 0 else "incremental")
        links = read_links(store)
        assert links.equals(_full_links(store)), day
    assert read_links(store).height > 50


def test_state_of_an_older_format_means_a_full_run(tmp_path):
    store = Store(tmp_path)
    _day(store, "2021-01-04", [_paper("2101.00001"), _paper("2101.00002")],
         [_entry("2101.00001", 0, TITLES["2101.00002"])])  # fmt: skip
    update_links(tmp_path)
    assert update_links(tmp_path)["mode"] == "unchanged"
    path = store.asset_dir(ASSET) / STATE_FILE
    state = json.loads(path.read_text())
    path.write_text(json.dumps({**state, "version": 2}))
    assert read_state(store) is None
    assert update_links(tmp_path)["mode"] == "full"
    path.write_text("{not json")
    assert update_links(tmp_path)["mode"] == "full"
    assert read_links(store).height == 1


def test_full_run_equals_link_entries_on_the_latest_deliveries(tmp_path):
    store = Store(tmp_path)
    _day(store, "2021-01-04", [_paper("2101.00001"), _paper("2101.00002")],
         [_entry("2101.00001", 0, TITLES["2101.00002"])])  # fmt: skip
    _day(store, "2021-01-05", [_paper("2101.00001", kept=False)], [])
    assert update_links(tmp_path)["mode"] == "full"
    links = read_links(store)
    assert links.height == 0  # the citing paper's latest version was dropped: no references left


def test_graph_inputs_come_from_the_latest_delivery(tmp_path):
    from corpus.citation_links import fulltext_links, graph_nodes, link_rows

    store = Store(tmp_path)
    assert graph_nodes(store).to_list() == [] and fulltext_links(store, "fulltext_ids") is None
    first = [_entry("2101.00001", 0, TITLES["2101.00002"]) | {"mentions": 3}]
    _day(store, "2021-01-04", [_paper("2101.00001"), _paper("2101.00002"), _paper("2101.00003")], first)
    # 2101.00001 again, same bibliography (same entry ids), now cited twice; 2101.00003 dropped
    again = [_entry("2101.00001", 0, TITLES["2101.00002"]) | {"mentions": 2}]
    _day(store, "2021-01-05", [_paper("2101.00001"), _paper("2101.00003", kept=False)], again)
    ft = {"citing_id": ["2101.00001"], "cited_id": ["2101.00002"], "mentions": [4]}
    store.write_partition("fulltext_ids", "2021-01-04", pl.DataFrame(ft))
    store.write_partition("fulltext_ids", "2021-01-05", pl.DataFrame(ft | {"mentions": [1]}))
    assert graph_nodes(store).to_list() == ["2101.00001", "2101.00002"]
    update_links(tmp_path)
    rows = link_rows(store).select("citing_id", "cited_id", "mentions").rows()
    assert rows == [("2101.00001", "2101.00002", 2)]  # once, with the latest day's mentions
    assert fulltext_links(store, "fulltext_ids").rows() == [("2101.00001", "2101.00002", 1)]
