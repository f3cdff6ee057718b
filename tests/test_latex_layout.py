"""Every part of a paper where LaTeX puts it (issue 44): layout commands print nothing, front
matter stays out of the body and gives the title and the abstract, maths commands print their
maths. The hidden papers behind the issue are not ours to copy; each case is a minimal
reproduction written after the public template or paper that has it (RSC's article template,
PLOS's, imsart's EJS sample, Optica's, a thesis title page), checked to fail on the parser before
the issue's fixes."""

from __future__ import annotations

import pytest

from corpus.ingest.eprint import LatexSource
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import latex_to_text, parse_latex


def _parse(text: str) -> StructuredDoc:
    return parse_latex(LatexSource(main="m.tex", text=text), "t")


def _body(tex: str, preamble: str = "") -> list[str]:
    text = "\\documentclass{article}\n" + preamble + "\n\\begin{document}\n" + tex + "\n\\end{document}\n"
    return [p.text for p in _parse(text).body_text]


# RSC's article template: its page set-up sits after \begin{document}; the title, authors and
# abstract are cells of a tabular in a \twocolumn[...] block; addresses are \footnotetext notes.
_RSC = r"""\documentclass[twoside,twocolumn,9pt]{article}
\usepackage{fancyhdr}
\usepackage[compact]{titlesec}
\begin{document}
\pagestyle{fancy}
\thispagestyle{plain}
\fancypagestyle{plain}{
\fancyhead[C]{\includegraphics[width=18.5cm]{head_foot/header_bar}}
\fancyhead[L]{\hspace{0cm}\vspace{1.5cm}\includegraphics[height=30pt]{head_foot/journal_name}}
\renewcommand{\headrulewidth}{0pt}
}
\setcounter{secnumdepth}{5}
\titlespacing*{\section}{0pt}{4pt}{4pt}
\titlespacing*{\subsection}{0pt}{15pt}{1pt}
\fancyfoot{}
\fancyfoot[LO,RE]{\vspace{-7.1pt}\includegraphics[height=9pt]{head_foot/LF}}
\fancyfoot[RO]{\footnotesize{\sffamily{1--\pageref{LastPage} ~\textbar  \hspace{2pt}\thepage}}}
\twocolumn[
  \begin{@twocolumnfalse}
\vspace{3cm}
\begin{tabular}{m{4.5cm} p{13.5cm} }
\includegraphics{head_foot/DOI} & \noindent\LARGE{\textbf{Ligand exchange in layered perovskite films$^\dag$}} \\
\vspace{0.3cm} & \vspace{0.3cm} \\
 & \noindent\large{Ann Author,$^{\ast}$\textit{$^{a}$} Ben Writer\textit{$^{b}$} and Cy Coder\textit{$^{a}$}} \\
\includegraphics{head_foot/dates} & \noindent\normalsize{We follow the exchange of ligands in layered
perovskite films over a week and show that the films keep their structure while the ligands move,
which suggests a route to stable films for the devices that need them.} \\
\end{tabular}
 \end{@twocolumnfalse} \vspace{0.6cm}
  ]
\section*{}
\vspace{-1cm}
\footnotetext{\textit{$^{a}$~Department of Chemistry, A University, Town, Country. E-mail: ann@a.ac.uk}}
\footnotetext{\textit{$^{b}$~Institute of Materials, B University, Town, Country.}}
\footnotetext{\dag~Electronic Supplementary Information (ESI) available. See DOI: 00.0000/00000000.}
Layered perovskites are studied widely.

\section{Results}
\subsection{Films}
The films keep their structure.
\end{document}
"""


