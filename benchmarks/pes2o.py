"""peS2o attributes + v1/v2 selections: documents per second per core, and peak memory.

    python benchmarks/pes2o.py [INPUT ...] [--min-docs N] [--repeats R]

INPUT: S2ORC JSON records (``*.json``) or unarXive JSONL files (``*.jsonl``, or the
sample ``*.tar.gz``). Without inputs it runs on the real ones in ../shared: the
S2ORC records of s2orc-doc2json and s2orc_repo and the unarXive 2022 sample.

Per document: ``compute_signals`` once, then ``release``: the s2orc and s2ag
selections for v1 and v2 and the document of every kept (source, version). The docs are
cycled until ``--min-docs`` have been processed; the figure is the best of
``--repeats`` runs in CPU seconds of this one process (so "per core", and less
disturbed by other work on a shared machine). Wall-clock figures are printed too.

The cost grows with a paper's length (cld2 reads every paragraph), so words/s is
printed beside docs/s. ``asset_docs_per_s_per_core`` is the daily ``pes2o`` asset's
work per paper on the same documents: the stored parse decoded from JSON and
validated (:func:`corpus.release.pes2o_table.paper_doc`), then its s2orc and s2ag rows
(:func:`corpus.release.pes2o_table.paper_rows`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

from _common import SHARED, peak_mb, result

from corpus.parse.document import StructuredDoc
from corpus.parse.s2orc_json import iter_unarxive, read_s2orc_record
from corpus.release import pes2o
from corpus.release.pes2o_table import paper_rows

S2ORC_DIR = SHARED / "data" / "s2orc_family"


def load(paths: list[Path]) -> list[StructuredDoc]:
    """S2ORC JSON records and unarXive JSONL (or its sample .tar.gz), via corpus.parse.s2orc_json."""
    docs: list[StructuredDoc] = []
    for path in paths:
        if path.name.endswith((".tar.gz", ".jsonl", ".jsonl.gz")):
            docs.extend(iter_unarxive(path))
        else:
            docs.append(read_s2orc_record(json.loads(path.read_text())))
    return docs


def default_inputs() -> list[Path]:
    return [
        *sorted((S2ORC_DIR / "s2orc-doc2json" / "s2orc").glob("*.json")),
        S2ORC_DIR / "s2orc_repo" / "example_paper.json",
        S2ORC_DIR / "unarXive" / "unarXive_data_sample.tar.gz",
    ]


def run_once(docs: list[StructuredDoc], n: int) -> dict[str, int]:
    kept = {"s2orc_v1": 0, "s2orc_v2": 0, "s2ag_v1": 0, "s2ag_v2": 0}
    for i in range(n):
        doc = docs[i % len(docs)]
        sig = pes2o.compute_signals(doc)
        for outcome in pes2o.release(doc, sig, "2024-01-01", f"{doc.year or 1970}-01-01"):
            kept[f"{outcome.source}_{outcome.version}"] += outcome.keep
    return kept


def asset_inputs(docs: list[StructuredDoc]) -> list[tuple[dict, str]]:
    """(papers row, chosen parse as stored JSON) of every doc, as the daily asset reads them."""
    out = []
    for doc in docs:
        row = {
            "id": doc.paper_id,
            "title": doc.title,
            "abstract": "\n\n".join(p.text for p in doc.abstract),
            "abstract_source": "arxiv",
            "year": doc.year or 1970,
            "created": dt.date(doc.year or 1970, 1, 1),
        }
        out.append((row, json.dumps({"source": doc.source, **doc.model_dump(include={"body_text"})})))
    return out


def run_asset_once(inputs: list[tuple[dict, str]], n: int) -> int:
    day = dt.date(2024, 1, 1)
    rows = 0
    for i in range(n):
        row, text = inputs[i % len(inputs)]
        rows += len(paper_rows(row, text, day))
    return rows


def best_cpu(fn, repeats: int) -> tuple[float, float]:
    """(best CPU s, best wall s) of ``repeats`` calls of ``fn``."""
    cpu = wall = float("inf")
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return cpu, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="*", type=Path)
    ap.add_argument("--min-docs", type=int, default=600)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    paths = args.inputs or default_inputs()
    docs = load(paths)
    if not docs:
        raise SystemExit("no documents in the inputs")
    words = sum(len(p.text.split()) for d in docs for p in d.body_text) / len(docs)
    paras = sum(len(d.body_text) for d in docs) / len(docs)
    print(
        f"{len(docs)} documents from {len(paths)} inputs; {words:.0f} words, {paras:.0f} paragraphs per doc"
    )

    t0 = time.perf_counter()
    pes2o.log2_table()
    table_s = time.perf_counter() - t0
    print(f"word table: {len(pes2o.log2_table())} words in {table_s:.2f} s (once per process)")

    n = max(args.min_docs, len(docs))
    kept: dict[str, int] = {}

    def core() -> None:
        kept.update(run_once(docs, n))

    cpu, wall = best_cpu(core, args.repeats)
    per_core = n / cpu
    print(f"{n} docs: best {cpu:.2f} CPU s ({per_core:.0f} docs/s per core), {wall:.2f} wall s")
    print("kept per (source, version):", kept)
    inputs = asset_inputs(docs)
    asset_cpu, _ = best_cpu(lambda: run_asset_once(inputs, n), args.repeats)
    print(f"asset path (parse JSON -> paper_rows): {n / asset_cpu:.0f} docs/s per core")
    result(
        docs_per_s_per_core=per_core,
        docs_per_s_wall=n / wall,
        words_per_s_per_core=per_core * words,
        asset_docs_per_s_per_core=n / asset_cpu,
        docs=n,
        words_per_doc=round(words),
        table_load_s=table_s,
        peak_mb=peak_mb(),
    )


if __name__ == "__main__":
    main()
