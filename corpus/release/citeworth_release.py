"""The CiteWorth release over every materialised day, kept up to date incrementally.

:func:`build_release` builds it. The release is
``<out>/{train,dev,test}.jsonl`` (``$CORPUS_HOME/releases/citeworth`` by default, DESIGN.md §7),
each sorted by (paper_id, section_index), plus ``manifest.json`` and a Hugging Face card
(``README.md``), and the ``citeworth_splits`` key table.

What is released (unchanged from the full build it replaces): the kept paragraphs of every
paper's *latest* day (``citeworth_candidates`` names every processed paper per day, so a paper
re-delivered without kept paragraphs drops out), balanced over the fields by
:func:`corpus.release.citeworth.balanced_keys`' rule (per field, the ``cap`` keys with the smallest hash
of ``seed|paper_id|section_index``; ``cap`` is ``per_field`` or the median of the fields'
counts) and split 80/10/10 by a hash of the paper id.

How a run stays proportional to what changed. The manifest records a content fingerprint per
day (both tables); only days whose fingerprint changed are read. The state under
``$CORPUS_HOME/.index/`` keeps (1) every paper's days, (2) every available kept paragraph's
key, field, day and hash in (paper_id, section_index) order, so the chosen set is recomputed
from keys alone by ranking hashes per field (a new day merges its keys in; nothing is sorted
whole), (3) the released
paragraphs with the byte length and Table 2 numbers of their lines, and (4) a *pool*: the
lines of available paragraphs outside the release whose hash is at or below a per-field
threshold a margin (:data:`POOL_MARGIN`) above the cap. With the default cap, the median of
the fields, the cap moves a little every day and brings in paragraphs of old days: their
lines come from the pool, not from re-reading old days. When a field's chosen set outgrows
its pool, the pool is refilled to the margin again (reading the days those paragraphs are on:
paid once per margin's worth of growth). A split file whose paragraphs changed is rewritten by
copying the unchanged runs of lines from the current file in the kernel (``copy_file_range``)
and writing only the new lines, so the bytes are those of a build from scratch; a split file
whose paragraphs did not change is linked. Table 2 is aggregated from the stored numbers. The
manifest's digest of a split file (:func:`split_digest`) is the SHA-256 of its lines' BLAKE2b-128
digests in file order, kept per line in the state: a new day hashes its new lines, not the files.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from corpus.papers.fields import CITEWORTH_FIELDS
from corpus.release import citeworth as cw
from corpus.release import citeworth_splits as cws
from corpus.release.dataset_card import CardConfig, card_text, markdown_table, write_card
from corpus.release.state import (
    day_fingerprints,
    input_code_versions,
    link_or_copy,
    load_state,
    locked,
    save_state,
    state_dir,
)
from corpus.store import Store, scan_days, swap_dir
from corpus.versions import FIRST_RECORDED

# The version of citeworth_splits (corpus.versions): bump it whenever their rows change.
CITEWORTH_SPLITS_VERSION = "corpus.release.citeworth_release/2"  # 2: split digests from line digests

__all__ = ["POOL_MARGIN", "build_release", "citeworth_card", "split_digest"]

FORMAT = 3  # of the manifest and state: another format is rebuilt in full (3: line digests, 2: markers)
STATE = "citeworth_release"
POOL_MARGIN = 0.25  # pool holds each capped field's next 25 % of paragraphs beyond the cap
_POOL_TRIM = 3 * POOL_MARGIN  # a pool this far beyond its cap is cut back to the margin
_KEYS = ["paper_id", "section_index"]
_KEY_ORDER = "paper_id,section_index"  # the state's key and chosen tables are kept in this order

PAPER_SCHEMA: dict[str, Any] = {"paper_id": pl.Utf8, "days": pl.List(pl.Utf8)}
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
POOL_SCHEMA: dict[str, Any] = {
    "paper_id": pl.Utf8,
    "section_index": pl.Int64,
    "date": pl.Utf8,
    "line": pl.Binary,  # the release line, newline included
    "tokens": pl.Int64,
    "cite": pl.Int64,
    "lengths": pl.List(pl.Int64),  # character length of each released sentence
    "markers": pl.List(pl.Utf8),  # each sentence's leftover citation marker (null: none), for the audit
}
_RELEASE_SOURCE = ("paper_id", "section_index", "section_title", "field", "original_text", "samples")


def _empty(schema: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def _files(store: Store, asset: str, days: list[str]) -> list[Path]:
    return [store.partition_dir(asset, d) / "part-0.parquet" for d in days if store.has_partition(asset, d)]


def _candidate_days(store: Store, days: list[str]) -> pl.DataFrame:
    """``paper_id, date`` of every paper processed on ``days``."""
    files = _files(store, cw.CANDIDATES, days)
    if not files:
        return pl.DataFrame(schema={"paper_id": pl.Utf8, "date": pl.Utf8})
    return scan_days(files, {"paper_id": pl.Utf8}, hive=True).select("paper_id", "date").unique().collect()


def _kept_keys(store: Store, latest: pl.DataFrame, seed: int) -> pl.DataFrame:
    """Kept paragraph keys of the papers in ``latest`` (``paper_id, date``), from that day."""
    days = sorted(set(latest["date"].to_list()))
    files = _files(store, cw.PARAGRAPHS, days)
    if not files:
        return _empty(KEY_SCHEMA)
    columns = ("paper_id", "section_index", "field", "kept", "n_sentences", "n_cite_worthy")
    keys = (
        scan_days(files, {c: cw.PARAGRAPH_SCHEMA[c] for c in columns}, hive=True)
        .filter(pl.col("kept"))
        .select("paper_id", "section_index", "field", "date", "n_sentences", "n_cite_worthy")
        .join(latest.lazy(), on=["paper_id", "date"], how="semi")
        .collect()
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


def _update(
    store: Store, seed: int, papers: pl.DataFrame, keys: pl.DataFrame, changed: set[str], removed: set[str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Papers' days and the available keys after ``changed`` days were (re)written and
    ``removed`` days went away: only papers on those days are looked at."""
    gone = sorted(changed | removed)
    fresh = _candidate_days(store, sorted(changed)).group_by("paper_id").agg(pl.col("date").alias("new"))
    marked = papers.join(fresh.select("paper_id", _f=pl.lit(True)), on="paper_id", how="left")
    hit = pl.col("_f").fill_null(False) | pl.col("days").list.eval(pl.element().is_in(gone)).list.any()
    affected = (
        marked.filter(hit)
        .drop("_f")
        .join(fresh, on="paper_id", how="full", coalesce=True)
        .select(
            "paper_id",
            pl.concat_list(
                pl.col("days")
                .fill_null(pl.lit([], pl.List(pl.Utf8)))
                .list.eval(pl.element().filter(~pl.element().is_in(gone))),
                pl.col("new").fill_null(pl.lit([], pl.List(pl.Utf8))),
            )
            .list.unique()
            .list.sort()
            .alias("days"),
        )
        .filter(pl.col("days").list.len() > 0)
    )
    papers = pl.concat([marked.filter(~hit).drop("_f"), affected]).cast(PAPER_SCHEMA)  # type: ignore[arg-type]
    latest = affected.select("paper_id", pl.col("days").list.last().alias("date"))
    touched = pl.concat([affected["paper_id"], marked.filter(hit)["paper_id"]]).unique()
    # the key table stays in (paper_id, section_index) order: the touched papers' keys leave and
    # their new ones are merged in (a paper's keys are all old or all new), no sort of the table
    kept = keys.filter(~pl.col("paper_id").is_in(touched.implode()))
    fresh_keys = _kept_keys(store, latest, seed).sort(_KEYS)
    return papers, kept.merge_sorted(fresh_keys, key="paper_id") if kept.height else fresh_keys


