"""LaTeX snippets -> plain text: fast tables first, pylatexenc on what is left.

Commands whose arguments are no text go first (:mod:`corpus.parse.latex.commands`), math
accents and alphabets are read by :mod:`corpus.parse.latex.math_symbols`. pylatexenc turns LaTeX
into text at ~120-190 kB/s here, too slow for whole papers, so :func:`latex_to_text` converts
with a small table of common macros first and calls pylatexenc only on the few leftover
pieces (cached).
"""

from __future__ import annotations

import functools
import re

from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexwalker import LatexWalker, get_default_latex_context_db

from corpus.parse.latex.braces import WS, LatexError, read_group, read_optional
from corpus.parse.latex.commands import drop_settings, strip_arguments
from corpus.parse.latex.math_symbols import arrays, fractions, has_style, style_math

# ----------------------------------------------------------------------------- text conversion

_L2T = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)
_LATEX_DB = get_default_latex_context_db()  # built once: LatexWalker would rebuild it per call


def _zero_arg_symbols() -> dict[str, str]:
    """pylatexenc's own table of argument-less macros with a fixed text (greek, symbols...)."""
    from pylatexenc.latex2text import get_default_latex_context_db as l2t_db

    out = {}
    for spec in l2t_db().iter_macro_specs():
        repl = spec.simplify_repl
        walker_spec = _LATEX_DB.get_macro_spec(spec.macroname)
        argspec = getattr(getattr(walker_spec, "args_parser", None), "argspec", "")
        if isinstance(repl, str) and "%" not in repl and not argspec:
            out[spec.macroname] = repl
    return out


def _unimath_symbols() -> dict[str, str]:
    """Math symbols by name from unicodeit's table, built from Günter Milde's unimathsymbols
    (the LaTeX <-> Unicode list unicode-math follows): ``\\ne`` ≠, ``\\colon`` :, ``\\models`` ⊧.
    One-letter names are text accents and escapes (``\\i``, ``\\o``), pylatexenc's domain."""
    from unicodeit.data import REPLACEMENTS

    out: dict[str, str] = {}
    for latex, uni in REPLACEMENTS:
        if latex[:1] == "\\" and len(latex) > 2 and latex[1:].isalpha() and latex != "\\not":
            out.setdefault(latex[1:], uni)
    return out


