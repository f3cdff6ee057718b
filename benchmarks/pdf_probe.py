"""PDF probe + S2ORC filters throughput: PDFs/s on one core, peak memory.

    python benchmarks/pdf_probe.py [PDF ...] [--repeat N]

Without arguments it probes every real PDF in ../shared (data/pdfs,
data/pdf_tei_pairs, landing/pdf), repeated so the timing is stable. Files are
probed from disk (what the asset does), so the OS page cache is warm after the
first round; the first round is reported separately.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import SHARED, peak_mb, result, timer

from corpus.ingest.pdf import filter_table, pdf_row, probe_pdf


def default_inputs() -> list[Path]:
    data, landing = SHARED / "data", SHARED / "landing"
    return sorted(
        [*data.glob("pdfs/**/*.pdf"), *data.glob("pdf_tei_pairs/**/*.pdf"), *landing.glob("pdf/*.pdf")]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    files = args.inputs or default_inputs()
    if not files:
        raise SystemExit("no PDFs found (give paths or set up ../shared)")
    total_bytes = sum(p.stat().st_size for p in files)

    with timer() as first:
        rows = [pdf_row(probe_pdf(p)) for p in files]
    with timer() as t:
        for _ in range(args.repeat):
            for p in files:
                probe_pdf(p)
    n = len(files) * args.repeat
    per_s = n / t["s"]
    slowest = max(files, key=lambda p: _time_one(p))

    for row in filter_table(rows):
        print(f"{row['reason']:>16} {row['count']:5d} {row['share']:.3f}")
    print(
        f"{len(files)} PDFs ({total_bytes / 1e6:.1f} MB) x {args.repeat}: {per_s:.1f} PDFs/s "
        f"({1000 / per_s:.2f} ms each), first round {len(files) / first['s']:.1f} PDFs/s, "
        f"slowest {slowest.name} {_time_one(slowest) * 1000:.1f} ms"
    )
    result(
        pdfs_per_s=per_s, first_round_pdfs_per_s=len(files) / first["s"], files=len(files), peak_mb=peak_mb()
    )


def _time_one(path: Path) -> float:
    with timer() as t:
        probe_pdf(path)
    return t["s"]


if __name__ == "__main__":
    main()
