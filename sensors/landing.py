"""Landing sensor: new or changed OAI pages in ``landing/oai/`` -> a ``corpus_daily`` run for
each day they hold.

What was built is read from the store, not remembered by the sensor: ``arxiv_metadata``
keeps beside each partition the fingerprint of the pages it was built from
(:meth:`corpus.ingest.landing.LandingZone.day_fingerprints`), and a day is requested only when its
pages' fingerprint differs. So a day built by ``make demo``, the CLI or a backfill is never
built again by the sensor, and a day whose page changes is built exactly once more (the run
key names the fingerprint). The cursor is a short digest of the page listing: an unchanged
listing costs one directory scan.
"""

import datetime as dt
import hashlib

import dagster as dg

from corpus_assets.ingest import LANDING_MARKER
from corpus_assets.jobs import corpus_daily
from corpus_assets.partitions import start_date
from resources.store import CorpusStore

MAX_DAYS_PER_TICK = 200  # the rest waits for the next tick (the cursor is kept until all are asked)


def listing_digest(stamps: list[tuple[str, int, int]]) -> str:
    """A short cursor for the page listing: (name, size, mtime_ns) of every page."""
    text = "\n".join(f"{n}\0{s}\0{m}" for n, s, m in sorted(stamps))
    return f"{len(stamps)} pages {hashlib.sha1(text.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


def plan_landing_runs(
    fingerprints: dict[str, str],
    built: dict[str, str | None],
    today: dt.date,
    max_days: int = MAX_DAYS_PER_TICK,
) -> tuple[list[tuple[str, str]], list[str], bool]:
    """Decide one tick (pure, so tests need no Dagster instance).

    ``fingerprints``: day -> fingerprint of its pages now; ``built``: day -> fingerprint its
    ``arxiv_metadata`` partition was built from (None: not built). Returns ``[(day, run_key)]``,
    messages for days outside the partition set, and whether every changed day was asked for.
    """
    first = dt.date.fromisoformat(start_date())
    runs: list[tuple[str, str]] = []
    outside: list[str] = []
    for day, fp in sorted(fingerprints.items()):
        if built.get(day) == fp:
            continue
        try:
            value = dt.date.fromisoformat(day)
        except ValueError:
            outside.append(f"datestamp {day!r} is not a date")
            continue
        if not first <= value < today:
            outside.append(f"datestamp {day} is outside the partitions ({first} .. yesterday)")
            continue
        if len(runs) == max_days:
            return runs, outside, False
        runs.append((day, f"landing:{day}:{fp}"))
    return runs, outside, True


@dg.sensor(
    job=corpus_daily,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="A corpus_daily run for every day whose pages in landing/oai/ are new or changed since "
    "its arxiv_metadata partition was built.",
)
def landing_oai_sensor(context: dg.SensorEvaluationContext, corpus: CorpusStore) -> dg.SensorResult:
    zone = corpus.landing_zone
    stamps = []
    try:
        paths = zone.oai_files()
    except OSError as exc:
        return dg.SensorResult(skip_reason=dg.SkipReason(str(exc)))
    for path in paths:
        try:
            st = path.lstat()
        except OSError as exc:  # the run's arxiv_metadata_failures will say it too
            context.log.warning(f"skipping {exc}")
            continue
        stamps.append((path.name, st.st_size, st.st_mtime_ns))
    cursor = listing_digest(stamps)
    if cursor == context.cursor:
        return dg.SensorResult(skip_reason=dg.SkipReason(f"no new or changed OAI pages ({cursor})"))
    fingerprints = zone.day_fingerprints(corpus.landing_index_cache)
    store = corpus.store
    built = {day: store.read_marker("arxiv_metadata", day, LANDING_MARKER) for day in fingerprints}
    runs, outside, complete = plan_landing_runs(fingerprints, built, dt.datetime.now(dt.UTC).date())
    for message in outside:
        context.log.warning(message)
    requests = [dg.RunRequest(run_key=key, partition_key=day) for day, key in runs]
    if not requests:
        return dg.SensorResult(
            skip_reason=dg.SkipReason(f"every day in the landing zone is built ({cursor})"), cursor=cursor
        )
    # An incomplete tick keeps the old cursor, so the next tick asks for the days left over.
    return dg.SensorResult(run_requests=requests, cursor=cursor if complete else context.cursor)
