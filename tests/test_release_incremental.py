"""Incremental releases equal a build from scratch, day after day, on generated stores with
re-delivered papers (a paper on a later day replaces its earlier row), days arriving out of
order, a day rewritten with the same rows, a day removed, and days after the cutoff.
The same property on real landing days is tested in test_pes2o_assets.py and
test_citeworth_assets.py."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import random
import shutil
import stat
from pathlib import Path

import pytest

from corpus.release.pes2o_release import ReleaseSettings, release_dir, write_release
from corpus.release.pes2o_table import pes2o_frame
from corpus.store import Store, default_mode

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
    small_tasks = dataclasses.replace(settings, sort_bucket_bytes=2000)  # several tasks, built in processes
    assert write_release(home, "v1", small_tasks, workers=2)["mode"] == "incremental"
    assert write_release(home, "v2", settings)["mode"] == "incremental"
    assert {v: _tree(release_dir(home, v)) for v in ("v1", "v2")} == _full_pes2o(home, scratch, settings)
    for v in ("v1", "v2"):
        _assert_shareable(release_dir(home, v))


def _assert_shareable(root: Path) -> None:
    """A release (files and the directory swapped in) has the modes the umask gives, not the
    private ones of mkstemp / mkdtemp: other users of a shared server can read it."""
    assert stat.S_IMODE(root.stat().st_mode) == default_mode(directory=True)
    files = [f for f in root.rglob("*") if f.is_file()]
    assert files and {stat.S_IMODE(f.stat().st_mode) for f in files} == {default_mode()}


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


# --------------------------------------------------------------------------- CiteWorth

_FIELDS = ("Physics", "Computer Science", "Mathematics", "Biology", "Economics")


def _cw_day(home: Path, day: str, papers: dict[str, tuple[str, int, str]]) -> None:
    """``papers``: {id: (field, kept paragraphs, text)}; 0 paragraphs = no full text."""
    from corpus.parse.document import Paragraph, Span
    from corpus.release import citeworth as cw

    rows, cands = [], []
    for pid, (fld, n, text) in papers.items():
        for i in range(n):
            body = f"{text} {pid} {i} carries on here [1]."
            start = body.index("[1]")
            p = Paragraph(
                text=body, section="Introduction", cite_spans=[Span(start=start, end=start + 3, text="[1]")]
            )
            res = cw.ParagraphResult(pid, i, "Introduction", fld, body, kept=True)
            res.samples = cw.check_paragraph(p)
            rows.append(cw._paragraph_row(res))
        cands.append({"paper_id": pid, "field": fld, "reason": None if n else cw.P_NO_TEXT})
    store = Store(home)
    store.write_partition(cw.PARAGRAPHS, day, cw._frame(rows, cw.PARAGRAPH_SCHEMA))
    store.write_partition(cw.CANDIDATES, day, cw._frame(cands, cw.CANDIDATE_SCHEMA))


def _cw_tree(home: Path) -> dict[str, bytes]:
    from corpus.release import citeworth as cw

    root = cw.release_dir(home)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _cw_full(home: Path, scratch: Path, **kw) -> dict[str, bytes]:
    from corpus.release import citeworth as cw
    from corpus.release import citeworth_release

    shutil.rmtree(scratch, ignore_errors=True)
    for asset in (cw.PARAGRAPHS, cw.CANDIDATES):
        shutil.copytree(home / asset, scratch / asset)
    assert citeworth_release.build_release(scratch, **kw)["mode"] == "full"
    return _cw_tree(scratch)


def _assert_split_digests(root: Path) -> None:
    """The manifest's digest of each split file, kept from the lines' digests, is the file's."""
    from corpus.release.citeworth_release import split_digest

    files = json.loads((root / "manifest.json").read_text())["files"]
    assert len(files) == 3
    for f in files:
        assert f["digest"] == split_digest(root / f["path"]), f["path"]


