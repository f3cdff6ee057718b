"""Landing sensor: new or changed OAI pages in ``landing/oai/`` -> runs for the days they hold."""

import datetime as dt
import hashlib
import json

import dagster as dg

from corpus.oai import scan_datestamps
from corpus_assets.jobs import arxiv_metadata_job
from corpus_assets.partitions import start_date
from resources.store import CorpusStore

MAX_DAYS_PER_TICK = 200  # the rest waits for the next tick (the cursor keeps its place)


def _in_partition_range(day: str, today: dt.date) -> bool:
    try:
        value = dt.date.fromisoformat(day)
    except ValueError:
        return False
    return dt.date.fromisoformat(start_date()) <= value < today


def plan_landing_runs(
    files: dict[str, tuple[int, int, bytes | None]],
    cursor: dict[str, list[int]],
    today: dt.date,
    max_days: int = MAX_DAYS_PER_TICK,
) -> tuple[list[tuple[str, str]], dict[str, list[int]], list[str]]:
    """Decide the runs for one tick (pure, so tests need no Dagster instance).

    ``files``: name -> (size, mtime_ns, bytes or None if unchanged). Returns
    ``[(day, run_key)]``, the new cursor and messages for days outside the
    partition set. A file enters the cursor only once its days are requested.
    """
    new_cursor = dict(cursor)
    days: dict[str, list[str]] = {}
    skipped: list[str] = []
    for name in sorted(files):
        size, mtime, data = files[name]
        if cursor.get(name) == [size, mtime] or data is None:
            continue
        file_days = sorted(scan_datestamps(data))
        fresh = [d for d in file_days if _in_partition_range(d, today)]
        for d in sorted(set(file_days) - set(fresh)):
            skipped.append(f"{name}: datestamp {d} is outside the partitions ({start_date()} .. yesterday)")
        if days and len(set(days) | set(fresh)) > max_days:
            break
        for d in fresh:
            days.setdefault(d, []).append(f"{name}:{size}:{mtime}")
        new_cursor[name] = [size, mtime]
    runs = []
    for day in sorted(days):
        digest = hashlib.sha1("|".join(sorted(days[day])).encode()).hexdigest()[:12]
        runs.append((day, f"landing:{day}:{digest}"))
    return runs, new_cursor, skipped


@dg.sensor(
    job=arxiv_metadata_job,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests arxiv_metadata runs for the days held by new or changed pages in landing/oai/.",
)
def landing_oai_sensor(context: dg.SensorEvaluationContext, corpus: CorpusStore) -> dg.SensorResult:
    cursor = json.loads(context.cursor) if context.cursor else {}
    files: dict[str, tuple[int, int, bytes | None]] = {}
    zone = corpus.landing_zone
    try:
        paths = zone.oai_files()
    except OSError as exc:
        return dg.SensorResult(skip_reason=dg.SkipReason(str(exc)))
    for path in paths:
        try:  # read under the landing-zone rules: no links out, no FIFOs, size caps
            st = path.stat()
            changed = cursor.get(path.name) != [st.st_size, st.st_mtime_ns]
            files[path.name] = (st.st_size, st.st_mtime_ns, zone.read_page(path) if changed else None)
        except OSError as exc:  # the run's arxiv_metadata_failures will say it too
            context.log.warning(f"skipping {exc}")
    runs, new_cursor, skipped = plan_landing_runs(files, cursor, dt.datetime.now(dt.UTC).date())
    for message in skipped:
        context.log.warning(message)
    if not runs and new_cursor == cursor:
        return dg.SensorResult(skip_reason=dg.SkipReason("no new OAI pages in the landing zone"))
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=key, partition_key=day) for day, key in runs],
        cursor=json.dumps(new_cursor, sort_keys=True),
    )
