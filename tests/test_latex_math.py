"""Math accents and alphabets keep symbols apart (issue 34, A): ``\\dot{f}`` is not ``f``,
``\\mathcal{L}`` not ``L``. Accents become Unicode combining marks and styled letters the
mathematical alphanumeric symbols, both from unicodeit's table (the one the math symbols
come from), on real papers and on pieces."""

from __future__ import annotations

import pytest
from conftest import DATA

from corpus.ingest.eprint import assemble_source, find_main_tex
from corpus.parse.document import StructuredDoc
from corpus.parse.latex import latex_to_text, parse_latex

FIDELITY = DATA / "fidelity" / "latex"


def _text(repo: str) -> str:
    root = next(p for p in (FIDELITY / repo).iterdir() if p.is_dir())
    doc: StructuredDoc = parse_latex(assemble_source(root, find_main_tex(root)), repo)
    return " ".join(p.text for p in doc.abstract + doc.body_text + doc.back_matter)


def test_dotted_function_and_script_likelihood_on_a_real_paper(shared_data) -> None:
    """dfm's review writes ``an observation of $f(t)$ and one of $\\dot{f}(t)$``: the two
    must differ, and the likelihood ``$\\mathcal{L}$`` is script L."""
    text = _text("dfm+araa-gps")
    assert "an observation of f(t) and one of ḟ(t)" in text
    assert "ln ℒ = constant" in text


def test_blackboard_script_and_tilde_on_a_real_paper(shared_data) -> None:
    """teorth's paper: ``{\\mathcal I}`` (a one-token argument), ``$\\tilde w$`` without braces,
    ``{\\mathbb F}_q`` and ``\\mathbb{Z}/n\\mathbb{Z}``."""
    text = _text("teorth+equational_theories")
    assert "I : M_X → ℐ" in text  # unicodeit's table maps \mathcal{I} to ℑ (black-letter): corrected
    assert "w̃" in text and "w ∼_E w̃" in text.replace("∼_E w̃'", "∼_E w̃")
    assert "𝔽_q" in text and "ℤ/nℤ" in text


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        ("$2\\hat{d}$", "2d̂"),
        ("$t$ and $\\bar t$", "t and t̄"),
        ("$\\vec{v}\\cdot\\vec v$", "v⃗· v⃗"),
        ("$\\ddot x + \\dot{x}$", "ẍ + ẋ"),
        ("$\\tilde{\\mathcal{L}}$", "ℒ̃"),
        ("$\\hat{\\alpha}_i$", "α̂_i"),
        ("$\\widehat{f}$, $\\widetilde{g}$, $\\check{h}$", "f̂, g̃, ȟ"),
        ("$\\overline{AB}$", "A̅B̅"),
        ("$\\mathcal{L}(\\theta)$, $\\mathscr{F}$, $\\mathfrak{g}$", "ℒ(θ), ℱ, 𝔤"),
        ("$x\\in\\mathbb{R}^n$, $\\mathbb{E}[X]$, $\\mathds{1}$", "x∈ℝ^n, 𝔼[X], 𝟙"),
        ("$\\mathbf{x}$ and $\\boldsymbol{\\mu}$, $\\bm{W}$", "𝐱 and 𝝁, 𝑾"),
        ("$\\mathcal{O}(n \\log n)$", "𝒪(n log n)"),
        ("$\\mathrm{d}x$ and $\\mathit{id}$", "dx and id"),
    ],
)
def test_accent_and_alphabet_pieces(latex: str, text: str) -> None:
    assert latex_to_text(latex) == text


def test_double_primes_in_math_are_primes_not_a_closing_quote(shared_data) -> None:
    """In math TeX reads ``''`` as two primes: teorth's ``$w \\sim_\\E w'' \\op w'$`` and its
    magma ``(\\Z,\\op'')`` printed a closing quotation mark (“w”” and “♢””); prose ``''``
    still closes a quotation."""
    text = _text("teorth+equational_theories")
    assert "w ∼_E w″ ♢ w'" in text
    assert "(ℤ,♢″)" in text and "m♢″n=-m" in text
    assert "“immune”" in text
    assert latex_to_text("``$f''(x)$ and $g'''$''") == "“f″(x) and g‴”"


def test_prime_superscripts_are_primes(shared_data) -> None:
    """``\\rho^\\prime`` is ρ′ (cgois printed "ρ^'"), ``a_{P^{\\prime }}^{\\prime }`` a_P′′ and
    ``^{\\prime\\prime}`` ″ (engrafo 1707.08043 printed "a_P^' ^'")."""
    assert "Let ρ′ be such that probabilities tr(Π_b | y ρ′)" in _text("cgois+pam_classicality")
    root = DATA / "latex_sources" / "engrafo" / "1707.08043"
    doc = parse_latex(assemble_source(root, find_main_tex(root)), "1707.08043")
    text = " ".join(p.text for p in doc.body_text)
    assert "if a_P′′ is a tuple" in text and "^'" not in text
    assert latex_to_text("$x^{\\prime\\prime}$, $y^\\prime_1$, $z^{\\prime 2}$") == "x″, y′_1, z^′ 2"
