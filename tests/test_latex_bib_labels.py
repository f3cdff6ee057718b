"""Bibliographies and citation labels as LaTeX prints them (issues 43 and 44, AA): a paper that
prints two lists (its BibTeX ``\\bibliography`` and a hand-written ``thebibliography``), an entry
without a year in an author-year .bbl, acmart's ``\\shortcite``, natbib-family commands the parser
did not know, and the citation mode decided from what natbib is told."""

from __future__ import annotations

from pathlib import Path

from corpus.ingest.eprint import assemble_source
from corpus.parse.latex import parse_latex

_BIB = "\n".join(
    f"@article{{b{i}, author={{Author{i}, A.}}, title={{Bib title {i}}}, year={{{2000 + i}}}, journal={{J}}}}"
    for i in range(1, 8)
)


def _eprint(tmp_path: Path, main: str, files: dict[str, str]):
    root = tmp_path / "e"
    root.mkdir()
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
