"""benchmarks/latex_vs_latexml.py: the token alignment and the per-paper figures, on tiny inline
inputs (a LaTeXML XML written here, a StructuredDoc built here; no LaTeXML needed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from corpus.parse.document import BibEntry, Paragraph, RefEntry, Span, StructuredDoc

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "latex_vs_latexml.py"
_spec = importlib.util.spec_from_file_location("latex_vs_latexml", _PATH)
lvl = importlib.util.module_from_spec(_spec)
sys.modules["latex_vs_latexml"] = lvl  # its dataclasses look their module up
_spec.loader.exec_module(lvl)


def _toks(text: str) -> list[str]:
    return lvl.words(text)


def test_words_fold_case_and_math_alphabets() -> None:
    assert lvl.words("Non-linear 𝒙 = ℝ, Ĥ_2 (2018)") == ["non", "linear", "x", "r", "ĥ", "2", "2018"]


def test_align_identical_and_frequent_words_between_changes() -> None:
    ref = [t for i in range(300) for t in ("the", f"w{i}", "of", "a")]
    same = lvl.align(ref, ref)
    assert (same.lost, same.extra, same.blocks) == (0, 0, [])
    ours = list(ref)
    ours[21], ours[25] = "z5", "z6"  # "the w5 of a the w6" -> "the z5 of a the z6"
    got = lvl.align(ref, ours)
    # "of a the" between the two changes still agrees (a junk heuristic drops frequent words: 5, not 2)
    assert (got.lost, got.extra) == (2, 2)
    assert sorted(got.blocks) == [(["w5"], ["z5"]), (["w6"], ["z6"])]
    assert got.extra_share == pytest.approx(2 / len(ours))


def test_align_counts_a_lost_block_and_shows_it() -> None:
    ref = _toks("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu")
    ours = ref[:3] + ref[8:]
    got = lvl.align(ref, ours)
    assert (got.lost, got.extra) == (5, 0)
    assert got.lost_share == pytest.approx(5 / 12)
    assert got.blocks == [(["delta", "epsilon", "zeta", "eta", "theta"], [])]


def test_align_word_breaks_in_formulas_agree() -> None:
    got = lvl.align(_toks("where d s d t is the rate"), _toks("where ds dt is the rate"))
    assert (got.lost, got.extra, got.blocks) == (0, 0, [])


def test_align_moved_block_is_neither_lost_nor_extra() -> None:
    ack = _toks("we thank the referee for comments that improved this paper a lot")
    body = _toks("one two three four five six seven eight nine ten eleven twelve")
    appendix = _toks("appendix text with a proof of the lemma in section two")
    got = lvl.align(body + ack + appendix, body + appendix + ack)
    assert (got.lost, got.extra, got.blocks) == (0, 0, [])
    # a different block is still lost and extra
    other = _toks("completely different words replace our thanks here and now ok")
    got = lvl.align(body + ack + appendix, body + other + appendix)
    assert got.lost == len(ack) and got.extra == len(other)


_XML = """<?xml version="1.0" encoding="UTF-8"?>
<document xmlns="http://dlmf.nist.gov/LaTeXML">
  <title>A Tiny <emph>Paper</emph></title>
  <creator role="author"><personname>A. Author</personname></creator>
  <abstract><p>We study cats.</p></abstract>
  <note role="thanks">Funded by nobody.</note>
  <section xml:id="S1" labels="LABEL:intro">
    <tags><tag>1</tag><tag role="refnum">1</tag></tags>
    <title><tag close=" ">1</tag>Introduction</title>
    <para xml:id="S1.p1"><p>Non-<emph>linear</emph>ity of <Math mode="inline" tex="M_{\\nu}"><XMath><XMApp>
      <XMTok role="SUBSCRIPTOP"/><XMTok role="UNKNOWN">M</XMTok><XMTok role="UNKNOWN">ν</XMTok>
      </XMApp></XMath></Math> and <Math mode="inline" tex="\\hat{h}"><XMath><XMApp>
      <XMTok role="OVERACCENT">^</XMTok><XMTok role="UNKNOWN">h</XMTok></XMApp></XMath></Math>
      as <cite class="ltx_citemacro_citep">(Smith, <ref idref="bib.bib1">2001</ref>;
      <ref class="ltx_missing_citation" idref="doe">doe</ref>)</cite> show in Section <ref labelref="LABEL:sec2"
      idref="S2"><text class="ltx_ref_tag">2</text></ref><note role="footnote"><tags><tag>1</tag></tags>A
      footnote here.</note> with <Math mode="inline"><XMath><XMDual><XMRef idref="m1.1"/><XMWrap>
      <XMApp xml:id="m1.1"><XMTok meaning="times" role="MULOP">&#8290;</XMTok><XMTok>d</XMTok>
      <XMTok>s</XMTok></XMApp></XMWrap></XMDual></XMath></Math> steps.</p></para>
    <equation xml:id="S1.E1"><Math mode="display"><XMath><XMTok>E</XMTok></XMath></Math></equation>
    <figure xml:id="S1.F1"><tags><tag>Figure 1</tag></tags><caption><tag>Figure 1: </tag>A cat.</caption>
    </figure>
    <para><p>Then <ERROR class="undefined">\\foo</ERROR> ends <cite>[see <ref idref="bib.bib2">2</ref>,
      Eq. (1)]</cite>.</p></para>
    <theorem><tags><tag>Lemma 1</tag></tags><title class="ltx_runin"><tag><text font="bold">Lemma
      1</text></tag><text font="bold">.</text></title><para><p>Cats purr.</p></para></theorem>
  </section>
  <section xml:id="S2" labels="LABEL:sec2">
    <title><tag close=" ">2</tag>Methods and <Math mode="inline"><XMath><XMTok>x</XMTok></XMath></Math></title>
    <para><p>Done, see <ref labelref="LABEL:nope" class="ltx_missing_label" broken="1">LABEL:nope</ref>.</p></para>
  </section>
  <acknowledgements>We thank the cat.</acknowledgements>
  <bibliography><biblist>
    <bibitem key="smith" xml:id="bib.bib1"><tags><tag role="authors">Smith</tag></tags>
      <bibblock>Smith 2001</bibblock></bibitem>
    <bibitem key="roe" xml:id="bib.bib2"><tags><tag role="authors">Roe</tag></tags>
      <bibblock>Roe 2003</bibblock></bibitem>
  </biblist></bibliography>
