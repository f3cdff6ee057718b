"""Incremental bibliography linking over every day of the corpus (the ``citation_links`` asset).

The links of all bib entries against all kept papers are kept in one Parquet
file. Its key-value metadata records, per day, a stamp of the ``papers`` and
``bib_entries`` partitions it was computed from, so the next run knows which
days are new or were re-materialised: only their entries are linked against all
titles, and the old entries against their titles
(:func:`corpus.linking.link_incremental`, equal to a full recomputation). A day
that disappeared or changed, or no usable state, means a full recomputation.
Links and state live in the same file, written atomically: they can never disagree.

A paper is often delivered on several days (each new arXiv version gets a new
OAI datestamp). Its latest delivery decides, whatever the order in which days
are materialised: that day's ``papers`` row says whether it is a node of the
graph, and that day's ``bib_entries`` are its bibliography (none, if the new
version was dropped or has no parse). A new day that re-delivers old papers is
still linked incrementally: their old rows and entries are replaced.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from corpus.linking import ENTRY_COLUMNS, LINK_SCHEMA, PAPER_COLUMNS, link_entries, link_incremental
from corpus.store import Store, atomic_path

ASSET = "citation_links"
# v2: latest delivery decides papers and entries (state of other versions: recompute all)
STATE_KEY = b"corpus.citation_links.state.v2"


def _stamp(store: Store, asset: str, day: str) -> str:
    st = (store.partition_dir(asset, day) / "part-0.parquet").stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def day_stamps(store: Store) -> dict[str, str]:
    """``{day: stamp}`` over days where both ``papers`` and ``bib_entries`` exist."""
    days = sorted(set(store.partitions("papers")) & set(store.partitions("bib_entries")))
    return {d: f"{_stamp(store, 'papers', d)}|{_stamp(store, 'bib_entries', d)}" for d in days}


def _dated(store: Store, asset: str, days: list[str], columns: list[str] | None = None) -> pl.DataFrame:
    frames = [
        pl.read_parquet(store.partition_dir(asset, d) / "part-0.parquet", columns=columns).with_columns(
            pl.lit(d).alias("_day")
        )
        for d in days
    ]
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def latest_delivery(store: Store, days: list[str]) -> pl.DataFrame:
    """``id, _day``: the last of ``days`` on which each paper was delivered (kept or not)."""
    ids = _dated(store, "papers", days, columns=["id"])
    if ids.is_empty():
        return pl.DataFrame(schema={"id": pl.String, "_day": pl.String})
    return ids.group_by("id").agg(pl.col("_day").max())


def _entries(store: Store, days: list[str], latest: pl.DataFrame) -> pl.DataFrame:
    """Bib entries of these days that belong to their paper's latest delivery."""
    frame = _dated(store, "bib_entries", days)
    if frame.is_empty():
        return pl.DataFrame(schema={c: pl.String for c in ENTRY_COLUMNS})
    winners = latest.rename({"id": "citing_id"})
    return frame.join(winners, on=["citing_id", "_day"], how="semi").select(ENTRY_COLUMNS)


def _papers(store: Store, days: list[str], latest: pl.DataFrame) -> pl.DataFrame:
    """Kept papers (the graph's nodes) of these days, as of their latest delivery."""
    frame = _dated(store, "papers", days)
    if frame.is_empty():
        return pl.DataFrame(schema={c: pl.String for c in PAPER_COLUMNS})
    frame = frame.join(latest, on=["id", "_day"], how="semi").unique("id", keep="last", maintain_order=True)
    return frame.filter(pl.col("kept")).select(pl.col("id").alias("paper_id"), "doi", "norm_title")


def _latest_scan(store: Store, asset: str, id_col: str) -> pl.LazyFrame:
    """Rows of a daily ``asset`` that come from their paper's latest delivery (``id_col``: the paper)."""
    latest = store.scan("papers").group_by("id").agg(pl.col("date").max())
    return store.scan(asset).join(latest, left_on=[id_col, "date"], right_on=["id", "date"], how="semi")


def graph_nodes(store: Store) -> pl.Series:
    """Sorted ids of the papers kept in their latest delivery: the citation graph's nodes."""
    if not store.partitions("papers"):
        return pl.Series("id", [], dtype=pl.String)
    kept = _latest_scan(store, "papers", "id").filter(pl.col("kept")).select("id").unique()
    return kept.collect()["id"].sort()


def entry_mentions(store: Store) -> pl.DataFrame:
    """``entry_id, mentions`` of every bib entry of a latest delivery (one row per entry)."""
    if not store.partitions("bib_entries"):
        return pl.DataFrame(schema={"entry_id": pl.String, "mentions": pl.Int64})
    return _latest_scan(store, "bib_entries", "citing_id").select("entry_id", "mentions").collect()


def fulltext_links(store: Store, asset: str) -> pl.DataFrame | None:
    """``citing_id, cited_id, mentions`` from the side table ``asset`` (arXiv ids named in body
    text), each citing paper's latest delivery only; None when the table has no partitions."""
    if not store.partitions(asset):
        return None
    rows = _latest_scan(store, asset, "citing_id").select("citing_id", "cited_id", "mentions")
    return rows.group_by("citing_id", "cited_id").agg(pl.col("mentions").sum()).collect()


def read_links(path: Path) -> tuple[pl.DataFrame | None, dict[str, str]]:
    """The stored links and the day stamps they were computed from (None, {} if absent)."""
    if not path.exists():
        return None, {}
    meta = pq.read_schema(path).metadata or {}
    try:
        state = json.loads(meta[STATE_KEY])
    except (KeyError, ValueError):
        return None, {}
    return pl.read_parquet(path).cast(LINK_SCHEMA), state


def write_links(path: Path, links: pl.DataFrame, state: dict[str, str]) -> None:
    table = links.to_arrow()
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), STATE_KEY: json.dumps(state)})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def update_links(home: str | Path) -> dict:
    """Bring ``citation_links`` up to date with every materialised day; return a summary."""
    store = Store(Path(home))
    path = store.asset_dir(ASSET) / "part-0.parquet"
    prev, state = read_links(path)
    now = day_stamps(store)
    changed = [d for d, s in now.items() if state.get(d) != s]
    unchanged = [d for d in now if d not in changed]
    # Incremental only for days never linked before; a day that changed or vanished
    # could take back entries or papers that earlier links rest on: recompute all.
    full = prev is None or any(d not in now for d in state) or any(d in state for d in changed)
    if full:
        latest = latest_delivery(store, list(now))
        links = link_entries(_entries(store, list(now), latest), _papers(store, list(now), latest))
        mode = "full"
    elif not changed:
        links, mode = prev, "unchanged"
    else:
        old_latest = latest_delivery(store, unchanged)  # what ``prev`` was computed from
        latest = latest_delivery(store, list(now))
        new_latest = latest.filter(pl.col("_day").is_in(changed))  # papers a new day now decides
        replaced = new_latest.join(old_latest, on="id", how="semi")["id"]
        links = link_incremental(
            prev,
            _entries(store, unchanged, old_latest),
            _papers(store, unchanged, old_latest),
            _entries(store, changed, new_latest),
            _papers(store, changed, new_latest),
            replaced_ids=replaced,
        )
        mode = "incremental"
    if mode != "unchanged":
        write_links(path, links.sort("entry_id"), now)
    entries = sum(store.read_partition("bib_entries", d).height for d in changed) if not full else None
    return {
        "mode": mode,
        "days": len(now),
        "days_linked": len(now) if full else len(changed),
        "links": links.height,
        "new_entries": entries,
        "via": dict(links.group_by("via").len().iter_rows()) if links.height else {},
    }
