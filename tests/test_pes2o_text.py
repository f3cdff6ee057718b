"""peS2o released text holds the paper's words only: the placeholders the parsers write for
formulas (Grobid's ``EQUATION`` paragraphs, s2orc_json's ``FORMULA``) stay in the structured
parse and never reach the text; an empty body is too few words, not another language."""

from __future__ import annotations

import json
import re

from conftest import DATA, LANDING

from corpus.parse.document import EqSpan, Paragraph, StructuredDoc
from corpus.parse.s2orc_json import read_s2orc_record
from corpus.parse.tei import parse_tei
from corpus.release.pes2o import body_paragraphs, compute_signals, release, select_s2orc

_PLACEHOLDER = re.compile(r"\b(?:EQUATION|FORMULA)\b")


def _real_tei() -> list:
    files = set(DATA.glob("**/*.tei.xml")) | set((DATA / "pdf_tei_pairs").glob("**/*.xml"))
    files |= set((DATA / "grobid_tei").glob("**/*.xml")) | set((LANDING / "tei").glob("*.xml"))
    return sorted(files)


def test_real_tei_release_text_has_no_equation_placeholders(shared_data, shared_landing):
    with_equations = kept = 0
    for path in _real_tei():
        doc = parse_tei(path.read_bytes(), path.name)
        if not any(p.text == "EQUATION" for p in doc.body_text):
            continue
        with_equations += 1  # the structured parse keeps them, with the formula in ref_entries
        assert all(not _PLACEHOLDER.search(t) for _, t in body_paragraphs(doc)), path.name
        sig = compute_signals(doc, doc.year or 2020)
        for out in release(doc, sig, "2024-01-01", "2020-01-01"):
            if out.document is not None:
                kept += out.source == "s2orc"
                assert not _PLACEHOLDER.search(out.document["text"]), (path.name, out.source)
    assert with_equations >= 15 and kept >= 10


def test_s2orc_records_release_text_has_no_equation_placeholders(shared_data):
    seen = 0  # doc2json output and S2ORC releases: "EQUATION" paragraphs with eq spans
    paths = sorted((DATA / "s2orc_family" / "s2orc-doc2json" / "s2orc").glob("*.json"))
    for path in paths + sorted((DATA / "pdf_tei_pairs" / "s2orc-doc2json").glob("*.json")):
        doc = read_s2orc_record(json.loads(path.read_text()))
        seen += any(p.text == "EQUATION" for p in doc.body_text)
        assert all(not _PLACEHOLDER.search(t) for _, t in body_paragraphs(doc)), path.name
    assert seen >= 1


def _doc(paragraphs: list[Paragraph]) -> StructuredDoc:
    return StructuredDoc(
        paper_id="p",
        source="grobid",
        title="A title",
        abstract=[Paragraph(text="An abstract of a paper about things.")],
        body_text=paragraphs,
        year=2020,
    )


def test_inline_formula_placeholders_go_and_real_formulas_stay():
    text = "Let FORMULA be given and x = y + 1 hold."
    spans = [
        EqSpan(start=4, end=11, text="FORMULA"),
        EqSpan(start=25, end=34, text="x = y + 1"),
    ]
    doc = _doc([Paragraph(text=text, eq_spans=spans, section="S")])
    assert body_paragraphs(doc) == [("S", "Let be given and x = y + 1 hold.")]
    assert doc.body_text[0].text == text  # the parse itself is unchanged


def test_empty_body_is_too_few_words_not_another_language():
    for body in ([], [Paragraph(text="EQUATION", eq_spans=[EqSpan(start=0, end=8, text="EQUATION")])]):
        sig = compute_signals(_doc(body))
        assert (sig.paragraphs, sig.words) == (0, 0)
        assert select_s2orc(sig, "v1").reason == "too_few_words"
    # a few words cld2 cannot place are too few words as well
    sig = compute_signals(_doc([Paragraph(text="x_1 = 3, y = 4", section="S")]))
    assert sig.paper_lang == "un" and select_s2orc(sig, "v1").reason == "too_few_words"
