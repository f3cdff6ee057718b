"""corpus.ingest.kaggle and corpus.ingest.abs_files: the two bootstrap readers agree with each other and fail per record."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest

from corpus.ingest.abs_files import AbsParseError, iter_abs_files, read_abs, version_date
from corpus.ingest.kaggle import KaggleRecordError, iter_kaggle_snapshot, record_from_kaggle
from corpus.ingest.records import ArxivRecord, FailedRecord
from corpus.sample.landing_zone import abs_text, iter_sample_records, kaggle_line

# Real differences between the two real sources (the .abs copies are older than the snapshot):
LATER_VERSIONS_IN_KAGGLE = {"0704.0033": 2, "0704.0038": 2, "0704.0189": 3}
AUTHORS_CHANGED_LATER = {"0704.0189"}  # v3 re-wrote "Jean-Camille Birget" as "J. C. Birget"


@pytest.fixture(scope="module")
def kaggle(shared_data) -> dict[str, ArxivRecord]:
    items = list(
        iter_kaggle_snapshot(shared_data / "arxiv_metadata_snapshot" / "arxiv-metadata-oai-snapshot.json")
    )
    assert all(isinstance(r, ArxivRecord) for r in items)
    return {r.id: r for r in items}


@pytest.fixture(scope="module")
def abs_records(shared_data) -> dict[str, ArxivRecord]:
    items = list(iter_abs_files(shared_data / "arxiv_abs"))
    assert all(isinstance(r, ArxivRecord) for r in items)
    return {r.id: r for r in items}


def test_same_200_records_through_both_readers(kaggle, abs_records) -> None:
    assert len(kaggle) == len(abs_records) == 200
    assert sorted(kaggle) == sorted(abs_records) == [f"0704.{i:04d}" for i in range(1, 201)]
    for i, k in kaggle.items():
        a = abs_records[i]
        assert (k.source_format, a.source_format) == ("kaggle", "abs")
        assert k.title == a.title and k.title
        assert k.categories == a.categories and k.categories
        assert k.created == a.created
        kv = [(v.version, v.date) for v in k.versions]
        av = [(v.version, v.date) for v in a.versions]
        if i in LATER_VERSIONS_IN_KAGGLE:
            assert kv[: len(av)] == av and len(kv) == LATER_VERSIONS_IN_KAGGLE[i]
        else:
            assert kv == av and k.version == a.version and k.updated == a.updated
        if i in AUTHORS_CHANGED_LATER:
            assert k.authors_raw != a.authors_raw
        else:
            assert k.authors_raw == a.authors_raw
            assert k.authors == a.authors and k.authors
            assert k.abstract == a.abstract


def test_known_values(kaggle, abs_records) -> None:
    k, a = kaggle["0704.0001"], abs_records["0704.0001"]
    assert k.title == "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    assert [n.keyname for n in k.authors] == ["Balázs", "Berger", "Nadolsky", "Yuan"]
    assert k.created == dt.date(2007, 4, 2) and k.updated == dt.date(2007, 7, 24) and k.version == 2
    assert k.datestamp == dt.date(2008, 11, 26)  # Kaggle's update_date
    assert a.datestamp is None
    assert k.doi == a.doi == "10.1103/PhysRevD.76.013009"
    assert k.report_no == a.report_no == "ANL-HEP-PR-07-12"
    assert k.abstract.startswith("A fully differential calculation") and "\n" not in k.abstract
    assert a.submitter == k.submitter == "Pavel Nadolsky"
    assert [(v.size, v.source_type) for v in a.versions] == [("443kb", ""), ("370kb", "")]
    b = abs_records["0704.0002"]
    assert b.msc_class == "05C85; 05C70; 68R10; 05B35"
    assert b.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    assert b.versions[0].source_type == "D"
    assert abs_records["0704.0020"].doi == "10.1103/PhysRevD.76.052005"  # "doi:" prefix in the file removed
    one_version = [r for r in kaggle.values() if r.version == 1]
    assert one_version and all(r.updated is None for r in one_version)


def test_older_kaggle_layout(shared_data) -> None:
    """kermitt2's copy: categories as a list, versions as labels + versions_dates, no license/update_date."""
    items = list(
        iter_kaggle_snapshot(
            shared_data / "arxiv_metadata_snapshot" / "kermitt2_arxiv_harvester" / "test_metadata_file.json"
        )
    )
    assert [r.id for r in items] == [
        "0704.0001",
        "0704.0002",
        "0704.0003",
        "quant-ph/0602109",
        "math/9201201",
        "0801.0495",
    ]
    by = {r.id: r for r in items}
    assert by["0704.0002"].categories == ["math.CO", "cs.CG"]
    assert by["0704.0003"].version == 3 and by["0704.0003"].updated == dt.date(2008, 1, 13)
    assert by["math/9201201"].created == dt.date(1992, 1, 6) and by["math/9201201"].updated is None
    assert by["math/9201201"].submitter == "" and by["math/9201201"].categories == ["math.CV"]
    assert [a.forenames for a in by["math/9201201"].authors] == ["E. M."]
    assert all(r.datestamp is None and r.license == "" for r in items)