def _ranked(keys: pl.DataFrame) -> pl.DataFrame:
    """``keys`` (in (paper_id, section_index) order) with ``_rank``: 1-based, per field, by
    (h, paper_id, section_index); an ordinal rank breaks ties of ``h`` by row order, which is
    that key order. Ranking hashes per field costs far less than sorting the table by them."""
    return keys.with_columns(pl.col("h").rank("ordinal").over("field").cast(pl.Int64).alias("_rank"))


def _choose(ranked: pl.DataFrame, cap: int) -> pl.DataFrame:
    """Per field, the ``cap`` keys with the smallest (h, paper_id, section_index), in
    (paper_id, section_index) order."""
    return ranked.filter(pl.col("_rank") <= cap).drop("_rank")


def _hash_at(ranked: pl.DataFrame, ranks: dict[str, int]) -> dict[str, int]:
    """Per field, the hash of the key at the given 1-based rank."""
    want = pl.DataFrame(
        {"field": list(ranks), "_rank": list(ranks.values())}, schema={"field": pl.Utf8, "_rank": pl.Int64}
    )
    return {f: int(h) for f, h in ranked.join(want, on=["field", "_rank"]).select("field", "h").iter_rows()}


def _thresholds(
    ranked: pl.DataFrame,
    available: dict[str, int],
    cap: int,
    old: dict[str, int],
    pool_counts: dict[str, int],
) -> dict[str, int]:
    """Per field, the largest hash the pool covers: kept from the last run while it covers the
    chosen keys and the pool is not far beyond the cap, else the hash at cap x (1 + margin)."""
    fields = [f for f in CITEWORTH_FIELDS if available.get(f)]
    need = _hash_at(ranked, {f: min(cap, available[f]) for f in fields}) if cap else {}
    out = {}
    for f in fields:
        have = old.get(f)
        if (
            have is not None
            and have >= need.get(f, -1)
            and pool_counts.get(f, 0) <= cap * (1 + _POOL_TRIM) + 16
        ):
            out[f] = have
    margin = {f: min(available[f], math.ceil(cap * (1 + POOL_MARGIN)) + 16) for f in fields if f not in out}
    return {**out, **_hash_at(ranked, margin)}


