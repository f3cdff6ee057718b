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

from corpus import pes2o as lib
from corpus.pes2o_release import (
    DOC_FIELDS,
    RULES,
    ReleaseSettings,
    pes2o_day,
    pes2o_frame,
    release_dir,
    write_release,
)
from corpus.store import Store
from corpus_assets import files, ingest, papers, parse
from corpus_assets import pes2o as pes2o_assets
from corpus_assets.definitions import defs
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
# 1706.03762: Grobid TEI, created 2017-06-12; 2004.14974: LaTeX only, created 2020-04-30, the last
# day of the valid window of cutoff 2020-04-30 (valid = 2020-03-01 ... 2020-04-30); 2007-04-01: four
# metadata-only papers (s2ag only). Three days keep the test under a minute on a busy machine.
DAYS = ("2023-08-02", "2020-10-03", "2007-04-01")
CUTOFF = "2020-04-30"
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


@pytest.fixture(scope="module")
def built(tmp_path_factory, shared_landing):
    home = tmp_path_factory.mktemp("pes2o") / "data"
    store = CorpusStore(home=str(home), landing=str(shared_landing))
    resources = {**defs.resources, "corpus": store, "arxiv": ArxivResource(source="landing")}
    with dg.instance_for_test() as instance:
        for day in DAYS:
            res = dg.materialize(
                DAILY, partition_key=day, resources=resources, instance=instance, run_config=QUIET
            )
            assert res.success
        first = dg.materialize(RELEASES, resources=resources, instance=instance, run_config=RELEASE_CONFIG)
        trees = {v: _tree(release_dir(home, v)) for v in ("v1", "v2")}
        # again, from a re-materialised daily partition: the same bytes must come out
        again_day = dg.materialize(
            [a for a in DAILY if dg.AssetKey("pes2o") in a.keys],
            partition_key="2023-08-02",
            resources=resources,
            instance=instance,
            run_config=QUIET,
        )
        second = dg.materialize(RELEASES, resources=resources, instance=instance, run_config=RELEASE_CONFIG)
        yield home, first, again_day, second, trees