def test_rsc_template_page_setup_prints_nothing_and_its_front_matter_is_read() -> None:
    """fancyhdr's and titlesec's set-up printed "plain", "[C] [L] [R]", "0pt4pt4pt *" and
    "[LO,RE] [RO]1–"; the ``\\section`` in ``\\titlespacing*{\\section}`` was a heading (every
    section number one too high); the title and abstract in the title block's tabular were lost
    and the addresses were footnotes of the text."""
    doc = _parse(_RSC)
    assert doc.title == "Ligand exchange in layered perovskite films"
    assert [p.text for p in doc.abstract] == [
        "We follow the exchange of ligands in layered perovskite films over a week and show that the "
        "films keep their structure while the ligands move, which suggests a route to stable films "
        "for the devices that need them."
    ]
    assert [(p.section, p.sec_num, p.text) for p in doc.body_text] == [
        ("", None, "Layered perovskites are studied widely."),
        ("Results::Films", "1.1", "The films keep their structure."),
    ]


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        # fancyhdr, KOMA's page marks, titlesec and sectsty: what prints on other pages or headings
        ("\\fancyhf{}\\fancyhead[LE,RO]{\\thepage}\\lhead{Running head}\\cfoot{}Text", "Text"),
        ("\\automark[section]{chapter}\\ihead[plain]{x}\\pdfbookmark[1]{\\contentsname}{toc}Text", "Text"),
        ("\\titleformat{\\section}[block]{\\Large\\bfseries}{\\thesection}{1em}{}Text", "Text"),
        ("\\titlecontents{section}[0pt]{}{\\thecontentslabel\\quad}{}{\\hfill\\contentspage}Text", "Text"),
        # micro-typography and caption formats
        ("\\microtypesetup{protrusion=false}Text\\microtypesetup{protrusion=true}", "Text"),
        ("\\DeclareCaptionFont{blue}{\\color{blue}}\\DeclareCaptionLabelSeparator{bar}{ | }Text", "Text"),
        # settings given to commands no table knows, and length registers assigned
        ("\\mysetup{protrusion=false}Text \\myskip{-0.5em}more", "Text more"),
        ("\\mybox[width=2cm]{boxed} \\shade{red!30!white}{shaded}", "boxed shaded"),
        ("\\parfillskip=0pt plus 1fil \\belowcaptionskip=-10pt Text", "Text"),
        ("\\hangindent=\\parindent \\hangafter=1 \\looseness-1 \\clubpenalty=10000 Text", "Text"),
        # the knowledge package's notions print their text
        ("\\AP An \\intro(DBUA)[automaton]{automaton} reads \\kl[word]{words}", "An automaton reads words"),
    ],
)
def test_layout_and_settings_print_nothing(latex: str, text: str) -> None:
    assert latex_to_text(latex).split() == text.split()
    assert " ".join(_body(latex)).split() == text.split()


def test_definitions_in_the_body_print_nothing() -> None:
    """A ``\\renewenvironment{thebibliography}[1]{...}`` after ``\\begin{document}`` printed
    "thebibliography[1] #1"; an environment defined there still works where it is used."""
    body = (
        "\\renewenvironment{thebibliography}[1]{\\section*{References}\\list{[\\arabic{enumi}]}"
        "{\\usecounter{enumi}\\setlength{\\itemsep}{0pt}}#1}{\\endlist}\n"
        "\\newenvironment{result}{\\begin{figure}\\centering}{\\end{figure}}\n"
        "\\section{Intro}\nText.\n\\begin{result}\\caption{A result.}\\end{result}\n"
    )
    doc = _parse("\\documentclass{article}\n\\begin{document}\n" + body + "\\end{document}\n")
    assert [(p.section, p.sec_num, p.text) for p in doc.body_text] == [("Intro", "1", "Text.")]
    assert [(e.type, e.text) for e in doc.ref_entries.values() if e.type == "figure"] == [
        ("figure", "A result.")
    ]


def test_margins_print_nothing() -> None:
    """scrextend's ``addmargin`` printed its "6mm", changepage's ``adjustwidth`` (MDPI's template)
    "-0cm"; an environment no table knows loses the groups that hold lengths (a ``\\let`` alias
    of ``\\@input``: tests/test_eprint_main.py)."""
    assert _body("\\begin{addmargin}[6mm]{6mm}Indented text.\\end{addmargin}") == ["Indented text."]
    assert _body("\\begin{adjustwidth}{-\\extralength}{0cm}Wide text.\\end{adjustwidth}") == ["Wide text."]
    assert _body("\\begin{mybox}{-1cm}{0pt}Boxed.\\end{mybox}") == ["Boxed."]


