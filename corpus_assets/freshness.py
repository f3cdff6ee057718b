"""Are the cross-day assets current? Decided from the data they read, not from event timing.

A cross-day asset (``citation_links``, ``citation_graph``, the releases) reads every day of its
daily inputs from the store. It is current when no input partition's *content* differs from
what its last materialisation read. Two records make that a comparison, not a guess:

* every daily partition records its content fingerprint in its materialisation event
  (``fingerprint``: the one its provenance holds, :class:`corpus.store.Provenance`, the sha256
  of its Parquet files, the same value the release manifests record per day);
* every cross-day materialisation records the event log's highest storage id, taken *before*
  the asset read the store, in its ``corpus/inputs_read_through`` tag (beside
  ``dagster/code_version``: bookkeeping, not a figure to show or plot). A partition whose event is at or below
  it was on disk when the asset read (its files are written before its event), so only events
  above it can hold something the asset has not read; for each of those days the fingerprint of
  its latest event is compared with the one of its latest event at or below the mark (what the
  asset read). A day written while the asset ran, before or after its materialisation event, has
  its event above the mark; a day re-delivered with the same rows has the same fingerprint.

So the verdict is a function of the event log alone: a fresh evaluator (a restarted daemon, a
reset sensor) reaches it too, and its cost is the events above the mark, not the store's days.

Why not Dagster's own means (dagster 1.13.27): ``AutomationCondition.any_deps_updated()``
``.since_last_handled()`` is event timing (an update and the asset's own materialisation in the
same evaluation window count as handled, and a new evaluator starts with nothing to handle), so
a day built during a cross-day run was never caught up (issue 28). Data versions do not reach
here: Dagster records an input's data version per partition only for fewer than 100 partitions
(``SKIP_PARTITION_DATA_VERSION_DEPENDENCY_THRESHOLD``; above, it takes the last event's), one run
of several days cannot give each day its own data version, and ``data_version_changed()`` is
again "since the previous tick". A custom ``AutomationCondition`` would need a user-code
automation sensor, whose runs Dagster always puts in the implicit ``__ASSET_JOB``; the catch-up is
therefore a sensor of the ``corpus_graph`` job (sensors/cross_day.py) built on :func:`assess`, and
the ``up_to_date`` check below runs the same function.
"""

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import dagster as dg

CODE_VERSION_TAG = "dagster/code_version"  # on every materialisation: the asset's code version then
READ_THROUGH = "corpus/inputs_read_through"  # cross-day materialisations' tag: the mark they read at
_READ_THROUGH_METADATA = "inputs_read_through"  # where materialisations before the tag kept it
FINGERPRINT = "fingerprint"  # daily partitions' materialisations: their content fingerprint
CUTOFF = "cutoff"  # releases that read days up to a cutoff: later days are not their input
CHECK_NAME = "up_to_date"
PAGE = 1000  # events read per query
PARTITIONS_PER_QUERY = 500  # days named in one query (SQLite's bound on a statement's variables)
MAX_TRACKED = 200  # changed partitions remembered one by one; beyond, "and more" until the next run
SHOWN = 5  # changed partitions named in a description
# Both ways to act, in words that read the same as Markdown and as plain text (the UI shows check
# texts either way).
TO_CATCH_UP = (
    "The corpus_graph_catch_up sensor runs corpus_graph for it at the next tick of CORPUS_GRAPH_CRON; "
    "to catch it up now, Materialize all on the job corpus_graph, or run: dagster job launch -w "
    "workspace.yaml -j corpus_graph."
)


def read_mark(instance: dg.DagsterInstance) -> int:
    """The event log's highest storage id now: taken by a cross-day asset before it reads."""
    return instance.event_log_storage.get_maximum_record_id() or 0


def read_through_tags(mark: int | None) -> dict[str, str]:
    """The mark as a materialisation tag (none when it was lost: the asset then counts as
    stale, and its next run records one)."""
    return {} if mark is None else {READ_THROUGH: str(mark)}


MARK_KEY = "read_mark"  # the engine event a graph-backed asset's first step logs its mark in