def test_runs_succeed_and_metadata(built):
    home, first, again_day, second, _ = built
    assert first.success and again_day.success and second.success
    events = {
        e.asset_key.path[-1]: e.materialization.metadata for e in first.get_asset_materialization_events()
    }
    meta = events["pes2o_v1"]
    stats = {(r.data["source"], r.data["split"]): r.data for r in meta["statistics"].value.records}
    manifest = json.loads((release_dir(home, "v1") / "manifest.json").read_text())
    assert {(s["source"], s["split"]): s for s in manifest["stats"]} == stats
    assert stats[("s2orc", "train")]["documents"] == 1  # 1706.03762
    assert stats[("s2orc", "valid")]["documents"] == 1  # 2004.14974
    assert stats[("s2ag", "train")]["documents"] == 5 and stats[("s2ag", "valid")]["documents"] == 1
    # shards per (split, source, month of the latest delivery): 2023-08, 2020-10, 2007-04
    assert meta["documents"].value == 8 and meta["shards"].value == 5 and meta["cutoff"].value == CUTOFF
    assert manifest["settings"]["cutoff"] == CUTOFF
    funnel = {(r.data["source"], r.data["step"]): r.data for r in meta["funnel"].value.records}
    assert funnel[("s2orc", "input")]["remaining"] == 6
    assert funnel[("s2orc", "no_full_text")]["dropped"] == 4  # the 0704.* papers have metadata only
    assert funnel[("s2orc", "created_after_cutoff")]["remaining"] == 2
    assert "base64" in meta["funnel_plot"].value
    assert (home / "reports" / "pes2o_v1_funnel.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stats_are_the_documents(built):
    home, *_ = built
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


def test_jsonl_shape_and_text(built):
    home, *_ = built
    root = release_dir(home, "v1")
    docs = {}
    for path in sorted(root.rglob("*.jsonl.gz")):
        raw = gzip.decompress(path.read_bytes()).decode("utf-8")
        assert raw.endswith("\n")
        lines = raw.split("\n")[:-1]
        ids = []
        for line in lines:
            doc = json.loads(line)
            assert list(doc) == list(DOC_FIELDS)
            assert all(isinstance(v, str) and v for v in doc.values())
            assert doc["version"] == "v1" and path.name.startswith(doc["source"] + "-")
            ids.append(doc["id"])
            docs[(doc["id"], doc["source"])] = (path.parent.name, doc)
        assert ids == sorted(ids)
        # the Parquet twin holds the same documents in the same order
        twin = pl.read_parquet(path.with_name(path.name.replace(".jsonl.gz", ".parquet")))
        assert twin.columns == list(DOC_FIELDS) and twin.to_dicts() == [json.loads(x) for x in lines]
    split, doc = docs[("1706.03762", "s2orc")]
    assert split == "train"
    assert (doc["added"], doc["created"]) == ("2023-08-02T00:00:00.000Z", "2017-06-12T00:00:00.000Z")
    paras = doc["text"].split("\n\n")
    assert paras[0] == "Attention Is All You Need" and paras[1].startswith(
        "The dominant sequence transduction"
    )
    assert paras[2].startswith("Introduction\n") and len(paras) > 20 and "\n\n\n" not in doc["text"]
    assert len(doc["text"].split()) > 3000
    split, ag = docs[("1706.03762", "s2ag")]
    assert ag["text"] == "\n\n".join(paras[:2])
    assert docs[("2004.14974", "s2orc")][0] == "valid" and docs[("2004.14974", "s2ag")][0] == "valid"
    assert lib.split_for(docs[("2004.14974", "s2orc")][1]["created"], CUTOFF) == "valid"
    assert docs[("0704.0046", "s2ag")][1]["created"].startswith("2007-04-01")
    assert ("0704.0046", "s2orc") not in docs


def test_datasets_load_dataset_reads_the_release(built, tmp_path, monkeypatch):
    """The card's consumer: ``datasets.load_dataset("json", data_files=...)`` on the shards, offline."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    home, *_ = built
    root = release_dir(home, "v2")
    files = {split: sorted(str(p) for p in (root / split).glob("*.jsonl.gz")) for split in ("train", "valid")}
    loaded = datasets.load_dataset("json", data_files=files, cache_dir=str(tmp_path / "cache"))
    assert set(loaded) == {"train", "valid"}
    for split, paths in files.items():
        expected = [d for p in paths for d in _jsonl(Path(p))]
        assert loaded[split].column_names == list(DOC_FIELDS)
        assert loaded[split].to_list() == expected and len(expected) > 0


def test_load_dataset_reads_the_release_directory_with_no_arguments(built, tmp_path, monkeypatch):
    """The dataset card (README.md) makes the release directory itself loadable, offline."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    home, *_ = built
    for version in ("v1", "v2"):
        root = release_dir(home, version)
        card = (root / "README.md").read_text()
        assert card.startswith("---\n") and "## Filter funnel" in card and "## Statistics" in card
        loaded = datasets.load_dataset(str(root), cache_dir=str(tmp_path / "cache" / version))
        assert set(loaded) == {"train", "validation"}
        expected = sorted(
            (d["source"], d["id"])
            for split in ("train", "valid")
            for f in (root / split).glob("*.jsonl.gz")
            for d in _jsonl(f)
        )
        assert sorted((d["source"], d["id"]) for s in loaded.values() for d in s) == expected
        assert loaded["train"].column_names == list(DOC_FIELDS)
        s2orc = datasets.load_dataset(
            str(root), "s2orc", cache_dir=str(tmp_path / "cache" / f"{version}-s2orc")
        )
        assert {d["source"] for s in s2orc.values() for d in s} == {"s2orc"}


def test_byte_identical_on_rematerialisation(built):
    home, *_, trees = built
    for version in ("v1", "v2"):
        again = _tree(release_dir(home, version))
        assert again == trees[version] and len(again) == 12  # 5 shards x 2 formats + manifest + card
    leftovers = [p.name for p in release_dir(home, "v1").parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # staging and spill directories are gone


def test_daily_rows(built):
    home, *_ = built
    rows = pl.read_parquet(home / "pes2o" / "date=2023-08-02" / "part-0.parquet")
    assert rows.select("id", "source").rows() == [("1706.03762", "s2ag"), ("1706.03762", "s2orc")]
    row = rows.row(1, named=True)
    assert row["v1_keep"] and row["v2_keep"] and row["words"] == len(row["text"].split())
    signals = lib.Signals.model_validate_json(row["signals"])
    assert signals.paper_lang == "en" and signals.year == 2017 and signals.words >= 500
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
                _row("d", "s2ag", "2021-02-10", "2021-01-04", text=big),  # after the cutoff
                _row("f", "s2orc", "2021-02-10", "2010-05-05", keep=False, reason="no_full_text"),
                _row("g", "s2ag", "2021-02-10", "2020-06-01", keep=False, reason="paper_filter"),
            ]
        ),
    )
    summary = write_release(tmp_path, "v1", ReleaseSettings(cutoff="2021-01-03", max_shard_bytes=300))
    root = release_dir(tmp_path, "v1")
    valid = [d for p in sorted((root / "valid").glob("s2ag-*.jsonl.gz")) for d in _jsonl(p)]
    train = [d for p in sorted((root / "train").glob("s2ag-*.jsonl.gz")) for d in _jsonl(p)]
    assert [d["id"] for d in valid] == ["a", "b"] and [d["id"] for d in train] == ["c"]
    b = valid[1]
    assert b["text"] == "new text" and b["added"] == "2021-01-05T00:00:00.000Z"  # first day seen
    for d in valid + train:
        assert lib.split_for(d["created"], "2021-01-03") == ("valid" if d in valid else "train")
    # 300 bytes per shard: "a" (a long line) and "b" cannot share one
    shards = sorted((root / "valid").glob("s2ag-*.jsonl.gz"))
    assert len(shards) == 2
    for p in shards:
        raw = gzip.decompress(p.read_bytes())
        assert len(raw) <= 300 or raw.count(b"\n") == 1
    funnel = {(r["source"], r["step"]): r for r in summary["funnel"]}
    assert funnel[("s2ag", "input")]["remaining"] == 6  # a, b (once), c, d, e, g (once)
    assert funnel[("s2ag", "paper_filter")]["dropped"] == 1  # g: its latest day drops it
    assert funnel[("s2ag", "some_new_rule")]["dropped"] == 1  # unknown reasons are listed, not lost
    assert funnel[("s2ag", "created_after_cutoff")] == {
        "source": "s2ag",
        "step": "created_after_cutoff",
        "dropped": 1,
        "remaining": 3,
    }
    assert (
        funnel[("s2orc", "no_full_text")]["dropped"] == 1
        and not (root / "train" / "s2orc-00000.jsonl.gz").exists()
    )
    stats = {(s["source"], s["split"]): s for s in summary["stats"]}
    assert stats[("s2ag", "valid")] == {"source": "s2ag", "split": "valid", "documents": 2, "words": 62}


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
    from corpus.metadata import papers_frame

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


