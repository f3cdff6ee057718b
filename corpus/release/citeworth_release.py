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
day (both tables); only days whose fingerprint changed are read. The state
(:mod:`corpus.release.citeworth_state`) keeps each day's paragraph keys in a file of its own,
the papers' days, the per-field counts, and the *candidates*: per field, the paragraphs whose
hash is at or below a threshold a margin (:data:`POOL_MARGIN`) above the cap, with their lines'
numbers. A new day hashes its own keys, moves the counts by its papers (and the older versions
they replace), and chooses again among the candidates alone: with the default cap, the median
of the fields, the cap moves a little every day and brings in paragraphs of old days, whose
lines come from the pool files, not from re-reading old days. A field whose candidates no
longer cover its cap is refilled from every day's keys (paid once per margin's worth of
growth). A split file whose paragraphs changed is rewritten by copying the unchanged runs of
lines from the current file in the kernel (``copy_file_range``) and writing only the new lines,
so the bytes are those of a build from scratch; a split file whose paragraphs did not change is
linked. Table 2 is aggregated from the stored numbers. The manifest's digest of a split file
(:func:`split_digest`) is the SHA-256 of its lines' BLAKE2b-128 digests in file order, kept per
line in the state: a new day hashes its new lines, not the files.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import json
import os
import shutil
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO

import polars as pl

from corpus.papers.fields import CITEWORTH_FIELDS
from corpus.parallel import available_cpus, map_ordered
from corpus.release import citeworth as cw
from corpus.release import citeworth_splits as cws
from corpus.release import citeworth_state as cs
from corpus.release.citeworth_state import CAND_SCHEMA, KEY_SCHEMA, LINE_COLUMNS, LINE_KEYS, POOL_MARGIN
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

__all__ = ["KEY_SCHEMA", "POOL_MARGIN", "build_release", "citeworth_card", "split_digest"]

FORMAT = 3  # of the manifest (3: line digests, 2: markers); the state's is cs.STATE_FORMAT
STATE = "citeworth_release"
_KEYS = cs.KEYS
_kept_keys = cs.kept_keys  # a day's hashed keys (tests put a fault in here)

POOL_SCHEMA: dict[str, Any] = {
    "paper_id": pl.Utf8,
    "section_index": pl.Int64,
    "date": pl.Utf8,
    "line": pl.Binary,  # the release line, newline included
    "tokens": pl.Int64,
    "cite": pl.Int64,
    "lengths": pl.Binary,  # character length of each released sentence (cs.pack_lengths)
    "markers": pl.Utf8,  # JSON list of each sentence's leftover citation marker (null: none has one)
}
_FETCHED_SCHEMA: dict[str, Any] = {
    **{c: t for c, t in POOL_SCHEMA.items() if c != "line"},
    "length": pl.Int64,
    "digest": pl.Binary,
    "_spill": pl.Int64,  # where the line is in the run's spill file
}
_RELEASE_SOURCE = ("paper_id", "section_index", "section_title", "field", "original_text", "samples")
_empty = cs.empty
_COMPACT = 2.0  # pool files are rewritten as one when they hold this many times the live lines
_COMPACT_SLACK = 1 << 24  # ... and 16 MB more
_DAYS_PER_WORKER = 16  # days of per-day work (a full build's) worth starting one more process for


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
            "lengths": [cs.pack_lengths([len(t) for t in ts]) for ts in texts],
            "markers": [_markers([cw.leftover_marker(t) for t in ts]) for ts in texts],
        },
        schema=POOL_SCHEMA,
    )


def _fetch(store: Store, want: pl.DataFrame, spill: BinaryIO) -> pl.DataFrame:
    """The numbers (:data:`corpus.release.citeworth_state.LINE_COLUMNS`) of the keys in ``want``
    (``paper_id, section_index, date``), their lines appended to ``spill`` at ``_spill``: a full
    build reads every candidate's line, and holding them all would make its memory grow with
    the release. Days go over :func:`_day_workers` processes, a few days' lines in memory."""
    days = sorted(want.group_by(["date"]), key=lambda g: g[0][0])
    parts = []
    at = spill.tell()
    jobs = ((store, day, keys.select(_KEYS)) for (day,), keys in days)
    for raw, numbers in map_ordered(_day_lines, jobs, _day_workers(len(days))):
        spill.write(raw)
        length = numbers["length"]
        parts.append(numbers.with_columns((at + length.cum_sum() - length).alias("_spill")))
        at += len(raw)
    return pl.concat(parts) if parts else _empty(_FETCHED_SCHEMA)


