"""The one daily partitioning (on the OAI datestamp) every daily asset shares, and how a
backfill of a range is cut into runs."""

from __future__ import annotations

import datetime as dt
import os

import dagster as dg

from corpus.ingest.landing import DEFAULT_START_DATE, LandingZone, landing_root
from corpus.store import corpus_home

DEFAULT_DAYS_PER_RUN = 4  # a run's start-up (~3-5 CPU s) stays a few % of its days' work


def start_date() -> str:
    """``CORPUS_START_DATE`` when set; otherwise the earlier of 2007-04-01 and the landing
    zone's earliest datestamp, so every day the landing zone holds is a partition."""
    value = os.environ.get("CORPUS_START_DATE", "").strip()
    if value:
        dt.date.fromisoformat(value)  # a clear error for a malformed setting
        return value
    try:
        earliest = LandingZone(landing_root()).earliest_datestamp(
            cache=corpus_home() / ".index" / "landing_oai.json"
        )
    except OSError:
        earliest = None
    if earliest and _is_day(earliest) and earliest < DEFAULT_START_DATE:
        return earliest
    return DEFAULT_START_DATE


def _is_day(value: str) -> bool:
    try:
        return dt.date.fromisoformat(value).isoformat() == value
    except ValueError:
        return False


def days_per_run() -> int:
    """``CORPUS_DAYS_PER_RUN``: days one backfill run works through (default 4; ``make backfill``
    sets it from the range for the code server it starts, :func:`corpus_assets.backfill.days_per_run_for`)."""
    value = int(os.environ.get("CORPUS_DAYS_PER_RUN", DEFAULT_DAYS_PER_RUN))
    if value < 1:
        raise ValueError(f"CORPUS_DAYS_PER_RUN must be >= 1, got {value}")
    return value


daily_partitions = dg.DailyPartitionsDefinition(start_date=start_date(), timezone="UTC")


def partition_dates(context: dg.AssetExecutionContext) -> list[str]:
    """Every date a run covers: one key, or a whole range in a backfill run."""
    window = context.partition_time_window
    days = []
    day = window.start.date()
    while day < window.end.date():
        days.append(day.isoformat())
        day += dt.timedelta(days=1)
    return days


# A backfill of a range becomes runs of ``days_per_run()`` days that the run queue executes
# side by side (dagster.yaml: max_concurrent_runs = the machine's cores); inside a run the
# days are worked one at a time, so memory is set by the day, not by the range.
DAILY_BACKFILL_POLICY = dg.BackfillPolicy.multi_run(max_partitions_per_run=days_per_run())


def daily_asset(**kwargs):
    """``dg.asset`` with the daily partitioning and multi-run backfills every daily asset shares."""
    return dg.asset(partitions_def=daily_partitions, backfill_policy=DAILY_BACKFILL_POLICY, **kwargs)


def daily_multi_asset(**kwargs):
    """``dg.multi_asset`` (an asset and its side table) with the same partitioning and policy."""
    return dg.multi_asset(partitions_def=daily_partitions, backfill_policy=DAILY_BACKFILL_POLICY, **kwargs)