# LaTeX's log-like operators print their own name (latex.ltx, amsmath); latexsym's two
# symbols unimathsymbols names otherwise (\square, \lozenge).
_OPERATOR_NAMES = (
    "log lg ln lim limsup liminf sin arcsin sinh cos arccos cosh tan arctan tanh cot coth sec csc "
    "max min sup inf arg ker dim hom det exp Pr gcd deg injlim projlim"
).split()
_LATEXSYM = {"Box": "□", "Diamond": "◇"}
_PYLATEXENC_SYMBOLS = _zero_arg_symbols()
# every argument-less macro with a fixed text: this module's own, then pylatexenc's, then math
_SYMBOL_TABLE = {
    **_unimath_symbols(),
    **_LATEXSYM,
    **{name: name for name in _OPERATOR_NAMES},
}
_SIMPLE_MATH = re.compile(r"[A-Za-z0-9 +\-=<>,.()|/':;!*′″‴]*")
_SPECIAL = re.compile(r"[\\${}~`]|--|''")
_ESCAPES = {
    "%": "%", "&": "&", "_": "_", "#": "#", "$": "\ue012", "{": "\ue010", "}": "\ue011",
    " ": " ", ",": " ", ";": " ", "!": "", ":": " ", ">": " ", "/": "", "@": "", "-": "",
}  # fmt: skip
_ESCAPE_RE = re.compile(r"\\\\\*?(?:\s*\[[^\]]*\])?|\\([%&_#${} ,;!:>/@\-])")
_MATH_RE = re.compile(r"(?<!\\)\$([^$]+)\$|\\\((.+?)\\\)", re.S)
_WRAPPERS = frozenset(
    """emph textbf textit textsc texttt textrm textsf textsl textup textmd textnormal underline uline
    mbox hbox fbox text mathrm ensuremath textmu uppercase MakeUppercase lowercase
    MakeLowercase texorpdfstring protect sout st hl textls mathcal mathbb mathbf mathit
    mathsf mathtt mathfrak mathscr boldsymbol bm operatorname hat tilde bar vec overline widehat
    widetilde dot ddot check breve underbrace overbrace left right bigl bigr Bigl Bigr big Big
    displaystyle textstyle scriptstyle limits nolimits mathbin mathrel mathop citenamefont bibfnamefont
    bibnamefont natexlab""".split()
)
_SWITCHES = frozenset(
    """bf it em rm sc tt sf sl up md normalfont bfseries itshape scshape ttfamily rmfamily sffamily
    slshape upshape mdseries small footnotesize scriptsize tiny large Large LARGE huge Huge normalsize
    noindent indent centering raggedright raggedleft relax maketitle newpage clearpage cleardoublepage
    nolinebreak hline toprule midrule bottomrule smallskip medskip
    bigskip vfill hfill null nobreak allowbreak sloppy fussy leavevmode unskip ignorespaces
    nobreakdash tableofcontents listoffigures listoftables frenchspacing
    selectfont""".split()
)
_SYMBOLS = {
    "LaTeX": "LaTeX", "TeX": "TeX", "LaTeXe": "LaTeX2e", "BibTeX": "BibTeX", "ldots": "…",
    "dots": "…", "textellipsis": "…", "quad": " ", "qquad": " ", "newline": " ", "par": " ",
    "textbackslash": "\\", "S": "§", "P": "¶", "copyright": "©", "textregistered": "®",
    "texttrademark": "™", "textendash": "–", "textemdash": "—", "textquoteright": "’",
    "textquoteleft": "‘", "textquotedblleft": "“", "textquotedblright": "”", "slash": "/",
    "textasciitilde": "~", "textdegree": "°", "ie": "i.e.", "eg": "e.g.", "etal": "et al.",
    "cf": "cf.", "vs": "vs.", "etc": "etc.", "today": "", "and": ",", "AND": ",", "at": "@",
    # biblatex's punctuation macros in .bbl names and fields
    "bibrangedash": "–", "bibdatedash": "–", "bibinitperiod": ".", "bibinitdelim": " ",
    "bibinithyphendelim": ".-", "bibnamedelima": " ", "bibnamedelimb": " ", "bibnamedelimc": " ",
    "bibnamedelimd": " ", "bibnamedelimi": " ", "bibrangessep": "; ",
    "prime": "′",  # unimathsymbols' (pylatexenc gives an apostrophe)
    "hdots": "…", "mathellipsis": "…",  # \hdots: \ldots in math (LaTeX's own name for it)
    # astronomers' "less/greater than about", drawn from boxes in their macro files (expand.py keeps them)
    "lsim": "≲", "gsim": "≳", "lta": "≲", "gta": "≳", "simlt": "≲", "simgt": "≳", "lesssim": "≲",
    "gtrsim": "≳", "la": "≲", "ga": "≳",
}  # fmt: skip
# The AAS journal abbreviations (aastex's aas_macros) that astronomy .bbl files use for venues.
_AAS_JOURNALS = {
    "aj": "AJ", "actaa": "Acta Astron.", "araa": "ARA&A", "apj": "ApJ", "apjl": "ApJL", "apjs": "ApJS",
    "ao": "Appl. Opt.", "apss": "Ap&SS", "aap": "A&A", "aapr": "A&A Rv", "aaps": "A&AS", "azh": "AZh",
    "baas": "BAAS", "icarus": "Icarus", "jcap": "JCAP", "jrasc": "JRASC", "memras": "MmRAS",
    "mnras": "MNRAS", "na": "New A", "nar": "New A Rev.", "pra": "Phys. Rev. A", "prb": "Phys. Rev. B",
    "prc": "Phys. Rev. C", "prd": "Phys. Rev. D", "pre": "Phys. Rev. E", "prl": "Phys. Rev. Lett.",
    "pasa": "PASA", "pasp": "PASP", "pasj": "PASJ", "qjras": "QJRAS", "skytel": "S&T", "solphys": "Sol. Phys.",
    "sovast": "Soviet Ast.", "ssr": "Space Sci. Rev.", "zap": "ZAp", "nat": "Nature", "iaucirc": "IAU Circ.",
    "aplett": "Astrophys. Lett.", "apspr": "Astrophys. Space Phys. Res.", "bain": "Bull. Astron. Inst. Netherlands",
    "fcp": "Fund. Cosmic Phys.", "gca": "Geochim. Cosmochim. Acta", "grl": "Geophys. Res. Lett.",
    "jcp": "J. Chem. Phys.", "jgr": "J. Geophys. Res.", "jqsrt": "J. Quant. Spec. Radiat. Transf.",
    "memsai": "Mem. Soc. Astron. Italiana", "nphysa": "Nucl. Phys. A", "physrep": "Phys. Rep.",
    "physscr": "Phys. Scr", "planss": "Planet. Space Sci.", "procspie": "Proc. SPIE", "psj": "PSJ",
    "rnaas": "RNAAS", "dps": "DPS",
}  # fmt: skip
_SYMBOLS.update({k: v for k, v in _AAS_JOURNALS.items() if k not in _SYMBOLS})
_SYMBOL_TABLE.update(_PYLATEXENC_SYMBOLS)
_SYMBOL_TABLE.update(_SYMBOLS)
_NOT_RE = re.compile(r"\\not(?![A-Za-z])\s*(?:\\([A-Za-z]+)|([=<>\\in]))")
_DOTLESS_RE = re.compile(r"(\\['`\"^~=.])\s*\{?\s*\\([ij])(?![A-Za-z])\s*\}?")
_CTRL_RE = re.compile(r"\\([A-Za-z]+)\*?")
# accents named by a letter take a letter argument after a space or in braces: {\v Z} is Ž
_LETTER_ACCENT_RE = re.compile(r"\\[vuHcdbrk](?![A-Za-z])\s*(?:\{\s*\\?[A-Za-z]\s*\}|[A-Za-z])")
_RESIDUAL_RE = re.compile(
    r"\\(?:[A-Za-z]+\*?|['`\"^~=.])(?:\s*\[[^\[\]{}]*\])?(?:\s*\{[^{}]*\}|(?<=['`\"^~=.])[A-Za-z])*"
)
_XSPACE_RE = re.compile(r"\\xspace(?![A-Za-z])(\s*)(?=(.?))")
_HREF_RE = re.compile(r"\\href\s*\{[^{}]*\}")
_URL_RE = re.compile(r"\\(?:url|path|nolinkurl|doi|dodoi|doarXiv)\s*\{([^{}]*)\}")


