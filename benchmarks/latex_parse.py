"""LaTeX -> StructuredDoc throughput: papers/s per core (one process) and peak memory.

    python benchmarks/latex_parse.py [EPRINT_OR_DIR ...]

Inputs are e-prints (.gz / .tar.gz / .tex) or unpacked source directories; by
default every real source under ../shared (S2ORC and SciFact e-prints, the
landing zone, the engrafo papers, the Korzen item, the paper repo). Two figures:

* ``parse``: ``parse_latex`` on assembled sources, repeated for several rounds
  with pylatexenc's piece cache cleared each round, so no paper is cheaper the
  second time;
* ``end_to_end``: unpack into a scratch dir + find main + assemble + parse.

Times are CPU seconds of this process (the machine is shared), wall shown too.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from _common import SHARED, peak_mb, result

from corpus.ingest.eprint import assemble_source, find_main_tex
from corpus.parse.latex import parse_eprint, parse_latex
from corpus.parse.latex.text import _pylatexenc

DEFAULTS = [
    SHARED / "data/latex_sources/s2orc-doc2json/1911.02782.gz",
    SHARED / "data/latex_sources/s2orc-doc2json/2004.14974.gz",
    SHARED / "landing/src/2408.12714.tar.gz",
    SHARED / "data/latex_sources/engrafo/1707.08043",
    SHARED / "data/latex_sources/engrafo/1708.00137",
    SHARED / "data/latex_sources/korzen_benchmark/astro-ph0001004",
    SHARED / "data/latex_sources/paper_repos/DropImpact_PRL_arXiv",
]


def main(argv: list[str]) -> None:
    inputs = [Path(a) for a in argv] or DEFAULTS
    rounds = 5
    with tempfile.TemporaryDirectory(prefix="latex-bench-") as tmp:
        scratch_root = Path(tmp)
        # end to end (unpack + assemble + parse), each input once per round
        sources = []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        failures = 0
        for r in range(rounds):
            _pylatexenc.cache_clear()
            for n, path in enumerate(inputs):
                if path.is_dir():
                    src = assemble_source(path, find_main_tex(path))
                    doc = parse_latex(src, path.name)
                    if r == 0:
                        sources.append((path.name, src))
                else:
                    res = parse_eprint(path, path.name, scratch_root / f"{r}-{n}", keep=r == 0)
                    failures += res.failure is not None
                    if r == 0 and res.doc is not None:
                        root = scratch_root / f"{r}-{n}"
                        sources.append((path.name, assemble_source(root, find_main_tex(root))))
        e2e_cpu, e2e_wall = time.process_time() - cpu0, time.perf_counter() - wall0
        n_e2e = rounds * len(inputs)

        size = sum(len(src.text) + len(src.bbl or "") for _, src in sources)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        paragraphs = cites = 0
        for _ in range(rounds):
            _pylatexenc.cache_clear()
            for pid, src in sources:
                doc = parse_latex(src, pid)
                paragraphs += len(doc.body_text)
                cites += sum(len(p.cite_spans) for p in doc.body_text)
        parse_cpu, parse_wall = time.process_time() - cpu0, time.perf_counter() - wall0
        n_parse = rounds * len(sources)

    print(f"inputs: {len(inputs)} papers, {size / 1024:.0f} kB of assembled LaTeX, {rounds} rounds")
    print(f"parse only : {n_parse / parse_cpu:.1f} papers/s per core (CPU), {n_parse / parse_wall:.1f} wall")
    print(
        f"             {rounds * size / 1024 / parse_cpu:.0f} kB/s; {paragraphs / n_parse:.0f} paragraphs, {cites / n_parse:.0f} cite spans per paper"
    )
    print(
        f"end to end : {n_e2e / e2e_cpu:.1f} papers/s per core (CPU), {n_e2e / e2e_wall:.1f} wall; failures {failures}"
    )
    result(
        papers_per_s=round(n_parse / parse_cpu, 2),
        e2e_papers_per_s=round(n_e2e / e2e_cpu, 2),
        kb_per_s=round(rounds * size / 1024 / parse_cpu, 1),
        peak_mb=round(peak_mb(), 1),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
