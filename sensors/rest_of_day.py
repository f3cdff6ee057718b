"""The rest of a day whose ``arxiv_metadata`` was built alone (the asset page's Materialize on
``arxiv_metadata`` runs ``Arxiv_metadata_job``): once that run succeeds, a ``corpus_daily`` run
of the day's other daily assets, so the whole one-day path shows under the project's jobs. The
daily assets' automation condition ignores the metadata job's updates (corpus_assets.jobs), whose
run would be one of Dagster's implicit ``__ASSET_JOB``."""

from __future__ import annotations

import dagster as dg

from corpus_assets.jobs import (
    AUTOMATION_RUN_TAGS,
    DAILY_ASSETS,
    arxiv_metadata_job,
    corpus_daily,
    daily_run_request,
)

PARTITION_TAGS = (
    "dagster/partition",
    "dagster/asset_partition_range_start",
    "dagster/asset_partition_range_end",
)
METADATA_ASSETS = {"arxiv_metadata", "arxiv_metadata_failures"}
REST = [a for a in DAILY_ASSETS if a not in METADATA_ASSETS]


def rest_of_day_request(run: dg.DagsterRun) -> dg.RunRequest | None:
    """The ``corpus_daily`` run of the rest of ``run``'s days (one day or a range), keyed by the
    run, so it is asked for once; None for a run of no partition."""
    tags = {k: run.tags[k] for k in PARTITION_TAGS if run.tags.get(k)}
    if not tags:
        return None
    return daily_run_request(run.run_id, REST, tags={**AUTOMATION_RUN_TAGS, **tags})


@dg.run_status_sensor(
    name="corpus_rest_of_day",
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=[arxiv_metadata_job],
    request_job=corpus_daily,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Once Arxiv_metadata_job (the asset page's Materialize on arxiv_metadata) succeeds, a "
    "corpus_daily run of the rest of its days.",
)
def rest_of_day(context: dg.RunStatusSensorContext):
    request = rest_of_day_request(context.dagster_run)
    if request is None:
        return dg.SkipReason("the run covered no partition")
    return request
