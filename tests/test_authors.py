"""corpus.ingest.authors: arXiv author strings -> (keyname, forenames, suffix, affiliations)."""

from __future__ import annotations

import json
import time

import pytest

from corpus.ingest.authors import parse_author_name, parse_author_string, parse_dc_creator, tex_to_unicode
from corpus.ingest.records import AuthorName, normalize_ws


def names(raw: str) -> list[tuple[str, str, str]]:
    return [(a.keyname, a.forenames, a.suffix) for a in parse_author_string(raw)]


def affs(raw: str) -> list[list[str]]:
    return [a.affiliations for a in parse_author_string(raw)]


@pytest.fixture(scope="module")
def kaggle_lines(shared_data) -> list[dict]:
    path = shared_data / "arxiv_metadata_snapshot" / "arxiv-metadata-oai-snapshot.json"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_agrees_with_arxiv_authors_parsed_on_all_200_kaggle_lines(kaggle_lines) -> None:
    """arXiv's own split (Kaggle ``authors_parsed``): keyname/forenames/suffix agree on every line."""
    assert len(kaggle_lines) == 200
    disagree = []
    for line in kaggle_lines:
        expected = [tuple(normalize_ws(x) for x in p[:3]) for p in line["authors_parsed"]]
        if names(line["authors"]) != expected:
            disagree.append(line["id"])
    assert disagree == []


def test_affiliations_agree_with_arxiv_except_where_arxiv_loses_them(kaggle_lines) -> None:
    """Where arXiv found affiliations we find the same ones, except the numbered list that its
    single-line regex could not resolve (0704.0025 got the raw "1 and 2")."""
    with_affs = [ln for ln in kaggle_lines if any(len(p) > 3 for p in ln["authors_parsed"])]
    assert len(with_affs) == 18
    differ = []
    for line in with_affs:
        expected = [[normalize_ws(x) for x in p[3:]] for p in line["authors_parsed"]]
        if affs(line["authors"]) != expected:
            differ.append(line["id"])
    assert differ == ["0704.0025"]
    by_id = {ln["id"]: ln for ln in kaggle_lines}
    assert affs(by_id["0704.0025"]["authors"]) == [
        ["CREST, Japan Science and Technology Agency", "Russian Research Centre ``Kurchatov Institute''"],
        ["CREST, Japan Science and Technology Agency", "The University of Tokyo"],
    ]


def test_numbered_affiliations_wrapped_over_lines(kaggle_lines) -> None:
    """0704.0128: 15 authors, five numbered affiliations hard-wrapped over several lines."""
    line = next(ln for ln in kaggle_lines if ln["id"] == "0704.0128")
    parsed = parse_author_string(line["authors"])
    assert len(parsed) == 15
    assert parsed[0] == AuthorName(
        keyname="Evans", forenames="P. A.", affiliations=["University of Leicester"]
    )
    assert parsed[7].affiliations == ["Pennsylvania State University"]  # Vetere (2)
    assert parsed[-1].keyname == "Romano"
    assert parsed[-1].affiliations == [
        "INAF-Osservatorio Astronomico di Brera",
        "Universita' degli Studi di Milano",
    ]


