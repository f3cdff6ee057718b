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
    """Point the settings at the landing zone; the days it holds that are partitions (the first
    partition defaults to the landing zone's earliest day, corpus_assets.partitions)."""
    from corpus.ingest.landing import LandingZone

    os.environ["CORPUS_LANDING"] = str(landing)
    from corpus_assets.partitions import start_date

    start = start_date()
    today = dt.datetime.now(dt.UTC).date().isoformat()
    return [d for d in LandingZone(landing).datestamps() if start <= d < today]


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
    from corpus_assets.launch import LocalLauncher

    instance = dg.DagsterInstance.get()
    launcher = LocalLauncher(instance)  # ordinary runs of the code location "corpus": they show in the UI
    started = time.perf_counter()
    failed = []
    try:
        if os.environ.get("CORPUS_SOURCE") == "bulk":  # the files come from the bulk root: index it first
            run = launcher.run("corpus_bulk_index", run_config=QUIET)
            print(f"  bulk index: {'ok' if run.is_success else 'FAILED'} (run {run.run_id[:8]})", flush=True)
            if not run.is_success:
                failed.append("corpus_bulk_index")
        for day in days:
            run = launcher.run(args.job, partition_key=day, run_config=QUIET)
            if not run.is_success:
                failed.append(day)
            print(f"  {day}: {'ok' if run.is_success else 'FAILED'} (run {run.run_id[:8]})", flush=True)
        run = launcher.run("corpus_graph", run_config=QUIET)
        print(
            f"  cross-day assets: {'ok' if run.is_success else 'FAILED'} (run {run.run_id[:8]})", flush=True
        )
        if not run.is_success:
            failed.append("corpus_graph")
    finally:
        launcher.close()
    took = time.perf_counter() - started

    store = Store.from_env()
    store.refresh_views()
    db = store.views_db()
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
