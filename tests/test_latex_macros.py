"""The paper's own vocabulary prints as LaTeX prints it (issue 34, K, L): glossaries and
acronyms (``\\gls{key}`` prints the entry, its first use in full), and xparse commands
(``\\NewDocumentCommand``) expanded like ``\\newcommand`` ones."""

from __future__ import annotations

from corpus.ingest.eprint import LatexSource
from corpus.parse.latex import parse_latex


def _body(preamble: str, body: str) -> list[str]:
    text = f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    return [p.text for p in parse_latex(LatexSource(main="m.tex", text=text), "t").body_text]


def test_glossary_entries_and_acronyms() -> None:
    preamble = (
        "\\usepackage[acronym]{glossaries}\n\\makeglossaries\n"
        "\\newacronym{bfw}{BFW}{big freshwater}\n"
        "\\newacronym[longplural={graph neural networks}]{gnn}{GNN}{graph neural network}\n"
        "\\newglossaryentry{dataset}{name={data set}, description={a collection of data},"
        " plural={data sets}}\n"
    )
    body = (
        "The \\gls{bfw} dataset and the \\gls{bfw} again; \\Glspl{gnn}, then \\glspl{gnn}.\n\n"
        "One \\gls{dataset}, two \\glspl{dataset}; \\acrlong{bfw}, \\acrshort{gnn}, \\acrfull{gnn}.\n\n"
        "\\glsreset{bfw}Reset: \\gls{bfw}.\n\\printglossary[type=\\acronymtype]"
    )
    assert _body(preamble, body) == [
        "The big freshwater (BFW) dataset and the BFW again; Graph neural networks (GNNs), then GNNs.",
        "One data set, two data sets; big freshwater, GNN, graph neural network (GNN).",
        "Reset: big freshwater (BFW).",
    ]


def test_acronym_package() -> None:
    preamble = "\\usepackage{acronym}\n"
    body = (
        "\\begin{acronym}\n\\acro{CNN}{convolutional neural network}\n\\acro{LR}[LR]{learning rate}\n"
        "\\end{acronym}\n"
        "A \\ac{CNN} with a \\ac{LR}; the \\ac{CNN} and \\acp{CNN}, \\acl{LR}, \\acs{CNN}, \\acf{LR}."
    )
    assert _body(preamble, body) == [
        "A convolutional neural network (CNN) with a learning rate (LR); the CNN and CNNs, "
        "learning rate, CNN, learning rate (LR)."
    ]


def test_xparse_commands_expand() -> None:
    preamble = (
        "\\usepackage{xparse}\n"
        "\\NewDocumentCommand{\\norm}{m}{\\lVert #1\\rVert}\n"
        "\\NewDocumentCommand{\\Exp}{o m}{\\mathbb{E}\\IfValueT{#1}{_{#1}}[#2]}\n"
        "\\DeclareDocumentCommand{\\abs}{s m}{\\IfBooleanTF{#1}{\\left|#2\\right|}{|#2|}}\n"
        "\\NewDocumentCommand{\\model}{O{M}}{\\mathcal{#1}}\n"
    )
    body = "We bound $\\norm{X} \\le \\Exp[p]{X} + \\Exp{Y} + \\abs*{Z} + \\abs{W}$ in $\\model$ and $\\model[N]$."
    assert _body(preamble, body) == ["We bound ‖ X‖ ≤ 𝔼_p[X] + 𝔼[Y] + |Z| + |W| in ℳ and 𝒩."]


def test_glossary_entries_loaded_from_their_own_file(tmp_path) -> None:
    """``\\loadglsentries{glossary}`` reads the entries from glossary.tex: the e-print inlines it."""
    from corpus.ingest.eprint import assemble_source

    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage{glossaries}\n\\loadglsentries[main]{glossary}\n"
        "\\begin{document}\nThe \\gls{bfw} set.\n\\end{document}\n"
    )
    (tmp_path / "glossary.tex").write_text("\\newacronym{bfw}{BFW}{big freshwater}\n")
    doc = parse_latex(assemble_source(tmp_path, tmp_path / "main.tex"), "t")
    assert [p.text for p in doc.body_text] == ["The big freshwater (BFW) set."]


def test_a_body_that_begins_on_a_new_line_makes_no_blank_line_where_it_is_used() -> None:
    """TeX reads a body's line end as a space when the macro is defined, so a macro used at the
    start of a line never makes a blank line (a paragraph break). The class, seen in a real
    paper (knowledge-package orderings used inside ``$(X^*,\\n\\ord)$``): the paragraph was cut
    inside the formula. A blank line in a body is still a paragraph break."""
    preamble = "\\newcommand{\\ord}{\n\\preceq}\n\\def\\leqb{\n\\leq}\n\\newcommand{\\twopar}{one\n\ntwo}\n"
    body = (
        "We order words $(X^*,\n\\ord)$ and $(Y,\n\\leqb)$ by embedding.\n"
        "\\ord\n\\ord and the rest.\n\nThen \\twopar{} ends."
    )
    assert _body(preamble, body) == [
        "We order words (X^*, ≼) and (Y, ≤) by embedding. ≼ ≼ and the rest.",
        "Then one",
        "two ends.",
    ]