# siunitx: \SI{5}{\kilo\meter} is "5 km". Its prefixes and units as the package defines them
# (siunitx manual, tables 1-7), \per as a negative power (the default per-mode).
_SI_PREFIXES = dict(
    quecto="q", ronto="r", yocto="y", zepto="z", atto="a", femto="f", pico="p", nano="n", micro="µ",
    milli="m", centi="c", deci="d", deca="da", deka="da", hecto="h", kilo="k", mega="M", giga="G",
    tera="T", peta="P", exa="E", zetta="Z", yotta="Y", ronna="R", quetta="Q", kibi="Ki", mebi="Mi",
    gibi="Gi", tebi="Ti",
)  # fmt: skip
_SI_UNITS = dict(
    ampere="A", candela="cd", kelvin="K", kilogram="kg", gram="g", metre="m", meter="m", mole="mol",
    second="s", becquerel="Bq", degreeCelsius="°C", celsius="°C", coulomb="C", farad="F", gray="Gy",
    hertz="Hz", henry="H", joule="J", katal="kat", lumen="lm", lux="lx", newton="N", ohm="Ω",
    pascal="Pa", radian="rad", siemens="S", sievert="Sv", steradian="sr", tesla="T", volt="V", watt="W",
    weber="Wb", astronomicalunit="au", atomicmassunit="u", bel="B", dalton="Da", day="d", decibel="dB",
    degree="°", electronvolt="eV", hectare="ha", hour="h", litre="L", liter="L", arcminute="′",
    minute="min", arcsecond="″", neper="Np", tonne="t", angstrom="Å", bar="bar", barn="b",
    bohr="a_0", hartree="E_h", knot="kn", mmHg="mmHg", nauticalmile="M", percent="%", byte="B", bit="bit",
    clight="c_0", electronmass="m_e", elementarycharge="e", planckbar="ℏ", parsec="pc", lightyear="ly",
)  # fmt: skip
_SI_CMD_RE = re.compile(
    r"\\(SI|qty|si|unit|num|ang|SIrange|qtyrange|numrange|SIlist|qtylist|numlist)(?![A-Za-z])"
)
# The gate of both rare passes: a letter accent or a siunitx command (not \angle, \number, \unitlength).
_RARE_RE = re.compile(r"\\(?:[vuHcdbrk]|(?:SI|qty|si|unit|num|ang)(?:range|list)?)(?![A-Za-z])")
_SI_ARGS = {"SI": 2, "qty": 2, "si": 1, "unit": 1, "num": 1, "ang": 1, "SIrange": 3, "qtyrange": 3,
            "numrange": 2, "SIlist": 2, "qtylist": 2, "numlist": 1}  # fmt: skip
_SI_TOKEN_RE = re.compile(r"\\([A-Za-z]+)\s*(?:\{([^{}]*)\})?")


