"""citeworth_paragraphs, citeworth_splits and the leftover-marker check on real landing days.

The chain runs from arxiv_metadata to citeworth_paragraphs on 2023-08-02 (1706.03762,
TEI cached in the landing zone) and 2020-10-03 (2004.14974, LaTeX), then the release;
a third day (2023-08-11, 2211.16878) is added afterwards to see that no paper moves.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from corpus.papers.fields import CITEWORTH_FIELDS
from corpus.release.citeworth import (
    LABEL_CITE_WORTHY,
    LABEL_NOT_CITE_WORTHY,
    RELEASE_COLUMNS,
    SPLIT_NAMES,
    audit_release,
    release_dir,
    split_for,
)
from corpus.release.citeworth_release import build_release, release_audit
from corpus_assets import citeworth, files, ingest, papers, parse
from corpus_assets.definitions import defs
from corpus_assets.jobs import DAILY_JOB, GRAPH_JOB, UNPARTITIONED_ASSETS
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
DAYS = {"2023-08-02": "1706.03762", "2020-10-03": "2004.14974"}
EXTRA_DAY = ("2023-08-11", "2211.16878")
DAILY = [
    *dg.load_assets_from_modules([ingest, files, parse, papers]),
    citeworth.citeworth_paragraphs,
]
RELEASE = [citeworth.citeworth_splits, citeworth.leftover_citation_markers]


def _resources(home: Path, landing: Path) -> dict:
    return {
        **defs.resources,  # the location's resources (grobid, pipes ...), with the store and source set here
        "corpus": CorpusStore(home=str(home), landing=str(landing)),
        "arxiv": ArxivResource(source="landing"),
    }


def _release_bytes(home: Path) -> dict[str, bytes]:
    return {s: (release_dir(home) / f"{s}.jsonl").read_bytes() for s in SPLIT_NAMES}


def _lines(home: Path) -> dict[str, list[dict]]:
    return {s: [json.loads(x) for x in b.decode().splitlines()] for s, b in _release_bytes(home).items()}


def _check(result: dg.ExecuteInProcessResult) -> dg.AssetCheckEvaluation:
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation


@pytest.fixture(scope="module")
def built(tmp_path_factory, shared_landing):
    home = tmp_path_factory.mktemp("citeworth") / "data"
    resources = _resources(home, shared_landing)
    out: dict = {"home": home}
    with dg.instance_for_test() as instance:
        out["daily"] = {
            day: dg.materialize(
                DAILY, partition_key=day, resources=resources, instance=instance, run_config=QUIET
            )
            for day in DAYS
        }
        out["release"] = dg.materialize(RELEASE, resources=resources, instance=instance, run_config=QUIET)
        out["bytes"] = _release_bytes(home)
        out["lines"] = _lines(home)
        out["again"] = dg.materialize(RELEASE, resources=resources, instance=instance, run_config=QUIET)
        out["bytes_again"] = _release_bytes(home)
        out["extra"] = dg.materialize(
            DAILY, partition_key=EXTRA_DAY[0], resources=resources, instance=instance, run_config=QUIET
        )
        out["grown"] = dg.materialize(RELEASE, resources=resources, instance=instance, run_config=QUIET)
        out["lines_grown"] = _lines(home)
        out["tree_grown"] = _tree(release_dir(home))
    full = home.parent / "full"  # a build from scratch of a copy of the three days
    for asset in ("citeworth_paragraphs", "citeworth_candidates"):
        shutil.copytree(home / asset, full / asset)
    out["full"] = build_release(full)
    out["tree_full"] = _tree(release_dir(full))
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _materialization(result: dg.ExecuteInProcessResult, key: str) -> dict:
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key.path == [key]]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_every_run_succeeds(built):
    assert all(r.success for r in built["daily"].values())
    assert built["release"].success and built["again"].success and built["extra"].success
    assert built["grown"].success


def test_paragraphs_per_day_with_reasons(built):
    home = built["home"]
    paras = pl.read_parquet(home / "citeworth_paragraphs" / "date=2023-08-02" / "part-0.parquet")
    assert set(paras["paper_id"]) == {"1706.03762"}
    assert paras["section_index"].to_list() == list(range(paras.height))  # every body paragraph, in order
    kept = paras.filter(pl.col("kept"))
    assert kept.height == 2 and kept["reason"].null_count() == 2
    reasons = Counter(paras.filter(~pl.col("kept"))["reason"].to_list())
    assert reasons["section_not_permissible"] > 50 and reasons["no_citation"] >= 1  # require_citation default
    assert paras.filter(~pl.col("kept"))["reason"].null_count() == 0  # every rejection names its rule
    assert (kept["n_cite_worthy"] >= 1).all() and set(kept["field"]) == {"Computer Science"}
    meta = _materialization(built["daily"]["2023-08-02"], "citeworth_paragraphs")
    papers = _materialization(built["daily"]["2023-08-02"], "citeworth_candidates")
    assert (papers["dagster/partition_row_count"], papers["candidates"], meta["kept"]) == (1, 1, 2)
    assert (
        meta["dagster/partition_row_count"] == paras.height and meta["sentences"] == kept["n_sentences"].sum()
    )
    cand = pl.read_parquet(home / "citeworth_candidates" / "date=2020-10-03" / "part-0.parquet")
    row = cand.row(0, named=True)
    assert (row["paper_id"], row["parse_source"], row["reason"], row["kept_paragraphs"]) == (
        "2004.14974", "latex", None, 2,
    )  # fmt: skip


def test_release_has_the_released_data_shape(built):
    lines = [row for rows in built["lines"].values() for row in rows]
    assert {r["paper_id"] for r in lines} == set(DAYS.values())
    assert len(lines) == 4
    for row in lines:
        assert tuple(row) == RELEASE_COLUMNS
        assert row["field"] in CITEWORTH_FIELDS and row["mag_field_of_study"] == [row["field"]]
        assert row["section_title"] and row["samples"]
        for s in row["samples"]:
            assert set(s) == {"text", "label", "original_text", "ref_ids", "citation_text"}
            assert s["original_text"] in row["original_text"]
            if s["label"] == LABEL_CITE_WORTHY:
                assert s["citation_text"] and all(c not in s["text"] for c in s["citation_text"])
                assert len(s["ref_ids"]) == len(s["citation_text"])
            else:
                assert s["label"] == LABEL_NOT_CITE_WORTHY and s["text"] == s["original_text"]
                assert s["citation_text"] == [] and s["ref_ids"] is None
    labels = Counter(s["label"] for r in lines for s in r["samples"])
    assert labels[LABEL_CITE_WORTHY] >= 4 and labels[LABEL_NOT_CITE_WORTHY] >= 1


def test_a_paper_is_in_exactly_one_split(built):
    seen: dict[str, set[str]] = {}
    for split, rows in built["lines_grown"].items():
        for row in rows:
            seen.setdefault(row["paper_id"], set()).add(split)
    assert set(seen) == {*DAYS.values(), EXTRA_DAY[1]}
    assert all(splits == {split_for(pid)} for pid, splits in seen.items())
    table = pl.read_parquet(built["home"] / "citeworth_splits" / "part-0.parquet")
    assert table.group_by("paper_id").agg(pl.col("split").n_unique())["split"].max() == 1
    assert table.height == sum(len(v) for v in built["lines_grown"].values())


def test_rematerialising_gives_the_same_bytes(built):
    assert built["bytes"] == built["bytes_again"]
    assert sum(len(b) for b in built["bytes"].values()) > 1000
    again = _materialization(built["again"], "citeworth_splits")
    assert again["mode"] == "unchanged" and again["files_written"] == 0  # nothing read or written


def test_a_new_day_gives_the_bytes_of_a_full_build(built):
    grown = _materialization(built["grown"], "citeworth_splits")
    assert grown["mode"] == "incremental" and grown["days_changed"] == 1
    assert built["full"]["mode"] == "full"
    assert built["tree_grown"] == built["tree_full"]  # split files, manifest and card
    manifest = json.loads(built["tree_grown"]["manifest.json"])
    assert sorted(manifest["inputs"]) == sorted([*DAYS, EXTRA_DAY[0]])
    assert {f["path"] for f in manifest["files"]} == {f"{s}.jsonl" for s in SPLIT_NAMES}


def test_load_dataset_reads_the_release_by_its_card(built, tmp_path, monkeypatch):
    """``datasets.load_dataset(<release dir>)``, offline, with no other argument."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    root = release_dir(built["home"])
    card = (root / "README.md").read_text()
    assert card.startswith("---\n") and "Table 2" in card and "Filter funnel" in card and "CC BY-NC" in card
    loaded = datasets.load_dataset(str(root), cache_dir=str(tmp_path / "cache"))
    assert set(loaded) == {"train", "validation", "test"}
    for split, name in (("train", "train"), ("validation", "dev"), ("test", "test")):
        assert loaded[split].column_names == list(RELEASE_COLUMNS)
        assert loaded[split].to_list() == built["lines_grown"][name]
    assert sum(loaded[s].num_rows for s in loaded) == sum(len(v) for v in built["lines_grown"].values()) > 0
    sample = loaded["train"].features["samples"]
    assert sample.feature["ref_ids"].feature.feature.dtype == "string"


