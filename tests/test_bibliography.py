"""corpus.papers.bibliography: one row per bibliography entry of real Grobid, LaTeX and S2ORC parses."""

from __future__ import annotations

import json
from collections import Counter

import polars as pl
import pytest
from conftest import DATA, LANDING

from corpus.graph.linking import ENTRY_COLUMNS, link_entries
from corpus.papers.bibliography import BibInputError, bib_frame, bib_rows, bib_schema
from corpus.papers.normalize import _normalize_title_unicode, normalize_doi, normalize_dois, normalize_title
from corpus.parse.document import Author, BibEntry, Paragraph, Span, StructuredDoc
from corpus.parse.latex import parse_eprint
from corpus.parse.s2orc_json import read_s2orc_record
from corpus.parse.tei import parse_tei, parse_tei_dict


@pytest.fixture(scope="module")
def tei_docs() -> dict[str, StructuredDoc]:
    out = {}
    for path in sorted((LANDING / "tei").glob("*.tei.xml")):
        pid = path.name.removesuffix(".tei.xml")
        out[pid] = parse_tei(path.read_bytes(), pid)
    return out


@pytest.fixture(scope="module")
def all_rows(tei_docs) -> list[dict]:
    rows = []
    for pid, doc in tei_docs.items():
        rows += bib_rows(pid, doc)
    return rows


def test_real_tei_entries(tei_docs) -> None:
    doc = tei_docs["2111.09883"]
    rows = bib_rows("2111.09883", doc)
    assert len(rows) == len(doc.bib_entries) == 85
    assert [r["ref_id"] for r in rows] == list(doc.bib_entries)
    bert = next(r for r in rows if r["ref_id"] == "BIBREF18")
    assert bert["entry_id"] == "2111.09883#BIBREF18" and bert["citing_id"] == "2111.09883"
    assert bert["title"] == "Pre-training of deep bidirectional transformers for language understanding"
    assert bert["norm_title"] == "pretrainingofdeepbidirectionaltransformersforlanguageunderstanding"
    assert (bert["arxiv_id"], bert["year"], bert["first_author_surname"]) == ("1810.04805", 2018, "Devlin")
    assert bert["source"] == "grobid" and bert["n_authors"] == 5
    assert bert["mentions"] == 3
    assert sum(r["arxiv_id"] is not None for r in rows) == 14
    # mentions add up to the body's linked cite spans
    body = Counter(s.ref_id for p in doc.body_text for s in p.cite_spans if s.ref_id in doc.bib_entries)
    assert {r["ref_id"]: r["mentions"] for r in rows if r["mentions"]} == dict(body)


def test_whole_landing_zone(all_rows, tei_docs) -> None:
    df = bib_frame(all_rows)
    assert df.height == sum(len(d.bib_entries) for d in tei_docs.values())
    assert df.schema == pl.Schema(bib_schema())
    assert df["entry_id"].n_unique() == df.height
    # identifiers: every DOI/arXiv id Grobid tagged survives, canonical and normalised
    tagged_dois = sum(bool(e.other_ids.get("DOI")) for d in tei_docs.values() for e in d.bib_entries.values())
    assert df["doi"].is_not_null().sum() >= tagged_dois > 0
    assert df.filter(pl.col("doi").is_not_null())["doi"].str.starts_with("10.").all()
    assert df.filter(pl.col("doi") != pl.col("doi").str.to_lowercase()).height == 0
    assert df["arxiv_id"].is_not_null().sum() >= 100
    assert df.filter(pl.col("arxiv_id").is_not_null())["arxiv_id"].str.contains(r"v\d+$").sum() == 0
    # titles: normalise exactly as corpus.graph.linking does; title-less entries are kept
    for r in all_rows[:300]:
        assert r["norm_title"] == (normalize_title(r["title"]) or None)
    assert df["norm_title"].is_null().sum() >= 1
    assert set(ENTRY_COLUMNS) <= set(df.columns)


