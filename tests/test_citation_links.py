"""citation_links over days: the latest delivery of a paper decides, and days that re-deliver
old papers (new arXiv versions) are linked incrementally with the same links as a full run."""

from __future__ import annotations

import json
import random
import shutil

import polars as pl
import pytest

from corpus.graph.citation_links import (
    ASSET,
    CHUNK_ENTRIES,
    STATE_DIR,
    links_by_definition,
    read_links,
    update_links,
)
from corpus.papers.bibliography import bib_frame
from corpus.papers.metadata import papers_frame
from corpus.papers.normalize import normalize_title
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


def _full_run(store: Store, **kwargs) -> tuple[pl.DataFrame, dict]:
    """The links and summary of a first run over the same days (in a copy of the store without links)."""
    copy = Store(store.home.parent / f"{store.home.name}-full")
    shutil.rmtree(copy.home, ignore_errors=True)
    shutil.copytree(store.home, copy.home, ignore=shutil.ignore_patterns(ASSET))
    summary = update_links(copy.home, **kwargs)
    assert summary["mode"] == "full"
    return read_links(copy), summary | {"stats": _stats(copy)}


def _stats(store: Store) -> pl.DataFrame:
    """Every shard's per-day counts per field (its state's ``stats`` table), in one order."""
    frames = []
    for state in sorted((store.asset_dir(ASSET) / STATE_DIR).glob("shard-*/state.json")):
        name = json.loads(state.read_text())["stats"]
        frames.append(pl.read_ipc(state.parent / name, memory_map=False))
    return pl.concat(frames).group_by("day", "field", "measure").agg(pl.col("n").sum()).sort(pl.all())


def _full_links(store: Store, **kwargs) -> pl.DataFrame:
    """What a first run over the same days gives."""
    return _full_run(store, **kwargs)[0]


def _reference(store: Store) -> pl.DataFrame:
    return links_by_definition(store.home)


def _latest_days(store: Store) -> dict[str, str]:
    days = sorted(set(store.partitions("papers")) & set(store.partitions("bib_entries")))
    rows = pl.concat(
        [store.read_partition("papers", d).select("id").with_columns(pl.lit(d).alias("day")) for d in days]
    )
    return dict(rows.group_by("id").agg(pl.col("day").max()).iter_rows())


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
    assert links.equals(_full_links(store)) and links.equals(_reference(store))
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
    assert links.equals(_full_links(store)) and links.equals(_reference(store))
    cited = dict(zip(links["entry_id"], links["cited_id"], strict=True))
    assert "2101.00002#b0" not in cited and cited["2101.00005#b0"] == "2101.00004"
    latest = _latest_days(store)
    assert latest["2101.00002"] == "2021-01-05" and latest["2101.00005"] == "2021-01-03"

    # Day 4: only a paper that is dropped at once: no day file is rewritten
    files = sorted(store.asset_dir(ASSET).glob("date=*/part-*.parquet"))
    before = {p: p.stat().st_mtime_ns for p in files}
    _day(store, "2021-01-06", [_paper("2101.00006", "Un article en francais", kept=False)], [])
    summary = update_links(tmp_path, chunk_entries=chunk)
    assert summary["mode"] == "incremental" and summary["days_rewritten"] == 0
    assert read_links(store).equals(links)
    assert {p: p.stat().st_mtime_ns for p in files} == before

    # Day 5: 2101.00006 again, now kept: old entries that cite its title link to it, and only
    # the day file holding them is rewritten
    _day(store, "2021-01-07", [_paper("2101.00006", TITLES["2101.00002"])], [])
    summary = update_links(tmp_path, chunk_entries=chunk)
    assert summary["mode"] == "incremental" and summary["changed"] >= 1
    links = read_links(store)
    assert links.equals(_reference(store))
    assert dict(zip(links["entry_id"], links["cited_id"], strict=True))["2101.00001#b0"] == "2101.00006"


def _random_day(rng: random.Random, ids: list[str], title: dict[str, str], words: list[str], n: int):
    papers, entries = [], []
    for pid in rng.sample(ids, n):
        if rng.random() < 0.3:
            title[pid] = " ".join(rng.sample(words, rng.randint(4, 8)))
        doi = f"10.1000/{pid}" if rng.random() < 0.3 else None
        papers.append(_paper(pid, title[pid], kept=rng.random() > 0.15) | {"doi": doi})
        for k in range(rng.randint(0, 6)):
            target = rng.choice(ids)
            row = _entry(pid, k, title[target] if rng.random() < 0.8 else target.upper())
            if rng.random() < 0.2:
                row["arxiv_id"] = f"arXiv:{target}" if rng.random() < 0.5 else target
            if rng.random() < 0.2:
                row["doi"] = f"https://doi.org/10.1000/{target}"
            entries.append(row)
    return papers, entries


