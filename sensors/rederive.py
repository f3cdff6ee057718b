"""The sensors of re-deriving (corpus_assets/rederive_plan.py): ``corpus_code_versions`` reports
every daily asset's ``built_by_current_code`` check, and ``corpus_rederive`` (off by default) runs
a re-derive from the UI, a round per tick, as ``make rederive`` does from the command line.

``corpus_code_versions`` keeps no list of its own: each check's latest result (the code version
it was judged against and the stale days, as ranges) is where it left off. A tick reads that,
then only the daily partitions materialised since its last tick (its cursor: an event-log
position, in words) and their provenance. When the code location was reloaded with another
version of a stage, or the sensor is new or reset, it reads the provenance of every partition of
that asset (one small file each) once. It reports a check again whenever its asset was
materialised since the check's latest result, stale days changed or not: the UI shows a check
whose latest result is older than the asset's latest materialisation as "not evaluated", and the
runs that build days do not run this check (it would read every partition's provenance).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Mapping

import dagster as dg

from corpus.provenance import built_version, day_ranges
from corpus_assets.freshness import read_mark
from corpus_assets.jobs import AUTOMATION_RUN_TAGS, DAILY_ASSETS, corpus_daily, daily_run_request
from corpus_assets.rederive_plan import (
    CHECK_NAME,
    DailyGraph,
    code_check_evaluation,
    current_versions,
    expand_days,
    plan_round,
    rederive_tags,
    stale_code_days,
)
from resources.store import CorpusStore

PAGE = 1000
BUSY = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def _stamp(at: dt.datetime) -> str:
    return f"{at.astimezone(dt.UTC):%Y-%m-%d %H:%M:%S} UTC"


# --------------------------------------------------------------------------- corpus_code_versions


def _reported(record) -> tuple[str, set[str], float] | None:
    """(code version, stale days, when) of a check's latest result, or None."""
    if record is None or record.event is None or record.status.value == "PLANNED":
        return None
    data = record.event.get_dagster_event().asset_check_evaluation_data
    meta = data.metadata or {}
    if "code_version" not in meta or "days" not in meta:
        return None
    return str(meta["code_version"].value), expand_days(str(meta["days"].value)), record.create_timestamp


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


def _last_built(instance: dg.DagsterInstance, asset: str) -> float | None:
    """When ``asset`` was last materialised (any day), or None."""
    records = instance.fetch_materializations(dg.AssetKey(asset), limit=1).records
    return records[0].timestamp if records else None


_THROUGH = re.compile(r"event (\d+)")


def read_through(cursor: str | None) -> int | None:
    """The event-log position a ``corpus_code_versions`` cursor names (also its JSON form of old)."""
    if not cursor:
        return None
    if cursor.startswith("{"):
        return json.loads(cursor).get("through")
    found = _THROUGH.search(cursor)
    return int(found.group(1)) if found else None


def code_version_tick(
    instance: dg.DagsterInstance, store, versions: Mapping[str, str], cursor: str | None
) -> tuple[list[dg.AssetCheckEvaluation], str]:
    """One tick: the check results to report, and the next cursor (in words)."""
    through = read_through(cursor)
    mark = read_mark(instance)  # before reading: what lands later is read next tick
    keys = [dg.AssetCheckKey(dg.AssetKey(a), CHECK_NAME) for a in versions]
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    evaluations = []
    for key in keys:
        asset = key.asset_key.to_user_string()
        version = versions[asset]
        before = _reported(latest.get(key))
        built = None
        if before is None or through is None or before[0] != version:
            days = set(stale_code_days(store, asset, version))
        else:
            days = set(before[1])
            built = _built_since(instance, asset, int(through), mark)
            for day in built:
                days.discard(day)
                if built_version(store, asset, day) not in (None, version):
                    days.add(day)
        last_built = _last_built(instance, asset) if not built else None
        outdated = bool(built) or (
            before is not None and last_built is not None and last_built >= before[2]
        )  # built since the check's latest result: the UI shows that result as not evaluated
        if before is None or before[:2] != (version, days) or outdated:
            evaluations.append(code_check_evaluation(asset, version, sorted(days)))
    return evaluations, f"read the days built through event {mark}"  # short: the tick list cuts it


@dg.sensor(
    name="corpus_code_versions",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Reports each daily asset's built_by_current_code check (the days built by an older "
    "version of its stage) within a tick of a code location reload, and again within a tick of "
    "any day of the asset being built, whoever built it.",
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
        else "no daily asset was built or changed version since the last tick"
    )
    return dg.SensorResult(asset_events=evaluations, cursor=cursor, skip_reason=message)


# --------------------------------------------------------------------------- corpus_rederive

RETRY_FAILED_S = 3600  # a round that failed is not asked for again sooner (unless the code changed)
# Its cursor, in words: the round and the runs asked for first (the tick list shows a long cursor's
# start and end), then which re-derive, the plan's digest and when.
_STATE = re.compile(
    r"^round (?P<round>\d+): (?P<runs>\d+) run\(s\) asked for \(re-derive (?P<id>\S+), plan "
    r"(?P<plan>[0-9a-f]+), (?P<at>[^)]*) UTC\)$"
)


