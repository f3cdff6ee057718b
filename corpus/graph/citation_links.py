"""Incremental bibliography linking over every day of the corpus (the ``citation_links`` asset),
in shards that can run in parallel.

Storage under ``$CORPUS_HOME/citation_links/``:

* ``date=<day>/part-<s>.parquet``: the links (LINK_SCHEMA) of shard ``s``'s entries whose citing
  paper was (last) delivered on that day. An entry's shard is FNV-1a of its ``citing_id`` modulo
  the number of shards: a paper's whole bibliography is in one shard, every shard links against
  every paper, so the union of the shards is exactly the unsharded result.
* ``_state/layout.json``: the number of shards; ``_state/shard-<s>/``: one shard's state.json
  (input fingerprints, link counts, the entry index manifest), its copy of every paper's latest
  delivery and of every delivery, and its entry index (:mod:`corpus.graph.link_index`).

A paper is often delivered on several days (each new arXiv version gets a new OAI datestamp). Its
latest delivery decides, whatever the order in which days are materialised: that day's ``papers``
row says whether it is a link target, and that day's ``bib_entries`` are its bibliography.

A run first compares content fingerprints of the ``papers`` and ``bib_entries`` day files with the
state (size and mtime first, a SHA-256 of the file only when they moved): unchanged inputs mean no
work at all. Otherwise, from the days that are new, changed or gone:

* papers whose deciding delivery changed: their old entries leave (index and day file), their new
  entries are linked against every paper (exact ids against the table of papers, titles through
  the papers' side of the index: no join over every title);
* link targets that changed (new, dropped, new title or DOI): entries whose link pointed at an old
  target are relinked against every paper; every other old entry can only gain a link to a new
  target, found by lookups in the entry index (arXiv id, DOI, title prefix grams) and kept when it
  beats the stored one under :func:`corpus.graph.linking.link_entries`' order.

Since the link of an entry is the minimum of a fixed order over all candidate papers, this equals a
full relink (tested); a run reads and rewrites only the day files whose links change. No usable
state means a full run (every entry, a chunk of days at a time, at most ``chunk_entries`` entries
per call), which also builds the index: its papers' side first, so that every chunk's titles go
through it as a new day's do (one title join for both kinds of run, its blocks over threads).

Commits: new files are written under temporary names, then the new state.json lists the renames
and deletions that publish them and is replaced atomically, then they are applied (and applied
again by the next run if a crash came between): a crash loses nothing and the next run finishes
the commit before anything else. Each file is replaced atomically; a reader scanning every day
file during a commit may see some days already new (as with any partitioned table being
updated). One run per shard at a time (a file lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from corpus.graph import deliveries
from corpus.graph.deliveries import DELIVERY_SCHEMA, LATEST_SCHEMA, same_content, stamp
from corpus.graph.link_index import Side, TitleIndex, fnv1a, remove_paths
from corpus.graph.link_stats import (
    AMBIGUOUS_SCHEMA,
    EMPTY_AMBIGUOUS,
    EMPTY_STATS,
    STATS_SCHEMA,
    Moves,
    by_field,
    days_stats,
    entry_ids,
    with_delta,
)
from corpus.graph.linking import (
    ENTRY_COLUMNS,
    LINK_SCHEMA,
    LINK_WORKERS,
    LINKING_VERSION,
    REASON_SCHEMA,
    TITLE_THRESHOLD,
    best_link,
    link_entries,
    link_exact,
    normalize_arxiv_ids,
    target_frame,
    with_pub_columns,
)
from corpus.graph.publication_links import PUB_COLUMNS, entry_keys, link_publications, publication_rows
from corpus.heap import release_free_heap
from corpus.papers.normalize import normalize_dois
from corpus.store import Store, atomic_write_bytes, scan_days
from corpus.versions import FIRST_RECORDED

ASSET = "citation_links"
STATE_DIR = "_state"
STATE_VERSION = 6  # 6: links by publication (5: shards, fingerprints, entry index; other versions: full run)
CHUNK_ENTRIES = 1_000_000  # entries linked per call in a full run: its memory, whatever the corpus
REFREEZE = 4  # the gram order is frozen again when the link targets outgrew it this many times,
REFREEZE_UNTIL = 100_000  # as long as it was counted on fewer titles than this (then it is good)
_EMPTY_LINKS = pl.DataFrame(schema=LINK_SCHEMA)


# --------------------------------------------------------------------------- layout and shards


def shard_of(ids: pl.Series, n_shards: int) -> np.ndarray:
    """The shard of each citing paper id (stable across runs, versions and machines)."""
    if n_shards == 1:
        return np.zeros(len(ids), np.int64)
    return (fnv1a(ids) % np.uint64(n_shards)).astype(np.int64)


def _layout_path(root: Path) -> Path:
    return root / STATE_DIR / "layout.json"


def read_layout(store: Store) -> int | None:
    """The number of shards the stored links were written with (None: no or another layout)."""
    try:
        layout = json.loads(_layout_path(store.asset_dir(ASSET)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(layout, dict) or layout.get("version") != STATE_VERSION:
        return None
    if layout.get("code", FIRST_RECORDED[ASSET]) != LINKING_VERSION:
        return None  # links made by other linking code: every one is made again
    n = layout.get("n_shards")
    return n if isinstance(n, int) and n >= 1 else None


def prepare_links(home: str | Path, n_shards: int) -> bool:
    """Make the stored links' layout ``n_shards`` shards before the shards run; return True when
    it changed (every stored link, state and index removed: each shard then runs in full)."""
    if n_shards < 1:
        raise ValueError(f"n_shards must be positive, got {n_shards}")
    store = Store(Path(home))
    if read_layout(store) == n_shards:
        return False
    root = store.asset_dir(ASSET)
    if root.exists():
        for path in sorted(root.iterdir()):
            remove_paths([path])
    body = json.dumps({"version": STATE_VERSION, "code": LINKING_VERSION, "n_shards": n_shards}).encode()
    atomic_write_bytes(_layout_path(root), body)
    return True


def _link_file(root: Path, day: str, shard: int) -> Path:
    return root / f"date={day}" / f"part-{shard}.parquet"


def link_files(store: Store) -> list[Path]:
    root = store.asset_dir(ASSET)
    return sorted(root.glob("date=*/part-*.parquet")) if root.exists() else []


def read_links(store: Store) -> pl.DataFrame:
    """Every stored link, sorted by entry_id (all at once: for tests and small corpora)."""
    frames = [pl.read_parquet(p) for p in link_files(store)]
    return pl.concat(frames).cast(LINK_SCHEMA).sort("entry_id") if frames else _EMPTY_LINKS


def scan_links(store: Store) -> pl.LazyFrame:
    """Lazy scan of every stored link (LINK_SCHEMA columns), empty when there are none."""
    root = store.asset_dir(ASSET)
    if not link_files(store):
        return _EMPTY_LINKS.lazy()
    return pl.scan_parquet(root / "date=*" / "part-*.parquet", hive_partitioning=False).select(
        list(LINK_SCHEMA)
    )


def links_by_definition(home: str | Path) -> pl.DataFrame:
    """The links as defined, computed in memory from scratch: every bib entry of each paper's
    latest delivery, linked by :func:`corpus.graph.linking.link_entries` to the papers kept in their
    latest delivery, sorted by entry_id. What the stored links must equal; small corpora only."""
    store = Store(Path(home))
    days = sorted(set(store.partitions("papers")) & set(store.partitions("bib_entries")))
    if not days:
        return _EMPTY_LINKS
    papers = pl.concat(
        [store.read_partition("papers", d).with_columns(pl.lit(d).alias("day")) for d in days],
        how="diagonal_relaxed",
    )
    latest = papers.sort("day").unique("id", keep="last")
    if "journal_ref" not in latest.columns:
        latest = latest.with_columns(pl.lit(None, pl.String).alias("journal_ref"))
    entries = pl.concat([read_entries(store, d).with_columns(pl.lit(d).alias("day")) for d in days])
    decided = latest.select(pl.col("id").alias("citing_id"), "day")
    entries = entries.join(decided, on=["citing_id", "day"], how="semi")
    targets = latest.filter(pl.col("kept")).select(
        pl.col("id").alias("paper_id"), "doi", "norm_title", "journal_ref"
    )
    return link_entries(entries.select(ENTRY_COLUMNS), targets).sort("entry_id")


def read_entries(store: Store, day: str) -> pl.DataFrame:
    """ENTRY_COLUMNS of one day's ``bib_entries``; columns a day written before them lacks (the
    publication columns) read as null."""
    path = store.partition_dir("bib_entries", day) / "part-0.parquet"
    schema = {c: pl.String for c in ENTRY_COLUMNS} | {"pub_year": pl.Int64}
    return (
        scan_days([path], schema).select(ENTRY_COLUMNS).collect().cast({c: pl.String for c in ENTRY_COLUMNS})
    )


# --------------------------------------------------------------------------- fingerprints


def fingerprints(store: Store, old: dict | None = None) -> dict[str, dict[str, list]]:
    """``{day: {asset: [size, mtime_ns, sha256]}}`` of the ``papers`` and ``bib_entries`` files of
    every day holding both; a file whose size and mtime did not move keeps its old hash."""
    days = sorted(set(store.partitions("papers")) & set(store.partitions("bib_entries")))
    old = old or {}
    out: dict[str, dict[str, list]] = {}
    for day in days:
        prev = old.get(day, {})
        out[day] = {
            a: stamp(store.partition_dir(a, day) / "part-0.parquet", prev.get(a))
            for a in ("papers", "bib_entries")
        }
    return out


# --------------------------------------------------------------------------- inputs


def _targets(latest: pl.DataFrame, sh: _Shard) -> pl.DataFrame:
    """The link targets (kept papers as of their latest delivery) in PAPER_COLUMNS, their
    journal-refs read once: the shard keeps each journal-ref's publication (``pubs``)."""
    kept = latest.filter(pl.col("kept")).select(
        pl.col("id").alias("paper_id"), "doi", "norm_title", "journal_ref"
    )
    return target_frame(kept.join(_publications(sh, kept["journal_ref"]), on="journal_ref", how="left"))


