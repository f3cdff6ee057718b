"""A persisted index of bibliography entries and of the papers they may link: how a new day's
papers find the old entries they could link, and its entries the papers, without reading every
old entry or joining every title (used by :mod:`corpus.graph.citation_links`).

After a full link, a new day changes the links of few old entries: those that a new paper now
links better (by arXiv id, DOI or title) and those whose link pointed at a paper that changed.
Both are found here by lookups, never by a scan:

* arXiv id and DOI: sorted arrays of the entries' normalised ids (a binary search reads a few
  pages of a memory-mapped file); likewise the publication an entry names, as its (volume, page)
  key and the DOI it determines (:func:`corpus.graph.publication_links.entry_keys`), which papers
  with that journal-ref or DOI look up;
* title: the prefix filter of :func:`corpus.graph.linking.link_titles`, turned around. Each item's
  prefix 3-grams (its ``y - k(y) + 1`` rarest under one fixed global order, k as in
  :func:`corpus.graph.linking.min_overlap`; shorter for an entry whose stored link already has a high
  score) are postings sorted by ``(gram rank, short prefix or not, set size)``; a batch of
  titles looks its own prefix grams up within the size window and the position bound
  (:class:`QueryPlan`), keeps the rows that pass the signature bounds, and the survivors are
  scored exactly from their titles. Every pair with ``S > t`` meets at its first common gram
  (proof in link_titles), so nothing is lost.

The global order may never change once postings exist (both sides must rank a gram alike): it is
frozen from the paper titles of a full run, rarest first, and only extended: a gram first seen
later gets a new rank below every frozen one (it is rare). Any fixed order is correct; frequency
order keeps prefixes selective, so while it was counted on few titles it is frozen again (and the
index rebuilt from its own items) when the corpus has grown 4x (corpus.graph.citation_links).

Storage under one directory, files never modified: ``order-<id>/`` (the order) and ``seg-<id>/``
segments of entries or of papers, ``.npy`` arrays read memory-mapped. Each update adds a segment
of new items; items that leave (a paper delivered again, a link target dropped) go on a
per-segment dead list; four segments of one size tier are merged into one (live items only, the
arrays renumbered, nothing recomputed), up to ``MAX_SEGMENT`` items, so a lookup reads O(log n)
segments. Not Parquet: a lookup must read only the pages it needs, Parquet decodes whole row
groups.
"""

from __future__ import annotations

import math
import mmap
import os
import shutil
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

if TYPE_CHECKING:
    import pyarrow as pa

from corpus.graph.linking import (
    _EPS,
    _codes,
    _prefix,
    _ranges,
    _rank_sets,
    _Sets,
    _sets,
    _signatures,
    _sorted_unique,
    _Vocab,
    score_from_counts,
    with_pub_columns,
)
from corpus.graph.publication_links import PUB_COLUMNS, entry_keys

try:
    from corpus._prefix import candidates as _prefix_candidates
except ImportError as exc:  # a source checkout that was never installed
    raise ImportError(
        "corpus._prefix (the title index's C join loop, corpus/_prefix.c) is not built: "
        "run `make venv` or `pip install -e .` (needs a C compiler)"
    ) from exc

GAP = 1 << 30  # ranks below it belong to grams added after the freeze (rank GAP - 1 - i)
BASE = 1 << 24  # a posting key is (2 * rank + tail) * BASE + set size (titles of < 2^24 grams)
FANOUT = 4  # segments of one tier merged at once
TIER0 = 50_000  # entries in the smallest tier
MEMO_TITLES = 100_000  # titles whose sets a gram order remembers (a new day's entries: GramOrder.extend)
MAX_SEGMENT = 2_000_000  # no merge beyond this many entries (the memory of a merge)
_JOIN_ROWS = 4_000_000  # join rows expanded at once in a probe
QUERY_BLOCK = 50_000  # query titles planned and joined at once (a thread's share of a big probe)
ENTRY_FIELDS = ["entry_id", "citing_id", "arxiv_id", "doi", "norm_title", *PUB_COLUMNS]
KEY_FIELDS = ["pub_key", "pub_doi"]  # stored beside the fields: what the publication lookups compare
# lookups: (file prefix, column, key of a value: fixed bytes, or a 64-bit hash checked on a hit)
LOOKUPS = (("ax", "arxiv_id"), ("doi", "doi"), ("pk", "pub_key"), ("pd", "pub_doi"))


# --------------------------------------------------------------------------- small helpers


def _arrow_strings(values: pl.Series) -> pa.LargeStringArray:
    import pyarrow as pa  # at call time: the daily runs import this module's callers, not pyarrow

    arr = values.cast(pl.String).fill_null("").to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    # already large strings from polars: a cast would import pyarrow.compute (0.3 s) for nothing
    return arr if arr.type == pa.large_string() else arr.cast(pa.large_string())


