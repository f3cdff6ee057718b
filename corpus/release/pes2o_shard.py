"""One peS2o release shard's two files (:mod:`corpus.release.pes2o_release`), the JSON lines
gzipped as a series of gzip members: RFC 1952 allows several in a file and every gzip reader
(``gzip``, ``zcat``, ``datasets``) reads them as one stream.

Why members: a new day revises papers of many old days, and each revision rewrites the shard
holding it (~20 % of a release's shards a day at 1,024 days). Compressing those shards whole was
most of a new day's CPU. A rewritten shard now copies the compressed bytes of every member whose
lines did not change (read from the current shard) and compresses only the others.

Members are cut by content, as the shards are: a document starts one when a hash of its key is
below its line's bytes / ``MEMBER_BYTES``, so a member holds ~``MEMBER_BYTES`` and where one starts
depends on that document alone. Each member's bytes are a function of its lines only (no name,
mtime 0, OS unknown), so a shard written anew and one assembled from old members are the same
bytes. Deflate's window is 32 KiB: members of ~64 KiB cost ~5 % of size at real text lengths.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from corpus.release.pes2o_card import DOC_FIELDS
from corpus.store import file_sha256

if TYPE_CHECKING:
    import pyarrow as pa

MEMBER_BYTES = 64 * 1024  # JSON lines per gzip member (a target: cut by content)
_READ = 1 << 16


def _digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


def gzip_member(raw: bytes, level: int) -> bytes:
    """One gzip member of ``raw`` (as :mod:`gzip` writes one: no name, mtime 0, OS 255)."""
    comp = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = comp.compress(raw) + comp.flush()
    xfl = 2 if level == 9 else 4 if level == 1 else 0
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + bytes([xfl, 255])
    return header + body + struct.pack("<II", zlib.crc32(raw), len(raw) & 0xFFFFFFFF)


def members_of(path: Path) -> dict[bytes, bytes]:
    """``{digest of a member's lines: the member's bytes}`` of a gzip file (read in pieces, so
    a file of many members costs one pass)."""
    data = memoryview(path.read_bytes())
    out: dict[bytes, bytes] = {}
    pos = 0
    while pos < len(data):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        parts, fed = [], pos
        while not inflate.eof:
            if fed >= len(data):
                raise ValueError(f"{path}: a gzip member is cut short at byte {pos}")
            piece = data[fed : fed + _READ]
            fed += len(piece)
            parts.append(inflate.decompress(piece))
        end = fed - len(inflate.unused_data)
        out[_digest(b"".join(parts))] = bytes(data[pos:end])
        pos = end
    return out


def _members(docs: list[dict], lines: list[bytes]) -> Iterator[bytes]:
    """The lines of each member, in order (see the module doc for where members start)."""
    scale = (1 << 64) // MEMBER_BYTES
    start = 0
    for i in range(1, len(lines)):
        key = hashlib.blake2b(f"{docs[i]['source']}\0{docs[i]['id']}".encode(), digest_size=8).digest()
        if int.from_bytes(key, "big") < min(len(lines[i]), MEMBER_BYTES) * scale:
            yield b"".join(lines[start:i])
            start = i
    if lines:
        yield b"".join(lines[start:])


def _pa_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(f, pa.string()) for f in DOC_FIELDS])


def write_shard(
    staging: Path,
    stem: str,
    docs: list[dict],
    compresslevel: int,
    row_group_docs: int,
    reuse: dict[bytes, bytes] | None = None,
) -> dict:
    """``<stem>.jsonl.gz`` and ``<stem>.parquet`` holding ``docs``, in order; their entries.
    ``reuse``: members of current shards (:func:`members_of`), copied where the lines are equal."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    jsonl, parquet = staging / f"{stem}.jsonl.gz", staging / f"{stem}.parquet"
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    lines = [(json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8") for d in docs]
    reuse = reuse or {}
    with open(jsonl, "wb") as fh:
        for raw in _members(docs, lines) if lines else [b""]:  # no documents: one empty member
            fh.write(reuse.get(_digest(raw)) or gzip_member(raw, compresslevel))
    with pq.ParquetWriter(parquet, _pa_schema(), compression="zstd") as writer:
        for start in range(0, len(docs), row_group_docs):
            writer.write_table(
                pa.Table.from_pylist(docs[start : start + row_group_docs], schema=_pa_schema())
            )
    for path in (jsonl, parquet):
        with open(path, "rb") as fh:
            os.fsync(fh.fileno())
    return {
        kind: {
            "path": path.relative_to(staging).as_posix(),
            "format": kind,
            "documents": len(docs),
            "bytes": path.stat().st_size,
            "sha256": file_sha256(path),
        }  # fmt: skip
        for kind, path in (("jsonl", jsonl), ("parquet", parquet))
    }
