"""The graph's numerics: power-law fit and weak components, scipy (corpus.graph.network) vs the hand-written code
it replaced, at two graph sizes: CPU seconds and peak RSS of each.

    python benchmarks/graph_numerics.py [--sizes 100000,1000000] [--links-per-paper 15]

A graph of N nodes is generated like benchmarks/citation_graph.py's: out-degrees negative
binomial (mean ``--links-per-paper``, 10 % of papers cite nothing), cited papers drawn by
Pareto(1.8) fitness (a few cited thousands of times), distinct non-loop edges sorted by
(src, dst) as ``corpus.graph.network.degrees`` returns them. Each measurement runs in its own child
process (CPU s of the part; peak RSS of that process, which includes making the graph, and
``base``: its RSS with the graph made, before the part), for:

* ``fit``: ``powerlaw_fit`` of the in-degrees and of the out-degrees (x_min searched);
* ``wcc``: ``weak_components`` (scipy: sparse matrix + ``connected_components``).

``lib`` is corpus.graph.network; ``old`` is the code it replaced (vectorised union-find; Euler-Maclaurin
Hurwitz zeta with golden-section search), kept here only as the reference it is measured
against. Results are also checked equal (same partition sizes, same x_min, alpha to 1e-6).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time

import numpy as np
from _common import REPO, result

# --------------------------------------------------------------------------- the replaced code

_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def old_hurwitz_zeta(s, q):
    q = np.asarray(q, dtype=np.float64)
    k = np.arange(12, dtype=np.float64)
    head = np.sum((q[..., None] + k) ** -s, axis=-1)
    a = q + 12
    tail = a ** (1 - s) / (s - 1) + 0.5 * a**-s
    fact, rising = 1.0, s
    for j, b in enumerate(_BERNOULLI, start=1):
        fact *= (2 * j - 1) * (2 * j)
        tail = tail + b / fact * rising * a ** (-s - 2 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return head + tail


def old_mle_alpha(n, sum_log, xmin):
    def nll(a):
        return n * math.log(float(old_hurwitz_zeta(a, xmin))) + a * sum_log

    lo, hi = 1.0 + 1e-6, 10.0
    g = (math.sqrt(5) - 1) / 2
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = nll(c), nll(d)
    for _ in range(80):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = nll(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = nll(d)
    return (lo + hi) / 2


def old_powerlaw_fit(degrees, min_tail=50):
    """The replaced search, with the KS convention the new code uses (P(X < x)), so that both
    choose among the same fits and only the numerics differ."""
    d = np.asarray(degrees, dtype=np.int64)
    values, counts = np.unique(d[d > 0], return_counts=True)
    values = values.astype(np.float64)
    tail_n = np.cumsum(counts[::-1])[::-1]
    need = min(min_tail, int(tail_n[0]))
    best = None
    for j in range(len(values) - 1):
        if tail_n[j] < need:
            break
        v, c, xmin = values[j:], counts[j:], values[j]
        n = int(c.sum())
        alpha = old_mle_alpha(n, float((np.log(v) * c).sum()), int(xmin))
        model = 1.0 - old_hurwitz_zeta(alpha, v) / old_hurwitz_zeta(alpha, xmin)
        ks = float(np.max(np.abs((np.cumsum(c) - c) / n - model)))
        if best is None or ks < best[2]:
            best = (alpha, int(xmin), ks)
    return best


def old_weak_components(n, src, dst):
    parent = np.arange(n, dtype=np.int64)
    while True:
        pu, pv = parent[src], parent[dst]
        diff = pu != pv
        if not diff.any():
            return parent
        lo, hi = np.minimum(pu[diff], pv[diff]), np.maximum(pu[diff], pv[diff])
        np.minimum.at(parent, hi, lo)
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand


# --------------------------------------------------------------------------- the graph


def make_graph(n: int, links: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Distinct non-loop edges (src, dst) sorted by the pair, of a citation-shaped graph."""
    rng = np.random.default_rng(seed)
    out = rng.negative_binomial(3, 3 / (3 + links), n)
    out[rng.random(n) < 0.1] = 0
    src = np.repeat(np.arange(n, dtype=np.int64), out)
    fitness = np.cumsum(rng.pareto(1.8, n) + 0.05)
    dst = np.searchsorted(fitness, rng.random(len(src)) * fitness[-1]).astype(np.int64)
    key = np.sort(src * n + dst)
    key = key[np.r_[True, key[1:] != key[:-1]]]  # distinct (np.unique hashes: slow on numpy 2)
    src, dst = key // n, key % n
    keep = src != dst
    return src[keep], dst[keep]


def measure(impl: str, part: str, n: int, links: float) -> dict:
    from corpus.graph.network import powerlaw_fit, weak_components  # scipy's import is not timed

    src, dst = make_graph(n, links)
    with open("/proc/self/statm") as f:
        base = int(f.read().split()[1]) * resource.getpagesize() / 2**20
    c0, w0 = time.process_time(), time.perf_counter()
    if part == "fit":
        k_in, k_out = np.bincount(dst, minlength=n), np.bincount(src, minlength=n)
        if impl == "lib":
            fits = [powerlaw_fit(k) for k in (k_in, k_out)]
            value = [[f.alpha, f.xmin] for f in fits]
        else:
            value = [list(old_powerlaw_fit(k)[:2]) for k in (k_in, k_out)]
    else:
        components = weak_components if impl == "lib" else old_weak_components
        labels = components(n, src, dst)
        value = sorted(np.bincount(labels)[np.bincount(labels) > 0].tolist())[-3:]
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cpu_s": cpu, "wall_s": wall, "peak_mb": peak, "base_mb": base, "value": value, "edges": len(src)}


def child(impl: str, part: str, n: int, links: float) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--one", f"{impl},{part},{n},{links}"],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--links-per-paper", type=float, default=15.0)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        impl, part, n, links = args.one.split(",")
        print(json.dumps(measure(impl, part, int(n), float(links))))
        return
    figures: dict[str, float] = {}
    for n in (int(s) for s in args.sizes.split(",")):
        tag = f"{n // 1000}k"
        for part in ("fit", "wcc"):
            lib, old = (
                child("lib", part, n, args.links_per_paper),
                child("old", part, n, args.links_per_paper),
            )
            if part == "fit":
                for (a1, x1), (a0, x0) in zip(lib["value"], old["value"], strict=True):
                    assert x1 == x0 and abs(a1 - a0) <= 1e-6 * a0, (lib["value"], old["value"])
            else:
                assert lib["value"] == old["value"], (lib["value"], old["value"])
            print(
                f"{n:>9} nodes {lib['edges']:>10} edges  {part}: lib {lib['cpu_s']:.2f} CPU s "
                f"peak {lib['peak_mb']:.0f} MB, old {old['cpu_s']:.2f} CPU s peak {old['peak_mb']:.0f} MB "
                f"(base {lib['base_mb']:.0f} MB) "
                f"(old/lib {old['cpu_s'] / max(lib['cpu_s'], 1e-9):.1f}x)  {lib['value']}",
                flush=True,
            )
            for impl, r in (("lib", lib), ("old", old)):
                figures[f"{part}_{impl}_cpu_s_{tag}"] = r["cpu_s"]
                figures[f"{part}_{impl}_peak_mb_{tag}"] = r["peak_mb"]
    result(**figures)


if __name__ == "__main__":
    main()
