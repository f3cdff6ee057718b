"""xparse commands (``\\NewDocumentCommand{\\norm}{m}{...}``): their argument specifications
read. The expander (:mod:`~corpus.parse.latex.expand`) takes their arguments as xparse takes
them, and :mod:`~corpus.parse.latex.conditionals` decides the tests their bodies make on them
(``\\IfNoValueTF``, ``\\IfBooleanTF``), so they expand like ``\\newcommand`` ones."""

from __future__ import annotations

import re

from corpus.parse.latex.braces import read_group
from corpus.parse.latex.tokens import NO_VALUE

_TOKEN_RE = re.compile(r"\s*([+!]*)\s*([mosStdDrRvObeE])")


def parse_spec(spec: str) -> list[tuple[str, str]] | None:
    """An argument specification -> (kind, data) per argument: ``m``; ``o``/``O`` (data: the
    default); ``s``; ``t`` (the token); ``d``/``D``/``r``/``R`` (the delimiters, and a default
    after them); None when it holds a kind this reader does not take (verbatim, bodies)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(spec):
        if spec[i].isspace():
            i += 1
            continue
        m = _TOKEN_RE.match(spec, i)
        if not m:
            return None
        kind = m.group(2)
        i = m.end()
        if kind in "mos":
            out.append((kind, ""))
        elif kind == "O":
            default, i = read_group(spec, i)
            out.append(("o", default or ""))
        elif kind == "t":
            out.append(("t", spec[i : i + 1]))
            i += 1
        elif kind in "dDrR":
            delims = spec[i : i + 2]
            i += 2
            default = NO_VALUE
            if kind in "DR":
                default, i = read_group(spec, i)
            out.append(("d", delims + (default or "")))
        else:
            return None
    return out if len(out) <= 9 else None