def _line_digest(line: bytes) -> bytes:
    return hashlib.blake2b(line, digest_size=16).digest()


def split_digest(path: str | Path) -> str:
    """The manifest's ``digest`` of a split file: SHA-256 over the BLAKE2b-128 digest of each
    line (newline included), in file order. Kept from the lines' digests, it costs a new day
    its new lines, where a SHA-256 of the file would read every released byte again."""
    out = hashlib.sha256()
    with open(path, "rb") as fh:
        for line in fh:
            out.update(_line_digest(line))
    return out.hexdigest()


def _release_lines(rows: pl.DataFrame) -> pl.DataFrame:
    """Paragraph rows -> their release lines (the bytes ``write_ndjson`` gives for the row) and
    Table 2 numbers, as :data:`POOL_SCHEMA`."""
    if not rows.height:
        return _empty(POOL_SCHEMA)
    frame = rows.with_columns(mag_field_of_study=pl.concat_list(pl.col("field"))).select(cw.RELEASE_COLUMNS)
    buf = io.BytesIO()
    frame.write_ndjson(buf)
    lines = [line + b"\n" for line in buf.getvalue().split(b"\n")[:-1]]
    if len(lines) != rows.height:
        raise RuntimeError("write_ndjson gave a line count that is not the row count")
    texts = rows.select(pl.col("samples").list.eval(pl.element().struct.field("text")).alias("t"))[
        "t"
    ].to_list()
    labels = rows.select(pl.col("samples").list.eval(pl.element().struct.field("label")).alias("l"))[
        "l"
    ].to_list()
    return pl.DataFrame(
        {
            "paper_id": rows["paper_id"],
            "section_index": rows["section_index"],
            "date": rows["date"],
            "line": lines,
            "tokens": [sum(len(cws.TOKEN_RE.findall(t)) for t in ts) for ts in texts],
            "cite": [sum(x == cw.LABEL_CITE_WORTHY for x in ls) for ls in labels],
            "lengths": [[len(t) for t in ts] for ts in texts],
            "markers": [[cw.leftover_marker(t) for t in ts] for ts in texts],
        },
        schema=POOL_SCHEMA,
    )


def _fetch(store: Store, want: pl.DataFrame) -> pl.DataFrame:
    """Pool rows of the keys in ``want`` (``paper_id, section_index, date``), a day at a time."""
    parts = []
    for (day,), keys in want.group_by(["date"]):
        rows = (
            scan_days(
                [store.partition_dir(cw.PARAGRAPHS, day) / "part-0.parquet"],
                {c: cw.PARAGRAPH_SCHEMA[c] for c in (*_RELEASE_SOURCE, "kept")},
            )
            .filter(pl.col("kept"))
            .select(_RELEASE_SOURCE)
            .join(keys.lazy().select(_KEYS), on=_KEYS, how="semi")
            .with_columns(pl.lit(day).alias("date"))
            .collect()
        )
        if rows.height != keys.height:
            raise RuntimeError(
                f"{keys.height - rows.height} chosen paragraphs were not found in {cw.PARAGRAPHS} {day} "
                "(a partition changed while the release was written?)"
            )
        parts.append(_release_lines(rows))
    return pl.concat(parts) if parts else _empty(POOL_SCHEMA)


def _stats(chosen: pl.DataFrame) -> dict:
    """Table 2 (:func:`corpus.release.citeworth.stats`' numbers) from the chosen rows' pool numbers."""
    acc = cws._SentenceStats()
    lengths = chosen.select(pl.col("lengths").explode(empty_as_null=False).drop_nulls().alias("n"))[
        "n"
    ].value_counts()
    acc.lengths = Counter(dict(lengths.iter_rows()))
    acc.tokens = int(chosen["tokens"].sum() or 0)
    acc.cite = int(chosen["cite"].sum() or 0)
    for split, n in chosen.group_by("split").agg(pl.col("lengths").list.len().sum()).iter_rows():
        acc.per_split[split] = int(n)
    return acc.result()


def _state_root(home: Path, out: Path) -> Path:
    if out == cw.release_dir(home):
        return state_dir(home, STATE)
    return state_dir(home, f"{STATE}-{hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:12]}")


def _read(path: Path, schema: dict[str, Any]) -> pl.DataFrame:
    return pl.read_parquet(path).cast(schema)  # type: ignore[arg-type]