def save_mark(instance: dg.DagsterInstance, run: dg.DagsterRun, asset: str, mark: int) -> None:
    """Keep a graph-backed asset's mark from its first step (which reads the store) for its last
    step (which reports the materialisation), in the run's own log: steps may run in other
    processes or machines, and a run that fails in between leaves nothing behind (a file under
    the data root did)."""
    from corpus_assets.dagster_internals import engine_event_data

    instance.report_engine_event(
        f"{asset} reads its inputs as of event-log id {mark}",
        run,
        engine_event_data({"asset": asset, MARK_KEY: dg.MetadataValue.int(mark)}),
    )


def take_mark(instance: dg.DagsterInstance, run: dg.DagsterRun, asset: str) -> int | None:
    """The mark :func:`save_mark` logged for ``asset`` in this run, or in the run it re-executes
    (a retry from failure does not run the first step again), or None."""
    seen: set[str] = set()
    while run is not None and run.run_id not in seen:
        seen.add(run.run_id)
        for event in reversed(instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)):
            data = event.dagster_event.engine_event_data if event.dagster_event else None
            meta = data.metadata if data is not None else {}
            if MARK_KEY in meta and meta.get("asset") is not None and meta["asset"].value == asset:
                return int(meta[MARK_KEY].value)
        run = instance.get_run_by_id(run.parent_run_id) if run.parent_run_id else None
    return None


def _value(record: dg.EventLogRecord | None, key: str):
    if record is None or record.asset_materialization is None:
        return None
    entry = record.asset_materialization.metadata.get(key)
    return entry.value if entry is not None else None


def _read_through(record: dg.EventLogRecord) -> int | None:
    """The mark a cross-day materialisation read at: its tag, or its metadata when it was made
    before the tag."""
    mat = record.asset_materialization
    tag = (mat.tags or {}).get(READ_THROUGH) if mat is not None else None
    value = tag if tag is not None else _value(record, _READ_THROUGH_METADATA)
    return int(value) if value is not None else None


def _when(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds") if ts else "never"


@dataclass
class Verdict:
    """What :func:`assess` found for one cross-day asset."""

    asset: str
    current: bool
    why: str  # one line: what makes it current or stale
    materialization: dg.EventLogRecord | None = None
    changed: dict[str, dict[str, int]] = field(default_factory=dict)  # input -> {day: event id}
    more: bool = False  # more changed partitions than were tracked

    @property
    def n_changed(self) -> int:
        return sum(len(days) for days in self.changed.values())

    def changed_names(self) -> list[str]:
        return sorted(f"{i} {d}".strip() for i, days in self.changed.items() for d in days)

    def description(self) -> str:
        if self.current:
            return f"current: {self.why}"
        names = self.changed_names()
        if not names:
            return f"stale: {self.why}"
        more = len(names) - SHOWN
        listed = ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")
        return f"stale: {listed}{' (and more)' if self.more else ''} changed since its last run"

    def check_description(self) -> str:
        """The ``up_to_date`` check's text: the verdict, and when stale both ways to act."""
        return self.description() if self.current else f"{self.description()}. {TO_CATCH_UP}"

    def metadata(self) -> dict[str, dg.MetadataValue]:
        """What a user can check: when the asset was built and which input partitions changed
        since (the event-log mark the verdict is computed from stays in the materialisation's
        tags)."""
        rec = self.materialization
        return {
            "materialized_at": dg.MetadataValue.text(_when(rec.timestamp if rec else None)),
            "changed_partitions": dg.MetadataValue.int(self.n_changed),
            "changed": dg.MetadataValue.text(", ".join(self.changed_names()[:50]) or "none"),
        }


def _latest_materialization(instance: dg.DagsterInstance, key: dg.AssetKey) -> dg.EventLogRecord | None:
    records = instance.fetch_materializations(key, limit=1).records
    return records[0] if records else None


def _read_fingerprints(
    instance: dg.DagsterInstance, key: dg.AssetKey, days: Sequence[str], mark: int
) -> dict[str, str | None]:
    """Each day's fingerprint as of ``mark`` (its latest event at or below it): what was read."""
    found: dict[str, str | None] = {}
    for i in range(0, len(days), PARTITIONS_PER_QUERY):
        chunk = list(days[i : i + PARTITIONS_PER_QUERY])
        cursor, seen = None, set()
        while len(seen) < len(chunk):
            result = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=key, asset_partitions=chunk, before_storage_id=mark + 1),
                limit=PAGE,
                cursor=cursor,
            )  # newest first: the first record of a day is its latest
            for rec in result.records:
                if rec.partition_key not in seen:
                    seen.add(rec.partition_key)
                    found[rec.partition_key] = _value(rec, FINGERPRINT)
            if not result.has_more:
                break
            cursor = result.cursor
    return found


