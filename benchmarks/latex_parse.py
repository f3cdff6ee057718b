"""LaTeX -> StructuredDoc throughput: papers/s per core (one process) and peak memory.

    python benchmarks/latex_parse.py [--instructions] [EPRINT_OR_DIR ...]

Inputs are e-prints (.gz / .tar.gz / .tex) or unpacked source directories; by
default every real source under ../shared (S2ORC and SciFact e-prints, the
landing zone, the engrafo papers, the Korzen item, the paper repo). Two figures:

* ``parse``: ``parse_latex`` on assembled sources, repeated for several rounds
  with pylatexenc's piece cache cleared each round, so no paper is cheaper the
  second time;
* ``end_to_end``: unpack into a scratch dir + find main + assemble + parse.

Times are CPU seconds of this process (the machine is shared), wall shown too; CPU per paper
(mean and worst, with the paper's size), and how parse CPU grows with input size (the largest
paper's body repeated 1x, 2x and 4x: linear stays ~1, 2, 4). ``--instructions`` also counts the
instructions of one parse round under ``valgrind --tool=callgrind`` (hardware counters are not
available on every machine, ``perf stat`` among them; callgrind runs ~50x slower).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import SHARED, peak_mb, result

from corpus.ingest.eprint import LatexSource, assemble_source, find_main_tex
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
    count_instructions = "--instructions" in argv
    one_round = "--one-round" in argv  # what --instructions runs under callgrind
    named = [Path(a) for a in argv if not a.startswith("--")]
    inputs = named if one_round else named or DEFAULTS
    if one_round:  # under callgrind: imports (and the tables they build), then one parse of each
        parse_latex(
            LatexSource(main="m.tex", text="\\documentclass{article}\\begin{document}x\\end{document}"), "w"
        )
        sources = [(p.name, assemble_source(p, find_main_tex(p))) for p in inputs if p.is_dir()]
        for pid, src in sources:
            parse_latex(src, pid)
        return
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
        per_paper = dict.fromkeys((pid for pid, _ in sources), 0.0)
        for _ in range(rounds):
            _pylatexenc.cache_clear()
            for pid, src in sources:
                t0 = time.process_time()
                doc = parse_latex(src, pid)
                per_paper[pid] += time.process_time() - t0
                paragraphs += len(doc.body_text)
                cites += sum(len(p.cite_spans) for p in doc.body_text)
        parse_cpu, parse_wall = time.process_time() - cpu0, time.perf_counter() - wall0
        n_parse = rounds * len(sources)
        growth = _growth(max(sources, key=lambda s: len(s[1].text))[1]) if sources else []

    print(f"inputs: {len(inputs)} papers, {size / 1024:.0f} kB of assembled LaTeX, {rounds} rounds")
    print(f"parse only : {n_parse / parse_cpu:.1f} papers/s per core (CPU), {n_parse / parse_wall:.1f} wall")
    print(
        f"             {rounds * size / 1024 / parse_cpu:.0f} kB/s; {paragraphs / n_parse:.0f} paragraphs, {cites / n_parse:.0f} cite spans per paper"
    )
    sizes = {pid: len(src.text) / 1024 for pid, src in sources}
    worst = max(per_paper, key=per_paper.get) if per_paper else ""
    print(
        f"CPU per paper: mean {1000 * parse_cpu / max(n_parse, 1):.1f} ms; worst {1000 * per_paper.get(worst, 0) / rounds:.1f} ms"
        f" ({worst}, {sizes.get(worst, 0):.0f} kB)"
    )
    for pid in sorted(per_paper, key=sizes.get):
        print(f"  {pid:40s} {sizes[pid]:6.0f} kB {1000 * per_paper[pid] / rounds:7.1f} ms")
    if growth:
        print("growth (largest paper's body x1, x2, x4): " + ", ".join(f"{t * 1000:.0f} ms" for t in growth))
    print(
        f"end to end : {n_e2e / e2e_cpu:.1f} papers/s per core (CPU), {n_e2e / e2e_wall:.1f} wall; failures {failures}"
    )
    extra: dict[str, float | int] = {}
    if count_instructions:
        dirs = [str(p) for p in inputs if p.is_dir()]
        full, start_up = _callgrind(dirs), _callgrind([])  # the parses, less the imports
        instructions = full - start_up if full is not None and start_up is not None else None
        if instructions is not None and dirs:
            extra["instructions_per_paper"] = instructions // len(dirs)
            print(f"instructions (callgrind, one round of {len(dirs)} papers): {instructions:,}")
    result(
        papers_per_s=round(n_parse / parse_cpu, 2),
        e2e_papers_per_s=round(n_e2e / e2e_cpu, 2),
        kb_per_s=round(rounds * size / 1024 / parse_cpu, 1),
        ms_per_paper=round(1000 * parse_cpu / max(n_parse, 1), 2),
        growth_x4=round(growth[-1] / growth[0], 2) if growth and growth[0] else 0.0,
        **extra,
        peak_mb=round(peak_mb(), 1),
    )


def _growth(src) -> list[float]:
    """Parse CPU of one paper whose body is repeated 1, 2 and 4 times (best of 3 each)."""
    head, sep, body = src.text.partition("\\begin{document}")
    body, end, tail = body.rpartition("\\end{document}")
    if not sep or not end:
        return []
    times = []
    for k in (1, 2, 4):
        bigger = src.model_copy(update={"text": head + sep + body * k + end + tail})
        best = float("inf")
        for _ in range(3):
            _pylatexenc.cache_clear()
            t0 = time.process_time()
            parse_latex(bigger, "growth")
            best = min(best, time.process_time() - t0)
        times.append(best)
    return times


def _callgrind(dirs: list[str]) -> int | None:
    """Instructions one parse round of ``dirs`` executes (callgrind's count), else None."""
    try:
        run = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                sys.executable,
                __file__,
                "--one-round",
                *dirs,
            ],
            capture_output=True,
            text=True,
            timeout=3600,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"Collected\s*:\s*(\d+)", run.stderr)
    return int(m.group(1)) if m else None


if __name__ == "__main__":
    main(sys.argv[1:])