def test_the_card_declares_only_splits_with_paragraphs(built, tmp_path, monkeypatch):
    """``datasets`` refuses a declared split with no rows ("corresponds to no data"), as a small
    or early release has (the real landing zone's first month has no full text at all)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    from corpus.release.citeworth_release import citeworth_card

    root = tmp_path / "release"
    shutil.copytree(release_dir(built["home"]), root)
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "dev.jsonl").write_bytes(b"")
    manifest["summary"]["paragraphs_per_split"]["dev"] = 0
    for f in manifest["files"]:
        f["bytes"] = (root / f["path"]).stat().st_size
    (root / "README.md").write_text(citeworth_card(manifest))
    loaded = datasets.load_dataset(str(root), cache_dir=str(tmp_path / "cache"))
    assert set(loaded) == {"train", "test"}
    assert loaded["train"].to_list() == built["lines_grown"]["train"]
    assert "splits train, test." in (root / "README.md").read_text()
    for split in manifest["summary"]["paragraphs_per_split"]:
        manifest["summary"]["paragraphs_per_split"][split] = 0
    manifest["summary"]["per_field_cap"] = 0
    empty = citeworth_card(manifest)
    assert "config_name" not in empty and "nothing to load" in empty and "at most 0" not in empty


def test_adding_a_day_moves_no_paper(built):
    def where(lines):
        return {(r["paper_id"], r["section_index"]): s for s, rows in lines.items() for r in rows}

    before, after = where(built["lines"]), where(built["lines_grown"])
    assert all(after[key] == split for key, split in before.items())  # still released, same split
    assert any(pid == EXTRA_DAY[1] for pid, _ in after)


def test_table_2_metadata_matches_the_files(built):
    meta = _materialization(built["grown"], "citeworth_splits")
    samples = [s for rows in built["lines_grown"].values() for r in rows for s in r["samples"]]
    assert meta["sentences"] == len(samples) and meta["paragraphs"] == len(
        [r for rows in built["lines_grown"].values() for r in rows]
    )
    share = sum(s["label"] == LABEL_CITE_WORTHY for s in samples) / len(samples)
    assert meta["cite_worthy_share"] == pytest.approx(share, abs=1e-4)
    table = {r.data["metric"]: r.data["value"] for r in meta["table_2"].records}
    assert table["Total sentences"] == f"{len(samples):,}"
    assert table["Min char length"] == f"{min(len(s['text']) for s in samples):,}"
    assert table["Train sentences"] == f"{sum(len(r['samples']) for r in built['lines_grown']['train']):,}"
    assert meta["per_field_cap"] == meta["paragraphs"]  # one field: the median is its own count


def test_leftover_marker_check_passes_below_citeworths_rate(built):
    for key in ("release", "grown"):
        evaluation = _check(built[key])
        assert evaluation.check_name == "leftover_citation_markers" and evaluation.passed
        meta = {k: v.value for k, v in evaluation.metadata.items()}
        assert meta["rate"] < 0.019 == meta["citeworth_rate"]
        assert meta["sentences"] > 0 and meta["with_marker"] == 0
    assert release_audit(built["home"]) == audit_release(
        release_dir(built["home"])
    )  # real papers, grown release


def test_check_fails_on_a_release_with_markers(built, tmp_path):
    home = tmp_path / "data"
    shutil.copytree(release_dir(built["home"]), release_dir(home))
    path = release_dir(home) / "train.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["samples"][0]["text"] = "This result was shown by Smith et al. in detail."
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = dg.materialize(
        [citeworth.leftover_citation_markers],
        resources={"corpus": CorpusStore(home=str(home))},
        selection=dg.AssetSelection.checks(citeworth.leftover_citation_markers),
        run_config=QUIET,
        raise_on_error=False,
    )
    evaluation = _check(result)
    assert not evaluation.passed and evaluation.metadata["with_marker"].value == 1


def test_require_citation_is_a_config_setting(built, tmp_path, shared_landing):
    home = tmp_path / "data"
    for asset in ("arxiv_metadata", "papers", "latex_parses", "pdf_parses"):
        shutil.copytree(built["home"] / asset / "date=2020-10-03", home / asset / "date=2020-10-03")
    config = {"ops": {"citeworth_paragraphs": {"config": {"require_citation": False}}}}
    result = dg.materialize(
        [citeworth.citeworth_paragraphs],
        partition_key="2020-10-03",
        resources=_resources(home, shared_landing),
        run_config={**QUIET, **config},
    )
    meta = _materialization(result, "citeworth_paragraphs")
    with_citation = _materialization(built["daily"]["2020-10-03"], "citeworth_paragraphs")
    assert meta["kept"] > 10 > with_citation["kept"] == 2
    assert meta["cite_worthy_share"] < with_citation["cite_worthy_share"]


def test_the_location_wires_the_assets_and_the_check():
    """The daily job holds citeworth_paragraphs; the unpartitioned release runs in the graph job."""
    assert "citeworth_splits" in UNPARTITIONED_ASSETS
    graph = defs.resolve_asset_graph()
    splits, paragraphs = dg.AssetKey("citeworth_splits"), dg.AssetKey("citeworth_paragraphs")
    assert paragraphs in graph.get(splits).parent_keys
    assert graph.get(splits).partitions_def is None and graph.get(paragraphs).partitions_def is not None
    daily, release = defs.resolve_job_def(DAILY_JOB), defs.resolve_job_def(GRAPH_JOB)
    assert paragraphs in daily.asset_layer.selected_asset_keys
    assert splits not in daily.asset_layer.selected_asset_keys
    assert splits in release.asset_layer.selected_asset_keys
    check = dg.AssetCheckKey(splits, "leftover_citation_markers")
    assert check in release.asset_layer.asset_graph.asset_check_keys


def test_day_over_processes_equals_in_process(built, tmp_path, monkeypatch):
    """The real landing's candidate papers, put on one day, read over two processes give the
    rows read in process; a paper that kills its process is one ``extract_error`` candidate."""
    import multiprocessing as mp
    import os

    from corpus import parallel
    from corpus.release import citeworth as cw
    from corpus.store import Store

    source, store = Store(built["home"]), Store(tmp_path)
    day = "2024-01-01"
    for asset in ("papers", "pdf_parses", "latex_parses"):
        parts = [source.read_partition(asset, d) for d in DAYS if source.has_partition(asset, d)]
        store.write_partition(asset, day, pl.concat(parts, how="diagonal_relaxed"))
    alone = cw.citeworth_day(tmp_path, day)
    in_process = {a: store.read_partition(a, day) for a in (cw.PARAGRAPHS, cw.CANDIDATES)}
    assert alone["candidates"] == 2  # so two processes share them below
    monkeypatch.setattr(cw, "PAPERS_PER_WORKER", 1)
    assert cw.citeworth_day(tmp_path, day, workers=2) == alone
    assert all(store.read_partition(a, day).equals(f) for a, f in in_process.items())

    real, victim = cw.extract_paragraphs, DAYS["2023-08-02"]

    def dies_on_one(doc, paper_id, *args, **kwargs):
        if paper_id == victim:
            os._exit(3)  # a crash in C code, the OOM killer
        return real(doc, paper_id, *args, **kwargs)

    monkeypatch.setattr(cw, "extract_paragraphs", dies_on_one)
    monkeypatch.setattr(parallel, "_context", lambda: mp.get_context("fork"))  # the patch reaches it
    summary = cw.citeworth_day(tmp_path, day, workers=2)
    assert summary["errors"] == [(victim, "worker_died")]
    paras = store.read_partition(cw.PARAGRAPHS, day)
    assert paras.equals(in_process[cw.PARAGRAPHS].filter(pl.col("paper_id") != victim))
    cands = store.read_partition(cw.CANDIDATES, day)
    assert cands.filter(pl.col("paper_id") == victim)["reason"].to_list() == [cw.P_ERROR]
