"""The storage of record: Parquet partitions, content-addressed blobs, DuckDB views.

Layout (DESIGN.md §3, §7)::

    $CORPUS_HOME/<asset>/date=YYYY-MM-DD/part-0.parquet   daily assets (Hive layout)
    $CORPUS_HOME/<asset>/part-0.parquet                    unpartitioned assets
    $CORPUS_HOME/blobs/<kind>/<sha256[:2]>/<sha256>        PDFs, e-prints, TEI
    $CORPUS_HOME/corpus.duckdb                             a view per asset

Every write goes to a temporary name and is renamed into place, and a partition
directory is swapped whole, so a crash leaves the old rows and a re-run replaces
them: never half a partition, never duplicates. The temporary names of partitions and
blobs live in the writing process's scratch directory (:mod:`corpus.scratch`), so
what a killed run leaves behind is removed by the next run.
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
from typing import BinaryIO

import duckdb
import polars as pl

from corpus.scratch import tmp_dir_for

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


def atomic_write_bytes(path: Path, data: bytes, tmp_dir: Path | None = None) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the whole new one
    (the temporary file in ``tmp_dir`` -- same file system -- or next to ``path``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=tmp_dir or path.parent, prefix=f".{path.name}.", suffix=".tmp")
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
    readers see the old directory or the whole new one, never a mix. The old one is moved
    next to ``staging`` (a scratch directory, when that is where staging was made)."""
    old = None
    if final.exists():
        old = staging.parent / f".{final.name}.old-{uuid.uuid4().hex}"
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
        tmp_dir = tmp_dir_for(self.home, final.parent)
        staging = Path(tempfile.mkdtemp(dir=tmp_dir, prefix=f".{final.parent.name}.{final.name}.staging-"))
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


class BlobStore:
    """Content-addressed files (sha256), written atomically: a partial write never becomes a blob."""

    def __init__(self, root: Path, home: Path | None = None):
        self.root = Path(root)
        self.home = Path(home) if home is not None else self.root.parent  # whose scratch holds temp files

    def path(self, kind: str, sha256: str) -> Path:
        return self.root / kind / sha256[:2] / sha256

    def has(self, kind: str, sha256: str) -> bool:
        return self.path(kind, sha256).exists()

    def tmp_dir(self, kind: str) -> Path:
        """Where a blob of ``kind`` is written before it is renamed into place."""
        (self.root / kind).mkdir(parents=True, exist_ok=True)
        return tmp_dir_for(self.home, self.root / kind)

    def put_bytes(self, kind: str, data: bytes) -> BlobRef:
        sha = hashlib.sha256(data).hexdigest()
        md5 = hashlib.md5(data, usedforsecurity=False).hexdigest()
        dest = self.path(kind, sha)
        if not dest.exists():
            atomic_write_bytes(dest, data, self.tmp_dir(kind))
        return BlobRef(sha, md5, len(data), dest)

    def put_file(self, kind: str, src: Path | BinaryIO, chunk: int = 1 << 20) -> BlobRef:
        """Hash and copy ``src`` (a path, or a file opened for reading) in one streaming pass."""
        sha, md5, size = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
        fd, tmp = tempfile.mkstemp(dir=self.tmp_dir(kind), prefix=f".incoming-{kind}-")
        try:
            opened = open(src, "rb") if isinstance(src, str | os.PathLike) else contextlib.nullcontext(src)  # noqa: SIM115
            with opened as fin, os.fdopen(fd, "wb") as fout:
                while block := fin.read(chunk):
                    sha.update(block)
                    md5.update(block)
                    size += len(block)
                    fout.write(block)
                fout.flush()
                os.fsync(fout.fileno())
            dest = self.path(kind, sha.hexdigest())
            if dest.exists():
                os.unlink(tmp)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        return BlobRef(sha.hexdigest(), md5.hexdigest(), size, dest)

    def read(self, kind: str, sha256: str) -> bytes:
        return self.path(kind, sha256).read_bytes()
