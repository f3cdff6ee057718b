"""corpus.parse.latex / corpus.ingest.eprint on the hard real sources of ../shared/data/fidelity/latex
(.bbl styles, natbib labels, front matter, footnotes, PDF wrappers; see its README), and on
minimal reproductions where no real file shows a case."""

from __future__ import annotations

import re
import shutil
import tarfile
from pathlib import Path

import pytest
from conftest import DATA

from corpus.ingest.eprint import LatexSource, assemble_source, find_main_tex, load_eprint
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import parse_bibliography, parse_eprint, parse_latex

FIDELITY = DATA / "fidelity" / "latex"
_FIELD_NAME = re.compile(r"^(?:title|author|person|journal|year|booktitle|volume|pages|publisher)[A-Z(]")


def _parse_dir(name: str) -> StructuredDoc:
    root = next(p for p in (FIDELITY / name).iterdir() if p.is_dir())
    return parse_latex(assemble_source(root, find_main_tex(root)), name)


@pytest.fixture(scope="module")
def docs(shared_data) -> dict[str, StructuredDoc]:
    names = [
        "arm61+msd-errors",
        "arm61+reporting_sampling",
        "cgois+pam_classicality",
        "TeamLEGWORK+LEGWORK-paper",
        "katiebreivik+BackPop",
        "bruce-edelman+CoveringYourBasis",
        "dfm+araa-gps",
        "teorth+equational_theories",
    ]
    return {n: _parse_dir(n) for n in names}


def _paragraphs(doc: StructuredDoc):
    return doc.abstract + doc.body_text + doc.back_matter


def _spans_exact(doc: StructuredDoc) -> None:
    for p in _paragraphs(doc):
        for s in p.cite_spans + p.ref_spans:
            assert p.text[s.start : s.end] == s.text


# --------------------------------------------------------------- 4: .bbl entries


def test_bibinfo_bbl_entries_are_decoded(docs):
    doc = docs["arm61+msd-errors"]  # naturemag: \bibinfo{author}{Sendner, C.} ...
    e = doc.bib_entries["BIBREF0"]
    assert (
        e.title == "Interfacial water at hydrophobic and hydrophilic surfaces: Slip, viscosity, and diffusion"
    )
    assert [a.last for a in e.authors] == ["Sendner", "Horinek", "Bocquet", "Netz"]
    assert [a.first for a in e.authors] == ["C.", "D.", "L.", "R."]
    assert (e.year, e.venue, e.volume, e.pages) == (2009, "Langmuir", "25", "10768--10781")
    assert e.raw_text.startswith("Sendner, C., Horinek, D., Bocquet, L. & Netz, R. R. Interfacial water")
    assert [a.last for a in doc.bib_entries["BIBREF1"].authors] == ["Shimizu"]  # "\emph{et al.}" is no name
    for name in ("arm61+msd-errors", "arm61+reporting_sampling", "cgois+pam_classicality"):
        for e in docs[name].bib_entries.values():
            for text in [e.title, e.venue, e.raw_text] + [a.last for a in e.authors]:
                assert not _FIELD_NAME.match(text) and "\\" not in text, (name, e.ref_id, text)


def test_spaced_bibfield_bbl_and_titles_from_the_bib_file(docs):
    doc = docs["cgois+pam_classicality"]  # apsrev4-2: article titles disabled in the .bbl
    bell = doc.bib_entries["BIBREF0"]
    assert [a.last for a in bell.authors] == ["Bell"] and bell.authors[0].first == "J."
    assert (bell.year, bell.venue, bell.volume, bell.pages) == (1964, "Physics Physique Fizika", "1", "195")
    assert bell.title == "On the einstein podolsky rosen paradox"  # same key in bibliography.bib
    wiseman = next(e for e in doc.bib_entries.values() if e.authors and e.authors[0].last == "Wiseman")
    assert [a.last for a in wiseman.authors] == ["Wiseman", "Jones", "Doherty"]
    assert wiseman.other_ids["DOI"] == ["10.1103/PhysRevLett.98.140402"]
    assert sum(1 for e in doc.bib_entries.values() if e.title) >= 40
    # LEGWORK's aasjournal .bbl has no titles at all; its bib.bib has them under the same keys
    legwork = docs["TeamLEGWORK+LEGWORK-paper"]
    gw = legwork.bib_entries["BIBREF0"]
    assert gw.title == "GW170817: Observation of Gravitational Waves from a Binary Neutron Star Inspiral"
    assert gw.other_ids["DOI"] == ["10.1103/PhysRevLett.119.161101"] and gw.year == 2017


