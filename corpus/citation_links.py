"""Incremental bibliography linking over every day of the corpus (the ``citation_links`` asset).

Storage: ``citation_links/date=<day>/part-0.parquet`` holds the links of the
entries whose citing paper was (last) delivered on that day, and
``citation_links/_state.json`` the stamps of the ``papers`` and ``bib_entries``
partitions they were computed from. The whole directory is replaced at once
(built next to the old one, unchanged days hard-linked), so links and state can
never disagree and readers never see half an update.

A paper is often delivered on several days (each new arXiv version gets a new
OAI datestamp). Its latest delivery decides, whatever the order in which days
are materialised: that day's ``papers`` row says whether it is a node of the
graph, and that day's ``bib_entries`` are its bibliography (none, if the new
version was dropped or has no parse).

Memory does not grow with the corpus: entries are read and linked a chunk of
days at a time (at most ``chunk_entries`` entries, plus one day), against the
kept papers (one row per paper). A run links only new days when it can:

* new days' entries, and old entries whose link pointed at a re-delivered
  paper, against all papers;
* every other old entry only against the new papers
  (:func:`corpus.linking.carry_forward`), its link the better of the two.

That equals a full recomputation (tested); a day that changed or vanished, or no
usable state, means a full recomputation.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from corpus.linking import ENTRY_COLUMNS, LINK_SCHEMA, PAPER_COLUMNS, carry_forward, link_entries
from corpus.store import Store, swap_dir

ASSET = "citation_links"
STATE_FILE = "_state.json"
STATE_VERSION = 3  # 3: links by day, latest delivery decides (other versions: recompute all)
CHUNK_ENTRIES = 1_000_000  # entries linked per call: a full run's memory, whatever the corpus size
_EMPTY_LINKS = pl.DataFrame(schema=LINK_SCHEMA)


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


def _chunks(store: Store, days: list[str], chunk_entries: int) -> Iterator[list[str]]:
    """Runs of consecutive days holding at most ``chunk_entries`` bib entries (one day at least)."""
    run: list[str] = []
    total = 0
    for day in days:
        rows = _entry_count(store, day)
        if run and total + rows > chunk_entries:
            yield run
            run, total = [], 0
        run.append(day)
        total += rows
    if run:
        yield run


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


def graph_input_stamp(store: Store, fulltext_asset: str) -> str:
    """A digest of everything ``citation_graph`` reads (the links' state, ``papers`` and the
    full-text id table): equal digests, equal graph, so the asset need not run again."""
    import hashlib

    parts = [
        (store.asset_dir(ASSET) / STATE_FILE).read_text()
        if (store.asset_dir(ASSET) / STATE_FILE).exists()
        else ""
    ]
    for asset in ("papers", fulltext_asset):
        parts += [f"{asset}/{d}={st}" for d, st in store.partition_stamps(asset).items()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def link_rows(store: Store) -> pl.DataFrame:
    """``citing_id, cited_id, via, score, mentions`` of every stored link, ``mentions`` being its
    bib entry's inline citations (0 when unknown).

    Links are stored in their citing paper's latest delivery day, whose ``bib_entries``
    partition holds the entries they come from: so the join is done a day at a time, and no
    table of every entry id of the corpus is ever held (the 30M-entry join was the graph's
    peak memory at 1M papers)."""
    root = store.asset_dir(ASSET)
    days = sorted(p.name[5:] for p in root.glob("date=*")) if root.exists() else []
    cols = ["citing_id", "cited_id", "via", "score", "mentions"]
    frames = []
    for day in days:
        links = pl.scan_parquet(_day_file(root, day))
        if store.has_partition("bib_entries", day):
            mentions = pl.scan_parquet(store.partition_dir("bib_entries", day) / "part-0.parquet").select(
                "entry_id", "mentions"
            )
            links = links.join(mentions, on="entry_id", how="left")
        else:
            links = links.with_columns(pl.lit(None, pl.Int64).alias("mentions"))
        frames.append(
            links.select(cols).with_columns(pl.col("mentions").cast(pl.Int64).fill_null(0)).collect()
        )
    if not frames:
        return pl.DataFrame(schema={**{c: LINK_SCHEMA[c] for c in cols[:4]}, "mentions": pl.Int64})
    return pl.concat(frames, how="vertical_relaxed")


def fulltext_links(store: Store, asset: str) -> pl.DataFrame | None:
    """``citing_id, cited_id, mentions`` from the side table ``asset`` (arXiv ids named in body
    text), each citing paper's latest delivery only; None when the table has no partitions."""
    if not store.partitions(asset):
        return None
    rows = _latest_scan(store, asset, "citing_id").select("citing_id", "cited_id", "mentions")
    return rows.group_by("citing_id", "cited_id").agg(pl.col("mentions").sum()).collect()


