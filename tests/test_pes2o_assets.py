"""pes2o (daily) and pes2o_v1 / pes2o_v2 (releases) on real landing days, plus the
release writer on hand-made partitions (dedup across days, cutoff, shard bound, failures)."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import shutil
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from corpus.release import pes2o as lib
from corpus.release.pes2o_release import DOC_FIELDS, RULES, ReleaseSettings, release_dir, write_release
from corpus.release.pes2o_table import pes2o_day, pes2o_frame
from corpus.store import Store
from corpus_assets import files, ingest, papers, parse
from corpus_assets import pes2o as pes2o_assets
from corpus_assets.definitions import defs
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
# 2020-05-21: 2004.07180 (SPECTER, Grobid TEI in the landing zone, created 2020-04-15: train);
# 2020-07-06: 2007.03051 (Carbontracker, TEI, created 2020-07-06: valid, since cutoff 2020-07-31
# makes valid 2020-06-01 ... 2020-07-31); 2007-04-01: four metadata-only papers (s2ag only).
# AFTER is a day after the cutoff (1706.03762): materialised, never read by the releases.
DAYS = ("2020-05-21", "2007-04-01", "2020-07-06")
AFTER = "2023-08-02"
CUTOFF = "2020-07-31"
RELEASE_CONFIG = {
    **QUIET,
    "ops": {f"pes2o_{v}": {"config": {"cutoff": CUTOFF, "max_shard_bytes": 1 << 20}} for v in ("v1", "v2")},
}
ASSETS = dg.load_assets_from_modules([ingest, files, parse, papers, pes2o_assets])
DAILY = [
    a for a in ASSETS if a.partitions_def is not None and dg.AssetKey("bib_entries") not in a.keys
]  # not needed
RELEASES = [a for a in ASSETS if a.partitions_def is None]


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _jsonl(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _meta(result: dg.ExecuteInProcessResult, key: str) -> dict:
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key.path == [key]]
    return event.materialization.metadata


def _data_version(result: dg.ExecuteInProcessResult, key: str) -> str:
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key.path == [key]]
    return event.materialization.tags["dagster/data_version"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, shared_landing):
    """Two days, the releases (a full build), the third day, the releases again (incremental);
    then a day re-materialised with the same rows and a day after the cutoff, each followed by
    the releases (nothing to do). ``full`` is a build from scratch of a copy of the days."""
    home = tmp_path_factory.mktemp("pes2o") / "data"
    store = CorpusStore(home=str(home), landing=str(shared_landing))
    resources = {**defs.resources, "corpus": store, "arxiv": ArxivResource(source="landing")}
    out: dict = {"home": home}
    with dg.instance_for_test() as instance:

        def daily(day: str, assets=DAILY) -> None:
            res = dg.materialize(
                assets, partition_key=day, resources=resources, instance=instance, run_config=QUIET
            )
            assert res.success

        def releases() -> dg.ExecuteInProcessResult:
            res = dg.materialize(RELEASES, resources=resources, instance=instance, run_config=RELEASE_CONFIG)
            assert res.success
            return res

        for day in DAYS[:2]:
            daily(day)
        out["start"] = releases()
        daily(DAYS[2])
        out["first"] = releases()
        out["trees"] = {v: _tree(release_dir(home, v)) for v in ("v1", "v2")}
        daily("2020-05-21", [a for a in DAILY if dg.AssetKey("pes2o") in a.keys])  # the same rows again
        out["same_rows"] = releases()
        out["same_rows_trees"] = {v: _tree(release_dir(home, v)) for v in ("v1", "v2")}
        daily(AFTER)
        out["after"] = releases()
        out["after_trees"] = {v: _tree(release_dir(home, v)) for v in ("v1", "v2")}
    full = tmp_path_factory.mktemp("pes2o_full") / "data"
    shutil.copytree(home / "pes2o", full / "pes2o")
    for v in ("v1", "v2"):
        assert (
            write_release(full, v, ReleaseSettings(cutoff=CUTOFF, max_shard_bytes=1 << 20))["mode"] == "full"
        )
    out["full_trees"] = {v: _tree(release_dir(full, v)) for v in ("v1", "v2")}
    return out


def test_runs_succeed_and_metadata(built):
    home = built["home"]
    meta = _meta(built["first"], "pes2o_v1")
    stats = {(r.data["source"], r.data["split"]): r.data for r in meta["statistics"].value.records}
    manifest = json.loads((release_dir(home, "v1") / "manifest.json").read_text())
    assert {(s["source"], s["split"]): s for s in manifest["stats"]} == stats
    assert stats[("s2orc", "train")]["documents"] == 1  # 2004.07180
    assert stats[("s2orc", "valid")]["documents"] == 1  # 2007.03051
    assert stats[("s2ag", "train")]["documents"] == 5 and stats[("s2ag", "valid")]["documents"] == 1
    assert meta["documents"].value == 8 and meta["cutoff"].value == CUTOFF
    assert meta["shards"].value == len([f for f in manifest["files"] if f["format"] == "jsonl"]) >= 4
    assert manifest["settings"]["cutoff"] == CUTOFF
    assert sorted(manifest["inputs"]) == sorted(DAYS) and all(
        len(fp) == 32 for fp in manifest["inputs"].values()
    )
    funnel = {(r.data["source"], r.data["step"]): r.data for r in meta["funnel"].value.records}
    assert funnel[("s2orc", "input")]["remaining"] == 6
    assert funnel[("s2orc", "no_full_text")]["dropped"] == 4  # the 0704.* papers have metadata only
    assert funnel[("s2orc", "created_after_cutoff")]["remaining"] == 2
    assert "data:image/svg+xml;base64," in meta["funnel_plot"].value
    plot = (home / "reports" / "pes2o_v1_funnel.svg").read_bytes()
    assert b"no_full_text" in plot and b"-4<" in plot  # the 4 papers without full text, in red
    start, first = _meta(built["start"], "pes2o_v1"), meta
    assert start["mode"].value == "full" and first["mode"].value == "incremental"
    assert first["days_changed"].value == 1 and first["shards_reused"].value >= 1


def test_the_chunk_size_is_a_release_setting(built, tmp_path, shared_landing):
    """``chunk_bytes`` goes from the asset's config to the release (its manifest records it, so a
    change rebuilds in full: the same bytes as the library's build with that setting); the
    smallest chunk follows it down; the default is the library's."""
    assert pes2o_assets.Pes2oReleaseConfig().settings() == ReleaseSettings()
    small = pes2o_assets.Pes2oReleaseConfig(cutoff=CUTOFF, chunk_bytes=64 * 1024).settings()
    assert (small.chunk_bytes, small.min_chunk_bytes) == (64 * 1024, 64 * 1024)
    with pytest.raises(Exception, match="chunk_bytes"):
        pes2o_assets.Pes2oReleaseConfig(chunk_bytes=100)
    home = tmp_path / "data"
    shutil.copytree(built["home"] / "pes2o", home / "pes2o")
    store = CorpusStore(home=str(home), landing=str(shared_landing))
    config = {**QUIET, "ops": {"pes2o_v1": {"config": {"cutoff": CUTOFF, "chunk_bytes": 64 * 1024}}}}
    with dg.instance_for_test() as instance:
        v1 = [a for a in RELEASES if dg.AssetKey("pes2o_v1") in a.keys]
        res = dg.materialize(
            v1, resources={**defs.resources, "corpus": store}, instance=instance, run_config=config
        )
    assert res.success
    manifest = json.loads((release_dir(home, "v1") / "manifest.json").read_text())
    assert manifest["settings"]["chunk_bytes"] == manifest["settings"]["min_chunk_bytes"] == 64 * 1024
    full = tmp_path / "full"
    shutil.copytree(built["home"] / "pes2o", full / "pes2o")
    write_release(full, "v1", small)
    assert _tree(release_dir(home, "v1")) == _tree(release_dir(full, "v1"))