def test_author_year_bbl_venues_years_and_repeated_authors(docs):
    araa = docs[
        "dfm+araa-gps"
    ]  # "{Abbott} BP, ... 2020. \textit{Classical and Quantum Gravity} 37(5):055002"
    e = araa.bib_entries["BIBREF0"]
    assert e.title != "Classical and Quantum Gravity" and e.venue == "Classical and Quantum Gravity"
    basis = docs["bruce-edelman+CoveringYourBasis"]  # "—. 2019b, ApJL, 882, L24": same authors as before
    a, b = basis.bib_entries["BIBREF0"], basis.bib_entries["BIBREF1"]
    assert a.venue == "Physical Review X" and b.year == 2019
    assert [x.last for x in b.authors] == [x.last for x in a.authors]
    assert not any(re.match(r"^[a-z],", e.venue) for e in basis.bib_entries.values())


def test_acm_and_elsevier_bbl_minimal():
    acm = r"""
\bibitem[Abadi et~al\mbox{.}(2016)]%
        {abadi2016}
\bibfield{author}{\bibinfo{person}{Mart{\'\i}n Abadi}, \bibinfo{person}{Paul Barham}, {and} \bibinfo{person}{Xiaoqiang Zheng}.} \bibinfo{year}{2016}\natexlab{}.
\newblock \showarticletitle{TensorFlow: a system for large-scale machine learning}. In \bibinfo{booktitle}{\emph{12th USENIX Symposium on Operating Systems Design and Implementation (OSDI 16)}}. \bibinfo{pages}{265--283}.
\newblock
\showDOI{\url{https://doi.org/10.5555/3026877.3026899}}

\bibitem[Bertsekas(1982)]%
        {bertsekas1982}
\bibfield{author}{\bibinfo{person}{Dimitri~P. Bertsekas}.} \bibinfo{year}{1982}\natexlab{}.
\newblock \showarticletitle{Projected Newton methods for optimization problems with simple constraints}.
\newblock \bibinfo{journal}{\emph{SIAM Journal on Control and Optimization}} \bibinfo{volume}{20}, \bibinfo{number}{2} (\bibinfo{year}{1982}), \bibinfo{pages}{221--246}.
\newblock \showeprint[arXiv]{1234.56789}
"""
    entries = list(parse_bibliography(acm).values())
    assert entries[0].title == "TensorFlow: a system for large-scale machine learning"
    assert [a.last for a in entries[0].authors] == ["Abadi", "Barham", "Zheng"]
    assert entries[0].authors[0].first == "Martín"
    assert entries[0].venue.startswith("12th USENIX Symposium")
    assert entries[0].other_ids["DOI"] == ["10.5555/3026877.3026899"] and entries[0].year == 2016
    b = entries[1]
    assert (b.title, b.year, b.venue) == (
        "Projected Newton methods for optimization problems with simple constraints",
        1982,
        "SIAM Journal on Control and Optimization",
    )
    assert [(a.first, a.last) for a in b.authors] == [("Dimitri", "Bertsekas")]
    assert (b.volume, b.issue, b.pages) == ("20", "2", "221--246")
    els = r"""\bibitem{b1}
\bibinfo{author}{A.~Smith}, \bibinfo{author}{B.~Jones},
  \bibinfo{title}{A study of things}, \bibinfo{journal}{J. Things}
  \bibinfo{volume}{12} (\bibinfo{year}{2001}) \bibinfo{pages}{1--10}.
\newblock \href {https://doi.org/10.1016/j.x.2001.01.001} {\path{doi:10.1016/j.x.2001.01.001}}.
"""
    e = parse_bibliography(els)["b1"]
    assert (e.title, e.venue, e.year) == ("A study of things", "J. Things", 2001)
    assert [a.last for a in e.authors] == ["Smith", "Jones"]
    assert e.other_ids["DOI"] == ["10.1016/j.x.2001.01.001"]