def test_release_sorts_in_buckets_with_the_same_bytes(tmp_path, monkeypatch):
    """The external sort (bucket bounds, scatter, one bucket in memory at a time): any bucket
    size, and the bucket cap, give the same files; the documents are the latest kept rows in
    (source, id) order, added on their first day."""
    import random

    from corpus import pes2o_release

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
            if last["v1_keep"] and last["created"] < "2021-01-04":
                expected[(source, pid)] = {"added": f"{seen[0]}T00:00:00.000Z", "text": last["text"]}
    for day, rows in frames.items():
        Store(tmp_path).write_partition("pes2o", day, pes2o_frame(rows))

    scattered: list[int] = []
    real_scatter = pes2o_release._scatter
    monkeypatch.setattr(
        pes2o_release, "_scatter", lambda *a: scattered.append(len(out := real_scatter(*a))) or out
    )

    def release(**kw) -> dict[str, str]:
        shutil.rmtree(release_dir(tmp_path, "v1"), ignore_errors=True)  # else: unchanged, nothing rebuilt
        write_release(tmp_path, "v1", ReleaseSettings(cutoff="2021-01-03", max_shard_bytes=2000, **kw))
        return _tree(release_dir(tmp_path, "v1"))

    whole = release()
    root = release_dir(tmp_path, "v1")
    docs = [d for s in ("s2ag", "s2orc") for sp in ("train", "valid") for p in sorted((root / sp).glob(f"{s}-*.jsonl.gz")) for d in _jsonl(p)]  # fmt: skip
    docs.sort(key=lambda d: (d["source"], d["id"]))
    assert [(d["source"], d["id"]) for d in docs] == sorted(expected)
    assert all({"added": d["added"], "text": d["text"]} == expected[(d["source"], d["id"])] for d in docs)
    assert release(sort_bucket_bytes=100) == whole
    monkeypatch.setattr(pes2o_release, "_MAX_BUCKETS", 3)
    assert release(sort_bucket_bytes=100) == whole
    # one scatter per month group (three days, three months)
    assert scattered[:3] == [1, 1, 1] and sum(scattered[3:6]) > 10 and max(scattered[6:9]) == 3
    with pytest.raises(ValueError):
        ReleaseSettings(sort_bucket_bytes=0)


