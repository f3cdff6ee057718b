"""Catch-up sensor: the cross-day assets (the ``corpus_graph`` job) follow the days, decided
from data (corpus_assets.freshness), whoever built the days and whenever.

Each tick, for every cross-day asset: is any input partition's content different from what its
last materialisation read? The ``up_to_date`` check is reported again whenever that verdict (or
the partitions it names) changes, so the UI says "stale" within one tick of a day landing and
"current" once the asset has read every built day. A stale asset is caught up by a
``corpus_graph`` run (of the stale assets and the cross-day assets below them) at most once per
tick of ``CORPUS_GRAPH_CRON``, never while a run or backfill that writes one of its inputs (or
another cross-day run) is queued or running: ten new days in an hour give one run. A stale asset
is asked for on the first sensor tick after a cron tick that came after the last tick at which
it was current or asked for (as Dagster's ``on_cron``); a new or reset sensor, which has seen no
tick, catches a stale asset up at once.

What the sensor remembers between ticks -- per asset, when it was last current or requested, and
the read position of :func:`corpus_assets.freshness.assess` (so a tick reads only events that are
new) -- is kept in the instance's key-value store, not in the cursor, which the sensor's page
shows on every tick: the cursor says in words what the tick decided and why the sensor waits
("citation_links wait for the next tick of '0 * * * *' (...)"), and names the tick whose state
is stored. A reset or edited cursor names no stored tick, so the sensor starts afresh as a new
one does; losing the state costs one read of the events above each asset's mark, never a missed
day.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import dagster as dg
from dagster import DagsterRunStatus

from corpus_assets.dagster_internals import latest_cron_tick, next_cron_tick, unfinished_backfills
from corpus_assets.freshness import CHECK_NAME, Verdict, assess_all, check_evaluation, closure
from corpus_assets.jobs import AUTOMATION_RUN_TAGS, corpus_graph, graph_cron

BUSY = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]


def now() -> dt.datetime:
    """The tick's time (tests replace it to drive cron ticks)."""
    return dt.datetime.now(dt.UTC)


RUNS_PAGE = 100  # busy runs read per query


def busy_assets(
    instance: dg.DagsterInstance, job_assets: Callable[[str], set[str]], relevant: set[str] | None = None
) -> set[str]:
    """Assets written by backfills not finished and by runs queued or in progress. Runs are read
    a page at a time and no further once every ``relevant`` asset is busy: a backfill of all of
    arXiv queues thousands of runs, and the first page of them already names every daily asset."""
    busy: set[str] = set()
    for backfill in unfinished_backfills(instance):
        if backfill.asset_selection:
            busy |= {k.to_user_string() for k in backfill.asset_selection}
        elif backfill.job_name:
            busy |= job_assets(backfill.job_name)
    cursor = None
    while relevant is None or not relevant <= busy:
        runs = instance.get_runs(filters=dg.RunsFilter(statuses=BUSY), cursor=cursor, limit=RUNS_PAGE)
        for run in runs:
            if run.asset_selection is not None:
                busy |= {k.to_user_string() for k in run.asset_selection}
            else:
                busy |= job_assets(run.job_name)
        if len(runs) < RUNS_PAGE:
            break
        cursor = runs[-1].run_id
    return busy


def _reported(record) -> tuple[bool | None, str | None]:
    """(passed, description) of a check's latest execution; (None, None) when there is none or
    it is still planned (a run will report it)."""
    if record is None or record.event is None or record.status.value == "PLANNED":
        return None, None
    evaluation = record.event.get_dagster_event().asset_check_evaluation_data
    return evaluation.passed, evaluation.description


def _timestamp(value: str | float) -> float:
    return float(value) if isinstance(value, int | float) else dt.datetime.fromisoformat(value).timestamp()


STATE_KEY = "corpus_graph_catch_up/state"  # the instance's key-value store: what ticks remember
_AS_OF = re.compile(r"\(as of (\S+ \S+) UTC\)$")  # the end of a cursor: the tick that wrote it


def _stamp(at: dt.datetime) -> str:
    return f"{at.astimezone(dt.UTC):%Y-%m-%d %H:%M:%S}"


def load_state(instance: dg.DagsterInstance, cursor: str | None) -> dict:
    """What the tick that wrote ``cursor`` remembered; {} for a new or reset sensor (no cursor)
    or a cursor whose tick's state is not the one stored (edited, or a tick that failed after
    storing its state)."""
    if not cursor:
        return {}
    if cursor.startswith("{"):  # a cursor of the sensor before the state moved out of it
        return json.loads(cursor)
    m = _AS_OF.search(cursor)
    raw = instance.run_storage.get_cursor_values({STATE_KEY}).get(STATE_KEY)
    saved = json.loads(raw) if raw else {}
    return saved if m and saved.get("as_of") == m.group(1) else {}


@dataclass
class TickPlan:
    """What one tick decides."""

    verdicts: dict[str, Verdict]
    run_assets: list[str] = field(default_factory=list)
    evaluations: list[dg.AssetCheckEvaluation] = field(default_factory=list)
    cursor: str = ""  # what the tick decided, in words, and when (the sensor page shows it)
    message: str = ""  # the skip reason: the decision and every stale asset's verdict
    state: dict = field(default_factory=dict)  # what the next tick reads (stored by plan_tick)


