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
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from corpus.ingest.landing_files import LandingReader, LandingRefused, display
from corpus.ingest.oai import OaiError, OaiPage, OaiParseError, PageScan, iter_page, partition_day, scan_page
from corpus.ingest.records import ArxivRecord, FailedRecord
from corpus.store import atomic_write_bytes

DEFAULT_LANDING = "./landing"
DEFAULT_START_DATE = "2007-04-01"  # first new-style ids; CORPUS_START_DATE moves the first partition
EVERY_DAY = "*"  # the index key of what cannot be placed on a day: reported on every day read
_INDEX_VERSION = 2
_NAME_DAY = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})")


def landing_root() -> Path:
    return Path(os.environ.get("CORPUS_LANDING", DEFAULT_LANDING))


@dataclass
class DayRecords:
    """What the landing zone holds for a set of days, ready to write per partition."""

    records: dict[str, list[ArxivRecord]] = field(default_factory=dict)  # date -> records
    failures: list[FailedRecord] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)  # date -> the pages read for it
    warnings: list[str] = field(default_factory=list)
    duplicates_dropped: dict[str, int] = field(default_factory=dict)  # date -> records dropped


def fallback_day(scan: PageScan, name: str) -> str:
    """Where a page's records without a usable datestamp go (and the page's own failures):
    the day of a one-day harvest (``from`` = ``until``), else the day in the file name
    (``2025-01-02.xml``, ``2025-01-02_arXiv-p0001.xml``), else the page's earliest real
    datestamp, else :data:`EVERY_DAY` -- reported on every day read, never dropped."""
    if scan.request_from and scan.request_from == scan.request_until and partition_day(scan.request_from):
        return partition_day(scan.request_from) or EVERY_DAY
    m = _NAME_DAY.match(name)
    if m and partition_day(m.group(1)):
        return m.group(1)
    days = scan.days()
    return min(days) if days else EVERY_DAY


def placement(scan: PageScan, name: str) -> dict[str, int]:
    """``{partition day or EVERY_DAY: count}``: which days must read this page."""
    if scan.problem is not None:
        return {fallback_day(scan, name): 1}
    out = scan.days()
    unplaced = scan.unplaced()
    if unplaced > 0:
        day = fallback_day(scan, name)
        out[day] = out.get(day, 0) + unplaced
    return out


