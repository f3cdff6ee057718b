"""corpus.ingest.arxiv_ids: every id form arXiv has used, the invalid ones, versions, file names."""

from __future__ import annotations

import json
import re

import pytest

from corpus.ingest import arxiv_ids
from corpus.ingest.arxiv_ids import ArxivId, InvalidArxivId

VALID = [
    # raw, canonical id, version, old style
    ("0704.0001", "0704.0001", None, False),
    ("0704.0001v2", "0704.0001", 2, False),
    ("arXiv:0704.0001v12", "0704.0001", 12, False),
    ("arxiv: 0704.0001", "0704.0001", None, False),
    ("oai:arXiv.org:0704.0001", "0704.0001", None, False),
    ("  1412.9999  ", "1412.9999", None, False),  # last month of 4-digit numbers
    ("1501.00001", "1501.00001", None, False),  # first month of 5-digit numbers
    ("2101.00001v2", "2101.00001", 2, False),
    ("hep-th/9901001", "hep-th/9901001", None, True),
    ("hep-th/9901001v3", "hep-th/9901001", 3, True),
    ("arXiv:hep-th/9108001", "hep-th/9108001", None, True),  # the first arXiv paper's month
    ("math.GT/0309136", "math/0309136", None, True),  # subject class is not part of the id
    ("math.GT/0309136v2", "math/0309136", 2, True),
    ("cs.AI/0101001", "cs/0101001", None, True),
    ("cond-mat/0703001", "cond-mat/0703001", None, True),  # last month of old-style ids
    ("q-bio/0309001", "q-bio/0309001", None, True),
    ("hep-th_9901001", "hep-th/9901001", None, True),  # file-name form
    ("math.GT_0309136", "math/0309136", None, True),
]

INVALID = [
    "",
    "0704.001",  # too few digits
    "0704.000001",  # too many digits
    "0713.0001",  # month 13
    "0700.0001",  # month 0
    "0703.0001",  # new-style ids start in April 2007
    "0612.1234",
    "1501.0001",  # 4-digit number after 2014
    "2101.0001",
    "0704.00001",  # 5-digit number before 2015
    "1412.12345",
    "foo-bar/9901001",  # unknown archive
    "hep-th/9913001",  # month 13
    "hep-th/990100",  # 6 digits
    "hep-th/99010011",  # 8 digits
    "HEP-TH/9901001",  # archives are lower case
    "math.GTX/0309136",  # subject classes are two letters
    "hep-th/9901001v",  # version without number
    "0704.0001 extra",
    "10.1103/PhysRevD.76.013009",  # a DOI
    "https://arxiv.org/abs/0704.0001",  # a URL is not an id (extract first)
]


@pytest.mark.parametrize(("raw", "canonical", "version", "old"), VALID)
def test_valid_forms(raw: str, canonical: str, version: int | None, old: bool) -> None:
    parsed = arxiv_ids.parse(raw)
    assert parsed == ArxivId(canonical, version, old)
    assert arxiv_ids.normalize(raw) == canonical
    assert arxiv_ids.strip_version(raw) == canonical
    assert arxiv_ids.is_valid(raw)
    assert arxiv_ids.try_normalize(raw) == canonical


@pytest.mark.parametrize("raw", INVALID)
def test_invalid_forms(raw: str) -> None:
    assert not arxiv_ids.is_valid(raw)
    assert arxiv_ids.try_normalize(raw) is None
    with pytest.raises(InvalidArxivId) as err:
        arxiv_ids.parse(raw)
    assert repr(raw) in str(err.value)  # the message names the input


def test_try_normalize_none_and_empty() -> None:
    assert arxiv_ids.try_normalize(None) is None
    assert arxiv_ids.try_normalize("") is None


@pytest.mark.parametrize(
    ("raw", "year"),
    [
        ("hep-th/9108001", 1991),
        ("hep-th/9901001", 1999),
        ("math/0309136", 2003),
        ("0704.0001", 2007),
        ("2101.00001", 2021),
    ],
)
def test_year(raw: str, year: int) -> None:
    assert arxiv_ids.parse(raw).year == year


