"""Citation markup prints as LaTeX prints it (issue 34, E): numeric lists and ranges
("[1, 2, 3]", "[1–3]", IEEE's "[1]–[3]"), post-notes, alphabetic labels ("[Knu84]"),
REVTeX's merged ``*keys``, apacite's ``\\cite<e.g.>``, csquotes' cited quotations and a .bib
entry with a repeated field, which BibTeX keeps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import DATA

from corpus.ingest.eprint import LatexSource, assemble_source, find_main_tex
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import parse_bibliography, parse_latex

_BIB = "\n".join(
    f"@article{{k{i}, author={{{a}}}, title={{Title {i}}}, year={{{y}}}, journal={{J}}}}"
    for i, (a, y) in enumerate(
        [
            ("Knuth, Donald", 1984),
            ("Lamport, Leslie and Knuth, Donald", 1994),
            ("Abel, A. and Baker, B. and Cole, C. and Dahl, D.", 2001),
            ("Knuth, Donald", 1984),
            ("Milner, Robin and Tofte, Mads and Harper, Robert", 1990),
        ],
        start=1,
    )
)
_BODY = r"""\section{Intro}
Runs \cite{k1,k2,k3}, \cite{k3,k1,k5}, two \cite{k1,k2}, noted \cite[Thm.~2]{k4} and \cite{k2,zz}.
"""


def _doc(
    tmp_path: Path,
    preamble: str,
    back: str = "\\bibliographystyle{unsrt}\\bibliography{refs}",
    cls: str = "article",
) -> StructuredDoc:
    root = tmp_path / "e"
    root.mkdir(exist_ok=True)
    (root / "main.tex").write_text(
        f"\\documentclass{{{cls}}}\n{preamble}\n\\begin{{document}}\n{_BODY}\n{back}\n\\end{{document}}\n"
    )
    (root / "refs.bib").write_text(_BIB)
    return parse_latex(assemble_source(root, root / "main.tex"), "t")


@pytest.mark.parametrize(
    ("preamble", "cls", "text"),
    [
        ("", "article", "Runs [1, 2, 3], [3, 1, 4], two [1, 2], noted [5, Thm. 2] and [2, ?]."),
        (
            "\\usepackage[numbers]{natbib}",
            "article",
            "Runs [1, 2, 3], [3, 1, 4], two [1, 2], noted [5, Thm. 2] and [2, ?].",
        ),
        (
            "\\usepackage[numbers,sort&compress]{natbib}",
            "article",
            "Runs [1–3], [1, 3, 4], two [1, 2], noted [5, Thm. 2] and [2, ?].",
        ),
        ("\\usepackage{cite}", "article", "Runs [1–3], [1, 3, 4], two [1, 2], noted [5, Thm. 2] and [2, ?]."),
        ("", "revtex4-2", "Runs [1–3], [1, 3, 4], two [1, 2], noted [5, Thm. 2] and [2, ?]."),
        ("", "IEEEtran", "Runs [1], [2], [3], [3], [1], [4], two [1], [2], noted [5, Thm. 2] and [2], [?]."),
        (
            "\\usepackage{cite}",
            "IEEEtran",
            "Runs [1]–[3], [1], [3], [4], two [1], [2], noted [5, Thm. 2] and [2], [?].",
        ),
    ],
)
def test_numeric_citations_of_several_keys(tmp_path: Path, preamble: str, cls: str, text: str) -> None:
    doc = _doc(tmp_path, preamble, cls=cls)
    p = doc.body_text[0]
    assert p.text == text
    spans = p.cite_spans
    assert all(p.text[s.start : s.end] == s.text for s in spans)
    # every cited key that exists is linked once per citation, a range once per entry it covers
    assert [s.ref_id for s in spans if s.ref_id][:3] == ["BIBREF0", "BIBREF1", "BIBREF2"]
    assert sum(1 for s in spans if s.ref_id) == 3 + 3 + 2 + 1 + 1
    assert sum(1 for s in spans if s.ref_id is None) == 1


def test_real_paper_with_the_cite_package_sorts_and_compresses(shared_data) -> None:
    """engrafo 1708.00137 (quantumarticle + ``\\usepackage{cite}``) cites
    ``\\cite{wiseman-steering-2007, cavalcanti-steering-2016, uola-steering-2020}``."""
    root = DATA / "latex_sources" / "engrafo" / "1708.00137"
    doc = parse_latex(assemble_source(root, find_main_tex(root)), "1708.00137")
    groups = [
        re.findall(r"\d+", m.group())
        for p in doc.body_text
        for m in re.finditer(r"\[\d+(?:[–,] ?\d+)+\]", p.text)
    ]
    assert groups, "multi-key citations print in one pair of brackets"
    for g in groups:  # sorted, and three consecutive numbers or more always a range
        assert [int(x) for x in g] == sorted(int(x) for x in g)
    assert not any(re.search(r"\[\d+\], \[\d+\]", p.text) for p in doc.body_text)
    linked = [s for p in doc.body_text for s in p.cite_spans]
    assert linked and all(s.ref_id for s in linked)


def test_alphabetic_labels(tmp_path: Path) -> None:
    """BibTeX's alpha style and biblatex's alphabetic print labels, not numbers; from the .bib
    alone they are made as the styles make them (a second Knu84 is Knu84a/b)."""
    doc = _doc(tmp_path, "", back="\\bibliographystyle{alpha}\\bibliography{refs}")
    assert doc.body_text[0].text == (
        "Runs [Knu84a, LK94, ABCD01], [ABCD01, Knu84a, MTH90], two [Knu84a, LK94], "
        "noted [Knu84b, Thm. 2] and [LK94, ?]."
    )
    blx = _doc(
        tmp_path,
        "\\usepackage[style=alphabetic]{biblatex}\\addbibresource{refs.bib}",
        back="\\printbibliography",
    )
    assert blx.body_text[0].text == (
        "Runs [Knu84a; LK94; Abe+01], [Abe+01; Knu84a; MTH90], two [Knu84a; LK94], "
        "noted [Knu84b, Thm. 2] and [LK94; ?]."
    )
    bbl = r"""\entry{knuth84}{book}{}
  \name{author}{1}{}{{{hash=1}{Knuth}{K\bibinitperiod}{Donald}{D\bibinitperiod}{}{}{}{}}}
  \field{labelalpha}{Knu84}
  \field{extraalpha}{2}
  \field{title}{The TeXbook}
  \field{year}{1984}
