"""What the CiteWorth release keeps between runs, laid out so that a new day costs its own size.

:mod:`corpus.release.citeworth_release` builds the release; this module keeps its state under
``$CORPUS_HOME/.index/citeworth_release*/`` (every file named in ``state.json``, which is
replaced last, so a run that stops half-way leaves the previous state whole):

* ``keys-<day>-<tag>.parquet``, one per day: the key, field, hash and split of each kept
  paragraph of that day (hashed once, when the day is first read; ``tag`` names the day's
  content and the seed, so a re-materialised day gets a new file, never an overwritten one);
* ``papers``: one row per (paper, day it was processed on, field) with its kept paragraphs'
  count, so a new day finds its papers' older days and the per-field counts move by what the
  day changed (the counts themselves are in ``state.json``);
* ``cand``: the *candidates*, every available paragraph whose hash is at or below its field's
  threshold (all of a field's paragraphs when it has no threshold), in (paper_id,
  section_index) order, with the byte length, digest and Table 2 numbers of its line and
  whether it is released. The released ones are at most the cap per field, the others (the
  *pool*, a margin above the cap) have their line in a pool file at ``pool_offset``;
* ``pool-<tag>.bin``: pool lines, appended per run, rewritten as one when mostly stale.

A field whose candidates no longer cover its cap is *refilled* from every day's key file (paid
once per margin's worth of growth); one far beyond it is trimmed back to the margin.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from corpus.papers.fields import CITEWORTH_FIELDS
from corpus.release import citeworth as cw
from corpus.release import citeworth_splits as cws
from corpus.store import Store, atomic_path, atomic_write_bytes, scan_days

STATE_FORMAT = 4  # of state.json: another format is rebuilt in full (4: keys by day, candidates, pool files)
_U32 = "<u4"
POOL_MARGIN = 0.25  # the candidates hold each capped field's next 25 % of paragraphs beyond the cap
_POOL_TRIM = 3 * POOL_MARGIN  # candidates this far beyond the cap are cut back to the margin
KEYS = ["paper_id", "section_index"]
LINE_KEYS = [*KEYS, "date"]

KEY_SCHEMA: dict[str, Any] = {
    "paper_id": pl.Utf8,
    "section_index": pl.Int64,
    "field": pl.Utf8,
    "date": pl.Utf8,
    "n_sentences": pl.Int64,
    "n_cite_worthy": pl.Int64,
    "h": pl.UInt64,  # balance hash of seed|paper_id|section_index
    "split": pl.Utf8,
}
PAPER_SCHEMA: dict[str, Any] = {"paper_id": pl.Utf8, "date": pl.Utf8, "field": pl.Utf8, "n": pl.Int64}
LINE_COLUMNS = ["length", "digest", "tokens", "cite", "lengths", "markers"]
CHOSEN_SCHEMA: dict[str, Any] = {
    **KEY_SCHEMA,
    "length": pl.Int64,  # bytes of its line in <split>.jsonl (null: the line is not read yet)
    "digest": pl.Binary,  # BLAKE2b-128 of its line (split_digest)
    "tokens": pl.Int64,
    "cite": pl.Int64,
    "lengths": pl.Binary,  # character length of each released sentence, little-endian uint32s
    "markers": pl.Utf8,  # JSON list of each sentence's leftover citation marker (null: none has one)
}
CAND_SCHEMA: dict[str, Any] = {
    **CHOSEN_SCHEMA,
    "chosen": pl.Boolean,  # released (its line is in <split>.jsonl)
    "pool": pl.Utf8,  # else the pool file holding its line
    "pool_offset": pl.Int64,
}


def empty(schema: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def scan(path: Path, schema: dict[str, Any]) -> pl.LazyFrame:
    """A state table (Arrow IPC or Parquet) as a lazy frame: a query of a few columns reads only those."""
    frame = pl.scan_ipc(path, memory_map=False) if path.suffix == ".arrow" else pl.scan_parquet(path)
    return frame.cast(schema)  # type: ignore[arg-type]


def read(path: Path, schema: dict[str, Any]) -> pl.DataFrame:
    return scan(path, schema).collect()


def write(frame: pl.DataFrame, path: Path) -> None:
    """``frame`` to ``path`` through a temporary name: Arrow IPC, uncompressed, for the tables
    written whole every run (4x faster to write than LZ4 Parquet), else LZ4 Parquet."""
    with atomic_path(path) as tmp:
        if path.suffix == ".arrow":
            frame.rechunk().write_ipc(
                tmp, compression="uncompressed"
            )  # one record batch: read back in one piece
        else:
            frame.write_parquet(tmp, compression="lz4")


def _files(store: Store, asset: str, days: list[str]) -> list[Path]:
    return [store.partition_dir(asset, d) / "part-0.parquet" for d in days if store.has_partition(asset, d)]


def candidate_days(store: Store, days: list[str]) -> pl.DataFrame:
    """``paper_id, date`` of every paper processed on ``days``."""
    files = _files(store, cw.CANDIDATES, days)
    if not files:
        return pl.DataFrame(schema={"paper_id": pl.Utf8, "date": pl.Utf8})
    return scan_days(files, {"paper_id": pl.Utf8}, hive=True).select("paper_id", "date").unique().collect()


def kept_keys(store: Store, day: str, seed: int) -> pl.DataFrame:
    """The kept paragraph keys of ``day`` (:data:`KEY_SCHEMA`, in key order), hashed."""
    files = _files(store, cw.PARAGRAPHS, [day])
    if not files:
        return empty(KEY_SCHEMA)
    columns = ("paper_id", "section_index", "field", "kept", "n_sentences", "n_cite_worthy")
    keys = (
        scan_days(files, {c: cw.PARAGRAPH_SCHEMA[c] for c in columns}, hive=True)
        .filter(pl.col("kept"))
        .select("paper_id", "section_index", "field", "date", "n_sentences", "n_cite_worthy")
        .collect()
        .sort(KEYS)
    )
    bad = keys.filter(~pl.col("field").is_in(CITEWORTH_FIELDS))
    if bad.height:
        row = bad.row(0, named=True)
        raise ValueError(f"row {row['paper_id']!r}/{row['section_index']!r} has field {row['field']!r}")
    ids, idx = keys["paper_id"].to_list(), keys["section_index"].to_list()
    hashes = [cws._hash_int(f"{seed}|{p}|{i}") for p, i in zip(ids, idx, strict=True)]
    splits = {p: cw.split_for(p) for p in set(ids)}
    return keys.with_columns(
        pl.Series("h", hashes, pl.UInt64), pl.Series("split", [splits[p] for p in ids], pl.Utf8)
    ).select(list(KEY_SCHEMA))


def key_file_name(day: str, fingerprint: str, seed: int) -> str:
    return f"keys-{day}-{hashlib.sha256(f'{fingerprint}|{seed}'.encode()).hexdigest()[:16]}.parquet"


def _latest(rows: pl.DataFrame) -> pl.DataFrame:
    """Rows of each paper's latest day (one per field that day has)."""
    return rows.filter(pl.col("date") == pl.col("date").max().over("paper_id"))


