"""``make demo``: materialise the daily corpus job for every day of a landing zone,
in process, on the embedded defaults (local files, Parquet, DuckDB, sqlite
Dagster storage), then print what was built and where."""

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path


def _prepare_env(landing: Path) -> list[str]:
    """Point the settings at the landing zone; move the first partition back if needed."""
    from corpus.landing import DEFAULT_START_DATE, LandingZone

    os.environ["CORPUS_LANDING"] = str(landing)
    days = list(LandingZone(landing).datestamps())
    start = os.environ.get("CORPUS_START_DATE", DEFAULT_START_DATE)
    if days and days[0] < start:
        os.environ["CORPUS_START_DATE"] = days[0]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    start = os.environ.get("CORPUS_START_DATE", DEFAULT_START_DATE)
    return [d for d in days if start <= d < today]


QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _count_lines(path: Path) -> int:
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        return sum(1 for _ in fh)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m corpus_assets.demo")
    parser.add_argument("--landing", default=os.environ.get("CORPUS_LANDING", "./landing"))
    parser.add_argument("--job", default="corpus_daily")
    args = parser.parse_args(argv)
    landing = Path(args.landing).resolve()
    if not (landing / "oai").is_dir():
        print(f"no landing zone at {landing} (expected {landing}/oai/*.xml)", file=sys.stderr)
        return 2
    days = _prepare_env(landing)
    if os.environ.get("CORPUS_SOURCE") == "bulk":  # files from a bulk root; the demo never goes online
        os.environ.setdefault("CORPUS_BULK_FALLBACK", "none")

    import dagster as dg

    from corpus.store import Store
    from corpus_assets.definitions import defs

    job = defs.resolve_job_def(args.job)
    instance = dg.DagsterInstance.get()
    started = time.perf_counter()
    failed = []
    if os.environ.get("CORPUS_SOURCE") == "bulk":  # the files come from the bulk root: index it first
        result = defs.resolve_job_def("corpus_bulk_index").execute_in_process(
            instance=instance, raise_on_error=False, run_config=QUIET
        )
        print(f"  bulk index: {'ok' if result.success else 'FAILED'} (run {result.run_id[:8]})", flush=True)
        if not result.success:
            failed.append("corpus_bulk_index")
    for day in days:
        result = job.execute_in_process(
            partition_key=day, instance=instance, raise_on_error=False, run_config=QUIET
        )
        if not result.success:
            failed.append(day)
        print(f"  {day}: {'ok' if result.success else 'FAILED'} (run {result.run_id[:8]})", flush=True)
    graph = defs.resolve_job_def("corpus_graph")
    result = graph.execute_in_process(instance=instance, raise_on_error=False, run_config=QUIET)
    print(f"  cross-day assets: {'ok' if result.success else 'FAILED'} (run {result.run_id[:8]})", flush=True)
    if not result.success:
        failed.append("corpus_graph")
    took = time.perf_counter() - started

    store = Store.from_env()
    db = store.refresh_views()
    print()
    print(
        f"Built {len(days)} daily partition(s) from {landing} in {took:.1f}s"
        + (f"; FAILED: {failed}" if failed else "")
    )
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        for (view,) in con.execute(
            "select view_name from duckdb_views() where not internal order by view_name"
        ).fetchall():
            n = con.execute(f'select count(*) from "{view}"').fetchone()[0]
            print(f"  {view:<28} {n:>8} rows   {store.asset_dir(view).resolve()}")
    finally:
        con.close()
    releases = store.home / "releases"
    if releases.exists():
        print()
        print(f"Releases under {releases.resolve()}:")
        for path in sorted(releases.rglob("*")):
            if path.is_file() and path.suffix in {".gz", ".jsonl"}:
                lines = _count_lines(path)
                print(f"  {str(path.relative_to(releases)):<40} {lines:>8} documents")
    print()
    query = f"import duckdb; print(duckdb.connect('{db.resolve()}').sql('from arxiv_metadata limit 5'))"
    print(f'Query it:  .venv/bin/python -c "{query}"')
    print(
        f"Dagster runs are in {os.environ.get('DAGSTER_HOME')} ; open the UI with:  make ui   (http://127.0.0.1:3000)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
