"""Read one paper's PDF or e-print straight out of arXiv's bulk tars, by offset.

:class:`BulkReader` answers :meth:`~BulkReader.fetch` for the fetcher's ``bulk`` mode
(:class:`corpus.ingest.fetch.Fetcher`): it finds the paper in the index that
:mod:`corpus.ingest.bulk_index` wrote (only the index files of the id's month are read,
once per month and kind), picks its latest version, reads exactly that member's
bytes (``pread`` locally, one range GET remotely: never a whole tar, never an
extraction) and streams them into the blob store, checking them against the
member's MD5 before the blob is renamed into place.

Outcomes, as :class:`corpus.ingest.fetch.FetchResult` rows with ``source="bulk"``: ``stored``
/ ``cached``; ``failed`` with a reason when the tar holding the paper did not pass its
MD5/size check, or the member is truncated, corrupt (MD5) or over the size cap. A
paper the bulk data does not hold, or holds only in an older version than the
metadata names, comes back as ``None`` with a note, so the fetcher can fall back to
the polite per-paper download.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import polars as pl

from corpus.ingest.bulk import BulkRoot, id_yymm, kaggle_pdf_path
from corpus.ingest.bulk_index import INDEX_ASSET, TARS_ASSET, index_dir
from corpus.ingest.eprint import UnpackLimits
from corpus.ingest.fetch import CACHED, FAILED, STORED, FetchResult, Kind
from corpus.store import BlobMismatch, BlobStore

_TAG = {"pdf": "pdf", "eprint": "src"}


class Member(NamedTuple):
    id: str
    version: int | None
    tar: str
    offset: int
    size: int
    md5: str
    seq: int  # tar seq_num: among equal versions the later tar wins


class BulkReader:
    """The bulk data of one root, as seen through the index under ``home``."""

    def __init__(
        self, root: BulkRoot, home: str | Path, limits: UnpackLimits | None = None, layout: str = "tars"
    ):
        self.root = root
        self.home = Path(home)
        self.limits = limits or UnpackLimits()
        self.layout = layout  # tars | kaggle (one PDF per version, no index)
        self._months: dict[tuple[str, str], dict[str, list[Member]]] = {}
        self._tars: dict[str, tuple[bool, str | None]] | None = None
        self.reads = 0
        self.bytes_read = 0

    @classmethod
    def open(cls, url: str, home: str | Path, layout: str = "tars") -> BulkReader:
        return cls(BulkRoot.open(url), home, layout=layout)

    def close(self) -> None:
        self.root.close()

    # -- the index -------------------------------------------------------------------------
    def tars(self) -> dict[str, tuple[bool, str | None]]:
        """``{tar: (usable, reason)}``; a clear error when the index was never built."""
        if self._tars is None:
            path = self.home / TARS_ASSET / "part-0.parquet"
            if not path.exists():
                raise FileNotFoundError(
                    f"{INDEX_ASSET} has not been materialised under {self.home}: "
                    f"index the bulk root {self.root.url} first"
                )
            frame = pl.read_parquet(path, columns=["tar", "usable", "status", "reason"])
            self._tars = {
                r["tar"]: (bool(r["usable"]), f"{r['status']}: {r['reason']}")
                for r in frame.iter_rows(named=True)
            }
        return self._tars

    def _month(self, kind: Kind, yymm: str) -> dict[str, list[Member]]:
        key = (kind, yymm)
        if key not in self._months:
            tars = self.tars()
            files = sorted(index_dir(self.home).glob(f"arXiv_{_TAG[kind]}_{yymm}_*.parquet"))
            by_id: dict[str, list[Member]] = {}
            for path in files:
                frame = pl.read_parquet(path, columns=["id", "version", "tar", "offset", "size", "md5"])
                for rid, version, tar, offset, size, md5 in frame.iter_rows():
                    if tar not in tars:  # a tar no longer in the manifests
                        continue
                    seq = int(tar.rsplit("_", 1)[-1].split(".")[0])
                    by_id.setdefault(rid, []).append(Member(rid, version, tar, offset, size, md5, seq))
            self._months[key] = by_id
        return self._months[key]

    def locate(self, arxiv_id: str, kind: Kind) -> tuple[Member | None, str | None]:
        """The best member for a paper: usable first, then highest version, then latest tar.
        ``(None, note)`` when the bulk data has none; ``(member, reason)`` when only an
        unusable tar holds it (the reason says why)."""
        members = self._month(kind, id_yymm(arxiv_id)).get(arxiv_id)
        if not members:
            return None, f"not in the bulk data ({kind})"
        tars = self.tars()
        best = max(members, key=lambda m: (tars[m.tar][0], m.version or 0, m.seq))
        usable, reason = tars[best.tar]
        return best, None if usable else f"bulk tar {best.tar} is not usable: {reason}"

    # -- reading ---------------------------------------------------------------------------
    def fetch(
        self, arxiv_id: str, kind: Kind, blobs: BlobStore, version: int | None = None, fallback: bool = False
    ) -> tuple[FetchResult | None, str | None]:
        """One paper's file from the bulk data (see the module docstring for the outcomes)."""
        if self.layout == "kaggle":
            return self._fetch_kaggle(arxiv_id, kind, blobs, version)
        member, problem = self.locate(arxiv_id, kind)
        if member is None:
            return None, problem
        if problem is not None:
            return (None, problem) if fallback else (self._failed(arxiv_id, kind, problem), None)
        note = None
        if member.version is not None and version is not None and member.version < version:
            note = f"bulk holds v{member.version}, the latest is v{version}"
            if fallback:
                return None, note
        if member.size > self.limits.max_total_bytes:
            return self._failed(arxiv_id, kind, f"too_large: {member.size} bytes in {member.tar}"), None
        try:
            chunks = self.root.iter_range(member.tar, member.offset, member.size)
            ref = blobs.put_chunks(kind, chunks, expect_md5=member.md5)
        except BlobMismatch as exc:
            reason = f"corrupt: {member.tar} member {arxiv_id} does not match its indexed MD5 ({exc})"
            return (None, reason) if fallback else (self._failed(arxiv_id, kind, reason), None)
        except (EOFError, OSError) as exc:
            reason = f"truncated or unreadable: {member.tar}: {type(exc).__name__}: {exc}"[:500]
            return (None, reason) if fallback else (self._failed(arxiv_id, kind, reason), None)
        self.reads += 1
        self.bytes_read += member.size
        result = FetchResult(
            id=arxiv_id, kind=kind, status=STORED if ref.new else CACHED, sha256=ref.sha256, md5=ref.md5,
            bytes=ref.size, source="bulk", reason=note,
        )  # fmt: skip
        return result, None

    def _fetch_kaggle(
        self, arxiv_id: str, kind: Kind, blobs: BlobStore, version: int | None
    ) -> tuple[FetchResult | None, str | None]:
        """The Kaggle mirror: ``<archive>/pdf/<yymm>/<number>v<N>.pdf``, newest version first."""
        if kind != "pdf":
            return None, "the Kaggle mirror holds PDFs only"
        for v in range(min(version or 1, 99), 0, -1):
            rel = kaggle_pdf_path(arxiv_id, v)
            size = self.root.size(rel)
            if size is None:
                continue
            if size > self.limits.max_total_bytes:
                return self._failed(arxiv_id, kind, f"too_large: {size} bytes"), None
            try:
                ref = blobs.put_chunks(kind, self.root.iter_range(rel, 0, size))
            except (EOFError, OSError) as exc:
                return self._failed(arxiv_id, kind, f"unreadable: {type(exc).__name__}: {exc}"[:500]), None
            self.reads += 1
            self.bytes_read += size
            note = f"mirror holds v{v}, the latest is v{version}" if version and v < version else None
            result = FetchResult(
                id=arxiv_id, kind=kind, status=STORED if ref.new else CACHED, sha256=ref.sha256,
                md5=ref.md5, bytes=ref.size, source="bulk", reason=note,
            )  # fmt: skip
            return result, None
        return None, "not in the Kaggle mirror"

    @staticmethod
    def _failed(arxiv_id: str, kind: Kind, reason: str) -> FetchResult:
        return FetchResult(id=arxiv_id, kind=kind, status=FAILED, source="bulk", reason=reason)
