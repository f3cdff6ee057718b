"""Footnotes are paragraphs of their own whatever they hold (issue 34, M): a note whose text
sits in an environment (``\\footnote{\\begin{footnotesize}...}``) or runs over a blank line no
longer cuts its paragraph into fragments."""

from __future__ import annotations

from corpus.ingest.eprint import LatexSource
from corpus.parse.latex import parse_latex


def test_footnotes_holding_environments_and_paragraphs() -> None:
    text = (
        "\\documentclass{article}\n\\begin{document}\n\\section{S}\n"
        "Text before\\footnote{\\begin{footnotesize}A note in an environment \\cite{x}.\\end{footnotesize}} "
        "and after.\n\nNext paragraph\\footnote{First part of a note.\n\nSecond part of it.} continues\n"
        "over two lines.\n\\begin{itemize}\\item An item\\footnote{\\begin{itemize}\\item nested\\end{itemize}} "
        "here.\\end{itemize}\n"
        "\\begin{thebibliography}{1}\\bibitem{x} A. Author. A title. J, 2000.\\end{thebibliography}\n"
        "\\end{document}\n"
    )
    doc = parse_latex(LatexSource(main="m.tex", text=text), "t")
    assert [(p.section, p.text) for p in doc.body_text] == [
        ("S", "Text before and after."),
        ("S", "Next paragraph continues over two lines."),
        ("S", "An item here."),
        ("", "A note in an environment [1]."),
        ("", "First part of a note."),
        ("", "Second part of it."),
        ("", "nested"),
    ]
    assert doc.body_text[3].cite_spans[0].ref_id == "BIBREF0"