# --------------------------------------------------------------------------- stored links


def _day_file(root: Path, day: str) -> Path:
    return root / f"date={day}" / "part-0.parquet"


def read_state(store: Store) -> dict[str, str] | None:
    """The day stamps the stored links were computed from; None when absent or of another version."""
    path = store.asset_dir(ASSET) / STATE_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        return None
    days = state.get("days")
    return days if isinstance(days, dict) else None


def _read_days(root: Path, days: list[str]) -> pl.DataFrame:
    frames = [pl.read_parquet(_day_file(root, d)) for d in days if _day_file(root, d).exists()]
    return pl.concat(frames).cast(LINK_SCHEMA) if frames else _EMPTY_LINKS


def read_links(store: Store) -> pl.DataFrame:
    """Every stored link (all days at once: for tests and small corpora; assets scan lazily)."""
    root = store.asset_dir(ASSET)
    days = sorted(p.name[5:] for p in root.glob("date=*")) if root.exists() else []
    return _read_days(root, days).sort("entry_id")


def scan_links(store: Store) -> pl.LazyFrame:
    """Lazy scan of every stored link (LINK_SCHEMA columns), empty when there are none."""
    root = store.asset_dir(ASSET)
    if not any(root.glob("date=*/part-0.parquet")):
        return _EMPTY_LINKS.lazy()
    return pl.scan_parquet(root / "date=*" / "part-0.parquet", hive_partitioning=False).select(
        list(LINK_SCHEMA)
    )


