"""peS2o as data: the ``v1``/``v2`` release writer over the daily ``pes2o`` table.

:mod:`corpus.release.pes2o` measures one document and decides; this module runs it over
the store (no Dagster here, the assets in ``corpus_assets.pes2o`` are thin).

The daily ``pes2o`` table is corpus.release.pes2o_table.

**Release** (:func:`write_release`): a snapshot at the knowledge cutoff. Only days up to
the cutoff are read (a day after it changes nothing); a paper seen on several of them counts
once, with its latest day's verdict and text, and ``added`` is the *first* day it was seen.
Kept documents go to ``train`` or ``valid`` by :func:`corpus.release.pes2o.split_for` (documents
created after the cutoff belong to no split and are counted) and are written as

    <root>/<version>/<split>/<source>-00000.jsonl.gz   one JSON object a line, (added, id) order
    <root>/<version>/<split>/<source>-00000.parquet    the same documents
    <root>/<version>/manifest.json                     files, statistics, funnel, settings, inputs
    <root>/<version>/README.md                         the Hugging Face dataset card

Shards are content-defined chunks of each (split, source) stream (see the comment above
:func:`plan_release`), so a new day rewrites only the shards whose documents it changes, and
``manifest.json`` records the content fingerprint of every day read: when no day changed,
nothing is read or written. The result is byte-identical to a build from scratch (gzip headers
carry no name and mtime 0, nothing depends on the clock). The version directory is assembled
next to the old one (unchanged shards hard-linked) and swapped in, so readers see the old
release or the new one.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

if TYPE_CHECKING:
    import pyarrow as pa

from corpus.release import pes2o
from corpus.release.dataset_card import write_card
from corpus.release.pes2o_card import DOC_FIELDS, SPLITS, funnel_rows, funnel_svg, pes2o_card
from corpus.release.pes2o_shard import members_of
from corpus.release.pes2o_shard import write_shard as _write_shard
from corpus.release.pes2o_table import ASSET, PES2O_SCHEMA, RULES, SOURCES, timestamp
from corpus.release.settings import (
    DEFAULT_CHUNK_BYTES,
    DEFAULT_CUTOFF,
    DEFAULT_MAX_SHARD_BYTES,
    DEFAULT_MIN_CHUNK_BYTES,
)
from corpus.release.state import (
    day_fingerprints,
    input_code_versions,
    link_or_copy,
    load_state,
    locked,
    manifest_sha256,
    save_state,
    state_dir,
)
from corpus.store import Store, atomic_write_bytes, scan_days, swap_dir
from corpus.versions import FIRST_RECORDED

# The version of pes2o_v1 and pes2o_v2 (corpus.versions): bump it whenever their rows change.
PES2O_RELEASE_VERSION = "corpus.release.pes2o_release/3"  # 2: JSON lines as gzip members; 3: found by header

__all__ = [
    "ASSET",
    "DEFAULT_CUTOFF",
    "DEFAULT_MAX_SHARD_BYTES",
    "DOC_FIELDS",
    "RULES",
    "SOURCES",
    "SPLITS",
    "Plan",
    "ReleaseSettings",
    "auto_workers",
    "build_task",
    "sign_task",
    "commit_release",
    "funnel_svg",
    "funnel_rows",
    "pes2o_card",
    "plan_release",
    "release_dir",
    "write_release",
]

RELEASES = ("releases", "pes2o")

# --------------------------------------------------------------------------- release

# of manifest.json (3: gzip members, 4: their digest and size in their headers): a release of
# another format is rebuilt in full
FORMAT = 4
# Of the release state: the key index (written whole by the plan) and a patch of the text and doc
# hashes the build tasks computed (written by the commit), applied when the state is read. A
# state of format 2 (one index holding every hash) is read as one without a patch.
STATE_FORMAT = 3
_STATE_FORMATS = (STATE_FORMAT, 2)
CHUNKS_PER_STREAM = 256  # chunk target = stream bytes / this, as a power of two within the bounds
WORD_BYTES = 6  # estimated bytes per whitespace word of text (chunk and shard sizing only)
LINE_OVERHEAD = 96  # estimated bytes of a JSON line besides its text
STATE = "pes2o_release"
_MAX_TASKS = 256  # spill files open at once while scattering; beyond, tasks grow instead
SPAWN_BYTES = 64 * 1024 * 1024  # less to write than this: no build processes (each costs ~0.7 CPU s to start)


@dataclass(frozen=True)
class ReleaseSettings:
    """How a release is cut: knowledge cutoff (valid = from the 1st of the month before
    its month up to it, :func:`corpus.release.pes2o.split_for`; no day after it is read), shard
    bounds, gzip level. ``sort_bucket_bytes`` bounds the text one build task holds."""

    cutoff: str = DEFAULT_CUTOFF
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES
    compresslevel: int = 6
    row_group_docs: int = 1000  # Parquet row groups: bounded memory, fixed so bytes repeat
    sort_bucket_bytes: int = 128 * 1024 * 1024
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    min_chunk_bytes: int = DEFAULT_MIN_CHUNK_BYTES

    def __post_init__(self) -> None:
        dt.date.fromisoformat(self.cutoff)  # a clear error for a malformed setting
        for name in (
            "max_shard_bytes",
            "sort_bucket_bytes",
            "chunk_bytes",
            "min_chunk_bytes",
            "row_group_docs",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.min_chunk_bytes > self.chunk_bytes:
            raise ValueError(f"min_chunk_bytes {self.min_chunk_bytes} > chunk_bytes {self.chunk_bytes}")
        if not 0 <= self.compresslevel <= 9:
            raise ValueError(f"compresslevel must be 0-9, got {self.compresslevel}")

    def layout(self) -> dict[str, Any]:
        """What decides the release's bytes (recorded in the manifest; a change rebuilds in full)."""
        return {
            "cutoff": self.cutoff,
            "max_shard_bytes": self.max_shard_bytes,
            "compresslevel": self.compresslevel,
            "row_group_docs": self.row_group_docs,
            "chunk_bytes": self.chunk_bytes,
            "min_chunk_bytes": self.min_chunk_bytes,
        }


