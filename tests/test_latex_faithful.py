"""corpus.parse.latex read as TeX reads it (issue 27): brace recovery, the main file, citation
styles, labels, front matter, math symbols, macro arguments and bibliographies, each on real
LaTeX from ../shared (or from tests/data, see its provenance.tsv) and, where no real file
shows a case, on a minimal reproduction."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from conftest import DATA
from test_latex_fidelity import FIDELITY, _paragraphs, _spans_exact

from corpus.ingest.eprint import LatexSource, assemble_source, find_main_tex
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import LatexError, latex_to_text, parse_bibliography, parse_latex

LEGWORK = FIDELITY / "TeamLEGWORK+LEGWORK-paper" / "arxiv"
TESTDATA = Path(__file__).parent / "data"


def _source(root: Path) -> LatexSource:
    return assemble_source(root, find_main_tex(root))


# --------------------------------------------------------------- 1: unbalanced braces


def test_an_unclosed_brace_closes_at_the_end_of_its_paragraph(shared_data) -> None:
    """TeX only warns about an unclosed ``{``; the paper must not be lost for it. A real paper
    with the issue's sentence put into its introduction keeps every paragraph."""
    src = _source(LEGWORK)
    good = parse_latex(src, "legwork")
    anchor = "So far, most studies made use of custom made codes"
    assert anchor in src.text
    broken = src.model_copy(
        update={"text": src.text.replace(anchor, "Our {\\textsc{LEGWORK}$_{NN}$ model. " + anchor, 1)}
    )
    warnings: list[str] = []
    doc = parse_latex(broken, "legwork", warnings=warnings)
    assert len(doc.body_text) == len(good.body_text)
    changed = [
        (a.text, b.text) for a, b in zip(good.body_text, doc.body_text, strict=True) if a.text != b.text
    ]
    assert len(changed) == 1
    assert changed[0][1] == changed[0][0].replace("So far,", "Our LEGWORK_NN model. So far,")
    assert [w.split(":")[0] for w in warnings] == ["unbalanced_braces"]
    assert "line" in warnings[0]
    # one '}' too many: TeX drops it ("Too many }'s") and goes on
    extra = src.model_copy(update={"text": src.text.replace(anchor, "So} far" + anchor[6:], 1)})
    warnings = []
    doc = parse_latex(extra, "legwork", warnings=warnings)
    assert [p.text for p in doc.body_text] == [p.text for p in good.body_text]
    assert warnings and warnings[0].startswith("unbalanced_braces")
    _spans_exact(doc)


def test_an_unclosed_argument_ends_with_its_environment() -> None:
    text = (
        "\\documentclass{article}\\begin{document}\\section{A}\n"
        "\\begin{itemize}\\item First \\emph{never closed\\end{itemize}\nAfter the list.\n\n"
        "Next paragraph \\textbf{bold}.\n\\end{document}\n"
    )
    warnings: list[str] = []
    doc = parse_latex(LatexSource(main="m.tex", text=text), "t", warnings=warnings)
    assert [p.text for p in doc.body_text] == [
        "First never closed",
        "After the list.",
        "Next paragraph bold.",
    ]
    assert len(warnings) == 1


# --------------------------------------------------------------- 2: the main file


BASIS = FIDELITY / "bruce-edelman+CoveringYourBasis" / "arxiv"


def test_main_file_whose_document_begins_in_an_input(shared_data, tmp_path: Path) -> None:
    """``ms.tex`` = preamble + ``\\input{ms_text}``, the document in ms_text.tex, beside a
    short standalone file (an ORCID badge, a figure) that has both ``\\documentclass`` and
    ``\\begin{document}``: the paper is ms.tex, not the stub. The real multi-file paper is
    laid out that way in tmp_path; it must parse to the same paragraphs as its own layout."""
    root = tmp_path / "eprint"
    shutil.copytree(BASIS, root)
    ms = (root / "ms.tex").read_text()
    cut = ms.index("\\begin{document}")
    (root / "ms.tex").write_text(ms[:cut] + "\\input{ms_text}\n")
    (root / "ms_text.tex").write_text(ms[cut:])
    stub = "\\documentclass{standalone}\n\\usepackage{tikz}\n\\begin{document}\n"
    stub += "\\begin{tikzpicture}\\draw (0,0) circle (1);\\end{tikzpicture}\n" * 8 + "\\end{document}\n"
    (root / "orcid_badge.tex").write_text(stub)
    assert find_main_tex(root) == root / "ms.tex"
    renamed = tmp_path / "renamed"  # no conventional name to lean on: the larger document wins
    shutil.copytree(root, renamed)
    (renamed / "ms.tex").rename(renamed / "edelman_basis.tex")
    assert find_main_tex(renamed) == renamed / "edelman_basis.tex"
    doc = parse_latex(assemble_source(root, find_main_tex(root)), "basis")
    good = parse_latex(_source(BASIS), "basis")
    assert [p.text for p in doc.body_text] == [p.text for p in good.body_text]
    assert len(doc.body_text) > 30


# --------------------------------------------------------------- 3: how the paper prints its cites

_NAME_YEAR_SPAN = re.compile(r"^\D+ (?:\(\d{4}[a-z]?\)|\d{4}[a-z]?)$|^\D+, \d{4}[a-z]?$")


@pytest.mark.parametrize(
    "repo", ["TeamLEGWORK+LEGWORK-paper", "katiebreivik+BackPop", "bruce-edelman+CoveringYourBasis"]
)
def test_author_year_from_the_class_and_the_body_bibliographystyle(shared_data, repo) -> None:
    """AASTeX loads natbib itself and ``\\bibliographystyle{aasjournal}`` sits in the body:
    an e-print with only its .bib (no .bbl) prints its cites by author and year, as with the .bbl."""
    src = _source(FIDELITY / repo / "arxiv")
    with_bbl = parse_latex(src, repo)
    doc = parse_latex(src.model_copy(update={"bbl": None}), repo)
    assert doc.citation_style == with_bbl.citation_style == "NAME-YEAR"
    spans = [s for p in _paragraphs(doc) for s in p.cite_spans]
    assert len(spans) == sum(len(p.cite_spans) for p in _paragraphs(with_bbl))
    assert all(s.ref_id for s in spans) and not any("[" in s.text for s in spans)
    assert all(_NAME_YEAR_SPAN.match(s.text) for s in spans), [s.text for s in spans][:5]
    # parenthetical cites print in parentheses, several keys joined by "; "
    assert any(re.search(r"\((?:e\.g\. )?[^()]+, \d{4}[a-z]?; [^()]+, \d{4}", p.text) for p in doc.body_text)
    _spans_exact(doc)


_AY = r"""\documentclass{article}
%s
\begin{document}
\section{Intro}
Known \cite{smith} and \citep{smith,lee}, \citet{lee}.
%s
\end{document}
"""
_BIB = (
    "@article{smith, author={Smith, Ann and Jones, Bo and Roe, Cy}, title={One}, year={2019}, journal={J}}\n"
    "@article{lee, author={Lee, Dan}, title={Two}, year={2020}, journal={K}}\n"
)


@pytest.mark.parametrize(
    ("preamble", "back", "expected"),
    [
        # natbib loaded by the e-print's own style file (ICLR, NeurIPS and the like ship theirs)
        (
            "\\usepackage{iclr2025_conference}",
            "\\bibliographystyle{iclr2025_conference}\\bibliography{refs}",
            "Known Smith et al. (2019) and (Smith et al., 2019; Lee, 2020), Lee (2020).",
        ),
        # natbib named by the class: MNRAS's \cite is natbib's (textual)
        (
            "",
            "\\bibliographystyle{mnras}\\bibliography{refs}",
            "Known Smith et al. (2019) and (Smith et al., 2019; Lee, 2020), Lee (2020).",
        ),
        (
            "\\usepackage[numbers]{natbib}",
            "\\bibliographystyle{plainnat}\\bibliography{refs}",
            "Known [1] and [1, 2], Lee [2].",
        ),
        (
            "\\usepackage[backend=biber,style=authoryear-comp]{biblatex}\\addbibresource{refs.bib}",
            "\\printbibliography",
            "Known Smith et al., 2019 and (Smith et al., 2019; Lee, 2020), Lee (2020).",
        ),
        (
            "\\usepackage[style=ext-authoryear-icomp]{biblatex}",
            "",
            "Known Smith et al., 2019 and (Smith et al., 2019; Lee, 2020), Lee (2020).",
        ),
        (
            "\\usepackage[citestyle=apa,bibstyle=apa]{biblatex}",
            "",
            "Known Smith et al., 2019 and (Smith et al., 2019; Lee, 2020), Lee (2020).",
        ),
        ("\\usepackage[style=numeric-comp]{biblatex}", "", "Known [1] and [1, 2], Lee [2]."),
    ],
)
def test_cite_style_as_the_paper_prints_it(tmp_path: Path, preamble, back, expected) -> None:
    root = tmp_path / "e"
    root.mkdir()
    cls = "mnras" if "mnras" in back else "article"
    (root / "main.tex").write_text((_AY % (preamble, back)).replace("{article}", "{" + cls + "}"))
    (root / "refs.bib").write_text(_BIB)
    (root / "iclr2025_conference.sty").write_text("\\RequirePackage{natbib}\n\\RequirePackage{fancyhdr}\n")
    doc = parse_latex(_source(root), "t")
    assert doc.body_text[0].text == expected
    assert doc.citation_style == ("BRACKET" if "[1]" in expected else "NAME-YEAR")


# --------------------------------------------------------------- 7: what a \label refers to

TEORTH = FIDELITY / "teorth+equational_theories" / "paper"


def _ref_texts(doc: StructuredDoc, before: str) -> list[str]:
    return [s.text for p in _paragraphs(doc) for s in p.ref_spans if p.text[: s.start].endswith(before)]


def test_labels_of_theorems_items_and_comma_labels_on_real_papers(shared_data) -> None:
    doc = parse_latex(_source(TEORTH), "teorth")
    # \item\label{inter} in an enumerate: "Option~\ref{inter}" is the item's number
    assert set(_ref_texts(doc, "Option ")) == {"2", "3"}
    # theorem-like environments share the theorem counter, numbered within sections
    sec = next(e.num for e in doc.ref_entries.values() if e.text == "Counterexample constructions")
    examples = [s.text for p in _paragraphs(doc) for s in p.ref_spans if s.text.startswith("Example")]
    assert examples and all(re.fullmatch(r"Example \d+\.\d+", t) for t in examples), examples
    opposite = next(p for p in doc.body_text if "We now obtain the opposite refutation" in p.text)
    assert re.search(rf"to Example {sec}\.\d+ using", opposite.text)
    theorems = [s.text for p in _paragraphs(doc) for s in p.ref_spans if s.text.startswith("Theorem")]
    assert theorems and all(re.fullmatch(r"Theorem \d+\.\d+", t) for t in theorems)
    unresolved = [s for p in _paragraphs(doc) for s in p.ref_spans if s.ref_id is None]
    assert unresolved == []
    # LEGWORK: \label{eq:g(n,e)}, a label with a comma in it, is one label
    legwork = parse_latex(_source(LEGWORK), "legwork")
    assert not [s for p in _paragraphs(legwork) for s in p.ref_spans if s.ref_id is None]
    eq = [s for p in legwork.body_text for s in p.ref_spans if p.text[: s.start].endswith("(see Eq. ")]
    assert eq and eq[0].text.isdigit() and legwork.ref_entries[eq[0].ref_id].type == "equation"


def test_labels_in_titles_theorems_and_algorithms() -> None:
    text = r"""\documentclass{article}
\usepackage{amsthm,thmtools,algorithm}
\newtheorem{thm}{Theorem}[section]
\newtheorem{lem}[thm]{Lemma}
\newtheorem*{claim*}{Claim}
\declaretheorem[name=Conjecture]{conj}
\begin{document}
\section{\label{sec:intro}Introduction}
See Section~\ref{sec:intro}, \autoref{thm:a}, Lemma~\ref{lem:b}, \cref{conj:c} and Algorithm~\ref{alg:x}.
\section{Results}
\begin{thm}\label{thm:a} A theorem.\end{thm}
\begin{lem}\label{lem:b} A lemma.\end{lem}
\begin{conj}\label{conj:c} A conjecture.\end{conj}
\begin{algorithm}\caption{Greedy}\label{alg:x}\begin{algorithmic}\State x\end{algorithmic}\end{algorithm}
After \ref{thm:a}, the section is \ref{sec:res}.\label{sec:res}
\end{document}
"""
    doc = parse_latex(LatexSource(main="m.tex", text=text), "t")
    p = doc.body_text[0]
    assert p.text == "See Section 1, Theorem 2.1, Lemma 2.2, Conjecture 1 and Algorithm 1."
    assert all(s.ref_id for s in p.ref_spans)
    assert doc.ref_entries[p.ref_spans[-1].ref_id].text == "Greedy"
    assert doc.body_text[-1].text.startswith("After 2.1, the section is 2.")


# --------------------------------------------------------------- 9: math symbols


def test_math_symbols_come_from_a_maintained_table_and_set_braces_stay(shared_data) -> None:
    """teorth's paper (amsart, logic) writes \\colon, \\models, \\neg, \\lor, \\implies and
    ``a,b\\in\\{-1,0,1\\}``: every one must print, as unimathsymbols maps it."""
    text = " ".join(p.text for p in _paragraphs(parse_latex(_source(TEORTH), "teorth")))
    assert "any function f : M → M which" in text  # (source spacing kept: "f \\colon M")
    assert "a,b∈{-1,0,1}" in text
    assert "with D ∨ ¬ L implies" in text or "with D∨¬L implies" in text
    assert "⊧" in text and ("⟹" in text or "⇒" in text)
    assert "functions f,g : M → M, such as the fact that f = f ∘ f ∘ g implies" in text


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        ("$U_i\\ne U_j$", "U_i≠ U_j"),
        ("$a\\gets b$", "a← b"),
        ("$p\\iff q$", "p⇔ q"),
        ("$\\neg p\\land q\\lor r$", "¬ p∧ q∨ r"),
        ("$\\Gamma\\models\\bot$", "Γ⊧⊥"),
        ("$\\deg f=\\det A$", "deg f=det A"),
        ("$\\Pr[X]$, $\\Re z$, $\\Im z$", "Pr[X], ℜ z, ℑ z"),
        ("$\\Box p$", "□ p"),
        ("$x\\in\\{0,1\\}$ and $\\{x\\}$", "x∈{0,1} and {x}"),
        ("where $c\\colon Q\\times Y\\to R$", "where c: Q× Y→ R"),
    ],
)
def test_math_symbol_pieces(latex: str, text: str) -> None:
    assert latex_to_text(latex) == text