def read_state(cursor: str | None) -> dict:
    """What a ``corpus_rederive`` cursor says: the re-derive's id, its round, the plan's digest and
    when the round was asked for; {} for none (or the JSON of old)."""
    if not cursor:
        return {}
    if cursor.startswith("{"):
        return json.loads(cursor)
    found = _STATE.match(cursor)
    if not found:
        return {}
    at = dt.datetime.strptime(found["at"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC).timestamp()
    return {"id": found["id"], "round": int(found["round"]), "plan": found["plan"], "at": at}


def round_runs(
    groups: Mapping[frozenset[str], list[str]], days_per_run: int, rederive_id: str, round_no: int
) -> list[dg.RunRequest]:
    """A round as ``corpus_daily`` runs: per asset set, its days cut into ranges of consecutive days
    of at most ``days_per_run`` (as the assets' backfill policy cuts a backfill's), each run of the
    set's assets and their checks over one range, tagged as the re-derive's round."""
    tags = {**AUTOMATION_RUN_TAGS, **rederive_tags(rederive_id, round_no)}
    requests = []
    for assets, days in sorted(groups.items(), key=lambda item: sorted(item[0])):
        for first, last in day_ranges(days):
            start = dt.date.fromisoformat(first)
            span = (dt.date.fromisoformat(last) - start).days + 1
            for offset in range(0, span, days_per_run):
                a = start + dt.timedelta(days=offset)
                b = start + dt.timedelta(days=min(span, offset + days_per_run) - 1)
                when = (
                    {"dagster/partition": a.isoformat()}
                    if a == b
                    else {
                        "dagster/asset_partition_range_start": a.isoformat(),
                        "dagster/asset_partition_range_end": b.isoformat(),
                    }
                )
                key = f"{rederive_id}:{round_no}:{','.join(sorted(assets))}:{a}"
                requests.append(daily_run_request(key, sorted(assets), {**tags, **when}))
    return requests


def _round_runs_left(instance: dg.DagsterInstance, rederive_id: str, statuses) -> list[str]:
    runs = instance.get_runs(
        filters=dg.RunsFilter(tags={"corpus/rederive": rederive_id}, statuses=statuses), limit=5
    )
    return [r.run_id for r in runs]


def _failed(instance: dg.DagsterInstance, rederive_id: str, round_no: int) -> list[str]:
    """The previous round's runs that failed or were canceled."""
    runs = instance.get_runs(
        filters=dg.RunsFilter(
            tags={"corpus/rederive": rederive_id, "corpus/rederive_round": str(round_no)},
            statuses=[dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED],
        ),
        limit=5,
    )
    return [r.run_id for r in runs]


def build_rederive_sensor(graph: DailyGraph) -> dg.SensorDefinition:
    """``corpus_rederive``: when turned on, a round of re-deriving per tick once the previous
    round's runs are done (the same rounds as ``make rederive``), as ``corpus_daily`` runs that
    the tick counts; its plan is in the tick's log, its state in its cursor, in words."""

    @dg.sensor(
        name="corpus_rederive",
        job=corpus_daily,
        minimum_interval_seconds=60,
        default_status=dg.DefaultSensorStatus.STOPPED,
        description="Off by default. Turned on, it re-derives what an improvement of the code changes, as "
        "make rederive does: the daily partitions built by older code, then, round by round, those whose "
        "inputs' content changed (corpus_daily runs tagged corpus/rederive; a tick's plan is in its log).",
    )
    def corpus_rederive(context: dg.SensorEvaluationContext, corpus: CorpusStore) -> dg.SensorResult:
        from corpus_assets.dagster_internals import unfinished_backfill_ids
        from corpus_assets.partitions import days_per_run

        state = read_state(context.cursor)
        busy = _round_runs_left(context.instance, state["id"], BUSY) if state.get("id") else []
        if busy:
            return dg.SensorResult(
                skip_reason=f"round {state['round']} is still running ({', '.join(busy)} ...)",
                cursor=context.cursor,
            )
        backfills = unfinished_backfill_ids(context.instance)
        if backfills:
            return dg.SensorResult(
                skip_reason=f"waits for backfill(s) in progress: {', '.join(backfills[:5])}",
                cursor=context.cursor,
            )
        found = plan_round(corpus.store, graph)
        if not found.groups:
            return dg.SensorResult(
                skip_reason="nothing to re-derive: every built partition was made by today's code from the "
                "inputs it has now",
                cursor=f"nothing to re-derive ({_stamp(dt.datetime.now(dt.UTC))})",
            )
        plan = hashlib.sha256(json.dumps(sorted([sorted(a), d] for a, d in found.groups.items())).encode())
        plan = plan.hexdigest()[:12]  # the round, in a few characters of the cursor
        now = dt.datetime.now(dt.UTC)
        failed = _failed(context.instance, state["id"], state["round"]) if state.get("id") else []
        if failed and state.get("plan") == plan and now.timestamp() - state.get("at", 0) < RETRY_FAILED_S:
            return dg.SensorResult(
                skip_reason=f"round {state.get('round')} failed ({', '.join(failed)}): the same round is asked "
                f"for again {RETRY_FAILED_S // 60} minutes after it, or at once when the code changes",
                cursor=context.cursor,
            )
        rederive_id = state.get("id") or now.strftime("sensor-%Y%m%dT%H%M%SZ")
        round_no = int(state.get("round", 0)) + 1
        requests = round_runs(found.groups, days_per_run(), rederive_id, round_no)
        context.log.info(
            f"round {round_no} of re-derive {rederive_id}: {len(requests)} corpus_daily run(s) of up to "
            f"{days_per_run()} day(s), tagged corpus/rederive"
        )
        for line in found.lines():
            context.log.info(line.strip())
        state_line = (
            f"round {round_no}: {len(requests)} run(s) asked for (re-derive {rederive_id}, plan {plan}, "
            f"{_stamp(now)})"
        )
        return dg.SensorResult(run_requests=requests, cursor=state_line)

    return corpus_rederive