def test_free_form_bibitem_yields_a_title():
    bbl = r"""\begin{thebibliography}{9}
\bibitem{smith} A.~Smith, B.~Jones, and C.~Lee. Deep things in shallow water. \emph{J. Stuff}, 12:1--9, 2019.
\bibitem{lee} J.~K. Lee and M.~Park, \emph{On the theory of everything and more}, Ann. Math. \textbf{3} (1999), 1--2.
\bibitem{cox} D.~R. Cox. \newblock Regression models and life-tables. \newblock \emph{JRSS B}, 34:187--220, 1972.
\end{thebibliography}"""
    got = {k: (e.title, [a.last for a in e.authors], e.year) for k, e in parse_bibliography(bbl).items()}
    assert got == {
        "smith": ("Deep things in shallow water", ["Smith", "Jones", "Lee"], 2019),
        "lee": ("On the theory of everything and more", ["Lee", "Park"], 1999),
        "cox": ("Regression models and life-tables", ["Cox"], 1972),
    }


# --------------------------------------------------------------- 5: natbib labels


_NATBIB = r"""\documentclass{%s}
\usepackage{natbib}
\begin{document}
\section{Intro}
Textual \citet{barthe} and parenthetical \citep{smith}, plain \cite{nat} and \citep[see][p.~3]{barthe,smith}.
\begin{thebibliography}{3}
\bibitem[\protect\citeauthoryear{Barthe, Gr\'egoire, and Pastawski}{Barthe et~al.}{2006}]{barthe}
G.~Barthe, B.~Gr\'egoire, and F.~Pastawski. Practical verification. In \emph{Proc. X}, 2006.
\bibitem[Smith et~al.(2019)Smith, Jones, and Lee]{smith}
A.~Smith, B.~Jones, and C.~Lee. Deep things. \emph{J. Stuff}, 2019.
\bibitem[{Nat and Lab}(2020{\natexlab{a}})]{nat}
N.~Nat and L.~Lab. 2020{\natexlab{a}}. \newblock Title here. \newblock \emph{Venue}.
\end{thebibliography}
\end{document}
"""


def test_natbib_labels_print_as_the_paper_prints_them():
    doc = parse_latex(LatexSource(main="main.tex", text=_NATBIB % "article"), "natbib")
    assert doc.citation_style == "NAME-YEAR"
    p = doc.body_text[0]
    assert p.text == (
        "Textual Barthe et al. (2006) and parenthetical (Smith et al., 2019), plain Nat and Lab (2020a) "
        "and (see Barthe et al., 2006; Smith et al., 2019, p. 3)."
    )
    assert [(s.text, s.ref_id) for s in p.cite_spans] == [
        ("Barthe et al. (2006)", "BIBREF0"),
        ("Smith et al., 2019", "BIBREF1"),
        ("Nat and Lab (2020a)", "BIBREF2"),
        ("Barthe et al., 2006", "BIBREF0"),
        ("Smith et al., 2019", "BIBREF1"),
    ]
    _spans_exact(doc)
    # REVTeX prints numbers whatever the labels say (natbib's \citet: "Barthe et al. [1]")
    rev = parse_latex(LatexSource(main="main.tex", text=_NATBIB % "revtex4-2"), "revtex")
    assert rev.citation_style == "BRACKET"
    assert [s.text for s in rev.body_text[0].cite_spans] == ["Barthe et al. [1]", "[2]", "[3]", "1", "2"]
    assert rev.body_text[0].text.endswith("and [see 1, 2, p. 3].")  # one pair of brackets (issue 34)


def test_acl_style_cite_is_parenthetical():
    text = (_NATBIB % "article").replace("\\usepackage{natbib}", "\\usepackage{acl2020}")
    doc = parse_latex(LatexSource(main="main.tex", text=text), "acl")
    assert "plain (Nat and Lab, 2020a)" in doc.body_text[0].text


def test_real_author_year_papers_print_names_and_years(docs):
    for name in ("TeamLEGWORK+LEGWORK-paper", "katiebreivik+BackPop", "bruce-edelman+CoveringYourBasis"):
        doc = docs[name]
        assert doc.citation_style == "NAME-YEAR"
        spans = [s for p in _paragraphs(doc) for s in p.cite_spans]
        assert spans and all(re.search(r"(?:19|20)\d\d[a-z]?\)?$|n\.d\.", s.text) for s in spans), name
        assert not any("[" in s.text for s in spans)


