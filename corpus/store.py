"""The storage of record: Parquet partitions, content-addressed blobs, DuckDB views.

Layout (DESIGN.md §3, §7)::

    $CORPUS_HOME/<asset>/date=YYYY-MM-DD/part-0.parquet   daily assets (Hive layout)
    $CORPUS_HOME/<asset>/part-0.parquet                    unpartitioned assets
    $CORPUS_HOME/blobs/<kind>/<sha256[:2]>/<sha256>        PDFs, e-prints, TEI
    $CORPUS_HOME/corpus.duckdb                             a view per asset

Every write goes to a temporary name in the same directory and is renamed into
place, and a partition directory is swapped whole, so a crash leaves the old
rows and a re-run replaces them: never half a partition, never duplicates.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

DEFAULT_HOME = "./data"


def corpus_home() -> Path:
    return Path(os.environ.get("CORPUS_HOME", DEFAULT_HOME))


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it into place only on success."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def swap_dir(staging: Path, final: Path) -> None:
    """Replace directory ``final`` by ``staging`` with two renames (the old one removed after):
    readers see the old directory or the whole new one, never a mix."""
    old = None
    if final.exists():
        old = final.with_name(f".{final.name}.old-{uuid.uuid4().hex}")
        os.replace(final, old)
    os.replace(staging, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(final.parent)


@dataclass(frozen=True)
class Store:
    """Parquet tables under one data root."""

    home: Path

    @classmethod
    def from_env(cls) -> Store:
        return cls(corpus_home())

    def asset_dir(self, asset: str) -> Path:
        return self.home / asset

    def partition_dir(self, asset: str, date: str) -> Path:
        return self.home / asset / f"date={date}"

    def write_partition(self, asset: str, date: str, frame: pl.DataFrame) -> Path:
        """Replace the partition ``date`` of ``asset`` with ``frame`` atomically."""
        final = self.partition_dir(asset, date)
        return self._swap_dir(final, {"part-0.parquet": frame})

    def write_table(self, asset: str, frame: pl.DataFrame, name: str = "part-0") -> Path:
        """Replace an unpartitioned table (or one named file of it) atomically."""
        path = self.asset_dir(asset) / f"{name}.parquet"
        with atomic_path(path) as tmp:
            frame.write_parquet(tmp, compression="zstd", statistics=True)
        return path

    def _swap_dir(self, final: Path, files: dict[str, pl.DataFrame]) -> Path:
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.staging-"))
        try:
            for name, frame in files.items():
                frame.write_parquet(staging / name, compression="zstd", statistics=True)
            swap_dir(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return final

    def has_partition(self, asset: str, date: str) -> bool:
        return (self.partition_dir(asset, date) / "part-0.parquet").exists()

    def read_partition(self, asset: str, date: str) -> pl.DataFrame:
        return pl.read_parquet(self.partition_dir(asset, date) / "part-0.parquet")

    def read_partitions(self, asset: str, dates: Iterable[str]) -> pl.DataFrame:
        frames = [self.read_partition(asset, d) for d in dates if self.has_partition(asset, d)]
        return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()

    def scan(self, asset: str) -> pl.LazyFrame:
        """Lazy scan of every partition (or the unpartitioned files) of an asset."""
        root = self.asset_dir(asset)
        if any(root.glob("date=*/*.parquet")):
            return pl.scan_parquet(root / "date=*" / "*.parquet", hive_partitioning=True)
        return pl.scan_parquet(root / "*.parquet")

    def partitions(self, asset: str) -> list[str]:
        root = self.asset_dir(asset)
        if not root.exists():
            return []
        return sorted(p.name[5:] for p in root.glob("date=*") if (p / "part-0.parquet").exists())

    def refresh_views(self) -> Path:
        """(Re)create ``corpus.duckdb`` with one view per asset found under the root."""
        self.home.mkdir(parents=True, exist_ok=True)
        db = self.home / "corpus.duckdb"
        con = duckdb.connect(str(db))
        try:
            for asset_dir in sorted(p for p in self.home.iterdir() if p.is_dir()):
                name = asset_dir.name
                if name.startswith(".") or name in {"blobs", "releases", "scratch"}:
                    continue
                if any(asset_dir.glob("date=*/*.parquet")):
                    glob = f"{asset_dir.resolve()}/date=*/*.parquet"
                    src = f"read_parquet('{glob}', hive_partitioning=true, union_by_name=true)"
                elif any(asset_dir.glob("*.parquet")):
                    src = f"read_parquet('{asset_dir.resolve()}/*.parquet', union_by_name=true)"
                else:
                    continue
                con.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM {src}')
        finally:
            con.close()
        return db


@dataclass(frozen=True)
class BlobRef:
    sha256: str
    md5: str
    size: int
    path: Path
    new: bool = False  # this call stored it (it was not in the store before)


class BlobMismatch(ValueError):
    """The bytes did not have the MD5 the caller expected: nothing was stored."""


class BlobStore:
    """Content-addressed files (sha256), written atomically: a partial write never becomes a blob."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, kind: str, sha256: str) -> Path:
        return self.root / kind / sha256[:2] / sha256

    def has(self, kind: str, sha256: str) -> bool:
        return self.path(kind, sha256).exists()

    def put_bytes(self, kind: str, data: bytes) -> BlobRef:
        sha = hashlib.sha256(data).hexdigest()
        md5 = hashlib.md5(data, usedforsecurity=False).hexdigest()
        dest = self.path(kind, sha)
        if not dest.exists():
            atomic_write_bytes(dest, data)
        return BlobRef(sha, md5, len(data), dest)

    def put_file(self, kind: str, src: Path, chunk: int = 1 << 20) -> BlobRef:
        """Hash and copy ``src`` in one streaming pass."""
        with open(src, "rb") as fin:
            return self.put_chunks(kind, iter(lambda: fin.read(chunk), b""))

    def put_chunks(self, kind: str, chunks: Iterable[bytes], expect_md5: str | None = None) -> BlobRef:
        """Hash and store a stream of byte chunks; with ``expect_md5``, a stream whose MD5
        differs raises :class:`BlobMismatch` and stores nothing."""
        sha, md5, size = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
        (self.root / kind).mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.root / kind, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as fout:
                for block in chunks:
                    sha.update(block)
                    md5.update(block)
                    size += len(block)
                    fout.write(block)
                if expect_md5 is not None and md5.hexdigest() != expect_md5:
                    raise BlobMismatch(f"MD5 {md5.hexdigest()} where {expect_md5} was expected")
                fout.flush()
                os.fsync(fout.fileno())
            dest = self.path(kind, sha.hexdigest())
            new = not dest.exists()
            if new:
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, dest)
            else:
                os.unlink(tmp)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        return BlobRef(sha.hexdigest(), md5.hexdigest(), size, dest, new)

    def read(self, kind: str, sha256: str) -> bytes:
        return self.path(kind, sha256).read_bytes()
