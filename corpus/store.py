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

Each daily partition carries its provenance in the same swap (``_provenance``, a
:class:`Provenance`): its content fingerprint, the version of the stage that wrote it
(:mod:`corpus.versions`) and the fingerprint of every partition of the same day the stage
read. A :class:`Store` remembers what it read for that; :mod:`corpus.provenance` compares the
records with the code and the data of today to say which partitions an improvement changes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pydantic import BaseModel, ConfigDict, ValidationError

from corpus.scratch import tmp_dir_for

if TYPE_CHECKING:  # polars is imported where frames are read: the code server loads this module
    import polars as pl

log = logging.getLogger(__name__)

# Run as ``python -c _CREATE_VIEWS <db> <{view: source} as JSON>`` (Store.refresh_views).
_CREATE_VIEWS = """
import json, sys
import duckdb
try:
    con = duckdb.connect(sys.argv[1])
except duckdb.Error as exc:  # another process holds the database's lock (a user's shell)
    sys.exit(f"{type(exc).__name__}: {exc}")
with con:
    for name, src in json.loads(sys.argv[2]).items():
        con.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM {src}')
"""

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


@functools.cache
def _umask() -> int:
    """The process's umask: from /proc where Linux shows it (reading it elsewhere means setting
    it, and another thread could create a file in between), else set and put back."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_mode(directory: bool = False) -> int:
    """The mode ``open()`` or ``mkdir()`` would give. ``mkstemp`` and ``mkdtemp`` make their
    file or directory private (0600 / 0700) whatever the umask; renamed into place, a corpus
    would then be unreadable by the group and the other users a shared server has."""
    return (0o777 if directory else 0o666) & ~_umask()


def atomic_write_bytes(path: Path, data: bytes, tmp_dir: Path | None = None) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the whole new one
    (the temporary file in ``tmp_dir`` -- same file system -- or next to ``path``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=tmp_dir or path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), default_mode())
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
    os.chmod(staging, default_mode(directory=True))  # made by mkdtemp: private until now
    old = None
    if final.exists():
        old = staging.parent / f".{final.name}.old-{uuid.uuid4().hex}"
        os.replace(final, old)
    os.replace(staging, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(final.parent)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def partition_fingerprint(folder: Path) -> str:
    """The content fingerprint of a partition directory: sha256 (32 hex digits) over its Parquet
    files' names and bytes, in name order. The same rows written again give the same fingerprint;
    the releases record it per day they read, the daily assets in each partition's event
    (corpus_assets.freshness), so the two can be compared. Computed once, when the partition is
    written (:class:`Provenance`); :meth:`Store.fingerprint` reads it from there."""
    with os.scandir(folder) as it:
        names = sorted(e.name for e in it if e.name.endswith(".parquet") and e.is_file())
    h = hashlib.sha256()
    for name in names:
        h.update(name.encode() + b"\0" + bytes.fromhex(file_sha256(folder / name)))
    return h.hexdigest()[:32]


PROVENANCE = "provenance"  # the marker (``_provenance``) every daily partition is written with


class Provenance(BaseModel):
    """What made a daily partition: written beside its Parquet, in the same directory swap."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    fingerprint: str  # partition_fingerprint of its Parquet files
    code_version: str | None = None  # the writing stage's version (corpus.versions); None: not known
    # The partitions of the same day the stage read, each with its fingerprint then (None: absent).
    inputs: dict[str, str | None] = {}


def _legacy_version(asset: str, folder: Path) -> str | None:
    """The code version of a partition written before versions were recorded: the one its rows
    name (a stage with a version column: the oldest among them), else its stage's first."""
    from corpus.versions import FIRST_RECORDED, VERSION_COLUMNS

    column = VERSION_COLUMNS.get(asset)
    if column is not None:
        import polars as pl

        frame = pl.scan_parquet(folder / "part-0.parquet")
        if column in frame.collect_schema().names():
            named = frame.select(pl.col(column).drop_nulls().unique()).collect().to_series().to_list()
            named = sorted(v for v in named if v)
            if named:
                return named[0]
    return FIRST_RECORDED.get(asset)


def scan_days(files: Iterable[Path], schema: Mapping[str, pl.DataType], hive: bool = False) -> pl.LazyFrame:
    """Daily partition files read as ``schema`` says (the columns wanted, at today's types):
    a column a day was written without reads as null, columns not named are not read. So a
    new column in a daily table never breaks the cross-day reading of days written before it;
    those days are built by an older stage version, so ``make rederive`` rebuilds them, and
    until then their new column is null. ``hive``: the ``date`` column from the path, as text."""
    import polars as pl

    return pl.scan_parquet(
        list(files),
        schema=dict(schema),
        missing_columns="insert",
        extra_columns="ignore",
        cast_options=pl.ScanCastOptions(integer_cast="upcast", float_cast="upcast"),
        hive_partitioning=hive,
        hive_schema={"date": pl.Utf8} if hive else None,
    )