def plan_tick(
    instance: dg.DagsterInstance,
    reads: Mapping[str, Sequence[str]],
    cursor: str | None,
    at: dt.datetime,
    cron: str,
    job_assets: Callable[[str], set[str]],
) -> TickPlan:
    """One tick: the verdicts, the check results to report, the assets to run and the next
    cursor; what the next tick needs is stored in the instance (:data:`STATE_KEY`)."""
    saved = load_state(instance, cursor)
    handled = {a: _timestamp(t) for a, t in saved.get("handled", {}).items()}  # current or asked for
    # What the checks say, read before the verdicts: a run that ends in between reports its own
    # check, and this tick then reports nothing older than what it read.
    keys = [dg.AssetCheckKey(dg.AssetKey(a), CHECK_NAME) for a in reads]
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    verdicts, new_states = assess_all(instance, reads, saved.get("state"))

    plan = TickPlan(verdicts)
    for key in keys:
        verdict = verdicts[key.asset_key.to_user_string()]
        passed, description = _reported(latest.get(key))
        planned = key in latest and latest[key].status.value == "PLANNED"
        if not planned and (passed, description) != (verdict.current, verdict.check_description()):
            plan.evaluations.append(check_evaluation(verdict))

    stale = [a for a, v in verdicts.items() if not v.current]
    tick = latest_cron_tick(cron, at).timestamp()
    relevant = set(reads) | {i for inputs in reads.values() for i in inputs}
    busy = busy_assets(instance, job_assets, relevant) if stale else set()
    if busy & set(reads):
        running = ", ".join(sorted(busy & set(reads)))
        plan.message = f"a cross-day run is queued or running ({running})"
        status = f"waits: a cross-day run is in progress ({running})"
    else:
        waiting, blocked = [], []
        for asset in stale:
            if busy & set(reads[asset]):
                blocked.append(f"{asset} (inputs being built: {', '.join(sorted(busy & set(reads[asset])))})")
            elif handled.get(asset, float("-inf")) >= tick:
                waiting.append(asset)
            else:
                plan.run_assets.append(asset)
        plan.run_assets = sorted(closure(reads, set(plan.run_assets), upstream=False), key=list(reads).index)
        for asset in plan.run_assets:
            handled[asset] = at.timestamp()
        parts, short = [], []
        if plan.run_assets:
            short.append(f"asked for {', '.join(plan.run_assets)}")
        if waiting:
            nxt = next_cron_tick(cron, at)
            parts.append(
                f"{', '.join(waiting)} wait for the next tick of {cron!r} ({nxt:%Y-%m-%d %H:%M} UTC)"
            )
            short.append(f"waits for {nxt:%H:%M} UTC ({cron}): {', '.join(waiting)}")
        if blocked:
            parts.append("waiting for " + "; ".join(blocked))
            short.append("waits for inputs being built: " + "; ".join(blocked))
        plan.message = "; ".join(parts)
        status = "; ".join(short)
    if not stale:
        plan.message = "every cross-day asset has read every input partition"
        status = "all current"
    details = [verdicts[a].description() for a in stale]
    if details and not plan.run_assets:
        plan.message += ". " + " | ".join(f"{a}: {d}" for a, d in zip(stale, details, strict=True))
    for asset, verdict in verdicts.items():
        if verdict.current:
            handled[asset] = at.timestamp()
    stamps = {
        a: dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="seconds") for a, t in handled.items()
    }
    plan.state = {"as_of": _stamp(at), "handled": stamps, "state": new_states}
    instance.run_storage.set_cursor_values({STATE_KEY: json.dumps(plan.state, sort_keys=True)})
    plan.cursor = f"{status} (as of {_stamp(at)} UTC)"  # short: the tick list cuts it in the middle
    return plan


def build_catch_up_sensor(reads: Mapping[str, Sequence[str]]) -> dg.SensorDefinition:
    """The sensor over ``reads`` ({cross-day asset: the assets it reads}, from the asset graph)."""
    cron = graph_cron()

    @dg.sensor(
        name="corpus_graph_catch_up",
        job=corpus_graph,
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Catches the cross-day assets up (a corpus_graph run of the stale ones) when a daily "
        "input's content differs from what they last read, once per tick of CORPUS_GRAPH_CRON "
        f"({cron!r}) and never while their inputs are being built; reports their up_to_date checks.",
    )
    def corpus_graph_catch_up(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        repo = context.repository_def

        def job_assets(name: str) -> set[str]:
            if repo is None or not repo.has_job(name):
                return set()
            return {k.to_user_string() for k in repo.get_job(name).asset_layer.selected_asset_keys}

        plan = plan_tick(context.instance, reads, context.cursor, now(), cron, job_assets)
        if plan.run_assets:
            request = dg.RunRequest(
                asset_selection=[dg.AssetKey(a) for a in plan.run_assets],
                tags={**AUTOMATION_RUN_TAGS, "corpus/catch_up": ",".join(plan.run_assets)},
            )
            return dg.SensorResult(run_requests=[request], cursor=plan.cursor, asset_events=plan.evaluations)
        return dg.SensorResult(skip_reason=plan.message, cursor=plan.cursor, asset_events=plan.evaluations)

    return corpus_graph_catch_up