def _buffers(values: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """(offsets from 0, UTF-8 bytes) of the strings (null as empty)."""
    arr = _arrow_strings(values)
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    data = data[offsets[0] : offsets[-1]] if len(offsets) else data[:0]
    return offsets - (offsets[0] if len(offsets) else 0), data


def fixed_bytes(values: pl.Series, width: int | None = None) -> np.ndarray:
    """UTF-8 of each string as a fixed-width numpy ``S`` array (sortable, searchable, mappable).

    ``width`` pads to at least that many bytes. A string must not end in NUL bytes (``S``
    arrays strip them): identifiers never do."""
    offsets, data = _buffers(values)
    lens = np.diff(offsets)
    w = max(int(lens.max()) if len(lens) else 0, width or 0, 1)
    mat = np.zeros((len(lens), w), np.uint8)
    rows = np.repeat(np.arange(len(lens)), lens)
    cols = np.arange(len(data)) - np.repeat(offsets[:-1], lens)
    mat[rows, cols] = data
    return mat.view(f"S{w}").ravel()


def fnv1a(values: pl.Series) -> np.ndarray:
    """64-bit FNV-1a of each string's UTF-8 (stable across versions and machines, unlike
    ``pl.Series.hash``), vectorised over byte positions."""
    out = np.empty(len(values), np.uint64)
    prime = np.uint64(0x100000001B3)
    for start in range(0, len(values), 100_000):
        offsets, data = _buffers(values.slice(start, 100_000))
        lens = np.diff(offsets)
        h = np.full(len(lens), 0xCBF29CE484222325, np.uint64)
        for j in range(int(lens.max()) if len(lens) else 0):
            live = np.flatnonzero(lens > j)
            h[live] = (h[live] ^ data[offsets[live] + j].astype(np.uint64)) * prime
        out[start : start + len(lens)] = h
    return out


def _short_length(x: np.ndarray, t: float) -> np.ndarray:
    """Prefix length of a set of size x against partners at least as large (see link_titles)."""
    return x - np.floor(3 * t * x / (2.0 + t) - _EPS).astype(np.int64)


def _item_prefix(sets: _Sets, link_t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(row, rank, 1-based position, the row's short prefix length) of the grams in each set's
    prefix under its own threshold (``inf``: none): ``x - k(x) + 1`` grams, k as in
    :func:`corpus.graph.linking.min_overlap`; the short prefix serves partners at least as large."""
    x = sets.sizes.astype(np.int64)
    finite = np.isfinite(link_t)
    tt = np.where(finite, link_t, 0.5)
    plen = np.where(finite, np.clip(x - np.floor(tt * x / (2.0 - tt) - _EPS).astype(np.int64), 0, x), 0)
    short = np.clip(x - np.floor(3 * tt * x / (2.0 + tt) - _EPS).astype(np.int64), 0, x)
    total = int(plen.sum())
    row = np.repeat(np.arange(len(x), dtype=np.int64), plen)
    pos0 = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(plen) - plen, plen)
    return row, sets.ranks[sets.offsets[row] + pos0], pos0 + 1, short[row]


def _split(values: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    """Views of ``values[offsets[i]:offsets[i + 1]]`` (``np.split`` is a slow loop of its own)."""
    bounds = offsets.tolist()
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _save(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(array))
        fh.flush()
        os.fsync(fh.fileno())


def _load(path: Path, maps: list[mmap.mmap] | None = None) -> np.ndarray:
    """Memory-mapped when large (a lookup touches few pages), the mapping added to ``maps`` so
    that its pages can be released (:meth:`Segment.release`); small or empty arrays are read."""
    if path.stat().st_size < (1 << 20):
        return np.load(path)
    with open(path, "rb") as fh:
        version = np.lib.format.read_magic(fh)
        header = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = header(fh)
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        offset = fh.tell()
    if maps is not None:
        maps.append(mapped)
    return np.ndarray(shape, dtype, buffer=mapped, offset=offset, order="F" if fortran else "C")


class StringColumn:
    """Strings on disk as offsets + bytes; :meth:`take` gathers rows without reading the rest."""

    def __init__(self, directory: Path, name: str):
        self.offsets = _load(directory / f"{name}.off.npy")
        self.data = _load(directory / f"{name}.dat.npy")

    @staticmethod
    def write(directory: Path, name: str, values: pl.Series) -> None:
        offsets, data = _buffers(values)
        _save(directory / f"{name}.off.npy", offsets if len(offsets) else np.zeros(1, np.int64))
        _save(directory / f"{name}.dat.npy", data)

    def take(self, rows: np.ndarray) -> pl.Series:
        import pyarrow as pa

        n = len(self.offsets) - 1
        data = self.data if len(self.data) else np.zeros(1, np.uint8)
        arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(self.offsets), pa.py_buffer(data))
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        # from buffers: pa.array() on numpy would import pandas (0.3 s)
        return pl.Series(arr.take(pa.Array.from_buffers(pa.int64(), len(rows), [None, pa.py_buffer(rows)])))


# --------------------------------------------------------------------------- the gram order


@dataclass
class GramOrder:
    """A fixed global order of 3-gram codes: ``frozen`` rarest first (rank GAP + i), then grams
    ``added`` later (rank GAP - 1 - i: rarer than any frozen one). ``titles`` counts the titles
    the frozen part was counted on."""

    frozen: np.ndarray  # uint64 codes, rarest first
    added: np.ndarray  # uint64 codes, in the order they were added
    titles: int
    _vocab: _Vocab | None = field(default=None, repr=False)
    _memo: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # title -> its set

    @classmethod
    def freeze(cls, titles: list[str]) -> GramOrder:
        parts = []
        for start in range(0, len(titles), 200_000):
            _, code = _codes(titles[start : start + 200_000])
            if len(code):
                parts.append(pl.DataFrame({"code": code}).group_by("code").len())
        if not parts:
            return cls(np.zeros(0, np.uint64), np.zeros(0, np.uint64), len(titles))
        counts = pl.concat(parts).group_by("code").agg(pl.col("len").sum()).sort(["len", "code"])
        return cls(counts["code"].to_numpy().astype(np.uint64), np.zeros(0, np.uint64), len(titles))

    @property
    def vocab(self) -> _Vocab:
        """The order as :class:`corpus.graph.linking._Vocab` (sorted codes and their ranks)."""
        if self._vocab is None:
            codes = np.concatenate([self.frozen, self.added])
            rank = np.concatenate(
                [
                    GAP + np.arange(len(self.frozen), dtype=np.int64),
                    GAP - 1 - np.arange(len(self.added), dtype=np.int64),
                ]
            )
            order = np.argsort(codes, kind="stable")
            self._vocab = _Vocab(codes[order], rank[order], space=GAP + len(self.frozen))
        return self._vocab

    def extend(self, titles: list[str]) -> int:
        """Give every gram of ``titles`` not ranked yet a rank; return how many were added.

        A run's new titles (at most ``MEMO_TITLES``) keep their sets: a new day's entries are
        looked up, then indexed, and each would compute them again (a rank never changes once
        given, so they stay right)."""
        memo = self._memo
        todo = [t for t in dict.fromkeys(titles) if t not in memo]  # a remembered title is ranked
        keep = len(todo) <= MEMO_TITLES
        vocab = self.vocab
        new, occurrences = [], []
        for start in range(0, len(todo), 200_000):
            row, code = _codes(todo[start : start + 200_000])
            at = np.minimum(np.searchsorted(vocab.codes, code), max(vocab.size - 1, 0))
            known = vocab.codes[at] == code if vocab.size else np.zeros(len(code), bool)
            if keep:  # one title chunk: its grams' ranks are known, or given below
                occurrences.append((row, code, at, known))
            new.append(code[~known])
        fresh = _sorted_unique(np.concatenate(new)) if new else np.zeros(0, np.uint64)
        before = len(self.added)
        if len(fresh):
            if before + len(fresh) >= GAP:
                raise ValueError("gram order full: more than 2^30 grams added since the freeze")
            self.added = np.concatenate([self.added, fresh.astype(np.uint64)])
            self._vocab = None
        if keep and todo:
            if len(memo) + len(todo) > MEMO_TITLES:
                memo.clear()
            row, code, at, known = occurrences[0]
            rank = np.where(known, vocab.rank[at] if vocab.size else 0, 0).astype(np.int64)
            # a fresh gram's rank as given above: GAP - 1 - its index in ``added``
            rank[~known] = GAP - 1 - (before + np.searchsorted(fresh, code[~known]))
            ranks, sizes = _rank_sets(row, rank, len(todo), vocab.bound)
            offsets = np.zeros(len(todo) + 1, np.int64)
            np.cumsum(sizes, out=offsets[1:])
            memo.update(zip(todo, _split(ranks, offsets), strict=True))
        return len(fresh)

    def sets(self, titles: list[str]) -> _Sets:
        """Each title's distinct grams as ranks of this order (every gram must be ranked)."""
        memo = self._memo
        if not memo or len(titles) > MEMO_TITLES:  # a full run's chunks: computed, never kept
            return _sets(titles, self.vocab)
        missing = [t for t in dict.fromkeys(titles) if t not in memo]
        if len(missing) == len(titles):
            return _sets(titles, self.vocab)
        extra: dict[str, np.ndarray] = {}
        if missing:
            got = _sets(missing, self.vocab)
            extra = dict(zip(missing, _split(got.ranks, got.offsets), strict=True))
        parts = [memo[t] if t in memo else extra[t] for t in titles]
        offsets = np.zeros(len(titles) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=offsets[1:])
        ranks = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        return _Sets(ranks.astype(np.int32, copy=False), offsets)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True)
        _save(directory / "frozen.npy", self.frozen)
        _save(directory / "added.npy", self.added)
        _save(directory / "titles.npy", np.array([self.titles], np.int64))

    @classmethod
    def load(cls, directory: Path) -> GramOrder:
        return cls(
            np.load(directory / "frozen.npy"),
            np.load(directory / "added.npy"),
            int(np.load(directory / "titles.npy")[0]),
        )


# --------------------------------------------------------------------------- one segment


@dataclass
class QueryPlan:
    """The key ranges a batch of query titles reads in any segment, sorted (computed once).

    A pair meets at its first common gram in both prefixes (see link_titles): against an
    item at least as large, the query's short prefix and the item's whole one; against a
    smaller item, the query's k(x) prefix and the item's short one (postings are keyed
    ``(2 * rank + tail, y)``, tail = beyond the short prefix, so each is one key range),
    inside the size window and the query gram's position bound."""

    sets: _Sets
    sig: tuple[np.ndarray, np.ndarray]
    t: float
    q_of: np.ndarray
    starts: np.ndarray
    stops: np.ndarray

    @classmethod
    def of(cls, qs: _Sets, t: float) -> QueryPlan:
        row, rank, pos = _prefix(qs, t)
        x = qs.sizes[row].astype(np.int64)
        ylo = np.ceil(x * t / (2.0 - t) - _EPS).astype(np.int64)
        yhi = np.floor(x * (2.0 - t) / t + _EPS).astype(np.int64)
        u = (1 + x - pos).astype(np.float64)
        cap_big = np.floor(u * (2.0 + t) / t - 2 * x + 1e-6).astype(np.int64)  # partner y >= x
        cap_small = np.floor((u * (2.0 + t) / t - x) / 2 + 1e-6).astype(np.int64)  # partner y < x
        a_lo, a_hi = np.maximum(ylo, x), np.where(pos <= _short_length(x, t), np.minimum(yhi, cap_big), -1)
        b_lo, b_hi = ylo, np.minimum(np.minimum(yhi, x - 1), cap_small)
        r2 = rank.astype(np.int64) * 2
        starts = np.concatenate([r2 * BASE + a_lo, (r2 + 1) * BASE + a_lo, r2 * BASE + b_lo])
        stops = np.concatenate([r2 * BASE + a_hi, (r2 + 1) * BASE + a_hi, r2 * BASE + b_hi])
        valid = np.concatenate([a_hi >= a_lo, a_hi >= a_lo, b_hi >= b_lo])
        q_of = np.concatenate([row, row, row])[valid]
        starts, stops = starts[valid], stops[valid]
        order = np.argsort(starts, kind="stable")  # sorted needles: one pass over the keys
        return cls(qs, _signatures(qs), t, q_of[order], starts[order], stops[order])


class Segment:
    """Items (entries, or papers keyed by their own id) sorted by ``citing_id``, with their title
    postings and id lookups (read-only)."""

    def __init__(self, directory: Path, dead: np.ndarray | None = None):
        self.dir = directory
        self._maps: list[mmap.mmap] = []
        m = self._maps
        self.citing = _load(directory / "citing.npy", m)
        self.size = _load(directory / "size.npy", m)
        self.sig = _load(directory / "sig.npy", m)
        self.post_key = _load(directory / "post_key.npy", m)
        self.post_row = _load(directory / "post_row.npy", m)
        self.post_sig = _load(directory / "post_sig.npy", m)
        self.ax_key = _load(directory / "ax_key.npy", m)
        self.ax_row = _load(directory / "ax_row.npy", m)
        self.doi_key = _load(directory / "doi_key.npy", m)
        self.doi_row = _load(directory / "doi_row.npy", m)
        self.pk_key, self.pk_row = _load(directory / "pk_key.npy", m), _load(directory / "pk_row.npy", m)
        self.pd_key, self.pd_row = _load(directory / "pd_key.npy", m), _load(directory / "pd_row.npy", m)
        self.link_t = _load(directory / "link_t.npy", m)
        self.dead = dead if dead is not None else np.zeros(0, np.int64)

    @property
    def n(self) -> int:
        return len(self.size)

    def release(self) -> None:
        """Unmap from this process the pages its lookups touched (they stay in the page cache):
        a probe of every segment then holds one segment's pages at a time, not the index's."""
        for mapped in self._maps if hasattr(mmap, "MADV_DONTNEED") else ():  # Linux, macOS, BSDs
            mapped.madvise(mmap.MADV_DONTNEED)

    @property
    def live(self) -> int:
        return self.n - len(self.dead)

    def column(self, name: str) -> StringColumn:
        return StringColumn(self.dir, name)

    @staticmethod
    def build(directory: Path, entries: pl.DataFrame, order: GramOrder, t: float) -> None:
        """Write a segment of ``entries`` (ENTRY_FIELDS, arxiv_id and doi normalised, and
        optionally ``link_t``); every gram of their titles must be in ``order`` already.

        ``link_t`` is an item's own title threshold (null: ``t``): its postings find the partners
        with ``S > link_t`` only. An entry linked by title with score s needs partners with
        ``S >= s`` (a higher score, or the same from a smaller paper id): ``link_t = s - 1e-9``,
        a shorter prefix; one linked by an identifier can never lose to a title: ``inf``, none."""
        directory.mkdir(parents=True)
        if "link_t" not in entries.columns:
            entries = entries.with_columns(pl.lit(None, pl.Float64).alias("link_t"))
        frame = with_pub_columns(entries).select([*ENTRY_FIELDS, "link_t"]).sort("citing_id", "entry_id")
        frame = entry_keys(frame)
        titles = frame["norm_title"].fill_null("").to_list()
        sets = order.sets(titles)
        sizes = sets.sizes.astype(np.int64)
        sig0, sig1 = _signatures(sets)
        link_t = np.maximum(frame["link_t"].fill_null(t).to_numpy().astype(np.float64), t)
        row, rank, pos, short = _item_prefix(sets, link_t)
        y = sizes[row]
        if len(y) and y.max() >= BASE:
            raise ValueError(f"a title of {int(y.max())} distinct 3-grams: more than an index key holds")
        tail = pos > short  # beyond the short prefix: only for smaller partners
        key = (rank.astype(np.int64) * 2 + tail) * BASE + y
        by_key = np.argsort(key, kind="stable")
        _save(directory / "citing.npy", fixed_bytes(frame["citing_id"]))
        _save(directory / "size.npy", sizes.astype(np.int32))
        _save(directory / "sig.npy", np.stack([sig0, sig1], axis=1))
        _save(directory / "post_key.npy", key[by_key])
        _save(directory / "post_row.npy", row[by_key].astype(np.int32))
        _save(directory / "post_sig.npy", sig0[row[by_key]])  # read in key order: no random gathers
        for kind, column in LOOKUPS:
            keys = fixed_bytes if kind == "ax" else fnv1a
            values = frame[column].fill_null("")  # a lookup: sorted keys and their rows
            has = np.flatnonzero((values.str.len_bytes() > 0).to_numpy())
            key = keys(values.gather(has))
            by = np.argsort(key, kind="stable")
            _save(directory / f"{kind}_key.npy", key[by])
            _save(directory / f"{kind}_row.npy", has[by].astype(np.int64))
        for name in ENTRY_FIELDS + KEY_FIELDS:
            StringColumn.write(directory, name, frame[name])
        _save(directory / "link_t.npy", link_t)

    @staticmethod
    def merge(directory: Path, parts: list[Segment]) -> None:
        """Write one segment of the live items of ``parts``: their arrays concatenated, rows
        renumbered and sorted again, nothing computed again from the titles (the postings of an
        item depend only on its set, its threshold and the fixed gram order)."""
        directory.mkdir(parents=True)
        live = [np.flatnonzero(p._alive(np.arange(p.n))) for p in parts]
        width = max([p.citing.dtype.itemsize for p in parts] + [1])
        citing = np.concatenate(
            [np.asarray(p.citing[rows]).astype(f"S{width}") for p, rows in zip(parts, live, strict=True)]
        )
        order = np.argsort(citing, kind="stable")  # items sorted by citing_id again
        new_pos = np.empty(len(order), np.int64)
        new_pos[order] = np.arange(len(order))
        # old row -> new row, per part (-1: dead)
        maps, base = [], 0
        for p, rows in zip(parts, live, strict=True):
            m = np.full(p.n, -1, np.int64)
            m[rows] = new_pos[base + np.arange(len(rows))]
            maps.append(m)
            base += len(rows)

        def items(name: str) -> np.ndarray:
            return np.concatenate(
                [np.asarray(getattr(p, name)[rows]) for p, rows in zip(parts, live, strict=True)]
            )[order]

        _save(directory / "citing.npy", citing[order])
        for name in ("size", "sig", "link_t"):
            _save(directory / f"{name}.npy", items(name))
        keys, rows_, sigs = [], [], []
        for p, m in zip(parts, maps, strict=True):
            new = m[np.asarray(p.post_row, dtype=np.int64)]
            keep = new >= 0
            keys.append(np.asarray(p.post_key)[keep])
            rows_.append(new[keep])
            sigs.append(np.asarray(p.post_sig)[keep])
        key = np.concatenate(keys)
        by_key = np.argsort(key, kind="stable")  # sorted runs: a merge
        _save(directory / "post_key.npy", key[by_key])
        _save(directory / "post_row.npy", np.concatenate(rows_)[by_key].astype(np.int32))
        _save(directory / "post_sig.npy", np.concatenate(sigs)[by_key])
        for kind, _ in LOOKUPS:
            ks, rs = [], []
            for p, m in zip(parts, maps, strict=True):
                new = m[np.asarray(getattr(p, f"{kind}_row"), dtype=np.int64)]
                keep = new >= 0
                ks.append(np.asarray(getattr(p, f"{kind}_key"))[keep])
                rs.append(new[keep])
            if kind == "ax":
                w = max([k.dtype.itemsize for k in ks] + [1])
                ks = [k.astype(f"S{w}") for k in ks]
            k_all = np.concatenate(ks)
            by = np.argsort(k_all, kind="stable")
            _save(directory / f"{kind}_key.npy", k_all[by])
            _save(directory / f"{kind}_row.npy", np.concatenate(rs)[by])
        for name in ENTRY_FIELDS + KEY_FIELDS:
            values = pl.concat([p.column(name).take(rows) for p, rows in zip(parts, live, strict=True)])
            StringColumn.write(directory, name, values.gather(order))

    def _alive(self, rows: np.ndarray) -> np.ndarray:
        if len(self.dead) == 0 or len(rows) == 0:
            return np.ones(len(rows), bool)
        at = np.minimum(np.searchsorted(self.dead, rows), len(self.dead) - 1)
        return self.dead[at] != rows

    def rows_of_citing(self, citing: np.ndarray) -> np.ndarray:
        """Live rows whose citing_id is one of ``citing`` (fixed bytes)."""
        if self.n == 0 or len(citing) == 0:
            return np.zeros(0, np.int64)
        w = self.citing.dtype.itemsize
        q = citing[np.char.str_len(citing) <= w].astype(f"S{w}")
        lo = np.searchsorted(self.citing, q, side="left")
        hi = np.searchsorted(self.citing, q, side="right")
        rows = np.concatenate(
            [np.arange(a, b) for a, b in zip(lo, hi, strict=True) if b > a] or [np.zeros(0)]
        )
        rows = rows.astype(np.int64)
        return rows[self._alive(rows)]

    def rows_of_arxiv(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(query index, live row) of entries whose normalised arXiv id is ``ids[query]``."""
        if len(self.ax_key) == 0 or len(ids) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        w = self.ax_key.dtype.itemsize
        ok = np.flatnonzero(np.char.str_len(ids) <= w)
        q = ids[ok].astype(f"S{w}")
        lo = np.searchsorted(self.ax_key, q, side="left")
        hi = np.searchsorted(self.ax_key, q, side="right")
        return self._expand(ok, lo, hi, self.ax_row)

    def rows_of_doi(self, dois: pl.Series) -> tuple[np.ndarray, np.ndarray]:
        """(query index, live row) of entries whose normalised DOI is ``dois[query]``."""
        return self.rows_of("doi", "doi", dois)

    def rows_of(self, kind: str, column: str, values: pl.Series) -> tuple[np.ndarray, np.ndarray]:
        """(query index, live row) of entries whose ``column`` (a hashed lookup: doi, pub_key,
        pub_doi) is ``values[query]``."""
        table, row_of = getattr(self, f"{kind}_key"), getattr(self, f"{kind}_row")
        if len(table) == 0 or len(values) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        h = fnv1a(values)
        lo = np.searchsorted(table, h, side="left")
        hi = np.searchsorted(table, h, side="right")
        q, r = self._expand(np.arange(len(values)), lo, hi, row_of)
        if len(q) == 0:
            return q, r
        same = (self.column(column).take(r) == values.gather(q)).to_numpy()  # a hash is not proof
        return q[same], r[same]

    def _expand(self, queries, lo, hi, row_of) -> tuple[np.ndarray, np.ndarray]:
        q_parts, r_parts = [], []
        for which, pos in _ranges(lo, hi, _JOIN_ROWS):
            q_parts.append(queries[which])
            r_parts.append(np.asarray(row_of[pos], dtype=np.int64))
        if not q_parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        q, r = np.concatenate(q_parts), np.concatenate(r_parts)
        keep = self._alive(r)
        return q[keep], r[keep]

    def title_candidates(self, plan: QueryPlan):
        """(query row, live entry row) of every pair that may have ``S > t``: a superset of them
        (the plan's key ranges, then the signature bounds: the first word copied into the
        postings, then both words; :mod:`corpus._prefix`, one pass over the postings read)."""
        empty = np.zeros(0, np.int64), np.zeros(0, np.int64)
        if self.n == 0 or len(plan.starts) == 0:
            return empty
        lo = np.searchsorted(self.post_key, plan.starts)
        hi = np.searchsorted(self.post_key, plan.stops, side="right")
        c = np.ascontiguousarray
        pair = np.frombuffer(
            _prefix_candidates(
                c(self.post_key, np.int64), c(self.post_sig, np.uint64), c(self.post_row, np.int32),
                c(self.sig, np.uint64), c(lo, np.int64), c(hi, np.int64), c(plan.q_of, np.int64),
                c(plan.sets.sizes, np.int64), c(plan.sig[0], np.uint64), c(plan.sig[1], np.uint64),
                float(plan.t), _EPS, BASE - 1, self.n,
            ),
            dtype=np.int64,
        )  # fmt: skip
        if not len(pair):
            return empty
        pair = _sorted_unique(pair)
        q, r = pair // self.n, pair % self.n
        keep = self._alive(r)
        return q[keep], r[keep]


# --------------------------------------------------------------------------- overlap


def pair_overlap(a: _Sets, a_rows: np.ndarray, b: _Sets, b_rows: np.ndarray, space: int) -> np.ndarray:
    """``|A ∩ B|`` of each pair (``a`` row, ``b`` row), both sets as ranks of one order."""
    n = len(a_rows)
    if n == 0:
        return np.zeros(0, np.int64)
    keys = []
    for sets, rows in ((a, a_rows), (b, b_rows)):
        sizes = sets.sizes[rows]
        total = int(sizes.sum())
        pair = np.repeat(np.arange(n, dtype=np.int64), sizes)
        idx = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        idx += np.repeat(sets.offsets[rows], sizes)
        keys.append(pair * np.int64(space) + sets.ranks[idx])
    key = np.sort(np.concatenate(keys))
    dup = np.flatnonzero(key[1:] == key[:-1])
    return np.bincount(key[dup] // np.int64(space), minlength=n)


def _title_matches(seg: Segment, plan: QueryPlan, order: GramOrder, space: int):
    """(query row, live item row, score) of the segment's items with ``S > t`` against the plan's
    queries: the candidates, scored exactly from the items' titles."""
    q, r = seg.title_candidates(plan)
    if len(q) == 0:
        return q, r, np.zeros(0)
    rows, inv = np.unique(r, return_inverse=True)
    es = order.sets(seg.column("norm_title").take(rows).to_list())
    inter = pair_overlap(plan.sets, q, es, inv, space)
    score = score_from_counts(inter, plan.sets.sizes[q], es.sizes[inv])
    ok = score > plan.t
    return q[ok], r[ok], score[ok]


# --------------------------------------------------------------------------- the index


class Side:
    """One kind of item of an index (bibliography entries, or papers as link targets): its
    segments, each with the name of its current dead list."""

    def __init__(self, index: TitleIndex, listed: list[dict]):
        self.index = index
        self.segments: list[tuple[str, Segment, str | None]] = []
        for seg in listed:
            path = index.root / seg["name"]
            dead = np.load(path / seg["dead"]) if seg["dead"] else None
            self.segments.append((seg["name"], Segment(path, dead), seg["dead"]))
        self.new_dead: dict[str, np.ndarray] = {}

    @property
    def live(self) -> int:
        return sum(s.live for _, s, _ in self.segments)

    def _each(self) -> Iterator[tuple[int, Segment]]:
        """Each segment with its index, its mapped pages released once the caller is done with it
        (a lookup over every segment holds one segment's pages, whatever the index's size)."""
        for i, (_, seg, _) in enumerate(self.segments):
            try:
                yield i, seg
            finally:
                seg.release()

    def add(self, items: pl.DataFrame, ranked: bool = False) -> None:
        """A new segment of ``items`` (ENTRY_FIELDS; their titles' grams get ranks first, unless
        the caller ``ranked`` them already: a full run's chunk, looked up before it is indexed)."""
        if items.height == 0:
            return
        if not ranked:
            self.index.extend_order(items["norm_title"].fill_null("").to_list())
        name = f"seg-{uuid.uuid4().hex}"
        Segment.build(self.index.root / name, items, self.index.order, self.index.t)
        self.segments.append((name, Segment(self.index.root / name), None))

    def kill(self, i: int, rows: np.ndarray) -> None:
        """Mark rows of segment ``i`` dead (their items left the corpus)."""
        if len(rows) == 0:
            return
        name, seg, _ = self.segments[i]
        seg.dead = _sorted_unique(np.concatenate([seg.dead, np.asarray(rows, np.int64)]))
        self.new_dead[name] = seg.dead

    def kill_citing(self, citing_ids: pl.Series) -> int:
        """Kill every live item of these citing ids (for papers: their own ids); return how many."""
        if len(citing_ids) == 0:
            return 0
        q = fixed_bytes(citing_ids)
        killed = 0
        for i, seg in self._each():
            rows = seg.rows_of_citing(q)
            self.kill(i, rows)
            killed += len(rows)
        return killed

    def fields(self, i: int, rows: np.ndarray, ids_only: bool = False) -> pl.DataFrame:
        """ENTRY_FIELDS and ``link_t`` of rows of segment ``i`` (empty ids as null); only
        ``entry_id, citing_id`` with ``ids_only`` (what a candidate needs until it is kept)."""
        seg = self.segments[i][1]
        rows = np.asarray(rows, np.int64)
        names = ENTRY_FIELDS[:2] if ids_only else ENTRY_FIELDS
        frame = pl.DataFrame({name: seg.column(name).take(rows) for name in names})
        if ids_only:
            return frame
        frame = frame.with_columns(pl.Series("link_t", np.asarray(seg.link_t[rows]), dtype=pl.Float64))
        seg.release()
        return frame.with_columns(
            [pl.when(pl.col(c) == "").then(None).otherwise(pl.col(c)).alias(c) for c in ("arxiv_id", "doi")]
        )

    def live_fields(self, i: int) -> pl.DataFrame:
        seg = self.segments[i][1]
        return self.fields(i, np.flatnonzero(seg._alive(np.arange(seg.n))))

    def match_arxiv(self, ids: pl.Series) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Per segment (index, query row, item row) of live items naming these arXiv ids."""
        q = fixed_bytes(ids)
        return [(i, *seg.rows_of_arxiv(q)) for i, seg in self._each()]

    def match_doi(self, dois: pl.Series) -> list[tuple[int, np.ndarray, np.ndarray]]:
        return [(i, *seg.rows_of_doi(dois)) for i, seg in self._each()]

    def match_publications(self, keys: pl.Series, dois: pl.Series) -> list[tuple[int, np.ndarray]]:
        """Per segment (index, live rows) of items naming a publication with one of these
        (volume, page) ``keys`` or whose publication determines one of these ``dois``."""
        out = []
        for i, seg in self._each():
            rows = [seg.rows_of("pk", "pub_key", keys)[1], seg.rows_of("pd", "pub_doi", dois)[1]]
            out.append((i, _sorted_unique(np.concatenate(rows))))
        return out

    def match_titles(
        self, titles: list[str], workers: int = 1
    ) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        """Per segment (index, query row, item row, score) of live items with ``S > t`` against a
        query title (normalised; its grams must be ranked: :meth:`TitleIndex.extend_order`).

        The queries go in blocks of ``QUERY_BLOCK`` titles over ``workers`` threads (the join loop,
        the sorts and the searches release the GIL): a full run's chunks use every core."""
        order, t = self.index.order, self.index.t
        space = order.vocab.bound
        starts = range(0, len(titles), QUERY_BLOCK)
        out = []
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(starts)))) as pool:
            plans = list(
                pool.map(lambda r0: (r0, QueryPlan.of(order.sets(titles[r0 : r0 + QUERY_BLOCK]), t)), starts)
            )
            for i, seg in self._each():
                found = pool.map(
                    partial(_title_matches, seg, order=order, space=space), (p for _, p in plans)
                )
                parts = [(r0 + q, r, sc) for (r0, _), (q, r, sc) in zip(plans, found, strict=True) if len(q)]
                if parts:
                    out.append((i, *(np.concatenate(a) for a in zip(*parts, strict=True))))
        return out

    def compact(self) -> None:
        """Merge ``FANOUT`` segments of one size tier (and rewrite mostly dead ones)."""
        while True:
            tiers: dict[int, list[int]] = {}
            for i, (_, seg, _) in enumerate(self.segments):
                if seg.live == 0 or len(seg.dead) * 2 > seg.n:
                    tiers.setdefault(-1, []).append(i)  # rewrite alone (or drop when empty)
                    continue
                tier = int(math.log(seg.live / TIER0, FANOUT)) if seg.live >= TIER0 else 0
                tiers.setdefault(tier, []).append(i)
            group = tiers.get(-1, [])[:1]
            if not group:
                for _tier, members in sorted(tiers.items()):
                    total = sum(self.segments[i][1].live for i in members[:FANOUT])
                    if len(members) >= FANOUT and total <= MAX_SEGMENT:
                        group = members[:FANOUT]
                        break
            if not group:
                return
            name = f"seg-{uuid.uuid4().hex}"
            Segment.merge(self.index.root / name, [self.segments[i][1] for i in group])
            for i in group:
                self.segments[i][1].release()
            for i in group:
                self.index.obsolete_paths.append(self.index.root / self.segments[i][0])
                self.new_dead.pop(self.segments[i][0], None)
            self.segments = [s for k, s in enumerate(self.segments) if k not in group]
            merged = Segment(self.index.root / name)
            if merged.n:
                self.segments.append((name, merged, None))
            else:
                self.index.obsolete_paths.append(self.index.root / name)

    def manifest(self) -> list[dict]:
        """Write the new dead lists; the segments as the manifest lists them."""
        out = []
        for k, (name, seg, dead_name) in enumerate(self.segments):
            if name in self.new_dead:
                if dead_name:
                    self.index.obsolete_paths.append(self.index.root / name / dead_name)
                dead_name = f"dead-{uuid.uuid4().hex}.npy"
                _save(self.index.root / name / dead_name, self.new_dead.pop(name))
                self.segments[k] = (name, seg, dead_name)
            out.append({"name": name, "items": seg.n, "dead": dead_name})
        return out


