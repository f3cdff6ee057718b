"""Bibliography linking: exact arXiv-id / DOI links, then the S2ORC title score.

S2ORC (s2orc-paper.txt §2.6, SPEC.md §5) links each bib entry to the paper whose
normalised title has the highest score ``S`` above 0.8, where, for the sets of
character 3-grams ``N1`` and ``N2`` of the two normalised titles::

    J = |N1 ∩ N2| / |N1 ∪ N2|            (Jaccard)
    C = |N1 ∩ N2| / min(|N1|, |N2|)      (containment over the smaller set)
    S = 2·J·C / (J + C)                  (their harmonic mean)

Exact identifiers in the bib entry win over titles (arXiv id first, then DOI). Entries that
neither link are then linked by the publication they name (journal, volume, page) to a paper's
journal-ref or DOI, when exactly one paper matches (:mod:`corpus.graph.publication_links`).
A paper citing itself is never a link, whatever the way it was found.

The fast linker (:func:`link_titles`) never enumerates all pairs: it joins the
rarest 3-grams of each title (prefix filtering) under size and position bounds
derived from ``S`` (proof in :func:`link_titles`), then computes ``S`` exactly
for the surviving pairs with the same float expression as :func:`title_score`,
so its links are identical to the exhaustive scorer's
(:func:`link_titles_exhaustive`); the tests check this on real and generated titles.

Frames (polars):

* entries: ``entry_id`` (unique), ``citing_id``, ``arxiv_id``, ``doi``, ``norm_title`` and the
  publication columns ``pub_journal, pub_volume, pub_page, pub_year`` (all but the ids nullable;
  :func:`link_titles` only needs the id columns and ``norm_title``; missing publication columns
  are null);
* papers: ``paper_id`` (unique, the canonical arXiv id), ``doi``, ``norm_title``, ``journal_ref``
  (or its publication columns already; missing: null);
* links: ``entry_id, citing_id, cited_id, via, score`` with ``via`` one of
  ``arxiv_id | doi | title | doi_derived | publication`` and ``score`` 1.0 for all but title
  links; one row per linked entry, unlinked entries have no row.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl

from corpus.graph.publication_links import PUB_COLUMNS, link_publications, with_publications
from corpus.ingest import arxiv_ids
from corpus.papers.normalize import normalize_dois, normalize_title

# The version of citation_links (corpus.versions): bump it whenever their rows change.
LINKING_VERSION = (
    "corpus.graph.linking/3"  # 2: links by publication (doi_derived, publication); 3: more journal names read
)

TITLE_THRESHOLD = 0.8
VIA_RANK = {"arxiv_id": 0, "doi": 1, "title": 2, "doi_derived": 3, "publication": 4}

LINK_SCHEMA = {
    "entry_id": pl.String,
    "citing_id": pl.String,
    "cited_id": pl.String,
    "via": pl.String,
    "score": pl.Float64,
}

# Budget of prefix-join rows expanded at once (bounds memory of one slice).
_SLICE_ROWS = 2_000_000
_SIGNATURE_ROWS = 200_000  # titles per block in _signatures
_ENTRY_BLOCK = 50_000  # entries whose prefix queries are built at once
# Threads over entry blocks: the machine's cores, at most 8 (each holds a slice of join rows,
# ~200 MB; beyond that shards of citation_links use more cores, see corpus.graph.citation_links).
LINK_WORKERS = max(1, min(os.cpu_count() or 1, 8))
_EPS = 1e-9


class LinkingInputError(ValueError):
    """An input frame lacks a column, has duplicate ids or an invalid threshold."""


# ---------------------------------------------------------------------------
# Title normalisation and the score
# ---------------------------------------------------------------------------


def trigrams(norm_title: str) -> frozenset[str]:
    """The set of character 3-grams of a normalised title (empty below 3 characters)."""
    return frozenset(norm_title[i : i + 3] for i in range(len(norm_title) - 2))


def score_from_counts(inter, size_a, size_b):
    """``S`` from the overlap and the two set sizes; numpy-vectorised, 0 where nothing overlaps.

    One float expression for every caller (scalar score, exhaustive and fast
    linkers), so all of them produce bit-identical scores and thresholds agree.
    """
    i = np.asarray(inter, dtype=np.float64)
    a = np.asarray(size_a, dtype=np.float64)
    b = np.asarray(size_b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        j = i / (a + b - i)
        c = i / np.minimum(a, b)
        s = 2.0 * j * c / (j + c)
    return np.where(i > 0, s, 0.0)


def title_score(a: str, b: str, *, normalized: bool = False) -> float:
    """S2ORC's title similarity of two titles (normalised here unless ``normalized``)."""
    na, nb = (a, b) if normalized else (normalize_title(a), normalize_title(b))
    ga, gb = trigrams(na), trigrams(nb)
    return float(score_from_counts(len(ga & gb), len(ga), len(gb)))


def _check_threshold(threshold: float) -> float:
    t = float(threshold)
    if not 0.0 < t < 1.0:
        raise LinkingInputError(f"threshold must be in (0, 1), got {threshold!r}")
    return t