def _scan_input(
    instance: dg.DagsterInstance,
    key: dg.AssetKey,
    after: int,
    mark: int,
    cutoff: str | None,
    changed: dict[str, list],
    room: int,
) -> tuple[int, bool]:
    """Bring ``changed`` ({day: [event id, fingerprint]}) up to date with the input's events
    above ``after``; returns the new ``after`` and whether more days changed than ``room``."""
    overflow = False
    cursor = None
    while True:
        result = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, after_storage_id=after),
            limit=PAGE,
            cursor=cursor,
            ascending=True,
        )
        latest: dict[str, dg.EventLogRecord] = {}
        for rec in result.records:
            day = rec.partition_key or ""  # "": an unpartitioned input (rebuilt: changed)
            if not (cutoff and day and day > cutoff):
                latest[day] = rec
        read = _read_fingerprints(instance, key, [d for d in latest if d], mark)
        for day, rec in latest.items():
            fp = _value(rec, FINGERPRINT)
            if day and fp is not None and read.get(day) == fp:
                changed.pop(day, None)  # the same content as was read (re-delivered, or reverted)
            elif day in changed or len(changed) < room:
                changed[day] = [rec.storage_id, fp]
            else:
                overflow = True
        if result.records:
            after = result.records[-1].storage_id
        if not result.has_more:
            return after, overflow
        cursor = result.cursor


def assess(
    instance: dg.DagsterInstance,
    asset: dg.AssetKey,
    inputs: Iterable[dg.AssetKey],
    state: Mapping | None = None,
    version: str | None = None,
) -> tuple[Verdict, dict]:
    """Is ``asset`` current with ``inputs`` (and, given its code ``version``, built by it)?
    Returns the verdict and a state to pass to the next call (a sensor's cursor keeps it), so
    that call reads only events that are new since: a state that belongs to an older
    materialisation of the asset is dropped. Without state, the events above the asset's mark
    are read (few, unless it has not run for a long time)."""
    name = asset.to_user_string()
    rec = _latest_materialization(instance, asset)
    if rec is None:
        built = [k.to_user_string() for k in inputs if _latest_materialization(instance, k) is not None]
        if built:
            return Verdict(name, False, f"never built; {', '.join(built)} have partitions"), {}
        return Verdict(name, True, "never built, and no input has partitions yet"), {}
    built_by = ((rec.asset_materialization.tags or {}) if rec.asset_materialization else {}).get(
        CODE_VERSION_TAG
    )
    if version is not None and built_by != version:
        why = f"built by other code ({built_by or 'unknown'}) than this ({version})"
        return Verdict(name, False, why, rec), {}
    mark = _read_through(rec)
    if mark is None:
        why = f"its last materialisation does not record what it read (no {READ_THROUGH} tag)"
        return Verdict(name, False, why, rec), {}
    cutoff = _value(rec, CUTOFF)
    if not state or state.get("mat") != rec.storage_id:
        state = {"mat": rec.storage_id, "through": {}, "changed": {}, "more": False}
    new = {"mat": rec.storage_id, "through": {}, "changed": {}, "more": bool(state.get("more"))}
    for key in inputs:
        k = key.to_user_string()
        changed = {d: list(v) for d, v in state["changed"].get(k, {}).items()}
        room = MAX_TRACKED - sum(map(len, new["changed"].values()))
        after, overflow = _scan_input(
            instance, key, int(state["through"].get(k, mark)), mark, cutoff, changed, room
        )
        new["through"][k] = after
        if changed:
            new["changed"][k] = changed
        new["more"] = new["more"] or overflow
    current = not new["changed"] and not new["more"]
    # In words a user can check (the event-log mark stays in the tags, for the next verdict).
    why = f"its run of {_when(rec.timestamp)} read every built day of its inputs" + (
        f" up to its cutoff {cutoff}" if cutoff else ""
    )
    verdict = Verdict(
        name,
        current,
        why,
        rec,
        {i: {d: v[0] for d, v in days.items()} for i, days in new["changed"].items()},
        new["more"],
    )
    return verdict, new