class LandingZone:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.oai_dir = self.root / "oai"
        self.pdf_dir = self.root / "pdf"
        self.src_dir = self.root / "src"
        self.tei_dir = self.root / "tei"
        self.reader = LandingReader(self.root)

    def oai_files(self) -> list[Path]:
        """Every ``oai/*.xml`` name (hidden ones skipped); each is judged when read.
        An ``oai`` folder that cannot be listed raises :class:`LandingRefused`."""
        return self.reader.list("oai", ".xml")

    def relative_name(self, path: Path) -> str:
        """A path of the landing zone as its rows show it: relative to the landing zone
        (``oai/2025-01-02.xml``), valid UTF-8 (:func:`display`)."""
        try:
            return display(Path(path).relative_to(self.root))
        except ValueError:
            return display(path)

    def without_path(self, message: str, path: Path) -> str:
        """A page's problem without the page's path in front: its failure row names the page."""
        for prefix in (display(path), self.relative_name(path)):
            message = message.removeprefix(f"{prefix}: ")
        return message

    def read_page(self, path: Path) -> bytes:
        """One OAI page's bytes, read under the landing-zone rules (:mod:`corpus.ingest.landing_files`)."""
        return self.reader.read_bytes(path, "oai")

    # ------------------------------------------------------------ datestamp index

    def scans(self, cache: Path | None = None) -> dict[str, PageScan]:
        """A :class:`PageScan` of every OAI page, cached by (size, mtime). A page that
        cannot be read is scanned again each time (its problem may be fixed by a chmod,
        which changes neither). An ``oai`` folder that cannot be listed is one entry,
        named after the folder, that every day reads."""
        cached: dict = {}
        if cache is not None and cache.exists():
            try:
                cached = json.loads(cache.read_text())
            except (OSError, ValueError):
                cached = {}
            if cached.get("version") != _INDEX_VERSION:
                cached = {}
        files = cached.get("files", {})
        try:
            paths = self.oai_files()
        except LandingRefused as exc:
            return {"": PageScan(problem=str(exc))}
        out: dict[str, PageScan] = {}
        fresh: dict = {}
        changed = False
        for path in paths:
            try:
                st = path.stat()
                stamp = [st.st_size, st.st_mtime_ns]
            except OSError:
                stamp = None
            entry = files.get(path.name)
            refused = False
            if stamp is not None and entry and entry.get("stamp") == stamp:
                scan = PageScan(**entry["scan"])
            else:
                try:
                    scan = scan_page(self.read_page(path), self.relative_name(path))
                except LandingRefused as exc:
                    scan, refused = PageScan(problem=str(exc)), True
                changed = True
            out[path.name] = scan
            if stamp is not None and not refused:
                fresh[path.name] = {"stamp": stamp, "scan": scan.as_dict()}
        if cache is not None and (changed or set(fresh) != set(files)):
            body = {"version": _INDEX_VERSION, "files": fresh}
            atomic_write_bytes(cache, json.dumps(body, sort_keys=True).encode())
        return out

    def datestamp_index(self, cache: Path | None = None) -> dict[str, dict[str, int]]:
        """``{file name: {partition day or EVERY_DAY: record count}}`` for every OAI page."""
        return {name: placement(scan, name) for name, scan in self.scans(cache).items()}

    def datestamps(self, cache: Path | None = None) -> dict[str, int]:
        """Record count per datestamp over the whole landing zone (real days only)."""
        totals: dict[str, int] = {}
        for counts in self.datestamp_index(cache).values():
            for day, n in counts.items():
                if day != EVERY_DAY:
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
        stamps = {}
        for p in self.oai_files():
            try:  # a page that cannot be read is refused with a failure row by read_days
                stamps[p.name] = p.lstat()
            except OSError:
                continue
        by_day: dict[str, list[str]] = {}
        for name, counts in self.datestamp_index(cache).items():
            st = stamps.get(name)
            if st is None:
                continue
            for day in counts:
                by_day.setdefault(day, []).append(f"{name}\0{st.st_size}\0{st.st_mtime_ns}")
        return {
            day: hashlib.sha1("\n".join(sorted(parts)).encode("utf-8", "surrogateescape")).hexdigest()[:16]
            for day, parts in sorted(by_day.items())
        }

    # ------------------------------------------------------------ reading records

    def read_days(self, days: Iterable[str], cache: Path | None = None) -> DayRecords:
        """Records whose datestamp is one of ``days``, de-duplicated per (day, id).

        When one id appears twice for a day (a page harvested twice, overlapping
        pages) the record with the highest version wins, then the later file in
        name order: deterministic, so a re-run gives the same rows. Nothing is lost
        silently: a record that cannot be read is a failure row on its day (or, without
        a usable datestamp, on its page's :func:`fallback_day`); a page that cannot be
        read at all (refused, not OAI-PMH, not well-formed around its records) is a
        failure row naming the file on each day it holds -- or on every day read, when
        not even that can be known.
        """
        wanted = set(days)
        out = DayRecords(
            records={d: [] for d in sorted(wanted)},
            files={d: [] for d in sorted(wanted)},
            duplicates_dropped=dict.fromkeys(sorted(wanted), 0),
        )
        chosen: dict[tuple[str, str], tuple[tuple, ArxivRecord]] = {}
        scans = self.scans(cache)

        def targets(day: str) -> list[str]:
            return sorted(wanted) if day == EVERY_DAY else [day] if day in wanted else []

        def page_failure(path: Path, day_set: Iterable[str], problem: str) -> None:
            reason = f"unreadable page: {self.without_path(problem, path)}"
            for day in sorted({t for d in day_set for t in targets(d)}):
                out.failures.append(
                    FailedRecord(source=self.relative_name(path), position=-1, datestamp=day, reason=reason)
                )

        for order, (name, scan) in enumerate(sorted(scans.items())):
            placed = placement(scan, name)
            if not any(targets(d) for d in placed):
                continue
            path = self.oai_dir / name if name else self.oai_dir
            source = self.relative_name(path)
            if scan.problem is not None:
                page_failure(path, placed, scan.problem)
                continue
            for day in sorted({t for d in placed for t in targets(d)}):
                out.files[day].append(display(name))
            fallback = fallback_day(scan, name)
            page = OaiPage(source=source)
            try:
                data = self.read_page(path)
                for position, item in enumerate(iter_page(data, source, page)):
                    if isinstance(item, FailedRecord):
                        day = partition_day(item.datestamp) or fallback
                        for target in targets(day):
                            out.failures.append(item.model_copy(update={"datestamp": target}))
                        continue
                    day = item.datestamp.isoformat() if item.datestamp else ""
                    if day not in wanted:
                        continue
                    rank = (item.version or 0, order, position)
                    key = (day, item.id)
                    if key in chosen:
                        out.duplicates_dropped[day] += 1
                        if chosen[key][0] >= rank:
                            continue
                    chosen[key] = (rank, item)
            except (OaiParseError, OaiError, LandingRefused) as exc:
                page_failure(path, placed, str(exc))
            out.warnings.extend(f"{display(name)}: {w}" for w in page.warnings)
        for (day, _id), (_rank, record) in sorted(chosen.items()):
            out.records[day].append(record)
        return out

    def save_page(self, name: str, raw: bytes) -> Path:
        """Store a page harvested live, atomically, before it is parsed (provenance, replay)."""
        path = self.oai_dir / name
        atomic_write_bytes(path, raw)
        return path


def _main(argv: list[str] | None = None) -> int:
    """``python -m corpus.ingest.landing earliest [ROOT]``: the earliest datestamp (for CORPUS_START_DATE)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m corpus.ingest.landing")
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
