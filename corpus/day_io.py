"""What every stage's day function shares: its upstream partition, or a clear error, and
typed frames from rows."""

from __future__ import annotations

import polars as pl

from corpus.store import Store


def upstream(store: Store, asset: str, day: str) -> pl.DataFrame:
    """An upstream partition, or a clear error naming what to materialise first."""
    if not store.has_partition(asset, day):
        raise FileNotFoundError(f"{asset} has no partition {day} under {store.home}: materialise it first")
    return store.read_partition(asset, day)


def frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)


def previous_rows(store: Store, asset: str, day: str) -> dict[str, dict]:
    """The rows of this day's previous materialisation, by id (none when there is none)."""
    if not store.has_partition(asset, day):
        return {}
    return {r["id"]: r for r in store.read_partition(asset, day).iter_rows(named=True)}