@pytest.mark.parametrize("per_field", [None, 12])
def test_citeworth_day_by_day_equals_a_full_build(tmp_path, per_field):
    """Default (median) cap, which moves every day, and a fixed cap; re-delivered papers with
    new text or no paragraphs left, days out of order, a day removed."""
    from corpus.release import citeworth as cw
    from corpus.release import citeworth_release

    rng = random.Random(5 if per_field is None else 6)
    home, scratch = tmp_path / "home", tmp_path / "scratch"
    days = [(dt.date(2024, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(10)]
    order = days[:]
    rng.shuffle(order)
    papers: list[str] = []
    modes, written = [], []
    for k, day in enumerate(order):
        today = {}
        for n in range(rng.randint(4, 14)):
            pid = f"24{k:02d}.{n:05d}"
            papers.append(pid)
            fld = rng.choice(_FIELDS[: 2 + k % 4])
            today[pid] = (fld, rng.randint(0, 3), rng.choice(["The model is trained", "Results are shown"]))
        for pid in rng.sample(papers[:-14], min(2, max(0, len(papers) - 14))):
            today[pid] = ("Physics", rng.randint(0, 2), "A newer version says")
        _cw_day(home, day, today)
        summary = citeworth_release.build_release(home, per_field=per_field)
        modes.append(summary["mode"])
        written.append(summary["files_written"])
        assert _cw_tree(home) == _cw_full(home, scratch, per_field=per_field)
        _assert_split_digests(cw.release_dir(home))
    assert modes[0] == "full" and set(modes[1:]) == {"incremental"}
    assert citeworth_release.build_release(home, per_field=per_field)["mode"] == "unchanged"
    shutil.rmtree(Store(home).partition_dir(cw.PARAGRAPHS, order[3]))
    shutil.rmtree(Store(home).partition_dir(cw.CANDIDATES, order[3]))
    assert citeworth_release.build_release(home, per_field=per_field)["mode"] == "incremental"
    assert _cw_tree(home) == _cw_full(home, scratch, per_field=per_field)
    audit = cw.audit_release(cw.release_dir(home))
    assert audit["sentences"] > 20 and audit["with_marker"] == 0
    _assert_shareable(cw.release_dir(home))


def test_citeworth_state_of_an_older_layout_is_rebuilt_in_full(tmp_path):
    """A state saved in an older layout (format 3: one key table over every day) is not
    merged into: the release is built in full, the bytes of a full build, then kept by day."""
    from corpus.release import citeworth as cw
    from corpus.release import citeworth_release

    home, scratch = tmp_path / "home", tmp_path / "scratch"
    _cw_day(
        home, "2024-01-02", {f"2401.{n:05d}": (_FIELDS[n % 3], 2, "The model is trained") for n in range(9)}
    )
    assert citeworth_release.build_release(home)["mode"] == "full"
    path = home / ".index" / citeworth_release.STATE / "state.json"
    state = json.loads(path.read_text())
    path.write_text(json.dumps({**state, "format": 3, "keys": "keys-0.parquet"}, sort_keys=True))
    _cw_day(home, "2024-01-01", {f"2312.{n:05d}": (_FIELDS[n % 4], 3, "Results are shown") for n in range(7)})
    summary = citeworth_release.build_release(home)
    assert summary["mode"] == "full" and summary["full_because"] == "no usable state"
    assert _cw_tree(home) == _cw_full(home, scratch)
    _assert_split_digests(cw.release_dir(home))
    _cw_day(home, "2024-01-03", {"2401.00001": ("Physics", 1, "A newer version says")})
    assert citeworth_release.build_release(home)["mode"] == "incremental"
    assert _cw_tree(home) == _cw_full(home, scratch)


def _cw_pool_files(home: Path) -> tuple[set[str], set[str]]:
    """The pool files in the CiteWorth state directory, and those its state.json names."""
    from corpus.release import citeworth_release

    root = home / ".index" / citeworth_release.STATE
    named = set(json.loads((root / "state.json").read_text())["pool"])
    return {p.name for p in root.glob("*.bin")}, named


def test_citeworth_lines_go_through_a_spill_file_that_a_failed_run_removes(tmp_path, monkeypatch):
    """A full build reads every candidate's line into a spill file (its memory does not grow
    with the release); its pool lines stay there or are compacted out of it, and a run that
    fails after writing it leaves no file the state does not name. The next run is a full
    build's bytes."""
    from corpus.release import citeworth as cw
    from corpus.release import citeworth_release

    home, scratch = tmp_path / "home", tmp_path / "scratch"
    _cw_day(
        home, "2024-01-01", {f"2401.{n:05d}": (_FIELDS[n % 2], 3, "The model is trained") for n in range(40)}
    )
    _cw_day(
        home, "2024-01-02", {f"2401.{n:05d}": (_FIELDS[2], 1, "Results are shown") for n in range(40, 44)}
    )
    fetched = []
    real_fetch = citeworth_release._fetch
    monkeypatch.setattr(
        citeworth_release, "_fetch", lambda *a: fetched.append(Path(a[2].name).name) or real_fetch(*a)
    )
    summary = citeworth_release.build_release(home, per_field=20)
    assert summary["mode"] == "full" and summary["paragraphs"] == 44
    files, named = _cw_pool_files(home)
    assert len(fetched) == 1 and fetched[0].startswith("pool-") and fetched[0].endswith("-f.bin")
    assert files == named == {fetched[0]}  # the two capped fields' pool lines stay in the spill file
    assert _cw_tree(home) == _cw_full(home, scratch, per_field=20)
    _assert_split_digests(cw.release_dir(home))

    def boom(*a, **kw):
        raise OSError("disk full")

    _cw_day(
        home, "2024-01-03", {f"2401.{n:05d}": (_FIELDS[1], 2, "A newer version says") for n in range(50, 70)}
    )
    monkeypatch.setattr(citeworth_release, "_commit", boom)
    before = len(fetched)
    with pytest.raises(OSError, match="disk full"):
        citeworth_release.build_release(home, per_field=20)
    assert len(fetched) == before + 2  # the incremental run, then the full one it fell back to
    assert _cw_pool_files(home)[0] == files  # both runs' spill files removed, the state's kept
    monkeypatch.undo()
    monkeypatch.setattr(citeworth_release, "_COMPACT_SLACK", 0)  # the pool compacted out of the spill
    assert citeworth_release.build_release(home, per_field=20)["mode"] == "incremental"
    assert _cw_tree(home) == _cw_full(home, scratch, per_field=20)
    files, named = _cw_pool_files(home)
    assert files == named and len(files) == 1 and next(iter(files)).endswith("-c.bin")
    _assert_split_digests(cw.release_dir(home))
    _cw_day(
        home, "2024-01-04", {f"2401.{n:05d}": (_FIELDS[0], 1, "Results are shown") for n in range(60, 75)}
    )
    assert citeworth_release.build_release(home, per_field=20)["mode"] == "incremental"
    assert _cw_tree(home) == _cw_full(home, scratch, per_field=20)  # lines entering from the compacted pool


def test_citeworth_full_build_over_processes_is_the_same_release(tmp_path, monkeypatch):
    """A full build hashes its days' keys and reads their lines in processes (one per CPU, a few
    days' results in memory at a time): the bytes of a build in one process."""
    import concurrent.futures as cf

    from corpus.release import citeworth_release

    home, scratch = tmp_path / "home", tmp_path / "scratch"
    for k in range(6):
        day = f"2024-01-{k + 1:02d}"
        _cw_day(home, day, {f"24{k:02d}.{n:05d}": (_FIELDS[(n + k) % 4], 1 + n % 3, "The model is trained")
                            for n in range(12)})  # fmt: skip
    pools = []

    class Counted(cf.ProcessPoolExecutor):
        def __init__(self, *a, **kw):
            pools.append(kw.get("max_workers"))
            super().__init__(*a, **kw)

    monkeypatch.setattr(cf, "ProcessPoolExecutor", Counted)
    monkeypatch.setattr(citeworth_release, "_DAYS_PER_WORKER", 2)
    monkeypatch.setattr(citeworth_release, "available_cpus", lambda: 2)
    summary = citeworth_release.build_release(home, per_field=10)
    assert summary["mode"] == "full" and pools == [2, 2]  # the keys, then the lines
    monkeypatch.undo()
    assert _cw_tree(home) == _cw_full(home, scratch, per_field=10)


def test_pes2o_release_fans_out_as_plan_tasks_commit(tmp_path):
    """The three pure steps a scheduler can spread: plan, tasks in any order (here in other
    processes, last task first), commit; the bytes of write_release."""
    import multiprocessing as mp

    from corpus.release.pes2o_release import build_task, commit_release, plan_release

    rng = random.Random(9)
    papers: list[str] = []
    for k, day in enumerate(("2021-01-01", "2021-01-02", "2021-01-03")):
        Store(tmp_path / "a").write_partition("pes2o", day, pes2o_frame(_pes2o_day(rng, day, k, papers)))
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    settings = ReleaseSettings(
        cutoff="2021-01-31", min_chunk_bytes=400, chunk_bytes=1600, sort_bucket_bytes=2000
    )
    write_release(tmp_path / "a", "v1", settings, workers=1)
    plan = plan_release(tmp_path / "b", "v1", settings)
    assert plan.mode == "full" and plan.tasks > 2
    with mp.get_context("spawn").Pool(2) as pool:
        pool.starmap(build_task, [(plan.work, t) for t in reversed(range(plan.tasks))])
    assert commit_release(plan)["mode"] == "full"
    assert _tree(release_dir(tmp_path / "b", "v1")) == _tree(release_dir(tmp_path / "a", "v1"))
    assert plan_release(tmp_path / "b", "v1", settings).mode == "unchanged"


def _small_pes2o_release(tmp_path, seed: int):
    """A seeded generator, a store and settings small enough to make several shards a day."""
    home = tmp_path / "home"
    settings = ReleaseSettings(
        cutoff="2021-01-31", max_shard_bytes=3000, min_chunk_bytes=400, chunk_bytes=1600
    )
    return random.Random(seed), home, tmp_path / "scratch", Store(home), settings


def _three_days_released(tmp_path, seed: int, n_days: int):
    """:func:`_small_pes2o_release` with ``n_days`` dates, the first three written and released."""
    rng, home, scratch, store, settings = _small_pes2o_release(tmp_path, seed)
    papers: list[str] = []
    days = [(dt.date(2021, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(n_days)]
    for k, day in enumerate(days[:3]):
        store.write_partition("pes2o", day, pes2o_frame(_pes2o_day(rng, day, k, papers)))
    for v in ("v1", "v2"):
        write_release(home, v, settings)
    return rng, home, scratch, store, settings, papers, days


def test_pes2o_state_of_format_2_is_read_and_days_after_it_equal_a_full_build(tmp_path):
    """A release whose state is the old layout (format 2: one Parquet index holding every hash,
    no patch) goes on incrementally, not from scratch; then several new days, each with papers
    of earlier days delivered again (they move to the new day's text, keeping their first day),
    give the bytes of a build from scratch after each one."""
    import polars as pl

    from corpus.release import pes2o_release

    rng, home, scratch, store, settings, papers, days = _three_days_released(tmp_path, 11, 7)
    for v in ("v1", "v2"):
        assert write_release(home, v, settings)["mode"] == "unchanged"
        root = home / ".index" / "pes2o_release" / v
        state = json.loads((root / "state.json").read_text())
        index = pes2o_release._read_index(root, state)
        assert index["doc_hash"].null_count() < index.height
        for f in root.glob("index-*"):
            f.unlink()
        for f in root.glob("patch-*"):
            f.unlink()
        index.write_parquet(root / "index-old.parquet")
        state = {k: v for k, v in state.items() if k != "patch"} | {"format": 2, "index": "index-old.parquet"}
        (root / "state.json").write_text(json.dumps(state))
        assert pl.read_parquet(root / "index-old.parquet").height == index.height
    for k, day in enumerate(days[3:], start=3):
        rows = _pes2o_day(rng, day, k, papers)
        assert any(r["id"] in papers[: -len({r["id"] for r in rows})] for r in rows)  # a paper again
        store.write_partition("pes2o", day, pes2o_frame(rows))
        modes = [write_release(home, v, settings)["mode"] for v in ("v1", "v2")]
        assert modes == ["incremental", "incremental"]
        assert {v: _tree(release_dir(home, v)) for v in ("v1", "v2")} == _full_pes2o(home, scratch, settings)
    for v in ("v1", "v2"):
        names = sorted(p.name for p in (home / ".index" / "pes2o_release" / v).iterdir())
        assert [n.split("-")[0] for n in names] == ["index", "lock", "patch", "state.json"], names


@pytest.mark.parametrize("where", ["_write_shard", "_move", "save_state"])
def test_pes2o_run_that_dies_leaves_no_mixed_state(tmp_path, monkeypatch, where):
    """A run that dies while building a shard, while moving the plan's index into the state or
    before the state is saved leaves either the old release with its state or a release whose
    state no longer matches it (then rebuilt in full): the next run equals a full build."""
    from corpus.release import pes2o_release

    rng, home, scratch, store, settings = _small_pes2o_release(tmp_path, 5)
    papers: list[str] = []
    for k, day in enumerate(("2021-01-01", "2021-01-02", "2021-01-03")):
        store.write_partition("pes2o", day, pes2o_frame(_pes2o_day(rng, day, k, papers)))
        if k == 1:
            write_release(home, "v1", settings)
    real = getattr(pes2o_release, where)

    def dies(*args, **kwargs):
        raise OSError(f"killed in {where}")

    monkeypatch.setattr(pes2o_release, where, dies)
    with pytest.raises(OSError, match="killed"):
        write_release(home, "v1", settings)
    monkeypatch.setattr(pes2o_release, where, real)
    mode = write_release(home, "v1", settings)["mode"]
    assert mode == ("incremental" if where == "_write_shard" else "full")
    assert _tree(release_dir(home, "v1")) == _full_pes2o(home, scratch, settings)["v1"]
    assert write_release(home, "v1", settings)["mode"] == "unchanged"
    leftovers = [p.name for p in release_dir(home, "v1").parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_pes2o_papers_delivered_again_with_the_same_text_link_their_shards_unread(tmp_path, monkeypatch):
    """A new arXiv version often brings the same text: the shards holding such papers are signed
    from the known hashes and the new texts' and linked, never read nor written (and no build
    process is started for it); the bytes are a full build's."""
    import polars as pl
    import pyarrow.parquet as pq

    from corpus.release import pes2o_release

    _, home, scratch, store, settings, _, days = _three_days_released(tmp_path, 5, 4)
    old = pl.read_parquet(store.partition_dir("pes2o", days[0]) / "part-0.parquet")
    later = {
        i
        for d in days[1:3]
        for i in pl.read_parquet(store.partition_dir("pes2o", d) / "part-0.parquet")["id"]
    }
    same = sorted(set(old["id"]) - later)[:4]  # their latest text is day 0's
    assert len(same) == 4
    again = old.filter(pl.col("id").is_in(same)).with_columns(
        pl.lit(f"{days[3]}T00:00:00.000Z").alias("added")
    )
    store.write_partition("pes2o", days[3], again)

    def no_reading(*args, **kwargs):
        raise AssertionError("a shard of the current release was read")

    monkeypatch.setattr(pq, "ParquetFile", no_reading)
    monkeypatch.setattr(pes2o_release, "auto_workers", lambda *a: pytest.fail("build processes planned"))
    for v in ("v1", "v2"):
        summary = write_release(home, v, settings)
        assert (summary["mode"], summary["shards_written"], summary["days_changed"]) == ("incremental", 0, 1)
    monkeypatch.undo()
    assert {v: _tree(release_dir(home, v)) for v in ("v1", "v2")} == _full_pes2o(home, scratch, settings)


def test_pes2o_shard_rewritten_for_a_revision_compresses_only_its_changed_members(tmp_path, monkeypatch):
    """A new day revising papers of old shards rewrites those shards, but gzips only the members
    (corpus.release.pes2o_shard) whose lines changed: the others' bytes are copied from the
    current shard. Every file reads as plain gzip, and the bytes are a full build's."""
    import gzip

    from corpus.release import pes2o_shard

    monkeypatch.setattr(pes2o_shard, "MEMBER_BYTES", 400)  # a few documents a member
    rng, home, store = random.Random(7), tmp_path / "home", Store(tmp_path / "home")
    settings = ReleaseSettings(cutoff="2021-01-31", min_chunk_bytes=4000, chunk_bytes=16000)
    papers: list[str] = []
    days = [f"2021-01-{d:02d}" for d in range(1, 9)]
    for k, day in enumerate(days[:-1]):
        store.write_partition("pes2o", day, pes2o_frame(_pes2o_day(rng, day, k, papers)))
    write_release(home, "v1", settings)
    before = _tree(release_dir(home, "v1"))
    store.write_partition("pes2o", days[-1], pes2o_frame(_pes2o_day(rng, days[-1], 7, papers)))
    compressed, encoded = [], []
    real, real_line = pes2o_shard.gzip_member, pes2o_shard._line
    monkeypatch.setattr(pes2o_shard, "gzip_member", lambda raw, *a: compressed.append(raw) or real(raw, *a))
    monkeypatch.setattr(pes2o_shard, "_line", lambda doc: encoded.append(doc["id"]) or real_line(doc))
    monkeypatch.setattr(pes2o_shard.zlib, "decompressobj", lambda *a: pytest.fail("a member was inflated"))
    summary = write_release(home, "v1", settings)
    monkeypatch.undo()
    assert summary["mode"] == "incremental" and summary["shards_written"] > 0
    root = release_dir(home, "v1")
    written = [p for p, h in _tree(root).items() if p.endswith(".jsonl.gz") and before.get(p) != h]
    members = {p: pes2o_shard.members_of(root / p) for p in written}
    assert sum(len(m) for m in members.values()) > 2 * len(written)  # several members a shard
    assert 0 < len(compressed) < sum(len(m) for m in members.values()) / 2  # most were copied
    in_written = sum(len(gzip.decompress((root / p).read_bytes()).splitlines()) for p in written)
    assert 0 < len(encoded) < in_written / 2  # only the changed members' lines were encoded
    assert len(encoded) == sum(raw.count(b"\n") for raw in compressed)
    for p in written:  # one gzip stream to any reader: the JSON lines, in order
        lines = gzip.decompress((root / p).read_bytes()).decode("utf-8").splitlines()
        assert lines and all(json.loads(line)["version"] == "v1" for line in lines)
    monkeypatch.setattr(pes2o_shard, "MEMBER_BYTES", 400)
    scratch = tmp_path / "full"
    shutil.copytree(home / "pes2o", scratch / "pes2o")
    assert write_release(scratch, "v1", settings)["mode"] == "full"
    assert _tree(root) == _tree(release_dir(scratch, "v1"))
