"""The daily assets in a chain on real days of ../shared/landing (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from corpus_assets.definitions import defs
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
DAYS = {
    "2020-10-03": "2004.14974",
    "2025-03-22": "2408.12714",
    "2025-02-17": "2502.12102",
    "2023-08-02": "1706.03762",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory, shared_landing):
    home = tmp_path_factory.mktemp("chain") / "data"
    store = CorpusStore(home=str(home), landing=str(shared_landing))
    resources = {**defs.resources, "corpus": store, "arxiv": ArxivResource(source="landing")}
    job = defs.resolve_job_def("corpus_daily")
    with dg.instance_for_test() as instance:
        results = {}
        for day in DAYS:
            results[day] = dg.materialize(
                [a for a in defs.assets if a.partitions_def is not None],
                partition_key=day,
                resources=resources,
                instance=instance,
                run_config=QUIET,
            )
        again = dg.materialize(
            [a for a in defs.assets if a.partitions_def is not None],
            partition_key="2020-10-03",
            resources=resources,
            instance=instance,
            run_config=QUIET,
        )
        assert job.name == "corpus_daily"
        yield home, results, again


def _read(home: Path, asset: str, day: str) -> pl.DataFrame:
    return pl.read_parquet(home / asset / f"date={day}" / "part-0.parquet")


def test_every_run_succeeds(built):
    _, results, again = built
    assert all(r.success for r in results.values()) and again.success


def test_pdfs_probed_and_filtered(built):
    home, _, _ = built
    row = _read(home, "arxiv_pdfs", "2025-02-17").row(0, named=True)
    assert (row["id"], row["pages"], row["passed"], row["filter_reason"]) == (
        "2502.12102",
        76,
        False,
        "too_many_pages",
    )
    row = _read(home, "arxiv_pdfs", "2023-08-02").row(0, named=True)
    assert (row["pages"], row["first_page_width"], row["first_page_height"], row["passed"]) == (
        15,
        612.0,
        792.0,
        True,
    )
    row = _read(home, "arxiv_pdfs", "2020-10-03").row(0, named=True)
    assert (row["status"], row["filter_reason"]) == (
        "missing",
        "missing",
    )  # no PDF in the landing zone: said so


def test_sources_assembled_and_parsed(built):
    home, _, _ = built
    src = _read(home, "arxiv_sources", "2025-03-22").row(0, named=True)
    assert (src["kind"], src["main"], src["failure"], src["has_bbl"]) == ("tar", "ms.tex", None, True)
    parse = _read(home, "latex_parses", "2020-10-03").row(0, named=True)
    assert parse["status"] == "ok" and parse["n_bib_entries"] == 36
    assert parse["n_cite_spans"] == parse["n_linked_cite_spans"] > 0
    doc = json.loads(parse["doc"])
    assert doc["paper_id"] == "2004.14974" and doc["source"] == "latex" and len(doc["body_text"]) > 20
    none = _read(home, "latex_parses", "2023-08-02").row(0, named=True)
    assert (none["status"], none["reason"]) == ("skipped", "missing")


def test_rerun_fetches_nothing_and_gives_the_same_rows(built):
    home, results, again = built
    src = _read(home, "arxiv_sources", "2020-10-03").row(0, named=True)
    # the row describes the file, not the run: re-running an unchanged day writes the same row
    assert (src["status"], src["source"]) == ("stored", "landing")
    sources = again.asset_materializations_for_node("arxiv_sources")[0].metadata["fetch_status"]
    counts = {r.data["status"]: r.data["count"] for r in sources.value.records}
    assert counts == {"cached": 1}  # what this run did is the run's metadata
    known = again.asset_materializations_for_node("arxiv_sources")[0].metadata["fetch_source"]
    assert {r.data["source"]: r.data["count"] for r in known.value.records} == {"known": 1}
    for asset in ("latex_parses", "arxiv_metadata"):
        assert _read(home, asset, "2020-10-03").height == 1


def test_cached_tei_parsed_without_grobid(built):
    home, _, _ = built
    tei = _read(home, "grobid_tei", "2023-08-02").row(0, named=True)
    assert (tei["status"], tei["source"], tei["grobid_version"]) == ("cached", "landing", "0.8.1-SNAPSHOT")
    parse = _read(home, "pdf_parses", "2023-08-02").row(0, named=True)
    assert parse["status"] == "ok" and parse["n_bib_entries"] == 40 and parse["citation_style"] == "BRACKET"
    assert _read(home, "grobid_tei", "2025-02-17").height == 0  # 76 pages: filtered out before Grobid


def test_papers_choose_parse_and_filter(built):
    home, _, _ = built
    papers = {r["id"]: r for d in DAYS for r in _read(home, "papers", d).iter_rows(named=True)}
    assert set(papers) == set(DAYS.values())
    assert papers["2004.14974"]["parse_source"] == "latex" and papers["2004.14974"]["kept"]
    assert (
        papers["1706.03762"]["parse_source"] == "grobid"
        and papers["1706.03762"]["title"] == "Attention Is All You Need"
    )
    assert papers["1706.03762"]["field"] == "Computer Science" and papers["2408.12714"]["field"] == "Physics"
    bib = _read(home, "bib_entries", "2023-08-02")
    assert bib.height == 40 and bib["entry_id"].is_unique().all() and bib["norm_title"].null_count() < 5