# --------------------------------------------------------------- 11: bibliographies


def _names(e) -> list[tuple[str, str]]:
    return [(" ".join([a.first, *a.middle]).strip(), a.last) for a in e.authors]


@pytest.mark.parametrize(
    "repo", ["TeamLEGWORK+LEGWORK-paper", "katiebreivik+BackPop", "bruce-edelman+CoveringYourBasis"]
)
def test_aas_bbl_names_surname_comma_initials(shared_data, repo) -> None:
    """aasjournal writes "{Fuller}, J., \\& {Ma}, L. 2019" and "{de Mink}, S.~E.": short and
    particled surnames pair with their initials, never become authors of their own."""
    doc = parse_latex(_source(FIDELITY / repo / "arxiv"), repo)
    for e in doc.bib_entries.values():
        if e.raw_text[:1].islower():  # "{pandas development team}, T.": the .bib's own mistake
            continue
        for _first, last in _names(e):
            assert len(last.replace(" ", "")) > 1 and not re.fullmatch(r"(?:[A-Z]\.?\s*)+", last), (
                e.raw_text,
                last,
            )
    by_key = {n[1] for e in doc.bib_entries.values() for n in _names(e)}
    assert "de Mink" in by_key or repo == "TeamLEGWORK+LEGWORK-paper"


