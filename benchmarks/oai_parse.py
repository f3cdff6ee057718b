"""OAI page parse speed: records/s per core and peak memory (target >= 20,000 records/s per core),
and the landing index's byte scan (``scan_page``) in MB/s.

    python benchmarks/oai_parse.py [PAGE.xml ...]        # given pages
    python benchmarks/oai_parse.py --generate 1000000    # the real pages, then 1M generated records

Runs in one process (one core). The real pages are parsed repeatedly until at
least ``--min-seconds`` have passed, so small captures still time reliably.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import SHARED, peak_mb, result

from corpus.ingest.oai import iter_page, scan_page
from corpus.ingest.records import FailedRecord


def parse_files(files: list[Path], min_seconds: float) -> tuple[int, int, float, int]:
    """Parse ``files`` repeatedly; return (records, failures, CPU seconds, bytes)."""
    records = failures = size = 0
    start = time.process_time()  # CPU seconds of this process: a per-core rate, robust to a busy machine
    while True:
        for path in files:
            data = path.read_bytes()
            size += len(data)
            for item in iter_page(data, str(path)):
                if isinstance(item, FailedRecord):
                    failures += 1
                else:
                    records += 1
        elapsed = time.process_time() - start
        if elapsed >= min_seconds:
            return records, failures, elapsed, size


def real_pages() -> list[Path]:
    oai = SHARED / "data" / "oai_pmh"
    files = [
        oai / "cos_scrapi" / "arxiv_oai_dc_ListRecords_2014-12-24.xml",
        oai / "mikesaelim_arXivOAIHarvester" / "ListRecordsResponse.xml",
        *sorted((oai / "inspirehep_hepcrawl" / "functional").glob("*.xml")),
        *sorted((SHARED / "landing" / "oai").glob("*.xml")),
    ]
    return [f for f in files if f.exists()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("inputs", nargs="*", type=Path)
    parser.add_argument(
        "--generate", type=int, default=0, help="also parse N generated records (corpus.sample.landing_zone)"
    )
    parser.add_argument("--min-seconds", type=float, default=3.0)
    args = parser.parse_args()

    figures: dict[str, float | int] = {}
    files = args.inputs or real_pages()
    n, failed, secs, size = parse_files(files, args.min_seconds)
    print(
        f"real/given pages: {len(files)} files, {n} records ({failed} failed) in {secs:.2f}s "
        f"= {n / secs:,.0f} records/s, {size / secs / 1e6:.1f} MB/s"
    )
    figures["records_per_s"] = round(n / secs)
    figures["mb_per_s"] = round(size / secs / 1e6, 1)
    pages = [p.read_bytes() for p in files]
    start, scanned = time.process_time(), 0
    while time.process_time() - start < 1.0:  # the landing index's byte scan (cached per file)
        for data in pages:
            scan_page(data)
            scanned += len(data)
    figures["scan_mb_per_s"] = round(scanned / (time.process_time() - start) / 1e6)

    if args.generate:
        from corpus.sample.landing_zone import generate_landing

        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            generate_landing(Path(tmp), n_records=args.generate, days=365, start="2023-01-01", seed=1)
            gen_s = time.perf_counter() - t0
            pages = sorted((Path(tmp) / "oai").glob("*.xml"))
            n, failed, secs, size = parse_files(pages, 0.0)
            print(
                f"generated: {len(pages)} pages, {n} records ({failed} failed) generated in {gen_s:.1f}s, "
                f"parsed in {secs:.1f}s = {n / secs:,.0f} records/s"
            )
            figures["generated_records"] = n
            figures["generated_records_per_s"] = round(n / secs)
    figures["peak_mb"] = round(peak_mb(), 1)
    result(**figures)


if __name__ == "__main__":
    main()
