"""Papers assets: canonical metadata with explainable filters (and the arXiv ids each paper's
text names), and every bibliography entry."""

import dagster as dg

from corpus.papers.fulltext_ids import FULLTEXT_IDS
from corpus_assets.common import (
    asset_path,
    count_table,
    report_day,
    rows_table,
    selected,
)
from corpus_assets.partitions import daily_asset, daily_multi_asset, partition_dates
from resources.store import CorpusStore


@daily_multi_asset(
    specs=[
        dg.AssetSpec(
            "papers",
            deps=["arxiv_metadata", "pdf_parses", "latex_parses"],
            group_name="papers",
            kinds={"parquet"},
            description="One row per paper: canonical metadata (OAI first), the chosen full text and the "
            "S2ORC filters.",
        ),
        dg.AssetSpec(
            FULLTEXT_IDS,
            deps=["arxiv_metadata", "pdf_parses", "latex_parses"],
            group_name="papers",
            kinds={"parquet"},
            description="arXiv ids named in each kept paper's body text (co-citation edges, "
            "arXiv-as-a-dataset §2.3), from the same chosen parse as papers.",
        ),
    ],
    can_subset=True,  # both tables are written together; only the selected ones are reported
)
def papers(context: dg.AssetExecutionContext, corpus: CorpusStore):
    from corpus.papers.days import papers_day
    from corpus.papers.metadata import filter_table

    days = partition_dates(context)
    store = corpus.store
    for day in days:
        summary = papers_day(corpus.home, day)
        for f in summary["failures"]:
            context.log.warning(f"paper {f['id']} could not be built: {f['reason']}")
        reasons = summary["drop_reasons"]
        report_day(
            context,
            store,
            "papers",
            day,
            summary["papers"],
            {
                "kept": sum(1 for r in reasons if r is None),
                "failed": len(summary["failures"]),
                "filters": rows_table(
                    filter_table([{"drop_reason": r} for r in reasons]),
                    ["filter", "description", "dropped", "remaining"],
                ),
                "paper_counts": count_table(summary["counts"], "statistic"),
                "parse_choice": count_table(summary["parse_reasons"], "reason"),
            },
            preview=["id", "title", "field", "parse_source", "parse_reason", "kept", "drop_reason"],
        )
        report_day(
            context,
            store,
            FULLTEXT_IDS,
            day,
            store.partition_rows(FULLTEXT_IDS, day),
            preview=["citing_id", "cited_id", "mentions"],
        )
    store.refresh_views(["papers", FULLTEXT_IDS])
    if selected(context, "papers"):
        yield dg.MaterializeResult(asset_key="papers", metadata=asset_path(store, "papers"))
    if selected(context, FULLTEXT_IDS):
        yield dg.MaterializeResult(asset_key=FULLTEXT_IDS, metadata=asset_path(store, FULLTEXT_IDS))


@daily_asset(
    deps=["papers", "pdf_parses", "latex_parses"],  # the entries come from the parse papers chose
    group_name="papers",
    kinds={"parquet"},
    description="Every bibliography entry of every chosen parse, with normalised title, DOI and arXiv id.",
)
def bib_entries(context: dg.AssetExecutionContext, corpus: CorpusStore) -> dg.MaterializeResult:
    from corpus.papers.days import bib_entries_day

    days = partition_dates(context)
    for day in days:
        summary = bib_entries_day(corpus.home, day)
        n = summary["entries"] or 1
        report_day(
            context,
            corpus.store,
            "bib_entries",
            day,
            summary["entries"],
            {
                "with_title": summary["with_title"],
                "with_doi": summary["with_doi"],
                "with_arxiv_id": summary["with_arxiv_id"],
                "share_with_title": round(summary["with_title"] / n, 4),
            },
            preview=["entry_id", "norm_title", "doi", "arxiv_id", "year", "first_author_surname", "mentions"],
        )
    corpus.store.refresh_views(["bib_entries"])
    return dg.MaterializeResult(metadata=asset_path(corpus.store, "bib_entries"))
