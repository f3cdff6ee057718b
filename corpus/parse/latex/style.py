"""How a LaTeX paper prints its citations: by number ("[3]") or by author and year
("(Smith et al., 2019)"), and what a plain ``\\cite`` prints in an author-year paper.

LaTeX decides this from the packages the paper loads (natbib, biblatex, apacite...), the
ones its class or its own style files load for it (AASTeX, MNRAS, the ACL and ICLR styles
load natbib), their options and ``\\setcitestyle`` / ``\\citestyle``, the
``\\bibliographystyle`` (wherever it is: nearly always in the body) and, when a .bbl is
there, the labels it gives each ``\\bibitem``. :func:`cite_mode` reads the same signals in
the same order, so the style the parse reports (S2ORC's BRACKET / NAME-YEAR) is the one the
paper prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from corpus.parse.latex.bib.item import read_groups
from corpus.parse.latex.braces import LatexError, read_optional

CiteForm = Literal["textual", "paren", "bare"]
# How a numeric citation of several keys prints: LaTeX's own \cite and natbib "[1, 2, 3]"; sorted
# with ranges ("[1, 3–5]": natbib's sort&compress, the cite package, biblatex's -comp styles,
# REVTeX); each number in its brackets (IEEEtran: "[1], [2]"), compressed with cite ("[1]–[3]").
NumberForm = Literal["list", "compress", "each", "each-compress"]


@dataclass(frozen=True)
class CiteMode:
    style: str  # BRACKET or NAME-YEAR
    cite: CiteForm = (
        "textual"  # plain \cite in a NAME-YEAR paper: natbib's \citet, \citep, or biblatex's bare form
    )
    numbers: NumberForm = "list"
    alpha: bool = False  # alphabetic labels ("[Knu84]"): BibTeX's alpha styles, biblatex's alphabetic
    alpha_style: Literal["bibtex", "biblatex"] = "bibtex"
    cite_as: dict[str, str] = field(default_factory=dict)  # a cite command that acts as another here


_LOAD_RE = re.compile(
    r"\\(usepackage|RequirePackage|RequirePackageWithOptions|documentclass|documentstyle|LoadClass)"
    r"\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}"
)
# Classes and styles that load natbib themselves, and in which mode. Names are matched whole.
_NATBIB_AUTHOR_YEAR = re.compile(
    r"aastex\d*|aasjournal\w*|emulateapj|mnras|aa|agu\w*|copernicus\w*|jfm|iclr\d{4}_conference|"
    r"icml\d{4}|jmlr\w*|tmlr|colm\d{4}_conference|frontiers\w*|imsart|ametsoc\w*|"
    r"acl\w*|naacl\w*|emnlp\w*|eacl\w*|coling\w*|conll\w*|tacl\w*|lrec\w*|semeval\w*|aaai\d*|ijcai\d*"
)
_NATBIB_NUMERIC = re.compile(r"revtex\w*|acmart|elsarticle|achemso|pnas\w*|sn-jnl")
_NATBIB_BY_BST = re.compile(r"neurips_\d{4}|nips_?\d{4}")  # natbib loaded, the mode left to the labels
# Where a plain \cite prints like \citep: the ACL family, AAAI and IJCAI redefine it, as does
# acmart in its author-year mode; apacite, harvard, chicago and named define it so.
_CITE_IS_PAREN = re.compile(
    r"acl\w*|naacl\w*|emnlp\w*|eacl\w*|coling\w*|conll\w*|tacl\w*|lrec\w*|semeval\w*|aaai\d*|ijcai\d*|"
    r"acmart|apacite|harvard|chicago|named"
)
_AUTHOR_YEAR_PACKAGES = re.compile(r"apacite|harvard|chicago|named|authordate\d")
# BibTeX styles that write author-year labels (natbib's own, the journals' and the Harvard family).
_AUTHOR_YEAR_BST = re.compile(
    r"(?:plain|abbrv|unsrt)nat|\w*natbib\w*|apa\w*|apalike\w*|chicago\w*|named\w*|agsm|dcu|kluwer|harv\w*|"
    r"jfm|aasjournal\w*|aa|mnras|iclr\d{4}_conference|icml\d{4}|jmlr\w*|tmlr|colm\d{4}_conference|"
    r"acl\w*|naacl\w*|emnlp\w*|aaai\w*|ijcai\w*|elsarticle-harv|model[2-5]-names|spbasic|sn-basic|sn-apa|"
    r"sn-chicago|sn-\w+-ay|ar-style[123]?|ecology\w*|ecol\w*|amnat|besjournals|copernicus\w*|agu\w*|ametsoc\w*|"
    r"jasa|asa|rss|jss|imsart-nameyear|biometrika|cell|humannat|frontiers\w*|authordate\d"
)
_NUMERIC_BST = re.compile(
    r"\w*num\w*|unsrt|plain|abbrv|alpha|ieee\w*|siam|amsplain|amsalpha|apsrev\w*|naturemag"
)
# biblatex styles whose citations print author and year.
_BIBLATEX_AUTHOR_YEAR = re.compile(
    r"(?:ext-)?authoryear[\w-]*|apa\d?|chicago-authordate[\w-]*|aaa|oxyear|bwl-fu|gb7714-2015ay|ecology|"
    r"nature-ay|science-ay|[\w-]*-ay"
)
_BLX_STYLE_RE = re.compile(r"\b(?:cite)?style\s*=\s*\{?\s*([\w\-]+)")
_CITESTYLE_RE = re.compile(r"\\(?:setcitestyle|citestyle|biboptions)\s*\{([^{}]*)\}")
_BIBSTYLE_RE = re.compile(r"\\bibliographystyle\s*\{([^{}]*)\}")
_EXEC_BLX_RE = re.compile(r"\\ExecuteBibliographyOptions\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}")
# natbib's predefined \citestyle names (natbib.sty's \bibstyle@...) and \setcitestyle keys
_NUMERIC_CITESTYLES = re.compile(r"\b(?:numbers|super|nature|cospar|esa|acmnumeric|plain)\b")
_AUTHOR_YEAR_CITESTYLES = re.compile(
    r"\b(?:authoryear|acmauthoryear|agu|egu|agms|agsm|dcu|kluwer|plainnat|chicago|named|copernicus|aa|pass|"
    r"anngeo|nlinproc)\b"
)
# natbib options that only mean something in author-year mode: the author-year papers that load
# natbib with them and a .bst nobody here knows print names ("longnamesfirst", round brackets)
_AUTHOR_YEAR_OPTIONS = re.compile(r"\b(?:longnamesfirst|round|colon|nonamebreak)\b")
_BIBPUNCT_RE = re.compile(r"\\bibpunct(?![A-Za-z])")
# Classes whose options choose how they load natbib (the class file holds both loads, in
# conditionals this parser does not run): (class, option) -> numbers
_CLASS_OPTION_NUMBERS = {
    ("sagej", "sageh"): False,  # \usepackage{natbib}\bibpunct{(}{)}{;}{}{}{,}: author-year
    ("sagej", "sageapa"): False,
    ("sagej", "sagev"): True,  # \usepackage[super,sort&compress,comma]{natbib}
}


def _loads(preamble: str, packages: dict[str, str]) -> list[tuple[str, str, str]]:
    """(command, options, name) for every class and package the paper and its own style files load."""
    out = []
    for text in (preamble, *packages.values()):
        for m in _LOAD_RE.finditer(text):
            for name in m[3].split(","):
                if name.strip():
                    out.append((m[1], m[2] or "", name.strip().rsplit("/", 1)[-1]))
    return out


def cite_mode(
    preamble: str, text: str, packages: dict[str, str], labels_author_year: bool | None
) -> CiteMode:
    """The paper's citation mode. ``text`` is the whole document (``\\bibliographystyle`` and
    ``\\setcitestyle`` may be anywhere); ``labels_author_year`` says whether most .bbl items
    carry natbib author-year labels (None: no .bbl, the bibliography comes from .bib files)."""
    loads = _loads(preamble, packages)
    mode = _style(loads, text, packages, labels_author_year)
    if mode.style != "BRACKET":
        return replace(mode, cite_as=_author_year_commands(loads))
    numbers, alpha, alpha_style = _numbers(loads, text)
    return CiteMode(mode.style, mode.cite, numbers, alpha, alpha_style)


_COMPRESS_OPTS = re.compile(r"\b(?:sort&compress|compress)\b")
_NOCOMPRESS_OPTS = re.compile(r"\bnocompress\b")
_BLX_COMPRESSED = re.compile(r"[\w-]*-comp|phys|nature|science|ieee|chem-\w+|trad-\w+|numeric-comp|apsrev\w*")
_ALPHA_BST = re.compile(r"\w*alpha\w*|alphadin")


def _author_year_commands(loads: list[tuple[str, str, str]]) -> dict[str, str]:
    """The older author-year commands as the classes and packages that define them make them act
    in author-year mode: acmart's and chicago's ``\\citeN`` (natbib's textual ``\\cite``),
    ``\\citeNN`` and ``\\citeyearNP``; ``\\shortcite`` the year in parentheses (acmart, the ACL
    styles, aaai, named), apacite's a citation with the short author list."""
    apacite = any(name == "apacite" for _, _, name in loads)
    return {
        "citeN": "citet",
        "citeNN": "citeyearpar",
        "citeyearNP": "citeyear",
        "shortcite": "cite" if apacite else "citeyearpar",
    }


def _numbers(loads: list[tuple[str, str, str]], text: str) -> tuple[NumberForm, bool, str]:
    """How several numbered keys print, and whether the labels are alphabetic."""
    names = {name for _, _, name in loads}
    blx = [opts for _, opts, name in loads if name == "biblatex"]
    if blx:
        styles = [
            s.lower()
            for s in _BLX_STYLE_RE.findall(" ".join(blx) + " " + " ".join(_EXEC_BLX_RE.findall(text)))
        ]
        alpha = any(s.startswith("alphabetic") for s in styles)
        comp = any(_BLX_COMPRESSED.fullmatch(s) for s in styles)
        return ("each-compress" if any(s.startswith("ieee") for s in styles) else "compress" if comp else "list",
                alpha, "biblatex")  # fmt: skip
    bst = _BIBSTYLE_RE.search(text)
    alpha = bool(bst and _ALPHA_BST.fullmatch(bst[1].strip().rsplit("/", 1)[-1]))
    cite_pkg = [opts for _, opts, name in loads if name in ("cite", "citesort")]
    natbib_opts = " ".join(opts for _, opts, name in loads if name == "natbib")
    natbib_opts += " " + " ".join(_CITESTYLE_RE.findall(text))
    compress = bool(cite_pkg and not _NOCOMPRESS_OPTS.search(" ".join(cite_pkg))) or bool(
        _COMPRESS_OPTS.search(natbib_opts)
    )
    if any(n.startswith("revtex") for n in names):
        compress = True  # REVTeX loads natbib with sort&compress
    if "IEEEtran" in names:
        return ("each-compress" if compress else "each"), alpha, "bibtex"
    return ("compress" if compress else "list"), alpha, "bibtex"


def _style(
    loads: list[tuple[str, str, str]], text: str, packages: dict[str, str], labels_author_year: bool | None
) -> CiteMode:
    """BRACKET or NAME-YEAR, and what a plain ``\\cite`` prints in a NAME-YEAR paper."""
    names = {name for _, _, name in loads}
    classes = [
        (opts, name) for cmd, opts, name in loads if cmd in ("documentclass", "documentstyle", "LoadClass")
    ]

    blx = [opts for _, opts, name in loads if name == "biblatex"]
    if blx:
        opts = " ".join(blx) + " " + " ".join(_EXEC_BLX_RE.findall(text))
        styles = _BLX_STYLE_RE.findall(opts)
        author_year = any(_BIBLATEX_AUTHOR_YEAR.fullmatch(s.lower()) for s in styles)
        return CiteMode("NAME-YEAR" if author_year else "BRACKET", "bare")

    paren = any(_CITE_IS_PAREN.fullmatch(n) for n in names)
    natbib_opts = " ".join(opts for _, opts, name in loads if name == "natbib")
    class_ay = any(_NATBIB_AUTHOR_YEAR.fullmatch(n) for n in names)
    class_num = any(_NATBIB_NUMERIC.fullmatch(n) for n in names)
    natbib = "natbib" in names or class_ay or class_num or any(_NATBIB_BY_BST.fullmatch(n) for n in names)
    if not natbib and any(_AUTHOR_YEAR_PACKAGES.fullmatch(n) for n in names):
        return CiteMode("NAME-YEAR", "paren")

    numbers: bool | None = None  # what the options, \bibpunct and \setcitestyle say, last one wins
    if re.search(r"\b(?:numbers|super)\b", natbib_opts):
        numbers = True
    elif re.search(r"\bauthoryear\b", natbib_opts):
        numbers = False
    for opts, name in classes:
        if name == "elsarticle":
            numbers = not re.search(r"\bauthoryear\b", opts)
        elif name == "sn-jnl":
            numbers = not re.search(r"sn-\w+-ay|sn-basic|sn-apa|sn-chicago", opts)
        for option in opts.split(","):
            if (name, option.strip()) in _CLASS_OPTION_NUMBERS:
                numbers, natbib = _CLASS_OPTION_NUMBERS[(name, option.strip())], True
    for setting in _natbib_settings(text, packages):
        numbers = setting
    if numbers is None and _AUTHOR_YEAR_OPTIONS.search(natbib_opts):
        numbers = False  # natbib told things only author-year mode uses
    if numbers is None and class_num and not class_ay:
        numbers = True
    if any(n.startswith("revtex") for n in names):
        numbers = True  # REVTeX prints numbers whatever the labels say

    if numbers:
        return CiteMode("BRACKET")
    form: CiteForm = "paren" if paren else "textual"
    if labels_author_year is not None:  # a .bbl: its labels are what natbib prints
        return CiteMode("NAME-YEAR" if labels_author_year else "BRACKET", form)
    bst = _BIBSTYLE_RE.search(text)
    if not natbib:
        return CiteMode("BRACKET")
    if bst:
        style = bst[1].strip().rsplit("/", 1)[-1]
        if _AUTHOR_YEAR_BST.fullmatch(style) and not (numbers is None and class_num and not class_ay):
            return CiteMode("NAME-YEAR", form)
        if _NUMERIC_BST.fullmatch(style):
            return CiteMode("BRACKET")
        shipped = packages.get(style + ".bst")
        if shipped is not None:  # the e-print's own .bst: the labels it writes
            return CiteMode("NAME-YEAR" if _bst_writes_author_year(shipped) else "BRACKET", form)
        return CiteMode("NAME-YEAR" if class_ay or numbers is False else "BRACKET", form)
    return CiteMode("NAME-YEAR" if class_ay or numbers is False else "BRACKET", form)


def _natbib_settings(text: str, packages: dict[str, str]) -> list[bool]:
    """What ``\\bibpunct`` (its fourth argument: n numbers, s superscript, else author-year),
    ``\\setcitestyle`` and ``\\citestyle`` tell natbib, in the order the paper says it (its own
    style files first): True for numbers, False for author-year."""
    out: list[tuple[int, int, bool]] = []
    for order, source in enumerate([*(v for k, v in packages.items() if k.endswith(".sty")), text]):
        for m in _CITESTYLE_RE.finditer(source):
            if _NUMERIC_CITESTYLES.search(m[1]):
                out.append((order, m.start(), True))
            elif _AUTHOR_YEAR_CITESTYLES.search(m[1]):
                out.append((order, m.start(), False))
        for m in _BIBPUNCT_RE.finditer(source):
            try:
                _, i = read_optional(source, m.end())
                args, _ = read_groups(source, i, 4)
            except LatexError:
                continue
            if len(args) == 4:
                out.append((order, m.start(), args[3].strip() in ("n", "s")))
    return [numbers for _, _, numbers in sorted(out)]


def _bst_writes_author_year(bst: str) -> bool:
    """Whether a .bst's ``output.bibitem`` writes natbib's author-year label
    (``\\bibitem[{Smith et al.(2019)Smith, Jones, and Lee}]{key}``), not a bare ``\\bibitem{key}``
    or an alphabetic ``[Knu84]``."""
    return '"\\bibitem[' in bst and ('"("' in bst or '")"' in bst or "citeauthoryear" in bst)
