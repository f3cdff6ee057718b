"""Bibliographies and citation labels as LaTeX prints them (issues 43 and 44, AA): a paper that
prints two lists (its BibTeX ``\\bibliography`` and a hand-written ``thebibliography``), an entry
without a year in an author-year .bbl, acmart's ``\\shortcite``, natbib-family commands the parser
did not know, and the citation mode decided from what natbib is told."""

from __future__ import annotations

from pathlib import Path

from conftest import DATA

from corpus.ingest.eprint import assemble_source
from corpus.parse.latex import parse_latex

_BIB = "\n".join(
    f"@article{{b{i}, author={{Author{i}, A.}}, title={{Bib title {i}}}, year={{{2000 + i}}}, journal={{J}}}}"
    for i in range(1, 8)
)


def _eprint(tmp_path: Path, main: str, files: dict[str, str]):
    root = tmp_path / "e"
    root.mkdir(parents=True)
    (root / "main.tex").write_text(main)
    for name, text in files.items():
        (root / name).write_text(text)
    return parse_latex(assemble_source(root, root / "main.tex"), "t")


def test_bibtex_list_and_hand_written_list_are_both_read(tmp_path: Path) -> None:
    """Issue 43: ``\\bibliography{refs}`` (7 .bib entries, no .bbl shipped) and a hand-written
    list of 2: both print, each numbered from 1; every citation resolves."""
    main = r"""\documentclass{article}
\begin{document}
\section{Intro}
Known \cite{b1,b2} and \cite{b7}, data from \cite{h1} and \cite{h2}, also \cite{b3,b4,b5,b6}.
\bibliographystyle{unsrt}
\bibliography{refs}
\section*{Data references}
\begin{thebibliography}{9}
\bibitem{h1} D. Keeper, ``Hand-written one,'' Data J. 1 (2020).
\bibitem{h2} E. Keeper, ``Hand-written two,'' Data J. 2 (2021).
\end{thebibliography}
\end{document}
"""
    doc = _eprint(tmp_path, main, {"refs.bib": _BIB})
    p = doc.body_text[0]
    assert "?" not in p.text, p.text
    assert p.text.startswith("Known [1, 2] and [3], data from [1] and [2], also [4, 5, 6, 7].")
    titles = [e.title for e in doc.bib_entries.values()]
    assert titles == [f"Bib title {i}" for i in (1, 2, 7, 3, 4, 5, 6)] + [
        "Hand-written one",
        "Hand-written two",
    ]
    assert list(doc.bib_entries) == [f"BIBREF{i}" for i in range(9)]
    assert all(s.ref_id for s in p.cite_spans)
    hand = [s.ref_id for s in p.cite_spans if s.text in ("[1]", "[2]")]
    assert hand == ["BIBREF7", "BIBREF8"]


def test_a_list_that_goes_on_from_the_counter(tmp_path: Path) -> None:
    """Nature's template: the "Methods References" list redefines thebibliography to set enumiv to
    the main list's size, so it goes on from there (LaTeX prints [3], not [1])."""
    main = r"""\documentclass{article}
\begin{document}
Main \cite{b1,b2}; methods \cite{h1}.
\bibliographystyle{unsrt}
\bibliography{refs}
\let\oldthebibliography=\thebibliography
\let\oldendthebibliography=\endthebibliography
\renewenvironment{thebibliography}[1]{
    \oldthebibliography{#1}
    \setcounter{enumiv}{2}
}{\oldendthebibliography}
\begin{thebibliography}{10}
\bibitem{h1} D. Keeper, ``Hand-written one,'' Data J. 1 (2020).
\end{thebibliography}
\end{document}
"""
    doc = _eprint(tmp_path, main, {"refs.bib": _BIB})
    assert doc.body_text[0].text == "Main [1, 2]; methods [3]."


