"""Jobs: the daily corpus job (every daily asset of one day) and its retry policy."""

from __future__ import annotations

import dagster as dg

DAILY_JOB = "corpus_daily"
METADATA_JOB = "arxiv_metadata_job"
UNPARTITIONED_ASSETS = [
    "citation_links",
    "citation_graph",
    "pes2o_v1",
    "pes2o_v2",
    "citeworth_splits",
]  # cross-partition: the corpus_graph job

# Retries live on jobs, not assets (DESIGN.md §4): transient network faults retry the step.
retry = dg.RetryPolicy(max_retries=2, delay=30, backoff=dg.Backoff.EXPONENTIAL)

corpus_daily = dg.define_asset_job(
    DAILY_JOB,
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets(*UNPARTITIONED_ASSETS, "arxiv_bulk_index"),
    op_retry_policy=retry,
    description="Every daily asset for the partitions requested (one day, or a range in a backfill).",
)

arxiv_metadata_job = dg.define_asset_job(
    METADATA_JOB,
    selection=dg.AssetSelection.assets("arxiv_metadata"),
    op_retry_policy=retry,
    description="Only arxiv_metadata: what the sensors request when new OAI metadata lands.",
)

GRAPH_JOB = "corpus_graph"

corpus_graph = dg.define_asset_job(
    GRAPH_JOB,
    selection=dg.AssetSelection.assets(*UNPARTITIONED_ASSETS),
    op_retry_policy=retry,
    description="The cross-day assets (links, graph, releases) over every materialised day.",
)

all_jobs = [corpus_daily, arxiv_metadata_job, corpus_graph]
