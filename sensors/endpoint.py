"""Endpoint sensor (stopped by default): asks arXiv's OAI-PMH endpoint whether days
after the newest materialised partition have records, and requests a ``corpus_daily`` run
for each (harvested pages land in ``landing/oai/``, where the landing sensor sees them as
already built)."""

import datetime as dt

import dagster as dg

from corpus.ingest.oai import OaiError
from corpus_assets.jobs import corpus_daily
from corpus_assets.partitions import start_date
from resources.arxiv import ArxivResource

MAX_DAYS_PER_TICK = 5  # one ListIdentifiers request per day, >= 3 s apart
LOOKBACK_DAYS = 7  # where to begin when nothing is materialised yet


def days_to_check(newest: str | None, checked_until: str | None, today: dt.date) -> list[str]:
    """Complete days (before today, UTC) after both the newest partition and the cursor."""
    floor = dt.date.fromisoformat(start_date())
    begin = today - dt.timedelta(days=LOOKBACK_DAYS)
    for mark in (newest, checked_until):
        if mark:
            begin = max(begin, dt.date.fromisoformat(mark) + dt.timedelta(days=1))
    begin = max(begin, floor)
    days = []
    day = begin
    while day < today and len(days) < MAX_DAYS_PER_TICK:
        days.append(day.isoformat())
        day += dt.timedelta(days=1)
    return days


@dg.sensor(
    job=corpus_daily,
    minimum_interval_seconds=3600,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Polls the arXiv OAI-PMH endpoint for datestamps newer than the newest arxiv_metadata "
    "partition and asks corpus_daily for them (the same flow as the landing sensor).",
)
def arxiv_endpoint_sensor(context: dg.SensorEvaluationContext, arxiv: ArxivResource) -> dg.SensorResult:
    materialized = context.instance.get_materialized_partitions(dg.AssetKey("arxiv_metadata"))
    newest = max(materialized) if materialized else None
    days = days_to_check(newest, context.cursor or None, dt.datetime.now(dt.UTC).date())
    if not days:
        return dg.SensorResult(skip_reason=dg.SkipReason("no complete day newer than the newest partition"))
    harvester = arxiv.harvester(log=context.log.info)
    requests, checked = [], context.cursor or None
    try:
        for day in days:
            try:
                stamps = harvester.list_identifier_datestamps(day, day, arxiv.metadata_prefix)
            except OaiError as exc:
                context.log.warning(f"endpoint refused {day}: {exc}")
                break
            if day in stamps:
                requests.append(dg.RunRequest(run_key=f"endpoint:{day}", partition_key=day))
            checked = day
    finally:
        harvester.client.close()
    return dg.SensorResult(run_requests=requests, cursor=checked)