def test_aas_bbl_short_surnames(shared_data) -> None:
    doc = parse_latex(_source(FIDELITY / "katiebreivik+BackPop" / "arxiv"), "backpop")
    fuller = next(e for e in doc.bib_entries.values() if e.raw_text.startswith("Fuller"))
    assert _names(fuller) == [("J.", "Fuller"), ("L.", "Ma")]
    ng = next(e for e in doc.bib_entries.values() if e.raw_text.startswith("Ng, K. K. Y."))
    assert _names(ng)[:2] == [("K. K. Y.", "Ng"), ("S.", "Vitale")]


_MNRAS_BBL = r"""\begin{thebibliography}{}
\makeatletter
\relax
\def\mn@urlcharsother{\let\do\@makeother \do\$\do\&\do\#\do\^\do\_\do\%\do\~}
\def\mn@doi{\begingroup\mn@urlcharsother \@ifnextchar [ {\mn@doi@}
  {\mn@doi@[]}}
\def\mn@doi@[#1]#2{\def\@tempa{#1}\ifx\@tempa\@empty \href
  {http://dx.doi.org/#2} {doi:#2}\else \href {http://dx.doi.org/#2} {#1}\fi
  \endgroup}
\def\mn@eprint#1#2{\mn@eprint@#1:#2::\@nil}
\def\mn@eprint@arXiv#1{\href {http://arxiv.org/abs/#1} {{\tt arXiv:#1}}}
\def\eprint#1#2{\mn@eprint #1:#2::\@nil}

\bibitem[\protect\citeauthoryear{{Abbott} et~al.,}{{Abbott} et~al.}{2017}]{Abbott2017}
{Abbott} B.~P.,  et~al., 2017, \mn@doi [Phys. Rev. Lett.] {10.1103/PhysRevLett.119.161101}, \href {https://ui.adsabs.harvard.edu/abs/2017PhRvL.119p1101A} {119, 161101}

\bibitem[\protect\citeauthoryear{Kasen, Metzger, Barnes, Quataert \& Ramirez-Ruiz}{Kasen et~al.}{2017}]{Kasen2017}
Kasen D., Metzger B., Barnes J., Quataert E., Ramirez-Ruiz E., 2017, \mn@doi [\nat] {10.1038/nature24453}, \href {https://ui.adsabs.harvard.edu/abs/2017Natur.551...80K} {551, 80}

\bibitem[\protect\citeauthoryear{{van der Walt}, Colbert \& Varoquaux}{{van der Walt} et~al.}{2011}]{vanderWalt2011}
{van der Walt} S., Colbert S.~C., Varoquaux G., 2011, \mn@doi [Computing in Science and Engineering] {10.1109/MCSE.2011.37}, 13, 22

\bibitem[\protect\citeauthoryear{Smith \& Jones}{Smith \& Jones}{2020}]{Smith2020}
Smith A.~B., Jones C., 2020, \mnras, 491, 1

\bibitem[\protect\citeauthoryear{{Ivezi{\'c}} et~al.,}{{Ivezi{\'c}} et~al.}{2019}]{Ivezic2019}
{Ivezi{\'c}} {\v Z}., et~al., 2019, \mn@doi [\apj] {10.3847/1538-4357/ab042c}, \href {https://ui.adsabs.harvard.edu/abs/2019ApJ...873..111I} {873, 111}

\makeatother
\end{thebibliography}
"""


