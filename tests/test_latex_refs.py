"""References resolve where LaTeX resolves them (issue 34, J): labels given by jmlr's
``\\floatconts`` and its ``\\figureref`` family, listings (``label=`` and labels on code lines),
``\\proofref``, ``\\tag``; display equations stay in the parse as S2ORC keeps them."""

from __future__ import annotations

from conftest import DATA

from corpus.ingest.eprint import LatexSource, assemble_source, find_main_tex
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import parse_latex


def _parse(body: str, preamble: str = "", cls: str = "article") -> StructuredDoc:
    text = f"\\documentclass{{{cls}}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    return parse_latex(LatexSource(main="m.tex", text=text), "t")


def _refs(doc: StructuredDoc) -> list[tuple[str, str | None]]:
    return [(s.text, s.ref_id) for p in doc.body_text for s in p.ref_spans]


def test_jmlr_floatconts_and_its_ref_commands() -> None:
    doc = _parse(
        "\\section{Results}\\label{sec:res}\n"
        "\\begin{figure}\\floatconts{fig:acc}{\\caption{Accuracy.}}{\\includegraphics{acc}}\\end{figure}\n"
        "\\begin{table}\\floatconts{tab:data}{\\caption{Data.}}{\\begin{tabular}{c}1\\end{tabular}}\\end{table}\n"
        "See \\figureref{fig:acc}, \\tableref{tab:data}, \\sectionref{sec:res} and Figure~\\ref{fig:acc}.",
        cls="jmlr",
    )
    assert doc.body_text[0].text == "See Figure 1, Table 1, Section 1 and Figure 1."
    assert [r for _, r in _refs(doc)] == ["FIGREF0", "TABREF0", "SECREF0", "FIGREF0"]
    assert doc.ref_entries["FIGREF0"].text == "Accuracy."


def test_listing_labels_and_line_labels() -> None:
    doc = _parse(
        "\\section{Code}\n"
        "\\begin{lstlisting}[language=Python, caption={A loop}, label=lst:loop, escapechar=|]\n"
        "for i in range(3):\n    total += i |\\label{line:add}|\nprint(total)\n\\end{lstlisting}\n"
        "Listing~\\ref{lst:loop} adds on line~\\ref{line:add}.\n"
        "\\lstinputlisting[caption=Other, label={lst:file}]{other.py}\nAnd \\ref{lst:file}.",
        preamble="\\usepackage{listings}",
    )
    assert [p.text for p in doc.body_text] == ["Listing 1 adds on line 2.", "And 2."]
    assert all(r is not None for _, r in _refs(doc))
    entries = [e for e in doc.ref_entries.values() if e.text in ("A loop", "Other")]
    assert [e.num for e in entries] == ["1", "2"]


def test_proofref_and_tagged_equations() -> None:
    doc = _parse(
        "\\section{S}\n\\begin{theorem}\\label{thm:a} True.\\end{theorem}\n"
        "\\begin{equation}x=1\\tag{$\\star$}\\label{eq:star}\\end{equation}\n"
        "By \\proofref{thm:a} and \\eqref{eq:star}, done.",
        preamble="\\usepackage{amsmath,amsthm}",
    )
    assert doc.body_text[-1].text == "By 1 and (⋆), done."
    assert all(r is not None for _, r in _refs(doc))


def test_equation_rows_tags_and_subequations() -> None:
    """amsmath's numbering: one number per align row (a nested ``aligned`` is one row), tags
    per row, ``subequations`` lettered with the group's own label its number (cgois' paper
    labels the fourth row of a subequations alignat)."""
    doc = _parse(
        "\\begin{equation}a=1\\label{e1}\\end{equation}\n"
        "\\begin{align}b&=\\left\\{\\begin{aligned}x\\\\y\\end{aligned}\\right.\\label{e2}\\\\"
        " c&=2\\nonumber\\\\ d&=3\\tag{T}\\label{e3}\\\\ e&=4\\label{e4}\\end{align}\n"
        "\\begin{subequations}\\begin{align}f&=5\\\\g&=6\\label{e5b}\\end{align}\\label{group}\\end{subequations}\n"
        "\\begin{equation}h=7\\label{e6}\\end{equation}\n"
        "Refs \\eqref{e1}, \\eqref{e2}, \\eqref{e3}, \\eqref{e4}, \\eqref{e5b}, \\eqref{group}, \\eqref{e6}.",
        preamble="\\usepackage{amsmath}",
    )
    assert doc.body_text[-1].text == "Refs (1), (2), (T), (3), (4b), (4), (5)."