def _counts(rows: pl.DataFrame) -> dict[str, int]:
    per = rows.filter(pl.col("n") > 0).group_by("field").agg(pl.col("n").sum())
    return {f: int(n) for f, n in per.iter_rows()}


def update_papers(
    store: Store, papers: pl.DataFrame, fresh_keys: dict[str, pl.DataFrame], gone: set[str]
) -> tuple[pl.DataFrame, pl.Series, pl.DataFrame, dict[str, int]]:
    """After the days in ``fresh_keys`` were (re)written and the days in ``gone`` (those and the
    removed ones) left: the papers table, the papers whose live paragraphs may have changed
    (every paper on those days), their live ``paper_id, date`` now, and the per-field change of
    the available count. Only the papers of those days are looked at."""
    fresh = candidate_days(store, sorted(fresh_keys))
    counted = [
        k.group_by("paper_id", "date", "field").agg(pl.len().cast(pl.Int64).alias("n"))
        for k in fresh_keys.values()
        if k.height
    ]
    per_paper = pl.concat(counted) if counted else empty(PAPER_SCHEMA)
    fresh = fresh.join(per_paper, on=["paper_id", "date"], how="left").with_columns(pl.col("n").fill_null(0))
    hit = pl.col("paper_id").is_in(fresh["paper_id"].implode()) | pl.col("date").is_in(sorted(gone))
    affected = pl.concat([papers.filter(hit)["paper_id"], fresh["paper_id"]]).unique()
    mine = papers["paper_id"].is_in(affected.implode())
    old_rows = papers.filter(mine)
    new_rows = pl.concat(
        [old_rows.filter(~pl.col("date").is_in(sorted(gone))), fresh.select(list(PAPER_SCHEMA))]
    )
    papers = pl.concat([papers.filter(~mine), new_rows])
    old_live, new_live = _latest(old_rows), _latest(new_rows)
    delta = {f: n for f, n in _counts(new_live).items()}
    for f, n in _counts(old_live).items():
        delta[f] = delta.get(f, 0) - n
    live = new_live.filter(pl.col("n") > 0).select("paper_id", "date").unique()
    return papers, affected, live, delta


