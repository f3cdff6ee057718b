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
        ("", "First part of a note. Second part of it."),
        ("", "nested"),
    ]
    assert doc.body_text[3].cite_spans[0].ref_id == "BIBREF0"


def test_a_note_is_one_paragraph_whatever_it_holds() -> None:
    """Issue 44: a note holding a quotation, a list or a ``\\par`` was cut at them into several
    paragraphs (one paper: 314 paragraphs where LaTeXML counts 206 and 92 notes)."""
    text = (
        "\\documentclass{article}\n\\newtheorem{theorem}{Theorem}\n\\begin{document}\n\\section{S}\n"
        "Before\\footnote{A note \\begin{quote}quoted\\end{quote} end.} after.\n\n"
        "\\begin{theorem}A claim\\footnote{Proved in \\begin{itemize}\\item one\\item two\\end{itemize}} holds.\\end{theorem}\n\n"
        "Marked\\footnotemark{} here.\n\\footnotetext{First\\par second.}\n\\end{document}\n"
    )
    doc = parse_latex(LatexSource(main="m.tex", text=text), "t")
    assert [p.text for p in doc.body_text if p.section == ""] == [
        "A note quoted end.",
        "Proved in one two",
        "First second.",
    ]
