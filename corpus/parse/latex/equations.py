"""Display equations' rows as amsmath numbers them: a number per row of an align (rows of a
nested ``aligned`` are one row), one for an equation however many lines, none for starred
environments and ``\\nonumber`` rows, a row's ``\\tag{..}`` instead of its number. The
equation counter itself (``subequations`` lettering, ``\\numberwithin``) is stepped by
:mod:`corpus.parse.latex.numbering`."""

from __future__ import annotations

import re

from corpus.parse.latex.text import _plain

UNNUMBERED_MATH = frozenset(
    "displaymath math dmath* array matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases aligned gathered split".split()
)
_SINGLE_EQUATIONS = frozenset({"equation", "dmath", "multline"})  # one number, however many lines
_NONUMBER_RE = re.compile(r"\\no(?:number|tag)(?![A-Za-z])")
_ROW_RE = re.compile(r"\\\\|\\(begin|end)\s*\{[^{}]*\}")
_TAG_RE = re.compile(r"\\tag\*?\s*\{((?:[^{}]|\{[^{}]*\})*)\}")


def equation_rows(name: str, content: str) -> list[tuple[str, bool, str | None]]:
    """The rows of a display environment as amsmath numbers them: (row LaTeX, numbered,
    its ``\\tag``). A starred or math-only environment numbers no row, an ``equation`` is one
    row however many lines, a row with ``\\nonumber`` (``\\notag``) has no number."""
    numbered = not name.endswith("*") and name not in UNNUMBERED_MATH
    rows = [content] if name in _SINGLE_EQUATIONS else _rows(content)
    out: list[tuple[str, bool, str | None]] = []
    for row in rows:  # an empty last row (after a trailing \\) is numbered too, as pdflatex numbers it
        tag = _TAG_RE.search(row)
        out.append((row, numbered and not _NONUMBER_RE.search(row), _plain(tag.group(1)) if tag else None))
    return out


def _rows(content: str) -> list[str]:
    """The rows of an align-like environment: split at ``\\\\`` outside nested environments."""
    rows, depth, pos = [], 0, 0
    for m in _ROW_RE.finditer(content):
        if m.group(1) == "begin":
            depth += 1
        elif m.group(1) == "end":
            depth -= 1
        elif depth <= 0:
            rows.append(content[pos : m.start()])
            pos = m.end()
    rows.append(content[pos:])
    return rows