def min_overlap(size: int, threshold: float = TITLE_THRESHOLD) -> int:
    """A lower bound on ``|N1 ∩ N2|`` for any partner when ``S > threshold`` (see link_titles)."""
    t = _check_threshold(threshold)
    return math.floor(t * size / (2.0 - t) - _EPS) + 1


# ---------------------------------------------------------------------------
# Frame checks
# ---------------------------------------------------------------------------


def _require(frame: pl.DataFrame, name: str, columns: list[str], unique: str | None) -> pl.DataFrame:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise LinkingInputError(f"{name} frame lacks column(s) {missing}; has {frame.columns}")
    out = frame.select([pl.col(c).cast(pl.String) for c in columns])
    if unique is not None:
        if out[unique].null_count():
            raise LinkingInputError(f"{name}.{unique} has {out[unique].null_count()} null value(s)")
        dup = out[unique].is_duplicated()
        if dup.any():
            examples = out.filter(dup)[unique].unique().head(3).to_list()
            raise LinkingInputError(f"{name}.{unique} is not unique, e.g. {examples}")
    return out


# ---------------------------------------------------------------------------
# 3-gram sets as integer arrays
# ---------------------------------------------------------------------------

_CHUNK_TITLES = 200_000


def _codes(titles: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(row, code) of every 3-gram occurrence; a code packs 3 code points (21 bits each)."""
    lens = np.fromiter((len(t) for t in titles), dtype=np.int64, count=len(titles))
    n_grams = np.maximum(lens - 2, 0)
    total = int(n_grams.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    buf = np.frombuffer("".join(titles).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    starts = np.cumsum(lens) - lens
    gstarts = np.cumsum(n_grams) - n_grams
    row = np.repeat(np.arange(len(titles), dtype=np.int64), n_grams)
    pos = np.arange(total, dtype=np.int64) + np.repeat(starts - gstarts, n_grams)
    code = (buf[pos] << np.uint64(42)) | (buf[pos + 1] << np.uint64(21)) | buf[pos + 2]
    return row, code


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (numpy's hash-based ``unique`` is slower here)."""
    a = np.sort(a)
    if len(a) < 2:
        return a
    keep = np.empty(len(a), bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def _chunks(titles: list[str]) -> Iterator[tuple[int, list[str]]]:
    for start in range(0, len(titles), _CHUNK_TITLES):
        yield start, titles[start : start + _CHUNK_TITLES]


@dataclass
class _Vocab:
    codes: np.ndarray  # sorted distinct codes
    rank: np.ndarray  # rank[k] = global order of codes[k] (rarest first)
    space: int = 0  # every rank is below it (0: the number of codes, ranks 0..size-1)

    @property
    def size(self) -> int:
        return len(self.codes)

    @property
    def bound(self) -> int:
        """An exclusive upper bound of the ranks (at least 1): keys pack ``row * bound + rank``."""
        return max(self.space or self.size, 1)


def _vocab(sides: list[list[str]]) -> _Vocab:
    """Global 3-gram order: ascending occurrence count, ties by code (any fixed order is correct;
    rarest-first makes prefixes selective)."""
    parts = []
    for titles in sides:
        for _, chunk in _chunks(titles):
            _, code = _codes(chunk)
            if len(code):
                parts.append(pl.DataFrame({"code": code}).group_by("code").len())
    if not parts:
        return _Vocab(np.zeros(0, np.uint64), np.zeros(0, np.int64))
    vc = pl.concat(parts).group_by("code").agg(pl.col("len").sum()).sort(["len", "code"])
    by_rank = vc["code"].to_numpy()
    order = np.argsort(by_rank, kind="stable")
    rank = np.empty(len(by_rank), np.int64)
    rank[:] = order  # rank of the k-th smallest code is its index in by_rank
    return _Vocab(by_rank[order], rank)


@dataclass
class _Sets:
    """Each title's distinct 3-grams as ranks, sorted ascending (rarest first), in CSR form."""

    ranks: np.ndarray  # int32, concatenated per row
    offsets: np.ndarray  # int64, len n + 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)


def _sets(titles: list[str], vocab: _Vocab) -> _Sets:
    ranks_parts, sizes_parts = [], []
    for _, chunk in _chunks(titles):
        ranks, sizes = _chunk_sets(*_codes(chunk), len(chunk), vocab)
        ranks_parts.append(ranks)
        sizes_parts.append(sizes)
    sizes = np.concatenate(sizes_parts) if sizes_parts else np.zeros(0, np.int64)
    offsets = np.zeros(len(titles) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    ranks = np.concatenate(ranks_parts) if ranks_parts else np.zeros(0, np.int32)
    return _Sets(ranks, offsets)


def _chunk_sets(row: np.ndarray, code: np.ndarray, n: int, vocab: _Vocab) -> tuple[np.ndarray, np.ndarray]:
    """(ranks, sizes) of the sets of ``n`` titles from their gram occurrences (:func:`_codes`)."""
    r = vocab.rank[np.searchsorted(vocab.codes, code)] if len(code) else np.zeros(0, np.int64)
    return _rank_sets(row, r, n, vocab.bound)


def _rank_sets(row: np.ndarray, rank: np.ndarray, n: int, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """(ranks, sizes) of the sets of ``n`` titles from their grams' ranks (all below ``bound``)."""
    v = np.int64(bound)
    key = _sorted_unique(row * v + rank)
    rows = key // v
    return (key - rows * v).astype(np.int32), np.bincount(rows, minlength=n)


def _prefix(
    sets: _Sets, t: float, smaller: bool = False, rows: tuple[int, int] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, rank, 1-based position) of the first ``x - k(x) + 1`` grams of each set.

    ``k(x) = floor(t·x/(2-t)) + 1`` for any partner; ``floor(3t·x/(2+t)) + 1`` when
    the set is the smaller (or equal) of the pair (see link_titles)."""
    r0, r1 = rows if rows is not None else (0, len(sets.sizes))
    x = sets.sizes[r0:r1]
    low = 3 * t * x / (2.0 + t) if smaller else t * x / (2.0 - t)
    plen = np.clip(x - np.floor(low - _EPS).astype(np.int64), 0, x)
    total = int(plen.sum())
    row = np.repeat(np.arange(r0, r1, dtype=np.int64), plen)
    pstart = np.cumsum(plen) - plen
    pos0 = np.arange(total, dtype=np.int64) - np.repeat(pstart, plen)
    idx = sets.offsets[row] + pos0
    return row, sets.ranks[idx], pos0 + 1


# ---------------------------------------------------------------------------
# Title linking
# ---------------------------------------------------------------------------

_TITLE_LINK_SCHEMA = {"entry_id": pl.String, "cited_id": pl.String, "score": pl.Float64}


def _pick_best(e_row, p_row, score, p_order) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per entry, the highest score; ties go to the smallest ``paper_id`` (string order)."""
    if len(e_row) == 0:
        return e_row, p_row, score
    order = np.lexsort((p_order[p_row], -score, e_row))
    e_s = e_row[order]
    first = np.ones(len(order), bool)
    first[1:] = e_s[1:] != e_s[:-1]
    keep = order[first]
    return e_row[keep], p_row[keep], score[keep]


def link_titles(
    entries: pl.DataFrame, papers: pl.DataFrame, threshold: float = TITLE_THRESHOLD
) -> pl.DataFrame:
    """Link each entry to the paper with the highest title score ``S > threshold``.

    Input ``entries[entry_id, citing_id, norm_title]`` and ``papers[paper_id,
    norm_title]`` (titles already passed through :func:`normalize_title`); output
    ``[entry_id, cited_id, score]``, one row per linked entry, sorted by entry_id.
    The candidate whose ``paper_id`` equals the entry's ``citing_id`` is never
    considered (no self-citations); among equal best scores the smallest
    ``paper_id`` (string order) wins, so the result does not depend on row order.

    Why no pair with ``S > t`` is lost.  Let ``a = |N1|``, ``b = |N2|``,
    ``m = min(a, b)``, ``M = max(a, b)`` and ``i = |N1 ∩ N2| > 0``.  With
    ``J = i/(a+b-i)`` and ``C = i/m``::

        S = 2 / (1/J + 1/C) = 2i / (a + b - i + m) = 2i / (2m + M - i)

    so ``S > t  <=>  i·(2 + t) > t·(2m + M)``                        (1)

    * Size bound: ``i <= m`` in (1) gives ``m(2 - t) > t·M``, i.e.
      ``M < m·(2 - t)/t`` (for t = 0.8: the larger set has fewer than 1.5× the
      grams of the smaller).  Pairs outside it are skipped.
    * Overlap bound for one set of size x, whatever the partner: if the partner
      is the smaller one (``m = y``, ``M = x``) then ``y > x·t/(2 - t)`` by the
      size bound and (1) gives ``i > t(2y + x)/(2 + t) > t·x/(2 - t)``; if it is
      the larger one (``m = x``) then ``i > t(2x + M)/(2 + t) >= 3tx/(2 + t) >=
      t·x/(2 - t)``.  So ``i >= k(x) := floor(t·x/(2 - t)) + 1`` in both cases
      (computed with a 1e-9 slack towards keeping more).
    * Prefix filter: order all 3-grams globally (rarest first) and sort each set
      in that order.  Let ``w`` be the smallest common gram.  Every other common
      gram comes after ``w`` in both sets, and there are at least ``k(x) - 1`` of
      them, so ``w`` sits within the first ``x - k(x) + 1`` grams of the first set
      and within the first ``y - k(y) + 1`` of the second.  Joining the two
      prefixes on the gram therefore meets every pair with ``S > t`` (at ``w``).
    * Position filter (PPJoin): at the join row for ``w``, at 1-based positions
      ``p`` and ``q``, all common grams are at or after ``w``, so
      ``i <= 1 + min(x - p, y - q)``; a row whose bound fails (1) is dropped.
      At a later common gram the bound is smaller, so if the ``w`` row fails all
      rows of the pair fail, and if it passes the pair survives: applying the
      test to every row keeps exactly the pairs whose ``w`` row passes.

    * The position bound also caps, for an entry gram at position ``p``, the
      partner size: ``t(2m + M)/(2 + t) < 1 + x - p`` with ``x`` fixed gives a
      largest admissible ``y``, so the join never reads larger partners.
    * When a set is the smaller (or equal) one, ``i > t(2m + M)/(2 + t) >= 3tm/(2 + t)``,
      a stronger bound than ``k(x)``: papers are indexed twice, with that shorter
      prefix for partners at least as large and with the ``k(y)`` prefix for
      smaller partners, and each entry gram reads the index matching the sizes.
    * Signature bound: each title carries a 128-bit set of gram hashes; a bit set
      in X's signature and not in Y's stands for a gram of X missing from Y (distinct
      bits, distinct grams), so ``i <= x - popcount(X & ~Y)`` and ``i <= y -
      popcount(Y & ~X)``.  A join row whose bound fails (1) is dropped before the
      pairs are deduplicated and counted exactly.  This check is what keeps the
      cost per prefix-join row small: it needs two 64-bit words per side, where the
      rows outnumber the links by ~1,000 at 100k titles and grow with the corpus.

    Survivors are verified with the exact overlap and :func:`score_from_counts`.
    Empty or < 3 character titles have no 3-grams and never link.
    """
    t = _check_threshold(threshold)
    ent = _require(entries, "entries", ["entry_id", "citing_id", "norm_title"], "entry_id")
    pap = _require(papers, "papers", ["paper_id", "norm_title"], "paper_id")
    ent = ent.filter(pl.col("norm_title").str.len_chars() >= 3)
    pap = pap.filter(pl.col("norm_title").str.len_chars() >= 3)
    if ent.height == 0 or pap.height == 0:
        return pl.DataFrame(schema=_TITLE_LINK_SCHEMA)

    e_titles = ent["norm_title"].to_list()
    p_titles = pap["norm_title"].to_list()
    vocab = _vocab([e_titles, p_titles])
    es, ps = _sets(e_titles, vocab), _sets(p_titles, vocab)
    del e_titles, p_titles

    p_ids = pap["paper_id"]
    p_order = np.empty(pap.height, np.int64)
    p_order[p_ids.arg_sort().to_numpy()] = np.arange(pap.height)
    self_row = (
        ent.select("citing_id")
        .join(
            pap.select("paper_id").with_row_index("prow"),
            left_on="citing_id",
            right_on="paper_id",
            how="left",
        )["prow"]
        .fill_null(-1)
        .cast(pl.Int64)
        .to_numpy()
    )

    e_best, p_best, s_best = [], [], []
    for e_row, p_row, score in _title_pairs(es, ps, vocab.bound, t, self_row):
        e_r, p_r, s_r = _pick_best(e_row, p_row, score, p_order)
        e_best.append(e_r)
        p_best.append(p_r)
        s_best.append(s_r)
    e_row = np.concatenate(e_best) if e_best else np.zeros(0, np.int64)
    p_row = np.concatenate(p_best) if p_best else np.zeros(0, np.int64)
    score = np.concatenate(s_best) if s_best else np.zeros(0)
    # every entry lives in exactly one slice, so per-slice bests are final
    out = pl.DataFrame(
        {
            "entry_id": ent["entry_id"].gather(e_row),
            "cited_id": p_ids.gather(p_row),
            "score": score,
        },
        schema=_TITLE_LINK_SCHEMA,
    )
    return out.sort("entry_id")


@dataclass
class _PaperIndex:
    """Paper prefix grams sorted by ``key = index_rank·base + y`` (see _title_pairs), with
    what the row filters read about each paper copied in key order, so that a slice of
    join rows reads them sequentially instead of gathering per paper."""

    key: np.ndarray  # int64, sorted
    row: np.ndarray  # int32 paper row
    size: np.ndarray  # int32 y, the paper's set size
    slack: np.ndarray  # int32 y - q: grams after this one in the paper's set
    room: np.ndarray  # float64 y - 2·(the paper's part of t(2m + M)/(2 + t)), see _block_pairs
    sig0: np.ndarray  # uint64 first word of the paper's signature


def _paper_index(ps: _Sets, t: float, base: np.int64, v: np.int64, sig0: np.ndarray) -> _PaperIndex:
    # short prefixes for partners at least as large (y <= x, so m = y: the paper's part
    # of t(2m + M)/(2 + t) is 2ty/(2 + t)), the full-length ones for larger papers
    # (y > x, M = y: ty/(2 + t)), offset by v·base in the key: one searchsorted pair
    # per entry gram and index applies the size bound.  Built column by column in
    # key order, dropping temporaries early (about 25 rows per paper: 600 MB at 1M).
    short_row, short_rank, short_pos = _prefix(ps, t, smaller=True)
    n_short = len(short_row)
    long_row, long_rank, long_pos = _prefix(ps, t)
    row = np.concatenate([short_row, long_row]).astype(np.int32)
    del short_row, long_row
    key = np.concatenate([short_rank.astype(np.int64), long_rank + v])
    del short_rank, long_rank
    key *= base
    key += ps.sizes[row]
    order = np.argsort(key, kind="stable")
    key = key[order]
    row = row[order]
    y = ps.sizes[row].astype(np.int32)
    slack = y - np.concatenate([short_pos, long_pos]).astype(np.int32)[order]
    del short_pos, long_pos
    weight = np.where(order < n_short, 2.0, 1.0)
    del order
    return _PaperIndex(
        key=key,
        row=row,
        size=y,
        slack=slack,
        room=y - 2.0 * weight * t * y / (2.0 + t),
        sig0=sig0[row],
    )


def _signatures(sets: _Sets) -> tuple[np.ndarray, np.ndarray]:
    """Per title a 128-bit set of gram hashes, as two uint64 words (two arrays of length n).

    Each bit set in X's signature but not in Y's stands for at least one gram of X
    that is not in Y (distinct bits, distinct grams), so
    ``|X ∩ Y| <= x - popcount(sig X & ~sig Y)``, and the same from Y's side; the
    bits of one word alone give a weaker but still valid bound.  On titles the full
    bound rejects all but about one in 5,000 prefix-join candidates (see link_titles).
    """
    n = len(sets.sizes)
    words = (np.zeros(n, np.uint64), np.zeros(n, np.uint64))
    # a block of rows at a time: the per-gram temporaries (four 8-byte arrays) of every
    # title at once cost ~2 KB per title, the largest allocation of a big linking run
    for r0 in range(0, n, _SIGNATURE_ROWS):
        r1 = min(r0 + _SIGNATURE_ROWS, n)
        g0, g1 = int(sets.offsets[r0]), int(sets.offsets[r1])
        row = np.repeat(np.arange(r0, r1, dtype=np.int64), sets.sizes[r0:r1])
        h = (sets.ranks[g0:g1].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(57)  # 0..127
        bits = np.left_shift(np.uint64(1), h & np.uint64(63))
        for w in range(2):
            sel = (h >> np.uint64(6)) == w
            np.bitwise_or.at(words[w], row[sel], bits[sel])
    return words


def _missing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """popcount(a & ~b) of signature words: a lower bound on the grams of A missing from B."""
    return np.bitwise_count(a & ~b)


def _title_pairs(
    es: _Sets, ps: _Sets, vocab_size: int, t: float, self_row: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield (entry_row, paper_row, score) of every pair with S > t, slice by slice of entries."""
    x_all, y_all = es.sizes, ps.sizes
    ymax = int(y_all.max()) if len(y_all) else 0
    base = np.int64(ymax + 2)
    v = np.int64(max(vocab_size, 1))
    e_sig, p_sig = _signatures(es), _signatures(ps)
    index = _paper_index(ps, t, base, v, p_sig[0])
    # every paper gram as one sorted key (rows ascending, ranks ascending within a row)
    p_full_key = np.repeat(np.arange(len(y_all), dtype=np.int64), y_all) * v + ps.ranks

    blocks = [(r0, min(r0 + _ENTRY_BLOCK, len(x_all))) for r0 in range(0, len(x_all), _ENTRY_BLOCK)]

    def run(rows: tuple[int, int]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        args = (t, self_row, index, base, v, ymax, e_sig, p_sig, p_full_key)
        return list(_block_pairs(es, ps, rows, *args))

    # numpy releases the GIL in its sorts, searches, gathers and ufuncs: blocks run on threads
    workers = max(1, min(LINK_WORKERS, len(blocks)))
    if workers == 1:
        for rows in blocks:
            yield from run(rows)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(run, blocks):
            yield from part


def _block_pairs(
    es, ps, rows, t, self_row, index: _PaperIndex, base, v, ymax, e_sig, p_sig, p_full_key
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Pairs with S > t for the entries ``rows[0] <= row < rows[1]`` (see _title_pairs)."""
    x_all, y_all = es.sizes, ps.sizes
    e_row, e_rank, e_pos = _prefix(es, t, rows=rows)
    e_rank = e_rank.astype(np.int64)
    x = x_all[e_row]
    ylo = np.ceil(x * t / (2.0 - t) - _EPS).astype(np.int64)
    yhi = np.minimum(np.floor(x * (2.0 - t) / t + _EPS).astype(np.int64), ymax)
    # the position bound seen from the entry alone: i <= u = 1 + x - pos, and (1) needs
    # t(2m + M)/(2 + t) < u, which caps the partner's size (equality kept: conservative)
    u = (1 + x - e_pos).astype(np.float64)
    cap_big = np.floor(u * (2.0 + t) / t - 2 * x + 1e-6).astype(np.int64)  # partner y >= x
    cap_small = np.floor((u * (2.0 + t) / t - x) / 2 + 1e-6).astype(np.int64)  # partner y < x
    yhi = np.minimum(yhi, np.where(cap_big >= x, cap_big, np.minimum(cap_small, x - 1)))
    p_key = index.key
    lo_a = np.searchsorted(p_key, e_rank * base + ylo, side="left")
    hi_a = np.searchsorted(p_key, e_rank * base + np.minimum(yhi, x), side="right")
    lo_b = np.searchsorted(p_key, (e_rank + v) * base + np.maximum(ylo, x + 1), side="left")
    hi_b = np.searchsorted(p_key, (e_rank + v) * base + yhi, side="right")
    # one query per (entry row, index), kept in entry-row order, with what the row
    # filters read about the entry (the entry's part of t(2m + M)/(2 + t): tx/(2 + t)
    # against smaller papers, index a, and 2tx/(2 + t) against larger ones, index b)
    order = np.argsort(np.concatenate([e_row, e_row]), kind="stable")
    e_row = np.concatenate([e_row, e_row])[order]
    e_slack = np.concatenate([x - e_pos, x - e_pos])[order]
    # x - 2·(the entry's part): x(2 - t)/(2 + t) in index a, x(2 - 3t)/(2 + t) in index b
    e_room = (np.concatenate([x * (2.0 - t), x * (2.0 - 3 * t)]) / (2.0 + t) + 2 * _EPS)[order]
    lo = np.concatenate([lo_a, lo_b])[order]
    counts = np.maximum(np.concatenate([hi_a - lo_a, hi_b - lo_b])[order], 0)
    keep_q = counts > 0
    e_row, e_slack, e_room, lo, counts = (a[keep_q] for a in (e_row, e_slack, e_room, lo, counts))
    e_size, e_sig0 = x_all[e_row], e_sig[0][e_row]

    # slices of whole entries whose expansion stays under the budget
    per_entry = np.bincount(e_row, weights=counts, minlength=len(x_all))
    cum = np.cumsum(per_entry)
    bounds = [0]
    while bounds[-1] < len(x_all):
        start_cum = cum[bounds[-1] - 1] if bounds[-1] else 0.0
        nxt = int(np.searchsorted(cum, start_cum + _SLICE_ROWS, side="right"))
        bounds.append(max(nxt, bounds[-1] + 1))
    row_starts = np.searchsorted(e_row, np.asarray(bounds), side="left")

    # join row g of the block reads index entry g + shift[q] for its query q
    first = np.cumsum(counts) - counts
    shift = lo - first
    for s0, s1 in zip(row_starts[:-1], row_starts[1:], strict=True):
        if s0 == s1:
            continue
        # the query of each row, by a cumulative sum over query starts (every count is
        # >= 1); np.repeat would hold the GIL, gathers and ufuncs release it
        g0, g1 = int(first[s0]), int(first[s1 - 1] + counts[s1 - 1])
        q = np.zeros(g1 - g0, np.int64)
        q[first[s0 + 1 : s1] - g0] = 1
        np.cumsum(q, out=q)
        q += s0
        j = np.arange(g0, g1, dtype=np.int64) + shift[q]
        # every row: the sum of the first-word bounds from both sides, x - |X \ Y| > need
        # and y - |Y \ X| > need imply x + y - popcount(X ^ Y) > 2·need, where
        # x - 2·(entry part) + y - 2·(paper part) is precomputed per query and index row
        # (about 5 % of the rows pass; all reads are sequential)
        keep = e_room[q] + index.room[j] > np.bitwise_count(e_sig0[q] ^ index.sig0[j])
        hit = np.flatnonzero(keep)
        q, j = q[hit], j[hit]
        # then each side's first-word bound and the position bound (PPJoin)
        xs, ys = e_size[q], index.size[j]
        need = t * (2 * np.minimum(xs, ys) + np.maximum(xs, ys)) / (2.0 + t) - _EPS
        e0, p0 = e_sig0[q], index.sig0[j]
        keep = (xs - _missing(e0, p0) > need) & (ys - _missing(p0, e0) > need)
        keep &= 1 + np.minimum(e_slack[q], index.slack[j]) > need
        q, j, need = q[keep], j[keep], need[keep]
        # both signature words on the survivors
        er, pr = e_row[q], index.row[j].astype(np.int64)
        xs, ys = e_size[q], index.size[j]
        e0, e1, p0, p1 = e_sig[0][er], e_sig[1][er], p_sig[0][pr], p_sig[1][pr]
        ub_e = xs - _missing(e0, p0) - _missing(e1, p1)
        ub_p = ys - _missing(p0, e0) - _missing(p1, e1)
        keep = (np.minimum(ub_e, ub_p) > need) & (pr != self_row[er])
        if not keep.any():
            continue
        pair = _sorted_unique(er[keep] * np.int64(len(y_all)) + pr[keep])
        er = pair // len(y_all)
        pr = pair - er * len(y_all)
        inter = _overlap(es, er, pr, p_full_key, v)
        score = score_from_counts(inter, x_all[er], y_all[pr])
        ok = score > t
        yield er[ok], pr[ok], score[ok]


def _ranges(lo: np.ndarray, hi: np.ndarray, budget: int):
    """Yield (range index, position) of every position in [lo, hi) of each range, in slices of
    about ``budget`` positions (ranges in order, none split)."""
    counts = np.maximum(hi - lo, 0)
    cum = np.cumsum(counts)
    start = 0
    while start < len(counts):
        base = cum[start - 1] if start else 0
        stop = max(int(np.searchsorted(cum, base + budget, side="right")), start + 1)
        c = counts[start:stop]
        total = int(c.sum())
        if total:
            which = np.repeat(np.arange(start, stop, dtype=np.int64), c)
            pos = (
                np.arange(total, dtype=np.int64)
                - np.repeat(np.cumsum(c) - c, c)
                + np.repeat(lo[start:stop], c)
            )
            yield which, pos
        start = stop


def _overlap(es: _Sets, er: np.ndarray, pr: np.ndarray, p_full_key: np.ndarray, v) -> np.ndarray:
    """Exact |N1 ∩ N2| for each (entry row, paper row) pair, in bounded batches."""
    out = np.zeros(len(er), np.int64)
    lo = es.offsets[er]
    for pair, pos in _ranges(lo, lo + es.sizes[er], 2_000_000):
        key = pr[pair] * v + es.ranks[pos]
        hit = np.minimum(np.searchsorted(p_full_key, key), len(p_full_key) - 1)
        first = int(pair[0])
        found = pair[p_full_key[hit] == key] - first
        out[first : int(pair[-1]) + 1] += np.bincount(found, minlength=int(pair[-1]) + 1 - first)
    return out


def link_titles_exhaustive(
    entries: pl.DataFrame, papers: pl.DataFrame, threshold: float = TITLE_THRESHOLD
) -> pl.DataFrame:
    """Reference scorer: ``S`` of every (entry, paper) pair from Python 3-gram sets.

    For each entry the overlap with *every* paper is counted (papers sharing no
    3-gram have ``S = 0``), so nothing is filtered; then the same self-citation
    rule, threshold and tie-break as :func:`link_titles`.  Quadratic: for tests.
    """
    t = _check_threshold(threshold)
    ent = _require(entries, "entries", ["entry_id", "citing_id", "norm_title"], "entry_id")
    pap = _require(papers, "papers", ["paper_id", "norm_title"], "paper_id")
    p_ids = pap["paper_id"].to_list()
    p_sets = [trigrams(s or "") for s in pap["norm_title"].to_list()]
    p_size = np.array([len(s) for s in p_sets], dtype=np.int64)
    postings: dict[str, list[int]] = {}
    for k, grams in enumerate(p_sets):
        for g in grams:
            postings.setdefault(g, []).append(k)
    post = {g: np.array(v, dtype=np.int64) for g, v in postings.items()}
    p_index = {pid: k for k, pid in enumerate(p_ids)}
    order_key = np.empty(len(p_ids), np.int64)
    order_key[np.argsort(np.array(p_ids, dtype=object), kind="stable")] = np.arange(len(p_ids))
    rows = []
    for eid, cid, title in ent.iter_rows():
        grams = trigrams(title or "")
        if not grams or not p_ids:
            continue
        inter = np.zeros(len(p_ids), np.int64)
        for g in grams:
            if g in post:
                inter[post[g]] += 1
        score = score_from_counts(inter, len(grams), p_size)
        if cid in p_index:
            score[p_index[cid]] = 0.0
        ok = np.flatnonzero(score > t)
        if len(ok) == 0:
            continue
        best = ok[np.lexsort((order_key[ok], -score[ok]))[0]]
        rows.append((eid, p_ids[best], float(score[best])))
    return pl.DataFrame(rows, schema=_TITLE_LINK_SCHEMA, orient="row").sort("entry_id")


# ---------------------------------------------------------------------------
# Exact links
# ---------------------------------------------------------------------------


def normalize_arxiv_ids(ids: pl.Series) -> pl.Series:
    """Canonical arXiv ids (corpus.ingest.arxiv_ids); anything that is not one becomes null."""
    uniq = ids.cast(pl.String).drop_nulls().unique()
    mapping = pl.DataFrame(
        {"raw": uniq, "norm": [arxiv_ids.try_normalize(x) for x in uniq.to_list()]},
        schema={"raw": pl.String, "norm": pl.String},
    )
    return (
        pl.DataFrame({"raw": ids.cast(pl.String)})
        .join(mapping, on="raw", how="left", maintain_order="left")["norm"]
        .alias(ids.name)
    )


_EXACT_SCHEMA = {"entry_id": pl.String, "cited_id": pl.String, "via": pl.String}


def link_exact(entries: pl.DataFrame, papers: pl.DataFrame, *, normalized: bool = False) -> pl.DataFrame:
    """Links by identifier: ``entries[entry_id, citing_id, arxiv_id, doi]`` × ``papers[paper_id, doi]``.

    The entry's arXiv id (any form, normalised by corpus.ingest.arxiv_ids) links to the
    paper with that ``paper_id``; otherwise its DOI (normalised, see
    :func:`normalize_doi`) links to the paper with that DOI, the smallest
    ``paper_id`` if several share it.  Self-citations are dropped before choosing.
    Output ``[entry_id, cited_id, via]`` with via ``arxiv_id`` or ``doi``. ``normalized``: the
    entries' ids are in their canonical forms already (normalising is idempotent; it costs).
    """
    ent = _require(entries, "entries", ["entry_id", "citing_id", "arxiv_id", "doi"], "entry_id")
    pap = _require(papers, "papers", ["paper_id", "doi"], "paper_id")
    if not normalized:
        ent = ent.with_columns(
            normalize_arxiv_ids(ent["arxiv_id"]).alias("arxiv_id"), normalize_dois(ent["doi"]).alias("doi")
        )
    pid = pap.select(pl.col("paper_id").alias("cited_id"))
    by_ax = (
        ent.filter(pl.col("arxiv_id").is_not_null())
        .join(pid, left_on="arxiv_id", right_on="cited_id", how="inner")
        .select(
            "entry_id", "citing_id", pl.col("arxiv_id").alias("cited_id"), pl.lit("arxiv_id").alias("via")
        )
    )
    p_doi = pap.select(
        pl.col("paper_id").alias("cited_id"), normalize_dois(pap["doi"]).alias("pdoi")
    ).drop_nulls()
    by_doi = (
        ent.filter(pl.col("doi").is_not_null())
        .join(p_doi, left_on="doi", right_on="pdoi", how="inner")
        .select("entry_id", "citing_id", "cited_id", pl.lit("doi").alias("via"))
    )
    both = pl.concat([by_ax, by_doi]).filter(
        pl.col("citing_id").is_null() | (pl.col("citing_id") != pl.col("cited_id"))
    )
    best = (
        both.with_columns(pl.col("via").replace_strict(VIA_RANK, return_dtype=pl.Int8).alias("_r"))
        .sort(["entry_id", "_r", "cited_id"])
        .unique("entry_id", keep="first", maintain_order=True)
    )
    return best.select(list(_EXACT_SCHEMA)).cast(_EXACT_SCHEMA)


# ---------------------------------------------------------------------------
# Everything together
# ---------------------------------------------------------------------------

ENTRY_COLUMNS = ["entry_id", "citing_id", "arxiv_id", "doi", "norm_title", *PUB_COLUMNS]
PAPER_COLUMNS = ["paper_id", "doi", "norm_title", *PUB_COLUMNS]
REASON_SCHEMA = {"entry_id": pl.String, "reason": pl.String}


def with_pub_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the publication columns it lacks, null (entries of a day written before them)."""
    missing = [c for c in PUB_COLUMNS if c not in frame.columns]
    return frame.with_columns([pl.lit(None, pl.String).alias(c) for c in missing]) if missing else frame


def target_frame(papers: pl.DataFrame) -> pl.DataFrame:
    """Link targets in PAPER_COLUMNS: their publication read from ``journal_ref`` unless given."""
    if "journal_ref" not in papers.columns and not all(c in papers.columns for c in PUB_COLUMNS):
        papers = papers.with_columns(pl.lit(None, pl.String).alias("journal_ref"))
    return _require(with_publications(papers), "papers", PAPER_COLUMNS, "paper_id")


def link_entries(
    entries: pl.DataFrame, papers: pl.DataFrame, threshold: float = TITLE_THRESHOLD
) -> pl.DataFrame:
    """Full linking: exact links first, the S2ORC title score for the rest, then the publication.

    Per entry the link is the minimum of (via rank: arxiv_id < doi < title < doi_derived <
    publication, -score, cited_id): that lexicographic rule is what makes incremental linking
    equal to a full recomputation (:func:`best_link`, corpus.graph.citation_links).
    """
    return link_entries_with_reasons(entries, papers, threshold)[0]


def link_entries_with_reasons(
    entries: pl.DataFrame, papers: pl.DataFrame, threshold: float = TITLE_THRESHOLD
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`link_entries` and why entries that nearly linked did not (REASON_SCHEMA rows:
    ``ambiguous_publication``, their publication names several papers)."""
    ent = _require(with_pub_columns(entries), "entries", ENTRY_COLUMNS, "entry_id")
    pap = target_frame(papers)
    exact = link_exact(ent, pap)
    rest = ent.join(exact.select("entry_id"), on="entry_id", how="anti")
    titled = link_titles(rest, pap, threshold).with_columns(pl.lit("title").alias("via"))
    rest = rest.join(titled.select("entry_id"), on="entry_id", how="anti")
    published, reasons = link_publications(rest, pap)
    exact = exact.with_columns(pl.lit(1.0).alias("score"))
    published = published.with_columns(pl.lit(1.0).alias("score"))
    cols = ["entry_id", "cited_id", "via", "score"]
    links = pl.concat([exact.select(cols), titled.select(cols), published.select(cols)])
    links = (
        links.join(ent.select("entry_id", "citing_id"), on="entry_id", how="left")
        .select(list(LINK_SCHEMA))
        .cast(LINK_SCHEMA)
        .sort("entry_id")
    )
    return links, reasons.cast(REASON_SCHEMA)


def best_link(links: pl.DataFrame) -> pl.DataFrame:
    """Per entry the first link in :func:`link_entries`' order (via rank, -score, cited_id): the
    link of an entry among several candidates, which is what lets citation_links combine a stored
    link with one to a new paper and get what a full relink gives."""
    return (
        links.with_columns(pl.col("via").replace_strict(VIA_RANK, return_dtype=pl.Int8).alias("_r"))
        .sort(["entry_id", "_r", "score", "cited_id"], descending=[False, False, True, False])
        .unique("entry_id", keep="first", maintain_order=True)
        .select(list(LINK_SCHEMA))
        .cast(LINK_SCHEMA)
    )