def test_caption_of_a_table_outside_a_float_is_a_caption() -> None:
    """``\\captionof{table}{...}`` in a centred block printed "tableBoth strategies..." as text."""
    doc = _parse(
        "\\documentclass{article}\n\\usepackage{caption}\n\\begin{document}\n\\section{S}\n"
        "As Table~\\ref{tab:s} shows.\n\\begin{center}\n\\captionof{table}{Both strategies compared.}"
        "\\label{tab:s}\n\\begin{tabular}{ll} a & b \\\\ \\end{tabular}\n\\end{center}\nAfter it.\n"
        "\\begin{minipage}{0.4\\textwidth}\\includegraphics{x}\\captionof{figure}[Short]{A figure.}"
        "\\label{fig:m}\\end{minipage}\nSee Figure~\\ref{fig:m}.\n\\end{document}\n"
    )
    assert [p.text for p in doc.body_text] == ["As Table 1 shows.", "After it.", "See Figure 1."]
    assert doc.ref_entries["TABREF0"].text == "Both strategies compared."
    assert doc.ref_entries["FIGREF0"].text == "A figure."


def test_zref_references_print_numbers_not_labels() -> None:
    """zref-xr's references printed their label names; a label of another document is unknown
    here, as an unresolved ``\\ref`` is."""
    doc = _parse(
        "\\documentclass{article}\n\\usepackage{zref-xr,zref-user}\n\\zexternaldocument[S-]{supplement}\n"
        "\\begin{document}\n\\section{A}\\label{sec:a}\\zlabel{zsec}\nSee \\zref{sec:a} and Figure "
        "\\zref[page]{S-fig:one} of the supplement.\n\\end{document}\n"
    )
    (para,) = doc.body_text
    assert para.text == "See 1 and Figure ?? of the supplement."
    assert [(s.text, s.ref_id) for s in para.ref_spans] == [("1", "SECREF0"), ("??", None)]


def test_knowledge_quotation_notation_prints_the_notion() -> None:
    """With knowledge's quotation notation on, ``"automata@DBUA"`` printed raw."""
    doc = _parse(
        "\\documentclass{article}\n\\usepackage[notion,quotation]{knowledge}\n\\knowledge{notion}\n | automaton\n"
        '\\begin{document}\n\\AP A ""deterministic automaton@DBUA"" reads "words"; the \\"uber-\\"{o} '
        '"automata@DBUA" and their "runs".\n\\end{document}\n'
    )
    assert [p.text for p in doc.body_text] == [
        "A deterministic automaton reads words; the über-ö automata and their runs."
    ]


# ----------------------------------------------------------------------------- front matter

_PLOS = r"""\documentclass[10pt,letterpaper]{article}
\begin{document}
\vspace*{0.2in}
\begin{flushleft}
{\Large
\textbf\newline{Sorghum lipid profiles under cold stress}
}
\newline
\\
Ann Author\textsuperscript{1\Yinyang},
Ben Writer\textsuperscript{2*}
\\
\bigskip
\textbf{1} Department of Plant Biology, A University, Town, Country
\\
\textbf{2} Institute of Crops, B University, Town, Country
\\
\bigskip
\Yinyang These authors contributed equally to this work.

* ben@b.edu
\end{flushleft}
\section*{Abstract}
Plants remodel their membranes when it is cold.

\section*{Author summary}
We measured lipids.

\linenumbers
\section*{Introduction}
Cold changes membranes.
\end{document}
"""


def test_plos_template_title_block_and_abstract_heading() -> None:
    """PLOS's template gives no ``\\title``: its title is the large bold line of the flushleft
    block, whose names, affiliations and notes are no body; its abstract is a ``\\section*``."""
    doc = _parse(_PLOS)
    assert doc.title == "Sorghum lipid profiles under cold stress"
    assert [p.text for p in doc.abstract] == ["Plants remodel their membranes when it is cold."]
    assert [(p.section, p.text) for p in doc.body_text] == [
        ("Author summary", "We measured lipids."),
        ("Introduction", "Cold changes membranes."),
    ]


