"""The citation graph: edges from bibliography links and arXiv ids in full text, and its statistics.

Edges (``citing_id, cited_id, via, score, mentions``) come from two sources:

* bibliography links (:mod:`corpus.graph.linking`: via ``arxiv_id | doi | title | doi_derived |
  publication``);
* arXiv ids found in a paper's full text (arxiv-as-a-dataset-paper.txt §2.3, via
  ``fulltext_id``), found by :func:`corpus.ingest.arxiv_ids.find_arxiv_ids`.

Statistics follow Table 2 of arxiv-as-a-dataset-paper.txt: nodes, edges, mean
degree ``<k> = 2E/N``, power-law exponents of the in- and out-degree
distributions (discrete maximum likelihood of Clauset, Shalizi & Newman 2009,
``x_min`` chosen by the smallest Kolmogorov-Smirnov distance, as the ``powerlaw``
package the paper used does), the share of nodes in the largest weakly
connected component and the share of isolated nodes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import polars as pl

# The version of citation_graph (corpus.versions): bump it whenever their rows change.
GRAPH_VERSION = "corpus.graph.network/1"

VIA_ORDER = ("arxiv_id", "doi", "title", "doi_derived", "publication", "fulltext_id")
EDGE_SCHEMA = {
    "citing_id": pl.String,
    "cited_id": pl.String,
    "via": pl.String,
    "score": pl.Float64,
    "mentions": pl.Int64,
}
_VIA_RANK = {v: i for i, v in enumerate(VIA_ORDER)}


class GraphInputError(ValueError):
    """An input frame lacks a column the graph needs."""


def _need(frame: pl.DataFrame, name: str, cols: list[str]) -> None:
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise GraphInputError(f"{name} frame lacks column(s) {missing}; has {frame.columns}")


# ---------------------------------------------------------------------------
# Edges
# ---------------------------------------------------------------------------


def _lexical_codes(*columns: pl.Series) -> tuple[list[np.ndarray], pl.Series]:
    """Strings of ``columns`` as int64 codes shared by all of them, in string order, and the
    distinct strings (``names[code]``); null is -1.

    One hashing pass per column (a cast to an Enum of the sorted distinct strings, whose
    physical codes are then in string order) and a sort of the distinct strings only: sorting,
    joining or de-duplicating the codes instead of the strings of every row is what keeps the
    graph build fast and small at millions of edges.
    """
    strings = [c.cast(pl.String) for c in columns]
    names = pl.concat(strings).drop_nulls().unique().sort() if strings else pl.Series([], dtype=pl.String)
    enum = pl.Enum(names)
    codes = [s.cast(enum).to_physical().cast(pl.Int64).fill_null(-1).to_numpy() for s in strings]
    return codes, names


def _distinct(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (``np.unique`` took ~20 s on 13M int64 here: numpy 2 hashes them)."""
    a = np.sort(a)
    keep = np.ones(len(a), dtype=bool)
    keep[1:] = a[1:] != a[:-1]
    return a[keep]


def _via_rank(via: pl.Series) -> pl.Series:
    """``VIA_ORDER`` index of each ``via``; null stays null, an unknown value is -1."""
    via = via.cast(pl.String)
    ranked = via.replace_strict(_VIA_RANK, default=-1, return_dtype=pl.Int8)
    return pl.select(pl.when(via.is_null()).then(None).otherwise(ranked)).to_series()