@pytest.mark.parametrize(("n_shards", "chunk"), [(1, 7), (3, CHUNK_ENTRIES)])
def test_random_days_incremental_equals_full(tmp_path, n_shards, chunk):
    """Sixty papers over eight days materialised out of order, a third delivered again (title,
    DOI and filter changes), one day re-materialised with other content, one deleted, one
    re-written with the same bytes: after every step, incremental == full == the definition."""
    rng = random.Random(7 + n_shards)
    words = (
        "graph neural network language model learning deep sparse attention quantum field "
        "theory dark matter galaxy survey protein folding spectral method optimal transport".split()
    )
    title = {f"2101.{i:05d}": " ".join(rng.sample(words, rng.randint(4, 8))) for i in range(60)}
    ids = sorted(title)
    store = Store(tmp_path / "data")
    days = [f"2021-02-{d:02d}" for d in (3, 1, 5, 2, 6, 4, 8, 7)]
    modes = []
    for day in days + ["again", "delete", "same"]:
        if day == "again":  # an old day comes back with other papers and entries
            day = days[1]
            _day(store, day, *_random_day(rng, ids, title, words, 18))
        elif day == "delete":  # a day disappears: its papers fall back to earlier deliveries
            shutil.rmtree(store.partition_dir("papers", days[4]))
        elif day == "same":  # re-materialised with the same content: nothing to do
            frame = store.read_partition("papers", days[2])
            store.write_partition("papers", days[2], frame)
        else:
            _day(store, day, *_random_day(rng, ids, title, words, 18))
        summary = update_links(store.home, n_shards=n_shards, chunk_entries=chunk)
        modes.append(summary["mode"])
        links = read_links(store)
        assert links.equals(_reference(store)), day
        full, full_summary = _full_run(store, n_shards=n_shards, chunk_entries=chunk)
        assert links.equals(full), day
        assert summary["by_field"] == full_summary["by_field"], day  # Table 4 per field, kept per day
        assert _stats(store).equals(full_summary["stats"]), day
        assert summary["links"] == links.height
        assert summary["via"] == dict(links.group_by("via").len().iter_rows())
    assert modes == ["full"] + ["incremental"] * 9 + ["unchanged"]
    assert read_links(store).height > 50
    assert {p.name for p in store.asset_dir(ASSET).glob("date=*/*.parquet")} <= {
        f"part-{s}.parquet" for s in range(n_shards)
    }


def test_shards_union_equals_one_shard(tmp_path):
    rng = random.Random(3)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    title = {f"2102.{i:05d}": " ".join(rng.sample(words, rng.randint(4, 7))) for i in range(80)}
    one, many = Store(tmp_path / "one"), Store(tmp_path / "many")
    for d in range(4):
        papers, entries = _random_day(rng, sorted(title), title, words, 25)
        for store in (one, many):
            _day(store, f"2021-03-{d + 1:02d}", papers, entries)
        update_links(one.home, n_shards=1)
        summary = update_links(many.home, n_shards=4)
        assert summary["shards"] == 4
        assert read_links(many).equals(read_links(one))
    shards = {p.name for p in many.asset_dir(ASSET).glob("date=*/part-*.parquet")}
    assert len(shards) > 1
    # another number of shards: everything is laid out again, with the same links
    assert update_links(many.home, n_shards=2)["mode"] == "full"
    assert read_links(many).equals(read_links(one))
    assert {p.name for p in many.asset_dir(ASSET).glob("date=*/part-*.parquet")} <= {
        "part-0.parquet",
        "part-1.parquet",
    }


def test_link_shard_needs_the_layout(tmp_path):
    from corpus.graph.citation_links import link_shard, prepare_links

    store = Store(tmp_path)
    _day(store, "2021-01-04", [_paper("2101.00001"), _paper("2101.00002")],
         [_entry("2101.00001", 0, TITLES["2101.00002"])])  # fmt: skip
    with pytest.raises(ValueError, match="prepare_links"):
        link_shard(tmp_path, 0, 2)
    assert prepare_links(tmp_path, 2) and not prepare_links(tmp_path, 2)
    with pytest.raises(ValueError, match="not in 0..1"):
        link_shard(tmp_path, 2, 2)
    summaries = [link_shard(tmp_path, s, 2) for s in (1, 0)]
    assert sum(s["links"] for s in summaries) == 1


