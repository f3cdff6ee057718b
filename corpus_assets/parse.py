"""Parse assets: structured full text from LaTeX (and, with Grobid, from PDFs)."""

import dagster as dg

from corpus_assets.common import asset_path, count_table, md_text, report_day
from corpus_assets.deployment import paper_workers, run_stage
from corpus_assets.partitions import daily_asset, partition_dates
from resources.grobid import GrobidResource
from resources.store import CorpusStore

PREVIEW = ["id", "status", "reason", "citation_style", "n_paragraphs", "n_cite_spans", "n_bib_entries"]


def report_parse_day(
    context: dg.AssetExecutionContext, corpus: CorpusStore, asset: str, day: str, summary: dict
) -> None:
    """One day's Table-4-like averages and citation-style histogram (corpus.parse.days.parse_summary)."""
    report_day(
        context,
        corpus.store,
        asset,
        day,
        summary["papers"],
        {
            "parsed": summary["parsed"],
            "failed": summary["failed"],
            "paragraphs_per_paper": summary["paragraphs_per_paper"],
            "cite_spans_per_paper": summary["cite_spans_per_paper"],
            "linked_cite_spans_per_paper": summary["linked_cite_spans_per_paper"],
            "bib_entries_per_paper": summary["bib_entries_per_paper"],
            "status": count_table(summary["status"], "status"),
            "failure_reasons": count_table(summary["reasons"], "reason"),
            "citation_styles": count_table(summary["citation_styles"], "style"),
        },
        preview=PREVIEW,
    )


@daily_asset(
    deps=["arxiv_sources"],
    group_name="parse",
    kinds={"parquet", "latex"},
    description="LaTeX -> S2ORC-style structured full text (the same schema as pdf_parses).",
)
def latex_parses(
    context: dg.AssetExecutionContext, corpus: CorpusStore, pipes: dg.ResourceParam[dg.PipesClient]
) -> dg.MaterializeResult:
    days = partition_dates(context)
    params = {"home": corpus.home, "workers": paper_workers(context)}
    for day, summary in zip(days, run_stage(context, pipes, "latex_parses_day", days, params), strict=True):
        report_parse_day(context, corpus, "latex_parses", day, summary)
    corpus.store.refresh_views(["latex_parses"])
    return dg.MaterializeResult(metadata=asset_path(corpus.store, "latex_parses"))


def grobid_settings(grobid: GrobidResource) -> dict:
    """GrobidClient keyword arguments from the resource (plain data, so a Pipes worker can take them)."""
    return {
        "base_url": grobid.base_url,
        "timeout_s": grobid.timeout_s,
        "concurrency": grobid.concurrency or None,
        "max_retries": grobid.max_retries,
        "backoff": grobid.backoff_s,
        "fallback_concurrency": grobid.fallback_concurrency,
        "headroom": grobid.headroom,
        "options": grobid.options().model_dump(),
    }


@daily_asset(
    deps=["arxiv_pdfs"],
    group_name="parse",
    kinds={"parquet", "xml"},
    pool="grobid",
    description="Grobid TEI for every PDF that passed the filters: cached by PDF sha256, or from the service.",
)
def grobid_tei(
    context: dg.AssetExecutionContext,
    corpus: CorpusStore,
    grobid: GrobidResource,
    pipes: dg.ResourceParam[dg.PipesClient],
) -> dg.MaterializeResult:
    days = partition_dates(context)
    params = {"home": corpus.home, "landing": corpus.landing, "grobid": grobid_settings(grobid)}
    unavailable = None
    for day, summary in zip(days, run_stage(context, pipes, "grobid_tei_day", days, params), strict=True):
        status = summary["status"]
        unavailable = unavailable or summary["unavailable"]
        report_day(
            context,
            corpus.store,
            "grobid_tei",
            day,
            summary["pdfs"],
            {
                "tei_available": status.get("ok", 0) + status.get("cached", 0),
                "sent_to_grobid": summary["sent"],
                "pending": status.get("pending", 0),
                "status": count_table(status, "status"),
                "failure_reasons": count_table(summary["reasons"], "reason"),
            },
            preview=["id", "status", "source", "reason"],
        )
    corpus.store.refresh_views(["grobid_tei"])
    if unavailable:
        context.log.warning(
            f"PDF(s) pending: {unavailable}. Cached TEI was used; "
            "start Grobid (docker/) and re-run to parse the rest."
        )
    return dg.MaterializeResult(
        metadata={
            "grobid": dg.MetadataValue.md(
                f"**Grobid unavailable** — {md_text(unavailable)}. Pending PDFs are parsed on a later run."
                if unavailable
                else f"Grobid at {md_text(grobid.base_url)} answered (or every TEI was cached)."
            ),
            **asset_path(corpus.store, "grobid_tei"),
        }
    )


@daily_asset(
    deps=["grobid_tei"],
    group_name="parse",
    kinds={"parquet"},
    description="Grobid TEI -> S2ORC-style structured full text (pdf_parse shape).",
)
def pdf_parses(
    context: dg.AssetExecutionContext, corpus: CorpusStore, pipes: dg.ResourceParam[dg.PipesClient]
) -> dg.MaterializeResult:
    days = partition_dates(context)
    params = {"home": corpus.home, "workers": paper_workers(context)}
    for day, summary in zip(days, run_stage(context, pipes, "pdf_parses_day", days, params), strict=True):
        report_parse_day(context, corpus, "pdf_parses", day, summary)
    corpus.store.refresh_views(["pdf_parses"])
    return dg.MaterializeResult(metadata=asset_path(corpus.store, "pdf_parses"))