def release_dir(home: str | Path, version: str) -> Path:
    """``$CORPUS_HOME/releases/pes2o/<version>`` (DESIGN.md §7)."""
    return Path(home).joinpath(*RELEASES, version)


# run the middle one in parallel (one call per task, any process or machine sharing the disk):
#
#   plan_release    the key index: one row per (source, id) with its days, its latest row's
#                   verdict and attributes (no text), updated from the days whose fingerprint
#                   changed; the layout of every shard; the shards to build, cut into tasks;
#                   and one pass over the days holding new text, scattering it to the tasks;
#                   the new index (each key's new shard in it) and the manifest's counts.
#   sign_task       one task's shards' signatures, from the hashes the index knows and those of
#                   the scattered texts: a shard holding the documents of a current one is
#                   linked to it without reading either (most shards a new day touches: a new
#                   version of a paper often brings the same text); the doc hashes.
#   build_task      the shards of one task left to write (signing it first if it was not):
#                   text from the scatter or from the current release's Parquet (a document
#                   that did not change), gzip JSONL + Parquet written.
#   commit_release  manifest, dataset card; the new version directory swapped in; the state:
#                   the plan's index moved in (not read again) and the tasks' hashes as its patch.
#
# Layout. Documents of one (split, source) stream are ordered by (added, id): the day a paper
# first came in, so a new day's documents go to the end and a backfilled day to its place.
# The stream is cut into content-defined chunks: a document starts a chunk when a hash of its
# key is below its estimated bytes / T (T = the stream's bytes / CHUNKS_PER_STREAM, a power of
# two within [min_chunk_bytes, chunk_bytes]), so chunks hold ~T bytes and where a chunk starts
# depends on that document alone: inserting, changing or removing a document changes its own
# chunk (and, when it starts one, the chunk before), never the rest. A chunk over
# max_shard_bytes is cut into several shards. Shards are numbered in stream order; a shard
# whose documents (keys and content hashes) equal a shard of the current release is that
# shard's bytes, linked under its new name. The layout is a function of the data only, so an
# incremental run writes the files a full build would write, byte for byte.

_KEYS = ["source", "id"]
_ROW_SCHEMA: dict[str, Any] = {
    "source": pl.Utf8,
    "id": pl.Utf8,
    "date": pl.Utf8,
    "keep": pl.Boolean,
    "reason": pl.Utf8,
    "created": pl.Utf8,
    "created_date": pl.Date,
    "words": pl.Int64,
}
_ATTRS = ("keep", "reason", "created", "created_date", "words")
INDEX_SCHEMA: dict[str, Any] = {
    "source": pl.Utf8,
    "id": pl.Utf8,
    "days": pl.List(pl.Utf8),  # every day (<= cutoff) with a row of this key, sorted
    "first_day": pl.Utf8,  # added
    "last_day": pl.Utf8,  # the day whose row counts
    **{k: _ROW_SCHEMA[k] for k in _ATTRS},
    "u": pl.UInt64,  # hash of the key: where chunks start
    "text_hash": pl.UInt64,  # of the released text (null: to be read from last_day)
    "doc_hash": pl.UInt64,  # of the released JSON line's content
    "path": pl.Utf8,  # the shard (stem) holding it in the current release
}
_TASK_SCHEMA: dict[str, Any] = {
    "stem": pl.Utf8,
    "source": pl.Utf8,
    "id": pl.Utf8,
    "first_day": pl.Utf8,
    "created": pl.Utf8,
    "last_day": pl.Utf8,
    "text_hash": pl.UInt64,
    "doc_hash": pl.UInt64,
    "path": pl.Utf8,
    "weight": pl.Int64,  # estimated bytes: how much a task has to write (_run_tasks)
}


