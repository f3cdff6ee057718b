"""The mechanisms of issue 34 stay linear on hostile text: many conditionals, environments
never closed, tikz paths that never end, many sections and theorems, cites with an unclosed
apacite note; what is no paper fails clearly instead of running for ever."""

from __future__ import annotations

import time

import pytest

from corpus.ingest.eprint import LatexSource
from corpus.parse.latex import LatexError, parse_latex

_HEAD = "\\documentclass{article}\n\\usepackage{ifthen}\n\\newboolean{x}\n\\begin{document}\n"


def _timed(body: str, warnings: list[str] | None = None):
    start = time.process_time()
    doc = parse_latex(LatexSource(main="m.tex", text=_HEAD + body + "\n\\end{document}\n"), "h", warnings)
    return doc, time.process_time() - start


@pytest.mark.parametrize(
    "body",
    [
        "\\ifthenelse{\\boolean{x}}{a}{b} word\n" * 20_000,
        "\\newif\\ifdraft\n" + "\\ifdraft A\\else B\\fi\n" * 20_000,
        "\\tikz \\draw (0,0) -- (1,1) " * 20_000,
        "".join(f"\\section{{S{i}}}\n\\begin{{theorem}} T.\\end{{theorem}}\n" for i in range(3_000)),
        "\\cite<" * 20_000 + "x",
        "\\begin{lstlisting}\n" * 5_000 + "code",
        "\\begin{subequations}\\begin{align}a\\\\b\\end{align}\\end{subequations}\n" * 3_000,
    ],
)
def test_linear_on_many_constructs(body: str) -> None:
    doc, seconds = _timed(body)
    assert seconds < 10 and doc is not None


def test_environments_never_closed() -> None:
    warnings: list[str] = []
    doc, seconds = _timed("\\begin{figure}\\caption{x}\n\nText after.\n\n" * 10, warnings)
    assert len(warnings) == 10 and seconds < 5
    assert [p.text for p in doc.body_text] == ["Text after."] * 10
    start = time.process_time()
    with pytest.raises(LatexError) as err:
        _timed("\\begin{figure}\n\nText.\n\n" * 5_000)
    assert err.value.code == "unbalanced_environment" and time.process_time() - start < 10