def test_both_layouts_give_the_same_record(shared_data) -> None:
    base = shared_data / "arxiv_metadata_snapshot"
    new = {r.id: r for r in iter_kaggle_snapshot(base / "arxiv-metadata-oai-snapshot.json")}
    old = {
        r.id: r for r in iter_kaggle_snapshot(base / "kermitt2_arxiv_harvester" / "test_metadata_file.json")
    }
    for i in ("0704.0001", "0704.0002", "0704.0003"):
        a, b = new[i].model_dump(), old[i].model_dump()
        for field in ("datestamp", "license"):  # only the current layout has them
            a.pop(field), b.pop(field)
        assert a == b


def test_bad_kaggle_lines_fail_one_by_one(tmp_path: Path, shared_data) -> None:
    good = (
        (shared_data / "arxiv_metadata_snapshot" / "arxiv-metadata-oai-snapshot.json")
        .read_text()
        .splitlines()
    )
    bad = [
        '{"id": "0704.0001", "title": "trunc',  # invalid JSON
        "[1, 2]",  # not an object
        '{"title": "no id"}',
        '{"id": "0713.0001", "title": "bad month"}',
        '{"id": "0704.0009", "categories": 5}',
        '{"id": "0704.0010", "versions": "v1"}',
        '{"id": "0704.0011", "versions": [{"version": "vX", "created": ""}]}',
        '{"id": "0704.0012", "title": ["not", "a string"]}',
    ]
    path = tmp_path / "snap.json"
    path.write_text("\n".join([good[0], *bad, "", good[1]]) + "\n")
    items = list(iter_kaggle_snapshot(path))
    assert [type(x).__name__ for x in items] == ["ArxivRecord"] + ["FailedRecord"] * len(bad) + [
        "ArxivRecord"
    ]
    fails = [x for x in items if isinstance(x, FailedRecord)]
    assert [f.position for f in fails] == list(range(1, 9))
    assert all(f.source == str(path) for f in fails)
    reasons = [f.reason for f in fails]
    assert reasons[0].startswith("invalid JSON")
    assert "expected an object" in reasons[1]
    assert "no 'id'" in reasons[2]
    assert "0713.0001" in reasons[3] and fails[3].identifier == "0713.0001"
    assert "categories" in reasons[4]
    assert "versions" in reasons[5]
    assert "vX" in reasons[6]
    assert "title" in reasons[7]
    with pytest.raises(KaggleRecordError):
        record_from_kaggle({"id": "nonsense"})


def test_gzipped_snapshot(tmp_path: Path, shared_data) -> None:
    src = shared_data / "arxiv_metadata_snapshot" / "arxiv-metadata-oai-snapshot.json"
    gz = tmp_path / "snap.json.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    assert [r.id for r in iter_kaggle_snapshot(gz)] == [r.id for r in iter_kaggle_snapshot(src)]


OLD_ABS = r"""------------------------------------------------------------------------------
\\
Paper: hep-th/9709177
From: selipsky@jdub.wustl.edu (Stephen B. Selipsky)
Date: Wed, 24 Sep 1997 23:18:32 GMT   (31kb)
Date (revised): Mon, 10 Nov 1997 17:24:38 GMT

Title: Analyzing Chiral Symmetry Breaking in Supersymmetric Gauge
  Theories
Authors: Thomas Appelquist (1), Andreas Nyffeler (1 and 2) and Stephen B.
  Selipsky (1) ((1) Yale University, (2) DESY Zeuthen)
Comments: 12 pages
Report-no: YCTP-P20-97
\\
  We study chiral symmetry breaking.
\\
"""

KDD_ABS = r"""Paper: hep-th/9201002
From: TARLINI%FI.INFN.IT@ICINECA.CINECA.IT
Date: Thu, 2 JAN 92 12:17 N   (6kb)

Title: Inomogeneous Quantum Groups as Symmetries of Phonons
Authors: F.Bonechi, E.Celeghini, R.Giachetti, E.Sorace and M.Tarlini
Comments: 5 pags. 0 figs
Journal-ref: Phys.Rev.Lett. 68 (1992) 3718-3720
\\
  The quasi-symmetries of a one-dimensional lattice are studied.
\\
"""