def _si_unit(latex: str) -> str:
    """A siunitx unit: ``\\kilo\\meter\\per\\second\\squared`` -> "km s^-2"; literal units as text."""
    if "\\" not in latex:
        return _to_text(latex)
    parts: list[str] = []
    prefix, power, per = "", "", False
    pos = 0
    for m in _SI_TOKEN_RE.finditer(latex):
        literal = latex[pos : m.start()].strip()
        if literal:
            _si_literal(parts, literal)
        pos = m.end() if m.group(1) in ("tothe", "raiseto") else m.end(1)
        name = m.group(1)
        if name in _SI_PREFIXES:
            prefix += _SI_PREFIXES[name]
        elif name == "per":
            per = True
        elif name in ("square", "cubic"):
            power = "2" if name == "square" else "3"
        elif name in ("squared", "cubed", "tothe") and parts:
            exp = {"squared": "2", "cubed": "3"}.get(name, m.group(2) or "")
            base, _, old = parts[-1].partition("^")
            sign = "-" if old.startswith("-") else ""
            parts[-1] = f"{base}^{sign}{exp}"
        elif name == "raiseto":
            power = m.group(2) or ""
        else:
            unit = _SI_UNITS.get(name, name)
            exp = ("-" if per else "") + (power or ("1" if per else ""))
            parts.append(prefix + unit + (f"^{exp}" if exp and exp != "1" else ""))
            prefix, power, per = "", "", False
    tail = latex[pos:].strip()
    if tail:
        _si_literal(parts, tail)
    return " ".join(p for p in parts if p)


def _si_literal(parts: list[str], literal: str) -> None:
    """A unit written as text between macros: a power (``^3``) belongs to the unit before it."""
    text = _to_text(literal)
    if parts and text[:1] in "^_":
        parts[-1] += text
    else:
        parts.append(text)


def _siunitx(chunk: str) -> str:
    """``\\SI{5}{\\kilo\\meter}`` "5 km", ``\\num{4096}`` "4096", ``\\SIrange{1}{5}{\\nm}`` "1 nm – 5 nm",
    ``\\ang{30}`` "30°" (siunitx v2 and v3 names)."""
    out, pos = [], 0
    for m in _SI_CMD_RE.finditer(chunk):
        if m.start() < pos:
            continue
        cmd = m.group(1)
        _, i = read_optional(chunk, m.end())
        args = []
        try:
            for _ in range(_SI_ARGS[cmd]):
                arg, i = read_group(chunk, i)
                if arg is None:
                    break
                args.append(arg)
        except LatexError:
            continue
        if len(args) < _SI_ARGS[cmd]:
            continue
        nums = [a.strip() for a in args]
        if cmd in ("si", "unit"):
            text = _si_unit(args[0])
        elif cmd in ("num", "numlist"):
            text = nums[0].replace(";", ", ")
        elif cmd == "ang":
            text = nums[0].replace(";", "°") + "°"
        elif cmd in ("SI", "qty", "SIlist", "qtylist"):
            text = f"{nums[0].replace(';', ', ')} {_si_unit(args[1])}"
        elif cmd == "numrange":
            text = f"{nums[0]} – {nums[1]}"
        else:  # SIrange, qtyrange
            unit = _si_unit(args[2])
            text = f"{nums[0]} {unit} – {nums[1]} {unit}"
        out.append(chunk[pos : m.start()])
        out.append(text)
        pos = i
    out.append(chunk[pos:])
    return "".join(out)


@functools.lru_cache(maxsize=1 << 16)
def _pylatexenc(piece: str) -> str:
    try:
        nodes = LatexWalker(piece, latex_context=_LATEX_DB, tolerant_parsing=True).get_latex_nodes()[0]
        return _L2T.nodelist_to_text(nodes)
    except Exception:  # pylatexenc is tolerant; this only guards odd corner cases
        return re.sub(r"\\[A-Za-z]+|[{}]", "", piece)


def _xspace(m: re.Match) -> str:
    nxt = m.group(2)
    return "" if not nxt or nxt in ".,;:!?)]}'-/" else " "


def _ctrl(m: re.Match) -> str:
    name = m.group(1)
    if name in _WRAPPERS or name in _SWITCHES:
        return ""
    sym = _SYMBOL_TABLE.get(name)
    return m.group(0) if sym is None else sym


def _negated(m: re.Match) -> str:
    """``\\not\\models`` -> ⊭ when the table has the negated symbol (``\\nmodels``), else the
    symbol with a combining long solidus; ``\\not=`` -> ≠."""
    name, char = m.group(1), m.group(2)
    if name:
        return _SYMBOL_TABLE.get("n" + name) or _SYMBOL_TABLE.get(name, "\\" + name) + "\u0338"
    return {"=": "≠", "<": "≮", ">": "≯"}.get(char, char + "\u0338")


