"""peS2o's token counter: the C one (corpus._tally) against a vectorised one on pyarrow kernels.

    python benchmarks/token_count.py [--min-docs N] [--repeats R]

What ``corpus._tally.TokenTable.tally`` computes for a paper's paragraphs (tokens, summed
log2 word probability and words per section run, the top token and its count) is done
here a second way, :class:`ArrowTally`: ``pyarrow.compute.utf8_split_whitespace`` (the same
whitespace set as ``str.split``), ``dictionary_encode`` (distinct tokens in first-seen
order), the word rule once per distinct token not yet cached, and ``numpy.bincount``
sums (in token order, so equal bit for bit). Both are checked equal on every document.

Documents: the real full texts (S2ORC records, the unarXive sample, the landing zone's
Grobid TEI and LaTeX e-prints in ../shared) and generated ones (benchmarks/pes2o_release.py's
Zipf-word texts) at two lengths. Each (implementation, document set) runs in its own child
process: CPU s, docs/s and MB/s (UTF-8 of the paragraphs) and its peak RSS.

Then the rule of issue 18: the whole peS2o benchmark (benchmarks/pes2o.py's ``run_once``:
``compute_signals`` + ``release`` per document, the real documents) with C, and with the
vectorised tally and Python's ``" ".join(s.split())`` / ``len(s.split())`` in place of
``collapse`` / ``count_tokens``; ``pes2o_slowdown`` is the ratio of CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from operator import itemgetter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from _common import REPO, SHARED, result

from corpus.release import pes2o

# --------------------------------------------------------------------------- the vectorised tally


class ArrowTally:
    """``TokenTable.tally`` on pyarrow kernels; the word rule is ``score``, once per distinct token.

    Scored tokens are kept as a slot each (``slot``: token -> row of ``values``/``words``), so a
    document's distinct tokens are looked up by one ``itemgetter`` call (a C loop) and their
    numbers gathered with numpy; only tokens never seen go through Python one by one.
    """

    def __init__(self, score) -> None:
        self.score = score
        self.clear()

    def clear(self) -> None:
        self.slot: dict[str, int] = {}
        self.values = np.zeros(1024, dtype=np.float64)
        self.words = np.zeros(1024, dtype=np.int64)

    def _slots(self, distinct: list[str]) -> np.ndarray:
        slot = self.slot
        try:
            found = itemgetter(*distinct)(slot)
        except KeyError:
            for tok in distinct:
                if tok not in slot:
                    k = slot[tok] = len(slot)
                    if k == len(self.values):
                        self.values = np.resize(self.values, 2 * k)
                        self.words = np.resize(self.words, 2 * k)
                    self.values[k], self.words[k] = self.score(tok)
            found = itemgetter(*distinct)(slot)
        if len(distinct) == 1:
            return np.array([found], dtype=np.int64)
        return np.fromiter(found, dtype=np.int64, count=len(distinct))

    def tally(self, texts: list[str], run_of: list[int], runs: int):
        if not texts:
            return [0] * runs, [0.0] * runs, [0] * runs, "", 0
        try:
            lists = pc.utf8_split_whitespace(pa.array(texts, pa.string()))
        except UnicodeEncodeError:  # a lone surrogate: arrow holds UTF-8 only
            return _python_tally(texts, run_of, runs, self.score)
        lens = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
        runs_arr = np.asarray(run_of, dtype=np.int64)
        tokens = np.bincount(runs_arr, weights=lens, minlength=runs).astype(np.int64)
        encoded = pc.list_flatten(lists).dictionary_encode()
        idx = encoded.indices.to_numpy(zero_copy_only=False)
        if not len(idx):
            return tokens.tolist(), [0.0] * runs, [0] * runs, "", 0
        distinct = encoded.dictionary.to_pylist()
        rows = self._slots(distinct)[idx]
        tok_run = np.repeat(runs_arr, lens)
        sums = np.bincount(tok_run, weights=self.values[rows], minlength=runs)
        n_words = np.bincount(tok_run, weights=self.words[rows], minlength=runs).astype(np.int64)
        counts = np.bincount(idx)
        top = int(np.argmax(counts))  # the first of the largest: the first seen
        return tokens.tolist(), sums.tolist(), n_words.tolist(), distinct[top], int(counts[top])


def _python_tally(texts, run_of, runs, score):
    scorer = pes2o._Scorer({}, 0.0)
    scorer.token = score
    return tuple(pes2o._tally_python(texts, run_of, runs, scorer))


# --------------------------------------------------------------------------- documents


def real_docs() -> list:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from pes2o import default_inputs, load

    from corpus.parse.latex import parse_eprint
    from corpus.parse.tei import parse_tei

    docs = load(default_inputs())
    for path in sorted((SHARED / "landing" / "tei").glob("*.tei.xml")):
        docs.append(parse_tei(path.read_bytes(), path.name.removesuffix(".tei.xml")))
    with tempfile.TemporaryDirectory() as scratch:
        for path in sorted((SHARED / "landing" / "src").glob("*.tar.gz")):
            parsed = parse_eprint(path, path.name.removesuffix(".tar.gz"), Path(scratch))
            if parsed.doc is not None:
                docs.append(parsed.doc)
    return docs


def doc_inputs(kind: str) -> list[tuple[list[str], list[int], int]]:
    """(paragraph texts, run of each, runs) per document, as compute_signals hands them to tally."""
    if kind == "real":
        paragraphs = [pes2o._paragraphs(doc) for doc in real_docs()]
    else:
        from pes2o_release import TextPool

        words = int(kind.removeprefix("gen"))
        pool = TextPool(2_000_000, seed=1)
        rng = np.random.default_rng(2)
        paragraphs = []
        for _ in range(200):
            text = pool.take(rng, words)
            paras = [p for p in text.split("\n\n") if p]
            paragraphs.append([(f"s{i // 6}", pes2o._clean(p)[0], 0) for i, p in enumerate(paras)])
    out = []
    for paras in paragraphs:
        texts, run_of, names = [], [], []
        for section, text, _ in paras:
            if not names or names[-1] != section:
                names.append(section)
            texts.append(text)
            run_of.append(len(names) - 1)
        out.append((texts, run_of, len(names)))
    return out


# --------------------------------------------------------------------------- measurements


def measure_tally(impl: str, kind: str, min_docs: int, repeats: int) -> dict:
    docs = doc_inputs(kind)
    scorer = pes2o._scorer()
    table = scorer.table if impl == "c" else ArrowTally(scorer.token)
    other = ArrowTally(scorer.token) if impl == "c" else scorer.table
    for texts, run_of, runs in docs:  # equal on every document (and warms both caches)
        assert tuple(table.tally(texts, run_of, runs)) == tuple(other.tally(texts, run_of, runs))
    n = max(min_docs, len(docs))
    mb = sum(len(t.encode("utf-8", "surrogatepass")) for i in range(n) for t in docs[i % len(docs)][0]) / 1e6
    best = float("inf")
    for _ in range(repeats):
        c0 = time.process_time()
        for i in range(n):
            table.tally(*docs[i % len(docs)])
        best = min(best, time.process_time() - c0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cpu_s": best, "docs": n, "mb": mb, "peak_mb": peak}


def measure_pes2o(impl: str, min_docs: int, repeats: int) -> dict:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from pes2o import best_cpu, default_inputs, load, run_once

    if impl == "arrow":
        import threading

        local = threading.local()

        def table(self):
            if getattr(local, "t", None) is None:
                local.t = ArrowTally(self.token)
            return local.t

        pes2o._Scorer.table = property(table)
        pes2o.collapse = lambda s: " ".join(s.split())
        pes2o.count_tokens = lambda s: len(s.split())
    docs = load(default_inputs())
    pes2o.log2_table()
    n = max(min_docs, len(docs))
    kept = {}
    cpu, _ = best_cpu(lambda: kept.update(run_once(docs, n)), repeats)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cpu_s": cpu, "docs": n, "peak_mb": peak, "kept": kept}


def child(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--one", *args], check=True, capture_output=True, text=True, cwd=REPO
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--min-docs", type=int, default=600)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        if args.one[0] == "pes2o":
            print(json.dumps(measure_pes2o(args.one[1], args.min_docs, args.repeats)))
        else:
            print(json.dumps(measure_tally(args.one[0], args.one[1], args.min_docs, args.repeats)))
        return
    figures: dict[str, float] = {}
    for kind in ("real", "gen1000", "gen8000"):
        got = {impl: child(impl, kind, "--min-docs", str(args.min_docs)) for impl in ("c", "arrow")}
        for impl, r in got.items():
            figures[f"{kind}_{impl}_docs_per_s"] = r["docs"] / r["cpu_s"]
            figures[f"{kind}_{impl}_mb_per_s"] = r["mb"] / r["cpu_s"]
            figures[f"{kind}_{impl}_cpu_s"] = r["cpu_s"]
            figures[f"{kind}_{impl}_peak_mb"] = r["peak_mb"]
        ratio = got["arrow"]["cpu_s"] / got["c"]["cpu_s"]
        figures[f"{kind}_arrow_over_c"] = ratio
        print(
            f"{kind:8s} {got['c']['docs']} docs, {got['c']['mb']:.1f} MB: "
            + ", ".join(
                f"{impl} {r['docs'] / r['cpu_s']:.0f} docs/s {r['mb'] / r['cpu_s']:.1f} MB/s "
                f"({r['cpu_s']:.2f} CPU s, peak {r['peak_mb']:.0f} MB)"
                for impl, r in got.items()
            )
            + f"; arrow/C CPU {ratio:.2f}x",
            flush=True,
        )
    whole = {impl: child("pes2o", impl, "--min-docs", str(args.min_docs)) for impl in ("c", "arrow")}
    assert whole["c"]["kept"] == whole["arrow"]["kept"], whole
    slowdown = whole["arrow"]["cpu_s"] / whole["c"]["cpu_s"]
    for impl, r in whole.items():
        figures[f"pes2o_{impl}_docs_per_s"] = r["docs"] / r["cpu_s"]
        figures[f"pes2o_{impl}_peak_mb"] = r["peak_mb"]
    figures["pes2o_slowdown"] = slowdown
    print(
        "peS2o benchmark (compute_signals + release): "
        + ", ".join(f"{impl} {r['docs'] / r['cpu_s']:.0f} docs/s per core" for impl, r in whole.items())
        + f"; vectorised/C CPU {slowdown:.2f}x (rule: keep C only above 1.5x)",
        flush=True,
    )
    result(**figures)


if __name__ == "__main__":
    main()
