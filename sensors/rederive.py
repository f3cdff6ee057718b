"""The sensors of re-deriving (corpus_assets/rederive.py): ``corpus_code_versions`` reports every
daily asset's ``built_by_current_code`` check, and ``corpus_rederive`` (off by default) runs a
re-derive from the UI, a round per tick, as ``make rederive`` does from the command line.

``corpus_code_versions`` keeps no list of its own: each check's latest result (the code version
it was judged against and the stale days, as ranges) is where it left off. A tick reads that,
then only the daily partitions materialised since its last tick (its cursor: an event-log
position) and their provenance. When the code location was reloaded with another version of a
stage, or the sensor is new or reset, it reads the provenance of every partition of that asset
(one small file each) once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping

import dagster as dg

from corpus.provenance import built_version
from corpus_assets.freshness import read_mark
from corpus_assets.jobs import DAILY_ASSETS
from corpus_assets.rederive import (
    CHECK_NAME,
    DailyGraph,
    code_check_evaluation,
    current_versions,
    expand_days,
    partition_set_origin,
    plan_round,
    rederive_tags,
    stale_code_days,
    submit_round,
)
from resources.store import CorpusStore

PAGE = 1000


def _reported(record) -> tuple[str, set[str]] | None:
    """(code version, stale days) of a check's latest result, or None."""
    if record is None or record.event is None or record.status.value == "PLANNED":
        return None
    data = record.event.get_dagster_event().asset_check_evaluation_data
    meta = data.metadata or {}
    if "code_version" not in meta or "days" not in meta:
        return None
    return str(meta["code_version"].value), expand_days(str(meta["days"].value))


def _built_since(instance: dg.DagsterInstance, asset: str, after: int, mark: int) -> set[str]:
    """Days of ``asset`` materialised with an event in (after, mark]."""
    days: set[str] = set()
    cursor = None
    while True:
        result = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(asset), after_storage_id=after, before_storage_id=mark + 1
            ),
            limit=PAGE,
            cursor=cursor,
        )
        days |= {r.partition_key for r in result.records if r.partition_key}
        if not result.has_more:
            return days
        cursor = result.cursor


def code_version_tick(
    instance: dg.DagsterInstance, store, versions: Mapping[str, str], cursor: str | None
) -> tuple[list[dg.AssetCheckEvaluation], str]:
    """One tick: the check results that changed, and the next cursor."""
    through = json.loads(cursor).get("through") if cursor else None
    mark = read_mark(instance)  # before reading: what lands later is read next tick
    keys = [dg.AssetCheckKey(dg.AssetKey(a), CHECK_NAME) for a in versions]
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    evaluations = []
    for key in keys:
        asset = key.asset_key.to_user_string()
        version = versions[asset]
        before = _reported(latest.get(key))
        if before is None or through is None or before[0] != version:
            days = set(stale_code_days(store, asset, version))
        else:
            days = set(before[1])
            for day in _built_since(instance, asset, int(through), mark):
                days.discard(day)
                if built_version(store, asset, day) not in (None, version):
                    days.add(day)
        if before is None or before != (version, days):
            evaluations.append(code_check_evaluation(asset, version, sorted(days)))
    return evaluations, json.dumps({"through": mark})


@dg.sensor(
    name="corpus_code_versions",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Reports each daily asset's built_by_current_code check: the days built by an older "
    "version of its stage, within a tick of a code location reload or of a day being built.",
)
def corpus_code_versions(context: dg.SensorEvaluationContext, corpus: CorpusStore) -> dg.SensorResult:
    evaluations, cursor = code_version_tick(
        context.instance, corpus.store, current_versions(DAILY_ASSETS), context.cursor
    )
    stale = [e.asset_key.to_user_string() for e in evaluations if not e.passed]
    message = (
        f"reported {len(evaluations)} check result(s)"
        + (f"; older code in {', '.join(stale)}" if stale else "")
        if evaluations
        else "no daily asset's stale days changed"
    )
    return dg.SensorResult(asset_events=evaluations, cursor=cursor, skip_reason=message)