_IMSART = r"""\documentclass[ejs]{imsart}
\begin{document}
\begin{frontmatter}
\title{Balancing weights for regions}
\runtitle{Balancing weights}
\begin{aug}
\author[A]{\fnms{First}~\snm{Author}\ead[label=e1]{first@somewhere.com}},
\author[B]{\fnms{Second}~\snm{Author}\ead[label=e2]{second@somewhere.com}}
\and
\author[B]{\fnms{Third}~\snm{Author}\ead[label=e3]{third@somewhere.com}}
\address[A]{Department, University\printead[presep={,\ }]{e1}}
\runauthor{F. Author et al.}
\end{aug}
%s
\begin{keyword}[class=MSC]
\kwd[Primary ]{00X00}
\end{keyword}
\end{frontmatter}
\section{Introduction}
Text.
\end{document}
"""


@pytest.mark.parametrize(
    "abstract",
    [
        "\\begin{abstract}\nWe estimate the effect of an expansion on the rate of a region.\n\\end{abstract}",
        # no abstract environment: the one run of prose in the journal's front matter is the abstract
        "\\begin{flushleft}\nWe estimate the effect of an expansion on the rate of a region, as if the "
        "regions that did not expand had done so, with weights that balance them.\n\\end{flushleft}",
    ],
)
def test_imsart_front_matter_is_no_body(abstract: str) -> None:
    """imsart's ``\\runtitle`` and the remains of ``\\author[A]{\\fnms{...}\\snm{...}}``, ``\\and``
    (", , and") printed in the body."""
    doc = _parse(_IMSART.replace("%s", abstract))
    assert doc.title == "Balancing weights for regions"
    assert len(doc.abstract) == 1 and doc.abstract[0].text.startswith(
        "We estimate the effect of an expansion"
    )
    assert [p.text for p in doc.body_text] == ["Text."]


def test_thesis_title_copyright_and_committee_pages_are_no_body() -> None:
    """A thesis set by hand: no ``\\title``; a title page, a copyright page, a committee page and
    the author's declaration before the first chapter. The title is the largest type on its
    title page."""
    doc = _parse(
        "\\documentclass[12pt]{report}\n\\begin{document}\n\\thispagestyle{empty}\n\\begin{center}\n"
        "{\\Huge\\bfseries Sampling from probabilistic submodular models}\\\\[2cm]\n{\\Large Jane Doe}\\\\[1cm]\n"
        "A dissertation submitted in partial fulfillment of the requirements for the degree of\n"
        "Doctor of Philosophy\n\\end{center}\n\\newpage\n\\begin{center}\n\\copyright~2021 Jane Doe\\\\\n"
        "All rights reserved.\n\\end{center}\n\\newpage\n\\noindent Approved by the dissertation committee:\\\\\n"
        "Prof. A, advisor\\\\ Prof. B\\\\ Prof. C\n\\newpage\n"
        "\\noindent I hereby declare that I wrote this dissertation myself.\n\n"
        "\\chapter{Introduction}\nSubmodular functions are everywhere.\n\\end{document}\n"
    )
    assert doc.title == "Sampling from probabilistic submodular models"
    assert [(p.section, p.text) for p in doc.body_text] == [
        ("Introduction", "Submodular functions are everywhere.")
    ]


def test_abstract_in_a_title_page_and_optica_abstract_star() -> None:
    in_titlepage = _parse(
        "\\documentclass{article}\n\\title{T}\n\\begin{document}\n\\begin{titlepage}\n\\maketitle\n"
        "\\begin{abstract}We study things.\\end{abstract}\n\\end{titlepage}\n\\section{Intro}\nText.\n\\end{document}\n"
    )
    assert [p.text for p in in_titlepage.abstract] == ["We study things."]
    assert [p.text for p in in_titlepage.body_text] == ["Text."]
    optica = _parse(
        "\\documentclass{optica-article}\n\\begin{document}\n\\title{Light}\n\\author{A. Author}\n"
        "\\begin{abstract*}Light bends.\\end{abstract*}\n\\section{Introduction}\nText.\n\\end{document}\n"
    )
    assert [p.text for p in optica.abstract] == ["Light bends."]
    assert [p.text for p in optica.body_text] == ["Text."]