# --------------------------------------------------------------- 6: headings, footnotes, front matter


def test_texorpdfstring_keeps_one_argument(docs):
    sections = {p.section for p in docs["TeamLEGWORK+LEGWORK-paper"].body_text}
    assert "Derivations::Conversions and definitions (utils)" in sections
    assert not any("utilsutils" in s or "evolevol" in s for s in sections)


def test_footnotes_are_paragraphs_with_their_cites(docs):
    doc = docs["teorth+equational_theories"]
    foot = [p for p in doc.body_text if p.text.startswith("See also") and "gentler exposition" in p.text]
    assert len(foot) == 1 and foot[0].section == ""
    assert [s.ref_id is not None for s in foot[0].cite_spans] == [True]
    _spans_exact(doc)
    # the sentence the footnote hung on is intact, without the footnote text
    assert any("this is the case for Vampire [" in p.text and "gentler" not in p.text for p in doc.body_text)
    for name in ("TeamLEGWORK+LEGWORK-paper", "katiebreivik+BackPop"):
        feet = [p for p in docs[name].body_text if p.section == ""]
        assert feet and any(p.cite_spans for p in feet), name
    # captions stay ref entries; their cites print as in the paper (no "\\cite", no key)
    caption = docs["dfm+araa-gps"].ref_entries["FIGREF7"].text
    assert caption.startswith("Schematic of the multidimensional GP framework of Rajpaul et al. (2015) for")


def test_front_matter_is_not_body_text(docs):
    msd = docs["arm61+msd-errors"]
    assert msd.title == (
        "Accurate Estimation of Diffusion Coefficients and their Uncertainties from Computer Simulation"
    )
    leaked = ("Tom Wagg", "Andrew R. McCluskey", "GPR for Astronomy", "University of Bristol", "@")
    for name, doc in docs.items():
        for p in doc.body_text + doc.back_matter:
            assert not any(w in p.text[:200] for w in leaked if p.section == ""), (name, p.text[:120])
        assert doc.body_text[0].section or doc.body_text[0].text[:1].isupper(), name
    assert msd.body_text[0].section == "Introduction"
    assert docs["TeamLEGWORK+LEGWORK-paper"].body_text[0].section == "Introduction"


# --------------------------------------------------------------- 7: e-prints that wrap a PDF


@pytest.mark.parametrize(
    ("repo", "wrapper", "pdf"),
    [
        ("ropensci+RefManageR", "manual.Rnw", "RefManageR.pdf"),
        ("fabian-s+spikeSlabGAM", "UsingSpikeSlabGAM-wrapper.Rnw", "UsingSpikeSlabGAM-precompiled.pdf"),
    ],
)
def test_pdf_wrapper_eprint_is_skipped(shared_data, tmp_path: Path, repo, wrapper, pdf):
    src = FIDELITY / repo / "vignettes"
    eprint = tmp_path / "eprint.tar.gz"
    with tarfile.open(eprint, "w:gz") as tar:  # an e-print as arXiv would serve it (.Rnw renamed .tex)
        tar.add(src / wrapper, arcname="main.tex")
        tar.add(src / pdf, arcname=pdf)
    res = parse_eprint(eprint, "wrapper", tmp_path / "scratch")
    assert res.doc is None and res.failure is not None
    assert (res.status, res.failure.code) == ("skipped", "pdf_wrapper")
    _, source, failure = load_eprint(eprint, tmp_path / "scratch2")
    assert source is None and failure.code == "pdf_wrapper"
    shutil.rmtree(tmp_path / "scratch2")


def test_includepdf_of_a_figure_page_in_a_real_paper_is_not_a_wrapper(tmp_path: Path):
    body = " ".join(["Words of a real paper."] * 60)
    tex = (
        "\\documentclass{article}\\usepackage{pdfpages}\\begin{document}\\section{Intro}"
        f"{body}\n\n\\includepdf[pages=1]{{fig.pdf}}\n\\end{{document}}\n"
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.tex").write_text(tex)
    eprint = tmp_path / "e.tar.gz"
    with tarfile.open(eprint, "w:gz") as tar:
        tar.add(tmp_path / "src" / "main.tex", arcname="main.tex")
    res = parse_eprint(eprint, "real", tmp_path / "scratch")
    assert res.status == "ok" and res.doc is not None
