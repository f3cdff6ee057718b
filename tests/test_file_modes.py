"""What the store writes has the modes the umask gives (a shared server's group can read the
corpus), not the private ones ``mkstemp`` / ``mkdtemp`` give whatever the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import polars as pl
import pytest

from corpus import store as store_module
from corpus.store import BlobStore, Store, atomic_write_bytes


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    store_module._umask.cache_clear()
    try:
        yield
    finally:
        os.umask(old)
        store_module._umask.cache_clear()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_partitions_files_and_blobs_follow_the_umask(tmp_path, umask_027):
    store = Store(tmp_path / "data")
    part = store.write_partition("papers", "2024-01-01", pl.DataFrame({"id": ["a"]}), {"inputs": "x"})
    assert _mode(part) == 0o750
    assert {_mode(f) for f in part.iterdir()} == {0o640}
    report = tmp_path / "data" / "reports" / "plot.svg"
    atomic_write_bytes(report, b"<svg/>")
    assert _mode(report) == 0o640
    blobs = BlobStore(tmp_path / "data" / "blobs")
    ref = blobs.put_bytes("pdf", b"%PDF-1.4 a paper")
    assert _mode(blobs.path("pdf", ref.sha256)) == 0o640


def test_the_umask_is_read_without_being_changed(umask_027):
    assert store_module.default_mode() == 0o640 and store_module.default_mode(directory=True) == 0o750
    assert os.umask(0o027) == 0o027  # still what the fixture set
