"""Theorem-like headings print as LaTeX prints them (issue 34, C): "Theorem 2.3.", "Lemma 4.1
(Morse).", "Proof.", with the number a ``\\ref`` to the same label prints."""

from __future__ import annotations

import re

from conftest import DATA

from corpus.ingest.eprint import LatexSource, assemble_source, find_main_tex
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import parse_latex

TEORTH = DATA / "fidelity" / "latex" / "teorth+equational_theories" / "paper"


def _doc(shared_data) -> StructuredDoc:
    return parse_latex(assemble_source(TEORTH, find_main_tex(TEORTH)), "teorth")


def test_theorem_headings_of_a_real_math_paper(shared_data) -> None:
    """teorth's amsart paper: ``\\newtheorem{theorem}{Theorem}[section]`` and its siblings,
    ``\\begin{example}[Commutative counterexample]\\label{1286-ex}``, ``\\begin{proof}[Proof sketch]``."""
    doc = _doc(shared_data)
    texts = [p.text for p in doc.body_text]
    example = next(t for t in texts if "(Commutative counterexample)" in t)
    m = re.match(r"Example (\d+\.\d+) \(Commutative counterexample\)\. For the law ", example)
    assert m, example[:80]
    refs = {s.text for p in doc.body_text for s in p.ref_spans if s.text.startswith("Example")}
    assert f"Example {m.group(1)}" in refs  # \Cref{1286-ex} prints the number the heading shows
    assert any(t.startswith("Proof. Suppose that w_1 ≃ w_2 entails") for t in texts)
    assert any(t.startswith("Proof sketch. Using the linear ansatz") for t in texts)
    second = next(t for t in texts if t.startswith("Second proof of"))
    assert re.match(r"Second proof of Proposition \d+\.\d+\. \(Sketch\) The functional", second), second[:80]
    theorem = next(t for t in texts if "(Abstract greedy algorithm)" in t)
    assert re.match(r"Theorem \d+\.\d+ \(Abstract greedy algorithm\)\. Let ", theorem)
    # one heading a block: as many "Proof" openings as proof environments
    sources = "".join(p.read_text() for p in TEORTH.glob("*.tex") if p.name != "main.tex")
    opened = sum(1 for t in texts if re.match(r"(?:[A-Z][a-z ]+ )?[Pp]roof(?: [a-z]+)?[ .]", t))
    assert opened >= sources.count("\\begin{proof}") - 2


_LNCS = r"""\documentclass{llncs}
\usepackage{amsthm}
\begin{document}
\section{Results}
\newtheorem*{claim}{Claim}
\begin{theorem}\label{t:main} Every magma is a magma.\end{theorem}
\begin{lemma}[Morse \cite{morse}] A lemma with a cite in its note.\end{lemma}
\begin{lemma}[{\cite{morse}}] A cite hidden in braces.\end{lemma}
\begin{lemma}[\cite[Lemma~2]{morse}] A cite with a note of its own.\end{lemma}
\begin{claim} An unnumbered claim.\end{claim}
\begin{proof}[Proof of Theorem~\ref{t:main}] Obvious.\end{proof}
\begin{thebibliography}{1}\bibitem{morse} M. Morse. Calculus of variations. 1939.\end{thebibliography}
\end{document}
"""


def test_headings_numbers_notes_and_cites_in_notes() -> None:
    doc = parse_latex(LatexSource(main="m.tex", text=_LNCS), "lncs")
    assert [p.text for p in doc.body_text] == [
        "Theorem 1. Every magma is a magma.",
        "Lemma 1 (Morse [1]). A lemma with a cite in its note.",
        "Lemma 2 ([1]). A cite hidden in braces.",
        "Lemma 3 ([1, Lemma 2]). A cite with a note of its own.",
        "Claim. An unnumbered claim.",
        "Proof of Theorem 1. Obvious.",
    ]
    assert [s.ref_id for p in doc.body_text for s in p.cite_spans] == ["BIBREF0"] * 3


def test_a_heading_runs_into_text_after_blank_lines(shared_data) -> None:
    """engrafo 1707.08043 opens ``\\begin{lemma}\\label{..}`` and a ``\\begin{proof}`` with blank
    lines before their text. TeX sets the heading with the first paragraph that follows (a
    ``\\par`` before it starts none), so "Lemma 1.13." and "Proof." were paragraphs alone."""
    root = DATA / "latex_sources" / "engrafo" / "1707.08043"
    doc = parse_latex(assemble_source(root, find_main_tex(root)), "1707.08043")
    texts = [p.text for p in doc.body_text]
    assert not {"Lemma 1.13.", "Proof."} & set(texts)
    assert any(t.startswith("Lemma 1.13. Let {F_α (X,Y)}") for t in texts)
    assert any(t.startswith("Proof. First step: Reduction of the condition (a)") for t in texts)
    # the label between the heading and the text still names the lemma: "Lemma \ref{...}" is 1.13
    assert "the proof follows from Lemma 1.13." in " ".join(texts)