def test_scalar_doi_normalisation_equals_vectorised(all_rows) -> None:
    samples = [r["doi"] for r in all_rows if r["doi"]] + [
        "https://doi.org/10.1103/PhysRevD.76.053001.",
        "doi:10.1088/1126-6708/2007/06/061;",
        "DOI: 10.1145/3292500.3330701,",
        "http://dx.doi.org/10.18653/v1/2020.acl-main.207",
        "10.1/too-short-a-prefix",
        "no doi here",
        "",
        None,
    ]
    vectorised = normalize_dois(pl.Series(samples, dtype=pl.String)).to_list()
    assert [normalize_doi(s) for s in samples] == vectorised
    assert normalize_doi("https://doi.org/10.1103/PhysRevD.76.053001.") == "10.1103/physrevd.76.053001"


def _doc_with(entries: list[BibEntry], cites: list[str] = ()) -> StructuredDoc:
    text = " ".join(f"[{i}]" for i, _ in enumerate(cites))
    spans, pos = [], 0
    for i, rid in enumerate(cites):
        tok = f"[{i}]"
        start = text.index(tok, pos)
        spans.append(Span(start=start, end=start + len(tok), text=tok, ref_id=rid))
        pos = start + len(tok)
    body = [Paragraph(text=text, cite_spans=spans)] if cites else []
    return StructuredDoc(
        paper_id="p", source="grobid", body_text=body, bib_entries={e.ref_id: e for e in entries}
    )


def test_arxiv_id_sources_in_order() -> None:
    entries = [
        BibEntry(
            ref_id="BIBREF0", other_ids={"arXiv": ["hep-th/9901001v2"]}, raw_text="see arXiv:1706.03762"
        ),
        BibEntry(ref_id="BIBREF1", raw_text="A. Vaswani et al. Attention. arXiv:1706.03762v5 [cs.CL], 2017."),
        BibEntry(ref_id="BIBREF2", urls=["https://arxiv.org/abs/2010.11929v2"]),
        BibEntry(ref_id="BIBREF3", raw_text="Phys. Rev. D 76, 053001 (2007), pp. 1234.5678", other_ids={}),
        BibEntry(ref_id="BIBREF4", other_ids={"DOI": ["10.48550/arXiv.2101.00001"]}),
        BibEntry(ref_id="BIBREF5", other_ids={"arXiv": ["arXiv:math.GT/0309136"]}),
        BibEntry(
            ref_id="BIBREF6", other_ids={"DOI": ["10.1103/PhysRevD.76.053001"]}, raw_text="hep-ph 0704.0032"
        ),
    ]
    rows = {r["ref_id"]: r for r in bib_rows("p", _doc_with(entries))}
    assert rows["BIBREF0"]["arxiv_id"] == "hep-th/9901001"  # other_ids beat raw text
    assert rows["BIBREF1"]["arxiv_id"] == "1706.03762"
    assert rows["BIBREF2"]["arxiv_id"] == "2010.11929"
    assert rows["BIBREF3"]["arxiv_id"] is None  # a bare number is not an id
    assert rows["BIBREF4"]["arxiv_id"] == "2101.00001"  # arXiv's DataCite DOI
    assert rows["BIBREF4"]["doi"] == "10.48550/arxiv.2101.00001"
    assert rows["BIBREF5"]["arxiv_id"] == "math/0309136"
    assert rows["BIBREF6"]["arxiv_id"] is None  # no arXiv context: not an id


def test_doi_sources_surname_and_mentions() -> None:
    entries = [
        BibEntry(ref_id="BIBREF0", title="", raw_text="J. Doe, Nature 1 (2001). doi:10.1038/NPHYS1234."),
        BibEntry(ref_id="BIBREF1", urls=["https://doi.org/10.1145/3292500.3330701"], year=2019),
        BibEntry(ref_id="BIBREF2", authors=[Author(first="", last='"Baly')], title="T"),
        BibEntry(ref_id="BIBREF3", authors=[Author(first="Plato")]),
        BibEntry(
            ref_id="BIBREF4", other_ids={"DOI": ["https://doi.org/10.1000/FIRST"]}, raw_text="10.1000/second"
        ),
    ]
    doc = _doc_with(entries, cites=["BIBREF0", "BIBREF1", "BIBREF0", None, "BIBREF9"])
    rows = {r["ref_id"]: r for r in bib_rows("p", doc)}
    assert len(rows) == 5
    assert rows["BIBREF0"]["doi"] == "10.1038/nphys1234" and rows["BIBREF0"]["norm_title"] is None
    assert rows["BIBREF1"]["doi"] == "10.1145/3292500.3330701" and rows["BIBREF1"]["year"] == 2019
    assert rows["BIBREF4"]["doi"] == "10.1000/first"
    assert rows["BIBREF2"]["first_author_surname"] == "Baly"
    assert rows["BIBREF3"]["first_author_surname"] == "Plato"
    assert rows["BIBREF1"]["first_author_surname"] is None and rows["BIBREF1"]["n_authors"] == 0
    assert [rows[k]["mentions"] for k in sorted(rows)] == [2, 1, 0, 0, 0]


