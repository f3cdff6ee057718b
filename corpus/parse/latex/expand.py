"""TeX's gullet: the paper's macros expanded as token lists, its conditionals decided, its math
shifts paired and its font switches applied to their group, before the structure is read.

The rest of the parser reads a string. The expander reads the tokens of
:mod:`~corpus.parse.latex.tokens` and writes that string back regular: definitions gone, macros
replaced by their bodies (token lists, so ``\\log\\RL`` with ``\\RL`` -> ``f`` is ``\\log f``,
never the control word ``\\logf``), conditionals reduced to the branch TeX takes
(:mod:`~corpus.parse.latex.conditionals`), math in one form (``$...$`` inline,
``displaymath`` displayed: ``$$``, ``\\[`` and ``\\(`` paired as TeX pairs them, so two inline
formulas ``$a$$b$`` stay two), ``{\\rm NL}`` in math the ``\\mathrm{NL}`` the rest of the parser
reads. What TeX reports as an error (a math shift left open at a paragraph's end, a runaway
argument, a conditional never closed) is a warning, and no text is dropped for it.

Like LaTeXML's gullet, not a TeX engine: what is not the paper's (the kernel's and the
packages' commands) stays as it is written, for the later stages to read.
"""

from __future__ import annotations

from corpus.ingest.eprint import LatexSource
from corpus.parse.latex.braces import LatexError
from corpus.parse.latex.conditionals import CONDITIONAL_BUILTINS, Conditionals
from corpus.parse.latex.definitions import KERNEL_MACROS, PROTECTED, RAW_ARGUMENTS, Definitions, Macro
from corpus.parse.latex.modes import MATH_FONTS, TEXT, TEXT_ARGUMENT, Group, Modes
from corpus.parse.latex.recovery import balance_braces
from corpus.parse.latex.tokens import (
    BODY_END,
    ENDS,
    NO_VALUE,
    PAR,
    PARAM,
    SKIPPED,
    text_of,
    tokenize,
    verbatim,
)

_DEFAULT_LIMIT = 2_000_000  # tokens pushed by expansion, beyond the text's own: macro_blowup
_LOOP_LIMIT = 50_000  # expansions without reading on in the source: macro_blowup
_MAX_WARNINGS = 50
_MAX_NESTING = 64  # a macro expanded inside its own expansion this deep: a loop TeX would not end

_BUILTINS: dict[str, str] = {
    **dict.fromkeys("\\def \\gdef \\edef \\xdef".split(), "def"),
    **dict.fromkeys(
        (
            "\\newcommand \\renewcommand \\providecommand \\DeclareRobustCommand \\newrobustcmd "
            "\\renewrobustcmd \\providerobustcmd \\knowledgenewrobustcmd \\knowledgerenewrobustcmd "
            "\\algnewcommand \\algrenewcommand "
            "\\DeclareMathOperator"
        ).split(),
        "newcommand",
    ),
    **dict.fromkeys(
        (
            "\\NewDocumentCommand \\RenewDocumentCommand \\ProvideDocumentCommand \\DeclareDocumentCommand "
            "\\NewExpandableDocumentCommand \\RenewExpandableDocumentCommand "
            "\\ProvideExpandableDocumentCommand \\DeclareExpandableDocumentCommand"
        ).split(),
        "xparse",
    ),
    **dict.fromkeys(
        (
            "\\newenvironment \\renewenvironment \\NewDocumentEnvironment \\RenewDocumentEnvironment "
            "\\ProvideDocumentEnvironment \\DeclareDocumentEnvironment \\DeclareOption \\newcolumntype "
            "\\renewcolumntype"
        ).split(),
        "stored",
    ),
    "\\DeclarePairedDelimiter": "paired",
    "\\algdef": "algdef",
    "\\let": "let",
    **dict.fromkeys("\\global \\long \\protected \\outer".split(), "prefix"),
    "\\csname": "csname",
    **dict.fromkeys("\\pdfstrcmp \\strcmp \\pdf@strcmp".split(), "strcmp"),
    "\\expandafter": "expandafter",
    "\\noexpand": "noexpand",
    "\\string": "string",
    "\\relax": "relax",
    "\\detokenize": "detokenize",
    **dict.fromkeys(RAW_ARGUMENTS, "raw"),
    "\\@ifnextchar": "ifnextchar",
    "\\@ifstar": "ifstar",
    "\\begin": "begin",
    "\\end": "end",
    "\\begingroup": "bgroup",
    "\\bgroup": "bgroup",
    "\\endgroup": "egroup",
    "\\egroup": "egroup",
    "\\par": "par",
    "\\(": "math",
    "\\)": "math",
    "\\[": "math",
    "\\]": "math",
    **dict.fromkeys(MATH_FONTS, "font"),
    **dict.fromkeys(["\\" + n for n in TEXT_ARGUMENT], "textarg"),
    "\\ensuremath": "matharg",
    **dict.fromkeys("\\usepackage \\RequirePackage".split(), "usepackage"),
    "\\documentclass": "documentclass",
    **CONDITIONAL_BUILTINS,
}