def test_hand_made_title_block_and_abstract_label() -> None:
    """A paper that sets its own title block (no ``\\maketitle``) and labels its abstract
    "ABSTRACT": the block is front matter, the labelled text the abstract, an ornament none."""
    doc = _parse(
        "\\documentclass{article}\n\\begin{document}\n\\thispagestyle{empty}\n\\begin{center}\n"
        "{ \\Large \\textbf{ Probing entanglement \\\\[+1pt] at Belle II }}\n\n\\vspace*{1.5cm}\n"
        "{\\bf K. Author$^{a}$,} and {\\bf C. Author$^{a}$}\n\n{\\small $^{a}$ Laboratory of Physics, Tallinn, Estonia}\n"
        "\\end{center}\n\\vskip1cm\n\\begin{center}\n{\\bf ABSTRACT}\n\\end{center}\n\n"
        "\\noindent We present a feasibility study.\n\n\\vskip 3cm\n\\begin{center}$\\bowtie$\\end{center}\n"
        "\\newpage\n\\section{Introduction}\nQuantum states.\n\\end{document}\n"
    )
    assert doc.title == "Probing entanglement at Belle II"
    assert [p.text for p in doc.abstract] == ["We present a feasibility study."]
    assert [(p.section, p.text) for p in doc.body_text] == [("Introduction", "Quantum states.")]


def test_author_credit_notes_at_the_top_of_the_body() -> None:
    doc = _parse(
        "\\documentclass{article}\n\\title{T}\n\\begin{document}\n\\maketitle\n"
        "\\footnotetext{Work done while the first author was an intern at a lab.}\n"
        "\\section{Introduction}\nText.\\footnote{A real note.}\n\\end{document}\n"
    )
    assert [p.text for p in doc.body_text] == ["Text.", "A real note."]


def test_elsarticle_front_matter_is_no_body() -> None:
    """What an elsarticle paper sets in its ``frontmatter`` after the abstract (a title block
    repeated by hand) printed in the body."""
    doc = _parse(
        "\\documentclass{elsarticle}\n\\begin{document}\n\\begin{frontmatter}\n\\title{Energy storage}\n"
        "\\author[a]{A. Author\\corref{cor1}}\n\\ead{a@x.edu}\n\\cortext[cor1]{Corresponding author}\n"
        "\\affiliation[a]{organization={Univ},city={X},country={Y}}\n"
        "\\begin{abstract}Batteries store energy.\\end{abstract}\n\\begin{keyword}batteries\\end{keyword}\n"
        "\\vspace{2mm}\n{\\centering Energy storage at scale\\\\\nA. Author, B. Author\\par}\n"
        "\\end{frontmatter}\n\\section{Introduction}\nText.\n\\end{document}\n"
    )
    assert doc.title == "Energy storage"
    assert [p.text for p in doc.abstract] == ["Batteries store energy."]
    assert [p.text for p in doc.body_text] == ["Text."]


# ----------------------------------------------------------------------------- maths


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        ("$a_1, \\hdots, a_n$", "a_1, …, a_n"),
        (
            "$\\binom{n}{k}$ and $\\dbinom{n}{2}$ and ${n \\choose k}$",
            "(n choose k) and (n choose 2) and (n choose k)",
        ),
        ("$\\tfrac{1}{2} x + \\dfrac{a}{b}$", "1/2 x + a/b"),
        ("$\\genfrac{}{}{0pt}{}{n}{k}$, $\\genfrac{[}{]}{1pt}{}{a}{b}$", "(n choose k), a/b"),
        ("$A = \\left[\\begin{array}{cc} a & b \\\\ c & d \\end{array}\\right]$", "A = [ a b; c d ]"),
        ("$f(x) = \\begin{cases} 1 & x>0 \\\\ 0 & \\text{else}\\end{cases}$", "f(x) = 1 x>0; 0 else"),
        ("$\\hat{x_i}$, $\\widehat{F_{ST}}$, $\\overline{x_{1}}$", "x̂_i, F̂_ST, x̅_1"),
        ("$\\begin{aligned}[t] a &= b \\\\ c &= d \\end{aligned}$", "a = b; c = d"),
    ],
)
def test_maths_commands_print_their_maths(latex: str, text: str) -> None:
    assert latex_to_text(latex).split() == text.split()