def test_latex_and_s2orc_parses(tmp_path) -> None:
    res = parse_eprint(LANDING / "src/2408.12714.tar.gz", "2408.12714", tmp_path / "s")
    assert res.doc is not None, res.failure
    rows = bib_rows("2408.12714", res.doc)
    assert len(rows) == len(res.doc.bib_entries) == 56
    assert rows[0]["source"] == "latex" and rows[0]["first_author_surname"] == "Josserand"
    assert rows[0]["year"] == 2016 and rows[0]["title"] == "Drop impact on a solid surface"
    assert sum(r["mentions"] for r in rows) == 77  # 75 in the text, 2 in a footnote (a body paragraph)
    s2orc = read_s2orc_record(json.loads((DATA / "s2orc_family/s2orc_repo/example_paper.json").read_text()))
    rows = bib_rows(s2orc.paper_id, s2orc)
    assert len(rows) == 26 and rows[0]["first_author_surname"] == "Aldrich" and rows[0]["source"] == "s2orc"


def test_dict_parse_gives_the_same_rows() -> None:
    data = (LANDING / "tei/2203.03605.tei.xml").read_bytes()
    assert bib_rows("2203.03605", parse_tei_dict(data, "2203.03605")) == bib_rows(
        "2203.03605", parse_tei(data, "2203.03605")
    )


def test_frame_feeds_linking(all_rows, tei_docs) -> None:
    entries = bib_frame(all_rows).select(ENTRY_COLUMNS)
    papers = pl.DataFrame(
        {
            "paper_id": ["1706.03762", "1810.04805"],
            "doi": [None, None],
            "norm_title": [normalize_title("Attention Is All You Need"), normalize_title("BERT")],
        }
    )
    links = link_entries(entries, papers)
    assert links.height > 5
    assert set(links["cited_id"]) == {"1706.03762", "1810.04805"}
    assert (links["citing_id"] != links["cited_id"]).all()


def test_bad_input_and_empty_frames() -> None:
    with pytest.raises(BibInputError, match="paper id"):
        bib_rows("", StructuredDoc(paper_id="x", source="grobid"))
    with pytest.raises(BibInputError, match="not a parse"):
        bib_rows("x", {"title": "no bib_entries key"})
    with pytest.raises(BibInputError, match="not a parse"):
        bib_rows("x", None)
    assert bib_rows("x", StructuredDoc(paper_id="x", source="grobid")) == []
    empty = bib_frame([])
    assert empty.height == 0 and empty.schema == pl.Schema(bib_schema())
    row = bib_rows("p", _doc_with([BibEntry(ref_id="BIBREF0", title="T")]))[0]
    with pytest.raises(BibInputError, match="duplicate entry_id"):
        bib_frame([row, dict(row)])


def test_ascii_title_shortcut_equals_the_definition(all_rows) -> None:
    titles = [r["title"] for r in all_rows] + [
        "Schrödinger’s ﬁnite-size BERT: pre-training (v2)",
        "Ｆｕｌｌ－ｗｉｄｔｈ ＴＩＴＬＥ ２０２０",
        "深度学习 for Graphs",
        "Tab\there\x00and\x7fcontrols",
        "",
    ]
    assert sum(t.isascii() for t in titles) > 1000
    for t in titles:
        assert normalize_title(t) == _normalize_title_unicode(t), t
