"""Math accents and alphabets as text: ``\\hat{d}`` is d̂, ``\\bar t`` t̄, ``\\mathcal{L}`` ℒ,
``\\mathbb{R}`` ℝ, ``\\mathbf{x}`` 𝐱, so symbols LaTeX sets apart stay apart; fractions and
binomials of every size (``\\tfrac{1}{2}`` 1/2, ``\\binom{n}{k}`` "(n choose k)") and arrays set
inline (``\\left[\\begin{array}{cc} a & b\\\\ c & d\\end{array}\\right]`` "[a b; c d]") read as text.

Both come from unicodeit's table (built from Günter Milde's unimathsymbols, the table
:mod:`corpus.parse.latex.text` takes its math symbols from): its combining marks for the
accents, its ``\\mathcal{A}``-style entries for the mathematical alphanumeric letters.
``\\mathrm`` and ``\\mathit`` stay plain letters, as math letters print everywhere else.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections.abc import Callable

from unicodeit.data import COMBININGMARKS, REPLACEMENTS

from corpus.parse.latex.braces import LatexError, control_words, read_arg, read_group, read_optional

# Accents unicodeit names, and the wide / extra forms LaTeX and amsmath add.
ACCENTS: dict[str, str] = {latex[1:]: mark for latex, mark in COMBININGMARKS}
ACCENTS.update(
    widehat=ACCENTS["hat"], widetilde=ACCENTS["tilde"], widebar=ACCENTS["bar"], check="\u030c",
    mathring="\u030a", dddot="\u20db", overrightarrow=ACCENTS["vec"], overleftarrow="\u20d6",
)  # fmt: skip
for _not_math in ("strikethrough", "doubleunderline", "underline", "slash"):
    ACCENTS.pop(_not_math, None)  # text decorations (\underline{word} in prose) and \slash, a text "/"
_EACH_CHARACTER = frozenset({"overline", "widebar"})  # a line over every letter

# Letter families: styled letters are other symbols (ℒ is not L). \mathscr is script as \mathcal is
# (unicode-math's \mathscr); \boldsymbol and \bm are bold italic; \mathds and \mathbbm double-struck.
_FAMILY_OF = {
    "mathcal": "mathcal", "mathscr": "mathcal", "mathfrak": "mathfrak", "mathbb": "mathbb",
    "mathds": "mathbb", "mathbbm": "mathbb", "mathbf": "mathbf", "boldsymbol": "mathbfit",
    "bm": "mathbfit", "mathsf": "mathsf", "mathtt": "mathtt", "mathbfit": "mathbfit",
    "mathsfbf": "mathsfbf", "mathsfit": "mathsfit",
}  # fmt: skip
_FIXES = {("mathcal", "I"): "ℐ"}  # unicodeit maps \mathcal{I} to ℑ (BLACK-LETTER CAPITAL I, \Im)
ACCENTS["bar"] = ACCENTS["widebar"] = (
    "\u0304"  # a macron, as unicode-math's \bar (unicodeit gives the overline, U+0305)
)


def _alphabets() -> dict[str, dict[str, str]]:
    """Family -> {letter, digit or Greek letter: its styled symbol}, from unicodeit's entries
    ``\\mathbb{R}`` -> ℝ, ``\\mathbf{\\alpha}`` -> 𝛂 (Greek names read through its symbol table)."""
    names = {latex[1:]: uni for latex, uni in REPLACEMENTS if latex[:1] == "\\" and latex[1:].isalpha()}
    out: dict[str, dict[str, str]] = {}
    for latex, uni in REPLACEMENTS:
        m = re.fullmatch(r"\\(math[a-z]+)\{(\\?[A-Za-z0-9]+)\}", latex)
        if not m:
            continue
        inner = m.group(2)
        char = names.get(inner[1:]) if inner.startswith("\\") else inner
        if char and len(char) == 1:
            out.setdefault(m.group(1), {}).setdefault(char, uni)
    for (family, char), uni in _FIXES.items():
        out[family][char] = uni
    return out


_ALPHABETS = _alphabets()
_NAMES = control_words(set(ACCENTS) | set(_FAMILY_OF))
_STYLE_RE = re.compile(
    r"\\(" + _NAMES + r")(?![A-Za-z])" r"\s*(?:\{((?:[^{}]|\{[^{}]*\})*)\}|(\\[A-Za-z]+)|([A-Za-z0-9]))"
)
_COMMANDS_RE = re.compile(r"\\(?:" + _NAMES + r")(?![A-Za-z])")


def has_style(chunk: str) -> bool:
    """Whether ``chunk`` holds a math accent or alphabet command (one search)."""
    return _COMMANDS_RE.search(chunk) is not None


def style_math(chunk: str, to_text: Callable[[str], str]) -> str:
    """Accents and alphabets of ``chunk`` applied, innermost first (``\\tilde{\\mathcal{L}}``:
    ℒ̃); ``to_text`` converts what they apply to."""
    for _ in range(4):  # nesting depth of accent on alphabet on ...: bounded
        chunk = _STYLE_RE.sub(lambda m: _apply(m, to_text), chunk)
        if not _COMMANDS_RE.search(chunk):  # nothing nested is left: no further pass
            break
    return chunk


_AFTER_CONTROL_WORD = re.compile(r"\\[A-Za-z]+$")


def _apply(m: re.Match, to_text: Callable[[str], str]) -> str:
    name, group, ctrl, char = m.group(1), m.group(2), m.group(3), m.group(4)
    base = to_text(group if group is not None else ctrl or char)
    if name in _FAMILY_OF:
        table = _ALPHABETS.get(_FAMILY_OF[name], {})
        styled = "".join(table.get(c, c) for c in base)
    else:
        mark = ACCENTS[name]
        base = base.strip()
        if not base:  # \tilde{}: nothing to mark (a lone combining mark would land on the letter before)
            return "{}"
        # \hat{x_i}, \overline{x_{1}}: the mark on the symbol, not on its index
        script = min((k for k in (base.find("_"), base.find("^")) if k > 0), default=len(base))
        if name in _EACH_CHARACTER:
            styled = "".join(c + mark if not c.isspace() else c for c in base[:script]) + base[script:]
        else:
            styled = base[:script] + mark + base[script:]
        styled = unicodedata.normalize("NFC", styled)
    # "\\cdot\\vec v": the letters must not join the control word before them
    joins = styled[:1].isascii() and styled[:1].isalpha()
    before = m.string[max(m.start() - 40, 0) : m.start()]  # a window: the search is anchored at its end
    return " " + styled if joins and _AFTER_CONTROL_WORD.search(before) else styled


# ----------------------------------------------------------------------------- fractions, arrays

_FRACTION_RE = re.compile(r"\\([dtc]?frac|[dt]?binom|genfrac)(?![A-Za-z])")
_CHOOSE_RE = re.compile(r"\{([^{}]*)\\(choose|atop|over)(?![A-Za-z])([^{}]*)\}")


def _operand(text: str) -> str:
    """A fraction's numerator or denominator, in parentheses unless it is one symbol or number."""
    text = text.strip()
    return text if re.fullmatch(r"\\?[A-Za-z]+|[\w.]+", text) else f"({text})"