def test_array_in_inline_math_stays_in_its_sentence() -> None:
    """An ``array`` inside ``\\left[ ... \\right]`` in a sentence was cut out as an equation:
    "A = [ ] be a matrix"."""
    assert _body(
        "Let $A = \\left[\\begin{array}{cc} a & b \\\\ c & d \\end{array}\\right]$ be a matrix and "
        "$f(x) = \\begin{cases} 1 & x>0 \\\\ 0 & \\text{else}\\end{cases}$ a step."
    ) == ["Let A = [ a b; c d ] be a matrix and f(x) = 1 x>0; 0 else a step."]


def test_a_title_page_no_rule_reads_gives_the_pdf_title() -> None:
    """classicthesis sets its title in spaced capitals from ``\\myTitle``, which it also gives
    hyperref as the PDF's title."""
    doc = _parse(
        "\\documentclass{scrreprt}\n\\newcommand{\\myTitle}{Raoul Schrotts Epos \\emph{Erste Erde}\\xspace}\n"
        "\\hypersetup{pdftitle={\\myTitle},pdfauthor={A. Author}}\n\\begin{document}\n"
        "\\begin{titlepage}\\begin{center}\\large\\hfill\\vfill\\spacedallcaps{\\myTitle}\\end{center}\\end{titlepage}\n"
        "\\chapter{Einleitung}\nText.\n\\end{document}\n"
    )
    assert doc.title == "Raoul Schrotts Epos Erste Erde"
    assert [p.text for p in doc.body_text] == ["Text."]


def test_a_hand_made_journal_header_and_title_block_are_no_body() -> None:
    """A journal's header line in small type and a rule above a title block set by hand (no
    ``\\maketitle``, no abstract environment): front matter, the title read from it."""
    doc = _parse(
        "\\documentclass{article}\n\\begin{document}\n\\noindent{\\small Journal of Foo, Vol. 3 (2020), pp. 1--10}\n"
        "\\hrule\n\n\\begin{center}{\\Large\\bf A hand-made title}\\\\[2mm] A. Author and B. Author\\\\ "
        "Some University \\end{center}\n\nKeywords: one, two\n\n\\section{Introduction}\nText.\n\\end{document}\n"
    )
    assert doc.title == "A hand-made title"
    assert [p.text for p in doc.body_text] == ["Text."]


def test_a_float_the_paper_declares_is_a_float() -> None:
    """``\\newfloat{glosbox}{thp}{glosbox}`` (float package): its box was printed in the body
    (232 words in one paper); it is a float of its own, numbered apart from the figures."""
    doc = _parse(
        "\\documentclass{article}\n\\usepackage{float}\n\\newfloat{glosbox}{thp}{glosbox}\n\\floatname{glosbox}{Box}\n"
        "\\begin{document}\n\\section{S}\nSee Box~\\ref{box:a} and Figure~\\ref{f}.\n"
        "\\begin{glosbox}[tbhp]\\caption{Glossary.}\\label{box:a}\n\\textbf{Term}: what it means.\n\\end{glosbox}\n"
        "\\begin{figure}\\caption{A figure.}\\label{f}\\end{figure}\nAfter.\n\\end{document}\n"
    )
    assert [p.text for p in doc.body_text] == ["See Box 1 and Figure 1.", "After."]
    assert (doc.ref_entries["FLOATREF0"].num, doc.ref_entries["FLOATREF0"].text) == ("1", "Glossary.")
    assert doc.ref_entries["FIGREF0"].num == "1"


def test_code_with_an_equals_sign_is_text_not_a_setting() -> None:
    """The settings rule reads key=value lists only: JSS's ``\\code{summarise_by = c("model")}``
    is text (the rule first dropped it)."""
    text = latex_to_text('\\code{summarise\\_by = c("model", "location")} and \\code{n = 10}')
    assert text == 'summarise_by = c("model", "location") and n = 10'


