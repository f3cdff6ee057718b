"""The rest of a day after a run that built only some of its daily assets: a ``corpus_daily`` run
of the daily assets downstream of what it built, for the same days.

Whoever made the partial run: the asset page's Materialize (``Arxiv_metadata_job`` for
``arxiv_metadata``, Dagster's ``__ASSET_JOB`` for the others), ``corpus_daily``'s graph with some
assets selected, the CLI's ``dagster asset materialize --select ...`` (a run of no code location),
a check's Execute. A run that built every daily asset, or none, asks for nothing; nor does a
re-derive's (it re-derives downstream only where the inputs' content changed, rederive_plan.py).
The follow-up is a run of the project's job, so the Overview shows it under ``corpus_daily``;
Dagster's own automation sensor would launch it as ``__ASSET_JOB`` (Dagster 1.13.27 gives an
automation condition's run no job of the project's).
"""

from __future__ import annotations

import dagster as dg

from corpus_assets.jobs import (
    AUTOMATION_RUN_TAGS,
    DAILY_ASSETS,
    DAILY_JOB,
    METADATA_JOB,
    REDERIVE_TAG,
    corpus_daily,
    daily_run_request,
)
from corpus_assets.rederive_plan import DailyGraph

PARTITION_TAGS = (
    "dagster/partition",
    "dagster/asset_partition_range_start",
    "dagster/asset_partition_range_end",
)
METADATA_ASSETS = ["arxiv_metadata", "arxiv_metadata_failures"]
JOB_ASSETS = {DAILY_JOB: DAILY_ASSETS, METADATA_JOB: METADATA_ASSETS}  # a run of a whole job builds these
REST_OF_METADATA = [a for a in DAILY_ASSETS if a not in METADATA_ASSETS]  # what follows Arxiv_metadata_job


def built_daily_assets(run: dg.DagsterRun) -> set[str]:
    """The daily assets ``run`` built: its asset selection; none for a run of checks only (a
    check's Execute); else its whole job's (a run of a whole job names no selection, or an empty
    one when executed in process)."""
    if run.asset_selection:
        return {k.to_user_string() for k in run.asset_selection} & set(DAILY_ASSETS)
    if run.asset_check_selection:
        return set()
    return set(JOB_ASSETS.get(run.job_name, []))


def downstream(graph: DailyGraph, assets: set[str]) -> set[str]:
    """The daily assets that read any of ``assets``, directly or not."""
    found, grew = set(), True
    while grew:
        grew = False
        for asset, inputs in graph.deps.items():
            if asset not in found and (set(inputs) & (assets | found)):
                found.add(asset)
                grew = True
    return found


def rest_of_day_request(run: dg.DagsterRun, graph: DailyGraph) -> dg.RunRequest | str:
    """The ``corpus_daily`` run of what is downstream of ``run``'s daily assets and not built by
    it, over its days, keyed by the run (asked for once); else why there is none."""
    if run.tags.get(REDERIVE_TAG):
        return "a re-derive's run: the re-derive decides what follows"
    built = built_daily_assets(run)
    if not built:
        return "the run built no daily asset"
    rest = sorted(downstream(graph, built) - built, key=DAILY_ASSETS.index)
    if not rest:
        return f"it built {len(built)} daily asset(s) and every daily asset that reads them"
    tags = {k: run.tags[k] for k in PARTITION_TAGS if run.tags.get(k)}
    if not tags:
        return "the run covered no partition"
    return daily_run_request(run.run_id, rest, tags={**AUTOMATION_RUN_TAGS, **tags})


def build_rest_of_day_sensor(graph: DailyGraph) -> dg.SensorDefinition:
    """``corpus_rest_of_day`` over the daily assets' lineage (``graph``, from the definitions)."""

    @dg.run_status_sensor(
        name="corpus_rest_of_day",
        run_status=dg.DagsterRunStatus.SUCCESS,
        monitor_all_code_locations=True,  # runs of no code location too: the CLI's asset materialize
        request_job=corpus_daily,
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Once a run that built some of a day's daily assets succeeds (an asset page's Materialize, "
        "a selection in corpus_daily's graph, the CLI), a corpus_daily run of the daily assets downstream of "
        "them for the same days.",
    )
    def rest_of_day(context: dg.RunStatusSensorContext):
        request = rest_of_day_request(context.dagster_run, graph)
        if isinstance(request, str):
            return dg.SkipReason(f"run {context.dagster_run.run_id[:8]}: {request}")
        return request

    return rest_of_day