def test_bbl_list_and_hand_written_list_in_print_order(tmp_path: Path) -> None:
    """With the .bbl shipped, it prints where ``\\bibliography`` stands: here after the
    hand-written list; a key defined twice is read once."""
    bbl = r"""\begin{thebibliography}{2}
\bibitem{b1} A. Author1, ``Bbl title one,'' J 1 (2001).
\bibitem{h1} D. Keeper, ``Duplicate,'' Data J. 1 (2020).
\end{thebibliography}"""
    main = r"""\documentclass{article}
\begin{document}
See \cite{h1} and \cite{b1}.
\begin{thebibliography}{9}
\bibitem{h1} D. Keeper, ``Hand-written one,'' Data J. 1 (2020).
\end{thebibliography}
\bibliography{main}
\end{document}
"""
    doc = _eprint(tmp_path, main, {"main.bbl": bbl})
    assert [e.title for e in doc.bib_entries.values()] == ["Hand-written one", "Bbl title one"]
    assert doc.body_text[0].text == "See [1] and [1]."
    assert [s.ref_id for s in doc.body_text[0].cite_spans] == ["BIBREF0", "BIBREF1"]


_NAMED_BBL = r"""\begin{thebibliography}{3}
\bibitem[{Nishida et~al.(2016)Nishida, Smith, and Lee}]{nishida}
Nishida, K., Smith, J., and Lee, A. 2016. Reading things. \newblock In {\em Proc. Things}.
\bibitem[{{Lumerical Solutions, Inc.}()}]{lumerical}
{Lumerical Solutions, Inc.}, \url{http://www.lumerical.com/tcad-products/mode/}
\bibitem[{Ortiz(2019)}]{ortiz}
Ortiz, M. 2019. A title. \newblock {\em J. Stuff}, 1:2--3.
\end{thebibliography}"""


def test_entry_without_a_year_prints_its_number(tmp_path: Path) -> None:
    """achemso.bst writes natbib labels for a numeric class; an entry without a year has
    "{Lumerical Solutions, Inc.}()": LaTeX prints its number, not the label."""
    main = "\\documentclass[journal=jpclcd]{achemso}\n\\begin{document}\nSimulated with \\cite{lumerical} and \\cite{ortiz}.\n\\bibliography{main}\n\\end{document}\n"
    doc = _eprint(tmp_path, main, {"main.bbl": _NAMED_BBL})
    assert doc.body_text[0].text == "Simulated with [2] and [3]."


def test_real_revtex_entry_without_a_year(shared_data) -> None:
    """cgois+pam_classicality (REVTeX, apsrev's natbib labels): "Moreno et~al.()" has no year;
    the paper prints [24], not the label."""
    root = DATA / "fidelity/latex/cgois+pam_classicality/arXiv"
    doc = parse_latex(assemble_source(root, root / "main.tex"), "pam")
    spans = [s.text for p in doc.body_text for s in p.cite_spans]
    assert not [t for t in spans if "()" in t or "Moreno" in t]
    assert any(t.endswith("24]") or t == "[24]" for t in spans)


def test_acmart_shortcite_and_natbib_family_commands(tmp_path: Path) -> None:
    """acmart's \\shortcite is \\citeyearpar in author-year mode (\\cite in numeric mode);
    \\citefullauthor prints the full author list; biblatex-style \\citetitle the title."""
    body = (
        "Nishida et al.~\\shortcite{nishida} showed it, as did \\citefullauthor{nishida} and "
        "\\citeauthor{ortiz}~\\citeyear{ortiz}; see \\citeNN{ortiz}.\n"
    )
    main = (
        "\\documentclass[sigconf]{acmart}\n\\citestyle{acmauthoryear}\n\\begin{document}\n"
        + body
        + "\\bibliography{main}\n\\end{document}\n"
    )
    doc = _eprint(tmp_path, main, {"main.bbl": _NAMED_BBL})
    assert doc.body_text[0].text == (
        "Nishida et al. (2016) showed it, as did Nishida, Smith, and Lee and Ortiz 2019; see (2019)."
    )
    assert all(s.ref_id for s in doc.body_text[0].cite_spans)
    numeric = _eprint(
        tmp_path / "n", main.replace("\\citestyle{acmauthoryear}\n", ""), {"main.bbl": _NAMED_BBL}
    )
    assert numeric.body_text[0].text.startswith(
        "Nishida et al. [1] showed it, as did Nishida, Smith, and Lee"
    )


def _mode(tmp_path: Path, preamble: str, files: dict[str, str], cls: str = "article") -> str:
    bib = "@article{a, author={Smith, John}, title={T}, year={2019}, journal={J}}"
    main = (
        f"\\documentclass{cls}\n{preamble}\n\\begin{{document}}\nSee \\citep{{a}}.\n"
        "\\bibliographystyle{oddstyle}\n\\bibliography{refs}\n\\end{document}\n"
    )
    doc = _eprint(tmp_path, main, {"refs.bib": bib, **files})
    return doc.body_text[0].text