def test_a_full_width_table_in_the_body_keeps_its_caption_and_label() -> None:
    """A PCCP paper sets its wide tables in ``\\twocolumn[\\begin{@twocolumnfalse}...]`` mid-text,
    with ``\\captionof{table}`` above the tabular and the ``\\label`` after it: a caption of the
    table, its label the table's (the text printed "table 2.5 [" and "tableBoth strategies")."""
    doc = _parse(
        "\\documentclass{article}\n\\usepackage{caption}\n\\begin{document}\n\\section{S}\n"
        "As summed up in table~\\ref{tab:a}.\n\\twocolumn[\\begin{@twocolumnfalse}\n\\begin{center}\n"
        "\\captionof{table}{Both strategies have benefits.}\n\\begin{tabular*}{\\textwidth}{ll} a & b \\\\ "
        "\\end{tabular*}\\label{tab:a}\n\\end{center}\n\\end{@twocolumnfalse}]\nMiddle text.\n"
        "\\begin{table}\\caption{Other.}\\label{tab:b}\\end{table}\n\nSee Table~\\ref{tab:b}.\n\\end{document}\n"
    )
    assert [p.text for p in doc.body_text] == ["As summed up in table 1.", "Middle text.", "See Table 2."]
    assert [(k, e.num, e.text) for k, e in doc.ref_entries.items() if e.type == "table"] == [
        ("TABREF0", "1", "Both strategies have benefits."),
        ("TABREF1", "2", "Other."),
    ]


def test_journal_metadata_and_a_block_set_after_maketitle_are_no_body() -> None:
    """PNAS's significance statement and author contributions, MNRAS's ``\\pubyear{2019}`` after
    ``\\maketitle`` ("2019" was the first paragraph), and a date line and dedication set by hand
    between ``\\maketitle`` and the first heading."""
    doc = _parse(
        "\\documentclass{pnas-new}\n\\begin{document}\n\\title{T}\n\\leadauthor{Blake}\n"
        "\\significancestatement{Understanding transmission is essential for guiding interventions.}\n"
        "\\authorcontributions{All authors contributed to the analysis.}\n\\maketitle\n\\pubyear{2019}\n"
        "\\vskip -1cm\n{\\centerline{May 2024}\n\\centerline{To be published in the {\\it Journal}}\n"
        "\\centerline{\\bf Dedication:}\n\\centerline{\\bf We dedicate this work to Louis de Broglie.}\n\n}\n"
        "\\vskip 1cm\n\\section{Introduction}\nText.\n\\end{document}\n"
    )
    assert [p.text for p in doc.body_text] == ["Text."]


def test_a_thesis_front_matter_before_mainmatter_is_no_body() -> None:
    """What a book or thesis declares front matter (``\\frontmatter`` ... ``\\mainmatter``:
    dedication, preface, declaration, contents) is no body; its abstract chapter is the
    abstract, its acknowledgments stay back matter."""
    doc = _parse(
        "\\documentclass{book}\n\\title{Notes on o-minimality}\n\\begin{document}\n\\maketitle\n\\frontmatter\n"
        "\\chapter*{Dedication}\nTo my teachers.\n\\chapter*{Abstract}\nWe study definable sets.\n"
        "\\chapter*{Preface}\nThese notes follow eight lectures.\n\\chapter*{Acknowledgements}\nWe thank the institute.\n"
        "\\tableofcontents\n\\mainmatter\n\\chapter{Introduction}\nO-minimal structures are tame.\n\\end{document}\n"
    )
    assert [p.text for p in doc.abstract] == ["We study definable sets."]
    assert [(p.section, p.text) for p in doc.body_text] == [
        ("Introduction", "O-minimal structures are tame.")
    ]
    assert [p.text for p in doc.back_matter] == ["We thank the institute."]


def test_a_and_a_five_part_abstract_command() -> None:
    """A&A's structured ``\\abstract{context}{aims}{methods}{results}{conclusions}``: only the
    first part was read (77 of 215 words in one paper)."""
    doc = _parse(
        "\\documentclass{aa}\n\\begin{document}\n\\title{T}\n\\abstract{Stars form.}{We ask why.}{We model it.}"
        "{They do.}{So it goes.}\n\\keywords{stars}\n\\maketitle\n\\section{Introduction}\nBody.\n\\end{document}\n"
    )
    assert [p.text for p in doc.abstract] == [
        "Context. Stars form. Aims. We ask why. Methods. We model it. Results. They do. Conclusions. So it goes."
    ]
