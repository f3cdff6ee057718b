"""What the incremental releases remember between runs: input fingerprints, a lock, state files.

A release (peS2o v1/v2, CiteWorth) records in its manifest the *content* fingerprint of every
daily partition it was built from (sha256 of the partition's Parquet files, so a day
re-materialised with the same rows keeps its fingerprint and the release stays byte-identical),
and the code versions that made them. Both come from each partition's provenance, recorded
when it was written (corpus.store), so no partition is hashed again here. The state lives under ``$CORPUS_HOME/.index/``
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
from collections.abc import Iterable, Iterator
from pathlib import Path

from corpus.store import Store, atomic_write_bytes, file_sha256

__all__ = [
    "day_fingerprints",
    "input_code_versions",
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


def day_fingerprints(store: Store, asset: str, days: Iterable[str]) -> dict[str, str]:
    """``{day: fingerprint}`` for the given partitions of ``asset``: the content fingerprint each
    recorded when it was written (:meth:`corpus.store.Store.fingerprint`; sha256 over the
    partition's Parquet files, names and bytes), so no partition is read or hashed here."""
    prints: dict[str, str] = {}
    for day in days:
        fingerprint = store.fingerprint(asset, day)
        if fingerprint is not None:
            prints[day] = fingerprint
    return prints


def input_code_versions(
    store: Store, assets: Iterable[str], days: Iterable[str]
) -> dict[str, dict[str, str]]:
    """What a release records of the code behind what it read: ``{asset: {code version: days}}``,
    the days as ``first..last`` ranges (one line per version, however many days)."""
    from corpus.provenance import built_version, day_ranges

    days = list(days)
    out: dict[str, dict[str, str]] = {}
    for asset in assets:
        by_version: dict[str, list[str]] = {}
        for day in days:
            version = built_version(store, asset, day)
            if version is not None:
                by_version.setdefault(version, []).append(day)
        out[asset] = {
            v: ", ".join(a if a == b else f"{a}..{b}" for a, b in day_ranges(ds))
            for v, ds in sorted(by_version.items())
        }
    return out


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