def live_keys(
    root: Path, day_files: dict[str, str], fresh_keys: dict[str, pl.DataFrame], live: pl.DataFrame,
    thresholds: dict[str, int],
) -> pl.DataFrame:  # fmt: skip
    """The kept paragraph keys of the papers in ``live`` (``paper_id, date``), from that day's keys,
    at or below their field's threshold (:func:`below`, applied a day at a time)."""
    parts = []
    for (day,), want in live.group_by(["date"]):
        keys = fresh_keys[day] if day in fresh_keys else read(root / day_files[day], KEY_SCHEMA)
        parts.append(below(keys.join(want, on=["paper_id", "date"], how="semi"), thresholds))
    return pl.concat(parts).sort(KEYS) if parts else empty(KEY_SCHEMA)


def first_thresholds(fresh_keys: dict[str, pl.DataFrame], live: pl.DataFrame, cap: int) -> dict[str, int]:
    """A full build's thresholds, before any candidate is made: for each field with more live
    keys than the margin, the hash of its margin-th key in :func:`ranked` order, which is what
    :func:`refill`'s trim would cut it at; so a full build never holds every key as a candidate
    (4.5 GB at 2,400 days), only the keys' narrow columns."""
    margin = math.ceil(cap * (1 + POOL_MARGIN)) + 16
    narrow = [k.select("field", "h", *KEYS, "date") for k in fresh_keys.values()]
    if not narrow:
        return {}
    keys = pl.concat(narrow).join(live, on=["paper_id", "date"], how="semi")
    cut = (
        keys.sort("field", "h", *KEYS)
        .group_by("field", maintain_order=True)
        .agg(pl.len().alias("n"), pl.col("h").get(min(margin, keys.height) - 1, null_on_oob=True).alias("t"))
        .filter(pl.col("n") > margin)
    )
    return {f: int(t) for f, t in cut.select("field", "t").iter_rows()}


def below(keys: pl.DataFrame, thresholds: dict[str, int]) -> pl.DataFrame:
    """``keys`` at or below their field's threshold (all of a field without one)."""
    if not thresholds:
        return keys
    limit = pl.DataFrame(
        {"field": list(thresholds), "_t": list(thresholds.values())},
        schema={"field": pl.Utf8, "_t": pl.UInt64},
    )
    return (
        keys.join(limit, on="field", how="left", maintain_order="left")
        .filter(pl.col("_t").is_null() | (pl.col("h") <= pl.col("_t")))
        .drop("_t")
    )