def test_a_crash_between_state_and_files_is_finished_by_the_next_run(tmp_path, monkeypatch):
    from corpus.graph import citation_links

    store = Store(tmp_path)
    _day(store, "2021-01-04", [_paper("2101.00001"), _paper("2101.00002")],
         [_entry("2101.00001", 0, TITLES["2101.00003"])])  # fmt: skip
    update_links(tmp_path)
    _day(store, "2021-01-05", [_paper("2101.00003"), _paper("2101.00004")],
         [_entry("2101.00004", 0, TITLES["2101.00001"])])  # fmt: skip
    real = citation_links._Shard._apply
    calls = []

    def crash(self, pending):
        calls.append(1)
        if len(calls) == 1:
            raise OSError("power cut")
        real(self, pending)

    monkeypatch.setattr(citation_links._Shard, "_apply", crash)
    with pytest.raises(OSError, match="power cut"):
        update_links(tmp_path)
    assert read_links(store).height == 0 or not read_links(store).equals(_reference(store))
    # the state names the new files; the next run publishes them before anything else
    assert update_links(tmp_path)["mode"] == "unchanged"
    assert read_links(store).equals(_reference(store)) and read_links(store).height == 2
    # a run that died before its commit leaves temporary files the next run removes
    _day(store, "2021-01-06", [_paper("2101.00005", TITLES["2101.00003"])], [])
    monkeypatch.setattr(citation_links, "_DayEdits", None)  # fails inside the run
    with pytest.raises(TypeError):
        update_links(tmp_path)
    monkeypatch.undo()
    assert update_links(tmp_path)["mode"] == "incremental"
    assert read_links(store).equals(_reference(store))
    assert not list(store.asset_dir(ASSET).glob("date=*/.part-*"))


def test_state_of_an_older_format_means_a_full_run(tmp_path):
    store = Store(tmp_path)
    _day(store, "2021-01-04", [_paper("2101.00001"), _paper("2101.00002")],
         [_entry("2101.00001", 0, TITLES["2101.00002"])])  # fmt: skip
    update_links(tmp_path)
    assert update_links(tmp_path)["mode"] == "unchanged"
    path = store.asset_dir(ASSET) / STATE_DIR / "shard-0" / "state.json"
    state = json.loads(path.read_text())
    path.write_text(json.dumps({**state, "version": 3}))
    assert update_links(tmp_path)["mode"] == "full"
    path.write_text("{not json")
    assert update_links(tmp_path)["mode"] == "full"
    assert read_links(store).height == 1
    # the layout of an older version (one state file beside the day files) is replaced
    (store.asset_dir(ASSET) / STATE_DIR / "layout.json").unlink()
    (store.asset_dir(ASSET) / "_state.json").write_text("{}")
    assert update_links(tmp_path)["mode"] == "full"
    assert not (store.asset_dir(ASSET) / "_state.json").exists() and read_links(store).height == 1


def test_full_run_equals_link_entries_on_the_latest_deliveries(tmp_path):
    store = Store(tmp_path)
    _day(store, "2021-01-04", [_paper("2101.00001"), _paper("2101.00002")],
         [_entry("2101.00001", 0, TITLES["2101.00002"])])  # fmt: skip
    _day(store, "2021-01-05", [_paper("2101.00001", kept=False)], [])
    assert update_links(tmp_path)["mode"] == "full"
    links = read_links(store)
    assert links.height == 0  # the citing paper's latest version was dropped: no references left