class Expander(Definitions, Modes, Conditionals):
    """Reads a token list, writes the expanded text. One per paper: the meanings it learns from
    the e-print's own packages (:meth:`define_from`) hold when the paper is read (:meth:`expand`)."""

    def __init__(self, warnings: list[str] | None = None, limit: int = _DEFAULT_LIMIT) -> None:
        self.meanings: dict[str, object] = {**KERNEL_MACROS, **_BUILTINS}
        self.toggles: dict[str, bool] = {}
        self.packages: set[str] = set()
        self.document_class = ""
        self.warnings = warnings
        self.limit = limit
        self.protected: frozenset[str] = frozenset()
        self.stored: list[str] = []  # the paper's environment definitions, as written
        self._handlers = {
            tag: getattr(self, "_h_conditional" if tag.startswith("if:") else "_h_" + tag)
            for tag in set(_BUILTINS.values())
        }
        self._reset([])

    def _reset(self, src: list[str]) -> None:
        self.src, self.pos, self.n = src, 0, len(src)
        self.pending: list[str] = []
        self.out: list[str] = []
        self.taken: list[str] = []
        self.groups: list[Group] = []
        self.conds: list[str] = []
        self.mode = TEXT
        self.last_cw = False
        self.global_next = False
        self.discard = self.in_package = False
        self.pushed = 0
        self.since_source = self.loop_at = 0
        self.warned = 0
        self.line_at = (0, 1)
        self.macro_at = self.cond_at = 0
        self.saved_names: set[str] = set()
        self.active: dict[str, int] = {}  # macros whose expansion is being read, and how deep

    # ------------------------------------------------------------------ entry points

    def define_from(self, text: str, protected: frozenset[str]) -> None:
        """Read a package file for its definitions (``@`` a letter, its text discarded). A failure
        in it costs its remaining definitions only."""
        self.protected = protected
        self._reset(tokenize(text, at_letter=True))
        self.discard = self.in_package = True
        try:
            self._run()
        except (LatexError, RecursionError) as exc:
            self._warn(f"package_macros: definitions after this point not read ({exc})")

    def expand(self, text: str, protected: frozenset[str]) -> str:
        """The paper's text read through: its definitions taken, its macros expanded."""
        self.protected = protected
        src = tokenize(text)
        self._reset(src)
        self.limit += 4 * len(src)
        self._run()
        self._close_all()
        return "".join(self.out)

    # ------------------------------------------------------------------ reading

    def _take(self) -> str | None:
        """The next token (pending expansion first), logged in ``taken`` for a rollback."""
        if self.pending:
            tok = self.pending.pop()
            while tok[0] in ENDS:
                self._body_end(tok)
                if not self.pending:
                    return self._take()
                tok = self.pending.pop()
        elif self.pos < self.n:
            tok = self.src[self.pos]
            self.pos += 1
        else:
            return None
        self.taken.append(tok)
        return tok

    def _untake(self, tok: str) -> None:
        """Put back ``tok``: the last token taken, or the end of it (a run split)."""
        if self.taken:
            last = self.taken[-1]
            if last == tok:
                self.taken.pop()
            elif last.endswith(tok):
                self.taken[-1] = last[: len(last) - len(tok)]
        self.pending.append(tok)

    def _rollback(self, mark: int) -> None:
        """Everything taken since ``mark`` (a length of ``taken``) is read again."""
        self.pending.extend(reversed(self.taken[mark:]))
        del self.taken[mark:]

    def _peek(self) -> str | None:
        self._ended()
        if self.pending:
            return self.pending[-1]
        return self.src[self.pos] if self.pos < self.n else None

    def _ended(self) -> None:
        """Expansions whose last token has been read are over (as TeX leaves a token list it
        has read to its end before reading on, so a macro calling itself last does not nest)."""
        pending = self.pending
        while pending and pending[-1][0] in ENDS:
            self._body_end(pending.pop())

    def _body_end(self, tok: str) -> None:
        if tok[0] == BODY_END:
            self.active[tok[1:]] -= 1
        else:
            self.close_environment(tok[1:], emit=False)

    def _push(self, tokens: list[str]) -> None:
        self.pending.extend(reversed(tokens))
        self.pushed += len(tokens)
        if self.pushed > self.limit:
            raise LatexError("macro_blowup", f"macro expansion grew past {self.limit} tokens")

    def _take_nonspace(self) -> str | None:
        """The next token that is not blank; a run's leading blanks are read off it."""
        while True:
            tok = self._take()
            if tok is None:
                return None
            c = tok[0]
            if c == SKIPPED:
                continue
            if c in " \t\n" and c != PAR:
                rest = tok.lstrip()
                if not rest:
                    continue
                self._untake(rest)
                tok = self._take()
            return tok

    def _take_char(self) -> str | None:
        """One token as TeX reads it: a run gives its first character (blanks one space)."""
        tok = self._take()
        if tok is None or len(tok) == 1 or tok[0] in "\\" + PAR + NO_VALUE:
            return tok
        if tok[0] == SKIPPED:
            return self._take_char()
        if tok[0].isspace():
            rest = tok.lstrip()
            if rest:
                self._untake(rest)
            return " "
        self._untake(tok[1:])
        return tok[0]

    def _group(self) -> list[str] | None:
        """The tokens up to the ``}`` closing a group whose ``{`` was just taken (from the
        source, once no expansion is pending, in one scan: most arguments are there)."""
        depth = 0
        out: list[str] = []
        while self.pending:
            tok = self._take()
            if tok is None:
                return None
            if tok == "}":
                if depth == 0:
                    return out
                depth -= 1
            elif tok == "{":
                depth += 1
            out.append(tok)
        src, start = self.src, self.pos
        for end in range(start, self.n):
            tok = src[end]
            if tok == "}":
                if depth == 0:
                    out += src[start:end]
                    self.taken += src[start : end + 1]
                    self.pos = end + 1
                    return out
                depth -= 1
            elif tok == "{":
                depth += 1
        return None

    def _argument(self) -> list[str] | None:
        """An undelimited argument: a group's contents or one token (None: none can be read)."""
        tok = self._take_nonspace()
        if tok is None:
            return None
        if tok == "{":
            return self._group()
        if tok == "}" or tok[0] == PAR:
            self._untake(tok)
            return None
        if len(tok) > 1 and tok[0] not in "\\" + NO_VALUE:
            self._untake(tok[1:])
            return [tok[0]]
        return [tok]

    def _optional(self, skip: bool = True) -> list[str] | None:
        """A ``[...]`` argument (its first ``]`` outside braces ends it), or None."""
        tok = self._take_nonspace() if skip else self._take()
        if tok is None:
            return None
        if tok[0] != "[":
            self._untake(tok)
            return None
        if len(tok) > 1:
            self._untake(tok[1:])
        out: list[str] = []
        depth = 0
        while True:
            tok = self._take()
            if tok is None or (tok[0] == PAR and depth == 0):
                return None
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
            elif depth == 0 and tok[0] not in "\\$#" + SKIPPED:
                k = tok.find("]")
                if k >= 0:
                    if k + 1 < len(tok):
                        self._untake(tok[k + 1 :])
                    if k:
                        out.append(tok[:k])
                    return out
            out.append(tok)

    def _delimited(self, delim: list[str], long: bool) -> list[str] | None:
        """An argument ended by the tokens ``delim`` outside braces (TeX's delimited parameter);
        a paragraph end stops a macro that is not ``\\long`` (a runaway argument)."""
        out: list[str] = []
        depth = 0
        first = delim[0]
        while True:
            tok = self._take()
            if tok is None:
                return None
            c = tok[0]
            if c == PAR and not long:
                return None
            if tok == "{":
                depth += 1
            elif tok == "}":
                if depth == 0:
                    return None
                depth -= 1
            elif depth == 0:
                if c == "\\" or len(tok) == 1:
                    if tok == first and self._match(delim[1:]):
                        return _unbrace(out)
                elif c not in SKIPPED + PAR + NO_VALUE and len(first) == 1:
                    k = tok.find(first) if first != " " else _first_space(tok)
                    if k >= 0:
                        if k:
                            out.append(tok[:k])
                        self._untake(tok[k + 1 :]) if k + 1 < len(tok) else None
                        if self._match(delim[1:]):
                            return _unbrace(out)
                        out.append(tok[k])
                        continue
            if c != SKIPPED:
                out.append(tok)

    def _match(self, rest: list[str]) -> bool:
        """Whether the next tokens are ``rest`` (read one character at a time); if not, they
        are put back."""
        read: list[str] = []
        for want in rest:
            got = self._take_char()
            if got is None:
                break
            read.append(got)
            if got != want and not (want == " " and got.isspace()):
                break
        else:
            return True
        for t in reversed(read):
            self._untake(t)
        return False

    # ------------------------------------------------------------------ writing

    def _emit(self, tok: str) -> None:
        if self.discard:
            return
        if self.last_cw and tok[0].isalpha():
            self.out.append(" ")  # two control words never join, nor a word and letters
        self.out.append(tok)
        self.last_cw = tok[0] == "\\" and tok[-1].isalpha()

    def _warn(self, message: str, at: int | None = None) -> None:
        """A warning for the paper; ``at``: the source position whose line ``{line}`` names."""
        if self.warnings is not None and not self.in_package and self.warned < _MAX_WARNINGS:
            self.warned += 1
            if at is not None:
                message = message.replace("{line}", str("".join(self.src[:at]).count("\n") + 1))
            self.warnings.append(message)

    def _line(self) -> int:
        """The source line being read (for warnings): counted on from the last time asked, so
        many warnings stay linear."""
        if self.pos < self.line_at[0]:
            self.line_at = (0, 1)
        self.macro_at = self.cond_at = 0
        at, line = self.line_at
        line += "".join(self.src[at : self.pos]).count("\n")
        self.line_at = (self.pos, line)
        return line

    # ------------------------------------------------------------------ the loop

    def _run(self) -> None:
        meanings = self.meanings
        pending = self.pending
        src = self.src
        handlers = self._handlers
        out = self.out
        n = self.n
        discard = self.discard
        while True:
            if pending:
                tok = pending.pop()
            elif self.pos < n:
                tok = src[self.pos]
                self.pos += 1
            else:
                return
            c = tok[0]
            if c not in _SPECIAL:  # a run of text (the common case, written here)
                if not discard:
                    if self.last_cw and c.isalpha():
                        out.append(" ")
                    out.append(tok)
                    self.last_cw = False
            elif c == "\\":
                m = meanings.get(tok)
                if m is None:
                    if tok.startswith("\\if") and self.is_conditional(tok):
                        self.unknown_conditional(tok)
                    else:
                        self._emit(tok)
                elif type(m) is Macro:
                    if discard or not self._expand(tok, m):
                        self._emit(tok)  # a package is read for its definitions, not run
                elif type(m) is str:
                    handlers[m](tok)
                else:
                    self._meaning(tok, m)  # type: ignore[arg-type]
            elif c == "{":
                self._open("{")
                self._emit(tok)
                if self.groups[-1].font:
                    self._resume_font()
            elif c == "}":
                self._close_brace(tok)
            elif c == "$":
                self._math_shift()
            elif c == PAR:
                self._par(tok)
            elif c in ENDS:
                self._body_end(tok)
            elif self.last_cw or self.mode != TEXT:  # blanks after a control word (TeX skipped them
                self._emit(tok)  # after one that left no text)

    def _meaning(self, tok: str, m: tuple) -> None:
        """A ``\\let`` copy of what TeX alone knows (written as its original), or a switch
        setter (``\\draftfalse``)."""
        if m[0] == "let":
            target = m[1]
            if target.startswith("\\if") and self.is_conditional(target):
                self.unknown_conditional(target)
            else:
                self._emit(target)
        elif m[0] == "setif":
            self._define("\\if" + m[1], "if:true" if m[2] else "if:false")
            self._defined()
            self._skip_blank()

    def _skip_blank(self) -> None:
        nxt = self._peek()
        if nxt is not None and nxt[0] == SKIPPED:
            self._take()

    def _expand(self, tok: str, m: Macro) -> bool:
        """``tok``'s body, its arguments substituted, onto the input; False (nothing read) when
        it cannot be expanded: it calls what only TeX knows, or its arguments cannot be read."""
        if m.internals and (m.package or not all(name in self.meanings for name in m.internals)):
            return False  # it calls a package's or the kernel's internals: kept as written
        self._ended()
        depth = self.active.get(tok, 0)
        if depth and (not m.nargs or tok in m.body):
            return False  # met inside its own expansion: a name read as a key (\\kl[\\x]), not run
        if depth >= _MAX_NESTING:
            self._warn(
                f"macro_loop: {tok} calls itself {_MAX_NESTING} deep (line {self._line()}); left as written"
            )
            return False
        mark = len(self.taken)
        self.macro_at = self.pos
        args = self._arguments(tok, m)
        if args is None:
            self._rollback(mark)
            return False
        body = m.body
        if m.substitute:
            body = []
            for t in m.body:
                if t[0] == PARAM:
                    k = int(t[1]) - 1
                    if k < len(args):
                        body.extend(args[k])
                else:
                    body.append(t)
        del self.taken[mark:]
        if not args and self.mode == TEXT:
            self._skip_blank()  # TeX skipped the blanks after the name (in math they part symbols)
        if self.pos != self.loop_at:  # expansions since the source was last read on
            self.loop_at, self.since_source = self.pos, 0
        self.since_source += 1
        if self.since_source > _LOOP_LIMIT:  # growing without end (TeX: capacity exceeded)
            raise LatexError(
                "macro_blowup", f"{tok} expanded {_LOOP_LIMIT} times without reading on in the text"
            )
        self.pending.append(BODY_END + tok)
        self.active[tok] = self.active.get(tok, 0) + 1
        self._push(body)
        return True

    def _arguments(self, tok: str, m: Macro) -> list[list[str]] | None:
        args: list[list[str]] = []
        if m.params is not None:
            if m.params[0] and not self._match(m.params[0]):
                self._warn(
                    f"macro_mismatch: use of {tok} doesn't match its definition (line {{line}})",
                    self.macro_at,
                )
                return None
            for delim in m.params[1:]:
                arg = self._delimited(delim, long=False) if delim else self._argument()
                if arg is None:
                    self._warn(
                        f"runaway_argument: {tok} on line {{line}}: its argument never ends", self.macro_at
                    )
                    return None
                args.append(arg)
            return args
        if m.spec is not None:
            return self._xparse_arguments(m.spec)
        if m.default is not None:
            opt = self._optional()
            args.append(m.default if opt is None else opt)
        while len(args) < m.nargs:
            arg = self._argument()
            if arg is None:
                return None
            args.append(arg)
        return args

    def _xparse_arguments(self, spec: list[tuple[str, str]]) -> list[list[str]] | None:
        args: list[list[str]] = []
        mandatory = False
        for kind, data in spec:
            if kind == "m":
                arg = self._argument()
                if arg is None:
                    return None
                args.append(arg)
                mandatory = True
            elif kind == "o":
                opt = self._optional(skip=not mandatory)
                args.append(opt if opt is not None else tokenize(data) if data else [NO_VALUE])
            elif kind in "st":
                token = "*" if kind == "s" else data
                got = self._take_nonspace() if not mandatory else self._take()
                if got is not None and got.startswith(token):
                    if len(got) > len(token):
                        self._untake(got[len(token) :])
                    args.append(["\\BooleanTrue"])
                else:
                    if got is not None:
                        self._untake(got)
                    args.append(["\\BooleanFalse"])
            else:  # d: delimited by two characters, with a default
                open_, close, default = data[0], data[1], data[2:]
                got = self._take_nonspace()
                if got is not None and got.startswith(open_) and got[0] not in "\\" + PAR:
                    if len(got) > 1:
                        self._untake(got[1:])
                    arg = self._delimited([close], long=False)
                    if arg is None:
                        return None
                    args.append(arg)
                else:
                    if got is not None:
                        self._untake(got)
                    args.append(tokenize(default) if default and default != NO_VALUE else [NO_VALUE])
        return args

    # ------------------------------------------------------------------ full expansion

    def expand_fully(self, tokens: list[str]) -> list[str]:
        """``tokens`` with every macro and decidable conditional expanded (``\\edef``,
        ``\\equal``); what does not expand is kept."""
        state = (self.src, self.pos, self.n, self.pending, self.out, self.taken, self.discard, self.last_cw)
        self.src, self.pos, self.n, self.pending, self.out, self.taken = tokens, 0, len(tokens), [], [], []
        self.discard = False
        conds = len(self.conds)
        try:
            while True:
                tok = self._take()
                if tok is None:
                    break
                self.taken.clear()
                m = self.meanings.get(tok) if tok[0] == "\\" else None
                if type(m) is Macro and self._expand(tok, m):
                    continue
                if type(m) is str and (m.startswith("if:") or m in _EXPANDABLE):
                    self._handlers[m](tok)
                elif tok[0] != SKIPPED:
                    self.out.append(tok)
            return self.out
        finally:
            del self.conds[conds:]
            (self.src, self.pos, self.n, self.pending, self.out, self.taken, self.discard, self.last_cw) = (
                state
            )

    def csname(self) -> str | None:
        """The name ``\\csname ... \\endcsname`` builds (its tokens expanded), or None."""
        mark = len(self.taken)
        parts: list[str] = []
        for _ in range(10_000):
            tok = self._take()
            if tok is None:
                break
            if tok == "\\endcsname":
                del self.taken[mark:]
                return "".join(parts)
            m = self.meanings.get(tok) if tok[0] == "\\" else None
            if type(m) is Macro:
                inner = len(self.taken)
                if not self._expand(tok, m):
                    break
                del self.taken[inner:]
                continue
            if m in ("csname", "expandafter"):
                self._handlers[m](tok)  # type: ignore[index]
                continue
            if tok[0] == "\\" or tok in "{}$#":
                break
            if tok[0] not in SKIPPED + PAR:
                parts.append(tok)
        self._rollback(mark)
        return None


