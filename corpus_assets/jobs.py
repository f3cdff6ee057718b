"""Jobs: the daily corpus job (every daily asset of the days asked for), the cross-day job and
their retry policy. Every run the project's sensors ask for is a run of one of them.

The flow: the landing and endpoint sensors ask ``corpus_daily`` for each new or changed day;
the catch-up sensor (sensors/cross_day.py) asks ``corpus_graph`` for the cross-day assets whose
inputs' content differs from what they last read, at most once per tick of
``CORPUS_GRAPH_CRON``, so ten new days in an hour give one cross-day run. After a run that built
only some daily assets of a day (``arxiv_metadata`` from its asset page: ``Arxiv_metadata_job``;
another asset's page, the CLI) the rest of that day follows as a ``corpus_daily`` run
(sensors/rest_of_day.py). The daily assets have no automation condition: Dagster 1.13.27 runs
what an automation condition asks for as its implicit ``__ASSET_JOB``, never as a job of the
project, so the Overview showed those runs as "jobless".
"""

from __future__ import annotations

import os

import dagster as dg

DAILY_JOB = "corpus_daily"
# The UI's Materialize on an asset's page runs the first of the asset's jobs in name order, and
# Dagster's implicit "__ASSET_JOB" sorts before every name that starts with a lower-case letter:
# a capital first letter makes Asset -> arxiv_metadata -> Materialize a run of this job.
# Dagster 1.13 offers no setting for it: the asset node's job names are sorted (AssetNodeSnap,
# dagster/_core/remote_representation/external_data.py), the asset page passes no preferred job
# (only a job's own asset graph does: getCommonJob in the UI's LaunchAssetExecutionButton.tsx)
# and every asset is in __ASSET_JOB. Job names are [A-Za-z0-9_]+, and only a capital or a digit
# sorts before "_"; tests/test_ui_reads.py checks the order the UI reads.
METADATA_JOB = "Arxiv_metadata_job"
GRAPH_JOB = "corpus_graph"
DEFAULT_GRAPH_CRON = "0 * * * *"  # hourly

DAILY_ASSETS = [
    "arxiv_metadata",
    "arxiv_metadata_failures",
    "arxiv_pdfs",
    "arxiv_sources",
    "grobid_tei",
    "pdf_parses",
    "latex_parses",
    "papers",
    "fulltext_ids",
    "bib_entries",
    "pes2o",
    "citeworth_paragraphs",
    "citeworth_candidates",
]
UNPARTITIONED_ASSETS = [
    "citation_links",
    "citation_graph",
    "pes2o_v1",
    "pes2o_v2",
    "citeworth_splits",
]  # cross-partition: the corpus_graph job

# Retries live on jobs, not assets (DESIGN.md §4): transient network faults retry the step.
retry = dg.RetryPolicy(max_retries=2, delay=30, backoff=dg.Backoff.EXPONENTIAL)
# Runs the sensors launch are retried whole by the instance (dagster.yaml run_retries).
AUTOMATION_RUN_TAGS = {"dagster/max_retries": "2", "dagster/retry_strategy": "FROM_FAILURE"}


def graph_cron() -> str:
    """``CORPUS_GRAPH_CRON``: when the cross-day assets catch up (a cron string, default hourly)."""
    value = os.environ.get("CORPUS_GRAPH_CRON", "").strip() or DEFAULT_GRAPH_CRON
    from corpus_assets.dagster_internals import is_cron

    if not is_cron(value):
        raise ValueError(f"CORPUS_GRAPH_CRON={value!r} is not a cron string")
    return value


REDERIVE_TAG = "corpus/rederive"  # on the runs of a re-derive (corpus_assets/rederive.py)


CODE_CHECK = "built_by_current_code"  # reported by a sensor (corpus_assets/rederive.py), in no job
DAILY_SELECTION = dg.AssetSelection.assets(*DAILY_ASSETS) - dg.AssetSelection.checks(
    *(dg.AssetCheckKey(dg.AssetKey(a), CODE_CHECK) for a in DAILY_ASSETS)
)

corpus_daily = dg.define_asset_job(
    DAILY_JOB,
    selection=DAILY_SELECTION,
    op_retry_policy=retry,  # dagster/max_runtime: each run sets its own by its days (run_monitoring.py)
    description="Every daily asset for the partitions requested (one day, or a few days of a backfill).",
)

arxiv_metadata_job = dg.define_asset_job(
    METADATA_JOB,
    selection=DAILY_SELECTION & dg.AssetSelection.assets("arxiv_metadata", "arxiv_metadata_failures"),
    op_retry_policy=retry,
    description="Only arxiv_metadata (what its asset page's Materialize runs); once it succeeds, the rest of its "
    "days follows as a corpus_daily run (the corpus_rest_of_day sensor).",
)

corpus_graph = dg.define_asset_job(
    GRAPH_JOB,
    selection=dg.AssetSelection.assets(*UNPARTITIONED_ASSETS),
    op_retry_policy=retry,
    description="The cross-day assets (links, graph, releases) over every materialised day.",
)

all_jobs = [corpus_daily, arxiv_metadata_job, corpus_graph]


def daily_run_request(run_key: str, assets: list[str], tags: dict[str, str]) -> dg.RunRequest:
    """A sensor's ``corpus_daily`` run of some of the daily assets (the days in ``tags``), naming
    the job's checks of them too: Dagster subsets a job by the assets a request names and, unless
    it names checks, brings every check of those assets, the ``built_by_current_code`` ones the
    job leaves to their sensor (:data:`DAILY_SELECTION`) among them."""
    from corpus_assets.ingest import METADATA_CHECKS

    return dg.RunRequest(
        run_key=run_key,
        tags=tags,
        asset_selection=[dg.AssetKey(a) for a in assets],
        asset_check_keys=[c.key for c in METADATA_CHECKS if c.asset_key.to_user_string() in assets],
    )
