"""One peS2o release shard's two files (:mod:`corpus.release.pes2o_release`), the JSON lines
gzipped as a series of gzip members: RFC 1952 allows several in a file and every gzip reader
(``gzip``, ``zcat``, ``datasets``) reads them as one stream.

Why members: a new day revises papers of many old days, and each revision rewrites the shard
holding it (~20 % of a release's shards a day at 1,024 days). Compressing those shards whole was
most of a new day's CPU. A rewritten shard now copies the compressed bytes of every member whose
documents did not change (read from the current shard) and encodes and compresses only the others.

Members are cut by content, as the shards are: a document starts one when a hash of its key is
below its estimated bytes / ``MEMBER_BYTES``, so a member holds ~``MEMBER_BYTES`` and where one
starts depends on that document alone. Each member's header carries, in a gzip extra subfield
(``P2``, which readers skip), the digest of its documents' hashes and its own size, so the
members of a current shard are found and matched from their headers: nothing is inflated, and a
member whose documents are unchanged is copied without encoding its lines (BGZF, the blocked
gzip of genomics, keeps its block sizes the same way). Each member's bytes are a function of its
documents only (no name, mtime 0, OS unknown), so a shard written anew and one assembled from old
members are the same bytes. Deflate's window is 32 KiB: members of ~64 KiB cost ~5 % of size at
real text lengths.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpus.release.pes2o_card import DOC_FIELDS
from corpus.store import file_sha256

if TYPE_CHECKING:
    import pyarrow as pa

MEMBER_BYTES = 64 * 1024  # JSON lines per gzip member (a target: cut by content)
_EXTRA = b"P2"  # the members' gzip extra subfield: the digest of their documents, their size
_MAGIC = b"\x1f\x8b\x08\x04"  # gzip, deflate, FEXTRA
_HEADER = 10 + 2 + 4 + 16 + 4  # fixed header, XLEN, subfield id and length, digest, member size


def member_digest(doc_hashes: list[int]) -> bytes:
    """What a member holds: its documents' hashes (each covers the whole JSON line), in order."""
    return hashlib.blake2b(np.asarray(doc_hashes, dtype=">u8").tobytes(), digest_size=16).digest()


def gzip_member(raw: bytes, level: int, digest: bytes) -> bytes:
    """One gzip member of ``raw`` (no name, mtime 0, OS 255) whose extra field holds ``digest``
    and the member's size."""
    comp = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = comp.compress(raw) + comp.flush()
    xfl = 2 if level == 9 else 4 if level == 1 else 0
    size = _HEADER + len(body) + 8
    header = _MAGIC + b"\x00\x00\x00\x00" + bytes([xfl, 255]) + struct.pack("<H", 4 + 16 + 4)
    extra = _EXTRA + struct.pack("<H", 16 + 4) + digest + struct.pack("<I", size)
    return header + extra + body + struct.pack("<II", zlib.crc32(raw), len(raw) & 0xFFFFFFFF)


def members_of(path: Path) -> dict[bytes, bytes]:
    """``{digest of a member's documents: the member's bytes}`` of a shard, from the members'
    headers (nothing inflated). Raises ValueError on a file this writer did not write."""
    data = path.read_bytes()
    out: dict[bytes, bytes] = {}
    pos, n = 0, len(data)
    while pos < n:
        if data[pos : pos + 4] != _MAGIC or data[pos + 12 : pos + 14] != _EXTRA or pos + _HEADER > n:
            raise ValueError(f"{path}: byte {pos} does not start a member with its size and digest")
        (size,) = struct.unpack_from("<I", data, pos + 32)
        if size < _HEADER + 8 or pos + size > n:
            raise ValueError(f"{path}: the gzip member at byte {pos} is cut short")
        out[data[pos + 16 : pos + 32]] = data[pos : pos + size]
        pos += size
    return out


def _member_starts(docs: list[dict], weights: list[int]) -> list[int]:
    """Where each member starts (see the module doc): a document whose key hash is below its
    estimated bytes (``weights``, as the shards are cut) / ``MEMBER_BYTES``."""
    scale = (1 << 64) // MEMBER_BYTES
    starts = [0]
    for i in range(1, len(docs)):
        key = hashlib.blake2b(f"{docs[i]['source']}\0{docs[i]['id']}".encode(), digest_size=8).digest()
        if int.from_bytes(key, "big") < min(max(weights[i], 0), MEMBER_BYTES) * scale:
            starts.append(i)
    return starts


def _line(doc: dict) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _pa_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(f, pa.string()) for f in DOC_FIELDS])


def write_shard(
    staging: Path,
    stem: str,
    docs: list[dict],
    doc_hashes: list[int],
    weights: list[int],
    compresslevel: int,
    row_group_docs: int,
    reuse: dict[bytes, bytes] | None = None,
) -> dict:
    """``<stem>.jsonl.gz`` and ``<stem>.parquet`` holding ``docs``, in order; their entries.
    ``doc_hashes`` and ``weights``: each document's hash (of its whole line) and estimated bytes.
    ``reuse``: members of current shards (:func:`members_of`), copied where the documents are
    equal; the others' lines are encoded and compressed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    jsonl, parquet = staging / f"{stem}.jsonl.gz", staging / f"{stem}.parquet"
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    reuse = reuse or {}
    starts = _member_starts(docs, weights)
    with open(jsonl, "wb") as fh:  # no documents: one empty member
        for a, b in zip(starts, [*starts[1:], len(docs)], strict=True):
            digest = member_digest(doc_hashes[a:b])
            member = reuse.get(digest)
            if member is None:
                member = gzip_member(b"".join(_line(d) for d in docs[a:b]), compresslevel, digest)
            fh.write(member)
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