def test_mnras_bbl_venues_and_surname_initials() -> None:
    got = {
        k: (_names(e), e.venue, e.year, e.other_ids.get("DOI"))
        for k, e in parse_bibliography(_MNRAS_BBL).items()
    }
    assert got["Abbott2017"] == (
        [("B. P.", "Abbott")],
        "Phys. Rev. Lett",
        2017,
        ["10.1103/PhysRevLett.119.161101"],
    )
    assert got["Kasen2017"][0] == [
        ("D.", "Kasen"),
        ("B.", "Metzger"),
        ("J.", "Barnes"),
        ("E.", "Quataert"),
        ("E.", "Ramirez-Ruiz"),
    ]
    assert got["Kasen2017"][1:3] == ("Nature", 2017)
    assert got["vanderWalt2011"][0] == [("S.", "van der Walt"), ("S. C.", "Colbert"), ("G.", "Varoquaux")]
    assert got["vanderWalt2011"][1] == "Computing in Science and Engineering"
    assert got["Smith2020"][:2] == ([("A. B.", "Smith"), ("C.", "Jones")], "MNRAS")
    assert got["Ivezic2019"][:2] == ([("Ž.", "Ivezić")], "ApJ")
    for e in parse_bibliography(_MNRAS_BBL).values():
        assert "@" not in e.venue + e.raw_text and not e.title  # MNRAS prints no article titles


