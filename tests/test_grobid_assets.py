"""grobid_tei and pdf_parses against a loopback Grobid answering with real recorded TEI."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import polars as pl
from grobid_server import FakeGrobid, dead_url, recorded_pairs

from corpus_assets.deployment import build_pipes_resource
from corpus_assets.files import arxiv_pdfs, arxiv_sources
from corpus_assets.ingest import arxiv_metadata
from corpus_assets.parse import grobid_tei, latex_parses, pdf_parses
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
        [arxiv_metadata, arxiv_pdfs, arxiv_sources, latex_parses, grobid_tei, pdf_parses],
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


def test_fallback_skips_a_pdf_whose_latex_parse_serves_and_says_so(tmp_path, shared_data, shared_landing):
    """The default policy: the paper's e-print (a real one, given to this paper) parses, so its PDF
    is not sent; the metadata counts it, pdf_parses skips it, papers takes the LaTeX parse."""
    from corpus_assets.papers import papers

    landing = _landing_without_tei(tmp_path, shared_landing)
    (landing / "src").mkdir()
    shutil.copy(shared_landing / "src" / "2004.14974.tar.gz", landing / "src" / f"{PAPER}.tar.gz")
    store = CorpusStore(home=str(tmp_path / "data"), landing=str(landing))
    with FakeGrobid.from_pairs(recorded_pairs(shared_data, shared_landing), slots=2) as server:
        with dg.instance_for_test() as instance:
            result = dg.materialize(
                [arxiv_metadata, arxiv_pdfs, arxiv_sources, latex_parses, grobid_tei, pdf_parses, papers],
                partition_key=DAY,
                resources={
                    "corpus": store,
                    "arxiv": ArxivResource(source="landing"),
                    "grobid": GrobidResource(base_url=server.url, policy="fallback", sample=0.0),
                    "pipes": build_pipes_resource(),
                },
                instance=instance,
                run_config=QUIET,
            )
        assert result.success and server.stats.fulltext == 0
    meta = result.asset_materializations_for_node("grobid_tei")[0].metadata
    assert (meta["skipped"].value, meta["pending"].value, meta["needs_grobid"].value) == (1, 0, 0)
    assert meta["policy"].value == "fallback (sample 0)"
    tei = _rows(store, "grobid_tei").row(0, named=True)
    assert (tei["status"], tei["reason"]) == ("skipped", "latex_parsed")
    assert _rows(store, "pdf_parses").row(0, named=True)["status"] == "skipped"
    paper = _rows(store, "papers").row(0, named=True)
    assert (paper["parse_source"], paper["parse_reason"], paper["has_grobid"]) == (
        "latex",
        "only_latex",
        False,
    )


def test_a_grobid_that_stays_busy_leaves_the_sign_the_operator_is_told_to_look_for(
    tmp_path, shared_data, shared_landing
):
    """docker/README.md ("When things fail"): after Grobid answered 503 past the client's retries,
    the day still materialises and grobid_tei's metadata names the reason (``busy``), which is
    what the operator (and the chaos test, docker/chaos.py) reads to re-run the day. Read here
    from the event as the instance stores it, through the chaos test's own reader."""
    import sys

    from dagster import serialize_value

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docker"))
    from chaos import Chaos

    landing = _landing_without_tei(tmp_path, shared_landing)
    store = CorpusStore(home=str(tmp_path / "data"), landing=str(landing))
    with FakeGrobid.from_pairs(recorded_pairs(shared_data, shared_landing), slots=2) as server:
        server.faults.busy_burst = 50
        with dg.instance_for_test() as instance:
            result = dg.materialize(
                [arxiv_metadata, arxiv_pdfs, arxiv_sources, latex_parses, grobid_tei],
                partition_key=DAY,
                resources={
                    "corpus": store,
                    "arxiv": ArxivResource(source="landing"),
                    "grobid": GrobidResource(base_url=server.url, max_retries=2, backoff_s=0.01),
                    "pipes": build_pipes_resource(),
                },
                instance=instance,
                run_config=QUIET,
            )
            assert result.success
            record = instance.fetch_materializations(dg.AssetKey("grobid_tei"), limit=1).records[0]
            stored = serialize_value(record.event_log_entry)
    tei = _rows(store, "grobid_tei").row(0, named=True)
    assert (tei["status"], tei["reason"]) == ("failed", "busy")

    class Reader(Chaos):
        def psql(self, sql: str) -> list[list[str]]:
            return [[stored]] if f"partition = '{DAY}'" in sql else []

    found = Reader(None, [DAY], [], [DAY]).tei_incomplete_days()
    assert DAY in found and "busy" in found[DAY], found
