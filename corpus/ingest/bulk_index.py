"""Index arXiv's bulk tars: one streaming pass per tar, verified against its manifest once.

For each tar a manifest names, :func:`scan_tar` reads the tar once from start to end
(a local file, or one streamed GET of a remote one) and records, for every member
that holds a paper (:func:`corpus.ingest.bulk.parse_member_name`), the arXiv id, version,
kind, byte offset and size of its data and its MD5; the same pass computes the
tar's MD5 and size, which must equal the manifest's. Tar headers are parsed by
``tarfile.TarInfo.frombuf`` (checksums checked), GNU long names and pax paths are
followed, links, directories and other members are skipped and counted, and
nothing is ever extracted: a member's name is only parsed.

Tables (``$CORPUS_HOME``):

* ``arxiv_bulk_index/<tar stem>.parquet`` -- the members of one tar (:data:`MEMBER_SCHEMA`);
  one file per tar, so a changed tar rewrites only its own file, and a lookup reads
  only the tars of an id's month (``arXiv_<pdf|src>_<yymm>_*``);
* ``arxiv_bulk_tars/part-0.parquet`` -- one row per manifest entry (:data:`TAR_SCHEMA`):
  ``status`` ``ok`` | ``count_mismatch`` (usable) or ``md5_mismatch`` | ``size_mismatch``
  | ``truncated`` | ``corrupt`` | ``absent`` | ``bad_entry`` (not usable), with a reason.

:func:`update_index` is incremental: a tar already indexed as usable with the same
manifest MD5 and size is not read again; new tars, tars whose manifest entry changed
(arXiv re-issues tars when papers are updated) and tars that were not usable are
(re)indexed, in parallel over tars; tars gone from the manifests are dropped.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import multiprocessing
import os
import tarfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import polars as pl

from corpus.ingest.bulk import (
    INDEX_ASSET,
    MANIFESTS,
    TARS_ASSET,
    BulkRoot,
    ManifestEntry,
    ManifestProblem,
    parse_item,
    parse_manifest,
    parse_member_name,
)
from corpus.ingest.eprint import UnpackLimits
from corpus.store import Store, atomic_path

# The version of arxiv_bulk_index (corpus.versions): bump it whenever their rows change.
BULK_INDEX_VERSION = "corpus.ingest.bulk_index/1"

USABLE = frozenset({"ok", "count_mismatch"})
MAX_MEMBERS = 200_000  # per tar; arXiv's hold a few thousand
MAX_META_BYTES = 1 << 20  # a GNU long name or pax header
_BLOCK = 512
_CHUNK = 1 << 20
_FILE_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)  # plain files only: no links, no sparse

MEMBER_SCHEMA = {
    "id": pl.Utf8,
    "version": pl.Int64,  # null when the member name carries none
    "kind": pl.Utf8,  # pdf | eprint
    "ext": pl.Utf8,  # .pdf | .gz
    "tar": pl.Utf8,  # pdf/arXiv_pdf_0001_001.tar
    "member": pl.Utf8,
    "offset": pl.Int64,  # of the member's data in the tar
    "size": pl.Int64,
    "md5": pl.Utf8,
    "tar_md5": pl.Utf8,  # the manifest MD5 of the tar this row was read from
}

TAR_SCHEMA = {
    "tar": pl.Utf8,
    "kind": pl.Utf8,
    "yymm": pl.Utf8,
    "seq_num": pl.Int64,
    "timestamp": pl.Utf8,
    "manifest_md5": pl.Utf8,
    "manifest_size": pl.Int64,
    "manifest_items": pl.Int64,
    "md5": pl.Utf8,  # as read
    "size": pl.Int64,  # as read
    "items": pl.Int64,  # paper members found
    "skipped": pl.Int64,  # members that are not papers (dirs, links, other names)
    "status": pl.Utf8,
    "usable": pl.Boolean,
    "reason": pl.Utf8,
}


class TarScan:
    """What one pass over a tar found."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.md5 = hashlib.md5(usedforsecurity=False)
        self.size = 0
        self.skipped: Counter[str] = Counter()
        self.problem: tuple[str, str] | None = None  # (status, reason): truncated | corrupt


