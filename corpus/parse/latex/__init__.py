"""LaTeX e-prints -> the S2ORC-style structured document, one concern per module.

:mod:`corpus.parse.latex.parser` runs the stages in order (its docstring gives them);
:mod:`corpus.parse.latex.bib` reads bibliographies. The names below are the package's public
interface (DESIGN.md §7: ``corpus.parse.latex.PARSER_VERSION``, ``parse_eprint``)."""

from corpus.parse.latex.parser import (
    PARSER_NAME,
    PARSER_VERSION,
    LatexError,
    LatexParseResult,
    balance_braces,
    latex_to_text,
    parse_bib_file,
    parse_bibliography,
    parse_eprint,
    parse_latex,
)

__all__ = [
    "PARSER_NAME",
    "PARSER_VERSION",
    "LatexError",
    "LatexParseResult",
    "balance_braces",
    "latex_to_text",
    "parse_bib_file",
    "parse_bibliography",
    "parse_eprint",
    "parse_latex",
]