_FRACTION_WORDS = re.compile(r"\\(?:[dtc]?frac|[dt]?binom|genfrac|choose|over|atop)(?![A-Za-z])")
_PRIME_RE = re.compile(r"\^\s*(?:\{\s*((?:\\prime(?![A-Za-z])\s*)+)\}|\\prime(?![A-Za-z]))")


def _primes(m: re.Match) -> str:
    n = m.group(1).count("\\prime") if m.group(1) else 1
    return {1: "\u2032", 2: "\u2033", 3: "\u2034"}.get(n, "\u2032" * n)


def _math(m: re.Match) -> str:
    """Inline math as text: the same tables as prose, ``^{..}``/``_{..}`` kept flat."""
    body = m.group(1) or m.group(2) or ""
    if "\\prime" in body:  # x^{\prime} is x′ (the superscript is the prime's own), ^{\prime\prime} x″
        body = _PRIME_RE.sub(_primes, body)
    if "''" in body:  # in math TeX reads f'' as two primes (″), never a closing quotation mark
        body = body.replace("'''", "‴").replace("''", "″")
    if _SIMPLE_MATH.fullmatch(body):
        return body
    if _FRACTION_WORDS.search(body):  # \tfrac, \binom, \genfrac, {n \choose k}: fractions and binomials
        body = fractions(body)
    if "\\frac" in body or "\\sqrt" in body or "\\begin" in body:
        return _pylatexenc("$" + body + "$")
    if "\\not" in body:
        body = _NOT_RE.sub(_negated, body)
    return _to_text(body.replace("$", ""))


def latex_to_text(chunk: str, stripped: bool = False) -> str:
    """LaTeX snippet -> plain text: arguments that are no text dropped
    (:func:`~corpus.parse.latex.commands.strip_arguments`; ``stripped``: already done, as for
    the pieces of a paragraph), fast tables first, pylatexenc on what is left."""
    if not _SPECIAL.search(chunk):
        return chunk
    if not stripped and "\\" in chunk:
        chunk = strip_arguments(chunk)
    return _to_text(chunk).replace("\ue010", "{").replace("\ue011", "}").replace("\ue012", "$")


def _to_text(chunk: str) -> str:
    """:func:`latex_to_text` with escaped braces still placeholders (math converts through it,
    so ``\\{0,1\\}`` inside ``$...$`` survives the outer pass, which drops bare braces)."""
    if not _SPECIAL.search(chunk):
        return chunk
    if "\\" in chunk:
        if "\\begin" in chunk:  # an array or cases set inline: its cells as text, its rows apart
            chunk = arrays(chunk)
        if "\\i" in chunk or "\\j" in chunk:  # an accent on a dotless i: {\'\i} is í
            chunk = _DOTLESS_RE.sub(r"\1{\2}", chunk)
        if _RARE_RE.search(chunk):  # one search for the two rare cases below
            chunk = _LETTER_ACCENT_RE.sub(lambda m: _pylatexenc(m.group()), chunk)
            chunk = _siunitx(chunk)
        chunk = _XSPACE_RE.sub(_xspace, chunk)
        chunk = _HREF_RE.sub("", chunk)
        chunk = _URL_RE.sub(r"\1", chunk)
        chunk = _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(1)] if m.group(1) else " ", chunk)
        if has_style(chunk):  # \hat{d}, \mathcal{L}: marks and letters of their own
            chunk = style_math(chunk, _to_text)
    if "$" in chunk or "\\(" in chunk:
        chunk = _MATH_RE.sub(_math, chunk)
    if "\\" in chunk:
        chunk = _CTRL_RE.sub(_ctrl, chunk)
        if "\\" in chunk:
            chunk = _RESIDUAL_RE.sub(lambda m: _pylatexenc(drop_settings(m.group(0))), chunk)
    chunk = chunk.replace("``", "“").replace("''", "”").replace("`", "‘")
    chunk = chunk.replace("---", "—").replace("--", "–").replace("~", " ")
    return chunk.replace("{", "").replace("}", "").replace("\\", "")


def _plain(latex: str, stripped: bool = False) -> str:
    """One line of text: :func:`latex_to_text`, whitespace collapsed. ``stripped``: no command
    whose arguments are no text is looked for (bibliography fields, where links and names are
    all there is)."""
    return WS.sub(" ", latex_to_text(latex, stripped)).strip()


def plain_field(latex: str) -> str:
    """A bibliography field as one line of text (:func:`_plain` without the argument table)."""
    return _plain(latex, stripped=True)
