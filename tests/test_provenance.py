"""Every daily partition records what made it, and the re-derive plan follows from the records:
stages built by older code, then downstream only where an input's content changed."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from corpus import provenance
from corpus.provenance import StalePartition, next_wave, stale_partitions, upstream_closure
from corpus.store import PROVENANCE, Store, partition_fingerprint
from corpus.versions import FIRST_RECORDED, code_version

DAY = "2021-05-04"


def _write(store: Store, asset: str, values: list[int], day: str = DAY, reads: tuple[str, ...] = ()) -> None:
    """A stage: read ``reads`` of the day, write ``asset``."""
    for name in reads:
        store.read_partition(name, day)
    store.write_partition(asset, day, pl.DataFrame({"x": values}))


def test_a_written_partition_records_its_fingerprint_version_and_what_it_read(tmp_path: Path):
    store = Store(tmp_path)
    _write(Store(tmp_path), "arxiv_sources", [1, 2])
    stage = Store(tmp_path)
    stage.has_partition("pdf_parses", DAY)  # looked for, absent: an input too
    _write(stage, "latex_parses", [3], reads=("arxiv_sources",))
    record = store.provenance("latex_parses", DAY)
    assert record.code_version == code_version("latex_parses")
    assert record.fingerprint == partition_fingerprint(store.partition_dir("latex_parses", DAY))
    assert record.inputs == {"arxiv_sources": store.fingerprint("arxiv_sources", DAY), "pdf_parses": None}
    assert store.provenance("arxiv_sources", DAY).inputs == {}


def test_the_same_rows_give_the_same_fingerprint_and_other_rows_another(tmp_path: Path):
    store = Store(tmp_path)
    _write(store, "papers", [1, 2])
    first = store.fingerprint("papers", DAY)
    _write(store, "papers", [1, 2])
    assert store.fingerprint("papers", DAY) == first
    _write(store, "papers", [1, 3])
    assert store.fingerprint("papers", DAY) != first


def test_a_partition_replaced_while_read_is_recorded_as_unknown(tmp_path: Path, monkeypatch):
    store = Store(tmp_path)
    _write(store, "papers", [1])
    stage = Store(tmp_path)
    real = pl.read_parquet

    def read_then_replace(path, *a, **k):
        frame = real(path, *a, **k)
        _write(Store(tmp_path), "papers", [2])  # another run swaps the day in meanwhile
        return frame

    monkeypatch.setattr(pl, "read_parquet", read_then_replace)
    stage.read_partition("papers", DAY)
    monkeypatch.setattr(pl, "read_parquet", real)
    assert stage.reads[("papers", DAY)] is None  # what was read is unknown: the reader counts as stale


def test_a_partition_from_before_provenance_is_hashed_once_and_adopted(tmp_path: Path):
    store = Store(tmp_path)
    _write(store, "bib_entries", [1])
    marker = store.partition_dir("bib_entries", DAY) / f"_{PROVENANCE}"
    marker.unlink()  # as written by earlier code
    fingerprint = store.fingerprint("bib_entries", DAY)
    assert fingerprint == partition_fingerprint(marker.parent)
    adopted = store.provenance("bib_entries", DAY)
    assert adopted.code_version == FIRST_RECORDED["bib_entries"] and adopted.inputs == {}


def test_adopting_never_overwrites_a_partition_swapped_in_meanwhile(tmp_path: Path):
    store = Store(tmp_path)
    _write(store, "papers", [1])
    folder = store.partition_dir("papers", DAY)
    real = json.loads((folder / f"_{PROVENANCE}").read_text())
    from corpus.store import Provenance

    store._adopt(folder, Provenance(fingerprint="0" * 32))
    assert json.loads((folder / f"_{PROVENANCE}").read_text()) == real
    assert sorted(p.name for p in folder.iterdir()) == ["_provenance", "part-0.parquet"]  # no temp file left


def test_a_legacy_latex_partition_is_judged_by_the_version_its_rows_name(tmp_path: Path):
    store = Store(tmp_path)
    frame = pl.DataFrame({"id": ["a", "b"], "parser_version": ["corpus.parse.latex/1", None]})
    store.write_partition("latex_parses", DAY, frame)
    (store.partition_dir("latex_parses", DAY) / f"_{PROVENANCE}").unlink()
    assert provenance.built_version(store, "latex_parses", DAY) == "corpus.parse.latex/1"


def test_a_read_only_store_still_answers_without_adopting(tmp_path: Path, monkeypatch):
    store = Store(tmp_path)
    _write(store, "papers", [1])
    folder = store.partition_dir("papers", DAY)
    (folder / f"_{PROVENANCE}").unlink()

    def refuse(*_args, **_kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(Path, "write_text", refuse)  # as on a read-only mount (the suite runs as root)
    assert store.fingerprint("papers", DAY) == partition_fingerprint(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet"]


def _chain(tmp_path: Path) -> Store:
    """arxiv_sources -> latex_parses -> papers -> bib_entries on two days."""
    for day in ("2021-05-04", "2021-05-05"):
        _write(Store(tmp_path), "arxiv_sources", [1], day)
        _write(Store(tmp_path), "latex_parses", [2], day, ("arxiv_sources",))
        _write(Store(tmp_path), "papers", [3], day, ("latex_parses",))
        _write(Store(tmp_path), "bib_entries", [4], day, ("papers", "latex_parses"))
    return Store(tmp_path)


VERSIONS = {a: code_version(a) for a in ("arxiv_sources", "latex_parses", "papers", "bib_entries")}
DEPS = {
    "latex_parses": ["arxiv_sources"],
    "papers": ["latex_parses"],
    "bib_entries": ["papers", "latex_parses"],
}


def test_nothing_is_stale_after_a_build(tmp_path: Path):
    assert stale_partitions(_chain(tmp_path), VERSIONS) == []


def test_a_version_bump_names_every_day_of_that_stage_and_nothing_else(tmp_path: Path):
    store = _chain(tmp_path)
    bumped = {**VERSIONS, "latex_parses": "corpus.parse.latex/99"}
    stale = stale_partitions(store, bumped)
    assert {(s.asset, s.day, s.reason) for s in stale} == {
        ("latex_parses", "2021-05-04", "code"),
        ("latex_parses", "2021-05-05", "code"),
    }
    assert stale[0].detail == f"{VERSIONS['latex_parses']} -> corpus.parse.latex/99"


def test_a_changed_upstream_names_its_readers_on_that_day_only(tmp_path: Path):
    store = _chain(tmp_path)
    _write(Store(tmp_path), "latex_parses", [2, 2], "2021-05-05", ("arxiv_sources",))  # other rows
    stale = stale_partitions(store, VERSIONS)
    assert [(s.asset, s.day, s.detail) for s in stale] == [
        ("bib_entries", "2021-05-05", "latex_parses changed"),
        ("papers", "2021-05-05", "latex_parses changed"),
    ]
    _write(Store(tmp_path), "latex_parses", [2], "2021-05-05", ("arxiv_sources",))  # back to the same rows
    assert stale_partitions(store, VERSIONS) == []


def test_a_round_waits_for_what_the_stale_upstream_may_change():
    upstream = upstream_closure(DEPS)
    assert upstream["bib_entries"] == {"papers", "latex_parses", "arxiv_sources"}
    stale = [
        StalePartition("bib_entries", "d1", "inputs", "latex_parses changed"),
        StalePartition("papers", "d1", "inputs", "latex_parses changed"),
        StalePartition("bib_entries", "d2", "inputs", "papers changed"),
        StalePartition("latex_parses", "d3", "code", "a -> b"),
        StalePartition("papers", "d3", "code", "a -> b"),
        StalePartition("bib_entries", "d3", "inputs", "papers changed"),
    ]
    wave = next_wave(stale, upstream, {"papers": frozenset({"papers", "fulltext_ids"})})
    assert wave == {
        frozenset({"papers", "fulltext_ids"}): ["d1"],  # bib_entries d1 waits for papers d1
        frozenset({"bib_entries"}): ["d2"],
        frozenset({"latex_parses", "papers", "fulltext_ids"}): ["d3"],  # code-stale: both, in order
    }


def test_days_are_described_as_ranges():
    days = ["2021-05-04", "2021-05-05", "2021-05-06", "2021-06-01"]
    assert provenance.describe_days(days) == "2021-05-04..2021-05-06, 2021-06-01 (4 days)"
    assert provenance.describe_days([]) == "none"