class _Staging:
    """The next ``citation_links`` directory, built beside the current one and swapped in."""

    def __init__(self, root: Path, latest: pl.DataFrame):
        root.parent.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.dir = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".{root.name}.staging-"))
        self.day_of = latest.rename({"id": "citing_id"})
        self.links = 0
        self.via: dict[str, int] = {}

    def write(self, links: pl.DataFrame) -> None:
        """Write links, each to its citing paper's day (a day is written once)."""
        if links.is_empty():
            return
        dated = links.join(self.day_of, on="citing_id", how="left")
        if dated["_day"].null_count():
            raise ValueError("links of a citing paper with no delivery")
        for (day,), part in dated.partition_by("_day", as_dict=True).items():
            path = _day_file(self.dir, day)
            if path.exists():
                raise ValueError(f"links of day {day} written twice")
            path.parent.mkdir(parents=True)
            part.select(list(LINK_SCHEMA)).sort("entry_id").write_parquet(path, compression="zstd")
        self.links += links.height
        for via, n in links.group_by("via").len().iter_rows():
            self.via[via] = self.via.get(via, 0) + n

    def keep(self, day: str) -> None:
        """Carry a day's links over unchanged (a hard link: no copy)."""
        old = _day_file(self.root, day)
        if old.exists():
            new = _day_file(self.dir, day)
            new.parent.mkdir(parents=True)
            os.link(old, new)
            links = pl.read_parquet(old, columns=["via"])
            self.links += links.height
            for via, n in links.group_by("via").len().iter_rows():
                self.via[via] = self.via.get(via, 0) + n

    def commit(self, stamps: dict[str, str]) -> None:
        state = {"version": STATE_VERSION, "days": stamps}
        (self.dir / STATE_FILE).write_text(json.dumps(state, sort_keys=True), encoding="utf-8")
        for path in sorted(self.dir.rglob("*")):
            if path.is_file():
                with open(path, "rb") as fh:
                    os.fsync(fh.fileno())
        swap_dir(self.dir, self.root)

    def abort(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


# --------------------------------------------------------------------------- the update


def update_links(home: str | Path, *, chunk_entries: int = CHUNK_ENTRIES) -> dict:
    """Bring ``citation_links`` up to date with every materialised day; return a summary."""
    if chunk_entries < 1:
        raise ValueError(f"chunk_entries must be positive, got {chunk_entries}")
    store = Store(Path(home))
    state = read_state(store)
    now = day_stamps(store)
    changed = [d for d, s in now.items() if (state or {}).get(d) != s]
    unchanged = [d for d in now if d not in changed]
    # Incremental only for days never linked before; a day that changed or vanished
    # could take back entries or papers that earlier links rest on: recompute all.
    full = state is None or any(d not in now for d in state) or any(d in state for d in changed)
    if not full and not changed:
        links = scan_links(store).select("via").collect()
        return _summary("unchanged", now, [], links.height, dict(links.group_by("via").len().iter_rows()))
    latest = latest_delivery(store, list(now))
    staging = _Staging(store.asset_dir(ASSET), latest)
    try:
        if full:
            _link_all(store, list(now), latest, staging, chunk_entries)
        else:
            _link_new(store, changed, unchanged, latest, staging, chunk_entries)
        staging.commit(now)
    except BaseException:
        staging.abort()
        raise
    if full:
        return _summary("full", now, list(now), staging.links, staging.via)
    summary = _summary("incremental", now, changed, staging.links, staging.via)
    summary["new_entries"] = sum(_entry_count(store, d) for d in changed)
    return summary


def _entry_count(store: Store, day: str) -> int:
    return pq.ParquetFile(store.partition_dir("bib_entries", day) / "part-0.parquet").metadata.num_rows


def _summary(mode: str, now: dict, linked: list[str], links: int, via: dict[str, int]) -> dict:
    return {"mode": mode, "days": len(now), "days_linked": len(linked), "links": links,
            "new_entries": None, "via": via}  # fmt: skip


def _link_all(store: Store, days: list[str], latest, staging: _Staging, chunk_entries: int) -> None:
    papers = _papers(store, days, latest)
    for run in _chunks(store, days, chunk_entries):
        staging.write(link_entries(_entries(store, run, latest), papers))


def _link_new(
    store: Store, changed: list[str], unchanged: list[str], latest, staging: _Staging, chunk_entries: int
) -> None:
    old_latest = latest_delivery(store, unchanged)  # what the stored links were computed from
    new_latest = latest.filter(pl.col("_day").is_in(changed))  # papers a new day now decides
    replaced = new_latest.join(old_latest, on="id", how="semi").select(pl.col("id").alias("citing_id"))
    new_papers = _papers(store, changed, new_latest)
    redelivered = pl.concat([new_papers["paper_id"], replaced["citing_id"]]).unique()
    old_papers = _papers(store, unchanged, old_latest).filter(
        ~pl.col("paper_id").is_in(redelivered.implode())
    )
    relink = [_entries(store, changed, new_latest)]
    root = store.asset_dir(ASSET)
    for run in _chunks(store, unchanged, chunk_entries):
        if new_papers.is_empty() and replaced.is_empty():  # nothing can change these links
            for day in run:
                staging.keep(day)
            continue
        entries = _entries(store, run, old_latest).join(replaced, on="citing_id", how="anti")
        merged, stale = carry_forward(_read_days(root, run), entries, new_papers, redelivered)
        staging.write(merged)
        relink.append(stale)
    # The new days' entries and the stale ones, against every paper (one index over all titles).
    _write_relinked(staging, link_entries(pl.concat(relink), pl.concat([old_papers, new_papers])))


def _write_relinked(staging: _Staging, links: pl.DataFrame) -> None:
    """Relinked entries of days already written: their day files are extended, not overwritten."""
    if links.is_empty():
        return
    dated = links.join(staging.day_of, on="citing_id", how="left")
    for (day,), part in dated.partition_by("_day", as_dict=True).items():
        path = _day_file(staging.dir, day)
        part = part.select(list(LINK_SCHEMA))
        if path.exists():
            part = pl.concat([pl.read_parquet(path).cast(LINK_SCHEMA), part])
            path.unlink()  # a hard link to the old file must not be written through
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        part.sort("entry_id").write_parquet(path, compression="zstd")
    staging.links += links.height
    for via, n in links.group_by("via").len().iter_rows():
        staging.via[via] = staging.via.get(via, 0) + n