def fractions(math: str) -> str:
    """``\\tfrac{a}{b}``, ``\\dfrac`` and ``\\cfrac`` as ``\\frac`` (a/b), ``\\binom{n}{k}`` and its
    sizes "(n choose k)", ``\\genfrac`` as the fraction or binomial it draws, TeX's ``{n \\choose
    k}`` and ``{a \\over b}`` likewise."""
    if "\\" not in math:
        return math
    math = _CHOOSE_RE.sub(
        lambda m: f"({m[1].strip()} choose {m[3].strip()})" if m[2] == "choose"
        else f"{_operand(m[1])}/{_operand(m[3])}",
        math,
    )  # fmt: skip
    out, pos = [], 0
    for m in _FRACTION_RE.finditer(math):
        if m.start() < pos:
            continue
        name, i = m.group(1), m.end()
        try:
            args = []
            for _ in range(6 if name == "genfrac" else 2):
                arg, i = read_arg(math, i)
                args.append(arg)
        except LatexError:
            continue
        if name == "genfrac":  # {left}{right}{thickness}{style}{num}{den}: a zero rule draws a binomial
            binomial = args[2].strip() in ("0pt", "0", "0mm", "0em")
            name, args = ("binom" if binomial else "frac"), args[4:]
        out.append(math[pos : m.start()])
        if name.endswith("binom"):
            out.append(f"({args[0].strip()} choose {args[1].strip()})")
        else:
            out.append(f"\\frac{{{args[0]}}}{{{args[1]}}}")
        pos = i
    out.append(math[pos:])
    return "".join(out)


# an array with no environment inside it: its name, and what it holds up to its \end
_INNERMOST_ARRAY_RE = re.compile(
    r"\\begin\s*\{(array|[pbBvV]?matrix|smallmatrix|cases|aligned|gathered|split|alignedat)\}"
    r"((?:(?!\\begin\s*\{)[\s\S])*?)\\end\s*\{\1\}"
)
_DELIMITERS = {
    "pmatrix": "()",
    "bmatrix": "[]",
    "Bmatrix": "{}",
    "vmatrix": "||",
    "Vmatrix": "‖‖",
    "cases": "{",
}


def arrays(math: str) -> str:
    """Arrays, matrices and cases set in inline math as text: cells apart, rows joined by "; "
    (``\\left[\\begin{array}{cc} a & b \\\\ c & d \\end{array}\\right]`` "[a b; c d]"), the
    matrix environments' own delimiters around them; nested ones innermost first."""
    for _ in range(8):  # nesting depth: bounded
        if not _INNERMOST_ARRAY_RE.search(math):
            break
        math = _INNERMOST_ARRAY_RE.sub(_array_text, math)
    return math


def _array_text(m: re.Match) -> str:
    name, body = m.group(1), m.group(2)
    _, i = read_optional(body, 0)  # \begin{aligned}[t], \begin{array}[b]{cc}
    if name in ("array", "alignedat"):  # its column spec, its number of columns
        with contextlib.suppress(LatexError):
            _, i = read_group(body, i)
    rows = [r for r in re.split(r"\\\\(?:\s*\[[^\]]*\])?", body[i:]) if r.strip()]
    cells = "; ".join(
        " ".join(c.strip() for c in r.replace("\\hline", "").split("&") if c.strip()) for r in rows
    )
    left, right = (_DELIMITERS.get(name, "") + "  ")[:2]
    return f" {left.strip()}{cells}{right.strip()} "