def build_release(
    home: str | Path, *, seed: int = 0, per_field: int | None = None, out_dir: str | Path | None = None
) -> dict:
    """The CiteWorth release over every materialised day (SPEC.md §7), brought up to date (see
    the module docstring): kept paragraphs of every paper's latest day, balanced over the fields
    as :func:`corpus.release.citeworth_splits.balanced_keys` chooses (``per_field``, or
    ``default_cap`` when ``None``, with ``seed``), split by ``split_for``, written to
    ``<out_dir>/{train,dev,test}.jsonl`` (default ``$home/releases/citeworth``); the same days give
    the same bytes however the release got there. Returns counts, statistics and ``mode``
    (``full`` | ``incremental`` | ``unchanged``), ``days_changed`` and ``files_written``."""
    if per_field is not None and per_field < 0:
        raise ValueError(f"per_field must be >= 0 or None (median of the fields), not {per_field}")
    home = Path(home)
    store = Store(home)
    out = Path(out_dir) if out_dir is not None else cw.release_dir(home)
    root = _state_root(home, out)
    with locked(root / "lock"):
        return _build(store, seed, per_field, out, root)


def release_audit(home: str | Path, out_dir: str | Path | None = None, examples: int = 10) -> dict:
    """:func:`corpus.release.citeworth.audit_release` of the release, from the markers each line
    got when it was written (kept in the release state): the same result without reading every
    released sentence again, so the daily check costs what changed, not the corpus. Reads the
    lines when the state does not describe the release on disk."""
    home = Path(home)
    out = Path(out_dir) if out_dir is not None else cw.release_dir(home)
    root = _state_root(home, out)
    with locked(root / "lock"):
        state = load_state(root, out / "manifest.json", FORMAT)
        try:
            if state is None:
                raise _Stale("no release state")
            chosen = _read(root / state["chosen"], CHOSEN_SCHEMA)
            offsets = _offsets(chosen, out)
        except (_Stale, OSError, KeyError, pl.exceptions.PolarsError):
            return cw.audit_release(out, examples)
        order = {s: i for i, s in enumerate(cw.SPLIT_NAMES)}
        rows = chosen.sort(pl.col("split").replace_strict(order, return_dtype=pl.Int64), *_KEYS)
        per_split = {s: 0 for s in cw.SPLIT_NAMES}
        per_split.update(rows.group_by("split").agg(pl.col("lengths").list.len().sum()).iter_rows())
        flagged = (
            rows.select("split", *_KEYS, "length", pl.col("markers"))
            .with_row_index("_line")
            .explode("markers", empty_as_null=False)
            .with_columns(pl.int_range(pl.len()).over("_line").alias("_sentence"))
            .filter(pl.col("markers").is_not_null())
        )
        by_marker = dict(flagged["markers"].value_counts(sort=True).iter_rows())
        shown = flagged.head(examples).join(offsets, on=_KEYS, how="left")
        lines = []
        for split, offset, length in shown.select("split", "_offset", "length").iter_rows():
            with open(out / f"{split}.jsonl", "rb") as fh:
                fh.seek(offset)
                lines.append(fh.read(length))
    samples = [json.loads(line)["samples"] for line in lines]
    n = sum(per_split.values())
    bad = flagged.height
    return {
        "sentences": n,
        "sentences_per_split": {s: int(v) for s, v in per_split.items()},
        "with_marker": bad,
        "rate": bad / n if n else 0.0,
        "by_marker": {k: int(v) for k, v in by_marker.items()},
        "examples": [
            {"paper_id": pid, "marker": m, "text": sample[i]["text"]}
            for (pid, m, i), sample in zip(
                shown.select("paper_id", "markers", "_sentence").iter_rows(), samples, strict=True
            )
        ],
    }


def _inputs(store: Store) -> dict[str, str]:
    """One fingerprint per day over both tables (a day's paragraphs and candidates)."""
    par = day_fingerprints(store, cw.PARAGRAPHS, store.partitions(cw.PARAGRAPHS))
    cand = day_fingerprints(store, cw.CANDIDATES, store.partitions(cw.CANDIDATES))
    days = sorted(set(par) | set(cand))
    return {d: hashlib.sha256(f"{par.get(d, '')}|{cand.get(d, '')}".encode()).hexdigest()[:32] for d in days}


class _Stale(RuntimeError):
    """The state does not describe the release on disk: build from scratch."""


_LINE_COLUMNS = ["length", "digest", "tokens", "cite", "lengths", "markers"]
CHOSEN_SCHEMA: dict[str, Any] = {
    **KEY_SCHEMA,
    "length": pl.Int64,  # bytes of its line in <split>.jsonl
    "digest": pl.Binary,  # BLAKE2b-128 of its line (split_digest)
    "tokens": pl.Int64,
    "cite": pl.Int64,
    "lengths": pl.List(pl.Int64),
    "markers": pl.List(pl.Utf8),
}
_COMPACT = 2.0  # pool files are rewritten as one when they hold this many times the live lines


