"""Synthetic landing zones for the demo, tests and benchmarks (``python -m corpus.sample``).

One record model (:class:`corpus.ingest.records.ArxivRecord`, built by
:func:`iter_sample_records` in datestamp order, :mod:`corpus.sample.metadata`, from the word
lists of :mod:`corpus.sample.vocabulary`) feeds several writers (:mod:`corpus.sample.formats`):

* :class:`OaiArxivWriter` -- ``DIR/oai/<YYYY-MM-DD>.xml``, one OAI-PMH ListRecords
  reply per datestamp day in arXiv's ``arXiv`` metadata format, byte-compatible
  with ``shared/landing/oai`` (envelope, namespaces, element order, title and
  abstract hard-wrapped at 72/79 columns). Big days can be split into pages
  ``<day>-pNNN.xml`` chained by ``resumptionToken`` (the last one empty), as the
  endpoint serves them;
* :class:`KaggleWriter` -- the same records as Kaggle snapshot lines;
* :func:`abs_text` -- the same record as an arXiv ``.abs`` file.

* :class:`corpus.sample.documents.FullTextWriter` (``full_text=True``, CLI ``--full-text``) --
  the same records as papers: ``pdf/``, ``tei/``, ``src/`` files and
  ``sample_manifest.jsonl`` (what was planned, the ground truth for tests).

What the records look like: new submissions on their announcement day (new-style
4-digit ids before 2015, 5-digit after, old-style ``archive/YYMMNNN`` before April
2007, numbers consistent with the creation month); revisions of papers seen
earlier in the run (same id on a later day, next version, ``created < updated``);
revisions of older papers (old-style ids with archive-consistent categories such
as ``math/0309136`` in ``math.GT``); realistic categories with cross-lists, sets,
English-like titles and abstracts from word lists, authors with particles,
suffixes, affiliations and collaborations, some DOIs, journal-refs, report
numbers, MSC/ACM classes and licences. Everything is derived from ``seed``, so a
seed gives byte-identical files. Memory is bounded (one page of text, a capped
reservoir of revisable papers, per-month id counters), so 1M records stream.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from corpus.ingest.records import ArxivRecord
from corpus.sample.formats import (
    OAI_BASE_URL,
    KaggleWriter,
    OaiArxivWriter,
    abs_text,
    kaggle_line,
    oai_record_xml,
)
from corpus.sample.metadata import (
    FIVE_DIGIT_START,
    NEW_STYLE_START,
    authors_to_raw,
    day_counts,
    iter_sample_records,
    wrap_abstract,
    wrap_title,
)

__all__ = [
    "SampleSummary",
    "day_counts",
    "iter_sample_records",
    "generate_landing",
    "OaiArxivWriter",
    "KaggleWriter",
    "abs_text",
    "authors_to_raw",
    "kaggle_line",
    "oai_record_xml",
    "wrap_title",
    "wrap_abstract",
    "OAI_BASE_URL",
    "NEW_STYLE_START",
    "FIVE_DIGIT_START",
    "main",
]


# ---------------------------------------------------------------- driver


@dataclass
class SampleSummary:
    out: Path
    records: int
    per_day: dict[str, int] = field(default_factory=dict)  # ISO date -> records (days with none omitted)
    files: list[Path] = field(default_factory=list)
    distinct_ids: int = 0
    old_style: int = 0
    revisions: int = 0
    full_text: dict[str, int] = field(default_factory=dict)  # files written per kind (full_text=True)

    def as_dict(self) -> dict:
        extra = {"full_text": self.full_text} if self.full_text else {}
        return {
            "out": str(self.out),
            "records": self.records,
            "days": len(self.per_day),
            "files": len(self.files),
            "distinct_ids": self.distinct_ids,
            "old_style": self.old_style,
            "revisions": self.revisions,
            **extra,
        }


def _tee(
    records: Iterator[ArxivRecord], writers: Sequence[Callable[[ArxivRecord], object]]
) -> Iterator[ArxivRecord]:
    for rec in records:
        for write in writers:
            write(rec)
        yield rec


def generate_landing(
    out: str | Path,
    n_records: int = 1000,
    days: int = 7,
    start: dt.date | str = "2007-03-30",
    seed: int = 0,
    page_size: int | None = None,
    also: Sequence[Callable[[ArxivRecord], object]] = (),
    full_text: bool = False,
) -> SampleSummary:
    """Write a synthetic landing zone ``out/oai/*.xml``; stream, bounded memory, deterministic by seed.

    ``also``: more writers, each called with every record in datestamp order (e.g.
    ``KaggleWriter.write``). ``full_text``: also write every paper's PDF / TEI / e-print
    (:class:`corpus.sample.documents.FullTextWriter`); its counts go to ``summary.full_text``."""
    out = Path(out)
    writer_ft = None
    if full_text:
        from corpus.sample.documents import FullTextWriter

        writer_ft = FullTextWriter(out, seed=seed)
        also = [*also, writer_ft.write]
    start = dt.date.fromisoformat(start) if isinstance(start, str) else start
    counts = day_counts(n_records, days, start, seed)
    writer = OaiArxivWriter(out, page_size=page_size, seed=seed)
    summary = SampleSummary(out=out, records=n_records)
    stats: dict[str, int] = {}
    stream = iter_sample_records(n_records, days, start, seed, counts=counts, stats=stats)
    if also:
        stream = _tee(stream, also)
    for i, count in enumerate(counts):
        if count:
            day = start + dt.timedelta(days=i)
            writer.write_day(day, stream, count)
            summary.per_day[day.isoformat()] = count
    summary.files = writer.files
    if writer_ft is not None:
        writer_ft.close()
        summary.full_text = writer_ft.summary()
    summary.old_style, summary.revisions, summary.distinct_ids = (
        stats["old_style"],
        stats["revisions"],
        stats["new_ids"],
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m corpus.sample", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, type=Path, help="landing zone to write (DIR/oai/*.xml)")
    p.add_argument("--records", type=int, default=1000, help="OAI records in total (default 1000)")
    p.add_argument("--days", type=int, default=7, help="datestamp days (default 7)")
    p.add_argument(
        "--start", default="2007-03-30", help="first datestamp day, YYYY-MM-DD (default 2007-03-30)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--page-size", type=int, default=None, help="split days with more records into pages")
    p.add_argument(
        "--full-text",
        action="store_true",
        help="also write pdf/, tei/, src/ files and sample_manifest.jsonl (every asset of the demo gets rows)",
    )
    p.add_argument(
        "--bulk",
        type=Path,
        default=None,
        help="with --full-text: pack the PDFs and e-prints into a bulk root DIR in arXiv's layout "
        "(pdf/ and src/ tars + manifests) instead of leaving them in the landing zone",
    )
    args = p.parse_args(argv)
    if args.bulk and not args.full_text:
        p.error("--bulk needs --full-text (it packs the full-text files)")
    try:
        start = dt.date.fromisoformat(args.start)
    except ValueError:
        p.error(f"--start must be YYYY-MM-DD, got {args.start!r}")
    versions: dict[str, int] = {}

    def remember(rec: ArxivRecord) -> None:
        versions[rec.id] = max(versions.get(rec.id, 0), rec.version or 1)

    summary = generate_landing(
        args.out, args.records, args.days, start, args.seed, args.page_size,
        also=[remember] if args.bulk else [], full_text=args.full_text,
    )  # fmt: skip
    result = summary.as_dict()
    if args.bulk:
        from corpus.sample.bulk import move_files_out, write_bulk_root

        result["bulk"] = {"root": str(args.bulk), **write_bulk_root(args.out, args.bulk, versions)}
        move_files_out(args.out)
    print(json.dumps(result), file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