_AUTHOR_YEAR_BST = """FUNCTION {output.bibitem}
{ newline$
  "\\bibitem[{" write$
  label write$
  ")" make.full.names duplicate$ short.list =
     { pop$ }
     { * }
   if$
  "}]{" * write$
  cite$ write$
  "}" write$
  newline$
  ""
  before.all 'output.state :=
}
"""
_NUMERIC_BST = """FUNCTION {output.bibitem}
{ newline$
  "\\bibitem{" write$
  cite$ write$
  "}" write$
  newline$
  ""
  before.all 'output.state :=
}
"""


def test_natbib_mode_from_what_natbib_is_told(tmp_path: Path) -> None:
    """No .bbl and a .bst nobody here knows: the mode comes from natbib's options, \\bibpunct,
    the class's option (sagej's sageh loads natbib author-year) or the shipped .bst's labels."""
    assert _mode(tmp_path / "a", "\\usepackage[longnamesfirst]{natbib}", {}) == "See (Smith, 2019)."
    assert _mode(tmp_path / "b", "\\usepackage{natbib}", {}) == "See [1]."
    assert _mode(tmp_path / "c", "", {}, cls="[Afour,sageh,times]{sagej}") == "See (Smith, 2019)."
    assert _mode(tmp_path / "d", "", {}, cls="[Afour,sagev]{sagej}") == "See [1]."
    punct = "\\usepackage{natbib}\\bibpunct{(}{)}{;}{a}{,}{,}"
    assert _mode(tmp_path / "e", punct, {}) == "See (Smith, 2019)."
    assert _mode(tmp_path / "f", "\\usepackage{natbib}\\bibpunct{[}{]}{,}{n}{}{,}", {}) == "See [1]."
    assert (
        _mode(tmp_path / "g", "\\usepackage{natbib}", {"oddstyle.bst": _AUTHOR_YEAR_BST})
        == "See (Smith, 2019)."
    )
    assert _mode(tmp_path / "h", "\\usepackage[round]{natbib}", {"oddstyle.bst": _NUMERIC_BST}) == "See [1]."


def test_harvard_items_are_bibliography_items(tmp_path: Path) -> None:
    """aea.bst (and agsm, dcu) write the harvard package's \\harvarditem[short]{long}{year}{key},
    which natbib reads as \\bibitem[short(year)long]{key}: every citation resolves, and the
    Chicago names ("Almond, Douglas, Hilary W Hoynes, and Diane Schanzenbach") split as printed."""
    bbl = r"""\begin{thebibliography}{xx}
\harvarditem[Almond, Hoynes \harvardand\ Schanzenbach]{Douglas Almond, Hilary~W
  Hoynes \harvardand\ Diane~Whitmore Schanzenbach}{2011}{almond2011}
{\bf Almond, Douglas, Hilary~W Hoynes, and Diane~Whitmore Schanzenbach.} 2011.
  ``Inside the war on poverty: The impact of food stamps on birth outcomes.''
  {\em The Review of Economics and Statistics}, 93(2):~387--403.
\harvarditem{Currie}{2003}{currie2003}
{\bf Currie, Janet.} 2003. ``U.S. food and nutrition programs.'' In {\em Means-Tested
  Transfer Programs in the United States}. 199--290. University of Chicago Press.
\end{thebibliography}"""
    main = (
        "\\documentclass{article}\n\\usepackage[round]{natbib}\n\\begin{document}\n"
        "Food stamps \\citep{almond2011} and \\citet{currie2003}.\n"
        "\\bibliographystyle{aea}\n\\bibliography{refs}\n\\end{document}\n"
    )
    doc = _eprint(tmp_path, main, {"main.bbl": bbl})
    assert doc.body_text[0].text == "Food stamps (Almond, Hoynes & Schanzenbach, 2011) and Currie (2003)."
    almond = doc.bib_entries["BIBREF0"]
    assert [(a.first, a.last) for a in almond.authors] == [
        ("Douglas", "Almond"),
        ("Hilary", "Hoynes"),
        ("Diane", "Schanzenbach"),
    ]
    assert almond.title == "Inside the war on poverty: The impact of food stamps on birth outcomes"
