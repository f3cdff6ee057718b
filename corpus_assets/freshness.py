"""Are the cross-day assets current? One ``up_to_date`` check per cross-day asset.

Dagster's own staleness does not look through a daily asset's partitions into an asset
that reads all of them, so the UI would never call ``citation_graph`` stale after a new
day. Each cross-day asset therefore carries a check, evaluated by the automation sensor
whenever an input or the asset itself is updated: it warns while any input partition is
newer than the asset's last materialisation, and passes again once the asset catches up
(on CORPUS_GRAPH_CRON). The check reads two timestamps from the instance, nothing else.
"""

import datetime as dt
from collections.abc import Iterable

import dagster as dg


def _latest(instance: dg.DagsterInstance, key: dg.AssetKey) -> float | None:
    event = instance.get_latest_materialization_event(key)
    return event.timestamp if event is not None else None


def _when(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds") if ts else "never"


def up_to_date_check(asset: dg.AssetKey, inputs: Iterable[dg.AssetKey]) -> dg.AssetChecksDefinition:
    inputs = sorted(inputs, key=lambda k: k.to_user_string())
    AC = dg.AutomationCondition

    @dg.asset_check(
        asset=asset,
        name="up_to_date",
        additional_deps=inputs,
        description="No input partition is newer than this asset's last materialisation "
        f"(inputs: {', '.join(k.to_user_string() for k in inputs)}).",
        automation_condition=(
            AC.any_deps_updated().since_last_handled() & ~AC.any_deps_in_progress() & ~AC.in_progress()
        ).with_label("an input or the asset changed"),
    )
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        own = _latest(context.instance, asset)
        newest = {k.to_user_string(): _latest(context.instance, k) for k in inputs}
        newer = sorted(k for k, ts in newest.items() if ts is not None and (own is None or ts > own))
        return dg.AssetCheckResult(
            passed=not newer,
            severity=dg.AssetCheckSeverity.WARN,
            description="stale: " + ", ".join(newer) + " changed since" if newer else "current",
            metadata={
                "materialized_at": _when(own),
                "newest_input_at": _when(max((t for t in newest.values() if t), default=None)),
                "newer_inputs": ", ".join(newer) or "none",
            },
        )

    return _check