@dataclass(frozen=True)
class Store:
    """Parquet tables under one data root.

    A store remembers the daily partitions it read (:meth:`read_partition`,
    :meth:`has_partition`) with their fingerprints at that moment; a partition it then writes
    for the same day records them as its inputs (:class:`Provenance`). A stage function makes
    its own store for the day it works on."""

    home: Path
    reads: dict[tuple[str, str], str | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_env(cls) -> Store:
        return cls(corpus_home())

    def asset_dir(self, asset: str) -> Path:
        return self.home / asset

    def partition_dir(self, asset: str, date: str) -> Path:
        return self.home / asset / f"date={date}"

    def write_partition(
        self, asset: str, date: str, frame: pl.DataFrame, markers: dict[str, str] | None = None
    ) -> Path:
        """Replace the partition ``date`` of ``asset`` with ``frame`` atomically. ``markers``
        (name -> text) are small sidecar files swapped in with it, e.g. the fingerprint of the
        inputs the partition was built from (:meth:`read_marker`)."""
        final = self.partition_dir(asset, date)
        inputs = {a: fp for (a, d), fp in sorted(self.reads.items()) if d == date and a != asset}
        return self._swap_dir(final, {"part-0.parquet": frame}, markers or {}, (asset, inputs))

    def read_marker(self, asset: str, date: str, name: str) -> str | None:
        """A sidecar written by :meth:`write_partition`, or None."""
        try:
            return (self.partition_dir(asset, date) / f"_{name}").read_text()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def provenance(self, asset: str, date: str) -> Provenance | None:
        """What made the partition (None: none stored, or written before provenance was recorded)."""
        text = self.read_marker(asset, date, PROVENANCE)
        if text is None:
            return None
        try:
            return Provenance.model_validate_json(text)
        except ValidationError:
            log.warning("unreadable provenance of %s %s: taken as none", asset, date)
            return None

    def recorded(self, asset: str, date: str) -> Provenance | None:
        """The partition's provenance (None: no partition). A partition written before
        provenance was recorded is hashed once and adopted (:meth:`_adopt`): its code version is
        then the one its rows name, or its stage's first recorded version
        (:data:`corpus.versions.FIRST_RECORDED`), and its inputs are not known."""
        found = self.provenance(asset, date)
        if found is not None:
            return found
        folder = self.partition_dir(asset, date)
        if not (folder / "part-0.parquet").exists():
            return None
        record = Provenance(
            fingerprint=partition_fingerprint(folder), code_version=_legacy_version(asset, folder)
        )
        self._adopt(folder, record)
        return record

    def fingerprint(self, asset: str, date: str) -> str | None:
        """The partition's content fingerprint (None: no partition), recorded when it was
        written (or when it was adopted, :meth:`recorded`): never hashed twice."""
        found = self.recorded(asset, date)
        return found.fingerprint if found is not None else None

    def _adopt(self, folder: Path, record: Provenance) -> None:
        """Give a partition written before provenance was recorded its record. Linked into
        place without replacing anything: a partition swapped in meanwhile comes with its own
        provenance, which this never overwrites; a store that cannot be written (a read-only
        copy) just stays unadopted."""
        final = folder / f"_{PROVENANCE}"
        tmp = folder / f".{PROVENANCE}.{uuid.uuid4().hex}.tmp"
        try:
            tmp.write_text(record.model_dump_json())
            os.link(tmp, final)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def write_table(self, asset: str, frame: pl.DataFrame, name: str = "part-0") -> Path:
        """Replace an unpartitioned table (or one named file of it) atomically."""
        path = self.asset_dir(asset) / f"{name}.parquet"
        with atomic_path(path) as tmp:
            frame.write_parquet(tmp, compression="zstd", statistics=True)
        return path

    def _swap_dir(
        self,
        final: Path,
        files: dict[str, pl.DataFrame],
        markers: dict[str, str],
        made: tuple[str, dict[str, str | None]],
    ) -> Path:
        from corpus.versions import STAGES, code_version

        final.parent.mkdir(parents=True, exist_ok=True)
        tmp_dir = tmp_dir_for(self.home, final.parent)
        staging = Path(tempfile.mkdtemp(dir=tmp_dir, prefix=f".{final.parent.name}.{final.name}.staging-"))
        try:
            for name, frame in files.items():
                frame.write_parquet(staging / name, compression="zstd", statistics=True)
            asset, inputs = made
            version = code_version(asset) if asset in STAGES else None
            record = Provenance(
                fingerprint=partition_fingerprint(staging), code_version=version, inputs=inputs
            )
            for name, text in {**markers, PROVENANCE: record.model_dump_json()}.items():
                (staging / f"_{name}").write_text(text)
            swap_dir(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return final

    def read_table(self, asset: str, name: str = "part-0") -> pl.DataFrame:
        """An unpartitioned table written by :meth:`write_table`."""
        import polars as pl

        return pl.read_parquet(self.asset_dir(asset) / f"{name}.parquet")

    def has_partition(self, asset: str, date: str) -> bool:
        """Whether the partition exists; a stage that finds none has read its absence."""
        found = (self.partition_dir(asset, date) / "part-0.parquet").exists()
        if not found:
            self.reads[(asset, date)] = None
        return found

    def partition_rows(self, asset: str, date: str) -> int:
        """Rows of one stored partition (0 when it has none), from its Parquet footer: no data
        is read, and no pyarrow loaded (~50 MB of library pages in each process that would)."""
        import polars as pl

        path = self.partition_dir(asset, date) / "part-0.parquet"
        return pl.scan_parquet(path).select(pl.len()).collect().item() if path.exists() else 0

    def read_partition(self, asset: str, date: str) -> pl.DataFrame:
        """The partition's rows; its fingerprint is remembered as read (None when the partition
        was replaced while it was being read: what was read is then unknown)."""
        import polars as pl

        before = self.recorded(asset, date)
        frame = pl.read_parquet(self.partition_dir(asset, date) / "part-0.parquet")
        after = self.provenance(asset, date)
        self.reads[(asset, date)] = before.fingerprint if before is not None and before == after else None
        return frame

    def read_partitions(self, asset: str, dates: Iterable[str]) -> pl.DataFrame:
        import polars as pl

        frames = [self.read_partition(asset, d) for d in dates if self.has_partition(asset, d)]
        return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()

    def scan(self, asset: str) -> pl.LazyFrame:
        """Lazy scan of every partition (or the unpartitioned files) of an asset."""
        import polars as pl

        root = self.asset_dir(asset)
        if any(root.glob("date=*/*.parquet")):
            return pl.scan_parquet(root / "date=*" / "*.parquet", hive_partitioning=True)
        return pl.scan_parquet(root / "*.parquet")

    def partitions(self, asset: str) -> list[str]:
        root = self.asset_dir(asset)
        if not root.exists():
            return []
        return sorted(p.name[5:] for p in root.glob("date=*") if (p / "part-0.parquet").exists())

    def views_db(self) -> Path:
        return self.home / "corpus.duckdb"

    def refresh_views(self, assets: Iterable[str] | None = None) -> Path | None:
        """Make sure ``corpus.duckdb`` has a view per asset (or per asset in ``assets``).

        A view reads its Hive glob at query time, so it is created once, when its asset
        first has files, and never again: new partitions cost nothing here. A marker file
        per view (under ``.index/views``) saves even opening DuckDB on later calls. Returns
        the database path, or None (with a logged warning) when they could not be made, e.g.
        another process holds DuckDB's lock (a user's shell): views are a convenience and
        never fail a run.
        """
        db = self.views_db()
        markers = self.home / ".index" / "views"
        if not db.exists() and markers.exists():
            shutil.rmtree(markers, ignore_errors=True)  # the database was removed: start over
        names = self._asset_names() if assets is None else list(assets)
        todo = [n for n in names if not (markers / n).exists()]
        sources = {n: src for n in todo if (src := self._view_source(n)) is not None}
        if not sources:
            return db
        markers.mkdir(parents=True, exist_ok=True)
        # DuckDB is loaded by a child that exits, not by this process: a run worker would keep
        # its 35 MB for every later day of the run (views are new only a few times per store).
        with _file_lock(self.home / ".index" / "views.lock"):
            done = subprocess.run(
                [sys.executable, "-c", _CREATE_VIEWS, str(db), json.dumps(sources)],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                log.warning("views of %s not created: %s", db, done.stderr.strip()[-500:])
                return None
            for name in sources:
                (markers / name).touch()
        return db

    def _asset_names(self) -> list[str]:
        if not self.home.exists():
            return []
        return sorted(
            p.name
            for p in self.home.iterdir()
            if p.is_dir()
            and not p.name.startswith(".")
            and p.name not in {"blobs", "releases", "scratch", "reports"}
        )

    def _view_source(self, asset: str) -> str | None:
        """The ``read_parquet`` a view of ``asset`` selects from, or None while it has no files.
        Looks at the first entries only: never a glob over every partition."""
        root = self.asset_dir(asset).resolve()
        if not root.is_dir():
            return None
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.name.startswith("date=") and entry.is_dir():
                    glob = f"{root}/date=*/*.parquet"
                    return f"read_parquet('{glob}', hive_partitioning=true, union_by_name=true)"
                if entry.name.endswith(".parquet") and entry.is_file():
                    return f"read_parquet('{root}/*.parquet', union_by_name=true)"
        return None


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock between processes (DuckDB allows one writer per file)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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
        opened = open(src, "rb") if isinstance(src, str | os.PathLike) else contextlib.nullcontext(src)  # noqa: SIM115
        with opened as fin:
            return self.put_chunks(kind, iter(lambda: fin.read(chunk), b""))

    def put_chunks(self, kind: str, chunks: Iterable[bytes], expect_md5: str | None = None) -> BlobRef:
        """Hash and store a stream of byte chunks; with ``expect_md5``, a stream whose MD5
        differs raises :class:`BlobMismatch` and stores nothing."""
        sha, md5, size = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
        fd, tmp = tempfile.mkstemp(dir=self.tmp_dir(kind), prefix=f".incoming-{kind}-")
        try:
            with os.fdopen(fd, "wb") as fout:
                os.fchmod(fout.fileno(), default_mode())
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