def test_bare_numbered_affiliations(kaggle_lines) -> None:
    """0704.0139 writes its list as "(1 Dip. Astro., Bologna; 2 INAF--Oss. Astro., Bologna, 3 ...)"."""
    line = next(ln for ln in kaggle_lines if ln["id"] == "0704.0139")
    parsed = parse_author_string(line["authors"])
    assert [a.keyname for a in parsed][:3] == ["Lanzoni", "Dalessandro", "Ferraro"]
    assert parsed[0].affiliations == ["Dip. Astro., Bologna", "INAF--Oss. Astro., Bologna"]
    assert parsed[-1].affiliations == ["Astronomy Department, University of Virginia"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Ileana Streinu and Louis Theran", [("Streinu", "Ileana", ""), ("Theran", "Louis", "")]),
        (
            "A.A. Serga, M. Kostylev, and B. Hillebrands",
            [("Serga", "A. A.", ""), ("Kostylev", "M.", ""), ("Hillebrands", "B.", "")],
        ),
        ("C.-P. Yuan & J.P.Hague", [("Yuan", "C. -P.", ""), ("Hague", "J. P.", "")]),
        ("N.d'Ambrumenil", [("d'Ambrumenil", "N.", "")]),
        ("Sudha", [("Sudha", "", "")]),
        ("M. Lopez de Haro, S. El Shawish", [("de Haro", "M. Lopez", ""), ("Shawish", "S. El", "")]),
        ("Floris van der Tak", [("van der Tak", "Floris", "")]),
        ("Jose de los Santos, A. Das Sarma", [("de los Santos", "Jose", ""), ("Das Sarma", "A.", "")]),
        (
            "Ludwig von Neumann, C. De Napoli, M. A. ter Haar",
            [("von Neumann", "Ludwig", ""), ("De Napoli", "C.", ""), ("ter Haar", "M. A.", "")],
        ),
        ("Neal J. Evans II and Philip C. Myers", [("Evans", "Neal J.", "II"), ("Myers", "Philip C.", "")]),
        (
            "John Smith, Jr., Jan van Dam Jr. and A. B. Cole III",
            [("Smith", "John", "Jr."), ("van Dam", "Jan", "Jr."), ("Cole", "A. B.", "III")],
        ),
        (
            "The BABAR Collaboration, B. Aubert, et al",
            [("The BABAR Collaboration", "", ""), ("Aubert", "B.", "")],
        ),
        (
            "ATLAS Collaboration: G. Aad, B. Abbott",
            [("ATLAS Collaboration", "", ""), ("Aad", "G.", ""), ("Abbott", "B.", "")],
        ),
        ("J. Doe, for the CMS Collaboration", [("Doe", "J.", ""), ("the CMS Collaboration", "", "")]),
        (
            "K. Abe et al. and the Super-Kamiokande Collaboration",
            [("Abe", "K.", ""), ("the Super-Kamiokande Collaboration", "", "")],
        ),
        (
            "A. Smith on behalf of the LIGO Scientific Collaboration",
            [("Smith", "A.", ""), ("the LIGO Scientific Collaboration", "", "")],
        ),
        ("Heavy Flavor Averaging Group", [("Heavy Flavor Averaging Group", "", "")]),
        ("Working Group for Dark Matter", [("Working Group for Dark Matter", "", "")]),
        ("A. Smith and others", [("Smith", "A.", "")]),
        ("  Maria\n  Curie ,  Pierre   Curie  ", [("Curie", "Maria", ""), ("Curie", "Pierre", "")]),
    ],
)
def test_name_splitting(raw: str, expected: list[tuple[str, str, str]]) -> None:
    assert names(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("C. Bal\\'azs", "Balázs"),
        ("Mikkel {\\O}bro", "Øbro"),
        ("Rastislav \\v{S}r\\'amek", "Šrámek"),
        ('Franz G\\"ahler', "Gähler"),
        ('Thomas M\\"{u}ller', "Müller"),
        ("R. Tom\\`as", "Tomàs"),
        ("A. Fran\\c{c}ois", "François"),
        ("J. Kowalczyk-\\L{}ukasz", "Kowalczyk-Łukasz"),
        ("P. Erd\\H{o}s", "Erdős"),
        ("K. Gro\\ss e", "Große"),
        ("L. Nu\\~nez", "Nuñez"),
        ("B. S{\\o}rensen", "Sørensen"),
        ("E. Ath\\'{\\i}as", "Athías"),
    ],
)
def test_tex_accents_decoded(raw: str, expected: str) -> None:
    assert parse_author_string(raw)[0].keyname == expected


