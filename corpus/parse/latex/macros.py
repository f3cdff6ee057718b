"""The paper's own macros: verbatim and dead code removed, simple ``\\newcommand`` / ``\\def``
definitions (with or without arguments) collected and expanded, so the text reads as TeX
would print it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.parse.latex.braces import LatexError, read_arg, read_group, read_optional
from corpus.parse.latex.xparse import decide_tests, parse_spec, read_xparse_args

_VERBATIM_RE = re.compile(
    r"\\begin\s*\{(verbatim\*?|comment|minted|Verbatim|alltt|filecontents\*?)\}.*?\\end\s*\{\1\}",
    re.S,
)
_LISTING_RE = re.compile(r"\\begin\s*\{lstlisting\}")
_LISTING_END_RE = re.compile(r"\\end\s*\{lstlisting\}")
_LSTINPUT_RE = re.compile(r"\\lstinputlisting(?![A-Za-z])")
_FIRSTNUMBER_RE = re.compile(r"firstnumber\s*=\s*(\d+)")
_VERB_RE = re.compile(r"\\verb\*?([^A-Za-z\s])(.*?)\1")
_LET_RE = re.compile(r"\\let(?![A-Za-z])\s*\\[A-Za-z@]+\s*=?\s*(?:\\[A-Za-z@]+|\\.|[^\\\s])")
_IFFALSE_RE = re.compile(r"\\iffalse(?![A-Za-z]).*?\\fi(?![A-Za-z])", re.S)


def clean(text: str) -> str:
    """The text without verbatim blocks, ``\\iffalse ... \\fi`` and ``\\let`` assignments; a
    listing keeps its options and the labels of its lines (:func:`listings`)."""
    text = _VERBATIM_RE.sub("", text)
    if "lstlisting" in text or "\\lstinputlisting" in text:
        text = listings(text)
    text = _VERB_RE.sub(lambda m: m.group(2).replace("\\", "\\textbackslash "), text)
    text = _IFFALSE_RE.sub("", text)
    # \let\a\b is an assignment, no text; left in, \b would be expanded with arguments
    # it never had (\let\old\addcontentsline ate the \title and \author after it)
    return _LET_RE.sub("", text) if "\\let" in text else text


def listings(text: str) -> str:
    """``lstlisting`` code replaced by the labels it holds, each with its line number
    (``\\lstlinelabel{line:add}{2}``: a ``\\label`` escaped into the code refers to its line);
    ``\\lstinputlisting[opts]{file}`` made an empty listing with its options (caption, label)."""
    out, pos = [], 0
    for m in _LISTING_RE.finditer(text):
        if m.start() < pos:
            continue
        opts, i = read_optional(text, m.end())
        end = _LISTING_END_RE.search(text, i)
        if end is None:
            break  # no listing closes after this one: the rest is text
        first = _FIRSTNUMBER_RE.search(opts or "")
        start = int(first.group(1)) if first else 1
        lines = text[i : end.start()].split("\n")[1:]  # the code begins on the next line
        marks = [
            f"\\lstlinelabel{{{lab.strip()}}}{{{start + k}}}"
            for k, line in enumerate(lines)
            for lab in re.findall(r"\\label\s*\{([^{}]*)\}", line)
        ]
        out.append(text[pos : m.start()] + "\\begin{lstlisting}[" + (opts or "") + "]" + "".join(marks))
        out.append("\\end{lstlisting}")
        pos = end.end()
    out.append(text[pos:])
    text = "".join(out)
    if "\\lstinputlisting" not in text:
        return text
    out, pos = [], 0
    for m in _LSTINPUT_RE.finditer(text):
        opts, i = read_optional(text, m.end())
        try:
            _, i = read_group(text, i)
        except LatexError:
            continue
        out.append(text[pos : m.start()] + "\\begin{lstlisting}[" + (opts or "") + "]\\end{lstlisting}")
        pos = i
    out.append(text[pos:])
    return "".join(out)


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
            first, i = read_group(text, m.end())
            second, j = read_group(text, i)
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
    r"|\\(?P<xparse>(?:New|Renew|Provide|Declare)(?:Expandable)?DocumentCommand)(?![A-Za-z])"
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
    spec: list[tuple[str, str]] | None = None  # an xparse command's arguments (latex_xparse)


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
        nargs, default, spec = 0, None, None
        try:
            if m["xparse"]:  # \NewDocumentCommand{\name}{spec}{body}
                arg_spec, i = read_group(text, i)
                spec = parse_spec(arg_spec or "")
                if spec is None:
                    continue
                nargs = len(spec)
                body, end = read_group(text, i)
            elif m["def"]:
                j = text.find("{", i)
                params = text[i:j] if j >= 0 else ""
                if j < 0 or len(params) > 40 or not re.fullmatch(r"(?:#\d)*", params.strip()):
                    continue  # delimited parameters: not a simple macro
                nargs = len(re.findall(r"#\d", params))
                body, end = read_group(text, j)
            else:
                n, i = read_optional(text, i)
                if n is not None:
                    if not n.strip().isdigit():
                        continue
                    nargs = int(n.strip())
                    default, i = read_optional(text, i)
                body, end = read_group(text, i)
        except LatexError:
            continue
        if body is None:
            continue
        out.append(text[pos : m.start()] + "{}")  # no text, but its line is no blank line
        pos = end
        if m["cmd"] == "DeclareMathOperator":
            body = body.replace("\\,", " ")
        if name in _PROTECTED:
            continue
        if len(body) > 4000 or _UNSAFE_BODY.search(body):
            if _CREDIT_NOTE.search(body):  # \blfootnote{Equal contribution}: an author note, no text
                macros[name] = Macro(nargs, default, "")
            continue
        if (m["cmd"] == "providecommand" or m["xparse"] == "ProvideDocumentCommand") and name in macros:
            continue
        macros[name] = Macro(nargs, default, body, spec)
    out.append(text[pos:])
    return macros, "".join(out)


def _substitute(body: str, args: list[str]) -> str:
    def arg(a: re.Match) -> str:
        n = int(a.group(1))
        return args[n - 1] if 0 < n <= len(args) else ""

    return re.sub(r"#(\d)", arg, body)


_CTRL_WORD = re.compile(r"\\([A-Za-z]+)")


def expand_macros(text: str, macros: dict[str, Macro], max_passes: int = 8) -> str:
    """Expand user macros until none is left (bounded; ``macro_blowup`` if it explodes)."""
    if not macros:
        return text
    limit = 4 * len(text) + 2_000_000
    find = macros.get
    for _ in range(max_passes):
        out, pos, changed = [], 0, False
        for m in _CTRL_WORD.finditer(text):
            mac = find(m.group(1))
            if mac is None or m.start() < pos:
                continue
            start, end = m.span()
            args: list[str] = []
            try:
                if mac.spec is not None:
                    args, end = read_xparse_args(text, end, mac.spec)
                elif mac.default is not None:
                    opt, end = read_optional(text, end)
                    args.append(mac.default if opt is None else opt)
                while len(args) < mac.nargs:
                    arg, end = read_arg(text, end)
                    args.append(arg)
            except LatexError:
                continue
            body = mac.body
            if args:
                body = _substitute(body, args)
            if mac.spec is not None:
                body = decide_tests(body)
            out.append(text[pos:start])
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


# ----------------------------------------------------------------------------- conditionals

_IFTHEN_CMDS = (
    r"\\(?P<cmd>newboolean|provideboolean|setboolean|newtoggle|providetoggle|toggletrue|togglefalse"
    r"|settoggle|ifthenelse|iftoggle)(?![A-Za-z@])"
)


# What :func:`conditionals` reads: ifthen and etoolbox commands, ``\\newif`` declarations, and
# switches set or tested (kept when ``\\newif`` declared them, or ``\\iftrue``).
_EVENTS_RE = re.compile(
    _IFTHEN_CMDS
    + r"|\\newif\s*\\if(?P<newif>[A-Za-z@]+)"
    + r"|\\if(?P<test>[A-Za-z@]+)(?![A-Za-z@])"
    + r"|\\(?P<switch>[A-Za-z@]+?)(?P<value>true|false)(?![A-Za-z@])"
)


_TEX_COND_RE = re.compile(r"\\(if[A-Za-z@]*|else|fi|or)(?![A-Za-z@])")
_NOT_CONDITIONALS = frozenset({"ifthenelse", "iftoggle", "iff"})  # \if... commands that open no conditional
_BOOL_TEST_RE = re.compile(r"\\(NOT|AND|OR|boolean|equal)(?![A-Za-z])")


def conditionals(text: str) -> str:
    """The branch LaTeX takes of each conditional it can decide, in document order:
    ``\\ifthenelse`` on ifthen booleans (false until ``\\setboolean``) and ``\\equal``,
    etoolbox's ``\\iftoggle``, and ``\\ifX ... \\else ... \\fi`` for switches declared by
    ``\\newif`` (false until ``\\Xtrue``) and ``\\iftrue``. Others are left as they are."""
    if not any(w in text for w in ("\\newif", "\\iftrue", "\\ifthenelse", "boolean", "toggle")):
        return text
    state = _Conditions(_EVENTS_RE)
    return state.decide(text, 0)


class _Conditions:
    """The switches and booleans set so far; a branch taken is read with them, in place (each
    character read once per nesting level, so a text of many conditionals stays linear)."""

    def __init__(self, events: re.Pattern) -> None:
        self.events = events
        self.flags: dict[str, bool] = {"true": True}  # \iftrue
        self.switches: set[str] = {"true"}

    def decide(self, text: str, depth: int) -> str:
        out: list[str] = []
        pos = 0
        while m := self.events.search(text, pos):
            out.append(text[pos : m.start()])
            pos = m.end()
            if m.group("newif"):
                self.switches.add(m["newif"])
                self.flags[m["newif"]] = False
                out.append("{}")  # no text, but the line it was on is no blank line
                continue
            if m["switch"]:
                if m["switch"] in self.switches:
                    self.flags[m["switch"]] = m["value"] == "true"
                    out.append("{}")
                else:
                    out.append(m.group())
                continue
            if m["test"]:
                name = m["test"]
                then, other, end = _tex_branches(text, pos) if name in self.switches else ("", "", -1)
                if end < 0:
                    out.append(m.group())
                    continue
                out.append(self._taken(then if self.flags.get(name) else other, depth))
                pos = end
                continue
            try:
                pos = self._command(m["cmd"], text, pos, out, depth)
            except LatexError:
                out.append(m.group())
        out.append(text[pos:])
        return "".join(out)

    def _taken(self, branch: str, depth: int) -> str:
        return self.decide(branch, depth + 1) if depth < 20 else branch

    def _command(self, cmd: str, text: str, pos: int, out: list[str], depth: int) -> int:
        if cmd in ("newboolean", "provideboolean", "newtoggle", "providetoggle"):
            name, pos = read_arg(text, pos)
            self.flags.setdefault("b:" + name.strip(), False)
        elif cmd in ("setboolean", "settoggle"):
            name, pos = read_arg(text, pos)
            value, pos = read_arg(text, pos)
            self.flags["b:" + name.strip()] = value.strip().lower() == "true"
        elif cmd in ("toggletrue", "togglefalse"):
            name, pos = read_arg(text, pos)
            self.flags["b:" + name.strip()] = cmd == "toggletrue"
        else:  # \ifthenelse{test}{then}{else}, \iftoggle{name}{then}{else}
            test, i = read_arg(text, pos)
            then, i = read_arg(text, i)
            other, i = read_arg(text, i)
            holds = (
                self.flags.get("b:" + test.strip(), False) if cmd == "iftoggle" else _holds(test, self.flags)
            )
            out.append(self._taken(then if holds else other, depth))
            return i
        out.append("{}")
        return pos


def _tex_branches(text: str, i: int) -> tuple[str, str, int]:
    """The two branches of a TeX conditional whose test ends at ``text[i]``, and the end of its
    ``\\fi`` (-1 when it never closes); inner conditionals nest."""
    depth, else_at, else_end = 0, -1, -1
    for m in _TEX_COND_RE.finditer(text, i):
        word = m.group(1)
        if word.startswith("if") and word not in _NOT_CONDITIONALS:
            depth += 1
        elif word == "fi":
            if depth == 0:
                if else_at < 0:
                    return text[i : m.start()], "", m.end()
                return text[i:else_at], text[else_end : m.start()], m.end()
            depth -= 1
        elif word == "else" and depth == 0 and else_at < 0:
            else_at, else_end = m.start(), m.end()
    return "", "", -1


def _holds(test: str, flags: dict[str, bool]) -> bool:
    """An ifthen test: ``\\boolean{x}``, ``\\equal{a}{b}``, with ``\\NOT``, ``\\AND``, ``\\OR``
    (left to right); what it cannot decide is false."""
    value: bool | None = None
    negate, join = False, ""
    pos = 0
    for m in _BOOL_TEST_RE.finditer(test):
        if m.start() < pos:
            continue
        word = m.group(1)
        pos = m.end()
        if word == "NOT":
            negate = not negate
            continue
        if word in ("AND", "OR"):
            join = word
            continue
        try:
            if word == "boolean":
                name, pos = read_arg(test, pos)
                result = flags.get("b:" + name.strip(), False)
            else:
                a, pos = read_arg(test, pos)
                b, pos = read_arg(test, pos)
                result = a.strip() == b.strip()
        except LatexError:
            return False
        result = result != negate
        negate = False
        value = result if value is None else (value and result if join == "AND" else value or result)
    return bool(value)