def _h64(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def _key_hash(source: str, pid: str) -> int:
    return _h64(f"{source}\0{pid}".encode())


def _doc_hash(
    version: str, source: str, pid: str, first_day: str, created: str | None, text_hash: int
) -> int:
    return _h64(f"{version}\0{source}\0{pid}\0{first_day}\0{created}\0{text_hash:016x}".encode())


def _text_hash(text: str) -> int:
    return _h64(text.encode("utf-8"))


def _writer_tag(version: str, settings: ReleaseSettings) -> bytes:
    """What besides the documents decides a shard's bytes: a shard is reused only when equal."""
    import zlib

    import pyarrow as pa

    return (f"{FORMAT}|{version}|{settings.compresslevel}|{settings.row_group_docs}|"
            f"pyarrow {pa.__version__}|zlib {zlib.ZLIB_RUNTIME_VERSION}").encode()  # fmt: skip


def _valid_start(cutoff: dt.date) -> dt.date:
    """The first created date :func:`corpus.release.pes2o.split_for` puts in ``valid``."""
    day = cutoff
    while pes2o.split_for(day - dt.timedelta(days=1), cutoff) == "valid":
        day -= dt.timedelta(days=1)
    return day


def _empty(schema: Mapping[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(schema=dict(schema))


def _partition_file(store: Store, day: str) -> Path:
    return store.partition_dir(ASSET, day) / "part-0.parquet"


def _day_rows(store: Store, version: str, days: Iterable[str]) -> pl.DataFrame:
    """The small columns (no text) of every row of ``days``, as :data:`_ROW_SCHEMA`."""
    files = [_partition_file(store, d) for d in sorted(days)]
    if not files:
        return _empty(_ROW_SCHEMA)
    columns = ("source", "id", f"{version}_keep", f"{version}_reason", "created", "created_date", "words")
    frame = (
        scan_days(files, {c: PES2O_SCHEMA[c] for c in columns}, hive=True)
        .select(
            pl.col("source"),
            pl.col("id"),
            pl.col("date"),
            pl.col(f"{version}_keep").fill_null(False).alias("keep"),
            pl.col(f"{version}_reason").alias("reason"),
            pl.col("created"),
            pl.col("created_date"),
            pl.col("words").cast(pl.Int64),
        )
        .filter(pl.col("id").is_not_null() & pl.col("source").is_not_null())
        .collect(engine="streaming")
    )
    return frame.cast(_ROW_SCHEMA)  # type: ignore[arg-type]


def _latest(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per key: its days and its latest row's attributes."""
    return (
        rows.sort("source", "id", "date")
        .group_by(_KEYS, maintain_order=True)
        .agg(
            pl.col("date").alias("days"),
            pl.col("date").first().alias("first_day"),
            pl.col("date").last().alias("last_day"),
            *(pl.col(c).last() for c in _ATTRS),
        )
    )


def _with_key_hashes(frame: pl.DataFrame) -> pl.DataFrame:
    u = [_key_hash(s, i) for s, i in zip(frame["source"].to_list(), frame["id"].to_list(), strict=True)]
    return frame.with_columns(pl.Series("u", u, pl.UInt64))


def _update_index(
    store: Store, version: str, old: pl.DataFrame | None, changed: set[str], removed: set[str],
    before: Iterable[str],
) -> pl.DataFrame:  # fmt: skip
    """The key index after ``changed`` days were (re)written and ``removed`` days went away
    (``before``: the days ``old`` was built from; a new day is on no old key's list).

    Only keys with a row on one of those days are looked at; the others keep their row, and
    a key whose text is known (unchanged latest row) keeps its hashes and current shard.
    """
    fresh = _latest(_day_rows(store, version, changed))
    if old is None:
        index = _with_key_hashes(fresh).with_columns(
            pl.lit(None, pl.UInt64).alias("text_hash"),
            pl.lit(None, pl.UInt64).alias("doc_hash"),
            pl.lit(None, pl.Utf8).alias("path"),
        )
        return index.select(list(INDEX_SCHEMA)).cast(INDEX_SCHEMA)  # type: ignore[arg-type]
    gone = sorted((changed | removed) & set(before))
    marked = old.join(fresh.select(_KEYS).with_columns(_fresh=pl.lit(True)), on=_KEYS, how="left")
    hit = pl.col("_fresh").fill_null(False)
    if gone:  # rewritten or removed old days: every key listed on one of them is looked at
        hit = hit | pl.col("days").list.eval(pl.element().is_in(gone)).list.any()
    untouched = marked.filter(~hit).drop("_fresh")
    affected = (
        marked.filter(hit).drop("_fresh").join(fresh, on=_KEYS, how="full", coalesce=True, suffix="_new")
    )
    rows: list[dict] = []
    reverts: dict[str, list[int]] = {}
    for r in affected.iter_rows(named=True):
        days = sorted(
            {d for d in (r["days"] or ()) if d not in changed and d not in removed} | set(r["days_new"] or ())
        )
        if not days:
            continue  # the key is on no day any more
        out = {"source": r["source"], "id": r["id"], "days": days, "first_day": days[0], "last_day": days[-1],
               "u": r["u"], "text_hash": None, "doc_hash": None, "path": None}  # fmt: skip
        if days[-1] in changed:
            out.update({c: r[f"{c}_new"] for c in _ATTRS})
        elif days[-1] == r["last_day"]:  # the same latest row: text known, in the current release
            out.update({c: r[c] for c in _ATTRS})
            out.update(text_hash=r["text_hash"], path=r["path"])
            if days[0] == r["first_day"]:
                out["doc_hash"] = r["doc_hash"]
        else:  # its latest day went away: an older day's row counts again
            reverts.setdefault(days[-1], []).append(len(rows))
        rows.append(out)
    if reverts:
        back = _day_rows(store, version, reverts)
        found = {(x["source"], x["id"], x["date"]): x for x in back.iter_rows(named=True)}
        for day, positions in reverts.items():
            for i in positions:
                row = found[(rows[i]["source"], rows[i]["id"], day)]
                rows[i].update({c: row[c] for c in _ATTRS})
    updated = pl.DataFrame(rows, schema=INDEX_SCHEMA, orient="row") if rows else _empty(INDEX_SCHEMA)
    missing = updated.filter(pl.col("u").is_null())
    if missing.height:
        updated = pl.concat(
            [
                updated.filter(pl.col("u").is_not_null()),
                _with_key_hashes(missing.drop("u")).select(list(INDEX_SCHEMA)),
            ]
        )
    index = pl.concat([untouched.select(list(INDEX_SCHEMA)).cast(INDEX_SCHEMA), updated.cast(INDEX_SCHEMA)])  # type: ignore[arg-type]
    return _fill_doc_hashes(index, version)


def _fill_doc_hashes(index: pl.DataFrame, version: str) -> pl.DataFrame:
    """``doc_hash`` of every key whose text hash is known and whose doc hash is not."""
    todo = pl.col("doc_hash").is_null() & pl.col("text_hash").is_not_null()
    part = index.filter(todo)
    if not part.height:
        return index
    hashes = [
        _doc_hash(version, s, i, f, c, t)
        for s, i, f, c, t in part.select("source", "id", "first_day", "created", "text_hash").iter_rows()
    ]
    return pl.concat([index.filter(~todo), part.with_columns(pl.Series("doc_hash", hashes, pl.UInt64))])


def _chunk_target(total: int, settings: ReleaseSettings) -> int:
    per = max(1, total // CHUNKS_PER_STREAM)
    return max(settings.min_chunk_bytes, min(settings.chunk_bytes, 1 << (per.bit_length() - 1)))


# What the layout's readers need (the signatures, the tasks, the counts, each key's shard: its
# row in the index is _row)
_LAYOUT_COLUMNS = ("_row", "split", "source", "id", "first_day", "last_day", "created", "words", "weight", "u",
                   "text_hash", "doc_hash", "path")  # fmt: skip


def _layout(index: pl.DataFrame, settings: ReleaseSettings) -> pl.DataFrame:
    """Every released document with its split and shard (``stem``), in release order."""
    cutoff = dt.date.fromisoformat(settings.cutoff)
    docs = (
        index.with_row_index("_row")
        .filter(pl.col("keep") & pl.col("created_date").is_not_null() & (pl.col("created_date") <= cutoff))
        .with_columns(
            pl.when(pl.col("created_date") >= _valid_start(cutoff))
            .then(pl.lit("valid"))
            .otherwise(pl.lit("train"))
            .alias("split"),
            (pl.col("words").fill_null(0).clip(0) * WORD_BYTES + LINE_OVERHEAD).alias("weight"),
        )
        .select(*_LAYOUT_COLUMNS)
    )
    # (split, source, first_day, id) order by one string: the fields joined by a byte below any
    # of their characters sort as the tuple does, and one column sorts ~2x faster than four
    order = pl.concat_str("split", "source", "first_day", "id", separator="\x00")
    docs = docs.sort(order)
    parts = []
    for (split, source), g in docs.group_by(["split", "source"], maintain_order=True):
        target = _chunk_target(int(g["weight"].sum()), settings)
        scale = (1 << 64) // target
        starts = (pl.col("weight") >= target) | (
            pl.col("u") < pl.col("weight").clip(0, target - 1).cast(pl.UInt64) * pl.lit(scale, pl.UInt64)
        )
        g = g.with_columns(starts.cum_sum().alias("_chunk"))
        g = g.with_columns(
            (
                (pl.col("weight").cum_sum() - pl.col("weight")).over("_chunk") // settings.max_shard_bytes
            ).alias("_part")
        )
        new_file = (pl.col("_chunk") != pl.col("_chunk").shift(1)) | (
            pl.col("_part") != pl.col("_part").shift(1)
        )
        number = new_file.fill_null(True).cum_sum() - 1
        g = g.with_columns(
            pl.format("{}/{}-{}", pl.lit(split), pl.lit(source), number.cast(pl.Utf8).str.zfill(5)).alias(
                "stem"
            )
        )
        parts.append(g.drop("_chunk", "_part"))
    return pl.concat(parts) if parts else docs.with_columns(pl.lit(None, pl.Utf8).alias("stem"))


def _signatures(layout: pl.DataFrame, tag: bytes) -> dict[str, str]:
    """The signature of every shard whose documents' hashes are all known: what it holds."""
    known = layout.group_by("stem", maintain_order=True).agg(
        pl.col("doc_hash").null_count().alias("n"), pl.col("doc_hash")
    )
    out = {}
    for stem, n, hashes in known.iter_rows():
        if n == 0:
            out[stem] = _signature(tag, np.asarray(hashes, dtype=">u8").tobytes())
    return out


def _signature(tag: bytes, doc_hashes: bytes) -> str:
    return hashlib.blake2b(tag + b"\0" + doc_hashes, digest_size=16).hexdigest()


@dataclass
class Plan:
    """What :func:`plan_release` decided; :func:`build_task` and :func:`commit_release` read it
    from ``work`` (a directory next to the release), so tasks can run in other processes."""

    home: str
    version: str
    settings: dict
    mode: str  # full | incremental | unchanged
    work: str
    staging: str
    tasks: int
    summary: dict = field(default_factory=dict)  # the current manifest when unchanged

    def save(self) -> None:
        atomic_write_bytes(Path(self.work) / "plan.json", json.dumps(self.__dict__).encode())

    @classmethod
    def load(cls, work: str | Path) -> Plan:
        return cls(**json.loads((Path(work) / "plan.json").read_text(encoding="utf-8")))


def _settings_from(d: Mapping[str, Any]) -> ReleaseSettings:
    return ReleaseSettings(**{k: d[k] for k in ReleaseSettings.__dataclass_fields__ if k in d})


def _state_paths(home: str | Path, version: str) -> tuple[Path, Path]:
    root = state_dir(home, STATE) / version
    return root, root / "lock"


_PATCH_SCHEMA: dict[str, Any] = {
    "source": pl.Utf8,
    "id": pl.Utf8,
    "text_hash": pl.UInt64,
    "doc_hash": pl.UInt64,
}


def _read_index(root: Path, state: dict) -> pl.DataFrame:
    """The key index a state names, with its patch (the hashes its commit learnt) applied."""
    path = root / state["index"]  # Arrow IPC (format 3) or Parquet (format 2)
    index = pl.read_ipc(path, memory_map=False) if path.suffix == ".arrow" else pl.read_parquet(path)
    index = index.cast(INDEX_SCHEMA)  # type: ignore[arg-type]
    if state.get("patch"):
        patch = pl.read_parquet(root / state["patch"]).cast(_PATCH_SCHEMA)  # type: ignore[arg-type]
        index = index.update(patch, on=_KEYS, how="left")
    return index


def _move(src: Path, dst: Path) -> None:
    """``src`` renamed to ``dst`` (copied, then synced, across file systems)."""
    try:
        os.replace(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
        with open(dst, "rb") as fh:
            os.fsync(fh.fileno())


def plan_release(home: str | Path, version: str, settings: ReleaseSettings | None = None) -> Plan:
    """Decide what a run writes (see above). Returns an ``unchanged`` plan when the days up to
    the cutoff and the settings are those of the current release: nothing is written then.
    :func:`write_release` holds a lock from plan to commit; a scheduler calling the steps itself
    must not plan a version again before the last plan of it was committed or dropped."""
    if version not in pes2o.VERSIONS:
        raise ValueError(f"unknown peS2o version {version!r}; expected one of {pes2o.VERSIONS}")
    settings = settings or ReleaseSettings()
    store = Store(Path(home))
    all_days = store.partitions(ASSET)
    if not all_days:
        raise FileNotFoundError(f"{ASSET} has no partitions under {store.home}: materialise it first")
    days = [d for d in all_days if d <= settings.cutoff]
    final = release_dir(home, version)
    root, _ = _state_paths(home, version)
    state = next(
        (s for fmt in _STATE_FORMATS if (s := load_state(root, final / "manifest.json", fmt)) is not None),
        None,
    )
    inputs = day_fingerprints(store, ASSET, days)
    old_manifest = json.loads((final / "manifest.json").read_text(encoding="utf-8")) if state else None
    if old_manifest is not None and (
        old_manifest.get("settings") != settings.layout()
        or old_manifest.get("code_version", FIRST_RECORDED["pes2o_v1"]) != PES2O_RELEASE_VERSION
    ):
        state = old_manifest = None  # other settings or another writer: built again in full
    after = len(all_days) - len(days)
    if old_manifest is not None and old_manifest.get("inputs") == inputs:
        return Plan(str(home), version, settings.__dict__, "unchanged", "", "", 0,
                    {**old_manifest, "days_after_cutoff": after, "days_changed": 0})  # fmt: skip
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{version}.work-"))
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{version}.staging-"))
    try:
        old_index = None
        if state is not None:
            try:
                old_index = _read_index(root, state)
            except (OSError, KeyError, pl.exceptions.PolarsError):
                old_index = old_manifest = None
        if old_index is None:
            changed, removed, old_inputs = set(days), set(), {}
        else:
            old_inputs = old_manifest["inputs"]
            changed = {d for d, fp in inputs.items() if old_inputs.get(d) != fp}
            removed = set(old_inputs) - set(inputs)
        index = _update_index(store, version, old_index, changed, removed, old_inputs)
        layout = _layout(index, settings)
        tag = _writer_tag(version, settings)
        sigs = _signatures(layout, tag)
        old_sigs: dict[str, str] = (state or {}).get("signatures", {}) if old_index is not None else {}
        by_sig = {s: stem for stem, s in sorted(old_sigs.items())}
        reuse = {stem: by_sig[s] for stem, s in sigs.items() if s in by_sig}
        n_tasks, dirty = _cut_tasks(layout.filter(~pl.col("stem").is_in(list(reuse))), settings, work)
        fetch = dirty.filter(pl.col("text_hash").is_null()).select("last_day", "source", "id", "_task")
        _scatter(store, version, fetch, work / "spill", "0")
        plan = Plan(str(home), version, settings.__dict__, "full" if old_index is None else "incremental",
                    str(work), str(staging), n_tasks)  # fmt: skip
        # the index as the commit leaves it: each key's shard in the new release (the tasks carry
        # the old one); the hashes the tasks compute come as the commit's patch
        path = (
            pl.repeat(None, index.height, dtype=pl.Utf8, eager=True)
            .alias("path")
            .scatter(layout["_row"], layout["stem"])
        )
        index.with_columns(path).select(list(INDEX_SCHEMA)).write_ipc(work / "index.arrow", compression="lz4")
        meta = {
            "inputs": inputs,
            "input_code_versions": input_code_versions(store, [ASSET], inputs),
            "reuse": reuse,
            "signatures": sigs,
            "old_signatures": old_sigs,
            "old_files": {f["path"]: f for f in (old_manifest or {}).get("files", [])}
            if old_index is not None
            else {},
            "tag": tag.decode(),
            "days_after_cutoff": after,
            "days_changed": len(changed) + len(removed),
            "counts": _counts(index, layout, settings),
        }
        atomic_write_bytes(work / "meta.json", json.dumps(meta).encode())
        plan.save()
        return plan
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _cut_tasks(dirty: pl.DataFrame, settings: ReleaseSettings, work: Path) -> tuple[int, pl.DataFrame]:
    """Cut the shards to build into tasks of about ``sort_bucket_bytes`` of text (whole shards,
    in release order, at most :data:`_MAX_TASKS`); write ``task-<n>.parquet`` each. Returns
    the number of tasks and ``dirty`` with its task (``_task``)."""
    if not dirty.height:
        return 0, dirty.with_columns(pl.lit(None, pl.Int64).alias("_task"))
    per_stem = dirty.group_by("stem", maintain_order=True).agg(pl.col("weight").sum())
    target = max(settings.sort_bucket_bytes, -(-int(per_stem["weight"].sum()) // _MAX_TASKS))
    task, filled, of_stem = 0, 0, {}
    for stem, weight in per_stem.iter_rows():
        if filled and filled + weight > target:
            task, filled = task + 1, 0
        of_stem[stem] = task
        filled += weight
    tasks = pl.DataFrame(
        {"stem": list(of_stem), "_task": list(of_stem.values())}, schema={"stem": pl.Utf8, "_task": pl.Int64}
    )
    joined = dirty.join(tasks, on="stem", how="left", maintain_order="left")
    for (n,), part in joined.group_by(["_task"], maintain_order=True):
        part.select(list(_TASK_SCHEMA)).cast(_TASK_SCHEMA).write_parquet(work / f"task-{n:05d}.parquet")  # type: ignore[arg-type]
    return task + 1, joined


def _scatter(store: Store, version: str, fetch: pl.DataFrame, spill: Path, tag: str) -> None:
    """The text of every ``fetch`` key (``last_day, source, id, _task``), one day partition
    read at a time, into its task's Arrow stream ``spill/task-<n>.<tag>.arrows``.

    Call it on disjoint parts of ``fetch`` with different tags to spread the reading."""
    import pyarrow as pa

    spill.mkdir(parents=True, exist_ok=True)
    sinks: dict[int, tuple[Any, pa.ipc.RecordBatchStreamWriter]] = {}
    schema = pa.schema([("source", pa.string()), ("id", pa.string()), ("text", pa.string())])
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    keep = f"{version}_keep"
    try:
        for (day,), want in fetch.group_by(["last_day"]):
            rows = (
                scan_days(
                    [_partition_file(store, day)],
                    {c: PES2O_SCHEMA[c] for c in ("source", "id", "text", keep)},
                )
                .select("source", "id", "text", pl.col(keep).alias("keep"))
                .join(want.lazy().select("source", "id", "_task"), on=_KEYS, how="inner")
                .collect()
            )
            bad = rows.filter(~pl.col("keep").fill_null(False) | pl.col("text").is_null())
            if bad.height or rows.height != want.height:
                raise RuntimeError(
                    f"{ASSET} {day} changed while the release was written (or lists a key twice); run it again"
                )
            for (task,), part in rows.group_by(["_task"]):
                if task not in sinks:
                    sink = pa.OSFile(str(spill / f"task-{task:05d}.{tag}.arrows"), "wb")
                    sinks[task] = (sink, pa.ipc.new_stream(sink, schema, options=options))
                sinks[task][1].write_table(part.select("source", "id", "text").to_arrow().cast(schema))
            del rows
    finally:
        for sink, writer in sinks.values():
            writer.close()
            sink.close()


@functools.cache
def _spilled_texts(work: Path, task: int) -> dict[tuple[str, str], str]:
    """The texts the plan read from the days for ``task`` (its new or changed documents)."""
    import pyarrow as pa

    texts: dict[tuple[str, str], str] = {}
    for path in sorted((work / "spill").glob(f"task-{task:05d}.*.arrows")):
        with pa.OSFile(str(path), "rb") as fh:
            table = pa.ipc.open_stream(fh).read_all()
        texts.update(zip(zip(table["source"].to_pylist(), table["id"].to_pylist(), strict=True),
                         table["text"].to_pylist(), strict=True))  # fmt: skip
        del table
    return texts


def sign_task(work: str | Path, task: int, texts: dict[tuple[str, str], str] | None = None) -> dict:
    """The signature of each shard of one task, from the hashes the index knows and those of
    the texts the plan spilled (no shard of the current release is read): a shard that holds
    the documents of a current one is linked to it, the others are left to
    :func:`build_task`. Writes ``hashes-<task>`` (the commit's patch) and ``signed-<task>``;
    returns the latter: ``{"linked": [...], "write": [stems], "write_bytes": estimated}``.
    ``texts``: the task's spilled texts, when the caller has read them already."""
    work = Path(work)
    plan = Plan.load(work)
    meta = json.loads((work / "meta.json").read_text(encoding="utf-8"))
    tag = meta["tag"].encode()
    by_sig = {s: stem for stem, s in sorted(meta.get("old_signatures", {}).items())}
    keys = pl.read_parquet(work / f"task-{task:05d}.parquet")
    texts = _spilled_texts(work, task) if texts is None else texts
    new = keys.filter(pl.col("text_hash").is_null() | pl.col("doc_hash").is_null())
    fills = []  # hashes computed here: only of the documents whose text or first day is new
    for source, pid, first_day, created, known in new.select(
        "source", "id", "first_day", "created", "text_hash"
    ).iter_rows():
        th = known if known is not None else _text_hash(texts[(source, pid)])
        fills.append((source, pid, th, _doc_hash(plan.version, source, pid, first_day, created, th)))
    schema = {"source": pl.Utf8, "id": pl.Utf8, "text_hash": pl.UInt64, "doc_hash": pl.UInt64}
    keys = keys.update(pl.DataFrame(fills, schema=schema, orient="row"), on=_KEYS, how="left")
    linked, write = [], []
    write_bytes = 0
    per_stem = keys.group_by("stem", maintain_order=True).agg(pl.col("doc_hash"), pl.col("weight").sum())
    for stem, doc_hashes, weight in per_stem.iter_rows():
        sig = _signature(tag, np.asarray(doc_hashes, dtype=">u8").tobytes())
        if sig in by_sig:
            linked.append({"stem": stem, "signature": sig, "linked": by_sig[sig]})
        else:
            write.append({"stem": stem, "signature": sig})
            write_bytes += int(weight)
    frame = keys.select(list(schema))
    frame.write_parquet(work / f"hashes-{task:05d}.parquet")
    out = {"task": task, "linked": linked, "write": write, "write_bytes": write_bytes}
    atomic_write_bytes(work / f"signed-{task:05d}.json", json.dumps(out).encode())
    return out


def build_task(work: str | Path, task: int) -> dict:
    """Write the shards of one task that no current shard holds into the staging directory (after
    :func:`sign_task`, run here if it was not); link the others. Reads only files: run it anywhere."""
    import pyarrow.parquet as pq

    work = Path(work)
    plan = Plan.load(work)
    settings = _settings_from(plan.settings)
    final = release_dir(plan.home, plan.version)
    staging = Path(plan.staging)
    signed_path = work / f"signed-{task:05d}.json"
    texts = None if signed_path.exists() else _spilled_texts(work, task)  # read once in a full build
    signed = sign_task(work, task, texts) if texts is not None else json.loads(signed_path.read_text("utf-8"))
    files = []
    for f in signed["linked"]:
        for ext in ("jsonl.gz", "parquet"):
            link_or_copy(final / f"{f['linked']}.{ext}", staging / f"{f['stem']}.{ext}")
        files.append(f)
    if signed["write"]:
        stems = {f["stem"]: f["signature"] for f in signed["write"]}
        keys = pl.read_parquet(work / f"task-{task:05d}.parquet").filter(pl.col("stem").is_in(list(stems)))
        # every document's hashes (sign_task computed those of new texts): the members' digests
        hashes = pl.read_parquet(work / f"hashes-{task:05d}.parquet", columns=[*_KEYS, "doc_hash"])
        keys = keys.update(hashes, on=_KEYS, how="left")  # text_hash stays null for the texts read below
        if keys["doc_hash"].null_count():
            raise RuntimeError(f"task {task}: a document to write has no hash (sign_task did not run?)")
        texts = _spilled_texts(work, task) if texts is None else texts
        reuse: dict[bytes, bytes] = {}  # the gzip members of the shards read: copied where unchanged
        for (old,), group in keys.filter(pl.col("text_hash").is_not_null()).group_by(["path"]):
            if old is None:
                raise RuntimeError(
                    f"task {task}: a document with a known text has no shard in the current release"
                )
            want = set(zip(group["source"].to_list(), group["id"].to_list(), strict=True))
            # ParquetFile, not read_table: read_table imports pyarrow.dataset and pandas (~0.5 CPU s)
            table = pq.ParquetFile(final / f"{old}.parquet").read(columns=["source", "id", "text"])
            for s, i, t in zip(
                table["source"].to_pylist(), table["id"].to_pylist(), table["text"].to_pylist(), strict=True
            ):
                if (s, i) in want:
                    texts[(s, i)] = t
            if not want <= texts.keys():
                raise RuntimeError(
                    f"{final / old}.parquet lacks documents its state lists: the release was changed"
                )
            reuse.update(members_of(final / f"{old}.jsonl.gz"))
        for (stem,), group in keys.group_by(["stem"], maintain_order=True):
            docs = [{"added": timestamp(dt.date.fromisoformat(first_day)), "created": created, "id": pid,
                     "source": source, "text": texts[(source, pid)], "version": plan.version}
                    for source, pid, first_day, created in group.select(
                        "source", "id", "first_day", "created").iter_rows()]  # fmt: skip
            shard = _write_shard(staging, stem, docs, group["doc_hash"].to_list(), group["weight"].to_list(),
                                 settings.compresslevel, settings.row_group_docs, reuse)  # fmt: skip
            files.append({"stem": stem, "signature": stems[stem], **shard})
    out = {"task": task, "files": files}
    atomic_write_bytes(work / f"result-{task:05d}.json", json.dumps(out).encode())
    return out


def commit_release(plan: Plan) -> dict:
    """Link the reused shards, write manifest, card and state, and swap the version in."""
    if plan.mode == "unchanged":
        return {**plan.summary, "mode": "unchanged", "shards_written": 0, "shards_reused": 0}
    work, staging = Path(plan.work), Path(plan.staging)
    settings = _settings_from(plan.settings)
    final = release_dir(plan.home, plan.version)
    meta = json.loads((work / "meta.json").read_text(encoding="utf-8"))
    old_files = meta["old_files"]
    entries: list[dict] = []
    sigs = dict(meta["signatures"])
    written = 0

    def carry(stem: str, old_stem: str) -> None:
        for ext, kind in (("jsonl.gz", "jsonl"), ("parquet", "parquet")):
            entry = old_files.get(f"{old_stem}.{ext}")
            if entry is None:
                raise RuntimeError(f"{old_stem}.{ext} is not in the current manifest")
            entries.append({**entry, "path": f"{stem}.{ext}", "format": kind})

    for stem, old_stem in meta["reuse"].items():
        for ext in ("jsonl.gz", "parquet"):
            link_or_copy(final / f"{old_stem}.{ext}", staging / f"{stem}.{ext}")
        carry(stem, old_stem)
    hashes = []
    for task in range(plan.tasks):
        result = json.loads((work / f"result-{task:05d}.json").read_text(encoding="utf-8"))
        for f in result["files"]:
            sigs[f["stem"]] = f["signature"]
            if "linked" in f:
                carry(f["stem"], f["linked"])
            else:
                entries += [f["jsonl"], f["parquet"]]
                written += 1
        hashes.append(pl.read_parquet(work / f"hashes-{task:05d}.parquet"))
    for split in SPLITS:
        (staging / split).mkdir(parents=True, exist_ok=True)  # present even when empty
    summary = _summary(plan.version, settings, meta, entries)
    (staging / "manifest.json").write_text(
        json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    write_card(staging, pes2o_card(summary))  # synced; the new shards were synced when written
    with open(staging / "manifest.json", "rb") as fh:
        os.fsync(fh.fileno())
    swap_dir(staging, final)
    root, _ = _state_paths(plan.home, plan.version)
    token = manifest_sha256(final / "manifest.json")[:16]
    name, patch = f"index-{token}.arrow", f"patch-{token}.parquet"
    root.mkdir(parents=True, exist_ok=True)
    patch_rows = pl.concat(hashes) if hashes else _empty(_PATCH_SCHEMA)
    if plan.mode == "full":  # every hash is new: folded in here, not by every later run
        index = pl.read_ipc(work / "index.arrow", memory_map=False).update(patch_rows, on=_KEYS, how="left")
        index.write_ipc(root / name, compression="lz4")
        patch = None
    else:
        _move(work / "index.arrow", root / name)  # written whole by the plan, not read again here
        patch_rows.write_parquet(root / patch)
    save_state(root, final / "manifest.json", STATE_FORMAT,
               {"index": name, "patch": patch, "signatures": sigs})  # fmt: skip
    for stale in (*root.glob("index-*"), *root.glob("patch-*")):
        if stale.name not in (name, patch):
            stale.unlink(missing_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    return {**summary, "mode": plan.mode, "shards_written": written, "shards_reused": len(entries) // 2 - written,
            "days_after_cutoff": meta["days_after_cutoff"], "days_changed": meta["days_changed"]}  # fmt: skip


def _counts(index: pl.DataFrame, layout: pl.DataFrame, settings: ReleaseSettings) -> dict:
    """What the manifest's funnel and statistics need of the key index and the layout (so the
    commit reads neither): drop reasons, kept documents created after the cutoff, and documents
    and words per (source, split)."""
    cutoff = dt.date.fromisoformat(settings.cutoff)
    late = index.filter(
        pl.col("keep") & (pl.col("created_date").is_null() | (pl.col("created_date") > cutoff))
    )
    per = layout.group_by("source", "split").agg(pl.len(), pl.col("words").fill_null(0).sum())
    return {
        "reasons": [list(r) for r in index.group_by("source", "keep", "reason").len().iter_rows()],
        "after": [list(r) for r in late.group_by("source").len().iter_rows()],
        "per": [[s, sp, n, int(w)] for s, sp, n, w in per.iter_rows()],
    }


def _summary(version: str, settings: ReleaseSettings, meta: dict, entries: list[dict]) -> dict:
    """The manifest: settings, the writer's code version, input fingerprints and the code
    versions that made those days, statistics, funnel and files (all from the counts the plan
    took of the key index and the layout, so a carried-over shard is never read)."""
    counts = meta["counts"]
    reasons: dict[str, Counter] = {s: Counter() for s in SOURCES}
    for source, keep, reason, n in counts["reasons"]:
        reasons.setdefault(source, Counter())[None if keep else reason] += n
    after = {source: n for source, n in counts["after"]}
    per = {(s, sp): (n, w) for s, sp, n, w in counts["per"]}
    stats = [{"source": s, "split": sp, "documents": per.get((s, sp), (0, 0))[0], "words": int(per.get((s, sp), (0, 0))[1])}
             for s in SOURCES for sp in SPLITS]  # fmt: skip
    return {
        "format": FORMAT,
        "version": version,
        "code_version": PES2O_RELEASE_VERSION,
        "settings": settings.layout(),
        "inputs": dict(sorted(meta["inputs"].items())),
        "input_code_versions": meta["input_code_versions"],
        "stats": stats,
        "funnel": funnel_rows(reasons, after, {(s["source"], s["split"]): s["documents"] for s in stats}),
        "files": sorted(entries, key=lambda f: f["path"]),
    }


def write_release(
    home: str | Path, version: str, settings: ReleaseSettings | None = None, *, workers: int | None = None
) -> dict:
    """Bring ``releases/pes2o/<version>`` up to date with the ``pes2o`` days up to the cutoff.

    Writes only the shards whose documents changed (a full build when there is no usable
    previous release); the result is byte-identical to a full build. ``workers`` > 1 runs the
    build tasks in that many processes (default: one per CPU when there are several large
    tasks). Returns (and writes as ``manifest.json``) ``{format, version, settings, inputs,
    stats, funnel, files}`` plus, not written, ``mode``, ``shards_written``, ``shards_reused``,
    ``days_changed`` and ``days_after_cutoff``.
    """
    _, lock = _state_paths(home, version)
    with locked(lock):
        plan = plan_release(home, version, settings)
        if plan.mode == "unchanged":
            return commit_release(plan)
        try:
            _run_tasks(plan, workers)
            return commit_release(plan)
        except BaseException:
            shutil.rmtree(plan.work, ignore_errors=True)
            shutil.rmtree(plan.staging, ignore_errors=True)
            raise


def _memory_available() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 4 << 30


def auto_workers(tasks: int, settings: ReleaseSettings) -> int:
    """Build processes for ``tasks``: one per CPU this process may use, as many as the available
    memory holds at ~4x ``sort_bucket_bytes`` each (a task's text as str, Arrow and JSON)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    by_memory = max(1, _memory_available() // (4 * settings.sort_bucket_bytes))
    return max(1, min(cpus, tasks, by_memory))


def _run_tasks(plan: Plan, workers: int | None) -> None:
    """Build every task. An incremental run signs its tasks here first (hashing only the new
    texts): most shards it touches hold the same documents as before and are linked, so build
    processes start only for what is left to write, and only when it is worth their start-up."""
    tasks = list(range(plan.tasks))
    if plan.mode == "incremental":
        signed = [sign_task(plan.work, task) for task in tasks]
        small = workers is None and sum(s["write_bytes"] for s in signed) < SPAWN_BYTES
        tasks = [s["task"] for s in signed if s["write"] and not small]
        for task in sorted(set(range(plan.tasks)) - set(tasks)):
            build_task(plan.work, task)
    if workers is None:
        workers = auto_workers(len(tasks), _settings_from(plan.settings)) if len(tasks) > 1 else 1
    if workers <= 1 or len(tasks) <= 1:
        for task in tasks:
            build_task(plan.work, task)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        list(pool.map(build_task, [plan.work] * len(tasks), tasks))
