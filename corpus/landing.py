"""The landing zone: a local mirror of what arXiv serves, and the demo's input.

Layout (DESIGN.md §2)::

    landing/oai/*.xml               OAI-PMH ListRecords replies as the endpoint returned them
    landing/pdf/<id>.pdf            id without version; '/' -> '_'
    landing/src/<id>.gz|.tar.gz     e-prints as served
    landing/tei/<id>.tei.xml        existing Grobid output for that PDF

Records are assigned to daily partitions by their header datestamp, whatever
file they arrived in. Which files hold which datestamps is learnt with a byte
regex (no XML parse) and cached by (size, mtime), so reading one day of a
landing zone with years of pages opens only the files that hold that day.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from corpus.oai import OaiError, OaiPage, OaiParseError, iter_page, scan_datestamps
from corpus.records import ArxivRecord, FailedRecord
from corpus.store import atomic_write_bytes

DEFAULT_LANDING = "./landing"
DEFAULT_START_DATE = "2007-04-01"  # first new-style ids; CORPUS_START_DATE moves the first partition


def landing_root() -> Path:
    return Path(os.environ.get("CORPUS_LANDING", DEFAULT_LANDING))


@dataclass
class DayRecords:
    """What the landing zone holds for a set of days, ready to write per partition."""

    records: dict[str, list[ArxivRecord]] = field(default_factory=dict)  # date -> records
    failures: list[FailedRecord] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    duplicates_dropped: int = 0


class LandingZone:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.oai_dir = self.root / "oai"
        self.pdf_dir = self.root / "pdf"
        self.src_dir = self.root / "src"
        self.tei_dir = self.root / "tei"

    def oai_files(self) -> list[Path]:
        if not self.oai_dir.exists():
            return []
        return sorted(p for p in self.oai_dir.glob("*.xml") if p.is_file() and not p.name.startswith("."))

    # ------------------------------------------------------------ datestamp index

    def datestamp_index(self, cache: Path | None = None) -> dict[str, dict[str, int]]:
        """``{file name: {datestamp: record count}}`` for every OAI page, cached by (size, mtime)."""
        cached: dict = {}
        if cache is not None and cache.exists():
            try:
                cached = json.loads(cache.read_text())
            except (OSError, ValueError):
                cached = {}
        index: dict[str, dict[str, int]] = {}
        fresh: dict = {}
        changed = False
        for path in self.oai_files():
            st = path.stat()
            stamp = [st.st_size, st.st_mtime_ns]
            entry = cached.get(path.name)
            if entry and entry.get("stamp") == stamp:
                counts = entry["counts"]
            else:
                counts = scan_datestamps(path.read_bytes())
                changed = True
            index[path.name] = counts
            fresh[path.name] = {"stamp": stamp, "counts": counts}
        if cache is not None and (changed or set(fresh) != set(cached)):
            atomic_write_bytes(cache, json.dumps(fresh, sort_keys=True).encode())
        return index

    def datestamps(self, cache: Path | None = None) -> dict[str, int]:
        """Record count per datestamp over the whole landing zone."""
        totals: dict[str, int] = {}
        for counts in self.datestamp_index(cache).values():
            for day, n in counts.items():
                totals[day] = totals.get(day, 0) + n
        return dict(sorted(totals.items()))

    def earliest_datestamp(self, cache: Path | None = None) -> str | None:
        days = self.datestamps(cache)
        return min(days) if days else None

    def day_fingerprints(self, cache: Path | None = None) -> dict[str, str]:
        """``{datestamp: fingerprint}``: a digest of the (name, size, mtime) of every page that
        holds records of that day. ``arxiv_metadata`` stores the fingerprint it was built from
        beside each partition, so the landing sensor asks for a day again only when one of its
        pages is new, changed or gone (:func:`corpus.store.Store.read_marker`)."""
        stamps = {p.name: p.stat() for p in self.oai_files()}
        by_day: dict[str, list[str]] = {}
        for name, counts in self.datestamp_index(cache).items():
            st = stamps.get(name)
            if st is None:
                continue
            for day in counts:
                by_day.setdefault(day, []).append(f"{name}\0{st.st_size}\0{st.st_mtime_ns}")
        return {
            day: hashlib.sha1("\n".join(sorted(parts)).encode()).hexdigest()[:16]
            for day, parts in sorted(by_day.items())
        }

    # ------------------------------------------------------------ reading records

    def read_days(self, days: Iterable[str], cache: Path | None = None) -> DayRecords:
        """Records whose datestamp is one of ``days``, de-duplicated per (day, id).

        When one id appears twice for a day (a page harvested twice, overlapping
        pages) the record with the highest version wins, then the later file in
        name order: deterministic, so a re-run gives the same rows. A page that
        is not well-formed becomes a failure row naming the file (the records
        before the fault are kept), never a silent loss.
        """
        wanted = set(days)
        out = DayRecords(records={d: [] for d in sorted(wanted)})
        chosen: dict[tuple[str, str], tuple[tuple, ArxivRecord]] = {}
        index = self.datestamp_index(cache)
        for order, path in enumerate(self.oai_files()):
            if not wanted.intersection(index.get(path.name, {})):
                continue
            out.files.append(path.name)
            page = OaiPage(source=str(path))
            try:
                for position, item in enumerate(iter_page(path, str(path), page)):
                    if isinstance(item, FailedRecord):
                        # A failure belongs to its datestamp's partition; one without a
                        # readable datestamp to the file's first day (reported once).
                        if not item.datestamp:
                            item.datestamp = min(index.get(path.name) or {"": 0})
                        if item.datestamp in wanted:
                            out.failures.append(item)
                        continue
                    day = item.datestamp.isoformat() if item.datestamp else ""
                    if day not in wanted:
                        continue
                    rank = (item.version or 0, order, position)
                    key = (day, item.id)
                    if key in chosen:
                        out.duplicates_dropped += 1
                        if chosen[key][0] >= rank:
                            continue
                    chosen[key] = (rank, item)
            except (OaiParseError, OaiError) as exc:
                for day in sorted(wanted.intersection(index.get(path.name, {}))):
                    out.failures.append(
                        FailedRecord(
                            source=str(path), position=-1, datestamp=day, reason=f"unreadable page: {exc}"
                        )
                    )
            out.warnings.extend(f"{path.name}: {w}" for w in page.warnings)
        for (day, _id), (_rank, record) in sorted(chosen.items()):
            out.records[day].append(record)
        return out

    def save_page(self, name: str, raw: bytes) -> Path:
        """Store a page harvested live, atomically, before it is parsed (provenance, replay)."""
        path = self.oai_dir / name
        atomic_write_bytes(path, raw)
        return path


def _main(argv: list[str] | None = None) -> int:
    """``python -m corpus.landing earliest [ROOT]``: the earliest datestamp (for CORPUS_START_DATE)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m corpus.landing")
    parser.add_argument("command", choices=["earliest", "days"])
    parser.add_argument("root", nargs="?", default=str(landing_root()))
    args = parser.parse_args(argv)
    zone = LandingZone(args.root)
    if args.command == "earliest":
        print(zone.earliest_datestamp() or "")
    else:
        for day, n in zone.datestamps().items():
            print(day, n)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