def _build(store: Store, seed: int, per_field: int | None, out: Path, root: Path) -> dict:
    settings = {"seed": seed, "per_field": per_field}
    state = load_state(root, out / "manifest.json", FORMAT)
    inputs = _inputs(store)
    old = None
    if state is not None:
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        writer = manifest.get("code_version", FIRST_RECORDED["citeworth_splits"])
        if manifest.get("settings") == settings and writer == CITEWORTH_SPLITS_VERSION:
            old = manifest  # else other settings or another writer: built again in full
    if old is not None and old["inputs"] == inputs:
        return {**old["summary"], "mode": "unchanged", "days_changed": 0, "files_written": 0}
    reason = "no usable state" if old is None else None
    if old is not None:
        try:
            return _run(store, seed, per_field, out, root, settings, inputs, old, state)
        except (_Stale, OSError, KeyError, ValueError, pl.exceptions.PolarsError) as exc:
            reason = f"{type(exc).__name__}: {exc}"[:300]  # the state or the release is not what it should be
    return {
        **_run(store, seed, per_field, out, root, settings, inputs, None, None),
        "full_because": reason,
    }


def _run(
    store: Store, seed: int, per_field: int | None, out: Path, root: Path, settings: dict, inputs: dict,
    old: dict | None, state: dict | None,
) -> dict:  # fmt: skip
    line_keys = [*_KEYS, "date"]
    if old is None:
        papers, keys, before = _empty(PAPER_SCHEMA), _empty(KEY_SCHEMA), _empty(CHOSEN_SCHEMA)
        pool_files, thresholds, changed, removed = [], {}, set(inputs), set()
    else:
        if state.get("key_order") != _KEY_ORDER:
            raise _Stale("the state's key table is not kept in (paper_id, section_index) order")
        papers = _read(root / state["papers"], PAPER_SCHEMA)
        keys = _read(root / state["keys"], KEY_SCHEMA)
        before = _read(root / state["chosen"], CHOSEN_SCHEMA)
        pool_files = [root / name for name in state["pool"]]
        thresholds = {f: int(v) for f, v in state["thresholds"].items()}
        changed = {d for d, fp in inputs.items() if old["inputs"].get(d) != fp}
        removed = set(old["inputs"]) - set(inputs)
    papers, keys = _update(store, seed, papers, keys, changed, removed)
    available = dict(keys.group_by("field").len().iter_rows())
    cap = cw.default_cap(available) if per_field is None else per_field
    ranked = _ranked(keys)
    chosen = _choose(ranked, cap)
    # the pool: every available paragraph up to its field's threshold has its line in the release
    # (chosen) or in a pool file; what is in neither is read from its day
    pool_keys = _pool_scan(pool_files).select(line_keys).unique().collect() if pool_files else _empty(
        {k: KEY_SCHEMA[k] for k in line_keys}
    )  # fmt: skip
    live = pool_keys.join(keys.select(*line_keys, "field"), on=line_keys)
    thresholds = _thresholds(
        ranked, available, cap, thresholds, dict(live.group_by("field").len().iter_rows())
    )
    limit = pl.DataFrame(
        {"field": list(thresholds), "_t": list(thresholds.values())},
        schema={"field": pl.Utf8, "_t": pl.UInt64},
    )
    # the pool's share of the wanted keys (at or below the threshold): the chosen ones are all there
    beyond = (
        ranked.filter(pl.col("_rank") > cap).join(limit, on="field").filter(pl.col("h") <= pl.col("_t"))
    ).select(line_keys)
    entering = chosen.join(before, on=line_keys, how="anti")
    leaving = before.join(chosen, on=line_keys, how="anti")
    offsets = _offsets(before, out)
    moved = _read_lines(out, leaving.join(beyond, on=line_keys, how="semi").join(offsets, on=_KEYS))
    from_pool = _pool_lines(pool_files, entering.select(line_keys)) if pool_files else _empty(POOL_SCHEMA)
    need = pl.concat([
        entering.select(line_keys).join(from_pool, on=line_keys, how="anti"),
        beyond.join(pool_keys, on=line_keys, how="anti").join(moved, on=line_keys, how="anti"),
    ]).unique()  # fmt: skip
    fetched = _fetch(store, need)
    got = pl.concat([from_pool, fetched]).unique(line_keys)
    new_lines = entering.join(got, on=line_keys, how="left")
    if new_lines["line"].null_count():
        raise RuntimeError("a chosen paragraph has no line (a bug)")
    # the chosen keys in their (paper_id, section_index) order, each with its line's numbers: kept
    # from the last release (no line: copied from its file) or new (with its line); the list
    # columns are taken by row number, as a join on the keys would hash-gather them too
    lines = pl.concat([
        before.select(*line_keys, *_LINE_COLUMNS, pl.lit(None, pl.Binary).alias("line")),
        new_lines.with_columns(pl.col("line").bin.size().cast(pl.Int64).alias("length"),
                               pl.Series("digest", [_line_digest(x) for x in new_lines["line"]], pl.Binary))
        .select(*line_keys, *_LINE_COLUMNS, "line"),
    ])  # fmt: skip
    where = chosen.select(line_keys).join(
        lines.select(line_keys).with_row_index("_i"), on=line_keys, how="left", maintain_order="left"
    )["_i"]
    if where.null_count():
        raise RuntimeError("a chosen paragraph has no line (a bug)")
    table = chosen.hstack(lines.select(pl.col(*_LINE_COLUMNS, "line").gather(where))).select(
        *CHOSEN_SCHEMA, "line"
    )
    spare = pl.concat([moved, fetched.join(chosen, on=line_keys, how="anti")]).unique(line_keys)
    summary = _commit(store, out, root, settings, inputs, papers, keys, thresholds, table, offsets,
                      leaving, spare, pool_files, live, available, cap, old is not None)  # fmt: skip
    return {**summary, "mode": "full" if old is None else "incremental",
            "days_changed": len(changed) + len(removed)}  # fmt: skip


