"""corpus.parse.tei cite linking where Grobid leaves spans unlinked: numbers per reference list,
author-year names with year suffixes and author counts, garbled bracket ranges.

Real cases come from ../shared/data/fidelity/tei (see its README); where no real file
shows a defect, a minimal made-up TEI reproduces it.
"""

from __future__ import annotations

from collections import Counter

from conftest import DATA

from corpus.parse.document import StructuredDoc
from corpus.parse.tei import parse_tei

FIDELITY_TEI = DATA / "fidelity" / "tei" / "SergioZSZ+OS-IA-Pipegrobid" / "outputs" / "xmls"

_TEI = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>T</title></titleStmt>
</fileDesc></teiHeader><text><body>{body}</body><back>{back}<div type="references"><listBibl>{bibl}
</listBibl></div></back></text></TEI>"""


def _paras(doc: StructuredDoc):
    return doc.abstract + doc.body_text + doc.back_matter


def _span(doc: StructuredDoc, paragraph_has: str, text: str):
    for p in _paras(doc):
        if paragraph_has in p.text:
            return next(s for s in p.cite_spans if s.text == text)
    raise AssertionError(f"no paragraph with {paragraph_has!r}")


def _bibl(n: int) -> str:
    return "".join(
        f'<biblStruct xml:id="b{i}"><analytic><title level="a" type="main">Paper {i}</title></analytic>'
        f'<monogr><imprint><date type="published" when="2019"/></imprint></monogr></biblStruct>'
        for i in range(n)
    )


# --------------------------------------------------------------- 1: one number map per reference list


def test_supplement_list_numbers_are_not_linked_into_the_main_list(shared_data):
    """paper16: main text [1]..[65] -> b0..b64 (Grobid links [13]+), then a Supplementary
    Information with its own list [1]..[12] = b65..b76, merged by Grobid into one listBibl
    and never linked by it. The SI's [11] is CUDA.jl's "Julia on GPUs" (b75), not b10."""
    doc = parse_tei((FIDELITY_TEI / "paper16.tei.xml").read_bytes(), "paper16")
    assert doc.citation_style == "BRACKET"
    # main text before Grobid's first link: the first numbers still follow the main list
    intro = doc.body_text[0]
    assert [(s.text, s.ref_id) for s in intro.cite_spans[:3]] == [
        ("[1]", "BIBREF0"),
        ("[2]", "BIBREF1"),
        ("[3]", "BIBREF2"),
    ]
    # supplement: either the supplement's entry or nothing, never the main list's
    assert _span(doc, "using CUDA.jl [11]", "[11]").ref_id in (None, "BIBREF75")
    assert _span(doc, "SubMIT facility [12]", "[12]").ref_id in (None, "BIBREF76")
    assert _span(doc, "single-species problem [1]", "[1]").ref_id in (None, "BIBREF65")
    assert _span(doc, "where such a measurement is reported", "[4]").ref_id in (None, "BIBREF68")
    si_start = next(i for i, p in enumerate(doc.body_text) if "where the −T term arises from Ito" in p.text)
    for p in doc.body_text[si_start:] + doc.back_matter:
        for s in p.cite_spans:
            assert s.ref_id is None or int(s.ref_id[6:]) >= 65, (p.text[:80], s)
    # the main text keeps every link it had
    main = [s for p in doc.body_text[:si_start] for s in p.cite_spans]
    assert all(s.ref_id for s in main) and len(main) >= 100


def test_main_text_is_not_linked_into_an_appendix_list_grobid_linked():
    """A report with 10 main references and an appendix list of 5 (b10..b14) that Grobid
    linked while leaving the main text unlinked: "Chinchilla [2]" must not become b11."""
    body = (
        '<div><head n="1">Intro</head><p>Chinchilla <ref type="bibr">[2]</ref> and PaLM '
        '<ref type="bibr">[3]</ref> scale, as do <ref type="bibr">[4]</ref> and '
        '<ref type="bibr">[9]</ref>.</p></div>'
    )
    back = (
        '<div type="annex"><div><head n="A">System card</head><p>We follow '
        '<ref type="bibr" target="#b10">[1]</ref>, <ref type="bibr" target="#b11">[2]</ref> and '
        '<ref type="bibr">[3]</ref>.</p><p>Also <ref type="bibr" target="#b13">[4]</ref>.</p></div></div>'
    )
    doc = parse_tei(_TEI.format(body=body, back=back, bibl=_bibl(15)).encode(), "two-lists")
    assert doc.citation_style == "BRACKET"
    assert [s.ref_id for s in doc.body_text[0].cite_spans] == [None, None, None, None]
    # inside the appendix, between links to that list, its own map holds
    assert [(s.text, s.ref_id) for s in doc.back_matter[0].cite_spans] == [
        ("[1]", "BIBREF10"),
        ("[2]", "BIBREF11"),
        ("[3]", "BIBREF12"),
    ]


def test_single_list_still_links_unlinked_numbers_everywhere():
    body = (
        '<div><head n="1">Intro</head><p>A <ref type="bibr">[1]</ref> B <ref type="bibr" target="#b1">[2]</ref>'
        ' C <ref type="bibr">[3]</ref> D <ref type="bibr" target="#b4">[5]</ref>.</p></div>'
    )
    back = '<div type="annex"><div><head n="A">More</head><p>See <ref type="bibr">[4]</ref>.</p></div></div>'
    doc = parse_tei(_TEI.format(body=body, back=back, bibl=_bibl(5)).encode(), "one-list")
    assert [s.ref_id for s in doc.body_text[0].cite_spans] == ["BIBREF0", "BIBREF1", "BIBREF2", "BIBREF4"]
    assert [s.ref_id for s in doc.back_matter[0].cite_spans] == ["BIBREF3"]


def test_labelled_raw_references_split_into_lists_where_labels_restart():
    bibl = "".join(
        f'<biblStruct xml:id="b{i}"><analytic><title level="a" type="main">Paper {i}</title></analytic>'
        f'<monogr><imprint/></monogr><note type="raw_reference">[{n}] A. Author. Paper {i}.</note></biblStruct>'
        for i, n in enumerate([1, 2, 3, 1, 2])
    )
    body = (
        '<div><head n="1">Intro</head><p>See <ref type="bibr" target="#b0">[1]</ref>, '
        '<ref type="bibr">[2]</ref> and <ref type="bibr" target="#b2">[3]</ref>.</p></div>'
    )
    back = (
        '<div type="annex"><div><head n="S">Supplement</head><p>As in <ref type="bibr" target="#b3">[1]</ref> '
        'and <ref type="bibr">[2]</ref>.</p></div></div>'
    )
    doc = parse_tei(_TEI.format(body=body, back=back, bibl=bibl).encode(), "labels")
    assert [s.ref_id for s in doc.body_text[0].cite_spans] == ["BIBREF0", "BIBREF1", "BIBREF2"]
    assert [s.ref_id for s in doc.back_matter[0].cite_spans] == ["BIBREF3", "BIBREF4"]


# --------------------------------------------------------------- 2: author-year names


def _ny_bibl(entries: list[tuple[list[str], str, str]]) -> str:
    out = []
    for i, (names, year, title) in enumerate(entries):
        authors = "".join(f"<author><persName><surname>{n}</surname></persName></author>" for n in names)
        date = f'<date type="published" when="{year}"/>' if year else ""
        out.append(
            f'<biblStruct xml:id="b{i}"><analytic><title level="a" type="main">{title}</title>{authors}'
            f"</analytic><monogr><imprint>{date}</imprint></monogr></biblStruct>"
        )
    return "".join(out)


def test_year_suffix_and_author_count_pick_the_right_entry():
    bibl = _ny_bibl(
        [
            (["Allen-Zhu", "Li", "Song"], "2019", "A convergence theory for deep learning"),
            (["Allen-Zhu", "Li"], "2019", "What can resnet learn efficiently"),
            (["Sun", "Wang", "Xu"], "2022", "Recitation-augmented language models"),
            (["Sun", "Shi", "Zhao"], "2022", "Black-box tuning for language-model-as-a-service"),
            (["Sun", "Ma", "Liu"], "", "2022c. Learning to reason"),
            (["Kim"], "2020", "Solo paper"),
            (["Kim", "Lee", "Park"], "2020", "Team paper"),
        ]
    )
    body = (
        '<div><head>Intro</head><p>Deep nets <ref type="bibr">(Allen-Zhu &amp; Li, 2019)</ref> and '
        '<ref type="bibr">(Allen-Zhu et al., 2019)</ref>; recitation <ref type="bibr">(Sun et al., 2022a)</ref>,'
        ' tuning <ref type="bibr">(Sun et al., 2022b)</ref>, reasoning <ref type="bibr">(Sun et al., 2022c)</ref>'
        ' and <ref type="bibr">(Sun et al., 2022d)</ref>; <ref type="bibr">Kim (2020)</ref> and '
        '<ref type="bibr">Kim et al. (2020)</ref> as <ref type="bibr" target="#b5">Kim, 2020</ref>.</p></div>'
    )
    doc = parse_tei(_TEI.format(body=body, back="", bibl=bibl).encode(), "ny")
    assert doc.citation_style == "NAME-YEAR"
    got = {s.text: s.ref_id for s in doc.body_text[0].cite_spans}
    assert got == {
        "(Allen-Zhu & Li, 2019)": "BIBREF1",
        "(Allen-Zhu et al., 2019)": "BIBREF0",
        "(Sun et al., 2022a)": "BIBREF2",
        "(Sun et al., 2022b)": "BIBREF3",
        "(Sun et al., 2022c)": "BIBREF4",  # year and suffix read from Grobid's "2022c." title
        "(Sun et al., 2022d)": None,
        "Kim (2020)": "BIBREF5",
        "Kim et al. (2020)": "BIBREF6",
        "Kim, 2020": "BIBREF5",
    }
    assert doc.bib_entries["BIBREF4"].year == 2022
    assert doc.bib_entries["BIBREF4"].title == "Learning to reason"
    # the two-author paper lost its year in Grobid: "A & B, 2019" is still not the three-author one
    lost = _ny_bibl(
        [
            (["Allen-Zhu", "Li", "Song"], "2019", "A convergence theory for deep learning"),
            (["Allen-Zhu", "Li"], "", "What can resnet learn efficiently"),
        ]
    )
    body = '<div><head>Intro</head><p>As shown <ref type="bibr">(Allen-Zhu &amp; Li, 2019)</ref>.</p></div>'
    doc = parse_tei(_TEI.format(body=body, back="", bibl=lost).encode(), "ny2")
    assert [s.ref_id for s in doc.body_text[0].cite_spans] == [None]


def test_suffix_b_is_not_linked_to_the_entry_grobid_linked_as_a(shared_data):
    """paper25: Grobid links "(Sorensen et al., 2024a)" to b38 and leaves 2024b unlinked
    (b39 lost its year). b38 is 2024a, so 2024b must not be linked to it."""
    doc = parse_tei((FIDELITY_TEI / "paper25.tei.xml").read_bytes(), "paper25")
    spans = [s for p in _paras(doc) for s in p.cite_spans]
    a = [s.ref_id for s in spans if "Sorensen et al., 2024a" in s.text]
    b = [s.ref_id for s in spans if "Sorensen et al., 2024b" in s.text]
    assert a == ["BIBREF38"] and len(b) == 3
    assert all(r in (None, "BIBREF39") for r in b), b
    # Grobid's own a/b links stay as they were
    assert {s.ref_id for s in spans if "Brown et al., 2020a" in s.text} == {"BIBREF2"}
    assert {s.ref_id for s in spans if "Brown et al. (2020b)" in s.text} == {"BIBREF3"}


def test_two_author_name_only_citation_still_links(shared_landing):
    doc = parse_tei((shared_landing / "tei" / "2212.07286.tei.xml").read_bytes(), "2212.07286")
    spans = {s.text: s.ref_id for p in doc.body_text for s in p.cite_spans}
    key = spans["(Hrastinski and Wilbur)"]
    assert key and [a.last for a in doc.bib_entries[key].authors][:2] == ["Hrastinski", "Wilbur"]


# --------------------------------------------------------------- 3: garbled ranges


def test_garbled_ranges_give_one_span_per_target_and_no_invented_links():
    body = (
        '<div><head n="1">Intro</head><p>Garbled <ref type="bibr">[1-38-74]</ref> and '
        '<ref type="bibr" target="#b148">[149-183-215]</ref>; split <ref type="bibr" target="#b0">[1-3</ref>'
        '<ref type="bibr" target="#b7">8-24]</ref>; fine <ref type="bibr" target="#b2">[3]</ref>-'
        '<ref type="bibr" target="#b4">[5]</ref>, <ref type="bibr" target="#b9">[10-12]</ref> and repeated '
        '<ref type="bibr" target="#b30">[31,</ref> <ref type="bibr" target="#b30">31]</ref>.</p></div>'
    )
    doc = parse_tei(_TEI.format(body=body, back="", bibl=_bibl(220)).encode(), "garbled")
    p = doc.body_text[0]
    assert doc.citation_style == "BRACKET"
    for s in p.cite_spans:
        assert p.text[s.start : s.end] == s.text
    same_place = Counter((s.start, s.end, s.ref_id) for s in p.cite_spans if s.ref_id)
    assert max(same_place.values()) == 1  # never two spans with the same offsets and target
    by_text: dict[str, list] = {}
    for s in p.cite_spans:
        by_text.setdefault(s.text, []).append(s.ref_id)
    # a chain a-b-c has no single reading: what Grobid left unlinked stays unlinked
    assert by_text["[1-38-74]"] == [None]
    assert by_text["[149-183-215]"] == ["BIBREF148"]  # Grobid's own link is kept, nothing added
    # a range split over two refs is read per ref: "[1-3" and "8-24]", not a number 38
    assert "BIBREF37" not in {r for rs in by_text.values() for r in rs}
    assert sorted(by_text["[1-3"]) == ["BIBREF0", "BIBREF1", "BIBREF2"]
    assert by_text["8-24]"][0] == "BIBREF7"
    assert sorted(by_text["[3]-[5]"]) == ["BIBREF3"]
    assert sorted(by_text["[10-12]"]) == ["BIBREF10", "BIBREF11", "BIBREF9"]
    assert by_text["[31,"] == ["BIBREF30"] and by_text["31]"] == ["BIBREF30"]


def test_real_tei_has_no_duplicate_cite_spans(shared_data, shared_landing):
    files = sorted(DATA.glob("**/*.tei.xml")) + sorted((shared_landing / "tei").glob("*.xml"))
    files += sorted((DATA / "pdf_tei_pairs").glob("**/*.xml"))
    for path in files:
        doc = parse_tei(path.read_bytes(), path.name)
        for p in _paras(doc):
            same = Counter((s.start, s.end, s.ref_id) for s in p.cite_spans)
            assert not same or max(same.values()) == 1, (path.name, p.text[:60])