def _generated_days(seed: int, n_days: int) -> dict[str, list[dict]]:
    """Days over several months; papers re-delivered on later days with new text or a new verdict."""
    import random

    rng = random.Random(seed)
    start = dt.date(2020, 11, 20)
    days = [(start + dt.timedelta(days=7 * i)).isoformat() for i in range(n_days)]
    ids = [f"20{rng.randrange(10, 13)}.{rng.randrange(10**5):05d}" for _ in range(80)]
    frames: dict[str, list[dict]] = {d: [] for d in days}
    for pid in ids:
        for day in sorted(rng.sample(days, rng.choice([1, 1, 2, 3]))):
            created = rng.choice(["2019-05-01", "2020-12-20", "2021-01-02", "2021-02-01"])
            for source in ("s2orc", "s2ag"):
                keep = rng.random() < 0.7
                text = f"{day} " + " ".join(
                    rng.choice(["alpha", "beta", "γάμμα"]) for _ in range(rng.randint(1, 30))
                )
                frames[day].append(
                    _row(pid, source, day, created, keep=keep, reason=None if keep else "no_title", text=text)
                )
    return frames


def test_incremental_release_equals_a_full_rebuild(tmp_path):
    """Day by day, each run rebuilds only the month groups a new day can touch (re-delivered
    papers included) and carries the others over; the result is byte-identical to building all
    at once. Unchanged inputs rewrite nothing."""
    settings = ReleaseSettings(cutoff="2021-01-03", max_shard_bytes=700)
    frames = _generated_days(11, 12)
    inc = Store(tmp_path / "inc")
    modes = []
    for day, rows in frames.items():
        inc.write_partition("pes2o", day, pes2o_frame(rows))
        summary = write_release(inc.home, "v2", settings)
        modes.append((summary["mode"], summary["groups_rebuilt"], len(summary["groups"])))
    assert modes[0][0] == "full" and all(m == "incremental" for m, _, _ in modes[1:])
    assert any(rebuilt < groups for _, rebuilt, groups in modes[1:])  # some months carried over
    full = Store(tmp_path / "full")
    for day, rows in frames.items():
        full.write_partition("pes2o", day, pes2o_frame(rows))
    write_release(full.home, "v2", settings)
    assert _tree(release_dir(inc.home, "v2")) == _tree(release_dir(full.home, "v2"))
    # Nothing changed: nothing is rebuilt, not a file is rewritten.
    root = release_dir(inc.home, "v2")
    inodes = {p: p.stat().st_ino for p in root.rglob("*") if p.is_file()}
    again = write_release(inc.home, "v2", settings)
    assert again["mode"] == "unchanged" and again["groups_rebuilt"] == 0
    assert {p: p.stat().st_ino for p in root.rglob("*") if p.is_file()} == inodes
    # A later day of new papers created after the cutoff: its own month only; the shards of
    # every earlier month are the same files (hard links), and no document changes.
    late = "2021-06-01"
    inc.write_partition("pes2o", late, pes2o_frame([_row("2106.00001", "s2ag", late, "2021-05-30")]))
    after = write_release(inc.home, "v2", settings)
    assert after["mode"] == "incremental" and after["groups_rebuilt"] == 1
    shards = {p: p.stat().st_ino for p in root.rglob("*.jsonl.gz")}
    assert shards == {p: i for p, i in inodes.items() if p.name.endswith(".jsonl.gz")}