\endentry"""
    item = parse_bibliography(bbl)["knuth84"]
    assert item.title == "The TeXbook"
    text = "\\documentclass{article}\\usepackage[style=alphabetic]{biblatex}\\begin{document}See \\cite{knuth84}.\\end{document}"
    doc = parse_latex(LatexSource(main="m.tex", text=text, bbl=bbl), "t")
    assert doc.body_text[0].text == "See [Knu84b]."


def test_revtex_merged_keys_print_one_number(tmp_path: Path) -> None:
    """REVTeX (and mcite): ``\\cite{a,*b,*c}`` merges b and c into a's entry: one label."""
    root = tmp_path / "e"
    root.mkdir()
    (root / "main.tex").write_text(
        "\\documentclass{revtex4-2}\n\\begin{document}\nMerged \\cite{k1,*k2,*k3} and \\cite{k5}.\n"
        "\\bibliography{refs}\n\\end{document}\n"
    )
    (root / "refs.bib").write_text(_BIB)
    doc = parse_latex(assemble_source(root, root / "main.tex"), "t")
    p = doc.body_text[0]
    assert p.text.startswith("Merged [1] and [")
    assert [s.text for s in p.cite_spans][0] == "[1]" and "[?]" not in p.text


def test_apacite_prenote_in_angle_brackets(tmp_path: Path) -> None:
    root = tmp_path / "e"
    root.mkdir()
    (root / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{apacite}\n\\begin{document}\n"
        "Known \\cite<e.g.,>[p.~3]{k1} and \\citeA<see>{k2}.\n\\bibliographystyle{apacite}\\bibliography{refs}\n\\end{document}\n"
    )
    (root / "refs.bib").write_text(_BIB)
    doc = parse_latex(assemble_source(root, root / "main.tex"), "t")
    assert doc.body_text[0].text == "Known (e.g., Knuth, 1984, p. 3) and see Lamport and Knuth (1994)."
    assert all(s.ref_id for s in doc.body_text[0].cite_spans)


def test_csquotes_cited_quotations(tmp_path: Path) -> None:
    root = tmp_path / "e"
    root.mkdir()
    (root / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{csquotes}\n\\begin{document}\n"
        "He wrote \\textcquote[p.~5]{k1}{premature optimisation}.\n\n"
        "\\begin{displayquote}[{\\cite[p.~7]{k2}}]\nA long quotation.\n\\end{displayquote}\n"
        "\\bibliographystyle{plain}\\bibliography{refs}\n\\end{document}\n"
    )
    (root / "refs.bib").write_text(_BIB)
    doc = parse_latex(assemble_source(root, root / "main.tex"), "t")
    texts = [p.text for p in doc.body_text]
    assert texts[0] == "He wrote “premature optimisation” [1, p. 5]."
    assert "A long quotation." in " ".join(texts) and "[2, p. 7]" in " ".join(texts)
    assert "k2" not in " ".join(texts) and "7]" not in texts[-1][:3]


def test_bib_entry_with_a_repeated_field_is_kept() -> None:
    """BibTeX warns about a repeated field and keeps the first value; the entry is not lost."""
    bib = """@string{jfm = "J. Fluid Mech."}
@article{rep2020, author = {Doe, Jane}, title = {{Repeated} fields}, keywords = {a}, keywords = {b},
  journal = jfm, year = 2020}
@article{other, author = {Roe, R.}, title = {Other}, year = 2019}
"""
    got = parse_bibliography(bib)
    assert set(got) == {"rep2020", "other"}
    e = got["rep2020"]
    assert (e.title, e.venue, e.year, e.authors[0].last) == ("Repeated fields", "J. Fluid Mech.", 2020, "Doe")
