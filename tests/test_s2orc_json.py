"""corpus.parse.s2orc_json on the released S2ORC JSON formats, doc2json output and unarXive 2022."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from conftest import DATA

from corpus.parse.s2orc_json import S2orcFormatError, iter_unarxive, read_s2orc_record, unarxive_record
from corpus.parse.tei import parse_tei

FAMILY = DATA / "s2orc_family"
RELEASES = sorted((FAMILY / "s2orc-doc2json" / "s2orc").glob("*.json"))
DOC2JSON = sorted((DATA / "pdf_tei_pairs" / "s2orc-doc2json").glob("*.json"))
UNARXIVE = FAMILY / "unarXive" / "unarXive_data_sample.tar.gz"


def _parse_of(d: dict) -> dict:
    if "pdf_parse" in d:
        return d["pdf_parse"]
    if "grobid_parse" in d:
        return (
            d["latex_parse"]
            if d.get("latex_parse") and d["latex_parse"].get("body_text")
            else d["grobid_parse"]
        )
    return d


def _check_spans(doc) -> int:
    n = 0
    for p in doc.abstract + doc.body_text + doc.back_matter:
        for s in p.cite_spans + p.ref_spans + p.eq_spans:
            assert p.text[s.start : s.end] == s.text
            n += 1
    return n


@pytest.mark.parametrize(
    "path", RELEASES + [FAMILY / "s2orc_repo" / "example_paper.json"] + DOC2JSON, ids=lambda p: p.name
)
def test_released_formats_read_with_all_content(shared_data, path):
    raw = json.loads(path.read_text())
    doc = read_s2orc_record(raw)
    parse = _parse_of(raw)
    assert doc.source == "s2orc"
    assert doc.paper_id == str(raw["paper_id"])
    assert [p.text for p in doc.body_text] == [p["text"] for p in parse["body_text"]]
    assert set(doc.bib_entries) == set(parse["bib_entries"])
    assert set(doc.ref_entries) >= set(parse["ref_entries"])
    cites = sum(len(p["cite_spans"]) for p in parse["body_text"])
    assert sum(len(p.cite_spans) for p in doc.body_text) == cites
    assert _check_spans(doc) >= cites
    for key, b in parse["bib_entries"].items():
        assert doc.bib_entries[key].title == (b.get("title") or "")
        assert [a.last for a in doc.bib_entries[key].authors] == [a["last"] for a in b.get("authors") or []]
    meta = raw.get("metadata") or {}
    if meta.get("title") or raw.get("title"):
        assert doc.title
    if meta.get("doi"):
        assert doc.identifiers["DOI"] == [meta["doi"]]


def test_metadata_ids_links_and_doc2json_equations(shared_data):
    d = read_s2orc_record(json.loads((RELEASES[0]).read_text()))  # 20190928_10002293
    assert d.title.startswith("Antimicrobial Photodynamic Therapy")
    assert (
        d.year == 2017 and d.identifiers["PubMed"] == ["28424663"] and d.identifiers["PMC"] == ["PMC5371592"]
    )
    linked = [b for b in d.bib_entries.values() if "S2ORC" in b.other_ids]
    assert linked  # S2ORC's own bib -> paper links ("links") are kept as other_ids["S2ORC"]
    assert d.parser_version == "grobid_parse"
    spec = read_s2orc_record(
        json.loads((DATA / "pdf_tei_pairs" / "s2orc-doc2json" / "2020.acl-main.207.json").read_text())
    )
    eq = next(p for p in spec.body_text if p.text == "EQUATION")
    entry = spec.ref_entries[eq.eq_spans[0].ref_id]
    assert (
        entry.type == "equation" and entry.text == "5 v = Transformer(input) [CLS] ," and entry.num == "(1)"
    )
    assert spec.citation_style == "NAME-YEAR"
    assert spec.parser_version == "S2ORC 1.0.0 (pdf_parse)"


def test_our_own_tei_output_round_trips_through_the_reader(shared_data):
    tei = DATA / "pdf_tei_pairs" / "s2orc-doc2json" / "N18-3011.tei.xml"
    ours = parse_tei(tei.read_bytes(), "N18-3011")
    back = read_s2orc_record(json.loads(json.dumps(ours.to_s2orc())))
    assert back.body_text == ours.body_text
    assert back.bib_entries == ours.bib_entries
    assert back.title == ours.title and [a.last for a in back.authors] == [a.last for a in ours.authors]


def test_unarxive_cite_markers_become_linked_bracket_citations(shared_data):
    docs = list(iter_unarxive(UNARXIVE))
    assert len(docs) == 49
    marker = re.compile(r"\{\{(cite|formula|figure|table):")
    cites = 0
    for doc in docs:
        assert doc.source == "latex" and re.fullmatch(r"\d{4}\.\d{5}", doc.paper_id)
        _check_spans(doc)
        for p in doc.body_text:
            assert not marker.search(p.text)
            for s in p.cite_spans:
                n = int(s.text[1:-1])
                assert s.ref_id == f"BIBREF{n - 1}" and s.ref_id in doc.bib_entries
                cites += 1
    assert cites == 3042  # every {{cite:..}} marker of the sample, all linked
    gj = next(d for d in docs if d.paper_id == "2212.11816")
    assert gj.title == "High-Resolution Transmission Spectroscopy of the Terrestrial Exoplanet GJ 486b"
    assert gj.date == "2022-12-22" and gj.year == 2022 and gj.citation_style == "BRACKET"
    first = gj.body_text[0]
    assert first.section == "Introduction" and first.sec_num == "1"
    assert first.cite_spans[0].text == "[69]"
    bib = gj.bib_entries[first.cite_spans[0].ref_id]
    assert bib.raw_text and bib.num == 69
    assert any("DOI" in b.other_ids for b in gj.bib_entries.values())
    # formulas are eq spans holding their LaTeX; figure references are ref spans to FIGREFn
    assert any(s.latex for d in docs for p in d.body_text for s in p.eq_spans)
    refs = [s for d in docs for p in d.body_text for s in p.ref_spans]
    assert refs and all(s.ref_id is None or s.ref_id[:6] in ("FIGREF", "TABREF") for s in refs)


def test_unarxive_bad_lines_are_reported_not_lost(tmp_path):
    good = {
        "paper_id": "2212.00001",
        "metadata": {"title": "T", "authors_parsed": [["Doe", "J.", ""]]},
        "abstract": {"text": "A."},
        "body_text": [{"section": "Intro", "sec_number": "1", "text": "See {{cite:aa}}.", "cite_spans": []}],
        "bib_entries": {"aa": {"bib_entry_raw": "J. Doe. Paper. 2020. arXiv:2001.00001"}},
        "ref_entries": {},
    }
    path = tmp_path / "x.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(json.dumps(good) + "\n{not json\n" + json.dumps({"paper_id": "x"}) + "\n")
    with pytest.raises(S2orcFormatError, match=r"x.jsonl.gz:.*:2"):
        list(iter_unarxive(path))
    errors: list[str] = []
    docs = list(iter_unarxive(path, on_error=lambda where, exc: errors.append(where)))
    assert len(docs) == 1 and len(errors) == 2
    doc = docs[0]
    assert doc.body_text[0].text == "See [1]." and doc.body_text[0].cite_spans[0].ref_id == "BIBREF0"
    assert doc.bib_entries["BIBREF0"].other_ids["arXiv"] == ["2001.00001"]
    assert doc.bib_entries["BIBREF0"].year == 2020


def test_bad_records_raise_and_shifted_spans_are_reanchored():
    with pytest.raises(S2orcFormatError, match="not an S2ORC record"):
        read_s2orc_record({"paper_id": "1", "foo": 1})
    with pytest.raises(S2orcFormatError, match="JSON object"):
        read_s2orc_record(["x"])  # type: ignore[arg-type]
    with pytest.raises(S2orcFormatError):
        unarxive_record({"paper_id": "1"})
    para = {"text": "As shown by Smith (2019), x.", "section": "", "cite_spans": []}
    shifted = dict(para, cite_spans=[{"start": 10, "end": 23, "text": "Smith (2019)", "ref_id": "BIBREF0"}])
    doc = read_s2orc_record({"paper_id": "1", "body_text": [shifted], "bib_entries": {}})
    span = doc.body_text[0].cite_spans[0]
    assert (span.start, span.end) == (12, 24)
    wrong = dict(para, cite_spans=[{"start": 0, "end": 5, "text": "Jones", "ref_id": None}])
    with pytest.raises(S2orcFormatError, match="Jones"):
        read_s2orc_record({"paper_id": "1", "body_text": [wrong]})
