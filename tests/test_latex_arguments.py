"""Arguments of commands that print no text do not leak as words (issue 34, B): lengths,
counters, colours, labels, links, boxes, tikz options, conditionals. What each command's
arguments are (text or not) comes from one table, :data:`corpus.parse.latex.commands.ARGUMENTS`."""

from __future__ import annotations

import pytest
from conftest import DATA

from corpus.ingest.eprint import LatexSource, assemble_source, find_main_tex
from corpus.parse.latex import latex_to_text, parse_latex
from corpus.parse.latex.commands import ARGUMENTS

KORZEN = DATA / "latex_sources" / "korzen_benchmark" / "astro-ph0001004"


def _body(tex: str, preamble: str = "") -> list[str]:
    text = "\\documentclass{article}\n" + preamble + "\n\\begin{document}\n" + tex + "\n\\end{document}\n"
    return [p.text for p in parse_latex(LatexSource(main="m.tex", text=text), "t").body_text]


def test_kern_and_lower_lengths_in_a_real_macro(shared_data) -> None:
    """astro-ph/0001004 defines ``\\gae`` as ``>\\kern-1.0em\\lower0.9ex\\hbox{$\\sim$}``: TeX moves
    the symbols by those lengths; they are not words ("R >-1.0em0.9ex∼")."""
    doc = parse_latex(assemble_source(KORZEN, find_main_tex(KORZEN)), "astro-ph/0001004")
    text = " ".join(p.text for p in doc.body_text)
    assert "radii of R >∼ 10^19 n_0^-1 cm" in text
    assert "em0.9ex" not in text


def test_counters_of_a_real_supplement_are_no_paragraphs(shared_data) -> None:
    """msd-errors restarts its numbering for the supplement (``\\counterwithout{figure}{section}``,
    ``\\pagenumbering{arabic}``): "figuresection" and "arabic" were paragraphs of their own."""
    root = DATA / "fidelity" / "latex" / "arm61+msd-errors" / "arxiv"
    doc = parse_latex(assemble_source(root, find_main_tex(root)), "msd")
    texts = {p.text for p in doc.body_text + doc.back_matter}
    assert not texts & {"figuresection", "equationsection", "tablesection", "arabic"}