def test_display_equations_stay_in_the_parse(shared_data) -> None:
    """S2ORC keeps a display equation where it stands: an equation span (here of no width:
    the text around it is unchanged) with its LaTeX and its ``EQREFn`` entry. The releases
    print the text as before: peS2o and CiteWorth read the same paragraphs."""
    from corpus.release.pes2o import body_paragraphs

    doc = _parse(
        "\\section{S}\nLet\n\\begin{equation}x=1\\label{e}\\end{equation}\nThen, assuming \\eqref{e}, we go on.\n\n"
        "\\[ y = 2 \\]\n\nNext paragraph.",
        preamble="\\usepackage{amsmath}",
    )
    first = doc.body_text[0]
    assert first.text == "Let Then, assuming (1), we go on."
    (eq, display) = first.eq_spans
    assert (eq.start, eq.end, eq.text, eq.ref_id, eq.latex) == (3, 3, "", "EQREF0", "x=1\\label{e}")
    assert doc.ref_entries["EQREF0"].type == "equation" and doc.ref_entries["EQREF0"].num == "1"
    # an equation standing alone between blank lines belongs to the paragraph before it
    assert (display.start, display.ref_id, display.latex) == (len(first.text), "EQREF1", "y = 2")
    assert [p.text for p in doc.body_text] == [first.text, "Next paragraph."]
    assert [t for _, t in body_paragraphs(doc)] == [first.text, "Next paragraph."]
    # real paper: every display equation of msd-errors' body is anchored once
    root = DATA / "fidelity" / "latex" / "arm61+msd-errors" / "arxiv"
    msd = parse_latex(assemble_source(root, find_main_tex(root)), "msd")
    anchored = [s.ref_id for p in msd.abstract + msd.body_text + msd.back_matter for s in p.eq_spans]
    assert len(anchored) == len(set(anchored)) > 10
    for p in msd.body_text:
        for s in p.eq_spans:
            assert 0 <= s.start == s.end <= len(p.text) and msd.ref_entries[s.ref_id].latex == s.latex


def test_a_ref_or_cite_inside_inline_math_leaves_no_math_shift_unpaired() -> None:
    """``$(\\ref{a})$ from $(HD)$``: the span cuts the inline math, and each piece of text around it
    is closed and opened again where it is cut. Before, the first piece printed its ``$`` and the
    next pieces paired the shifts across the prose between two formulas (7 of the differential's
    155 papers, 37 stray ``$``; a ``\\\\`` before a closing ``$`` is a line break, not an escape)."""
    doc = _parse(
        "\\begin{equation}x\\tag{HD}\\label{rule:HD}\\end{equation}\n"
        "We derive $(\\ref{rule:HD})$ from $(HD)$ of it, $\\ref{rule:HD}, \\eqref{rule:HD}$ and $b$,\n"
        "per $\\cite{k}$ and \\(\\ref{rule:HD} + y\\), at \\$5; $\\left| a \\right|\\\\$ ends.\n"
        "\\begin{thebibliography}{1}\\bibitem{k} A. Bee. A title. 2020.\\end{thebibliography}"
    )
    (para,) = [p for p in doc.body_text if "derive" in p.text]
    assert (
        para.text == "We derive (HD) from (HD) of it, HD, (HD) and b, per [1] and HD + y, at $5; | a | ends."
    )
    assert _refs(doc) == [("HD", "EQREF0"), ("HD", "EQREF0"), ("(HD)", "EQREF0"), ("HD", "EQREF0")]