def test_incremental_equals_a_full_build(built):
    """The third day added to a release of two gives the bytes a build from scratch gives."""
    assert built["trees"] == built["full_trees"]


def test_same_rows_and_days_after_the_cutoff_change_nothing(built):
    for key in ("same_rows", "after"):
        for v in ("v1", "v2"):
            meta = _meta(built[key], f"pes2o_{v}")
            assert meta["mode"].value == "unchanged" and meta["shards_written"].value == 0
    assert _meta(built["after"], "pes2o_v1")["days_after_cutoff"].value == 1
    versions = {k: _data_version(built[k], "pes2o_v1") for k in ("start", "first", "same_rows", "after")}
    assert versions["first"] == versions["same_rows"] == versions["after"] != versions["start"]
    assert built["same_rows_trees"] == built["trees"] == built["after_trees"]
    leftovers = [p.name for p in release_dir(built["home"], "v1").parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # staging and work directories are gone


def test_stats_are_the_documents(built):
    home = built["home"]
    for version in ("v1", "v2"):
        manifest = json.loads((release_dir(home, version) / "manifest.json").read_text())
        for row in manifest["stats"]:
            docs = [
                d
                for p in sorted(
                    (release_dir(home, version) / row["split"]).glob(f"{row['source']}-*.jsonl.gz")
                )
                for d in _jsonl(p)
            ]
            assert len(docs) == row["documents"]
            assert sum(len(d["text"].split()) for d in docs) == row["words"]
        listed = {f["path"]: f for f in manifest["files"]}
        on_disk = {
            p.relative_to(release_dir(home, version)).as_posix()
            for p in release_dir(home, version).rglob("*.*")
        }
        assert set(listed) == on_disk - {"manifest.json", "README.md"}
        for path, f in listed.items():
            assert hashlib.sha256((release_dir(home, version) / path).read_bytes()).hexdigest() == f["sha256"]


def test_jsonl_shape_and_text(built):
    home = built["home"]
    root = release_dir(home, "v1")
    docs = {}
    for path in sorted(root.rglob("*.jsonl.gz")):
        raw = gzip.decompress(path.read_bytes()).decode("utf-8")
        assert raw.endswith("\n")
        lines = raw.split("\n")[:-1]
        keys = []
        for line in lines:
            doc = json.loads(line)
            assert list(doc) == list(DOC_FIELDS)
            assert all(isinstance(v, str) and v for v in doc.values())
            assert doc["version"] == "v1" and path.name.startswith(doc["source"] + "-")
            keys.append((doc["added"], doc["id"]))
            docs[(doc["id"], doc["source"])] = (path.parent.name, doc)
        assert keys == sorted(keys)  # (added, id) order
        # the Parquet twin holds the same documents in the same order
        twin = pl.read_parquet(path.with_name(path.name.replace(".jsonl.gz", ".parquet")))
        assert twin.columns == list(DOC_FIELDS) and twin.to_dicts() == [json.loads(x) for x in lines]
    split, doc = docs[("2004.07180", "s2orc")]
    assert split == "train"
    assert (doc["added"], doc["created"]) == ("2020-05-21T00:00:00.000Z", "2020-04-15T00:00:00.000Z")
    paras = doc["text"].split("\n\n")
    assert (
        paras[0].startswith("SPECTER: Document-level Representation Learning") and "\n\n\n" not in doc["text"]
    )
    assert len(paras) > 20 and len(doc["text"].split()) > 3000
    split, ag = docs[("2004.07180", "s2ag")]
    assert ag["text"] == "\n\n".join(paras[:2])
    assert docs[("2007.03051", "s2orc")][0] == "valid" and docs[("2007.03051", "s2ag")][0] == "valid"
    assert lib.split_for(docs[("2007.03051", "s2orc")][1]["created"], CUTOFF) == "valid"
    assert docs[("2007.03051", "s2orc")][1]["text"].startswith("Carbontracker: Tracking and Predicting")
    assert docs[("0704.0046", "s2ag")][1]["created"].startswith("2007-04-01")
    assert ("0704.0046", "s2orc") not in docs
    assert not any(pid == "1706.03762" for pid, _ in docs)  # delivered after the cutoff


def test_load_dataset_reads_the_release_by_its_card(built, tmp_path, monkeypatch):
    """``datasets.load_dataset(<release dir>)``, offline, with no other argument: the card's
    configs give the splits and features, and its split sizes are checked by ``datasets``."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    home = built["home"]
    for version in ("v1", "v2"):
        root = release_dir(home, version)
        card = (root / "README.md").read_text()
        assert card.startswith("---\n") and "## Statistics" in card and "## Filter funnel" in card
        assert "ODC-By" in card and "created_after_cutoff" in card
        loaded = datasets.load_dataset(str(root), cache_dir=str(tmp_path / "cache"))
        assert set(loaded) == {"train", "validation"}
        for split, folder in (("train", "train"), ("validation", "valid")):
            expected = [
                d
                for s in ("s2orc", "s2ag")
                for p in sorted((root / folder).glob(f"{s}-*.jsonl.gz"))
                for d in _jsonl(p)
            ]
            assert loaded[split].column_names == list(DOC_FIELDS)
            assert sorted(loaded[split].to_list(), key=str) == sorted(expected, key=str) and expected
        s2ag = datasets.load_dataset(str(root), "s2ag", cache_dir=str(tmp_path / "cache"))
        assert set(s2ag["train"]["source"]) == {"s2ag"} and s2ag["train"].num_rows == 5


def test_the_card_names_only_the_configs_it_has(built):
    """A release without s2orc documents (no full text yet) has no ``s2orc`` config; its card
    must not tell users to load one."""
    from corpus.release.pes2o_release import pes2o_card

    summary = json.loads((release_dir(built["home"], "v1") / "manifest.json").read_text())
    assert "`s2orc` / `s2ag` configuration" in pes2o_card(summary)
    summary["stats"] = [s for s in summary["stats"] if s["source"] != "s2orc"]
    summary["files"] = [f for f in summary["files"] if "/s2orc-" not in f["path"]]
    card = pes2o_card(summary)
    assert 'config_name: "s2orc"' not in card and 'config_name: "s2ag"' in card
    assert "or with the `s2ag` configuration;" in card and "`s2orc` / `s2ag` configuration" not in card
    summary["stats"], summary["files"] = [], []
    assert "nothing to load" in pes2o_card(summary) and "config_name" not in pes2o_card(summary)


def test_daily_rows(built):
    rows = pl.read_parquet(built["home"] / "pes2o" / "date=2020-05-21" / "part-0.parquet")
    assert rows.select("id", "source").rows() == [("2004.07180", "s2ag"), ("2004.07180", "s2orc")]
    row = rows.row(1, named=True)
    assert row["v1_keep"] and row["v2_keep"] and row["words"] == len(row["text"].split())
    signals = lib.Signals.model_validate_json(row["signals"])
    assert signals.paper_lang == "en" and signals.year == 2020 and signals.words >= 500
    assert lib.select(signals, "s2orc", "v1").keep


# --------------------------------------------------------------------------- hand-made partitions


def _row(pid: str, source: str, day: str, created: str | None, keep=True, reason=None, text="t w") -> dict:
    created_date = dt.date.fromisoformat(created) if created else None
    return {
        "id": pid,
        "source": source,
        "added": f"{day}T00:00:00.000Z",
        "created": f"{created}T00:00:00.000Z" if created else None,
        "created_date": created_date,
        "year": created_date.year if created_date else None,
        "v1_keep": keep,
        "v1_reason": reason,
        "v2_keep": keep,
        "v2_reason": reason,
        "text": text if keep else None,
        "words": len(text.split()) if keep else None,
    }


def test_release_dedup_cutoff_shards_and_reasons(tmp_path):
    store = Store(tmp_path)
    big = " ".join(["word"] * 60)
    store.write_partition(
        "pes2o",
        "2021-01-05",
        pes2o_frame(
            [
                _row("b", "s2ag", "2021-01-05", "2020-12-01", text="old text"),
                _row("c", "s2ag", "2021-01-05", "2020-11-30", text=big),
                _row("e", "s2ag", "2021-01-05", "2019-01-01", keep=False, reason="some_new_rule"),
                _row("g", "s2ag", "2021-01-05", "2020-06-01", text="kept on the first day only"),
            ]
        ),
    )
    store.write_partition(
        "pes2o",
        "2021-02-10",
        pes2o_frame(
            [
                _row("b", "s2ag", "2021-02-10", "2020-12-01", text="new text"),  # b again: latest wins
                _row("a", "s2ag", "2021-02-10", "2021-01-03", text=big),
                _row("d", "s2ag", "2021-02-10", "2021-03-01", text=big),  # created after the cutoff
                _row("f", "s2orc", "2021-02-10", "2010-05-05", keep=False, reason="no_full_text"),
                _row("g", "s2ag", "2021-02-10", "2020-06-01", keep=False, reason="paper_filter"),
            ]
        ),
    )
    store.write_partition(  # after the cutoff: not read
        "pes2o",
        "2021-03-10",
        pes2o_frame(
            [
                _row("b", "s2ag", "2021-03-10", "2020-12-01", text="newest text"),
                _row("h", "s2ag", "2021-03-10", "2021-01-10", text=big),
            ]
        ),
    )
    settings = ReleaseSettings(cutoff="2021-02-28", max_shard_bytes=300, min_chunk_bytes=1 << 20)
    summary = write_release(tmp_path, "v1", settings)
    root = release_dir(tmp_path, "v1")
    valid = [d for p in sorted((root / "valid").glob("s2ag-*.jsonl.gz")) for d in _jsonl(p)]
    train = [d for p in sorted((root / "train").glob("s2ag-*.jsonl.gz")) for d in _jsonl(p)]
    assert [d["id"] for d in valid] == ["a"] and [d["id"] for d in train] == ["b", "c"]
    b = train[0]
    assert b["text"] == "new text" and b["added"] == "2021-01-05T00:00:00.000Z"  # first day seen
    for d in valid + train:
        assert lib.split_for(d["created"], "2021-02-28") == ("valid" if d in valid else "train")
    # one chunk (1 MiB expected); 300 estimated bytes per shard: c starts a second shard, since
    # b (2 words) and c (60 words, ~456 bytes) make more than 300
    shards = sorted((root / "train").glob("s2ag-*.jsonl.gz"))
    assert [[d["id"] for d in _jsonl(p)] for p in shards] == [["b", "c"]]
    write_release(
        tmp_path, "v1", ReleaseSettings(cutoff="2021-02-28", max_shard_bytes=100, min_chunk_bytes=1 << 20)
    )
    shards = sorted((root / "train").glob("s2ag-*.jsonl.gz"))
    assert [[d["id"] for d in _jsonl(p)] for p in shards] == [["b"], ["c"]]
    funnel = {(r["source"], r["step"]): r for r in summary["funnel"]}
    assert funnel[("s2ag", "input")]["remaining"] == 6  # a, b (once), c, d, e, g (once); not h
    assert funnel[("s2ag", "paper_filter")]["dropped"] == 1  # g: its latest day drops it
    assert funnel[("s2ag", "some_new_rule")]["dropped"] == 1  # unknown reasons are listed, not lost
    assert funnel[("s2ag", "created_after_cutoff")] == {
        "source": "s2ag",
        "step": "created_after_cutoff",
        "dropped": 1,
        "remaining": 3,
    }
    assert funnel[("s2orc", "no_full_text")]["dropped"] == 1 and not list((root / "train").glob("s2orc-*"))
    stats = {(s["source"], s["split"]): s for s in summary["stats"]}
    assert stats[("s2ag", "train")] == {"source": "s2ag", "split": "train", "documents": 2, "words": 62}
    assert summary["days_after_cutoff"] == 1 and sorted(summary["inputs"]) == ["2021-01-05", "2021-02-10"]


def test_release_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="materialise it first"):
        write_release(tmp_path, "v1")
    with pytest.raises(ValueError, match="unknown peS2o version"):
        write_release(tmp_path, "v3")
    with pytest.raises(ValueError):
        ReleaseSettings(cutoff="2023-13-01")
    with pytest.raises(ValueError):
        ReleaseSettings(max_shard_bytes=0)


def test_day_with_a_broken_parse_fails_one_paper(tmp_path):
    from corpus.papers.metadata import papers_frame

    store = Store(tmp_path)
    base = {"authors": [{"first": "A", "middle": [], "last": "B", "suffix": ""}], "kept": True}
    abstract = " ".join(["We study the structure of language models and their training data."] * 8)
    good = {**base, "id": "2101.00001", "title": "A good paper", "abstract": abstract, "year": 2021,
            "created": dt.date(2021, 1, 1), "abstract_source": "oai"}  # fmt: skip
    bad = {**good, "id": "2101.00002", "parse_source": "grobid"}
    french = {**good, "id": "2101.00003", "kept": False, "drop_reason": "not_english"}
    truncated = {**good, "id": "2101.00004", "parse_source": "grobid"}
    store.write_partition("papers", "2021-01-02", papers_frame([good, bad, french, truncated]))
    docs = pl.DataFrame(
        {
            "id": ["2101.00002", "2101.00004"],
            "status": ["ok", "ok"],
            "doc": [json.dumps({"source": "grobid", "body_text": [{}]}), '{"source": "grobid", "body_te'],
        }
    )
    store.write_partition("pdf_parses", "2021-01-02", docs)
    summary = pes2o_day(tmp_path, "2021-01-02")
    assert summary["papers"] == 4
    assert [f["id"] for f in summary["failures"]] == ["2101.00002", "2101.00004"]
    assert "Invalid JSON" in summary["failures"][1]["reason"]
    rows = store.read_partition("pes2o", "2021-01-02")
    failed = rows.filter(pl.col("id") == "2101.00002")
    assert failed["v1_reason"].to_list() == ["failed", "failed"]
    assert "body_text.0.text" in failed["detail"][0] and "Field required" in failed["detail"][0]
    ok = {r["source"]: r for r in rows.filter(pl.col("id") == "2101.00001").iter_rows(named=True)}
    assert ok["s2orc"]["v1_reason"] == "no_full_text" and ok["s2ag"]["v1_keep"]
    assert summary["kept"]["s2ag_v1"] == 1
    dropped = rows.filter(pl.col("id") == "2101.00003")
    assert (
        dropped["v2_reason"].to_list() == ["paper_filter"] * 2
        and dropped["detail"].to_list() == ["not_english"] * 2
    )
    assert dropped["signals"].null_count() == 2
    assert set(summary["reasons"]["s2orc_v1"]) <= set(RULES["s2orc"])


def test_day_over_processes_equals_in_process(built, tmp_path, monkeypatch):
    """The real landing's days measured over two processes (one paper per process allowed) give
    the rows measured in process, in the same order; a paper that kills its process is one
    ``failed`` row pair, not a failed day."""
    import multiprocessing as mp
    import os

    from corpus import parallel
    from corpus.release import pes2o_table

    monkeypatch.setattr(pes2o_table, "PAPERS_PER_WORKER", 1)
    home = tmp_path / "data"
    for asset in ("papers", "pdf_parses", "latex_parses"):
        shutil.copytree(built["home"] / asset, home / asset)
    store = Store(home)
    for day in DAYS:
        alone = pes2o_day(home, day)
        in_process = store.read_partition("pes2o", day)
        pooled = pes2o_day(home, day, workers=2)
        assert pooled == alone and store.read_partition("pes2o", day).equals(in_process), day
    kept_on = {d: store.read_partition("papers", d).filter(pl.col("kept"))["id"].to_list() for d in DAYS}
    day, kept = max(kept_on.items(), key=lambda kv: len(kv[1]))
    assert len(kept) >= 2, kept_on  # so the pool above had two processes on that day
    real = pes2o_table.paper_rows

    def dies_on_one(row, parse_json, day):
        if row["id"] == kept[0]:
            os._exit(3)  # a crash in C code, the OOM killer
        return real(row, parse_json, day)

    monkeypatch.setattr(pes2o_table, "paper_rows", dies_on_one)
    monkeypatch.setattr(parallel, "_context", lambda: mp.get_context("fork"))  # the patch reaches it
    in_process = store.read_partition("pes2o", day)
    summary = pes2o_day(home, day, workers=2)
    assert [f["id"] for f in summary["failures"]] == [kept[0]]
    assert summary["failures"][0]["reason"] == "worker_died"
    rows = store.read_partition("pes2o", day)
    assert rows.filter(pl.col("id") == kept[0])["v1_reason"].to_list() == ["failed", "failed"]
    others = rows.filter(pl.col("id") != kept[0])
    assert others.equals(in_process.filter(pl.col("id") != kept[0]))


def test_release_tasks_give_the_same_bytes(tmp_path, monkeypatch):
    """Any task size, a cap on the number of tasks and build tasks in other processes give the
    same files; the documents are the latest kept rows, added on their first day."""
    import random

    from corpus.release import pes2o_release

    rng = random.Random(7)
    days = ("2021-01-05", "2021-02-10", "2021-03-15")
    frames: dict[str, list[dict]] = {d: [] for d in days}
    expected: dict[tuple[str, str], dict] = {}
    for n in range(60):
        pid = f"2012.{rng.randrange(10**5):05d}v{n}"
        seen = sorted(rng.sample(days, rng.randint(1, 3)))
        for source in ("s2orc", "s2ag"):
            for day in seen:
                keep = rng.random() < 0.7
                created = rng.choice(["2019-05-01", "2020-12-20", "2021-01-02", "2021-02-01"])
                text = " ".join(
                    rng.choice(["alpha", "beta", "γάμμα", "delta"]) for _ in range(rng.randint(1, 40))
                )
                frames[day].append(_row(pid, source, day, created, keep=keep, reason=None if keep else "no_title",
                                        text=f"{day} {text}"))  # fmt: skip
            last = frames[seen[-1]][-1]
            if last["v1_keep"]:
                expected[(source, pid)] = {"added": f"{seen[0]}T00:00:00.000Z", "text": last["text"]}
    for day, rows in frames.items():
        Store(tmp_path).write_partition("pes2o", day, pes2o_frame(rows))

    def release(workers=1, **kw) -> dict[str, str]:
        shutil.rmtree(release_dir(tmp_path, "v1"), ignore_errors=True)  # a full build each time
        settings = ReleaseSettings(cutoff="2021-03-31", max_shard_bytes=2000, min_chunk_bytes=1000, **kw)
        summary = write_release(tmp_path, "v1", settings, workers=workers)
        assert summary["mode"] == "full"
        return _tree(release_dir(tmp_path, "v1"))

    whole = release()
    root = release_dir(tmp_path, "v1")
    docs = [d for s in ("s2ag", "s2orc") for sp in ("train", "valid") for p in sorted((root / sp).glob(f"{s}-*.jsonl.gz")) for d in _jsonl(p)]  # fmt: skip
    docs.sort(key=lambda d: (d["source"], d["id"]))
    assert [(d["source"], d["id"]) for d in docs] == sorted(expected)
    assert all({"added": d["added"], "text": d["text"]} == expected[(d["source"], d["id"])] for d in docs)
    assert len([p for p in whole if p.endswith(".jsonl.gz")]) > 6
    assert release(sort_bucket_bytes=100) == whole
    assert release(sort_bucket_bytes=100, workers=2) == whole
    monkeypatch.setattr(pes2o_release, "_MAX_TASKS", 3)
    assert release(sort_bucket_bytes=100) == whole
    with pytest.raises(ValueError):
        ReleaseSettings(sort_bucket_bytes=0)