def build_edges(links: pl.DataFrame, fulltext: pl.DataFrame | None = None) -> pl.DataFrame:
    """One edge per (citing_id, cited_id) from bib links and full-text id hits, sorted by the pair.

    ``links[citing_id, cited_id, via, score]`` (from corpus.graph.linking, optionally with
    ``mentions`` = inline cite spans of that bib entry, else 0) and
    ``fulltext[citing_id, cited_id, mentions]`` (:func:`fulltext_id_edges`).
    De-duplication: ``via`` is the strongest evidence in the order
    arxiv_id > doi > title > fulltext_id and ``score`` the best score of that
    evidence (1.0 for ids); ``mentions`` is the sum over all bib entries of the
    pair plus the full-text occurrences.  Self-loops and rows without both ids are dropped.
    Ids are worked on as integer codes (:func:`_lexical_codes`), never as sorted strings.
    """
    _need(links, "links", ["citing_id", "cited_id", "via", "score"])
    sources = [links]
    if fulltext is not None:
        _need(fulltext, "fulltext", ["citing_id", "cited_id", "mentions"])
        sources.append(fulltext)
    codes, names = _lexical_codes(*(f[c] for f in sources for c in ("citing_id", "cited_id")))
    n_names = max(len(names), 1)
    parts = []
    for i, frame in enumerate(sources):
        src, dst = codes[2 * i], codes[2 * i + 1]
        keep = (src >= 0) & (dst >= 0) & (src != dst)
        if frame is links:
            rank = _via_rank(links["via"])
            score = links["score"].cast(pl.Float64)
            mentions = (
                links["mentions"] if "mentions" in links.columns else pl.repeat(0, links.height, eager=True)
            )
        else:
            rank = pl.repeat(_VIA_RANK["fulltext_id"], frame.height, dtype=pl.Int8, eager=True)
            score = pl.repeat(1.0, frame.height, dtype=pl.Float64, eager=True)
            mentions = frame["mentions"]
        part = pl.DataFrame(
            {
                "key": src * n_names + dst,
                "_r": rank,
                "score": score,
                "mentions": mentions.cast(pl.Int64).fill_null(0),
            }
        ).filter(pl.Series(keep))
        if (part["_r"] == -1).any():
            via = links["via"].cast(pl.String).filter(pl.Series(keep))
            bad = via.filter(~via.is_in(list(VIA_ORDER))).unique().to_list()
            raise GraphInputError(f"unknown via value(s) {bad}; expected {VIA_ORDER}")
        parts.append(part)
        del src, dst, keep
    del codes
    rows = pl.concat(parts).sort(["key", "_r", "score"], descending=[False, False, True])
    del parts
    key = rows["key"].to_numpy()
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(first)
    del first
    mentions = np.add.reduceat(rows["mentions"].to_numpy(), starts) if len(starts) else np.zeros(0, np.int64)
    head = pl.Series(starts)
    key = key[starts]
    return pl.DataFrame(
        {
            "citing_id": names.gather(key // n_names),
            "cited_id": names.gather(key % n_names),
            "via": pl.Series(VIA_ORDER, dtype=pl.String).gather(rows["_r"].gather(head)),
            "score": rows["score"].gather(head),
            "mentions": mentions,
        }
    ).cast(EDGE_SCHEMA)


# ---------------------------------------------------------------------------
# Degrees, components
# ---------------------------------------------------------------------------


def _index(edges: pl.DataFrame, nodes: pl.Series) -> tuple[int, np.ndarray, np.ndarray, int]:
    """Node count, (src, dst) as node indices (string order) of distinct non-loop edges, and the
    distinct non-loop edges dropped for an end that is not a node (rows lacking an id are ignored)."""
    _need(edges, "edges", ["citing_id", "cited_id"])
    ids = nodes.cast(pl.String).drop_nulls()
    (node_codes, src, dst), names = _lexical_codes(ids, edges["citing_id"], edges["cited_id"])
    node_codes = _distinct(node_codes)
    n, k = len(node_codes), max(len(names), 1)
    node_of = np.full(len(names), -1, dtype=np.int64)
    node_of[node_codes] = np.arange(n, dtype=np.int64)
    keep = (src >= 0) & (dst >= 0) & (src != dst)
    src, dst = src[keep], dst[keep]
    del keep
    inside = (node_of[src] >= 0) & (node_of[dst] >= 0)
    outside = len(_distinct(src[~inside] * k + dst[~inside]))
    key = _distinct(src[inside] * k + dst[inside])
    del src, dst, inside
    return n, node_of[key // k], node_of[key % k], outside


def weak_components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Component label (0 .. components-1) of every node, joined by edges in either direction.

    scipy's ``connected_components(connection="weak")`` on the edges as a sparse matrix
    (benchmarks/graph_numerics.py: faster than the vectorised union-find it replaced).
    """
    from scipy.sparse import coo_array  # scipy only here and in the fit: 61 MB, 0.4 s to import
    from scipy.sparse.csgraph import connected_components

    adjacency = coo_array((np.ones(len(src)), (src, dst)), shape=(n, n)).tocsr()
    return connected_components(adjacency, directed=True, connection="weak")[1]


# ---------------------------------------------------------------------------
# Discrete power law (Clauset, Shalizi & Newman 2009)
# ---------------------------------------------------------------------------

ALPHA_MAX = 10.0  # upper end of the exponent search: a result there means no power-law tail


class PowerLawFit(NamedTuple):
    alpha: float  # exponent of p(k) ∝ k^-alpha for k >= xmin
    xmin: int
    n_tail: int  # degrees >= xmin used in the fit
    ks: float  # Kolmogorov-Smirnov distance of the fit on the tail


def _mle_alpha(n: int, sum_log: float, xmin: int) -> float:
    """The α in (1, ALPHA_MAX] maximising ``-n log ζ(α, xmin) - α Σ log x`` (bounded Brent)."""
    from scipy.optimize import minimize_scalar
    from scipy.special import zeta

    found = minimize_scalar(
        lambda a: n * math.log(zeta(a, xmin)) + a * sum_log,
        bounds=(1.0 + 1e-6, ALPHA_MAX),
        method="bounded",
        options={"xatol": 1e-9},
    )
    return float(found.x)


def _fit_tail(values: np.ndarray, counts: np.ndarray, xmin: int) -> PowerLawFit:
    """Fit the tail given as distinct values (ascending, all >= xmin) and their counts.

    The KS distance compares P(X < x) of the data and of the model at every distinct
    value, as the ``powerlaw`` package does, so that both choose the same ``x_min``.
    """
    n = int(counts.sum())
    if len(values) < 2:
        return PowerLawFit(float("nan"), int(xmin), n, float("nan"))
    from scipy.special import zeta

    alpha = _mle_alpha(n, float((np.log(values) * counts).sum()), int(xmin))
    below = (np.cumsum(counts) - counts) / n
    model = 1.0 - zeta(alpha, values) / zeta(alpha, float(xmin))
    return PowerLawFit(alpha, int(xmin), n, float(np.max(np.abs(below - model))))


def powerlaw_fit(degrees: np.ndarray, xmin: int | None = None, min_tail: int = 50) -> PowerLawFit:
    """Discrete power-law fit of positive degrees (zeros are never part of a power law).

    The exact discrete maximum-likelihood α (scipy's Hurwitz zeta and bounded search).
    With ``xmin=None`` every observed degree but the largest whose tail holds at least
    ``min_tail`` values (all of them if fewer exist) is tried and the one with the
    smallest KS distance wins (Clauset et al. §3.3; ``min_tail`` **choice**: tails of a
    few points give meaningless exponents).  NaN alpha when the tail has fewer than two
    distinct values (no maximum).  tests/test_graph_powerlaw.py checks α and ``x_min``
    against the ``powerlaw`` package (Alstott et al.), which arxiv-as-a-dataset used.
    """
    d = np.asarray(degrees, dtype=np.int64)
    values, counts = np.unique(d[d > 0], return_counts=True)
    values = values.astype(np.float64)
    if xmin is not None:
        keep = values >= xmin
        return _fit_tail(values[keep], counts[keep], int(xmin))
    if len(values) == 0:
        return PowerLawFit(float("nan"), 1, 0, float("nan"))
    tail_n = np.cumsum(counts[::-1])[::-1]  # values >= values[j]
    need = min(min_tail, int(tail_n[0]))
    best: PowerLawFit | None = None
    for j in range(len(values) - 1):
        if tail_n[j] < need:
            break  # tails only shrink from here on
        fit = _fit_tail(values[j:], counts[j:], int(values[j]))
        if best is None or fit.ks < best.ks:
            best = fit
    return best if best is not None else _fit_tail(values, counts, int(values[0]))


# ---------------------------------------------------------------------------
# Statistics and the plot
# ---------------------------------------------------------------------------


def degrees(
    edges: pl.DataFrame, nodes: pl.Series
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """(in-degree, out-degree, src, dst, dropped) over ``nodes``; edges to non-nodes are dropped."""
    n, src, dst, dropped = _index(edges, nodes)
    return np.bincount(dst, minlength=n), np.bincount(src, minlength=n), src, dst, dropped


def graph_stats(edges: pl.DataFrame, nodes: pl.Series, min_tail: int = 50) -> dict:
    """Table 2 of arxiv-as-a-dataset-paper.txt for the graph (edges restricted to ``nodes``).

    Keys: ``nodes``, ``edges`` (distinct directed pairs, no self-loops),
    ``mean_degree`` (2E/N: in + out), ``alpha_in``, ``alpha_out``, ``xmin_in``,
    ``xmin_out`` (see :func:`powerlaw_fit`), ``wcc_share`` (nodes in the largest
    weakly connected component / N), ``isolated_share`` (in = out = 0) and
    ``edges_outside`` (edges with an end that is not a node, left out).
    """
    n, src, dst, dropped = _index(edges, nodes)
    if n == 0:
        raise GraphInputError("graph_stats needs at least one node")
    return {**table2(np.ones(n, dtype=bool), src, dst, min_tail), "edges_outside": dropped}


def table2(is_node: np.ndarray, src: np.ndarray, dst: np.ndarray, min_tail: int = 50) -> dict:
    """Table 2 of a graph given as integer codes: ``is_node[code]`` marks the nodes (other codes
    are ignored), ``src -> dst`` the distinct non-loop edges between nodes. See graph_stats."""
    k_in, k_out = code_degrees(len(is_node), src, dst)
    labels = weak_components(len(is_node), src, dst)
    nodes = np.flatnonzero(is_node)
    n = len(nodes)
    if n == 0:
        raise GraphInputError("graph statistics need at least one node")
    k_in, k_out = k_in[nodes], k_out[nodes]
    fit_in, fit_out = powerlaw_fit(k_in, min_tail=min_tail), powerlaw_fit(k_out, min_tail=min_tail)
    return {
        "nodes": n,
        "edges": len(src),
        "mean_degree": 2.0 * len(src) / n,
        "alpha_in": fit_in.alpha,
        "alpha_out": fit_out.alpha,
        "xmin_in": fit_in.xmin,
        "xmin_out": fit_out.xmin,
        "wcc_share": float(np.bincount(labels[nodes]).max() / n),
        "isolated_share": float(np.mean((k_in == 0) & (k_out == 0))),
    }


def code_degrees(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(in-degree, out-degree) of codes ``0..n-1``."""
    return np.bincount(dst, minlength=n), np.bincount(src, minlength=n)


def degree_plot_svg(edges: pl.DataFrame, nodes: pl.Series) -> bytes:
    """SVG of P(k) for in- and out-degrees on log-log axes (zero degrees cannot be shown)."""

    k_in, k_out, *_ = degrees(edges, nodes)
    return degree_plot_from(k_in, k_out)


def degree_plot_from(k_in: np.ndarray, k_out: np.ndarray) -> bytes:
    """:func:`degree_plot_svg` from the nodes' in- and out-degrees."""
    from corpus.plots import loglog_svg

    n = max(len(k_in), 1)
    series = []
    for k, label in ((k_in, "in-degree"), (k_out, "out-degree")):
        values, counts = np.unique(k[k > 0], return_counts=True)
        series.append((label, values, counts / n))
    return loglog_svg(
        series, title=f"Degree distributions ({len(k_in):,} nodes)", xlabel="degree k", ylabel="P(k)"
    )
