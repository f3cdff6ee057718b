"""grobid_tei and pdf_parses against a loopback Grobid answering with real recorded TEI."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import polars as pl
from grobid_server import FakeGrobid, dead_url, recorded_pairs

from corpus_assets.deployment import build_pipes_resource
from corpus_assets.files import arxiv_pdfs
from corpus_assets.ingest import arxiv_metadata
from corpus_assets.parse import grobid_tei, pdf_parses
from resources.arxiv import ArxivResource
from resources.grobid import GrobidResource
from resources.store import CorpusStore

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
DAY, PAPER = "2023-08-02", "1706.03762"


def _landing_without_tei(tmp_path: Path, shared_landing: Path) -> Path:
    landing = tmp_path / "landing"
    shutil.copytree(shared_landing / "oai", landing / "oai")
    (landing / "pdf").mkdir()
    shutil.copy(shared_landing / "pdf" / f"{PAPER}.pdf", landing / "pdf")
    return landing


def _run(store: CorpusStore, grobid_url: str, instance) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [arxiv_metadata, arxiv_pdfs, grobid_tei, pdf_parses],
        partition_key=DAY,
        resources={
            "corpus": store,
            "arxiv": ArxivResource(source="landing"),
            "grobid": GrobidResource(base_url=grobid_url, concurrency=2, backoff_s=0.01),
            "pipes": build_pipes_resource(),
        },
        instance=instance,
        run_config=QUIET,
    )


def _rows(store: CorpusStore, asset: str) -> pl.DataFrame:
    return pl.read_parquet(Path(store.home) / asset / f"date={DAY}" / "part-0.parquet")


def test_pdf_goes_to_grobid_once_then_comes_from_the_cache(tmp_path, shared_data, shared_landing):
    landing = _landing_without_tei(tmp_path, shared_landing)
    store = CorpusStore(home=str(tmp_path / "data"), landing=str(landing))
    pairs = recorded_pairs(shared_data, shared_landing)
    with FakeGrobid.from_pairs(pairs, slots=2) as server, dg.instance_for_test() as instance:
        server.faults.busy_burst = 2  # the pool is full at first: retried, not failed
        first = _run(store, server.url, instance)
        assert first.success
        tei = _rows(store, "grobid_tei").row(0, named=True)
        assert (tei["id"], tei["status"], tei["source"], tei["http_status"]) == (PAPER, "ok", "grobid", 200)
        parse = _rows(store, "pdf_parses").row(0, named=True)
        assert parse["status"] == "ok" and parse["n_bib_entries"] == 40 and parse["n_linked_cite_spans"] > 50
        sent = server.stats.fulltext
        again = _run(store, server.url, instance)
        assert again.success and server.stats.fulltext == sent  # a re-run sends nothing that is cached
        assert _rows(store, "grobid_tei").row(0, named=True) == tei  # same row: change detection sees none


def test_dead_grobid_does_not_fail_the_run(tmp_path, shared_landing):
    landing = _landing_without_tei(tmp_path, shared_landing)
    store = CorpusStore(home=str(tmp_path / "data"), landing=str(landing))
    with dg.instance_for_test() as instance:
        result = _run(store, dead_url(), instance)
        assert result.success
        mat = result.asset_materializations_for_node("grobid_tei")[0]
        assert mat.metadata["pending"].value == 1
        assert "Grobid unavailable" in mat.metadata["grobid"].value
    tei = _rows(store, "grobid_tei").row(0, named=True)
    assert (tei["status"], tei["reason"]) == ("pending", "grobid_unavailable")
    parse = _rows(store, "pdf_parses").row(0, named=True)
    assert (parse["status"], parse["reason"]) == ("skipped", "grobid_unavailable")