def assess_all(
    instance: dg.DagsterInstance,
    reads: Mapping[str, Sequence[str]],
    states: Mapping | None = None,
    versions: Mapping[str, str] | None = None,
) -> tuple[dict[str, Verdict], dict]:
    """:func:`assess` for every cross-day asset in ``reads`` ({asset: what it reads}, an asset
    after the cross-day assets it reads), against today's code ``versions`` (default: this
    process's, corpus.versions). One that reads a stale cross-day asset is stale too, whatever
    its own inputs say: ``citation_graph`` built from links that miss a day misses it."""
    from corpus.versions import code_version

    states = states or {}
    versions = versions if versions is not None else {a: code_version(a) for a in reads}
    verdicts: dict[str, Verdict] = {}
    new_states: dict = {}
    for asset, inputs in reads.items():
        verdict, new_states[asset] = assess(
            instance,
            dg.AssetKey(asset),
            [dg.AssetKey(i) for i in inputs],
            states.get(asset),
            versions.get(asset),
        )
        upstream = [i for i in inputs if i in verdicts and not verdicts[i].current]
        if upstream and verdict.current:
            verdict = Verdict(
                asset, False, f"it reads {', '.join(upstream)}, which is stale", verdict.materialization
            )
        verdicts[asset] = verdict
    return verdicts, new_states


def closure(reads: Mapping[str, Sequence[str]], assets: set[str], upstream: bool) -> set[str]:
    """``assets`` and the cross-day assets they read, directly or not (``upstream``), or that
    read them (downstream)."""
    out = set(assets)
    grew = True
    while grew:
        grew = False
        for asset, inputs in reads.items():
            if upstream:
                found = {i for i in inputs if i in reads} - out if asset in out else set()
            else:
                found = {asset} if asset not in out and out & set(inputs) else set()
            if found:
                out |= found
                grew = True
    return out


def with_upstream(reads: Mapping[str, Sequence[str]], asset: str) -> dict[str, list[str]]:
    """``reads`` restricted to ``asset`` and the cross-day assets it reads, directly or not."""
    keep = closure(reads, {asset}, upstream=True)
    return {a: list(inputs) for a, inputs in reads.items() if a in keep}


def check_evaluation(verdict: Verdict) -> dg.AssetCheckEvaluation:
    """The ``up_to_date`` check's result for ``verdict``, as a sensor reports it. It is taken
    for a result about the asset's latest materialisation by being reported after it (the UI
    compares the two times); one made later is judged by the run that makes it, which runs the
    check."""
    return dg.AssetCheckEvaluation(
        asset_key=dg.AssetKey(verdict.asset),
        check_name=CHECK_NAME,
        passed=verdict.current,
        severity=dg.AssetCheckSeverity.WARN,
        description=verdict.check_description(),
        metadata=verdict.metadata(),
    )


def up_to_date_check(asset: str, reads: Mapping[str, Sequence[str]]) -> dg.AssetChecksDefinition:
    """The ``up_to_date`` check of a cross-day asset: :func:`assess_all` from the event log. It
    runs with every run of the asset (no automation condition of its own), and the catch-up
    sensor reports it again whenever its verdict changes, within one tick of a day landing."""
    scope = with_upstream(reads, asset)
    inputs = [dg.AssetKey(i) for i in sorted(reads[asset])]

    @dg.asset_check(
        asset=dg.AssetKey(asset),
        name=CHECK_NAME,
        additional_deps=inputs,
        description="Current when no input partition's content differs from what the asset's last "
        f"materialisation read (inputs: {', '.join(k.to_user_string() for k in inputs)}), and its code is "
        "the code it has now; stale names the partitions that changed. Reported by the catch-up sensor "
        "within 30 s of a change. " + TO_CATCH_UP,
    )
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        verdict = assess_all(context.instance, scope)[0][asset]
        return dg.AssetCheckResult(
            passed=verdict.current,
            severity=dg.AssetCheckSeverity.WARN,
            description=verdict.check_description(),
            metadata=verdict.metadata(),
        )

    return _check
