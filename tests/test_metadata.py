"""corpus.papers.metadata: canonical fields (OAI first, vote, PDF fallback), the chosen parse,
the S2ORC paper filters on real English and non-English text, and the tables."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA, LANDING

from corpus.ingest.oai import read_page
from corpus.ingest.records import records_frame
from corpus.papers.langid import is_english_paper
from corpus.papers.metadata import (
    FILTERS,
    LATEX_MIN_BODY_SHARE,
    MIN_TEXT_CHARS,
    PARSE_REASONS,
    PaperInputError,
    canonical_paper,
    canonical_papers,
    choose_parse,
    filter_table,
    paper_counts,
    paper_filters,
    papers_frame,
    papers_schema,
    select_fields,
)
from corpus.parse.document import Paragraph, StructuredDoc
from corpus.parse.latex import parse_eprint
from corpus.parse.s2orc_json import read_s2orc_record
from corpus.parse.tei import parse_tei, parse_tei_dict

SPANISH_TEI = DATA / "pdf_tei_pairs/s2orc-doc2json/f2235cd28c171f9f3b6a8bcebe246159c464980c.tei.xml"
SPANISH_S2ORC = (
    DATA / "s2orc_family/s2orc-doc2json/s2orc/20210101_f2235cd28c171f9f3b6a8bcebe246159c464980c.json"
)

# Hand-written sentences (real language, written for this test).
GERMAN = (
    "Die vorliegende Arbeit untersucht den Einfluss der Temperatur auf die Leitfähigkeit dünner "
    "Metallschichten. Wir zeigen, dass der Widerstand bei tiefen Temperaturen linear abnimmt und "
    "dass dieses Verhalten durch Streuung an Korngrenzen erklärt werden kann. Die Messungen wurden "
    "an zwanzig Proben durchgeführt, die mit unterschiedlichen Verfahren hergestellt worden sind."
)
FRENCH = (
    "Dans cet article, nous étudions la propagation des ondes dans un milieu poreux saturé. Nous "
    "montrons que la vitesse de phase dépend fortement de la fréquence et de la perméabilité du "
    "milieu. Les résultats numériques sont comparés à des mesures expérimentales réalisées sur des "
    "échantillons de sable et de grès, et l'accord obtenu est très satisfaisant."
)
CHINESE = (
    "本文研究了深度神经网络在图像分类任务中的泛化能力。我们提出了一种新的正则化方法，"
    "该方法在训练过程中随机丢弃部分特征通道，从而减少模型对个别特征的依赖。"
    "在三个公开数据集上的实验表明，所提出的方法能够显著提高分类准确率，并且计算开销很小。"
    "我们还分析了该方法与批量归一化之间的关系，并讨论了其在其他任务中的应用前景。"
)


# ---------------------------------------------------------------- real inputs


@pytest.fixture(scope="module")
def oai_rows() -> dict[str, dict]:
    records = []
    for path in sorted((LANDING / "oai").glob("*.xml")):
        _, recs, failed = read_page(path)
        assert not failed
        records += recs
    rows = records_frame(records).to_dicts()
    return {r["id"]: r for r in rows}


@pytest.fixture(scope="module")
def tei_docs() -> dict[str, StructuredDoc]:
    out = {}
    for path in sorted((LANDING / "tei").glob("*.tei.xml")):
        pid = path.name.removesuffix(".tei.xml")
        out[pid] = parse_tei(path.read_bytes(), pid)
    return out


@pytest.fixture(scope="module")
def latex_docs(tmp_path_factory) -> dict[str, StructuredDoc]:
    out = {}
    for path in sorted((LANDING / "src").glob("*.tar.gz")):
        pid = path.name.removesuffix(".tar.gz")
        res = parse_eprint(path, pid, tmp_path_factory.mktemp(pid.replace(".", "_")))
        assert res.doc is not None, res.failure
        out[pid] = res.doc
    return out


@pytest.fixture(scope="module")
def day_rows(oai_rows, tei_docs, latex_docs) -> dict[str, dict]:
    rows, failures = canonical_papers(oai_rows.values(), tei_docs, latex_docs)
    assert failures == []
    return {r["id"]: r for r in rows}


def _paper(text_paras: list[str], pid: str = "x", source: str = "grobid") -> StructuredDoc:
    return StructuredDoc(
        paper_id=pid, source=source, body_text=[Paragraph(text=t, section="Intro") for t in text_paras]
    )


def _row(
    title="A title", authors=({"first": "Ada", "middle": [], "last": "Lovelace", "suffix": ""},), abstract=""
):
    return {"title": title, "authors": list(authors), "abstract": abstract}


# ---------------------------------------------------------------- canonical metadata, real landing zone


def test_every_landing_paper_gets_a_row(day_rows, oai_rows) -> None:
    assert set(day_rows) == set(oai_rows) and len(day_rows) == 41
    df = papers_frame(day_rows.values())
    assert df.schema == pl.Schema(papers_schema())
    assert df["id"].n_unique() == 41
    # every landing paper is a real English arXiv paper with title, authors and text
    assert df["kept"].all() and df["drop_reason"].null_count() == 41


def test_oai_title_wins_over_a_wrong_grobid_header(day_rows, tei_docs) -> None:
    # Grobid read the licence notice of 1706.03762 into its title
    assert tei_docs["1706.03762"].title.startswith("Provided proper attribution")
    row = day_rows["1706.03762"]
    assert row["title"] == "Attention Is All You Need" and row["title_source"] == "oai"
    assert row["norm_title"] == "attentionisallyouneed"
    assert row["authors_source"] == "oai" and len(row["authors"]) == 8
    assert row["authors"][0] == {"first": "Ashish", "middle": [], "last": "Vaswani", "suffix": ""}
    assert row["parse_source"] == "grobid" and row["parse_reason"] == "only_grobid"
    assert row["license"] == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    assert row["created"] == dt.date(2017, 6, 12) and row["updated"] == dt.date(2023, 8, 2)
    assert row["year"] == 2017 and row["year_source"] == "oai"
    assert row["n_bib_entries"] == len(tei_docs["1706.03762"].bib_entries) == 40


def test_missing_oai_abstract_comes_from_grobid(day_rows, tei_docs) -> None:
    row = day_rows["2006.03654"]  # its OAI record has no abstract (MANIFEST fields_not_found)
    assert row["abstract_source"] == "grobid"
    expected = " ".join(" ".join(p.text for p in tei_docs["2006.03654"].abstract).split())
    assert row["abstract"] == expected and len(expected) > 1500
    assert row["kept"]


def test_latex_never_gives_canonical_fields(day_rows, latex_docs) -> None:
    row = day_rows["2408.12714"]  # no OAI abstract, LaTeX source only
    assert latex_docs["2408.12714"].abstract  # the LaTeX parse has an abstract ...
    assert row["abstract"] == "" and row["abstract_source"] is None  # ... which is not used
    assert row["title_source"] == "oai"
    assert row["parse_source"] == "latex" and row["parse_reason"] == "only_latex"
    assert row["field"] == "Physics" and row["primary_category"] == "physics.flu-dyn"
    body = sum(len(p.text) for p in latex_docs["2408.12714"].body_text)
    assert row["text_chars"] == body and row["kept"]


def test_metadata_only_records(day_rows, oai_rows) -> None:
    row = day_rows["0704.0006"]
    assert row["parse_source"] is None and row["parse_reason"] == "no_parse"
    assert row["text_chars"] == len(oai_rows["0704.0006"]["abstract"]) and row["kept"]
    assert row["doi"] == "10.1103/physreva.75.043613" and row["doi_source"] == "oai"
    assert row["field"] == "Physics" and row["field_of_study"] == "Physics"
    assert day_rows["0704.0010"]["field"] == "Mathematics"
    assert day_rows["0704.0055"]["categories"] == ["cond-mat.soft", "cond-mat.mtrl-sci"]
    assert (
        day_rows["0704.0085"]["venue"] == "JHEP 0706:061,2007"
        and day_rows["0704.0085"]["venue_source"] == "oai"
    )
    assert day_rows["2007.03051"]["field"] == "Computer Science"


def test_empty_oai_title_and_authors_fall_back_to_grobid(oai_rows, tei_docs) -> None:
    rec = dict(oai_rows["2103.14030"], title="", authors=[])
    row = canonical_paper(rec, tei_docs["2103.14030"], None)
    assert row["title"] == tei_docs["2103.14030"].title
    assert row["title"].startswith("Swin Transformer: Hierarchical Vision Transformer")
    assert row["title_source"] == "grobid" and row["authors_source"] == "grobid"
    assert [a["last"] for a in row["authors"]] == [a.last for a in tei_docs["2103.14030"].authors]
    assert set(row["authors"][0]) == {"first", "middle", "last", "suffix"}
    assert row["abstract_source"] == "oai" and row["kept"]
    # no Grobid parse: nothing to fall back on, the first filter drops it
    bare = canonical_paper(rec, None, None)
    assert (bare["kept"], bare["drop_reason"], bare["title_source"]) == (False, "no_title", None)
    only_authors = canonical_paper(dict(oai_rows["2103.14030"], authors=[]), None, None)
    assert only_authors["drop_reason"] == "no_authors"


def test_dict_parses_give_the_same_row(oai_rows) -> None:
    data = (LANDING / "tei/2203.03605.tei.xml").read_bytes()
    as_model = canonical_paper(oai_rows["2203.03605"], parse_tei(data, "2203.03605"), None)
    as_dict = canonical_paper(oai_rows["2203.03605"], parse_tei_dict(data, "2203.03605"), None)
    assert as_model == as_dict and as_model["n_bib_entries"] == 41


def test_arxiv_record_model_is_accepted(oai_rows) -> None:
    _, recs, _ = read_page(LANDING / "oai/2007-04-09.xml")
    rows = [canonical_paper(r, None, None) for r in recs]
    assert {r["id"] for r in rows} == {"0704.0059", "0704.0083", "0704.0085"}
    assert rows == [canonical_paper(oai_rows[r["id"]], None, None) for r in rows]


# ---------------------------------------------------------------- the vote


def test_majority_vote_when_oai_lacks_the_field() -> None:
    sources = {
        "oai": {"title": "", "doi": "https://doi.org/10.1000/OAI.5"},
        "dblp": {"title": "Learning to Link Citations"},
        "kaggle": {"title": "Learning to link  citations."},  # same after normalisation
        "crossref": {"title": "Learning to Link Citation Graphs", "doi": "doi:10.1234/ABC"},
        "grobid": {"title": "LEARNING TO LINK", "abstract": [Paragraph(text="Grobid abstract text.")]},
    }
    out = select_fields(sources)
    # 2 votes against 1 beat the order of the sources; the surface form is the first supporter's
    assert out["title"] == ("Learning to Link Citations", "dblp")
    assert out["doi"] == ("10.1000/oai.5", "oai")  # publisher first: crossref's DOI never counts
    assert out["abstract"] == ("Grobid abstract text.", "grobid")  # nobody else has one
    assert out["venue"] == (None, None) and out["year"] == (None, None)


def test_tie_broken_by_fewest_sources() -> None:
    # S2ORC §2.3: prefer one source giving title + abstract over two sources giving them apart
    sources = {
        "oai": {},
        "dblp": {"title": "Graph Neural Networks for Citation Linking"},
        "ieee": {"title": "Citation Linking With Graph Networks", "abstract": "An abstract only IEEE has."},
        "grobid": {"title": "Something else entirely"},
    }
    out = select_fields(sources)
    assert out["title"] == ("Citation Linking With Graph Networks", "ieee")  # not dblp, though dblp is first
    assert out["abstract"] == ("An abstract only IEEE has.", "ieee")
    # without the abstract the tie falls to the source order
    del sources["ieee"]["abstract"]
    assert select_fields(sources)["title"] == ("Graph Neural Networks for Citation Linking", "dblp")
    # a three-way tie on two fields, one source covering both
    three = {
        "a": {"title": "Alpha", "year": 2001},
        "b": {"title": "Beta", "year": 2002},
        "c": {"title": "Gamma", "year": 2001},
    }
    out = select_fields(three, publisher=None, pdf=None, fields=("title", "year"))
    assert out["year"] == (2001, "a") and out["title"] == ("Alpha", "a")


def test_authors_vote_on_surnames_and_extra_sources_in_a_row(oai_rows, tei_docs) -> None:
    rec = dict(oai_rows["2203.03605"], authors=[])
    extra = {
        "kaggle": {
            "authors": [{"keyname": "Zhang", "forenames": "Hao"}, {"keyname": "Li", "forenames": "Feng"}]
        },
        "dblp": {"authors": ["Hao Zhang", "Feng Li"]},
        "s2": {"authors": [{"first": "H.", "last": "Zhang"}]},
    }
    row = canonical_paper(rec, tei_docs["2203.03605"], None, extra_sources=extra)
    assert row["authors_source"] == "kaggle"  # kaggle and dblp agree on (zhang, li); s2 alone
    assert row["authors"] == [
        {"first": "Hao", "middle": [], "last": "Zhang", "suffix": ""},
        {"first": "Feng", "middle": [], "last": "Li", "suffix": ""},
    ]
    with pytest.raises(PaperInputError, match="may not be named"):
        canonical_paper(rec, None, None, extra_sources={"grobid": {}})


def test_forenames_split_into_first_and_middle(oai_rows) -> None:
    row = canonical_paper(oai_rows["2502.12102"], None, None)
    everett = next(a for a in row["authors"] if a["last"] == "Everett")
    assert everett == {"first": "Jim", "middle": ["A.", "C."], "last": "Everett", "suffix": ""}
    assert len(row["authors"]) == 62


# ---------------------------------------------------------------- choose_parse


def test_choose_parse_rules(tei_docs, latex_docs) -> None:
    g, lx = tei_docs["1709.01907"], latex_docs["2004.14974"]
    g_chars = sum(len(p.text) for p in g.body_text if p.text != "EQUATION")
    l_chars = sum(len(p.text) for p in lx.body_text)
    assert l_chars >= LATEX_MIN_BODY_SHARE * g_chars and lx.bib_entries
    assert choose_parse(None, None) == (None, "no_parse")
    assert choose_parse(g, None) == (g, "only_grobid")
    assert choose_parse(None, lx) == (lx, "only_latex")
    assert choose_parse(g, lx) == (lx, "latex_preferred")
    short = lx.model_copy(update={"body_text": lx.body_text[:2]})
    assert choose_parse(g, short) == (g, "latex_body_short")
    assert choose_parse(g, lx.model_copy(update={"body_text": []})) == (g, "latex_no_body")
    assert choose_parse(g, lx.model_copy(update={"bib_entries": {}})) == (g, "latex_no_bib")
    empty = StructuredDoc(paper_id="e", source="grobid")
    assert choose_parse(empty, None) == (None, "empty_parse")
    assert choose_parse(empty, lx) == (lx, "only_latex")
    # a header-only TEI (Grobid's processHeaderDocument) still has its abstract
    header = parse_tei((DATA / "grobid_tei/grobid_repo/sample1.tei.header.xml").read_bytes(), "h")
    assert choose_parse(header, None) == (header, "only_grobid")
    reasons = {choose_parse(*args)[1] for args in [(None, None), (g, lx), (g, short)]}
    assert reasons <= set(PARSE_REASONS)


def test_row_records_the_chosen_parse(oai_rows, tei_docs, latex_docs) -> None:
    # the SciFact paper's record with a Grobid parse of another paper: only the rule matters here
    row = canonical_paper(oai_rows["2004.14974"], tei_docs["1709.01907"], latex_docs["2004.14974"])
    assert row["parse_source"] == "latex" and row["parse_reason"] == "latex_preferred"
    assert row["has_grobid"] and row["has_latex"]
    assert row["n_bib_entries"] == len(latex_docs["2004.14974"].bib_entries)
    assert row["title_source"] == "oai"  # the Grobid header of another paper does not matter


# ---------------------------------------------------------------- filters on real text


def test_real_english_papers_pass(tei_docs, oai_rows) -> None:
    for pid in ("1709.01907", "2306.13643", "2502.13138"):
        assert paper_filters(oai_rows[pid], tei_docs[pid]) == (True, None)


def test_real_spanish_paper_is_not_english() -> None:
    doc = parse_tei(SPANISH_TEI.read_bytes(), "mpra")
    row = _row(title=doc.title, authors=[a.model_dump() for a in doc.authors])
    assert paper_filters(row, doc) == (False, "not_english")
    s2orc = read_s2orc_record(json.loads(SPANISH_S2ORC.read_text()))
    assert paper_filters(_row(title=s2orc.title), s2orc) == (False, "not_english")
    # through canonical_paper: the language and the reason's detail are recorded
    rec = {"id": "mpra", "title": doc.title, "authors": [{"keyname": "Mora-Alfaro", "forenames": "Jorge"}]}
    full = canonical_paper(rec, doc, None)
    assert full["language"] == "es" and full["drop_reason"] == "not_english"
    assert full["drop_detail"].startswith("not_english: cld2 es ")


@pytest.mark.parametrize(("text", "lang"), [(GERMAN, "de"), (FRENCH, "fr"), (CHINESE, "zh")])
def test_hand_written_non_english(text: str, lang: str) -> None:
    row = {"id": "h", "title": "Title", "authors": [{"keyname": "Doe", "forenames": "J."}], "abstract": text}
    out = canonical_paper(row, None, None)
    assert (out["kept"], out["drop_reason"], out["language"]) == (False, "not_english", lang)
    # English body after the foreign abstract: still judged on the text as a whole
    english = " ".join(p.text for p in _english_paras())
    mixed = canonical_paper(row, _paper([english]), None)
    assert mixed["kept"] and mixed["language"] == "en"


def _english_paras() -> list[Paragraph]:
    return parse_tei((LANDING / "tei/1709.01907.tei.xml").read_bytes(), "e").body_text[:12]


def test_control_characters_are_removed_before_cld2() -> None:
    english = " ".join(p.text for p in _english_paras()[:4])
    dirty = "\x00\x01".join(english.split(" ", 40)) + "\x7f\x85\ufdd0\ufffe"
    assert is_english_paper(dirty) == (True, None)  # pycld2 alone raises on these
    assert paper_filters(_row(), _paper([dirty])) == (True, None)
    german = "\x02" + GERMAN.replace(" ", "\x0b ", 5) + "\x9f"
    assert paper_filters(_row(abstract=german), None) == (False, "not_english")


def test_short_text_boundary_and_series_order() -> None:
    text = "Graphs of citations are sparse and grow over time, so we model them as a stream of edges...."
    assert len(text) < MIN_TEXT_CHARS
    pad = text + "x" * (MIN_TEXT_CHARS - 1 - len(text))
    assert paper_filters(_row(abstract=pad), None) == (False, "short_text")
    # abstract + body count together; EQUATION placeholders do not count
    doc = _paper(["EQUATION", "We model the citation graph as a stream of edges over time."])
    assert len(pad[:35]) + 59 + len("EQUATION") >= MIN_TEXT_CHARS  # would pass if EQUATION counted
    assert paper_filters(_row(abstract=pad[:35]), doc)[1] == "short_text"
    assert paper_filters(_row(abstract=pad[:41]), doc) == (True, None)  # 41 + 59 = 100 exactly
    long_enough = _row(abstract=text + " We also report results on three real data sets.")
    assert paper_filters(long_enough, None) == (True, None)
    # first failing filter wins: no title beats no authors, short text and German
    assert paper_filters(_row(title=" ", authors=[], abstract=GERMAN), None) == (False, "no_title")
    assert paper_filters(_row(authors=[], abstract="short"), None) == (False, "no_authors")
    assert paper_filters(_row(abstract="Kurz."), None) == (False, "short_text")


def test_text_cld2_cannot_score_fails_the_language_filter() -> None:
    digits = " ".join(str(i) for i in range(200))
    row = canonical_paper({"id": "n", "title": "T", "authors": ["A B"], "abstract": digits}, None, None)
    assert row["drop_reason"] == "not_english" and row["language"] == "un"
    assert row["drop_detail"].startswith("language_unknown")


# ---------------------------------------------------------------- tables and bad input


def test_filter_table_and_counts(day_rows, oai_rows) -> None:
    rows = list(day_rows.values())
    extra = [
        canonical_paper({"id": "t1", "title": "", "authors": ["A B"], "abstract": GERMAN}, None, None),
        canonical_paper({"id": "t2", "title": "T", "authors": [], "abstract": GERMAN}, None, None),
        canonical_paper({"id": "t3", "title": "T", "authors": ["A B"], "abstract": "short"}, None, None),
        canonical_paper({"id": "t4", "title": "T", "authors": ["A B"], "abstract": FRENCH}, None, None),
        canonical_paper({"id": "t5", "title": "T", "authors": ["A B"], "abstract": CHINESE}, None, None),
    ]
    table = filter_table(rows + extra)
    assert [t["filter"] for t in table] == ["input"] + [code for code, _ in FILTERS]
    assert [(t["dropped"], t["remaining"]) for t in table] == [(0, 46), (1, 45), (1, 44), (1, 43), (2, 41)]
    assert filter_table(papers_frame(rows + extra)) == table
    counts = paper_counts(rows + extra)
    assert counts == {
        "papers_in": 46,
        "papers": 41,
        "with_full_text": 18,
        "with_grobid": 16,
        "with_latex": 2,
        "with_bib_entries": 18,
        "with_oai_abstract": 39,
        "with_doi": 12,
        "with_journal_ref": 8,
        "with_arxiv_id": 41,
    }
    with pytest.raises(ValueError, match="not paper filters"):
        filter_table([{"drop_reason": "deleted"}])


def test_empty_partition_keeps_its_columns() -> None:
    df = papers_frame([])
    assert df.height == 0 and df.schema == pl.Schema(papers_schema())
    assert filter_table(df)[-1] == {
        "filter": "not_english",
        "description": FILTERS[-1][1],
        "dropped": 0,
        "remaining": 0,
    }
    assert paper_counts(df)["papers"] == 0


def test_bad_records_fail_one_by_one(oai_rows, tmp_path: Path) -> None:
    with pytest.raises(PaperInputError, match="without an id"):
        canonical_paper({"title": "No id"}, None, None)
    with pytest.raises(PaperInputError, match="mapping"):
        canonical_paper(["not", "a", "record"], None, None)
    with pytest.raises(PaperInputError, match="ISO date"):
        canonical_paper({"id": "1", "created": "yesterday"}, None, None)
    with pytest.raises(PaperInputError, match="not in the papers schema"):
        papers_frame([{"id": "1", "surprise": 1}])
    good = oai_rows["0704.0006"]
    rows, failures = canonical_papers([good, {"title": "x"}, {"id": "7", "created": "bad"}, good])
    assert [r["id"] for r in rows] == ["0704.0006", "0704.0006"]
    assert [f["id"] for f in failures] == ["#1", "7"]
    assert "ISO date" in failures[1]["reason"]
    # unknown categories give no field rather than a crash
    row = canonical_paper(dict(good, categories=["not-a-category"]), None, None)
    assert row["field"] is None and row["primary_category"] == "not-a-category"