_SPECIAL = frozenset("\\{}$" + PAR + SKIPPED + ENDS)  # first characters of tokens that are no run of text
_EXPANDABLE = frozenset(
    {"else", "fi", "or", "csname", "expandafter", "noexpand", "ifnextchar", "ifstar", "strcmp", "detokenize"}
)


def _unbrace(tokens: list[str]) -> list[str]:
    """A delimited argument that is one whole group loses its braces (as TeX strips them)."""
    if len(tokens) >= 2 and tokens[0] == "{" and tokens[-1] == "}":
        depth = 0
        for i, t in enumerate(tokens):
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0 and i < len(tokens) - 1:
                    return tokens
        return tokens[1:-1]
    return tokens


def _first_space(tok: str) -> int:
    for i, ch in enumerate(tok):
        if ch in " \t\n":
            return i
    return -1


def expand_source(
    source: LatexSource, interpreted: frozenset[str], warnings: list[str] | None = None
) -> tuple[str, list[str]]:
    """A paper's LaTeX read as TeX reads it (verbatim first, braces repaired as TeX recovers,
    then tokens expanded), written back as regular LaTeX. The e-print's own packages are read
    first for their definitions; ``interpreted``: commands the parser reads itself, which a
    package must not redefine (the paper itself may, but not :data:`PROTECTED`). Also the
    paper's environment definitions (``\\newenvironment``), which leave no text."""
    text = balance_braces(verbatim(source.text), warnings)
    expander = Expander(warnings)
    for name, package in source.packages.items():
        if name.endswith(".sty"):  # its options' code already in place (parser.parse_latex)
            expander.define_from(verbatim(package), PROTECTED | interpreted)
    return text_of([expander.expand(text, PROTECTED)]), expander.stored
