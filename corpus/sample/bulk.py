"""Write a bulk root in arXiv's exact layout from a landing zone's files (demo, tests, benchmarks).

:func:`write_bulk_root` packs ``landing/pdf/*.pdf`` and ``landing/src/*`` into
``pdf/arXiv_pdf_<yymm>_<seq>.tar`` and ``src/arXiv_src_<yymm>_<seq>.tar`` (members
sorted by name, a new tar when one would pass ``tar_bytes``) and writes both
manifests with every field arXiv's have (:func:`corpus.ingest.bulk.manifest_xml`). Member
names follow arXiv's: ``<yymm>/<id without slash>[v<N>].<ext>``. PDFs of new-style
ids carry their version (from ``versions``), old-style ones none, so both forms are
exercised; a paper at version N > 1 also gets a superseded ``v1`` PDF (its bytes with a
trailing comment) in the same tar. E-prints are ``.gz`` (gzipped tars and gzipped
single files, stored byte for byte) or ``.pdf`` (PDF-only submissions); any other
landing e-print (bare tar, TeX, PostScript) is gzipped, as arXiv stores it.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import shutil
import tarfile
from collections.abc import Iterable
from pathlib import Path

from corpus.ingest import arxiv_ids
from corpus.ingest.bulk import ManifestEntry, id_yymm, manifest_xml, member_name
from corpus.store import atomic_path

TAR_BYTES = 500 * 1000 * 1000  # arXiv's chunk size
_MTIME = 1_262_304_000  # 2010-01-01: fixed, so a seed gives byte-identical tars


def _eprint_member(path: Path) -> tuple[str, bytes]:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        return ".gz", data
    if data.lstrip()[:5] == b"%PDF-":
        return ".pdf", data
    return ".gz", gzip.compress(data, compresslevel=6, mtime=0)


def collect_members(
    landing: Path, versions: dict[str, int]
) -> dict[tuple[str, str], list[tuple[str, bytes]]]:
    """``{(which, yymm): [(member name, bytes), ...]}`` for a landing zone's pdf/ and src/."""
    groups: dict[tuple[str, str], list[tuple[str, bytes]]] = {}
    for path in sorted((landing / "pdf").glob("*.pdf")):
        try:
            aid = arxiv_ids.from_file_name(path.name)
        except arxiv_ids.InvalidArxivId:
            continue
        data = path.read_bytes()
        latest = versions.get(aid, 1)
        members = []
        if "/" in aid:
            members.append((member_name(aid, None, ".pdf"), data))
        else:
            if latest > 1:
                members.append((member_name(aid, 1, ".pdf"), data + b"\n% superseded by a later version\n"))
            members.append((member_name(aid, latest, ".pdf"), data))
        groups.setdefault(("pdf", id_yymm(aid)), []).extend(members)
    for path in sorted((landing / "src").glob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        try:
            aid = arxiv_ids.from_file_name(path.name)
        except arxiv_ids.InvalidArxivId:
            continue
        ext, data = _eprint_member(path)
        groups.setdefault(("src", id_yymm(aid)), []).append((member_name(aid, None, ext), data))
    return groups


def _tar_bytes(members: Iterable[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), _MTIME, 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _item(name: str) -> str:
    return name.split("/", 1)[1].rsplit(".", 1)[0]


def write_tar(out: Path, which: str, yymm: str, seq: int, members: list[tuple[str, bytes]]) -> ManifestEntry:
    """One tar of the bulk root, and its manifest entry."""
    data = _tar_bytes(members)
    filename = f"{which}/arXiv_{which}_{yymm}_{seq:03d}.tar"
    with atomic_path(out / filename) as tmp:
        tmp.write_bytes(data)
    content = hashlib.md5(usedforsecurity=False)
    for _, body in members:
        content.update(body)
    stamp = dt.datetime.fromtimestamp(_MTIME, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    return ManifestEntry(
        filename=filename,
        kind="pdf" if which == "pdf" else "eprint",
        yymm=yymm,
        seq_num=seq,
        md5sum=hashlib.md5(data, usedforsecurity=False).hexdigest(),
        size=len(data),
        num_items=len(members),
        first_item=_item(members[0][0]),
        last_item=_item(members[-1][0]),
        content_md5sum=content.hexdigest(),
        timestamp=stamp,
    )


def write_manifest(out: Path, which: str, entries: list[ManifestEntry]) -> Path:
    path = out / which / f"arXiv_{which}_manifest.xml"
    with atomic_path(path) as tmp:
        tmp.write_bytes(manifest_xml(which, sorted(entries, key=lambda e: e.filename)))
    return path


def write_bulk_root(
    landing: str | Path, out: str | Path, versions: dict[str, int] | None = None, tar_bytes: int = TAR_BYTES
) -> dict:
    """Pack a landing zone's PDFs and e-prints into a bulk root at ``out``; returns counts."""
    landing, out = Path(landing), Path(out)
    groups = collect_members(landing, versions or {})
    entries: dict[str, list[ManifestEntry]] = {"pdf": [], "src": []}
    for (which, yymm), members in sorted(groups.items()):
        members.sort(key=lambda m: m[0])
        seq, batch, size = 1, [], 0
        for name, data in members:
            if batch and size + len(data) + 1024 > tar_bytes:
                entries[which].append(write_tar(out, which, yymm, seq, batch))
                seq, batch, size = seq + 1, [], 0
            batch.append((name, data))
            size += len(data) + 1024
        if batch:
            entries[which].append(write_tar(out, which, yymm, seq, batch))
    for which in ("pdf", "src"):
        (out / which).mkdir(parents=True, exist_ok=True)
        write_manifest(out, which, entries[which])
    return {
        "tars": sum(len(v) for v in entries.values()),
        "members": sum(e.num_items for v in entries.values() for e in v),
        "bytes": sum(e.size for v in entries.values() for e in v),
    }


def move_files_out(landing: str | Path) -> None:
    """Leave the landing zone without its pdf/ and src/ (the bulk root holds them now)."""
    for sub in ("pdf", "src"):
        shutil.rmtree(Path(landing) / sub, ignore_errors=True)