def test_cleveref_settings_of_a_real_appendix_are_no_words(shared_data) -> None:
    """teorth's paper ends its body with ``\\appendix \\crefalias{section}{appendix}``: cleveref's
    settings print nothing ("sectionappendix" was the last words of the paper)."""
    root = DATA / "fidelity" / "latex" / "teorth+equational_theories" / "paper"
    doc = parse_latex(assemble_source(root, find_main_tex(root)), "teorth")
    text = " ".join(p.text for p in doc.body_text + doc.back_matter)
    assert "sectionappendix" not in text and "Computer Science." in text


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        # lengths, as arguments and as TeX glue after a primitive or a length register
        ("A\\vskip 0.5cm B \\hskip6pt plus 1fil C\\kern-2pt D", "A B C D"),
        ("\\setlength\\tabcolsep{6pt}\\setlength{\\parskip}{0em}Text", "Text"),
        ("\\parindent=0pt \\baselineskip 12pt Text", "Text"),
        ("\\enlargethispage{2\\baselineskip}\\linespread{1.2}Text", "Text"),
        ("\\raisebox{2pt}{up} \\rule{1cm}{0.4pt} \\phantom{xx}y", "up y"),
        ("\\makebox[2cm][l]{box} \\parbox[t]{3cm}{par} \\resizebox{0.5\\textwidth}{!}{wide}", "box par wide"),
        ("\\newgeometry{top=4cm,left=2cm}Text", "Text"),
        # counters and theorem numbering
        ("\\numberwithin{theorem}{section}\\setcounter{steps}{0}\\stepcounter{steps}Text", "Text"),
        ("\\refstepcounter{steps}\\addtocounter{footnote}{-1}Text", "Text"),
        # colours
        ("\\textcolor{black}{Feature} and {\\color{red} red} \\colorbox{yellow}{hi}", "Feature and red hi"),
        ("\\fcolorbox{black}{white}{boxed}", "boxed"),
        # links and labels
        ("see \\hyperref[sec:intro]{the introduction}", "see the introduction"),
        ("\\href[pdfnewwindow]{http://x.org}{the site}", "the site"),
        ("\\hyperlink{target}{here} and \\hypertarget{t2}{there}", "here and there"),
        ("\\includepdf[pages=1]{supp.pdf}Supplemental Information", "Supplemental Information"),
        (
            "\\crefalias{section}{appendix}\\crefformat{lemma}{Lem.~#2#1#3}\\crefrangeformat{eq}{(#3#1#4--#5#2#6)}Text",
            "Text",
        ),
        ("\\crefmultiformat{eq}{(#2#1#3)}{ and (#2#1#3)}{, (#2#1#3)}{ and (#2#1#3)}Text", "Text"),
        ("\\foreignlanguage{german}{Haus} \\selectlanguage{english}House", "Haus House"),
        # tikz
        ("A \\tikz[baseline]{\\draw (0,0) circle (1);} B \\tikz \\fill (0,0) circle (2pt); C", "A B C"),
        ("\\tikzset{every node/.style={font=\\small}}\\usetikzlibrary{arrows}Text", "Text"),
        # text arguments keep their text, joined as LaTeX sets them
        ("\\IEEEPARstart{T}{his} paper", "This paper"),
        ("\\lettrine[lines=2]{W}{e} show", "We show"),
    ],
)
def test_arguments_that_are_no_text(latex: str, text: str) -> None:
    assert latex_to_text(latex).split() == text.split()
    assert " ".join(_body(latex)).split() == text.split()


def test_environment_arguments_are_no_text() -> None:
    body = (
        "\\begin{minipage}[t]{0.48\\textwidth}Left column.\\end{minipage}\n"
        "\\begin{multicols}{2}Two columns.\\end{multicols}\n"
        "\\begin{otherlanguage}{french}Bonjour.\\end{otherlanguage}\n"
        "\\begin{adjustbox}{max width=\\textwidth}Boxed.\\end{adjustbox}"
    )
    assert _body(body) == ["Left column.", "Two columns.", "Bonjour.", "Boxed."]


_PNAS = r"""\documentclass[9pt,twocolumn,twoside]{pnas-new}
\setboolean{displaywatermark}{false}
\title{A title}
\begin{abstract}An abstract.\end{abstract}
\begin{document}
\maketitle
\thispagestyle{firststyle}
\ifthenelse{\boolean{shortarticle}}{\ifthenelse{\boolean{singlecolumn}}{\abscontentformatted}{\abscontent}}{}

\dropcap{T}his is the first paragraph.
\ifthenelse{\boolean{displaywatermark}}{\textbf{DRAFT}}{Final text.}
\newif\ifarxiv \arxivtrue
\ifarxiv Preprint version.\else Journal version.\fi
\iftrue\else Never printed.\fi
\end{document}
"""


def test_conditionals_print_the_branch_latex_takes() -> None:
    """PNAS's template opens the body with ``\\ifthenelse{\\boolean{shortarticle}}{...}{}``;
    ifthen booleans are false until set, ``\\newif`` switches too."""
    doc = parse_latex(LatexSource(main="m.tex", text=_PNAS), "pnas")
    assert [p.text for p in doc.body_text] == ["This is the first paragraph. Final text. Preprint version."]


def test_one_table_says_which_arguments_are_text() -> None:
    assert ARGUMENTS["textcolor"] == "omt" and ARGUMENTS["hyperref"] == "ot"
    assert all(set(spec) <= set("soOdmtgly=_") for spec in ARGUMENTS.values())
