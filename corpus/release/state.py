"""What the incremental releases remember between runs: input fingerprints, a lock, state files.

A release (peS2o v1/v2, CiteWorth) records in its manifest the *content* fingerprint of every
daily partition it was built from (sha256 of the partition's Parquet files, so a day
re-materialised with the same rows keeps its fingerprint and the release stays byte-identical).
Hashing every partition on every run would cost as much as reading the corpus, so the
fingerprints are cached in the release's state, keyed by each file's size, mtime and inode:
only new or rewritten files are hashed. The state lives under ``$CORPUS_HOME/.index/``
(outside the release, which holds data only) and names the sha256 of the manifest it belongs
to, so a release changed or removed behind its back is rebuilt in full, never patched.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from corpus.store import Store, atomic_write_bytes, file_sha256, partition_fingerprint

__all__ = [
    "day_fingerprints",
    "file_sha256",
    "link_or_copy",
    "load_state",
    "locked",
    "manifest_sha256",
    "save_state",
    "state_dir",
]

INDEX = ".index"


def state_dir(home: str | Path, name: str) -> Path:
    """``$CORPUS_HOME/.index/<name>``: a release's private state (hidden from the DuckDB views)."""
    return Path(home) / INDEX / name


def day_fingerprints(
    store: Store, asset: str, days: Iterable[str], cache: Mapping[str, Any] | None = None
) -> tuple[dict[str, str], dict[str, Any]]:
    """``({day: fingerprint}, new_cache)`` for the given partitions of ``asset``.

    The fingerprint is :func:`corpus.store.partition_fingerprint` (sha256 over the partition's
    Parquet files, names and bytes). ``cache`` is the previous run's ``new_cache``: a day whose files
    have the same size, mtime and inode is not read again.
    """
    cache = cache or {}
    prints: dict[str, str] = {}
    new_cache: dict[str, Any] = {}
    for day in days:
        folder = store.partition_dir(asset, day)
        with os.scandir(folder) as it:
            entries = sorted(
                (e for e in it if e.name.endswith(".parquet") and e.is_file()), key=lambda e: e.name
            )
        stats = []
        for e in entries:
            st = e.stat()
            stats.append([e.name, st.st_size, st.st_mtime_ns, st.st_ino])
        old = cache.get(day)
        fp = old[1] if old is not None and old[0] == stats else partition_fingerprint(folder)
        prints[day] = fp
        new_cache[day] = [stats, fp]
    return prints, new_cache


def link_or_copy(src: Path, dst: Path) -> None:
    """``dst`` the same file as ``src`` (a hard link: no bytes copied), or a copy where the file
    system has no hard links."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def manifest_sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def load_state(directory: Path, manifest: Path, fmt: int) -> dict | None:
    """The state saved with the release whose manifest is ``manifest``, or None (no state,
    another format, or a manifest that is not the one the state was saved with)."""
    try:
        state = json.loads((directory / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or state.get("format") != fmt:
        return None
    if state.get("manifest_sha256") != manifest_sha256(manifest):
        return None
    return state


def save_state(directory: Path, manifest: Path, fmt: int, state: dict) -> None:
    """Write ``state.json`` (atomically), naming the sha256 of ``manifest``."""
    body = {**state, "format": fmt, "manifest_sha256": manifest_sha256(manifest)}
    atomic_write_bytes(directory / "state.json", json.dumps(body, sort_keys=True).encode())


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` for the block: two runs of one release take turns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
