"""Ingest assets for the files behind each paper: PDFs (with the S2ORC filters) and e-prints."""

from dataclasses import asdict
from typing import TYPE_CHECKING

import dagster as dg

from corpus.ingest.pdf import filter_table
from corpus_assets.common import asset_path, count_table, report_day, rows_table
from corpus_assets.deployment import paper_workers, run_stage
from corpus_assets.ingest import network_pool
from corpus_assets.partitions import daily_asset, partition_dates
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

if TYPE_CHECKING:
    from corpus.ingest.days import FetchSettings


def fetch_settings(arxiv: ArxivResource) -> "FetchSettings":
    from corpus.ingest.days import FetchSettings

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


def stage_params(context: dg.AssetExecutionContext, corpus: CorpusStore, arxiv: ArxivResource) -> dict:
    """What a fetching stage needs, as plain data for the Pipes worker (DESIGN.md §4)."""
    return {
        "home": corpus.home,
        "landing": corpus.landing,
        "fetch": asdict(fetch_settings(arxiv)),
        "workers": paper_workers(context),
    }


@daily_asset(
    deps=["arxiv_metadata"],
    group_name="ingest",
    kinds={"parquet", "pdf"},
    pool=network_pool(),
    description="Latest PDF per paper in the content-addressed store, probed, with the S2ORC App. B filters.",
)
def arxiv_pdfs(
    context: dg.AssetExecutionContext,
    corpus: CorpusStore,
    arxiv: ArxivResource,
    pipes: dg.ResourceParam[dg.PipesClient],
) -> dg.MaterializeResult:
    days = partition_dates(context)
    params = stage_params(context, corpus, arxiv)
    for day, summary in zip(days, run_stage(context, pipes, "arxiv_pdfs_day", days, params), strict=True):
        table = filter_table(summary["filter_reasons"])
        report_day(
            context,
            corpus.store,
            "arxiv_pdfs",
            day,
            summary["papers"],
            {
                "pdfs_kept": next(r["count"] for r in table if r["reason"] == "kept"),
                "fetch_status": count_table(summary["status"], "status"),  # this run's; rows say the file's
                "fetch_source": count_table(summary.get("sources", {}), "source"),
                "filter_table": rows_table(table, ["reason", "label", "count", "share"]),
            },
            preview=["id", "status", "pages", "first_page_width", "first_page_height", "filter_reason"],
        )
    corpus.store.refresh_views(["arxiv_pdfs"])
    return dg.MaterializeResult(metadata=asset_path(corpus.store, "arxiv_pdfs"))


@daily_asset(
    deps=["arxiv_metadata"],
    group_name="ingest",
    kinds={"parquet", "latex"},
    pool=network_pool(),
    description="arXiv e-prints in the blob store, unpacked without trusting them, main file assembled.",
)
def arxiv_sources(
    context: dg.AssetExecutionContext,
    corpus: CorpusStore,
    arxiv: ArxivResource,
    pipes: dg.ResourceParam[dg.PipesClient],
) -> dg.MaterializeResult:
    days = partition_dates(context)
    params = stage_params(context, corpus, arxiv)
    for day, summary in zip(days, run_stage(context, pipes, "arxiv_sources_day", days, params), strict=True):
        report_day(
            context,
            corpus.store,
            "arxiv_sources",
            day,
            summary["papers"],
            {
                "assembled": summary["failures"].get("ok", 0),
                "fetch_status": count_table(summary["status"], "status"),  # this run's; rows say the file's
                "fetch_source": count_table(summary.get("sources", {}), "source"),
                "kinds": count_table(summary["kinds"], "kind"),
                "failures": count_table(summary["failures"], "failure"),
            },
            preview=["id", "status", "kind", "n_files", "main", "failure"],
        )
    corpus.store.refresh_views(["arxiv_sources"])
    return dg.MaterializeResult(metadata=asset_path(corpus.store, "arxiv_sources"))
