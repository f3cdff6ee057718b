"""Incremental releases equal a build from scratch, day after day, on generated stores with
re-delivered papers (a paper on a later day replaces its earlier row), days arriving out of
order, a day rewritten with the same rows, a day removed, and days after the cutoff.
The same property on real landing days is tested in test_pes2o_assets.py and
test_citeworth_assets.py."""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import shutil
from pathlib import Path

import pytest

from corpus.pes2o_release import ReleaseSettings, pes2o_frame, release_dir, write_release
from corpus.store import Store

WORDS = ("alpha", "beta", "γάμμα", "delta", "epsilon", "zeta")


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _pes2o_row(pid: str, source: str, day: str, created: str, keep: bool, text: str) -> dict:
    cd = dt.date.fromisoformat(created)
    return {
        "id": pid, "source": source, "added": f"{day}T00:00:00.000Z", "created": f"{created}T00:00:00.000Z",
        "created_date": cd, "year": cd.year, "v1_keep": keep, "v1_reason": None if keep else "no_title",
        "v2_keep": keep and len(text) % 5 != 0, "v2_reason": None if keep and len(text) % 5 else "ocr_spaced_letters",
        "text": text if keep else None, "words": len(text.split()) if keep else None,
    }  # fmt: skip


def _pes2o_day(rng: random.Random, day: str, k: int, papers: list[str]) -> list[dict]:
    """New papers of ``day`` plus a few earlier papers delivered again with a new text."""
    rows = []
    for n in range(rng.randint(3, 12)):
        pid = f"{day[2:4]}{day[5:7]}.{k:02d}{n:03d}"
        papers.append(pid)
        created = rng.choice(["2019-05-01", "2020-12-20", "2021-01-02", "2021-01-09", "2021-02-01"])
        for source in ("s2orc", "s2ag"):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 200)))
            rows.append(_pes2o_row(pid, source, day, created, rng.random() < 0.8, text))
    new = {r["id"] for r in rows}
    for pid in rng.sample(papers[:-12], min(3, max(0, len(papers) - 12))):
        if pid not in new:
            for source in ("s2orc", "s2ag"):
                text = "again " + " ".join(rng.choice(WORDS[:2]) for _ in range(rng.randint(1, 150)))
                rows.append(_pes2o_row(pid, source, day, "2020-12-20", rng.random() < 0.8, text))
    return rows


def _full_pes2o(home: Path, scratch: Path, settings: ReleaseSettings) -> dict[str, dict[str, str]]:
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(home / "pes2o", scratch / "pes2o")
    for v in ("v1", "v2"):
        assert write_release(scratch, v, settings)["mode"] == "full"
    return {v: _tree(release_dir(scratch, v)) for v in ("v1", "v2")}


@pytest.mark.parametrize("seed", [1, 2])
def test_pes2o_day_by_day_equals_a_full_build(tmp_path, seed):
    rng = random.Random(seed)
    home, scratch = tmp_path / "home", tmp_path / "scratch"
    store = Store(home)
    days = [(dt.date(2021, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(12)]
    order = days[:]
    rng.shuffle(order)  # a backfill: days arrive in any order
    settings = ReleaseSettings(
        cutoff="2021-01-10", max_shard_bytes=3000, min_chunk_bytes=400, chunk_bytes=1600
    )
    papers: list[str] = []
    modes = []
    for k, day in enumerate(order):
        store.write_partition("pes2o", day, pes2o_frame(_pes2o_day(rng, day, k, papers)))
        summaries = [write_release(home, v, settings) for v in ("v1", "v2")]
        modes.append(summaries[0]["mode"])
        if k and day > settings.cutoff:  # a day after the cutoff is not read
            assert [s["mode"] for s in summaries] == ["unchanged", "unchanged"]
        assert {v: _tree(release_dir(home, v)) for v in ("v1", "v2")} == _full_pes2o(home, scratch, settings)
    assert "incremental" in modes and modes[0] in ("full", "unchanged")
    last = summaries[0]
    assert last["shards_reused"] > 0
    before = {v: _tree(release_dir(home, v)) for v in ("v1", "v2")}
    # a day rewritten with the same rows: same fingerprint, nothing written
    store.write_partition("pes2o", days[0], store.read_partition("pes2o", days[0]))
    assert write_release(home, "v1", settings)["mode"] == "unchanged"
    # a day after the cutoff: not read
    store.write_partition("pes2o", "2021-02-01", pes2o_frame(_pes2o_day(rng, "2021-02-01", 99, papers)))
    again = write_release(home, "v1", settings)
    assert again["mode"] == "unchanged" and again["days_after_cutoff"] >= 1
    assert _tree(release_dir(home, "v1")) == before["v1"]
    # a day removed: the papers it re-delivered fall back to their earlier rows
    shutil.rmtree(store.partition_dir("pes2o", days[5]))
    assert write_release(home, "v1", settings)["mode"] == "incremental"
    assert write_release(home, "v2", settings)["mode"] == "incremental"
    assert {v: _tree(release_dir(home, v)) for v in ("v1", "v2")} == _full_pes2o(home, scratch, settings)


def test_pes2o_release_changed_behind_its_back_is_rebuilt(tmp_path):
    rng = random.Random(3)
    store = Store(tmp_path)
    settings = ReleaseSettings(cutoff="2021-01-31", min_chunk_bytes=400, chunk_bytes=1600)
    papers: list[str] = []
    for k, day in enumerate(("2021-01-01", "2021-01-02")):
        store.write_partition("pes2o", day, pes2o_frame(_pes2o_day(rng, day, k, papers)))
    write_release(tmp_path, "v1", settings)
    shard = next(release_dir(tmp_path, "v1").rglob("*.parquet"))
    shard.write_bytes(b"not the release")  # the manifest no longer names what is there
    (release_dir(tmp_path, "v1") / "manifest.json").write_text("{}")
    store.write_partition("pes2o", "2021-01-03", pes2o_frame(_pes2o_day(rng, "2021-01-03", 2, papers)))
    assert write_release(tmp_path, "v1", settings)["mode"] == "full"
    full = _full_pes2o(tmp_path, tmp_path.parent / f"{tmp_path.name}-full", settings)
    assert _tree(release_dir(tmp_path, "v1")) == full["v1"]
