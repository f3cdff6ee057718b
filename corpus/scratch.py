"""Per-process scratch space under the data root, cleaned once its owner is gone.

Every temporary file of a run -- a partition being staged, a blob being copied, an
e-print being unpacked -- goes under ``$CORPUS_HOME/scratch/p-<host>-<pid>-<token>/``,
one directory per process. The owner holds an ``flock`` on the directory's ``.lock``
for as long as it lives; the kernel drops that lock however the process ends (``kill
-9`` included). The first time a process asks for its scratch directory it sweeps the
area: a directory whose lock it can take has no owner left and is removed. So a killed
run's leftovers go with the next run, and two runs on one data root (two Dagster
instances, a CLI run beside ``dagster dev``, Pipes workers) never share a path.

Renames out of scratch need one file system: :func:`tmp_dir_for` falls back to the
target's own folder when the target lies on another device (``data/blobs`` mounted
elsewhere).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import socket
import time
import uuid
from pathlib import Path

SCRATCH = "scratch"
PREFIX = "p-"
_LOCK = ".lock"
_STALE_PARTIAL_S = 3600  # a directory still being set up (".p-...") this old was abandoned
_OWNED: dict[tuple[int, str], tuple[Path, int]] = {}  # (pid, real home) -> (dir, lock fd)


def scratch_root(home: os.PathLike | str) -> Path:
    return Path(home) / SCRATCH


def _locked(path: Path) -> int | None:
    """An fd holding an exclusive flock on ``path``, or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def sweep(home: os.PathLike | str) -> list[Path]:
    """Remove the scratch directories whose owning process is gone; return them."""
    root = scratch_root(home)
    mine = {d for (pid, _), (d, _) in _OWNED.items() if pid == os.getpid()}
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if path in mine or not entry.is_dir(follow_symlinks=False):
            continue
        if entry.name.startswith("." + PREFIX):
            with contextlib.suppress(OSError):
                if time.time() - entry.stat(follow_symlinks=False).st_mtime > _STALE_PARTIAL_S:
                    shutil.rmtree(path, ignore_errors=True)
                    removed.append(path)
            continue
        if not entry.name.startswith(PREFIX):
            continue
        try:
            fd = _locked(path / _LOCK)
        except OSError:
            continue
        if fd is None:
            continue  # its owner is alive
        try:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


def process_scratch(home: os.PathLike | str) -> Path:
    """This process's scratch directory under ``home`` (made, locked and the area swept on
    first use; removed at a normal exit, by the next process's sweep otherwise)."""
    key = (os.getpid(), os.path.realpath(home))
    owned = _OWNED.get(key)
    if owned is not None and owned[0].is_dir():
        return owned[0]
    root = scratch_root(home)
    root.mkdir(parents=True, exist_ok=True)
    name = f"{PREFIX}{socket.gethostname()[:40]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    partial = root / f".{name}"
    partial.mkdir()
    fd = _locked(partial / _LOCK)
    assert fd is not None  # a fresh file nobody else knows
    final = root / name
    os.rename(partial, final)  # appears complete, with its lock held
    _OWNED[key] = (final, fd)
    sweep(home)
    return final


def release(home: os.PathLike | str) -> None:
    """Remove this process's scratch directory under ``home`` now (also done at exit)."""
    owned = _OWNED.pop((os.getpid(), os.path.realpath(home)), None)
    if owned is not None:
        shutil.rmtree(owned[0], ignore_errors=True)
        os.close(owned[1])


@atexit.register
def _release_all() -> None:
    for (pid, home), (path, fd) in list(_OWNED.items()):
        if pid == os.getpid():
            shutil.rmtree(path, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.close(fd)
            _OWNED.pop((pid, home), None)


def tmp_dir_for(home: os.PathLike | str, target_dir: os.PathLike | str) -> Path:
    """Where to write a temporary file that will be renamed into ``target_dir``: this
    process's scratch directory when it is on the same device, else ``target_dir``."""
    target = Path(target_dir)
    scratch = process_scratch(home)
    try:
        if os.stat(scratch).st_dev == os.stat(target).st_dev:
            return scratch
    except OSError:
        pass
    return target