def test_tex_to_unicode_leaves_plain_text_alone() -> None:
    assert tex_to_unicode("Plain Name") == "Plain Name"
    assert tex_to_unicode("R\\&D") == "R&D"
    assert tex_to_unicode('Universit\\"at') == "Universität"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("V. M. Biryukov (Serpukhov, IHEP)", [["Serpukhov, IHEP"]]),
        ("A. B (X), C. D (Y)", [["X"], ["Y"]]),
        # arXiv's convention: an affiliation covers the names before it that have none
        ("A. B, C. D (Leiden), E. F (Oxford)", [["Leiden"], ["Leiden"], ["Oxford"]]),
        ("A. B (X (IOP), Beijing), C. D", [["X (IOP), Beijing"], []]),  # nested parentheses stay
        ("Arthur Jaffe (1) and Gordon Ritter (1) ((1) Harvard University)", [["Harvard University"]] * 2),
        ("A. B (1,2), C. D (2) ((1) MIT, (2) CERN)", [["MIT", "CERN"], ["CERN"]]),
        ("A. B (1 & 2), C. D (3) ((1) MIT, (2) CERN)", [["MIT", "CERN"], []]),  # (3) undefined
        ("A. B (MIT) (Harvard)", [["MIT", "Harvard"]]),
        ("ATLAS Collaboration, A. B (CERN)", [[], ["CERN"]]),  # never back into a collaboration
        (
            'Peter Brommer and Franz G\\"ahler (Institut f\\"ur Physik,\n  Universit\\"at Stuttgart)',
            [["Institut für Physik, Universität Stuttgart"]] * 2,
        ),
    ],
)
def test_affiliations(raw: str, expected: list[list[str]]) -> None:
    assert affs(raw) == expected


@pytest.mark.parametrize("raw", ["", "   ", ",", " and ", "()", "et al."])
def test_empty_or_junk_gives_no_names(raw: str) -> None:
    assert parse_author_string(raw) == []


@pytest.mark.parametrize(
    "raw",
    ["A. Smith (MIT", "A. Smith) B. Jones", "((((", "A, , , B", "Smith, Jr.", "\\'", "{\\O", "A (1) ((1)"],
)
def test_malformed_strings_do_not_crash(raw: str) -> None:
    parsed = parse_author_string(raw)
    assert all(isinstance(a, AuthorName) and a.keyname for a in parsed)


def test_parse_author_name_and_dc_creator() -> None:
    assert parse_author_name("Jan van Dam Jr.") == AuthorName(
        keyname="van Dam", forenames="Jan", suffix="Jr."
    )
    assert parse_dc_creator("Nadolsky, P. M.") == AuthorName(keyname="Nadolsky", forenames="P. M.")
    assert parse_dc_creator("Evans, Neal J., II") == AuthorName(
        keyname="Evans", forenames="Neal J.", suffix="II"
    )
    assert parse_dc_creator("Dantan, Aur\\'elien") == AuthorName(keyname="Dantan", forenames="Aurélien")
    assert parse_dc_creator("LHCb collaboration") == AuthorName(keyname="LHCb collaboration")
    assert parse_dc_creator("Heavy Flavor Averaging Group").keyname == "Heavy Flavor Averaging Group"
    assert parse_dc_creator("team, the CALIFA") == AuthorName(keyname="the CALIFA team")


def test_dc_creators_from_real_oai_dc_reply(shared_data) -> None:
    """All 4630 creators of the real oai_dc reply (2014-12-24) give a non-empty keyname."""
    import re

    xml = (shared_data / "oai_pmh" / "cos_scrapi" / "arxiv_oai_dc_ListRecords_2014-12-24.xml").read_text()
    creators = re.findall(r"<dc:creator>([^<]*)</dc:creator>", xml)
    assert len(creators) == 4630
    parsed = [parse_dc_creator(c) for c in creators]
    assert all(p.keyname for p in parsed)
    collaborations = [p.keyname for p in parsed if p.forenames == ""]
    assert len(collaborations) == 7
    assert "the CALIFA team" in collaborations  # arXiv inverted it to "team, the CALIFA"
    assert "EUROfusion MST1 Collaborations" in collaborations


def test_speed(kaggle_lines) -> None:
    """Well above the OAI page-parse target (20k records/s) is not needed, but it must not be slow."""
    raws = [ln["authors"] for ln in kaggle_lines] * 10
    t = time.perf_counter()
    for raw in raws:
        parse_author_string(raw)
    per_s = len(raws) / (time.perf_counter() - t)
    assert per_s > 2000, per_s