@pytest.mark.parametrize(
    ("raw", "file_name"),
    [
        ("hep-th/9901001v2", "hep-th_9901001"),
        ("math.GT/0309136", "math_0309136"),
        ("0704.0001v3", "0704.0001"),
        ("2101.00001", "2101.00001"),
    ],
)
def test_file_name_round_trip(raw: str, file_name: str) -> None:
    assert arxiv_ids.to_file_name(raw) == file_name
    assert arxiv_ids.parse(raw).file_name == file_name
    assert "/" not in file_name
    canonical = arxiv_ids.normalize(raw)
    assert arxiv_ids.from_file_name(file_name) == canonical
    for ext in (".pdf", ".tei.xml", ".tar.gz", ".gz", ".xml", ".tar"):
        assert arxiv_ids.from_file_name(f"some/dir/{file_name}{ext}") == canonical


def test_from_file_name_rejects_non_ids() -> None:
    with pytest.raises(InvalidArxivId):
        arxiv_ids.from_file_name("README.pdf")
    with pytest.raises(InvalidArxivId):
        arxiv_ids.to_file_name("not-an-id")


def test_real_ids_from_kaggle_and_abs_tree(shared_data) -> None:
    """Every id in the real Kaggle lines (new and old style) parses, round-trips and matches its .abs file name."""
    ids = []
    for path in (
        shared_data / "arxiv_metadata_snapshot" / "arxiv-metadata-oai-snapshot.json",
        shared_data / "arxiv_metadata_snapshot" / "kermitt2_arxiv_harvester" / "test_metadata_file.json",
    ):
        ids += [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]
    assert len(ids) == 206
    assert {"quant-ph/0602109", "math/9201201", "0801.0495"} <= set(ids)
    for raw in ids:
        parsed = arxiv_ids.parse(raw)
        assert parsed.id == raw  # the snapshot stores canonical ids
        assert arxiv_ids.from_file_name(parsed.file_name + ".pdf") == raw
        assert arxiv_ids.parse(raw + "v7") == ArxivId(raw, 7, parsed.old_style)
    abs_names = sorted(p.name[: -len(".abs")] for p in (shared_data / "arxiv_abs").rglob("*.abs"))
    assert abs_names == sorted(i for i in ids[:200])


def test_real_ids_in_landing(shared_landing) -> None:
    """The landing zone's OAI identifiers and file names are all valid ids of the right style."""
    idents = []
    for page in sorted((shared_landing / "oai").glob("*.xml")):
        idents += re.findall(r"<identifier>oai:arXiv\.org:([^<]+)</identifier>", page.read_text())
    assert len(idents) == 41
    assert all(arxiv_ids.parse(i).id == i for i in idents)
    for f in list((shared_landing / "pdf").glob("*.pdf")) + list((shared_landing / "tei").glob("*.tei.xml")):
        assert arxiv_ids.from_file_name(f.name) in idents


# Validity bounds of the id forms (bugs found while writing these tests, now fixed).
@pytest.mark.parametrize("raw", ["hep-th/0704001", "hep-th/0712001"])
def test_old_style_after_march_2007_invalid(raw: str) -> None:
    assert not arxiv_ids.is_valid(raw)


def test_old_style_before_august_1991_invalid() -> None:
    assert not arxiv_ids.is_valid("hep-th/9107001")


@pytest.mark.parametrize("raw", ["0704.0000", "hep-th/9901000", "0704.0001v0"])
def test_zero_number_or_version_invalid(raw: str) -> None:
    assert not arxiv_ids.is_valid(raw)


def test_ids_from_the_future_are_invalid() -> None:
    assert not arxiv_ids.is_valid("9912.12345")  # December 2099
    assert arxiv_ids.is_valid("hep-th/9108001") and arxiv_ids.is_valid("math/0703001")


@pytest.mark.parametrize(
    "raw",
    [
        "2501.9\u0661\u0662\u0663\u0664",  # Arabic-Indic digits
        "\uff12\uff15\uff10\uff11.00001",  # fullwidth digits
        "2501.00001v\u0663",  # a non-ASCII version digit
        "hep-th/99\u096701001",  # Devanagari digit in an old-style id
    ],
)
def test_non_ascii_digits_are_invalid(raw: str) -> None:
    """Digits in ids are ASCII only (the ids_valid check relies on is_valid)."""
    assert not arxiv_ids.is_valid(raw)
    with pytest.raises(InvalidArxivId):
        arxiv_ids.parse(raw)
    assert arxiv_ids.find_arxiv_ids(f"see arXiv:{raw} for details") == []