def test_free_form_bibitems_surname_initials_and_comma_styles() -> None:
    bbl = r"""\begin{thebibliography}{9}
\bibitem{a} Smith J. and Jones K. Deep learning of things. Phys. Rev. D 49, 1234 (1994).
\bibitem{b} Smith, J., Jones, K.: Deep learning of things. Phys. Rev. D \textbf{49}, 1234 (1994)
\bibitem{c} J. Smith, K. Jones, Deep learning of things, Phys. Rev. D \textbf{49}, 1234 (1994), https://example.org/x.
\bibitem{d} Abramowitz M., Stegun I. A., 1964, Handbook of Mathematical Functions. Dover, New York
\bibitem{e} H. Matsumura, Commutative Algebra, Mathematics Lecture Note Series, Benjamin/Cummings, San Francisco (1980).
\end{thebibliography}"""
    got = {k: (e.title, _names(e), e.year) for k, e in parse_bibliography(bbl).items()}
    things = [("J.", "Smith"), ("K.", "Jones")]
    assert got["a"] == ("Deep learning of things", things, 1994)
    assert got["b"] == ("Deep learning of things", things, 1994)
    assert got["c"] == ("Deep learning of things", things, 1994)
    assert got["d"] == (
        "Handbook of Mathematical Functions",
        [("M.", "Abramowitz"), ("I. A.", "Stegun")],
        1964,
    )
    assert got["e"] == ("Commutative Algebra", [("H.", "Matsumura")], 1980)
    venues = {k: e.venue for k, e in parse_bibliography(bbl).items()}
    assert venues["a"] == venues["c"] == "Phys. Rev. D"


_BLX_OLD = r"""\refsection{0}
  \sortlist[entry]{nty/global/}
    \entry{smith2019}{article}{}
      \name{author}{2}{}{%
        {{hash=7d0c}{Smith}{S\bibinitperiod}{John\bibnamedelima Paul}{J\bibinitperiod\bibinitdelim P\bibinitperiod}{}{}{}{}}%
        {{hash=8e1f}{Walt}{W\bibinitperiod}{Stéfan}{S\bibinitperiod}{van\bibnamedelimb der}{v\bibinitperiod\bibinitdelim d\bibinitperiod}{}{}}%
      }
      \strng{namehash}{7d0c8e1f}
      \field{labelyear}{2019}
      \field{title}{A study of {CARMA} things}
      \field{journaltitle}{J. Things}
      \field{volume}{12}
      \field{year}{2019}
      \field{pages}{1\bibrangedash 10}
      \verb{doi}
      \verb 10.1000/xyz
      \endverb
    \endentry
  \endsortlist
\endrefsection
"""
_BLX_NEW = r"""\entry{vaswani2017}{inproceedings}{}
  \name{author}{2}{}{%
    {{un=0,uniquepart=base,hash=bd05}{%
       family={Vaswani},
       familyi={V\bibinitperiod},
       given={Ashish},
       giveni={A\bibinitperiod},
       givenun=0}}%
    {{un=0,uniquepart=base,hash=1a2b}{%
       family={Walt},
       familyi={W\bibinitperiod},
       given={Stéfan},
       giveni={S\bibinitperiod},
       prefix={van\bibnamedelima der},
       prefixi={v\bibinitperiod\bibinitdelim d\bibinitperiod},
       givenun=0}}%
  }
  \field{title}{Attention is all you need}
  \field{booktitle}{NeurIPS}
  \field{year}{2017}
  \field{pages}{5998\bibrangedash 6008}
\endentry
"""