class _Reader:
    """Reads a stream exactly, feeding every byte to the tar's MD5 and counting them."""

    def __init__(self, raw, scan: TarScan):
        self.raw, self.scan = raw, scan

    def read(self, n: int) -> bytes:
        parts, want = [], n
        while want:
            block = self.raw.read(want)
            if not block:
                break
            parts.append(block)
            want -= len(block)
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        self.scan.md5.update(data)
        self.scan.size += len(data)
        return data

    def skip(self, n: int, member_md5=None) -> int:
        """Consume ``n`` bytes (hashing them); returns how many there were."""
        got = 0
        while got < n:
            block = self.read(min(_CHUNK, n - got))
            if not block:
                break
            if member_md5 is not None:
                member_md5.update(block)
            got += len(block)
        return got


def _pax_records(data: bytes) -> dict[str, str]:
    out, pos = {}, 0
    while pos < len(data):
        space = data.find(b" ", pos)
        if space < 0:
            break
        try:
            length = int(data[pos:space])
        except ValueError:
            break
        if length <= 0:
            break
        key, _, value = data[space + 1 : pos + length - 1].partition(b"=")
        out[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
        pos += length
    return out


def scan_tar(raw, entry: ManifestEntry, limits: UnpackLimits | None = None) -> TarScan:
    """One pass over a tar stream: member rows, the tar's MD5 and size, or the problem met."""
    limits = limits or UnpackLimits()
    scan = TarScan()
    reader = _Reader(raw, scan)
    long_name: str | None = None
    pax: dict[str, str] = {}
    members = 0
    while True:
        header = reader.read(_BLOCK)
        if len(header) < _BLOCK:
            if header or not members:
                scan.problem = ("truncated", f"the tar ends inside a header after {scan.size} bytes")
            else:
                scan.problem = ("truncated", f"the tar ends after {scan.size} bytes without its end blocks")
            break
        if not header.strip(b"\0"):  # end of archive: the rest is zero padding, hashed as read
            reader.skip(1 << 62)
            break
        try:
            info = tarfile.TarInfo.frombuf(header, "utf-8", "surrogateescape")
        except tarfile.HeaderError as exc:
            scan.problem = ("corrupt", f"bad tar header at byte {scan.size - _BLOCK}: {exc}")
            break
        members += 1
        if members > MAX_MEMBERS:
            scan.problem = ("corrupt", f"more than {MAX_MEMBERS} members")
            break
        size = int(pax.get("size", info.size)) if pax.get("size", "").isdigit() else info.size
        padded = -size % _BLOCK
        if info.type in (tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE, tarfile.XGLTYPE):
            if size > MAX_META_BYTES:
                scan.problem = ("corrupt", f"a {size}-byte extended header")
                break
            data = reader.read(size + padded)[:size]
            if len(data) < size:
                scan.problem = ("truncated", "the tar ends inside an extended header")
                break
            if info.type == tarfile.GNUTYPE_LONGNAME:
                long_name = data.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            elif info.type == tarfile.XHDTYPE:
                pax = _pax_records(data)
            continue
        name = pax.get("path") or long_name or info.name
        long_name, pax = None, {}
        offset = scan.size
        paper = parse_member_name(name) if info.type in _FILE_TYPES else None
        if paper is None or size > limits.max_total_bytes:
            scan.skipped["too_large" if paper is not None else "not_a_paper"] += 1
            got = reader.skip(size + padded)
            if got < size + padded:
                scan.problem = ("truncated", f"the tar ends inside member {name[:80]!r}")
                break
            continue
        digest = hashlib.md5(usedforsecurity=False)
        got = reader.skip(size, digest)
        if got < size:
            scan.problem = ("truncated", f"the tar ends inside member {name!r} ({got} of {size} bytes)")
            break
        if reader.skip(padded) < padded:
            scan.problem = ("truncated", f"the tar ends in the padding after {name!r}")
            break
        scan.rows.append(
            {
                "id": paper.id,
                "version": paper.version,
                "kind": entry.kind,
                "ext": paper.ext,
                "tar": entry.filename,
                "member": name,
                "offset": offset,
                "size": size,
                "md5": digest.hexdigest(),
                "tar_md5": entry.md5sum,
            }
        )
    return scan


def _verdict(entry: ManifestEntry, scan: TarScan) -> tuple[str, str | None]:
    if scan.problem is not None:
        return scan.problem
    if scan.size != entry.size:
        return "size_mismatch", f"{scan.size} bytes read, the manifest says {entry.size}"
    if scan.md5.hexdigest() != entry.md5sum:
        return "md5_mismatch", f"MD5 {scan.md5.hexdigest()} read, the manifest says {entry.md5sum}"
    notes = []
    if entry.num_items and len(scan.rows) != entry.num_items:
        notes.append(f"the manifest promises {entry.num_items} items, the tar holds {len(scan.rows)}")
    ids = {r["id"] for r in scan.rows}
    for label, item in (("first_item", entry.first_item), ("last_item", entry.last_item)):
        aid = parse_item(item) if item else None
        if aid is not None and aid not in ids:
            notes.append(f"{label} {item} is not in the tar")
    return ("count_mismatch", "; ".join(notes)) if notes else ("ok", None)


def tar_row(entry: ManifestEntry, status: str, reason: str | None, scan: TarScan | None = None) -> dict:
    return {
        "tar": entry.filename,
        "kind": entry.kind,
        "yymm": entry.yymm,
        "seq_num": entry.seq_num,
        "timestamp": entry.timestamp,
        "manifest_md5": entry.md5sum,
        "manifest_size": entry.size,
        "manifest_items": entry.num_items,
        "md5": scan.md5.hexdigest() if scan else None,
        "size": scan.size if scan else None,
        "items": len(scan.rows) if scan else 0,
        "skipped": sum(scan.skipped.values()) if scan else 0,
        "status": status,
        "usable": status in USABLE,
        "reason": reason,
    }


def index_dir(home: Path) -> Path:
    return Path(home) / INDEX_ASSET


def index_tar(root: BulkRoot, entry: ManifestEntry, home: Path) -> dict:
    """Scan one tar, write its member rows (usable or not: lookups need to know which papers a
    bad tar holds) to ``arxiv_bulk_index/<stem>.parquet`` atomically; return its tar row."""
    if root.size(entry.filename) is None:
        (index_dir(home) / f"{entry.stem}.parquet").unlink(missing_ok=True)
        return tar_row(entry, "absent", f"{entry.filename} is in the manifest but not under {root.url}")
    try:
        with root.stream(entry.filename) as raw:
            scan = scan_tar(raw, entry)
    except OSError as exc:
        return tar_row(entry, "corrupt", f"unreadable: {type(exc).__name__}: {exc}"[:500])
    status, reason = _verdict(entry, scan)
    frame = pl.DataFrame(scan.rows, schema=MEMBER_SCHEMA)
    with atomic_path(index_dir(home) / f"{entry.stem}.parquet") as tmp:
        frame.write_parquet(tmp, compression="zstd", statistics=True)
    return tar_row(entry, status, reason, scan)


def _index_in_worker(url: str, options: dict, entry: dict, home: str) -> dict:
    root = BulkRoot.open(url, options)
    try:
        return index_tar(root, ManifestEntry(**entry), Path(home))
    finally:
        root.close()


def read_manifests(root: BulkRoot) -> tuple[list[ManifestEntry], list[ManifestProblem]]:
    """Both manifests' entries; a manifest that is missing is a problem, not an error."""
    from corpus.ingest.bulk import MAX_MANIFEST_BYTES

    entries: list[ManifestEntry] = []
    problems: list[ManifestProblem] = []
    for which, rel in MANIFESTS.items():
        if root.size(rel) is None:
            problems.append(ManifestProblem(manifest=rel, index=-1, filename="", reason="manifest not found"))
            continue
        found, bad = parse_manifest(root.read_small(rel, MAX_MANIFEST_BYTES), which)
        entries += found
        problems += bad
    names = Counter(e.filename for e in entries)
    dup = {n for n, c in names.items() if c > 1}
    if dup:  # the same tar twice: keep the last entry (the newest re-issue)
        last = {e.filename: e for e in entries}
        entries = [e for e in entries if e.filename not in dup] + [last[n] for n in sorted(dup)]
    return entries, problems


def _workers(n_tars: int, workers: int | None) -> int:
    """One process per core, never more than tars; memory per worker is a few MB."""
    return max(1, min(n_tars, workers or os.cpu_count() or 1))


def update_index(
    root: BulkRoot,
    home: str | Path,
    *,
    storage_options: dict | None = None,
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Bring the index up to date with the root's manifests (see the module docstring)."""
    home = Path(home)
    store = Store(home)
    entries, problems = read_manifests(root)
    prev: dict[str, dict] = {}
    tars_file = store.asset_dir(TARS_ASSET) / "part-0.parquet"
    if tars_file.exists():
        prev = {r["tar"]: r for r in pl.read_parquet(tars_file).iter_rows(named=True)}
    kept, todo = [], []
    for e in entries:
        p = prev.get(e.filename)
        same = p is not None and p["manifest_md5"] == e.md5sum and p["manifest_size"] == e.size
        if same and p["usable"] and (index_dir(home) / f"{e.stem}.parquet").exists():
            kept.append(p)
        else:
            todo.append(e)
    live = {e.stem for e in entries}
    index_dir(home).mkdir(parents=True, exist_ok=True)
    dropped = 0
    for path in index_dir(home).glob("*.parquet"):
        if path.stem not in live:
            path.unlink()
            dropped += 1
    rows = list(kept)
    n = _workers(len(todo), workers)
    if log:
        log(f"bulk index: {len(entries)} tars in the manifests, {len(todo)} to index, {n} worker(s)")
    if n == 1:
        for e in todo:
            rows.append(index_tar(root, e, home))
    else:
        ctx = multiprocessing.get_context("spawn")  # no fork of a threaded (Dagster) process
        with cf.ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
            futures = [
                pool.submit(_index_in_worker, root.url, storage_options or {}, e.model_dump(), str(home))
                for e in todo
            ]
            for f in futures:
                rows.append(f.result())
    for p in problems:
        if p.filename:
            rows.append(
                {"tar": p.filename, "kind": None, "status": "bad_entry", "usable": False, "reason": p.reason}
            )
    frame = pl.DataFrame([{k: r.get(k) for k in TAR_SCHEMA} for r in rows], schema=TAR_SCHEMA).sort("tar")
    store.write_table(TARS_ASSET, frame)
    indexed = [r for r in rows if r not in kept]
    return {
        "tars": frame.height,
        "indexed": len(todo),
        "unchanged": len(kept),
        "dropped": dropped,
        "bytes_read": sum(r.get("size") or 0 for r in indexed),
        "members": int(frame["items"].fill_null(0).sum()),
        "status": dict(Counter(frame["status"].to_list())),
        "problems": [f"{p.manifest}: {p.reason}" for p in problems],
        "unusable": [
            {"tar": r["tar"], "status": r["status"], "reason": r["reason"]}
            for r in frame.filter(~pl.col("usable")).iter_rows(named=True)
        ],
    }