def _day_workers(days: int) -> int:
    """Processes for per-day work: one per CPU for a full build, none for a new day's few days
    (a process costs ~1 CPU s to start: polars imported again)."""
    return max(1, min(available_cpus(), days // _DAYS_PER_WORKER))


def _day_lines(store: Store, day: str, keys: pl.DataFrame) -> tuple[bytes, pl.DataFrame]:
    """One day's part of :func:`_fetch`: the release lines of ``keys`` (joined, in key order) and
    their numbers, ``length`` and ``digest`` included."""
    rows = (
        scan_days(
            [store.partition_dir(cw.PARAGRAPHS, day) / "part-0.parquet"],
            {c: cw.PARAGRAPH_SCHEMA[c] for c in (*_RELEASE_SOURCE, "kept")},
        )
        .filter(pl.col("kept"))
        .select(_RELEASE_SOURCE)
        .join(keys.lazy(), on=_KEYS, how="semi")
        .with_columns(pl.lit(day).alias("date"))
        .sort(_KEYS)  # release order within the day: consecutive lines copy as one run
        .collect()
    )
    if rows.height != keys.height:
        raise RuntimeError(
            f"{keys.height - rows.height} chosen paragraphs were not found in {cw.PARAGRAPHS} {day} "
            "(a partition changed while the release was written?)"
        )
    lines = _release_lines(rows)
    numbers = lines.with_columns(
        lines["line"].bin.size().cast(pl.Int64).alias("length"),
        pl.Series("digest", [_line_digest(x) for x in lines["line"]], pl.Binary),
    ).drop("line")
    return b"".join(lines["line"].to_list()), numbers


def _markers(markers: list[str | None]) -> str | None:
    return json.dumps(markers) if any(m is not None for m in markers) else None


def _stats(table_2: dict) -> dict:
    """Table 2 (:func:`corpus.release.citeworth.stats`' numbers) from its running numbers
    (:func:`corpus.release.citeworth_state.table_2_add`)."""
    acc = cws._SentenceStats()
    acc.lengths = Counter({int(k): v for k, v in table_2.get("lengths", {}).items()})
    acc.tokens = table_2.get("tokens", 0)
    acc.cite = table_2.get("cite", 0)
    acc.per_split = Counter(table_2.get("per_split", {}))
    return acc.result()


def _state_root(home: Path, out: Path) -> Path:
    if out == cw.release_dir(home):
        return state_dir(home, STATE)
    return state_dir(home, f"{STATE}-{hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:12]}")


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
        state = load_state(root, out / "manifest.json", cs.STATE_FORMAT)
        try:
            if state is None:
                raise _Stale("no release state")
            # the narrow columns only: the lines' sizes and markers, not their numbers and digests
            chosen = (
                cs.scan(root / state["cand"], CAND_SCHEMA)
                .filter(pl.col("chosen"))
                .select("split", *_KEYS, "length", (pl.col("lengths").bin.size() // 4).alias("_n"), "markers")
                .collect()
            )
            offsets = _offsets(chosen, out)
        except (_Stale, OSError, KeyError, pl.exceptions.PolarsError):
            return cw.audit_release(out, examples)
        per_split = {s: 0 for s in cw.SPLIT_NAMES}
        per_split.update(chosen.group_by("split").agg(pl.col("_n").sum()).iter_rows())
        # only lines with a marker are flagged: they alone are sorted into release order
        order = {s: i for i, s in enumerate(cw.SPLIT_NAMES)}
        rows = chosen.filter(pl.col("markers").is_not_null())
        rows = rows.sort(pl.col("split").replace_strict(order, return_dtype=pl.Int64), *_KEYS)
        flagged = (
            rows.select("split", *_KEYS, "length", pl.col("markers").str.json_decode(pl.List(pl.Utf8)))
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


def _build(store: Store, seed: int, per_field: int | None, out: Path, root: Path) -> dict:
    settings = {"seed": seed, "per_field": per_field}
    state = load_state(root, out / "manifest.json", cs.STATE_FORMAT)
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
    """:func:`_update`; a run that fails removes its spill file (a run stopped harder leaves it to
    the next run's sweep of files the state does not name)."""
    try:
        return _update(store, seed, per_field, out, root, settings, inputs, old, state)
    except BaseException:
        try:
            named = set(json.loads((root / "state.json").read_text(encoding="utf-8")).get("pool", []))
        except (OSError, ValueError, AttributeError):
            named = set()
        for path in root.glob("pool-*-f.bin"):
            if path.name not in named:
                path.unlink(missing_ok=True)
        raise


def _update(
    store: Store, seed: int, per_field: int | None, out: Path, root: Path, settings: dict, inputs: dict,
    old: dict | None, state: dict | None,
) -> dict:  # fmt: skip
    if old is None or state is None:
        papers, cand = _empty(cs.PAPER_SCHEMA), _empty(CAND_SCHEMA)
        day_files: dict[str, str] = {}
        thresholds: dict[str, int] = {}
        available: dict[str, int] = {}
        changed, removed = set(inputs), set()
    else:
        papers = cs.read(root / state["papers"], cs.PAPER_SCHEMA)
        cand = cs.read(root / state["cand"], CAND_SCHEMA)
        day_files = dict(state["days"])
        thresholds = {f: int(v) for f, v in state["thresholds"].items()}
        available = {f: int(n) for f, n in state["available"].items()}
        changed = {d for d, fp in inputs.items() if old["inputs"].get(d) != fp}
        removed = set(old["inputs"]) - set(inputs)
        if set(day_files) != set(old["inputs"]):
            raise _Stale("the state's day keys are not the release's days")
    before = cand.filter(pl.col("chosen"))
    offsets = _offsets(before, out)
    # 1. the changed days' keys, hashed once and kept; the papers on them and their counts
    root.mkdir(parents=True, exist_ok=True)
    fresh_keys = {}
    days = sorted(changed)
    for day, keys in zip(days, map_ordered(_kept_keys, ((store, d, seed) for d in days), _day_workers(len(days))),
                         strict=True):  # fmt: skip
        day_files[day] = cs.key_file_name(day, inputs[day], seed)
        cs.write(keys, root / day_files[day])
        fresh_keys[day] = keys
    for day in removed:
        day_files.pop(day, None)
    papers, affected, live, delta = cs.update_papers(store, papers, fresh_keys, changed | removed)
    for f, n in delta.items():
        available[f] = available.get(f, 0) + n
    if any(n < 0 for n in available.values()):
        raise _Stale("a field's available count went below zero")
    available = {f: n for f, n in available.items() if n}
    # 2. the affected papers' candidates leave, their live keys (up to the thresholds) come in;
    #    the candidates stay in key order (a paper's keys are all old or all new)
    cap = cw.default_cap(available) if per_field is None else per_field
    if old is None:  # a full build: the fields' cuts first, so not every key becomes a candidate
        thresholds = cs.first_thresholds(fresh_keys, live, cap)
    adding = cs.as_candidates(cs.live_keys(root, day_files, fresh_keys, live, thresholds))
    kept = cand.filter(~pl.col("paper_id").is_in(affected.implode()))
    cand = (
        kept.merge_sorted(adding, key="paper_id")
        if kept.height and adding.height
        else pl.concat([kept, adding])
    )
    cand, thresholds, refilled = cs.refill(root, day_files, papers, cand, thresholds, available, cap)
    # 3. choose among the candidates; read the lines not read yet (new and refilled keys). Whole-
    #    table steps take the narrow columns they need before they filter
    now = cs.ranked(cand)["_rank"] <= cap
    known = cand["length"].is_not_null()
    need = cand.select(LINE_KEYS).filter(~known)
    line = pl.Series("line", [None] * cand.height, pl.Binary)
    spilled = pl.Series("_spill", [None] * cand.height, pl.Int64)
    # the lines read from the days go to a spill file, named as a pool file: its pool lines stay there
    spill = root / f"pool-{uuid.uuid4().hex}-f.bin" if need.height else None
    if spill is not None:
        with open(spill, "wb") as fh:
            fetched = need.join(_fetch(store, need, fh), on=LINE_KEYS, how="left", maintain_order="left")
            fh.flush()
            os.fsync(fh.fileno())
        if fetched["_spill"].null_count():
            raise RuntimeError("a candidate paragraph has no line (a bug)")
        n_known = cand.height - need.height
        where = (
            pl.select(
                pl.when(known)
                .then(known.cum_sum() - 1)
                .otherwise(n_known + (~known).cum_sum() - 1)
                .alias("w")
            )
            .to_series()
            .cast(pl.Int64)
        )
        numbers = pl.concat([cand.select(LINE_COLUMNS).filter(known), fetched.select(LINE_COLUMNS)])
        cand = cand.with_columns(numbers.select(pl.all().gather(where)))
        spilled = spilled.scatter((~known).arg_true(), fetched["_spill"])
        del fetched, numbers
    # lines the run writes: entering ones from the pool files, leaving ones (still candidates)
    # from the current release into a new pool file
    was = cand["chosen"]
    at = cand.select("pool", "pool_offset", "length", *_KEYS, "split").with_row_index("_i")
    entering = at.filter(now & ~was & at["pool"].is_not_null())
    if entering.height:
        line = line.scatter(
            entering["_i"], pl.Series(cs.read_at(root, entering, "pool", "pool_offset"), dtype=pl.Binary)
        )
    moved = at.filter(~now & was).join(offsets, on=_KEYS, how="left", maintain_order="left")
    if moved.height:
        moved = moved.with_columns((pl.col("split") + ".jsonl").alias("_file"))
        line = line.scatter(
            moved["_i"], pl.Series(cs.read_at(out, moved, "_file", "_offset"), dtype=pl.Binary)
        )
    cand = cand.with_columns(line, spilled, now.alias("_now"))
    # what leaves the release: old lines not kept as they were (a day written again with other
    # content gives a paragraph new line under the same key)
    stay = cand.select(LINE_KEYS).filter(now & was)
    leaving = before.join(stay, on=LINE_KEYS, how="anti")
    table_2 = cs.table_2_add(state["table_2"] if old is not None and state is not None else {}, leaving, -1)
    table_2 = cs.table_2_add(table_2, cand.select("split", "lengths", "tokens", "cite").filter(now & ~was), 1)
    summary = _commit(store, out, root, settings, inputs, papers, cand, offsets, leaving, day_files,
                      thresholds, available, table_2, cap, old, spill)  # fmt: skip
    return {**summary, "mode": "full" if old is None else "incremental",
            "days_changed": len(changed) + len(removed), "fields_refilled": len(refilled)}  # fmt: skip


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


def _write_split(path: Path, rows: pl.DataFrame, old: Path | None, spill: Path | None) -> None:
    """``rows`` (one split, in order): a row with a ``line`` is written; the others are copied
    (in the kernel, a run of consecutive lines at a time) from the run's ``spill`` file at
    ``_spill``, or else from ``old`` (the current release file) at ``_offset``."""
    frame = rows.select(
        pl.when(pl.col("line").is_not_null())
        .then(pl.lit(""))
        .when(pl.col("_spill").is_not_null())
        .then(pl.lit("spill"))
        .otherwise(pl.lit("old"))
        .alias("_src"),
        pl.coalesce("_spill", "_offset", pl.lit(0, pl.Int64)).alias("_at"),
        "length",
        "line",
    )
    # a line in memory starts a run of its own kind; copies merge where they follow on
    runs = cs.byte_runs(frame.with_columns(pl.when(pl.col("_src") == "").then(None).otherwise("_at").alias("_at")),
                        "_src", "_at")  # fmt: skip
    lines = iter(frame.filter(pl.col("_src") == "")["line"].to_list())
    sources = {"old": old, "spill": spill}
    with open(path, "wb") as dst, contextlib.ExitStack() as stack:
        handles = {k: stack.enter_context(open(p, "rb")) for k, p in sources.items() if p is not None}
        for src, at, length in runs.iter_rows():
            if src == "":  # a run of one line
                dst.write(next(lines))
            else:
                dst.flush()
                cs.copy_range(handles[src], dst, at, length)
        dst.flush()
        os.fsync(dst.fileno())


def _commit(
    store: Store, out: Path, root: Path, settings: dict, inputs: dict, papers: pl.DataFrame, cand: pl.DataFrame,
    offsets: pl.DataFrame, leaving: pl.DataFrame, day_files: dict, thresholds: dict, available: dict,
    table_2: dict, cap: int, old: dict | None, spill: Path | None,
) -> dict:  # fmt: skip
    """Write the split files that changed (the others linked), manifest, card, the key table,
    the new pool lines and the state; swap the release directory in."""
    table = cand.filter(pl.col("_now"))
    # one chunk: the Parquet file's row groups, so its bytes, then do not depend on how the run got there
    store.write_table(cw.SPLITS, table.select(list(cw.SPLITS_SCHEMA)).rechunk())
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.staging-"))
    incremental = old is not None
    old_files = {f["path"]: f for f in old["files"]} if old is not None else {}
    rows = table.join(offsets, on=_KEYS, how="left", maintain_order="left")
    by_split = rows.partition_by("split", as_dict=True)
    try:
        files, written = [], 0
        for split in cw.SPLIT_NAMES:
            name = f"{split}.jsonl"
            mine = by_split.get((split,), rows.clear())
            changed = (
                mine["line"].null_count() < mine.height
                or mine["_spill"].null_count() < mine.height
                or (leaving["split"] == split).any()
            )
            if incremental and name in old_files and not changed:
                link_or_copy(out / name, staging / name)
                files.append(old_files[name])
                continue
            _write_split(staging / name, mine, out / name if incremental else None, spill)
            digest = hashlib.sha256(b"".join(mine["digest"].to_list())).hexdigest()  # = split_digest
            files.append({"path": name, "paragraphs": mine.height, "bytes": (staging / name).stat().st_size,
                          "digest": digest})  # fmt: skip
            written += 1
        summary = _summary(settings, table, available, cap, table_2)
        manifest = {
            "format": FORMAT,
            "code_version": CITEWORTH_SPLITS_VERSION,
            "settings": settings,
            "inputs": inputs,
            "input_code_versions": _code_versions(store, inputs, old),
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
    # the state, each file under a new name, then state.json naming them (written last)
    tag = hashlib.sha256((out / "manifest.json").read_bytes()).hexdigest()[:16]
    cand = _pooled(root, cand, tag, spill)
    names = {"papers": f"papers-{tag}.arrow", "cand": f"cand-{tag}.arrow"}
    cs.write(papers, root / names["papers"])
    cs.write(cand, root / names["cand"])
    pool = sorted(cand["pool"].drop_nulls().unique().to_list())
    save_state(root, out / "manifest.json", cs.STATE_FORMAT,
               {**names, "days": day_files, "pool": pool, "available": available, "table_2": table_2,
                "thresholds": {f: str(v) for f, v in thresholds.items()}})  # fmt: skip
    keep = {*names.values(), *day_files.values(), *pool}
    for stale in [*root.glob("*.parquet"), *root.glob("*.arrow"), *root.glob("*.bin"), *root.glob(".*.tmp")]:
        if stale.name not in keep:
            stale.unlink(missing_ok=True)
    return {**summary, "files_written": written}


def _pooled(root: Path, cand: pl.DataFrame, tag: str, spill: Path | None) -> pl.DataFrame:
    """The candidates as the state keeps them: the new pool lines are those not released that
    have a ``line`` (appended to ``pool-<tag>.bin``) or a place in the run's ``spill`` file (left
    there); the pool files rewritten as one, streamed, when they hold :data:`_COMPACT` times the
    live pool's bytes (a full build's spill file is mostly released lines)."""
    now = cand["_now"]
    pool, offset = cand["pool"], cand["pool_offset"]
    fresh = cand.select("line").with_row_index("_i").filter(cand["line"].is_not_null() & ~now)
    if fresh.height:
        name = f"pool-{tag}.bin"
        at = cs.write_pool(root / name, fresh["line"].to_list())
        pool = pool.scatter(fresh["_i"], pl.Series([name] * fresh.height, dtype=pl.Utf8))
        offset = offset.scatter(fresh["_i"], pl.Series(at, dtype=pl.Int64))
    spilled = cand.select("_spill").with_row_index("_i").filter(cand["_spill"].is_not_null() & ~now)
    if spill is not None and spilled.height:
        pool = pool.scatter(spilled["_i"], pl.Series([spill.name] * spilled.height, dtype=pl.Utf8))
        offset = offset.scatter(spilled["_i"], spilled["_spill"])
    pool = pl.select(pl.when(now).then(None).otherwise(pool).alias("pool")).to_series()
    offset = pl.select(pl.when(now).then(None).otherwise(offset).alias("pool_offset")).to_series()
    live = pl.DataFrame([pool, cand["length"]]).filter(pool.is_not_null())
    total = sum((root / p).stat().st_size for p in live["pool"].unique().to_list())
    if (
        total > _COMPACT * int(live["length"].sum() or 0) + _COMPACT_SLACK
    ):  # mostly stale: one file of the live lines
        where = pl.DataFrame([pool, offset, cand["length"]]).with_row_index("_i").filter(pool.is_not_null())
        name = f"pool-{tag}-c.bin"
        at = cs.copy_at(root, where, "pool", "pool_offset", root / name)
        pool = pool.scatter(where["_i"], pl.Series([name] * where.height, dtype=pl.Utf8))
        offset = offset.scatter(where["_i"], pl.Series(at, dtype=pl.Int64))
    return cand.with_columns(pool, offset, now.alias("chosen")).select(list(CAND_SCHEMA))


def _summary(settings: dict, table: pl.DataFrame, available: dict, cap: int, table_2: dict) -> dict:
    keys = table.select("paper_id", "field", "split", "n_sentences")  # the narrow columns only
    by_field = {
        f: (n, s) for f, n, s in keys.group_by("field").agg(pl.len(), pl.col("n_sentences").sum()).rows()
    }
    by_split = {
        s: (n, p) for s, n, p in keys.group_by("split").agg(pl.len(), pl.col("paper_id").n_unique()).rows()
    }
    return {
        "seed": settings["seed"],
        "per_field_cap": cap,
        "available_paragraphs": sum(available.values()),
        "available_per_field": {f: available.get(f, 0) for f in CITEWORTH_FIELDS},
        "released_per_field": {f: by_field.get(f, (0, 0))[0] for f in CITEWORTH_FIELDS},
        "sentences_per_field": {f: by_field[f][1] for f in sorted(by_field)},
        "paragraphs": table.height,
        "papers": sum(p for _, p in by_split.values()),  # a paper is in one split (split_for)
        "paragraphs_per_split": {s: by_split.get(s, (0, 0))[0] for s in cw.SPLIT_NAMES},
        "papers_per_split": {s: by_split.get(s, (0, 0))[1] for s in cw.SPLIT_NAMES},
        "stats": _stats(table_2),
        "files": {s: f"{s}.jsonl" for s in cw.SPLIT_NAMES},
    }


def _code_versions(store: Store, inputs: dict, old: dict | None) -> dict[str, dict[str, str]]:
    """The manifest's ``input_code_versions``: the last manifest's for the days that did not
    change (its ``first..last`` ranges are runs of calendar days), read for the others."""
    from corpus.provenance import day_ranges

    assets = [cw.PARAGRAPHS, cw.CANDIDATES]
    if old is None or "input_code_versions" not in old:
        return input_code_versions(store, assets, inputs)
    same = {d for d, fp in inputs.items() if old["inputs"].get(d) == fp}
    out: dict[str, dict[str, str]] = {}
    for asset in assets:
        by_day = {}
        for version, ranges in old["input_code_versions"].get(asset, {}).items():
            for part in ranges.split(", "):
                first, _, last = part.partition("..")
                day, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last or first)
                while day <= end:
                    by_day[day.isoformat()] = version
                    day += dt.timedelta(days=1)
        by_day = {d: v for d, v in by_day.items() if d in same}
        fresh = input_code_versions(store, [asset], sorted(set(inputs) - same))[asset]
        for version, ranges in fresh.items():  # the changed days, read
            for part in ranges.split(", "):
                first, _, last = part.partition("..")
                day, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last or first)
                while day <= end:
                    if day.isoformat() in inputs:
                        by_day[day.isoformat()] = version
                    day += dt.timedelta(days=1)
        versions: dict[str, list[str]] = {}
        for d, v in by_day.items():
            versions.setdefault(v, []).append(d)
        out[asset] = {
            v: ", ".join(a if a == b else f"{a}..{b}" for a, b in day_ranges(ds))
            for v, ds in sorted(versions.items())
        }
    return out


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