def test_counts_per_field_follow_an_ambiguous_entry_to_its_papers_new_day(tmp_path):
    """A paper whose entry is ambiguous (its publication names two papers) is delivered again on
    a later day under another field: each day's counts (kept per day, moved by what changed)
    equal a full run's, the ambiguous entry counted on its new day only."""
    from corpus.papers.bibliography import bib_rows

    store = Store(tmp_path / "data")
    jr = "Astrophys.J.663:573-582,2007"

    def paper(pid: str, field: str, journal_ref: str | None = None) -> dict:
        return {"id": pid, "title": f"Paper {pid}", "norm_title": normalize_title(f"Paper {pid}"), "kept": True,
                "journal_ref": journal_ref, "field_of_study": field, "drop_reason": None}  # fmt: skip

    citing = bib_frame(bib_rows("2301.00001", {"bib_entries": {"b0": {"ref_id": "b0", "raw_text": "C. Author, ApJ 663, 573 (2007)"}}}))  # fmt: skip
    empty = bib_frame([])
    store.write_partition("papers", "2023-01-01", papers_frame([paper("0704.0059", "Physics", jr), paper("0704.9999", "Physics", jr)]))  # fmt: skip
    store.write_partition("bib_entries", "2023-01-01", empty)
    store.write_partition("papers", "2023-01-02", papers_frame([paper("2301.00001", "Physics")]))
    store.write_partition("bib_entries", "2023-01-02", citing)
    assert update_links(store.home)["by_field"]["Physics"]["ambiguous_publication"] == 1
    store.write_partition("papers", "2023-01-03", papers_frame([paper("2301.00001", "Mathematics")]))
    store.write_partition("bib_entries", "2023-01-03", citing)
    summary = update_links(store.home)
    full, full_summary = _full_run(store)
    assert summary["mode"] == "incremental" and read_links(store).equals(full)
    assert summary["by_field"] == full_summary["by_field"]
    assert summary["by_field"]["Mathematics"] == {"entries": 1, "ambiguous_publication": 1}
    assert _stats(store).equals(full_summary["stats"])


def test_a_new_day_rewrites_only_the_day_files_whose_links_change(tmp_path):
    """A new day rewrites the day a revised paper moves away from, the day whose entry now links
    to one of its papers, and its own day; every other day file is left as it was (same bytes,
    same mtime), and the links equal a full rebuild's."""
    store = Store(tmp_path / "data")
    title = {
        "2101.00011": "Graph neural networks for molecules",
        "2101.00012": "Protein folding with attention",
        "2101.00021": "Dark matter in dwarf galaxies",
        "2101.00022": "Galaxy surveys and weak lensing",
        "2101.00031": "Quantum error correction codes",
        "2101.00032": "Topological phases of matter",
        "2101.00041": "Optimal transport for generative models",
    }
    _day(store, "2021-01-01", [_paper("2101.00011", title["2101.00011"]), _paper("2101.00012", title["2101.00012"])],
         [_entry("2101.00011", 0, title["2101.00012"])])  # fmt: skip
    _day(store, "2021-01-02", [_paper("2101.00021", title["2101.00021"]), _paper("2101.00022", title["2101.00022"])],
         [_entry("2101.00021", 0, title["2101.00022"]), _entry("2101.00022", 0, title["2101.00021"])])  # fmt: skip
    _day(store, "2021-01-03", [_paper("2101.00031", title["2101.00031"]), _paper("2101.00032", title["2101.00032"])],
         [_entry("2101.00031", 0, title["2101.00032"]),
          _entry("2101.00031", 1, title["2101.00041"])])  # fmt: skip  # not in the corpus yet
    assert update_links(store.home)["mode"] == "full"
    files = {d: store.asset_dir(ASSET) / f"date={d}" / "part-0.parquet" for d in ("2021-01-01", "2021-01-02", "2021-01-03")}  # fmt: skip
    before = {d: (p.stat().st_mtime_ns, p.read_bytes()) for d, p in files.items()}

    # a new paper that a 2021-01-03 entry cites, and a new version of 2101.00022 (same title):
    # its bibliography leaves 2021-01-02 for the new day
    _day(store, "2021-01-04", [_paper("2101.00041", title["2101.00041"]), _paper("2101.00022", title["2101.00022"])],
         [_entry("2101.00041", 0, title["2101.00011"]), _entry("2101.00022", 0, title["2101.00031"])])  # fmt: skip
    summary = update_links(store.home)
    assert summary["mode"] == "incremental" and summary["days_rewritten"] == 3
    after = {d: (p.stat().st_mtime_ns, p.read_bytes()) for d, p in files.items()}
    assert after["2021-01-01"] == before["2021-01-01"]  # nothing of it changed: not rewritten
    assert after["2021-01-02"] != before["2021-01-02"] and after["2021-01-03"] != before["2021-01-03"]
    links = read_links(store)
    assert links.equals(_full_links(store)) and links.equals(_reference(store))
    cited = dict(zip(links["entry_id"], links["cited_id"], strict=True))
    assert cited["2101.00031#b1"] == "2101.00041" and cited["2101.00022#b0"] == "2101.00031"
    by_day = {p.parent.name[5:]: pl.read_parquet(p)["entry_id"].to_list() for p in store.asset_dir(ASSET).glob("date=*/part-0.parquet")}  # fmt: skip
    assert by_day["2021-01-02"] == ["2101.00021#b0"] and "2101.00022#b0" in by_day["2021-01-04"]