def as_candidates(keys: pl.DataFrame) -> pl.DataFrame:
    """Keys as candidate rows whose line is not read yet."""
    return (
        keys.with_columns(
            *(pl.lit(None, CAND_SCHEMA[c]).alias(c) for c in CAND_SCHEMA if c not in KEY_SCHEMA)
        )
        .with_columns(pl.lit(False).alias("chosen"))
        .select(list(CAND_SCHEMA))
    )


def refill(
    root: Path, day_files: dict[str, str], papers: pl.DataFrame, cand: pl.DataFrame,
    thresholds: dict[str, int], available: dict[str, int], cap: int,
) -> tuple[pl.DataFrame, dict[str, int], list[str]]:  # fmt: skip
    """The candidates, thresholds and refilled fields after refilling each field whose candidates no longer
    cover its ``min(cap, available)`` smallest hashes (from every day's keys: the only step that
    reads them all), then trimming each field far beyond the cap back to the margin."""
    have = dict(cand.group_by("field").len().iter_rows())
    short = [f for f in thresholds if have.get(f, 0) < min(cap, available.get(f, 0))]
    thresholds = dict(thresholds)
    if short:
        latest = _latest(papers).filter(pl.col("n") > 0).select("paper_id", "date").unique()
        files = [root / day_files[d] for d in sorted(day_files)]
        more = (
            pl.scan_parquet(files, schema=KEY_SCHEMA)
            .filter(pl.col("field").is_in(short))
            .join(
                pl.LazyFrame(
                    {"field": short, "_t": [thresholds[f] for f in short]},
                    schema={"field": pl.Utf8, "_t": pl.UInt64},
                ),
                on="field",
            )  # fmt: skip
            .filter(pl.col("h") > pl.col("_t"))
            .drop("_t")
            .join(latest.lazy(), on=["paper_id", "date"], how="semi")
            .collect()
        )
        for f in short:
            del thresholds[f]
        cand = pl.concat([cand, as_candidates(more)]).sort(KEYS)
        have = dict(cand.group_by("field").len().iter_rows())
    margin = math.ceil(cap * (1 + POOL_MARGIN)) + 16
    trim = [
        f for f, n in have.items() if n > margin and (f not in thresholds or n > cap * (1 + _POOL_TRIM) + 16)
    ]
    if trim:
        cut = ranked(cand).filter(pl.col("field").is_in(trim) & (pl.col("_rank") == margin))
        thresholds.update({f: int(h) for f, h in cut.select("field", "h").iter_rows()})
        cand = below(cand, thresholds)
    return cand, thresholds, short


def ranked(keys: pl.DataFrame) -> pl.DataFrame:
    """``keys`` (in (paper_id, section_index) order) with ``_rank``: 1-based, per field, by
    (h, paper_id, section_index); an ordinal rank breaks ties of ``h`` by row order, which is
    that key order."""
    return keys.with_columns(pl.col("h").rank("ordinal").over("field").cast(pl.Int64).alias("_rank"))


def read_at(root: Path, rows: pl.DataFrame, file: str, offset: str) -> list[bytes]:
    """The bytes at each row's (``file``, ``offset``, ``length``), in row order."""
    out: list[bytes] = [b""] * rows.height
    frame = rows.select(pl.col(file).alias("_f"), pl.col(offset).alias("_o"), "length").with_row_index("_i")
    for (name,), part in frame.group_by(["_f"]):
        with open(root / name, "rb") as fh:
            for i, at, length in part.select("_i", "_o", "length").sort("_o").iter_rows():
                fh.seek(at)
                out[i] = fh.read(length)
                if len(out[i]) != length:
                    raise OSError(f"{root / name} ended early")
    return out