def test_biblatex_bbl_names_old_and_new_format() -> None:
    old = parse_bibliography(_BLX_OLD)["smith2019"]
    assert _names(old) == [("John Paul", "Smith"), ("Stéfan", "van der Walt")]
    assert (old.title, old.venue, old.year, old.pages) == (
        "A study of CARMA things",
        "J. Things",
        2019,
        "1-10",
    )
    assert old.other_ids["DOI"] == ["10.1000/xyz"]
    new = parse_bibliography(_BLX_NEW)["vaswani2017"]
    assert _names(new) == [("Ashish", "Vaswani"), ("Stéfan", "van der Walt")]
    assert (new.title, new.venue, new.pages) == ("Attention is all you need", "NeurIPS", "5998-6008")


# --------------------------------------------------------------- 6 and 11: .bib files


def test_bib_keys_match_case_insensitively_as_bibtex_does(shared_data) -> None:
    """``\\cite{wagg+2022}`` finds ``@article{Wagg+2022,``: BibTeX matches keys whatever their case."""
    src = _source(LEGWORK)
    key = next(k for k in re.findall(r"\\citep?\{([^{},]+)\}", src.text) if k != k.lower())
    text = src.text.replace("{" + key + "}", "{" + key.lower() + "}")
    doc = parse_latex(src.model_copy(update={"text": text, "bbl": None}), "legwork")
    spans = [s for p in _paragraphs(doc) for s in p.cite_spans]
    assert spans and all(s.ref_id for s in spans) and not any(s.text == "[?]" for s in spans)


def test_bib_file_read_by_bibtexparser_with_bibtex_names_and_strings() -> None:
    bib = r"""@string{prl = "Phys. Rev. Lett."}
@string{aa = {Astron. } # "Astrophys."}
@article{Vander2020,
  author = {van der Walt, Jr, St{\'e}fan and {The LIGO Scientific Collaboration} and Ludwig van Beethoven},
  title = {{CARMA} observations of {M}ars},
  journal = prl, year = 2020, pages = {1--10}, month = jan,
}
@article{other, author = "Smith, J. K.", title = "T", journal = aa, year = "1999"}
@article{broken, author = {Doe, Jane}, title = {Never closed, journal = {J}, year = {2001},
@misc{after, title = {Still read}, author = {Roe, R.}}
"""
    got = parse_bibliography(bib)
    v = got["Vander2020"]
    assert [(a.first, a.last, a.suffix) for a in v.authors] == [
        ("Stéfan", "van der Walt", "Jr"),
        ("", "The LIGO Scientific Collaboration", ""),
        ("Ludwig", "van Beethoven", ""),
    ]
    assert (v.title, v.venue, v.year, v.pages) == (
        "CARMA observations of Mars",
        "Phys. Rev. Lett.",
        2020,
        "1-10",
    )
    assert got["other"].venue == "Astron. Astrophys." and got["other"].authors[0].middle == ["K."]
    assert got["after"].title == "Still read" and "broken" in got


# --------------------------------------------------------------- 4 and 5: acmart's \cite, cite aliases


