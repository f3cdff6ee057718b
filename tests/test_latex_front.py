"""Front matter and sections as LaTeX prints them (issue 34, F, H, I, N): the abstract given as
``\\abstract{...}`` before ``\\maketitle``, the last ``\\title``, Copernicus' ``\\introduction``
and ``\\conclusions``, chapter numbers in section numbers, and title-page material (AGU's
authors and key points, elsarticle's highlights, IOP's date line, a hand-made title page, an
author-credit note) kept out of the body."""

from __future__ import annotations

from corpus.ingest.eprint import LatexSource
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import parse_latex


def _parse(text: str) -> StructuredDoc:
    return parse_latex(LatexSource(main="m.tex", text=text), "t")


def test_abstract_command_before_maketitle() -> None:
    """A&A and Springer Nature write ``\\abstract{...}`` after ``\\begin{document}``, before
    ``\\maketitle``; A&A's parts print their names ("Context.", "Aims.")."""
    springer = _parse(
        "\\documentclass{sn-jnl}\n\\begin{document}\n\\title{T}\n\\abstract{We measure things.}\n"
        "\\keywords{a, b}\n\\maketitle\n\\section{Intro}\nBody.\n\\end{document}\n"
    )
    assert [p.text for p in springer.abstract] == ["We measure things."]
    assert [p.text for p in springer.body_text] == ["Body."]
    aa = _parse(
        "\\documentclass{aa}\n\\begin{document}\n\\title{T}\n"
        "\\abstract{\\context{Stars form.}\\aims{We ask why.}\\conclusions{They do.}}\n"
        "\\keywords{stars}\n\\maketitle\n\\section{Introduction}\nBody.\n\\end{document}\n"
    )
    assert [p.text for p in aa.abstract] == ["Context. Stars form. Aims. We ask why. Conclusions. They do."]
    assert [(p.section, p.text) for p in aa.body_text] == [("Introduction", "Body.")]


def test_the_last_title_is_the_title() -> None:
    doc = _parse(
        "\\documentclass{article}\n\\title{A working title \\\\ or another}\n\\title{The Final Title}\n"
        "\\begin{document}\\maketitle\nText.\n\\end{document}\n"
    )
    assert doc.title == "The Final Title"


def test_copernicus_introduction_and_conclusions_are_headings() -> None:
    doc = _parse(
        "\\documentclass{copernicus}\n\\begin{document}\n\\maketitle\n\\introduction\nWhy.\n"
        "\\section{Methods}\nHow.\n\\conclusions[Summary and outlook]\nSo.\n\\end{document}\n"
    )
    assert [(p.section, p.sec_num, p.text) for p in doc.body_text] == [
        ("Introduction", "1", "Why."),
        ("Methods", "2", "How."),
        ("Summary and outlook", "3", "So."),
    ]


def test_sections_of_a_chapter_document_carry_the_chapter_number() -> None:
    doc = _parse(
        "\\documentclass{report}\n\\begin{document}\n\\chapter{One}\nA.\n\\section{S}\nB.\n"
        "\\subsection{T}\\label{t}\nC, see \\ref{t}.\n\\chapter{Two}\n\\section{U}\nD.\n"
        "\\appendix\n\\chapter{Extra}\n\\section{V}\nE.\n\\end{document}\n"
    )
    assert [(p.sec_num, p.text) for p in doc.body_text] == [
        ("1", "A."),
        ("1.1", "B."),
        ("1.1.1", "C, see 1.1.1."),
        ("2.1", "D."),
        ("A.1", "E."),
    ]
