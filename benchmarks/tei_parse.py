"""TEI -> S2ORC-style structured JSON throughput (DESIGN.md §6: >= 250 files/s per core).

    python benchmarks/tei_parse.py [FILE.tei.xml ...]

Default input: every real Grobid TEI in ../shared (data/**/*.tei.xml, the TEI under
pdf_tei_pairs and grobid_tei, landing/tei). Each file is parsed in rounds until at
least ``--seconds`` of work; timing is CPU time of this one process (= per core).
The machine is shared, so the best round is reported next to the mean.
Two paths are timed: ``parse_tei_dict`` (the JSON dict, what bulk writers use) and
``parse_tei`` (the validated pydantic model).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _common import SHARED, peak_mb, result

from corpus.parse.tei import TeiError, parse_tei, parse_tei_dict


def default_files() -> list[Path]:
    data, landing = SHARED / "data", SHARED / "landing"
    files = set(data.glob("**/*.tei.xml"))
    files |= set((data / "pdf_tei_pairs").glob("**/*.xml"))
    files |= set((data / "grobid_tei").glob("**/*.xml"))
    files |= set((landing / "tei").glob("*.xml"))
    return sorted(files)


def run_rounds(fn, blobs: list[tuple[str, bytes]], seconds: float) -> tuple[list[float], int]:
    """CPU seconds per round over all files; stops after ``seconds`` of CPU time (at least 3 rounds)."""
    rounds: list[float] = []
    failures = 0
    while len(rounds) < 3 or sum(rounds) < seconds:
        start = time.process_time()
        for name, data in blobs:
            try:
                fn(data, name)
            except TeiError:
                failures += 1
        rounds.append(time.process_time() - start)
    return rounds, failures // len(rounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--seconds", type=float, default=6.0, help="CPU seconds per timed path")
    args = ap.parse_args()
    files = args.files or default_files()
    if not files:
        raise SystemExit("no TEI files found (give paths, or put ../shared next to the repo)")
    blobs = [(p.name, p.read_bytes()) for p in files]
    n = len(blobs)
    mb = sum(len(b) for _, b in blobs) / 1e6
    print(f"{n} TEI files, {mb:.2f} MB")

    figures = {}
    for label, fn in (("dict", parse_tei_dict), ("model", parse_tei)):
        rounds, failed = run_rounds(fn, blobs, args.seconds)
        mean, best = sum(rounds) / len(rounds), min(rounds)
        figures[label] = (n / mean, n / best, mb / mean, failed)
        print(
            f"{label:5s}: {n / mean:7.1f} files/s per core (best round {n / best:.1f}), "
            f"{mb / mean:6.2f} MB/s, {len(rounds)} rounds, {failed} files rejected"
        )
    spans = sum(len(p["cite_spans"]) for _, b in blobs for p in _safe_body(b))
    print(f"cite spans per pass: {spans}; peak memory {peak_mb():.0f} MB")
    d, m = figures["dict"], figures["model"]
    result(
        files=n,
        files_per_s=round(d[0], 1),
        files_per_s_best=round(d[1], 1),
        mb_per_s=round(d[2], 2),
        model_files_per_s=round(m[0], 1),
        rejected=d[3],
        peak_mb=round(peak_mb(), 1),
    )


def _safe_body(data: bytes) -> list[dict]:
    try:
        return parse_tei_dict(data, "x")["body_text"]
    except TeiError:
        return []


if __name__ == "__main__":
    main()
