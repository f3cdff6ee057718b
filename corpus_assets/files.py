"""Ingest assets for the files behind each paper: PDFs (with the S2ORC filters) and e-prints."""

from collections import Counter
from dataclasses import asdict

import dagster as dg
import polars as pl

from corpus.pdf import filter_table
from corpus.stages import PDF_SCHEMA, FetchSettings
from corpus_assets.common import count_table, markdown_preview, rows_table
from corpus_assets.deployment import run_stage
from corpus_assets.partitions import daily_asset, partition_dates
from resources.arxiv import ArxivResource
from resources.store import CorpusStore


def fetch_settings(arxiv: ArxivResource) -> FetchSettings:
    return FetchSettings(
        mode=arxiv.source,
        web_url=arxiv.web_url,
        min_interval_s=arxiv.min_interval_s,
        timeout_s=arxiv.timeout_s,
        max_retries=arxiv.max_retries,
        bulk=arxiv.bulk,
        bulk_fallback=arxiv.bulk_fallback,
        bulk_layout=arxiv.bulk_layout,
    )


def stage_params(corpus: CorpusStore, arxiv: ArxivResource) -> dict:
    """What a fetching stage needs, as plain data for the Pipes worker (DESIGN.md §4)."""
    return {"home": corpus.home, "landing": corpus.landing, "fetch": asdict(fetch_settings(arxiv))}


@daily_asset(
    deps=["arxiv_metadata"],
    group_name="ingest",
    kinds={"parquet", "pdf"},
    pool="arxiv_api",
    description="Latest PDF per paper in the content-addressed store, probed, with the S2ORC App. B filters.",
)
def arxiv_pdfs(
    context: dg.AssetExecutionContext,
    corpus: CorpusStore,
    arxiv: ArxivResource,
    pipes: dg.ResourceParam[dg.PipesClient],
) -> dg.MaterializeResult:
    status: Counter[str] = Counter()
    reasons: list[str | None] = []
    days = partition_dates(context)
    for summary in run_stage(context, pipes, "arxiv_pdfs_day", days, stage_params(corpus, arxiv)):
        status.update(summary["status"])
        reasons.extend(summary["filter_reasons"])
    store = corpus.store
    store.refresh_views()
    table = filter_table(reasons)
    kept = next(r["count"] for r in table if r["reason"] == "kept")
    preview = store.read_partition("arxiv_pdfs", days[0]) if days else pl.DataFrame(schema=PDF_SCHEMA)
    return dg.MaterializeResult(
        metadata={
            "papers": len(reasons),
            "pdfs_kept": kept,
            "fetch_status": count_table(dict(status), "status"),
            "filter_table": rows_table(table, ["reason", "label", "count", "share"]),
            "preview": markdown_preview(
                preview, ["id", "status", "pages", "first_page_width", "first_page_height", "filter_reason"]
            ),
        }
    )


@daily_asset(
    deps=["arxiv_metadata"],
    group_name="ingest",
    kinds={"parquet", "latex"},
    pool="arxiv_api",
    description="arXiv e-prints in the blob store, unpacked without trusting them, main file assembled.",
)
def arxiv_sources(
    context: dg.AssetExecutionContext,
    corpus: CorpusStore,
    arxiv: ArxivResource,
    pipes: dg.ResourceParam[dg.PipesClient],
) -> dg.MaterializeResult:
    status: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    days = partition_dates(context)
    for summary in run_stage(context, pipes, "arxiv_sources_day", days, stage_params(corpus, arxiv)):
        status.update(summary["status"])
        kinds.update(summary["kinds"])
        failures.update(summary["failures"])
    corpus.store.refresh_views()
    preview = corpus.store.read_partition("arxiv_sources", days[0]) if days else pl.DataFrame()
    return dg.MaterializeResult(
        metadata={
            "papers": sum(status.values()),
            "assembled": sum(v for k, v in failures.items() if k == "ok"),
            "fetch_status": count_table(dict(status), "status"),
            "kinds": count_table(dict(kinds), "kind"),
            "failures": count_table(dict(failures), "failure"),
            "preview": markdown_preview(preview, ["id", "status", "kind", "n_files", "main", "failure"]),
        }
    )
