"""The paper's own macros: verbatim and dead code removed, simple ``\\newcommand`` / ``\\def``
definitions (with or without arguments) collected and expanded, so the text reads as TeX
would print it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.parse.latex_text import LatexError, _read_arg, _read_group, _read_optional

_VERBATIM_RE = re.compile(
    r"\\begin\s*\{(verbatim\*?|comment|lstlisting|minted|Verbatim|alltt|filecontents\*?)\}.*?\\end\s*\{\1\}",
    re.S,
)
_VERB_RE = re.compile(r"\\verb\*?([^A-Za-z\s])(.*?)\1")
_LET_RE = re.compile(r"\\let(?![A-Za-z])\s*\\[A-Za-z@]+\s*=?\s*(?:\\[A-Za-z@]+|\\.|[^\\\s])")
_IFFALSE_RE = re.compile(r"\\iffalse(?![A-Za-z]).*?\\fi(?![A-Za-z])", re.S)


def clean(text: str) -> str:
    """The text without verbatim blocks, ``\\iffalse ... \\fi`` and ``\\let`` assignments."""
    text = _VERBATIM_RE.sub("", text)
    text = _VERB_RE.sub(lambda m: m.group(2).replace("\\", "\\textbackslash "), text)
    text = _IFFALSE_RE.sub("", text)
    # \let\a\b is an assignment, no text; left in, \b would be expanded with arguments
    # it never had (\let\old\addcontentsline ate the \title and \author after it)
    return _LET_RE.sub("", text) if "\\let" in text else text


def first_argument(text: str, name: str) -> str:
    """``\\name{a}{b}`` -> ``a`` everywhere (``\\texorpdfstring{$\\lambda$}{lambda}``: the
    PDF-bookmark variant is not text)."""
    if "\\" + name not in text:
        return text
    out, pos = [], 0
    for m in re.finditer(r"\\" + name + r"(?![A-Za-z])", text):
        if m.start() < pos:
            continue
        try:
            first, i = _read_group(text, m.end())
            second, j = _read_group(text, i)
        except LatexError:
            continue
        if first is None or second is None:
            continue
        out.append(text[pos : m.start()])
        out.append("{" + first + "}")
        pos = j
    out.append(text[pos:])
    return "".join(out)


_DEF_RE = re.compile(
    r"\\(?P<cmd>(?:re)?newcommand|providecommand|DeclareRobustCommand|DeclareMathOperator)\*?"
    r"|\\(?P<def>[gex]?def)(?![A-Za-z])"
)
_NAME_RE = re.compile(r"\s*(?:\{\s*(\\[A-Za-z@]+)\s*\}|(\\[A-Za-z@]+))")
_UNSAFE_BODY = re.compile(
    r"\\(?:def|gdef|edef|xdef|newcommand|renewcommand|csname|expandafter|if[A-Za-z]*|else|fi|makeatletter|let|futurelet|catcode)(?![A-Za-z])|@"
)
# Commands the parser interprets itself: a user redefinition must not hide them.
_PROTECTED = frozenset(
    """begin end section subsection subsubsection paragraph subparagraph chapter part cite citep citet
    ref eqref autoref cref Cref label caption footnote item title abstract author bibitem appendix
    input include bibliography newblock par reference bibitem""".split()
)
_CREDIT_NOTE = re.compile(r"\\(?:footnote|footnotetext|thanks|blfootnote)(?![A-Za-z])")


@dataclass
class Macro:
    nargs: int
    default: str | None
    body: str


def collect_macros(text: str) -> tuple[dict[str, Macro], str]:
    """Find simple macro definitions anywhere; return them and the text without them."""
    macros: dict[str, Macro] = {}
    out, pos = [], 0
    for m in _DEF_RE.finditer(text):
        if m.start() < pos:
            continue
        nm = _NAME_RE.match(text, m.end())
        if not nm:
            continue
        name = (nm.group(1) or nm.group(2))[1:]
        i = nm.end()
        nargs, default = 0, None
        try:
            if m["def"]:
                j = text.find("{", i)
                params = text[i:j] if j >= 0 else ""
                if j < 0 or len(params) > 40 or not re.fullmatch(r"(?:#\d)*", params.strip()):
                    continue  # delimited parameters: not a simple macro
                nargs = len(re.findall(r"#\d", params))
                body, end = _read_group(text, j)
            else:
                n, i = _read_optional(text, i)
                if n is not None:
                    if not n.strip().isdigit():
                        continue
                    nargs = int(n.strip())
                    default, i = _read_optional(text, i)
                body, end = _read_group(text, i)
        except LatexError:
            continue
        if body is None:
            continue
        out.append(text[pos : m.start()])
        pos = end
        if m["cmd"] == "DeclareMathOperator":
            body = body.replace("\\,", " ")
        if name in _PROTECTED:
            continue
        if len(body) > 4000 or _UNSAFE_BODY.search(body):
            if _CREDIT_NOTE.search(body):  # \blfootnote{Equal contribution}: an author note, no text
                macros[name] = Macro(nargs, default, "")
            continue
        if m["cmd"] == "providecommand" and name in macros:
            continue
        macros[name] = Macro(nargs, default, body)
    out.append(text[pos:])
    return macros, "".join(out)


_CTRL_WORD = re.compile(r"\\([A-Za-z]+)")


def _substitute(body: str, args: list[str]) -> str:
    def arg(a: re.Match) -> str:
        n = int(a.group(1))
        return args[n - 1] if 0 < n <= len(args) else ""

    return re.sub(r"#(\d)", arg, body)


def expand_macros(text: str, macros: dict[str, Macro], max_passes: int = 8) -> str:
    """Expand user macros until none is left (bounded; ``macro_blowup`` if it explodes)."""
    if not macros:
        return text
    limit = 4 * len(text) + 2_000_000
    for _ in range(max_passes):
        out, pos, changed = [], 0, False
        for m in _CTRL_WORD.finditer(text):
            if m.start() < pos:
                continue
            mac = macros.get(m.group(1))
            if mac is None:
                continue
            end = m.end()
            args: list[str] = []
            try:
                if mac.default is not None:
                    opt, end = _read_optional(text, end)
                    args.append(mac.default if opt is None else opt)
                while len(args) < mac.nargs:
                    arg, end = _read_arg(text, end)
                    args.append(arg)
            except LatexError:
                continue
            body = mac.body
            if args:
                body = _substitute(body, args)
            out.append(text[pos : m.start()])
            out.append(body)
            pos = end
            changed = True
        if not changed:
            return text
        out.append(text[pos:])
        text = "".join(out)
        if len(text) > limit:
            raise LatexError("macro_blowup", f"macro expansion grew the text past {limit} characters")
    return text