def _pool_scan(files: list[Path]) -> pl.LazyFrame:
    return pl.scan_parquet(files, schema=POOL_SCHEMA) if files else _empty(POOL_SCHEMA).lazy()


def _pool_lines(files: list[Path], want: pl.DataFrame) -> pl.DataFrame:
    if not want.height:
        return _empty(POOL_SCHEMA)
    line_keys = [*_KEYS, "date"]
    return _pool_scan(files).join(want.lazy(), on=line_keys, how="semi").unique(line_keys).collect()


def _offsets(before: pl.DataFrame, out: Path) -> pl.DataFrame:
    """Where each line of the current release starts in its split file (``split, paper_id,
    section_index, _offset``); raises :class:`_Stale` when a file's size disagrees."""
    placed = before.with_columns(  # in (paper_id, section_index) order: each split's file order
        (pl.col("length").cum_sum() - pl.col("length")).over("split").alias("_offset")
    )
    for split, size in placed.group_by("split").agg(pl.col("length").sum()).iter_rows():
        path = out / f"{split}.jsonl"
        if not path.exists() or path.stat().st_size != size:
            raise _Stale(f"{path} is not the file the state describes")
    return placed.select(*_KEYS, "_offset")


def _read_lines(out: Path, rows: pl.DataFrame) -> pl.DataFrame:
    """Pool rows for ``rows`` of the current release (with ``split``, ``_offset``, ``length``),
    read from their split files."""
    if not rows.height:
        return _empty(POOL_SCHEMA)
    parts = []
    for (split,), part in rows.group_by(["split"]):
        lines = []
        with open(out / f"{split}.jsonl", "rb") as fh:
            for offset, length in part.select("_offset", "length").iter_rows():
                fh.seek(offset)
                lines.append(fh.read(length))
        parts.append(part.with_columns(pl.Series("line", lines, pl.Binary)))
    return pl.concat(parts).select(list(POOL_SCHEMA)).cast(POOL_SCHEMA)  # type: ignore[arg-type]


def _copy_range(src: Any, dst: Any, offset: int, count: int) -> None:
    while count > 0:
        try:
            n = os.copy_file_range(src.fileno(), dst.fileno(), count, offset)
        except (AttributeError, OSError):
            src.seek(offset)
            n = dst.write(src.read(min(count, 1 << 24)))
        if n <= 0:
            raise _Stale("the release file ended early")
        offset += n
        count -= n


def _write_split(path: Path, rows: pl.DataFrame, old: Path | None) -> None:
    """``rows`` (one split, in order): a row with a ``line`` is written, the others are copied
    from ``old`` at ``_offset``, a run of consecutive lines at a time (in the kernel)."""
    new = pl.col("line").is_not_null()
    follows = pl.col("_offset") == (pl.col("_offset") + pl.col("length")).shift(1)
    runs = (
        rows.with_columns(((new != new.shift(1)) | (~new & ~follows)).fill_null(True).cum_sum().alias("_run"))
        .group_by("_run", maintain_order=True)
        .agg(pl.col("_offset").first(), pl.col("length").sum(), pl.col("line"))
    )
    with open(path, "wb") as dst, open(old, "rb") if old is not None else contextlib.nullcontext() as src:
        for _, offset, length, lines in runs.iter_rows():
            if lines[0] is not None:
                dst.write(b"".join(lines))
            else:
                dst.flush()
                _copy_range(src, dst, offset, length)
        dst.flush()
        os.fsync(dst.fileno())