class TitleIndex:
    """A shard's index: bibliography ``entries`` (probed by new link targets) and link targets,
    ``papers`` (probed by new entries), under one gram order, as named by a manifest.

    Changes write new files only; :meth:`manifest` names the new state and ``obsolete_paths``
    the files it no longer uses (to delete once the manifest is committed)."""

    SIDES = ("entries", "papers")

    def __init__(self, root: Path, manifest: dict | None, t: float):
        self.root = root
        self.t = t
        self.obsolete_paths: list[Path] = []
        self.old_order = manifest["order"] if manifest else None
        if manifest is None:
            self.order = GramOrder.freeze([])
            self.order_name: str | None = None
            self.entries, self.papers = Side(self, []), Side(self, [])
            return
        if manifest.get("t") != t:
            raise ValueError(f"index built for threshold {manifest.get('t')}, asked for {t}")
        self.order_name = manifest["order"]
        self.order = GramOrder.load(root / self.order_name)
        self.entries, self.papers = Side(self, manifest["entries"]), Side(self, manifest["papers"])

    def extend_order(self, titles: list[str]) -> None:
        """Rank the grams of these titles not ranked yet (before their sets are computed)."""
        if self.order.extend(titles):
            self.order_name = None

    def refreeze(self, titles: list[str]) -> None:
        """A new frequency order from ``titles``; every segment is rebuilt in it from its own
        live items (call it when the corpus has outgrown the order, see the module doc)."""
        frames = {}
        for name in self.SIDES:
            side = getattr(self, name)
            frames[name] = [side.live_fields(i) for i in range(len(side.segments))]
            self.obsolete_paths += [self.root / seg for seg, _, _ in side.segments]
            side.segments, side.new_dead = [], {}
        self.order = GramOrder.freeze(titles)
        self.order_name = None
        for name in self.SIDES:
            for frame in frames[name]:
                getattr(self, name).add(frame)

    def manifest(self) -> dict:
        """Write what is new (order, dead lists) and return the manifest naming this state."""
        if self.order_name is None:
            self.order_name = f"order-{uuid.uuid4().hex}"
            self.order.save(self.root / self.order_name)
            if self.old_order:
                self.obsolete_paths.append(self.root / self.old_order)
        return {
            "t": self.t,
            "order": self.order_name,
            "titles": self.order.titles,
            "entries": self.entries.manifest(),
            "papers": self.papers.manifest(),
        }

    def named(self) -> set[str]:
        """Every file or directory name the manifest uses at the top of the index directory."""
        return {
            self.order_name or "",
            *(n for side in (self.entries, self.papers) for n, _, _ in side.segments),
        }


def remove_paths(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