_PUBS_SCHEMA = {"journal_ref": pl.String} | dict.fromkeys(PUB_COLUMNS, pl.String)


def _publications(sh: _Shard, refs: pl.Series) -> pl.DataFrame:
    """``[journal_ref, *PUB_COLUMNS]`` of these journal-refs: read before (the shard's ``pubs``
    table) or read now, and the table kept to the journal-refs in use."""
    refs = refs.cast(pl.String).drop_nulls().unique()
    known = sh.table("pubs", _PUBS_SCHEMA) if sh.state is not None and sh.state.get("pubs") else None
    known = known if known is not None else pl.DataFrame(schema=_PUBS_SCHEMA)
    new = refs.filter(~refs.is_in(known["journal_ref"].implode()))
    if len(new):
        known = pl.concat([known, pl.DataFrame({"journal_ref": new}).hstack(publication_rows(new.to_list()))])
    sh.pubs = known.filter(pl.col("journal_ref").is_in(refs.implode()))
    return sh.pubs


def _normalised(entries: pl.DataFrame) -> pl.DataFrame:
    """ENTRY_COLUMNS with arXiv ids and DOIs in their canonical forms (what the index stores)."""
    frame = with_pub_columns(entries).select(ENTRY_COLUMNS).cast({c: pl.String for c in ENTRY_COLUMNS})
    return frame.with_columns(
        normalize_arxiv_ids(frame["arxiv_id"]).alias("arxiv_id"), normalize_dois(frame["doi"]).alias("doi")
    )