def _commit(
    store: Store, out: Path, root: Path, settings: dict, inputs: dict, papers: pl.DataFrame,
    keys: pl.DataFrame, thresholds: dict, table: pl.DataFrame, offsets: pl.DataFrame, leaving: pl.DataFrame,
    spare: pl.DataFrame, pool_files: list[Path], live: pl.DataFrame, available: dict, cap: int, incremental: bool,
) -> dict:  # fmt: skip
    """Write the split files that changed (the others linked), manifest, card, the key table,
    the pool and the state; swap the release directory in."""
    store.write_table(cw.SPLITS, table.select(list(cw.SPLITS_SCHEMA)))
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.staging-"))
    old_files = {}
    if incremental:
        old_files = {f["path"]: f for f in json.loads((out / "manifest.json").read_text())["files"]}
    rows = table.join(offsets, on=_KEYS, how="left", maintain_order="left")
    try:
        files, written = [], 0
        for split in cw.SPLIT_NAMES:
            name = f"{split}.jsonl"
            mine = rows.filter(pl.col("split") == split)
            changed = mine["line"].null_count() < mine.height or (leaving["split"] == split).any()
            if incremental and name in old_files and not changed:
                link_or_copy(out / name, staging / name)
                files.append(old_files[name])
                continue
            _write_split(staging / name, mine, out / name if incremental else None)
            digest = hashlib.sha256(b"".join(mine["digest"].to_list())).hexdigest()  # = split_digest
            files.append({"path": name, "paragraphs": mine.height, "bytes": (staging / name).stat().st_size,
                          "digest": digest})  # fmt: skip
            written += 1
        summary = _summary(settings, table, available, cap)
        manifest = {
            "format": FORMAT,
            "code_version": CITEWORTH_SPLITS_VERSION,
            "settings": settings,
            "inputs": inputs,
            "input_code_versions": input_code_versions(store, [cw.PARAGRAPHS, cw.CANDIDATES], inputs),
            "files": files,
            "summary": summary,
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        write_card(staging, citeworth_card(manifest))
        with open(staging / "manifest.json", "rb") as fh:
            os.fsync(fh.fileno())
        swap_dir(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    root.mkdir(parents=True, exist_ok=True)
    tag = hashlib.sha256((out / "manifest.json").read_bytes()).hexdigest()[:16]
    names = {k: f"{k}-{tag}.parquet" for k in ("papers", "keys", "chosen")}
    # written whole every run, read back the next: LZ4 (as the pool) writes and reads them faster than zstd
    papers.write_parquet(root / names["papers"], compression="lz4")
    keys.write_parquet(root / names["keys"], compression="lz4")
    table.drop("line").write_parquet(root / names["chosen"], compression="lz4")
    pool = [p.name for p in pool_files]
    if spare.height:
        spare.write_parquet(root / f"pool-{tag}.parquet", compression="lz4")
        pool.append(f"pool-{tag}.parquet")
    live_rows = live.height + spare.height
    total_rows = sum(pl.scan_parquet(root / p).select(pl.len()).collect().item() for p in pool) if pool else 0
    if total_rows > _COMPACT * live_rows + 10_000:  # mostly stale lines: keep the live ones in one file
        keep = pl.concat([live.select(*_KEYS, "date"), spare.select(*_KEYS, "date")]).unique()
        merged = _pool_lines([root / p for p in pool], keep)
        merged.write_parquet(root / f"pool-{tag}-c.parquet", compression="lz4")
        pool = [f"pool-{tag}-c.parquet"]
    save_state(root, out / "manifest.json", FORMAT,
               {**names, "pool": pool, "key_order": _KEY_ORDER,
                "thresholds": {f: str(v) for f, v in thresholds.items()}})  # fmt: skip
    for stale in root.glob("*.parquet"):
        if stale.name not in names.values() and stale.name not in pool:
            stale.unlink(missing_ok=True)
    return {**summary, "files_written": written}


def _summary(settings: dict, table: pl.DataFrame, available: dict, cap: int) -> dict:
    released = dict(table.group_by("field").len().iter_rows())
    per_field_sentences = table.group_by("field").agg(pl.col("n_sentences").sum()).rows()
    counts = dict(table.group_by("split").len().iter_rows())
    return {
        "seed": settings["seed"],
        "per_field_cap": cap,
        "available_paragraphs": sum(available.values()),
        "available_per_field": {f: available.get(f, 0) for f in CITEWORTH_FIELDS},
        "released_per_field": {f: released.get(f, 0) for f in CITEWORTH_FIELDS},
        "sentences_per_field": {f: n for f, n in sorted(per_field_sentences)},
        "paragraphs": table.height,
        "papers": table["paper_id"].n_unique(),
        "paragraphs_per_split": {s: counts.get(s, 0) for s in cw.SPLIT_NAMES},
        "papers_per_split": {
            s: table.filter(pl.col("split") == s)["paper_id"].n_unique() for s in cw.SPLIT_NAMES
        },
        "stats": _stats(table),
        "files": {s: f"{s}.jsonl" for s in cw.SPLIT_NAMES},
    }


_SAMPLE_FEATURES = {
    "text": "string",
    "label": "string",
    "original_text": "string",
    "ref_ids": [["string"]],
    "citation_text": ["string"],
}
FEATURES: dict[str, Any] = {
    "paper_id": "string",
    "section_index": "int64",
    "section_title": "string",
    "mag_field_of_study": ["string"],
    "field": "string",
    "original_text": "string",
    "samples": [_SAMPLE_FEATURES],
}


def citeworth_card(manifest: dict) -> str:
    """The dataset card: one ``default`` config, train / dev (validation) / test."""
    s = manifest["summary"]
    st = s["stats"]
    by_name = {f["path"]: f for f in manifest["files"]}
    hf = {"train": "train", "dev": "validation", "test": "test"}
    filled = [sp for sp in cw.SPLIT_NAMES if s["paragraphs_per_split"][sp]]  # datasets rejects an empty split
    config = CardConfig(
        "default",
        {hf[sp]: [f"{sp}.jsonl"] for sp in filled},
        {hf[sp]: s["paragraphs_per_split"][sp] for sp in filled},
        {hf[sp]: by_name[f"{sp}.jsonl"]["bytes"] for sp in filled},
        default=True,
    )
    if filled:
        names = ", ".join(hf[sp] if hf[sp] == sp else f"{hf[sp]} (`{sp}.jsonl`)" for sp in filled)
        load = f"Load it with `datasets.load_dataset(<this directory>)`: splits {names}."
    else:
        load = "No paragraph is released yet (every split file is empty): nothing to load."
    cap = f"at most {s['per_field_cap']:,} paragraphs per field, " if s["per_field_cap"] else ""
    n = st["total_sentences"] or 1
    table_2 = [
        {"statistic": "Total sentences", "value": st["total_sentences"]},
        {"statistic": "Total tokens", "value": st["total_tokens"]},
        *({"statistic": f"{sp.title()} sentences", "value": st.get(f"{sp}_sentences", 0)} for sp in cw.SPLIT_NAMES),
        {"statistic": "Cite-worthy", "value": f"{st['cite_worthy']:,} ({100 * st['cite_worthy'] / n:.2f} %)"},
        {"statistic": "Not cite-worthy", "value": f"{st['non_cite_worthy']:,} ({100 * st['non_cite_worthy'] / n:.2f} %)"},
        {"statistic": "Min / max char length", "value": f"{st['min_chars']:,} / {st['max_chars']:,}"},
        {"statistic": "Mean / median char length", "value": f"{st['mean_chars']:.0f} / {st['median_chars']:.0f}"},
    ]  # fmt: skip
    funnel = [
        {"field": f, "available": s["available_per_field"][f], "released": s["released_per_field"][f]}
        for f in CITEWORTH_FIELDS
    ]
    splits = [
        {"split": sp, "paragraphs": s["paragraphs_per_split"][sp], "papers": s["papers_per_split"][sp]}
        for sp in cw.SPLIT_NAMES
    ]
    return card_text(
        title="CiteWorth (arXiv)",
        summary=(
            "Cite-worthiness detection data built from arXiv by this project as the CiteWorth paper "
            "(Wright and Augenstein, 2021) describes it: paragraphs from permissible sections whose every "
            "sentence passed the citation checks, one sample per sentence labelled `check-worthy` (it had "
            f"a citation, now removed) or `non-check-worthy`, balanced over ten fields ({cap}seed "
            f"{s['seed']}) and split 80/10/10 by paper. {load}"
        ),
        configs=[config] if filled else [],
        features=FEATURES,
        licence="other",
        tags=["citeworth", "arxiv", "cite-worthiness"],
        sections={
            "Statistics (the paper's Table 2)": markdown_table(table_2, ["statistic", "value"]),
            "Splits": markdown_table(splits, ["split", "paragraphs", "papers"]),
            "Filter funnel": (
                f"{s['available_paragraphs']:,} paragraphs passed every sentence check (the per-rule "
                "counts are on each `citeworth_paragraphs` materialisation); the field balance then keeps:\n\n"
                + markdown_table(funnel, ["field", "available", "released"])
            ),
            "Licence": (
                "CiteWorth's own data is released under CC BY-NC 4.0. The sentences here come from arXiv "
                "papers, each under the licence its authors chose (the `license` field of `arxiv_metadata`); "
                "many use arXiv's non-exclusive distribution licence, which does not allow redistribution. "
                "Check each paper's licence before you share this release."
            ),
        },
    )