def test_old_abs_formats() -> None:
    r = read_abs(OLD_ABS)
    assert r.id == "hep-th/9709177" and r.source_format == "abs"
    assert r.submitter == "Stephen B. Selipsky"
    assert [v.version for v in r.versions] == [1, 2] and r.version == 2
    assert r.created == dt.date(1997, 9, 24) and r.updated == dt.date(1997, 11, 10)
    assert r.title == "Analyzing Chiral Symmetry Breaking in Supersymmetric Gauge Theories"
    assert [(a.keyname, a.affiliations) for a in r.authors] == [
        ("Appelquist", ["Yale University"]),
        ("Nyffeler", ["Yale University", "DESY Zeuthen"]),
        ("Selipsky", ["Yale University"]),
    ]
    assert r.categories == ["hep-th"]  # no Categories line: the archive
    assert r.report_no == "YCTP-P20-97" and r.abstract == "We study chiral symmetry breaking."
    k = read_abs(KDD_ABS.encode("latin-1"))
    assert k.id == "hep-th/9201002" and k.created == dt.date(1992, 1, 2)
    assert [a.keyname for a in k.authors] == ["Bonechi", "Celeghini", "Giachetti", "Sorace", "Tarlini"]
    assert k.journal_ref == "Phys.Rev.Lett. 68 (1992) 3718-3720"


def test_read_abs_from_path_text_and_bytes(shared_data) -> None:
    path = shared_data / "arxiv_abs" / "arxiv_browse" / "ftp" / "arxiv" / "papers" / "0704" / "0704.0155.abs"
    a, b, c = read_abs(path), read_abs(str(path)), read_abs(path.read_bytes())
    assert a == b == c
    assert a.authors[0].keyname == "van der Tak" and a.authors[0].affiliations == ["SRON Groningen"]
    assert a.authors[3].affiliations == ["Leiden"]  # "David Jansen and Ewine van Dishoeck (Leiden)"


def test_id_from_file_name_when_missing(tmp_path: Path) -> None:
    d = tmp_path / "ftp" / "hep-th" / "papers" / "9201"
    d.mkdir(parents=True)
    (d / "9201002.abs").write_text(KDD_ABS.replace("Paper: hep-th/9201002\n", ""))
    (records,) = list(iter_abs_files(tmp_path))
    assert records.id == "hep-th/9201002"


def test_bad_abs_files_fail_one_by_one(tmp_path: Path, shared_data) -> None:
    src = shared_data / "arxiv_abs" / "arxiv_browse" / "ftp" / "arxiv" / "papers" / "0704"
    for name in ("0704.0001.abs", "0704.0002.abs"):
        (tmp_path / name).write_bytes((src / name).read_bytes())
    (tmp_path / "0704.0003.abs").write_text("arXiv:0704.0003\nTitle: no separator, no abstract\n")
    (tmp_path / "noid.abs").write_text("\\\\\nTitle: no id anywhere\n\\\\\nabstract\n\\\\\n")
    (tmp_path / "x" / "0713.0005.abs").parent.mkdir()
    (tmp_path / "x" / "0713.0005.abs").write_text("\\\\\narXiv:0713.0005\nTitle: t\n\\\\\na\n\\\\\n")
    (tmp_path / "0704.0006.abs").write_text(
        "\\\\\narXiv:0704.0006\nthis is not a header line\n\\\\\na\n\\\\\n"
    )
    items = list(iter_abs_files(tmp_path))
    assert len(items) == 6
    ok = [r.id for r in items if isinstance(r, ArxivRecord)]
    assert ok == ["0704.0001", "0704.0002"]
    fails = {Path(f.source).name: f.reason for f in items if isinstance(f, FailedRecord)}
    assert "no '\\\\' line after the header" in fails["0704.0003.abs"]
    assert "no id in the file name" in fails["noid.abs"]
    assert "0713.0005" in fails["0713.0005.abs"]
    assert "unexpected header line" in fails["0704.0006.abs"]
    with pytest.raises(AbsParseError, match="no '"):
        read_abs("arXiv:0704.0003\nTitle: x\n")
    with pytest.raises(FileNotFoundError):
        list(iter_abs_files(tmp_path / "missing"))


def test_version_date() -> None:
    assert version_date("Mon, 2 Apr 2007 19:18:42 GMT") == dt.date(2007, 4, 2)
    assert version_date("Thu, 2 JAN 92 12:17 N") == dt.date(1992, 1, 2)
    assert version_date("") is None and version_date("garbage") is None


def test_generated_records_round_trip_through_both_readers() -> None:
    """Synthetic records (particles, suffixes, numbered affiliations, collaborations, old ids)
    written as Kaggle lines and .abs files read back to the same metadata."""
    n = 0
    for rec in iter_sample_records(600, days=6, start="2007-03-29", seed=11):
        k = record_from_kaggle(json.loads(kaggle_line(rec)))
        a = read_abs(abs_text(rec))
        for got in (k, a):
            assert got.id == rec.id
            assert got.title == rec.title and got.abstract == rec.abstract
            assert got.authors == rec.authors, rec.authors_raw
            assert got.categories == rec.categories
            assert [(v.version, v.date) for v in got.versions] == [(v.version, v.date) for v in rec.versions]
            assert (got.created, got.updated) == (rec.created, rec.updated)
            assert (got.doi, got.journal_ref, got.comments) == (rec.doi, rec.journal_ref, rec.comments)
        n += 1
    assert n == 600