def copy_range(src: Any, dst: Any, offset: int, count: int) -> None:
    """``count`` bytes of ``src`` from ``offset`` appended to ``dst`` (in the kernel where it can;
    ``dst`` holds no buffered bytes)."""
    while count > 0:
        try:
            n = os.copy_file_range(src.fileno(), dst.fileno(), count, offset)
        except (AttributeError, OSError):
            src.seek(offset)
            n = dst.write(src.read(min(count, 1 << 24)))
        if n <= 0:
            raise OSError(f"{getattr(src, 'name', src)} ended early")
        offset += n
        count -= n


def byte_runs(rows: pl.DataFrame, file: str, offset: str) -> pl.DataFrame:
    """``rows``' (``file``, ``offset``, ``length``) ranges, in row order, merged where one ends
    where the next starts in the same file: ``_f, _o, length`` per run (a run of lines, one copy)."""
    follows = (pl.col(file) == pl.col(file).shift(1)) & (
        pl.col(offset) == (pl.col(offset) + pl.col("length")).shift(1)
    )
    return (
        rows.select(file, offset, "length")
        .with_columns((~follows).fill_null(True).cum_sum().alias("_run"))
        .group_by("_run", maintain_order=True)
        .agg(pl.col(file).first().alias("_f"), pl.col(offset).first().alias("_o"), pl.col("length").sum())
        .drop("_run")
    )


def copy_at(root: Path, rows: pl.DataFrame, file: str, offset: str, path: Path) -> list[int]:
    """The bytes at each row's (``file``, ``offset``, ``length``) (files under ``root``), in row
    order, into a new file ``path``; their offsets there. Streamed: memory does not grow with
    the bytes (a full build's pool is a quarter of its released lines)."""
    lengths = rows["length"]
    offsets = (lengths.cum_sum() - lengths).to_list()
    with atomic_path(path) as tmp, open(tmp, "wb", buffering=0) as dst:
        handles: dict[str, Any] = {}
        try:
            for name, at, count in byte_runs(rows, file, offset).iter_rows():
                if name not in handles:
                    handles[name] = open(root / name, "rb")  # noqa: SIM115 (closed below)
                copy_range(handles[name], dst, at, count)
        finally:
            for fh in handles.values():
                fh.close()
        os.fsync(dst.fileno())
    return offsets


def write_pool(path: Path, lines: list[bytes]) -> list[int]:
    """``lines`` to a new pool file; their offsets."""
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line)
    atomic_write_bytes(path, b"".join(lines))
    return offsets


def pack_lengths(lengths: list[int]) -> bytes:
    return np.asarray(lengths, dtype=_U32).tobytes()


def table_2_add(acc: dict, rows: pl.DataFrame, sign: int) -> dict:
    """Table 2's running numbers (sentence-length histogram, tokens, cite-worthy, sentences per
    split; as kept in ``state.json``) plus (``sign`` 1) or minus (-1) those of ``rows``."""
    hist = {int(k): v for k, v in acc.get("lengths", {}).items()}
    if rows.height:
        values, counts = np.unique(
            np.frombuffer(b"".join(rows["lengths"].to_list()), dtype=_U32), return_counts=True
        )
        for k, c in zip(values.tolist(), counts.tolist(), strict=True):
            hist[k] = hist.get(k, 0) + sign * c
    per_split = dict(acc.get("per_split", {}))
    sizes = rows.group_by("split").agg((pl.col("lengths").bin.size() // 4).sum())
    for split, n in sizes.iter_rows():
        per_split[split] = per_split.get(split, 0) + sign * int(n)
    if any(v < 0 for v in hist.values()) or any(v < 0 for v in per_split.values()):
        raise ValueError("Table 2's running numbers went below zero")
    return {
        "lengths": {str(k): v for k, v in sorted(hist.items()) if v},
        "tokens": acc.get("tokens", 0) + sign * int(rows["tokens"].sum() or 0),
        "cite": acc.get("cite", 0) + sign * int(rows["cite"].sum() or 0),
        "per_split": {k: v for k, v in sorted(per_split.items()) if v},
    }