def test_acmart_author_year_cite_is_parenthetical(tmp_path: Path) -> None:
    root = tmp_path / "e"
    root.mkdir()
    body = "\\section{Intro}\nquickly \\cite{smith,lee}; \\citet{lee} showed it.\n\\bibliographystyle{ACM-Reference-Format}"
    (root / "main.tex").write_text(
        "\\documentclass[sigconf]{acmart}\n\\citestyle{acmauthoryear}\n\\begin{document}\n"
        + body
        + "\n\\end{document}\n"
    )
    (root / "refs.bib").write_text(_BIB)
    doc = parse_latex(_source(root), "acm")
    assert doc.citation_style == "NAME-YEAR"
    assert doc.body_text[0].text == "quickly (Smith et al., 2019; Lee, 2020); Lee (2020) showed it."
    (root / "main.tex").write_text(
        "\\documentclass[sigconf]{acmart}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    )
    numeric = parse_latex(_source(root), "acm")  # acmart's default is numeric
    assert numeric.citation_style == "BRACKET" and numeric.body_text[0].text.startswith("quickly [1, 2];")


def test_citetalias_and_citepalias_print_their_alias(shared_data) -> None:
    """natbib's ``\\defcitealias{key}{Paper~I}``: ``\\citetalias`` prints "Paper I", ``\\citepalias``
    "(Paper I)", linked like any cite (on a real AASTeX paper, an alias given to one of its keys)."""
    src = _source(BASIS)
    key = re.search(r"\\citet\{([^{},]+)\}", src.text).group(1)
    text = src.text.replace("\\begin{document}", "\\defcitealias{" + key + "}{Paper~I}\n\\begin{document}", 1)
    text = text.replace("\\citet{" + key + "}", "\\citetalias{" + key + "} and \\citepalias{" + key + "}", 1)
    doc = parse_latex(src.model_copy(update={"text": text}), "basis")
    spans = [(s.text, s.ref_id) for p in _paragraphs(doc) for s in p.cite_spans if "Paper I" in s.text]
    assert len(spans) == 2 and spans[0][1] == spans[1][1] is not None
    p = next(p for p in doc.body_text if "Paper I" in p.text)
    assert "Paper I and (Paper I)" in p.text


# --------------------------------------------------------------- 8: front matter


def test_front_matter_of_aastex5_elsarticle_and_credit_macros() -> None:
    text = r"""\documentclass{aastex}
\newcommand{\blfootnote}[1]{\begingroup\renewcommand\thefootnote{}\footnote{#1}\addtocounter{footnote}{-1}\endgroup}
\begin{document}
\title{Long-lived Habitable Zones\thanks{Based on observations made with the {\it Hubble} Space Telescope.}}
\author{Andrew Vanderburg\altaffilmark{1,$\star$}, Antoine B\'edard\altaffilmark{2}}
\altaffiltext{1}{Department of Physics, Massachusetts Institute of Technology, Cambridge, MA 02139, USA}
\altaffiltext{$\star$}{\url{andrewv@mit.edu}, Sloan Research Fellow}
\altaffiltext{2}{Department of Physics, University of Warwick, CV4 7AL, Coventry, UK}
\blfootnote{These authors contributed equally to this work.}
\begin{abstract}We study white dwarfs.\end{abstract}
\begin{keyword}white dwarfs \sep planets \sep habitability\end{keyword}
\begin{highlights}\item A highlight.\end{highlights}
\section{Introduction}
White dwarfs cool.
\end{document}
"""
    doc = parse_latex(LatexSource(main="m.tex", text=text), "t")
    assert doc.title == "Long-lived Habitable Zones"
    assert [p.text for p in doc.body_text] == ["White dwarfs cool."]
    assert doc.abstract[0].text == "We study white dwarfs."


# --------------------------------------------------------------- 10: macro arguments, own .sty files


def test_macros_in_the_eprints_own_sty_read_like_the_tex_ones(shared_data, tmp_path: Path) -> None:
    """LEGWORK's own macros (\\lw for "LEGWORK", \\referee, \\unit...) moved from ms.tex into
    a style file of the e-print (``\\usepackage{legworkmacros}``): the same text comes out."""
    root = tmp_path / "e"
    shutil.copytree(LEGWORK, root)
    lines = (root / "ms.tex").read_text().split("\n")
    start = next(i for i, x in enumerate(lines) if x.startswith("\\newcommand{\\todo}"))
    end = next(i for i, x in enumerate(lines) if x.startswith("\\newcommand{\\tutorialLink}")) + 1
    (root / "legworkmacros.sty").write_text(
        "\\ProvidesPackage{legworkmacros}\n" + "\n".join(lines[start:end]) + "\n"
    )
    (root / "ms.tex").write_text("\n".join(lines[:start] + ["\\usepackage{legworkmacros}"] + lines[end:]))
    good = parse_latex(_source(LEGWORK), "legwork")
    doc = parse_latex(_source(root), "legwork")
    assert any("LEGWORK" in p.text for p in doc.body_text)
    assert [p.text for p in doc.body_text] == [p.text for p in good.body_text]


def test_macro_arguments_do_not_leak_and_user_tables_leave_the_body() -> None:
    text = r"""\documentclass{article}
\newenvironment{mytable}[1]{\begin{center}\begin{tabular}{#1}}{\end{tabular}\end{center}}
\begin{document}
\section{Intro}
{\fontfamily{ptm}\selectfont Times text} and {\fontsize{10}{12}\selectfont sized} words.
\addcontentsline{toc}{section}{References}
\begin{mytable}{lcr}
alpha & beta & gamma \\ 1 & 2 & 3 \\
\end{mytable}
\begin{resultstable}{|l|c|}
\hline Model & Score \\ \hline A & 0.9 \\ \hline
\end{resultstable}
After the tables.
\end{document}
"""
    doc = parse_latex(LatexSource(main="m.tex", text=text), "t")
    assert [p.text for p in doc.body_text] == ["Times text and sized words.", "After the tables."]


# --------------------------------------------------------------- 12: AASTeX tables, siunitx


def test_siunitx_quantities_print_with_their_units(shared_data) -> None:
    msd = parse_latex(_source(FIDELITY / "arm61+msd-errors" / "arxiv"), "msd")
    assert any("128 particles undergoing a 128 step 3D lattice" in e.text for e in msd.ref_entries.values())
    assert (
        latex_to_text(
            r"\SI{5}{\kilo\meter}, \SI{3.2}{\meter\per\second\squared}, \si{\angstrom^3}, \qty{10}{\percent}, "
            r"\SIrange{1}{5}{\nano\meter}, \ang{30}, \num{4096}, \SI[per-mode=symbol]{9.8}{m/s^2}"
        )
        == "5 km, 3.2 m s^-2, Å^3, 10 %, 1 nm – 5 nm, 30°, 4096, 9.8 m/s^2"
    )


def test_aastex_tablecaption_is_the_table_caption() -> None:
    text = r"""\documentclass{aastex631}
\begin{document}
\section{Data}
See Table~\ref{tab:obs}.
\begin{deluxetable}{lcc}
\tablecaption{Observations of the targets\label{tab:obs}}
\tablehead{\colhead{Star} & \colhead{Date} & \colhead{Exposure}}
\startdata
HD 1 & 2020-01-01 & 300 \\
\enddata
\tablecomments{Exposure in seconds.}
\end{deluxetable}
\end{document}
"""
    doc = parse_latex(LatexSource(main="m.tex", text=text), "t")
    assert doc.ref_entries["TABREF0"].text == "Observations of the targets"
    assert doc.body_text[0].text == "See Table 1."


def test_free_form_names_stop_at_title_words_venues_and_links() -> None:
    bbl = r"""\begin{thebibliography}{9}
\bibitem{f} John Smith and Karl Jones, Deep learning of things, Phys. Rev. D \textbf{49}, 1234 (1994), https://example.org/x.
\bibitem{g} {Kozłowski} S, {Kochanek} CS, {Wyrzykowski} {\L}, 2010. \textit{ApJ} 708:927
\end{thebibliography}"""
    got = {k: _names(e) for k, e in parse_bibliography(bbl).items()}
    assert got["f"] == [("John", "Smith"), ("Karl", "Jones")]
    assert got["g"] == [("S", "Kozłowski"), ("CS", "Kochanek"), ("Ł", "Wyrzykowski")]


def test_brace_repair_stays_bounded_on_hostile_text() -> None:
    """Thousands of unclosed braces are no paper: a clear failure, quickly; a hundred unclosed
    braces in a megabyte without a blank line are repaired in bounded time."""
    head = "\\documentclass{article}\\begin{document}\\section{A}\n"
    with pytest.raises(LatexError) as err:
        parse_latex(LatexSource(main="m.tex", text=head + "{" * 5000 + "x\n\\end{document}"), "t")
    assert err.value.code == "unbalanced_braces"
    text = head + ("word " * 2000 + "{") * 100 + "\n\\end{document}"
    start = time.process_time()
    warnings: list[str] = []
    doc = parse_latex(LatexSource(main="m.tex", text=text), "t", warnings=warnings)
    assert len(warnings) == 100 and doc.body_text and time.process_time() - start < 5


def test_eprint_keeps_what_its_own_class_loads_not_the_class(tmp_path: Path) -> None:
    root = tmp_path / "e"
    root.mkdir()
    (root / "main.tex").write_text("\\documentclass{myjournal}\n\\begin{document}\nText.\n\\end{document}\n")
    cls = "\\NeedsTeXFormat{LaTeX2e}\n\\LoadClass{article}\n\\RequirePackage[numbers]{natbib}\n"
    (root / "myjournal.cls").write_text(cls + "\\def\\x{" + "y" * 100_000 + "}\n")
    src = _source(root)
    assert src.packages == {"myjournal.cls": "\\LoadClass{article}\n\\RequirePackage[numbers]{natbib}"}


def test_inline_array_is_math_not_a_table(shared_data) -> None:
    """engrafo 1707.08043 writes ``$\\begin{array}{ccccc} L & ... \\end{array}$`` in a sentence:
    no column spec in the text, no table, no equation number taken; its cells are the sentence's
    math (issue 44: the diagram L → S′ → S′/m′ was cut out, "(If m′ is a maximal ideal) , with")."""
    doc = parse_latex(_source(DATA / "latex_sources" / "engrafo" / "1707.08043"), "1707.08043")
    text = " ".join(p.text for p in doc.body_text)
    assert (
        "ccccc" not in text
        and "(If m′ is a maximal ideal) L i↪ S′ π ⟶ S′/m′ , with π ∘ i an isomorphism." in text
    )
    assert not any(e.type == "table" and "array" in (e.latex or "")[:20] for e in doc.ref_entries.values())


def test_an_unclosed_environment_ends_with_its_paragraph(shared_data) -> None:
    """Issue 34: a figure or an equation never closed no longer fails the paper; TeX ends an
    unclosed display at the end of its paragraph, and so does the parser, with a warning. A
    real paper with one ``\\end{figure}`` and one ``\\end{equation}`` removed keeps its text."""
    src = _source(LEGWORK)
    good = parse_latex(src, "legwork")
    text = src.text.replace("\\end{figure}", "", 1).replace("\\end{equation}", "", 1)
    warnings: list[str] = []
    doc = parse_latex(src.model_copy(update={"text": text}), "legwork", warnings=warnings)
    assert [w.split(":")[0] for w in warnings] == ["unbalanced_environment"] * 2
    kept = {p.text for p in good.body_text} & {p.text for p in doc.body_text}
    assert len(kept) >= len(good.body_text) - 4
    _spans_exact(doc)