def _entries_of(store: Store, day: str, citing: pl.Series | None = None) -> pl.DataFrame:
    frame = read_entries(store, day)
    if citing is not None:
        frame = frame.filter(pl.col("citing_id").is_in(citing.implode()))
    return _normalised(frame)


def _chunks(store: Store, days: list[str], chunk_entries: int) -> Iterator[list[str]]:
    """Runs of consecutive days holding at most ``chunk_entries`` bib entries (one day at least)."""
    run: list[str] = []
    total = 0
    for day in days:
        rows = store.partition_rows("bib_entries", day)
        if run and total + rows > chunk_entries:
            yield run
            run, total = [], 0
        run.append(day)
        total += rows
    if run:
        yield run


# --------------------------------------------------------------------------- one shard's state


@dataclass
class _Shard:
    """A shard's directory, state and the changes of the current run (committed together)."""

    root: Path  # the asset directory
    shard: int
    n_shards: int
    state: dict | None = None
    pubs: pl.DataFrame | None = None  # the publication of each link target's journal-ref (a cache)
    run: str = field(default_factory=lambda: uuid.uuid4().hex)
    renames: list[tuple[str, str]] = field(default_factory=list)
    removals: list[str] = field(default_factory=list)
    obsolete: list[str] = field(default_factory=list)

    @property
    def dir(self) -> Path:
        return self.root / STATE_DIR / f"shard-{self.shard}"

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root))

    def load(self) -> None:
        """Read state.json (finishing a commit a crash interrupted); None when unusable."""
        try:
            state = json.loads((self.dir / "state.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.state = None
            return
        if state.get("pending"):
            self._apply(state["pending"])
            state["pending"] = None
            atomic_write_bytes(self.dir / "state.json", json.dumps(state, sort_keys=True).encode())
        ok = state.get("version") == STATE_VERSION and state.get("n_shards") == self.n_shards
        self.state = state if ok else None

    def table(self, key: str, schema: dict) -> pl.DataFrame:
        name = (self.state or {}).get(key)
        return (
            pl.read_ipc(self.dir / name, memory_map=False).cast(schema)
            if name
            else pl.DataFrame(schema=schema)
        )

    def write_table(self, key: str, frame: pl.DataFrame) -> str:
        name = f"{key}-{self.run}.arrow"  # Arrow IPC, uncompressed: read and written whole every run
        frame.write_ipc(self.dir / name, compression="uncompressed")
        if self.state and self.state.get(key):
            self.obsolete.append(self.rel(self.dir / self.state[key]))
        return name

    def write_day(self, day: str, links: pl.DataFrame, ordered: bool = False) -> None:
        """Stage the new links of ``day`` (none: the day file goes); ``ordered``: they are in
        LINK_SCHEMA and sorted by entry_id already."""
        final = _link_file(self.root, day, self.shard)
        if links.is_empty():
            if final.exists():
                self.removals.append(self.rel(final))
            return
        tmp = final.with_name(f".part-{self.shard}.{self.run}.tmp")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        if not ordered:
            links = links.select(list(LINK_SCHEMA)).cast(LINK_SCHEMA).sort("entry_id")
        links.write_parquet(tmp, compression="zstd", compression_level=1)
        self.renames.append((self.rel(tmp), self.rel(final)))

    def commit(self, state: dict) -> None:
        for rel_tmp, _ in self.renames:
            with open(self.root / rel_tmp, "rb") as fh:
                os.fsync(fh.fileno())
        pending = {"renames": self.renames, "removals": self.removals, "obsolete": self.obsolete}
        state = {**state, "version": STATE_VERSION, "shard": self.shard, "n_shards": self.n_shards}
        atomic_write_bytes(
            self.dir / "state.json", json.dumps({**state, "pending": pending}, sort_keys=True).encode()
        )
        self._apply(pending)
        atomic_write_bytes(
            self.dir / "state.json", json.dumps({**state, "pending": None}, sort_keys=True).encode()
        )
        (self.dir / "running").unlink(missing_ok=True)
        self.state = state

    def _apply(self, pending: dict) -> None:
        for rel_tmp, rel_final in pending.get("renames", []):
            tmp = self.root / rel_tmp
            if tmp.exists():
                os.replace(tmp, self.root / rel_final)
        for rel in pending.get("removals", []):
            (self.root / rel).unlink(missing_ok=True)
        remove_paths([self.root / rel for rel in pending.get("obsolete", [])])

    def clean_after_crash(self) -> None:
        """Files of a run that died before its commit (the state never named them)."""
        for tmp in self.root.glob(f"date=*/.part-{self.shard}.*.tmp"):
            tmp.unlink(missing_ok=True)
        state = self.state or {}
        keep = {"state.json", "running", state.get("index_dir")}
        keep |= {state.get(k) for k in ("latest", "deliveries", "pubs", "ambiguous", "stats")}
        for path in self.dir.iterdir():
            if path.name not in keep:
                remove_paths([path])
        if state.get("index_dir"):
            manifest = state["index"]
            segments = manifest["entries"] + manifest["papers"]
            named = {manifest["order"], *(s["name"] for s in segments)}
            for path in (self.dir / state["index_dir"]).iterdir():
                if path.name not in named:
                    remove_paths([path])
            for seg in segments:
                for path in (self.dir / state["index_dir"] / seg["name"]).glob("dead-*.npy"):
                    if path.name != seg["dead"]:
                        path.unlink(missing_ok=True)


@contextlib.contextmanager
def _locked(shard: _Shard) -> Iterator[None]:
    shard.dir.mkdir(parents=True, exist_ok=True)
    with open(shard.root / STATE_DIR / f"shard-{shard.shard}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- the update


def update_links(home: str | Path, *, n_shards: int = 1, chunk_entries: int = CHUNK_ENTRIES) -> dict:
    """Bring ``citation_links`` up to date with every materialised day, shard after shard (the
    Dagster asset runs the shards as parallel steps instead); return the summed summary."""
    prepare_links(home, n_shards)
    return merge_summaries(
        [link_shard(home, s, n_shards, chunk_entries=chunk_entries) for s in range(n_shards)]
    )


def merge_summaries(summaries: list[dict]) -> dict:
    """One summary for all shards: the mode of the most work done, counts summed."""
    modes = [s["mode"] for s in summaries]
    mode = next((m for m in ("full", "incremental") if m in modes), "unchanged")
    via: dict[str, int] = {}
    for s in summaries:
        for k, v in s["via"].items():
            via[k] = via.get(k, 0) + v
    out = {"mode": mode, "shards": len(summaries), "days": max((s["days"] for s in summaries), default=0)}
    out["days_linked"] = max((s["days_linked"] for s in summaries), default=0)
    for key in ("links", "new_entries", "stale", "probed", "changed", "days_rewritten"):
        out[key] = sum(s.get(key) or 0 for s in summaries)
    out["via"] = via
    by_field: dict[str, dict[str, int]] = {}
    for s in summaries:
        for f, counts in (s.get("by_field") or {}).items():
            mine = by_field.setdefault(f, {})
            for k, v in counts.items():
                mine[k] = mine.get(k, 0) + v
    out["by_field"] = dict(sorted(by_field.items()))
    steps: dict[str, float] = {}
    for s in summaries:
        for k, v in (s.get("cpu_steps") or {}).items():
            steps[k] = round(steps.get(k, 0.0) + v, 3)
    out["cpu_steps"] = steps
    return out


def link_shard(
    home: str | Path,
    shard: int,
    n_shards: int,
    *,
    chunk_entries: int = CHUNK_ENTRIES,
    threshold: float = TITLE_THRESHOLD,
) -> dict:
    """Bring shard ``shard`` of ``n_shards`` up to date (a pure function of the store: run every
    shard, in any order or at once, after :func:`prepare_links`); return its summary."""
    if chunk_entries < 1:
        raise ValueError(f"chunk_entries must be positive, got {chunk_entries}")
    if not 0 <= shard < n_shards:
        raise ValueError(f"shard {shard} is not in 0..{n_shards - 1}")
    store = Store(Path(home))
    if read_layout(store) != n_shards:
        raise ValueError(f"citation_links is not laid out in {n_shards} shard(s): call prepare_links first")
    sh = _Shard(store.asset_dir(ASSET), shard, n_shards)
    with _locked(sh):
        sh.load()
        if (sh.dir / "running").exists():
            sh.clean_after_crash()
        state = sh.state
        if state is not None and state["index"].get("t") != threshold:
            state = sh.state = None
        fps = fingerprints(store, (state or {}).get("fingerprints"))
        if state is not None:
            old = state["fingerprints"]
            changed = [d for d in fps if not same_content(old.get(d), fps[d])]
            gone = [d for d in old if d not in fps]
            if not changed and not gone:
                if fps != old:  # files rewritten with the same content: remember their stamps
                    sh.commit({**state, "fingerprints": fps})
                return _summary("unchanged", fps, [], state["links"], state["via"],
                                by_field=by_field(sh.table("stats", STATS_SCHEMA)))  # fmt: skip
        (sh.dir / "running").write_text(sh.run)
        if state is None:
            return _full(store, sh, fps, chunk_entries, threshold)
        return _incremental(store, sh, fps, changed, gone, threshold)


def _summary(mode: str, fps: dict, linked: list[str], links: int, via: dict[str, int], **extra) -> dict:
    return {"mode": mode, "days": len(fps), "days_linked": len(linked), "links": links, "new_entries": None,
            "via": dict(via), **extra}  # fmt: skip


def _count_via(frame: pl.DataFrame, via: dict[str, int], sign: int) -> None:
    for v, n in frame.group_by("via").len().iter_rows():
        via[v] = via.get(v, 0) + sign * n


def _full(store: Store, sh: _Shard, fps: dict, chunk_entries: int, t: float) -> dict:
    days = list(fps)
    delivered, latest = deliveries.full(store, days)
    targets = _targets(latest, sh)
    index_dir = f"index-{sh.run}"
    index = TitleIndex(sh.dir / index_dir, None, t)
    index.refreeze(targets["norm_title"].fill_null("").to_list())
    index.papers.add(_paper_items(targets))
    winners = latest.select(pl.col("id").alias("citing_id"), pl.col("day").alias("_day"))
    via: dict[str, int] = {}
    written = set()
    ambiguous, stats = [], []
    for run in _chunks(store, days, chunk_entries):
        frames = [read_entries(store, d).with_columns(pl.lit(d).alias("_day")) for d in run]
        entries = pl.concat(frames).join(winners, on=["citing_id", "_day"], how="semi")
        entries = _normalised(
            entries.filter(pl.Series(shard_of(entries["citing_id"], sh.n_shards) == sh.shard))
        )
        index.extend_order(entries["norm_title"].fill_null("").to_list())
        links, reasons = _link(entries, targets, index.papers, LINK_WORKERS)
        reasons = reasons.join(entries.select("entry_id", "citing_id"), on="entry_id")
        dated = links.join(winners, on="citing_id", how="left")
        for (day,), part in dated.partition_by("_day", as_dict=True).items():
            sh.write_day(day, part)
            written.add(day)
        decided = entries.select("entry_id", "citing_id").join(winners, on="citing_id")
        stats.append(days_stats(store, decided, dated, reasons))
        _count_via(links, via, 1)
        ambiguous.append(reasons.select(list(AMBIGUOUS_SCHEMA)))
        index.entries.add(_with_link_t(entries, links, t), ranked=True)  # ranked for _link above
        del entries, links
        release_free_heap()  # what the chunk's threads freed: else RSS grows chunk after chunk
    for path in link_files(store):
        if path.name == f"part-{sh.shard}.parquet" and path.parent.name[5:] not in written:
            sh.removals.append(sh.rel(path))
    index.entries.compact()
    state = {
        "fingerprints": fps,
        "links": sum(via.values()),
        "via": via,
        "index_dir": index_dir,
        "index": index.manifest(),
        "latest": sh.write_table("latest", latest),
        "deliveries": sh.write_table("deliveries", delivered),
        "pubs": sh.write_table("pubs", sh.pubs),
        "ambiguous": sh.write_table("ambiguous", pl.concat([EMPTY_AMBIGUOUS, *ambiguous])),
        "stats": sh.write_table("stats", stats := pl.concat([EMPTY_STATS, *stats])),
    }
    sh.commit(state)
    sh.clean_after_crash()  # whatever an older state left in the shard's directory
    return _summary("full", fps, days, state["links"], via, new_entries=index.entries.live,
                    by_field=by_field(stats))  # fmt: skip


class _Laps:
    """CPU seconds of the steps of a run (this process, all threads), for the summary."""

    def __init__(self) -> None:
        self.last = time.process_time()
        self.steps: dict[str, float] = {}

    def __call__(self, name: str) -> None:
        now = time.process_time()
        self.steps[name] = round(self.steps.get(name, 0.0) + now - self.last, 3)
        self.last = now


def _incremental(store: Store, sh: _Shard, fps: dict, changed: list[str], gone: list[str], t: float) -> dict:
    state = sh.state
    assert state is not None
    lap = _Laps()
    change = deliveries.update(
        store, sh.table("deliveries", DELIVERY_SCHEMA), _latest_table(sh), changed, gone
    )
    touched, latest = change.touched, change.latest
    removed, added = change.changed_papers()  # link targets: their old and new versions
    targets = _targets(latest, sh)
    removed, added = (_with_pubs(sh, frame) for frame in (removed, added))

    lap("papers")
    index = TitleIndex(sh.dir / state["index_dir"], state["index"], t)
    if (
        targets.height >= REFREEZE * max(index.order.titles, 1)
        and targets.height > 1000
        and (index.order.titles < REFREEZE_UNTIL)
    ):
        index.refreeze(targets["norm_title"].fill_null("").to_list())
    index.papers.kill_citing(removed["id"])
    mine = touched.filter(pl.Series(shard_of(touched["id"], sh.n_shards) == sh.shard))
    index.entries.kill_citing(mine["id"])
    edits = _DayEdits(sh.root, sh.shard)
    for (day,), part in mine.drop_nulls("old_day").partition_by("old_day", as_dict=True).items():
        edits.drop_citing(day, part["id"])

    # new bibliographies of the papers whose deciding delivery this shard holds
    new_entries = [
        _entries_of(store, day, part["id"])
        for (day,), part in mine.drop_nulls("day").partition_by("day", as_dict=True).items()
    ]
    new_entries = (
        pl.concat(new_entries)
        if new_entries
        else _normalised(pl.DataFrame(schema={c: pl.String for c in ENTRY_COLUMNS}))
    )
    titles = pl.concat([removed["norm_title"], added["norm_title"], new_entries["norm_title"]])
    index.extend_order(titles.fill_null("").to_list())
    lap("entries_in")
    stale = _stale(index.entries, removed, latest, edits)
    stale = pl.concat(
        [stale, _pub_affected(index.entries, pl.concat([removed, added]), latest, edits, stale)]
    )
    lap("stale")
    probed, changed_links, moved = _probe(index.entries, added, latest, edits, stale)
    lap("probe")
    index.papers.add(_paper_items(added))
    relink = pl.concat([new_entries, stale.select(ENTRY_COLUMNS)]) if stale.height else new_entries
    links, reasons = _link(relink, targets, index.papers)
    lap("link_new")
    day_of = latest.select(pl.col("id").alias("citing_id"), pl.col("day").alias("_day"))
    for (day,), part in (
        links.join(day_of, on="citing_id", how="left").partition_by("_day", as_dict=True).items()
    ):
        edits.add(day, part.select(list(LINK_SCHEMA)))
    for (day,), part in (
        changed_links.join(day_of, on="citing_id", how="left").partition_by("_day", as_dict=True).items()
    ):
        edits.add(day, part.select(list(LINK_SCHEMA)))

    via = dict(state["via"])
    rewritten = edits.apply(sh, via)
    # entries whose status was decided again leave the ambiguous ones; those still ambiguous return
    ambiguous = sh.table("ambiguous", AMBIGUOUS_SCHEMA)
    redone = pl.col("citing_id").is_in(mine["id"].implode()) | pl.col("entry_id").is_in(
        pl.concat([relink["entry_id"], changed_links["entry_id"]]).implode()
    )
    amb_out = ambiguous.filter(redone)
    amb_in = reasons.join(relink.select("entry_id", "citing_id"), on="entry_id").select(
        list(AMBIGUOUS_SCHEMA)
    )
    ambiguous = pl.concat([ambiguous.filter(~redone), amb_in])
    stats_days = set(edits.final) | set(mine["old_day"].drop_nulls()) | set(mine["day"].drop_nulls())
    winners = latest.select(pl.col("id").alias("citing_id"), pl.col("day").alias("_day"))
    mine_all = winners.filter(pl.Series(shard_of(winners["citing_id"], sh.n_shards) == sh.shard))
    # the counts of days read again are computed again; of the other days, moved by what changed
    valid = {d for d in stats_days if store.has_partition("bib_entries", d) and d in fps}
    again_days = sorted(valid & set(changed))
    ids = entry_ids(store, again_days).join(mine_all, on=["citing_id", "_day"], how="semi")
    day_links = [edits.final.get(d, edits.current(d)).with_columns(_day=pl.lit(d)) for d in again_days]
    out_days = (stats_days - valid) | set(gone) | set(again_days)
    stats = sh.table("stats", STATS_SCHEMA).filter(
        ~pl.col("day").is_in(pl.Series(sorted(out_days), dtype=pl.String).implode())
    )
    stats = pl.concat([stats, days_stats(store, ids, pl.concat([_EMPTY_DAY_LINKS, *day_links]), ambiguous)])
    moves = Moves(mine, latest, new_entries, edits.changes, amb_out, amb_in)
    stats = with_delta(store, stats, moves.rows(store, sorted(valid - set(changed))))
    lap("day_files")
    # entries whose link changed get their new title threshold: out with the old index rows
    again = pl.concat([stale.with_columns(pl.col("_seg").cast(pl.Int32)), moved])
    for (seg,), part in again.partition_by("_seg", as_dict=True).items():
        index.entries.kill(int(seg), part["_row"].to_numpy())
    again = again.select(ENTRY_COLUMNS)
    index.entries.add(_with_link_t(pl.concat([new_entries, again]), pl.concat([links, changed_links]), t))
    index.entries.compact()
    index.papers.compact()
    lap("index_add")
    state = {
        "fingerprints": fps,
        "links": sum(via.values()),
        "via": {k: v for k, v in via.items() if v},
        "index_dir": state["index_dir"],
        "index": index.manifest(),
        "latest": sh.write_table("latest", latest),
        "deliveries": sh.write_table("deliveries", change.deliveries),
        "pubs": sh.write_table("pubs", sh.pubs),
        "ambiguous": sh.write_table("ambiguous", ambiguous),
        "stats": sh.write_table("stats", stats),
    }
    sh.obsolete += [sh.rel(p) for p in index.obsolete_paths]
    sh.commit(state)
    lap("commit")
    return _summary("incremental", fps, changed, state["links"], state["via"], new_entries=new_entries.height,
                    stale=stale.height, probed=probed, changed=changed_links.height, days_rewritten=rewritten,
                    cpu_steps=lap.steps, by_field=by_field(stats))  # fmt: skip


_EMPTY_DAY_LINKS = _EMPTY_LINKS.with_columns(_day=pl.lit(None, pl.String))


class _DayEdits:
    """What changes in which day files of one shard: rows to drop (by citing paper or entry) and
    links to add; :meth:`apply` rewrites each such day once."""

    def __init__(self, root: Path, shard: int):
        self.root, self.shard = root, shard
        self.citing: dict[str, list[pl.Series]] = {}
        self.entries: dict[str, list[pl.Series]] = {}
        self.added: dict[str, list[pl.DataFrame]] = {}
        self._cache: dict[str, pl.DataFrame] = {}
        self.final: dict[str, pl.DataFrame] = {}  # the links of each day file rewritten
        self.changes: dict[str, tuple[pl.DataFrame, pl.DataFrame]] = {}  # (dropped, added) links

    def current(self, day: str) -> pl.DataFrame:
        """The stored links of ``day`` (cached: read once per run)."""
        if day not in self._cache:
            path = _link_file(self.root, day, self.shard)
            self._cache[day] = pl.read_parquet(path).cast(LINK_SCHEMA) if path.exists() else _EMPTY_LINKS
        return self._cache[day]

    def current_of(self, entries: pl.DataFrame, latest: pl.DataFrame) -> pl.DataFrame:
        """Stored links of ``entries[entry_id, citing_id]`` (old entries: their paper's day holds them)."""
        dated = entries.join(
            latest.select(pl.col("id").alias("citing_id"), "day"), on="citing_id", how="left"
        )
        parts = [self.current(day).join(part.select("entry_id"), on="entry_id", how="semi")
                 for (day,), part in dated.drop_nulls("day").partition_by("day", as_dict=True).items()]  # fmt: skip
        return pl.concat(parts) if parts else _EMPTY_LINKS

    def drop_citing(self, day: str, ids: pl.Series) -> None:
        self.citing.setdefault(day, []).append(ids)

    def drop_entries(self, day: str, ids: pl.Series) -> None:
        self.entries.setdefault(day, []).append(ids)

    def add(self, day: str, links: pl.DataFrame) -> None:
        self.added.setdefault(day, []).append(links)

    def apply(self, sh: _Shard, via: dict[str, int]) -> int:
        """Rewrite each day file whose links change; return how many were written."""
        days = sorted(set(self.citing) | set(self.entries) | set(self.added))
        written = 0
        counted: list[pl.DataFrame] = []
        for day in days:
            old = self.current(day)  # sorted by entry_id, as written
            added = pl.concat(self.added[day]).cast(LINK_SCHEMA) if day in self.added else _EMPTY_LINKS
            drop = [added["entry_id"], *self.entries.get(day, [])]
            gone = old["entry_id"].is_in(pl.concat(drop).implode())
            if day in self.citing:
                gone = gone | old["citing_id"].is_in(pl.concat(self.citing[day]).implode())
            dropped = old.filter(gone)
            self.changes[day] = (dropped, added)
            if dropped.height == added.height and dropped.sort("entry_id").equals(added.sort("entry_id")):
                self.final[day] = old
                continue  # the same links (e.g. entries linked again to the same paper): kept
            new = old.filter(~gone)
            new = pl.concat([new, added]).sort("entry_id") if added.height else new
            self.final[day] = new
            counted += [dropped.select("via", sign=pl.lit(-1)), added.select("via", sign=pl.lit(1))]
            sh.write_day(day, new, ordered=True)
            written += 1
        if counted:  # links per via moved by what the rewritten days lost and gained, counted once
            moved = pl.concat(counted).group_by("via").agg(pl.col("sign").sum())
            for v, n in moved.iter_rows():
                via[v] = via.get(v, 0) + n
        return written


def _gather(index: Side, hits: list[tuple], cited: pl.Series | None, via: str) -> pl.DataFrame:
    """``entry_id, citing_id, _seg, _row`` (+ cited_id, via, score) of index hits ``(segment,
    query row, entry row[, score])``: the rest of their fields only for those kept
    (:func:`_fields_of`)."""
    frames = []
    for hit in hits:
        i, q, r = hit[0], hit[1], hit[2]
        if len(r) == 0:
            continue
        frame = index.fields(i, r, ids_only=True).with_columns(
            pl.lit(i).cast(pl.Int32).alias("_seg"), pl.Series("_row", r, dtype=pl.Int64)
        )
        if cited is not None:
            score = hit[3] if len(hit) > 3 else np.ones(len(r))
            frame = frame.with_columns(
                cited.gather(q).alias("cited_id"), pl.lit(via).alias("via"), pl.Series("score", score)
            )
        frames.append(frame)
    return pl.concat(frames) if frames else pl.DataFrame()


def _fields_of(index: Side, rows: pl.DataFrame) -> pl.DataFrame:
    """ENTRY_COLUMNS with ``_seg, _row`` of index rows ``rows[_seg, _row]`` (one per entry)."""
    frames = [
        index.fields(int(seg), part["_row"].to_numpy())
        .select(ENTRY_COLUMNS)
        .with_columns(pl.lit(seg).cast(pl.Int32).alias("_seg"), part["_row"])
        for (seg,), part in rows.partition_by("_seg", as_dict=True).items()
    ]
    schema = {c: pl.String for c in ENTRY_COLUMNS} | {"_seg": pl.Int32, "_row": pl.Int64}
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


def _stale(index: Side, removed: pl.DataFrame, latest: pl.DataFrame, edits: _DayEdits) -> pl.DataFrame:
    """Old entries whose stored link points at a removed link target (to relink against all):
    found by the removed versions' arXiv ids, DOIs and titles; their old links are dropped."""
    empty = pl.DataFrame(schema={c: pl.String for c in ENTRY_COLUMNS} | {"_seg": pl.Int32, "_row": pl.Int64})
    if removed.height == 0 or index.live == 0:
        return empty
    doi = removed.drop_nulls("doi")
    hits = [
        _gather(index, index.match_arxiv(removed["id"]), None, ""),
        _gather(index, index.match_doi(normalize_dois(doi["doi"]).fill_null("")), None, ""),
        _gather(index, index.match_titles(removed["norm_title"].fill_null("").to_list()), None, ""),
    ]
    found = pl.concat([h for h in hits if h.height]) if any(h.height for h in hits) else empty
    found = found.unique("entry_id")
    links = edits.current_of(found, latest)
    gone = links.filter(pl.col("cited_id").is_in(removed["id"].implode()))
    stale = _fields_of(index, found.join(gone.select("entry_id"), on="entry_id", how="semi"))
    day_of = latest.select(pl.col("id").alias("citing_id"), "day")
    for (day,), part in stale.join(day_of, on="citing_id").partition_by("day", as_dict=True).items():
        edits.drop_entries(day, part["entry_id"])
    return stale


def _probe(
    index: Side, added: pl.DataFrame, latest: pl.DataFrame, edits: _DayEdits, stale: pl.DataFrame
) -> tuple[int, pl.DataFrame, pl.DataFrame]:
    """Links that new link targets give old entries, where they beat the stored ones: (entries
    probed, the changed links, those entries' index fields with their segment and row)."""
    none = pl.DataFrame(schema={c: pl.String for c in ENTRY_COLUMNS} | {"_seg": pl.Int32, "_row": pl.Int64})
    if added.height == 0 or index.live == 0:
        return 0, _EMPTY_LINKS, none
    ids = added["id"]
    doi = added.with_row_index("q").drop_nulls("doi")
    doi_hits = [
        (i, doi["q"].to_numpy()[q], r)
        for i, q, r in index.match_doi(normalize_dois(doi["doi"]).fill_null(""))
    ]
    parts = [
        _gather(index, index.match_arxiv(ids), ids, "arxiv_id"),
        _gather(index, doi_hits, ids, "doi"),
        _gather(index, index.match_titles(added["norm_title"].fill_null("").to_list()), ids, "title"),
    ]
    parts = [p for p in parts if p.height]
    if not parts:
        return 0, _EMPTY_LINKS, none
    cand = pl.concat(parts).filter(pl.col("citing_id") != pl.col("cited_id"))
    cand = cand.join(stale.select("entry_id"), on="entry_id", how="anti")
    if cand.height == 0:
        return 0, _EMPTY_LINKS, none
    best = best_link(cand.select(list(LINK_SCHEMA)))
    stored = edits.current_of(best.select("entry_id", "citing_id"), latest)
    merged = best_link(pl.concat([stored, best]))
    changed = merged.join(stored, on=list(LINK_SCHEMA), how="anti", nulls_equal=True)
    for (day,), part in (
        changed.join(latest.select(pl.col("id").alias("citing_id"), "day"), on="citing_id")
        .partition_by("day", as_dict=True)
        .items()
    ):
        edits.drop_entries(day, part["entry_id"])
    items = cand.join(changed.select("entry_id"), on="entry_id", how="semi").unique("entry_id")
    return best.height, changed, _fields_of(index, items)


def _with_link_t(entries: pl.DataFrame, links: pl.DataFrame, t: float) -> pl.DataFrame:
    """Entries with the title threshold their index postings need (corpus.graph.link_index): a title
    link's score less 1e-9 (only a score as high can beat it), none (inf) for an identifier link."""
    return entries.select(ENTRY_COLUMNS).join(
        links.select(
            "entry_id",
            pl.when(pl.col("via") == "title")
            .then(pl.col("score") - 1e-9)
            .when(pl.col("via").is_in(["arxiv_id", "doi"]))
            .then(float("inf"))
            .otherwise(None)  # a link by publication loses to any title link: the entry's own threshold
            .alias("link_t"),
        ),
        on="entry_id",
        how="left",
    )


def _paper_items(papers: pl.DataFrame) -> pl.DataFrame:
    """Link targets (``paper_id, doi, norm_title``, or ``id, ...``) as index items keyed by their id."""
    pid = "paper_id" if "paper_id" in papers.columns else "id"
    return papers.select(
        pl.col(pid).alias("entry_id"),
        pl.col(pid).alias("citing_id"),
        pl.lit(None, pl.String).alias("arxiv_id"),
        normalize_dois(papers["doi"].cast(pl.String)).alias("doi"),
        pl.col("norm_title").cast(pl.String),
        *[pl.lit(None, pl.String).alias(c) for c in PUB_COLUMNS],  # papers are looked up by title only
    )


def _link(
    entries: pl.DataFrame, targets: pl.DataFrame, papers: Side, workers: int = 1
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`corpus.graph.linking.link_entries_with_reasons` of ``entries`` against every link
    target, the title part looked up in the papers' side of the index instead of a join over all
    their titles (on ``workers`` threads)."""
    exact = link_exact(entries, targets, normalized=True)  # entries come _normalised
    rest = entries.join(exact.select("entry_id"), on="entry_id", how="anti")
    parts = []
    for i, q, r, score in papers.match_titles(rest["norm_title"].fill_null("").to_list(), workers):
        if len(q):
            parts.append(
                pl.DataFrame(
                    {
                        "entry_id": rest["entry_id"].gather(q),
                        "citing_id": rest["citing_id"].gather(q),
                        "cited_id": papers.segments[i][1].column("entry_id").take(r),
                        "score": score,
                    }
                )
            )
    titled = (
        pl.concat(parts)
        .filter(pl.col("citing_id") != pl.col("cited_id"))
        .with_columns(pl.lit("title").alias("via"))
        if parts
        else _EMPTY_LINKS
    )
    exact = exact.join(entries.select("entry_id", "citing_id"), on="entry_id").with_columns(
        pl.lit(1.0).alias("score")
    )
    links = best_link(
        pl.concat([exact.select(list(LINK_SCHEMA)), titled.select(list(LINK_SCHEMA))]).cast(LINK_SCHEMA)
    )
    rest = entries.join(links.select("entry_id"), on="entry_id", how="anti")
    published, reasons = link_publications(rest, targets)
    published = published.join(entries.select("entry_id", "citing_id"), on="entry_id").with_columns(
        pl.lit(1.0).alias("score")
    )
    links = pl.concat([links, published.select(list(LINK_SCHEMA)).cast(LINK_SCHEMA)]).sort("entry_id")
    return links, reasons.cast(REASON_SCHEMA)


# --------------------------------------------------------------------------- links by publication


def _latest_table(sh: _Shard) -> pl.DataFrame:
    name = (sh.state or {}).get("latest")
    return deliveries.read_latest(sh.dir / name) if name else pl.DataFrame(schema=LATEST_SCHEMA)


def _with_pubs(sh: _Shard, papers: pl.DataFrame) -> pl.DataFrame:
    """Changed link targets (LATEST_SCHEMA rows) with their publication (PUB_COLUMNS)."""
    return papers.join(_publications_of(sh, papers["journal_ref"]), on="journal_ref", how="left")


def _publications_of(sh: _Shard, refs: pl.Series) -> pl.DataFrame:
    """``[journal_ref, *PUB_COLUMNS]`` of some journal-refs (the old versions of changed targets
    too), from the shard's table where it has them: it is not trimmed to them."""
    refs = refs.cast(pl.String).drop_nulls().unique()
    known = sh.pubs.filter(pl.col("journal_ref").is_in(refs.implode())) if sh.pubs is not None else None
    known = known if known is not None else pl.DataFrame(schema=_PUBS_SCHEMA)
    new = refs.filter(~refs.is_in(known["journal_ref"].implode()))
    if len(new):
        known = pl.concat([known, pl.DataFrame({"journal_ref": new}).hstack(publication_rows(new.to_list()))])
    return known


def _pub_affected(
    index: Side, targets: pl.DataFrame, latest: pl.DataFrame, edits: _DayEdits, stale: pl.DataFrame
) -> pl.DataFrame:
    """Old entries whose publication names a changed link target (added or removed; by its
    journal-ref's volume and page, or its DOI as an entry's derived DOI): whether they link by
    publication, and to which paper, depends on every paper naming it, so they are linked again
    against all (like the stale ones); their old links are dropped."""
    empty = pl.DataFrame(schema={c: pl.String for c in ENTRY_COLUMNS} | {"_seg": pl.Int32, "_row": pl.Int64})
    if targets.height == 0 or index.live == 0:
        return empty
    keys = entry_keys(targets.select(PUB_COLUMNS))["pub_key"].drop_nulls().unique()
    dois = normalize_dois(targets["doi"].cast(pl.String)).drop_nulls().unique()
    frames = [
        index.fields(i, rows).with_columns(
            pl.lit(i).cast(pl.Int32).alias("_seg"), pl.Series("_row", rows, dtype=pl.Int64)
        )
        for i, rows in index.match_publications(keys, dois)
        if len(rows)
    ]
    if not frames:
        return empty
    found = pl.concat(frames).join(stale.select("entry_id"), on="entry_id", how="anti").unique("entry_id")
    day_of = latest.select(pl.col("id").alias("citing_id"), "day")
    for (day,), part in found.join(day_of, on="citing_id").partition_by("day", as_dict=True).items():
        edits.drop_entries(day, part["entry_id"])
    return found.select(*ENTRY_COLUMNS, "_seg", "_row")
