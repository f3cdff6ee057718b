"""Which delivery of each paper decides, kept up to date day by day (for the incremental
cross-day steps: corpus.graph.citation_links, corpus.graph.citation_graph).

A paper is often delivered on several days (each new arXiv version gets a new OAI datestamp).
Its latest delivery decides, whatever the order in which days are materialised: that day's
``papers`` row says whether it is kept, and that day's side tables (bibliography, full-text
ids) are its own. A step keeps two tables: every ``(id, day)`` delivery, and each paper's
deciding row (``LATEST_SCHEMA``); :func:`update` brings them to a new set of days from the
days that are new, changed or gone, reading only those (and, rarely, an older day a paper
falls back to), and says which papers' deciding delivery moved or changed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from corpus.store import Store, scan_days

LATEST_SCHEMA = {
    "id": pl.String,
    "day": pl.String,
    "kept": pl.Boolean,
    "doi": pl.String,
    "norm_title": pl.String,
    "journal_ref": pl.String,  # where it was published (links by publication)
}
DELIVERY_SCHEMA = {"id": pl.String, "day": pl.String}


def stamp(path: Path, prev: list | None = None) -> list:
    """``[size, mtime_ns, sha256]`` of a file: a content fingerprint, hashed again only when its
    size or mtime moved (a file rewritten with the same bytes keeps its fingerprint's content)."""
    st = path.stat()
    if prev and prev[0] == st.st_size and prev[1] == st.st_mtime_ns:
        return prev
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return [st.st_size, st.st_mtime_ns, digest.hexdigest()]


def same_content(a: dict | None, b: dict | None) -> bool:
    """Whether two ``{name: stamp}`` maps name the same files with the same content."""
    if a is None or b is None or set(a) != set(b):
        return False
    return all(a[k][2] == b[k][2] for k in a)


def read_papers(store: Store, days: list[str]) -> pl.DataFrame:
    """``LATEST_SCHEMA`` rows of the papers delivered on these days (one row per paper and day;
    a column a day was written without is null: :func:`corpus.store.scan_days`)."""
    columns = {
        "id": pl.String,
        "kept": pl.Boolean,
        "doi": pl.String,
        "norm_title": pl.String,
        "journal_ref": pl.String,
    }
    frames = []
    for day in days:
        frame = scan_days([store.partition_dir("papers", day) / "part-0.parquet"], columns).collect()
        frames.append(frame.with_columns(pl.lit(day).alias("day")))
    if not frames:
        return pl.DataFrame(schema=LATEST_SCHEMA)
    frame = pl.concat(frames, how="diagonal_relaxed").select(list(LATEST_SCHEMA)).cast(LATEST_SCHEMA)
    return frame.unique(["id", "day"], keep="last", maintain_order=True)


def read_latest(path: Path) -> pl.DataFrame:
    """A stored ``LATEST_SCHEMA`` table; columns added since it was written read as null."""
    frame = pl.read_ipc(path, memory_map=False)
    missing = [c for c in LATEST_SCHEMA if c not in frame.columns]
    frame = frame.with_columns([pl.lit(None, LATEST_SCHEMA[c]).alias(c) for c in missing])
    return frame.select(list(LATEST_SCHEMA)).cast(LATEST_SCHEMA)


def latest(rows: pl.DataFrame) -> pl.DataFrame:
    """Each paper's row of its latest delivery."""
    return rows.sort("day").unique("id", keep="last")


@dataclass
class Change:
    """The tables after an update, and the papers whose deciding delivery moved or changed:
    ``touched[id, old_day, day]`` (either day null when there is none) with their deciding rows
    before (``before``) and after (``after``)."""

    deliveries: pl.DataFrame
    latest: pl.DataFrame
    touched: pl.DataFrame
    before: pl.DataFrame
    after: pl.DataFrame

    def changed_papers(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(removed, added) kept papers: the old and the new version of every touched paper whose
        kept status, DOI, normalised title or journal-ref changed (an unchanged re-delivery is in
        neither)."""
        old = self.before.filter(pl.col("kept"))
        new = self.after.filter(pl.col("kept"))
        on = ["id", "doi", "norm_title", "journal_ref"]
        same = old.join(new, on=on, how="semi", nulls_equal=True).select("id")
        return old.join(same, on="id", how="anti"), new.join(same, on="id", how="anti")


def full(store: Store, days: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(deliveries, latest) of these days, read whole."""
    rows = read_papers(store, days)
    return rows.select("id", "day"), latest(rows)


def update(
    store: Store, old_deliveries: pl.DataFrame, old_latest: pl.DataFrame, changed: list[str], gone: list[str]
) -> Change:
    """The tables after the days ``changed`` (new or rewritten) were read again and ``gone``
    days removed."""
    new_rows = read_papers(store, changed)
    out_days = pl.Series(sorted(set(changed) | set(gone)), dtype=pl.String).implode()
    deliveries = pl.concat(
        [old_deliveries.filter(~pl.col("day").is_in(out_days)), new_rows.select("id", "day")]
    )
    affected = pl.concat(
        [old_deliveries.filter(pl.col("day").is_in(out_days))["id"], new_rows["id"]]
    ).unique()
    decide = (
        pl.DataFrame({"id": affected}, schema={"id": pl.String})
        .join(old_latest.select("id", pl.col("day").alias("old_day")), on="id", how="left")
        .join(
            deliveries.filter(pl.col("id").is_in(affected.implode())).group_by("id").agg(pl.col("day").max()),
            on="id",
            how="left",
        )
    )
    touched = decide.filter(
        ~pl.col("old_day").eq_missing(pl.col("day"))
        | pl.col("day").is_in(pl.Series(changed, dtype=pl.String).implode())
    )
    after = _decided_rows(store, touched.drop_nulls("day"), new_rows, set(changed))
    before = old_latest.join(touched.select("id"), on="id", how="semi")
    table = pl.concat([old_latest.join(touched.select("id"), on="id", how="anti"), after])
    return Change(deliveries, table, touched, before, after)


def _decided_rows(
    store: Store, decide: pl.DataFrame, new_rows: pl.DataFrame, changed: set[str]
) -> pl.DataFrame:
    """``LATEST_SCHEMA`` rows of these papers' deciding deliveries (``id, day``): from the new
    days read already, or from an older day a paper falls back to (its later day went)."""
    fresh = new_rows.join(decide.select("id", "day"), on=["id", "day"], how="semi")
    older = decide.filter(~pl.col("day").is_in(pl.Series(sorted(changed), dtype=pl.String).implode()))
    parts = [fresh]
    for (day,), part in older.partition_by("day", as_dict=True).items():
        parts.append(read_papers(store, [day]).join(part.select("id"), on="id", how="semi"))
    return pl.concat(parts).select(list(LATEST_SCHEMA))
