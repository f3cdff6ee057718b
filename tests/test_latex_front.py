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


def test_agu_authors_affiliations_and_key_points_are_no_body() -> None:
    doc = _parse(
        "\\documentclass[draft]{agujournal2019}\n\\draftfalse\n\\journalname{JGR: Space Physics}\n"
        "\\begin{document}\n\\title{Waves}\n\\authors{A. Author\\affil{1}, B. Author\\affil{2}}\n"
        "\\affiliation{1}{Department of Physics, University X}\n\\affiliation{2}{Institute Y}\n"
        "\\correspondingauthor{A. Author}{a@x.edu}\n"
        "\\begin{keypoints}\n\\item First key point.\n\\item Second key point.\n\\end{keypoints}\n"
        "\\begin{abstract}Waves move.\\end{abstract}\n"
        "\\section*{Plain Language Summary}\nWaves are everywhere.\n\\section{Introduction}\nText.\n\\end{document}\n"
    )
    assert doc.title == "Waves" and [p.text for p in doc.abstract] == ["Waves move."]
    assert [(p.section, p.text) for p in doc.body_text] == [
        ("Plain Language Summary", "Waves are everywhere."),
        ("Introduction", "Text."),
    ]


def test_elsarticle_highlights_and_graphical_abstract_are_no_body() -> None:
    doc = _parse(
        "\\documentclass{elsarticle}\n\\begin{document}\n\\begin{frontmatter}\n\\title{T}\n"
        "\\author[a]{A. Author}\n\\affiliation[a]{organization={Univ},city={X},country={Y}}\n"
        "\\begin{abstract}Abs.\\end{abstract}\n"
        "\\begin{graphicalabstract}\\includegraphics{ga}\\end{graphicalabstract}\n"
        "\\begin{highlights}\n\\item Highlight one.\n\\item Highlight two.\n\\end{highlights}\n"
        "\\begin{keyword}k1 \\sep k2\\end{keyword}\n\\end{frontmatter}\n"
        "\\section{Intro}\nText.\n\\end{document}\n"
    )
    assert [p.text for p in doc.abstract] == ["Abs."]
    assert [p.text for p in doc.body_text] == ["Text."]


def test_iop_date_line_keywords_and_journal_are_no_body() -> None:
    """iopart prints the title where ``\\title`` is (no ``\\maketitle``); its template's date
    line sits in an ``indented`` block before the abstract, keywords and journal after it."""
    doc = _parse(
        "\\documentclass[12pt]{iopart}\n\\begin{document}\n\\title[Short]{A title}\n"
        "\\author{A Author$^1$ and B Author$^2$}\n\\address{$^1$ Department, University}\n"
        "\\ead{a@x.org}\n\\vspace{10pt}\n\\begin{indented}\n\\item[]August 2017\n\\end{indented}\n"
        "\\begin{abstract}Abs.\\end{abstract}\n\\vspace{2pc}\n\\noindent{\\it Keywords\\/}: one, two\n\n"
        "\\submitto{\\JPA}\n\\ioptwocol\n\\section{Introduction}\nText.\n\\end{document}\n"
    )
    assert doc.title == "A title" and [p.text for p in doc.abstract] == ["Abs."]
    assert [p.text for p in doc.body_text] == ["Text."]


def test_hand_made_title_page_and_author_credit_note_are_no_body() -> None:
    doc = _parse(
        "\\documentclass{article}\n\\begin{document}\n\\begin{titlepage}\\end{titlepage}\n"
        "\\begin{center}\n{\\LARGE\\bfseries A Study of Things}\\\\[1cm]\n{\\large Jane Doe and John Roe}\\\\\n"
        "University of Somewhere\\\\[2cm]\nMay 2021\n\\end{center}\n\\thispagestyle{empty}\n\\newpage\n"
        "\\footnotetext{All four authors contributed equally to this work.}\n"
        "\\section{Introduction}\nText with a note.\\footnote{A real note.}\n\\end{document}\n"
    )
    assert [p.text for p in doc.body_text] == ["Text with a note.", "A real note."]