</document>"""


def test_latexml_view_reads_the_parts_as_documented() -> None:
    view = lvl.latexml_view(_XML.encode())
    assert view.body == _toks(
        "Non-linearity of M ν and ĥ as show in Section with ds steps. Then ends see Eq. (1)."
        " Lemma 1. Cats purr. Done, see. We thank the cat. A footnote here."
    )
    assert view.headings == [("1", "Introduction"), ("2", "Methods and x")]
    assert (view.cites, view.cites_resolved) == (3, 2)
    assert view.refs == ["2", "??"]  # a label LaTeXML cannot find prints "??", as TeX does
    assert view.bib == 2
    assert view.errors == 1
    assert view.abstract == ["we", "study", "cats"]
    assert view.captions == ["a", "cat"]
    assert lvl.norm_title(view.title) == "a tiny paper"


def _ours() -> StructuredDoc:
    text = "Non-linearity of M_ν and ĥ as Smith (2001); Doe (2002) show in Section 2 with ds steps."
    cite1, cite2, ref = text.index("Smith (2001)"), text.index("Doe (2002)"), text.index("2 with")
    return StructuredDoc(
        paper_id="x",
        source="latex",
        title="A Tiny Paper",
        abstract=[Paragraph(text="We study cats.")],
        body_text=[
            Paragraph(
                text=text,
                section="Introduction",
                cite_spans=[
                    Span(start=cite1, end=cite1 + 12, text="Smith (2001)", ref_id="BIBREF0"),
                    Span(start=cite2, end=cite2 + 10, text="Doe (2002)", ref_id=None),
                ],
                ref_spans=[Span(start=ref, end=ref + 1, text="2", ref_id="SECREF1")],
            ),
            Paragraph(
                text="Then ends [see 2, Eq. (1)].",
                section="Introduction",
                cite_spans=[Span(start=15, end=16, text="2", ref_id="BIBREF1")],
            ),
            Paragraph(text="Lemma 1. Cats purr.", section="Introduction"),
            Paragraph(
                text="Done, see ??.",
                section="Methods and x",
                ref_spans=[Span(start=10, end=12, text="??", ref_id=None)],
            ),
            Paragraph(text="A footnote here.", section=""),
        ],
        back_matter=[Paragraph(text="We thank the cat.", section="Acknowledgements")],
        bib_entries={"BIBREF0": BibEntry(ref_id="BIBREF0"), "BIBREF1": BibEntry(ref_id="BIBREF1")},
        ref_entries={
            "FIGREF0": RefEntry(text="A cat.", type="figure", num="1"),
            "SECREF0": RefEntry(text="Introduction", type="other", num="1"),
            "SECREF1": RefEntry(text="Methods and x", type="other", num="2"),
        },
    )


def test_ours_view_mirrors_the_latexml_view() -> None:
    view = lvl.ours_view(_ours().model_dump())
    # cite texts out, back matter before the footnotes, which come last
    assert view.body == _toks(
        "Non-linearity of M_ν and ĥ as ; show in Section with ds steps. Then ends [see, Eq. (1)]."
        " Lemma 1. Cats purr. Done, see. We thank the cat. A footnote here."
    )
    assert view.headings == [("1", "Introduction"), ("2", "Methods and x")]
    assert (view.cites, view.cites_resolved, view.refs, view.bib) == (3, 2, ["2", "??"], 2)
    assert view.captions == ["a", "cat"]


def test_compare_agrees_on_the_same_paper_and_sees_a_lost_sentence() -> None:
    ref = lvl.latexml_view(_XML.encode())
    row = lvl.compare(ref, lvl.ours_view(_ours().model_dump()))
    assert (row["lost"], row["extra"]) == (0.0, 0.0)
    assert lvl.agrees(row) == {"headings": True, "cites": True, "refs": True}
    assert (row["headings_number_agree"], row["bib_latexml"], row["bib_ours"]) == (2, 2, 2)
    assert row["title_agree"] and not row["latexml_incomplete"]

    doc = _ours()
    doc.body_text[2] = Paragraph(text="Purr.", section="Introduction")  # "Lemma 1. Cats" lost
    doc.ref_entries["SECREF1"].num = "3"
    row = lvl.compare(ref, lvl.ours_view(doc.model_dump()))
    assert row["lost"] == pytest.approx(3 / len(ref.body), abs=1e-4)
    assert row["passages"][0][:3] == ["Lemma 1 Cats", "", 3]  # shown as printed
    assert row["headings_title_agree"] == 2 and row["headings_number_agree"] == 1


def test_norm_num_drops_brackets() -> None:
    assert [
        lvl.norm_num(t) for t in ("(3)", "[12]", " 2.1 ", "A.2", "??", "Section 2", "Fig. (6)", "S1")
    ] == [
        "3",
        "12",
        "2.1",
        "A.2",
        "??",
        "2",
        "6",
        "S1",
    ]