def _rederive_busy(instance: dg.DagsterInstance) -> list[str]:
    """Backfills of a re-derive, or any daily backfill, not finished yet."""
    from dagster._core.execution.backfill import BulkActionsFilter, BulkActionStatus

    busy = [BulkActionStatus.REQUESTED, BulkActionStatus.CANCELING, BulkActionStatus.FAILING]
    return [b.backfill_id for b in instance.get_backfills(filters=BulkActionsFilter(statuses=busy))]


RETRY_FAILED_S = 3600  # a round that failed is not submitted again sooner (unless the code changed)


def _failed(instance: dg.DagsterInstance, backfill_ids: list[str]) -> list[str]:
    """Those of the previous round's backfills that did not complete, or had a run fail."""
    from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter

    failed = []
    for backfill_id in backfill_ids:
        backfill = instance.get_backfill(backfill_id)
        runs = instance.get_runs(
            filters=RunsFilter(
                tags={"dagster/backfill": backfill_id},
                statuses=[DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED],
            ),
            limit=1,
        )
        if backfill is None or backfill.status.value != "COMPLETED_SUCCESS" or runs:
            failed.append(backfill_id)
    return failed


def build_rederive_sensor(graph: DailyGraph) -> dg.SensorDefinition:
    """``corpus_rederive``: when turned on, a round of re-deriving per tick once the previous
    round's backfills are done (the same rounds as ``make rederive``)."""

    @dg.sensor(
        name="corpus_rederive",
        minimum_interval_seconds=60,
        default_status=dg.DefaultSensorStatus.STOPPED,
        description="Off by default. Turned on, it re-derives what an improvement of the code changes, "
        "as `make rederive` does: the daily partitions built by older code, then, round by round, "
        "those whose inputs' content changed (backfills of corpus_daily tagged corpus/rederive).",
    )
    def corpus_rederive(context: dg.SensorEvaluationContext, corpus: CorpusStore) -> dg.SensorResult:
        state = json.loads(context.cursor) if context.cursor else {}
        busy = _rederive_busy(context.instance)
        if busy:
            return dg.SensorResult(
                skip_reason=f"backfill(s) in progress: {', '.join(busy[:5])}", cursor=context.cursor
            )
        found = plan_round(corpus.store, graph)
        if not found.groups:
            return dg.SensorResult(
                skip_reason="nothing to re-derive: every built partition was made by today's code from the "
                "inputs it has now",
                cursor=json.dumps({}),
            )
        failed = _failed(context.instance, state.get("backfills", []))
        plan = hashlib.sha256(json.dumps(sorted([sorted(a), d] for a, d in found.groups.items())).encode())
        plan = plan.hexdigest()[:16]  # the round, in a few characters of the cursor
        now = dt.datetime.now(dt.UTC).timestamp()
        if failed and state.get("plan") == plan and now - state.get("at", 0) < RETRY_FAILED_S:
            return dg.SensorResult(
                skip_reason=f"round {state.get('round')} failed ({', '.join(failed)}): the same round is tried "
                f"again {RETRY_FAILED_S // 60} minutes after it, or at once when the code changes",
                cursor=context.cursor,
            )
        rederive_id = state.get("id") or dt.datetime.now(dt.UTC).strftime("sensor-%Y%m%dT%H%M%SZ")
        round_no = int(state.get("round", 0)) + 1
        origin = partition_set_origin(
            context.code_location_origin, context.repository_name or "__repository__"
        )
        ids = submit_round(
            context.instance,
            origin,
            found.groups,
            rederive_tags(rederive_id, round_no),
            f"corpus_rederive round {round_no}",
        )
        return dg.SensorResult(
            skip_reason=f"round {round_no}: backfill(s) {', '.join(ids)}\n" + "\n".join(found.lines()),
            cursor=json.dumps(
                {"id": rederive_id, "round": round_no, "backfills": ids, "plan": plan, "at": now}
            ),
        )

    return corpus_rederive
