"""The paper's definitions as TeX makes them: ``\\def`` with its parameter text (delimited
parameters too), ``\\let``, ``\\newcommand`` and its kin (``\\DeclareRobustCommand``,
etoolbox's ``\\newrobustcmd``, the knowledge package's ``\\knowledgenewrobustcmd``), xparse's
``\\NewDocumentCommand``, mathtools' ``\\DeclarePairedDelimiter``, with control-symbol names
(``\\def\\>{\\rangle}``) and local to their group unless global. A body is kept as tokens
(:class:`Macro`); the expander (:mod:`~corpus.parse.latex.expand`) substitutes its arguments.

Also the few primitives macros are built with: ``\\csname``, ``\\expandafter``, ``\\noexpand``,
``\\@ifnextchar``, ``\\@ifstar``, and the kernel macros paper macros call (``\\@firstoftwo``).
"""

from __future__ import annotations

from dataclasses import dataclass

from corpus.parse.latex.environments import INTERPRETED_ENVS
from corpus.parse.latex.tokens import PAR, PARAM, SKIPPED, detokenize, text_of, tokenize
from corpus.parse.latex.xparse import parse_spec

# Commands the parser interprets itself: a definition in the paper must not hide them.
PROTECTED = frozenset(
    """begin end section subsection subsubsection paragraph subparagraph chapter part cite citep citet
    ref eqref autoref cref Cref label caption footnote item title abstract author bibitem appendix
    input include bibliography newblock par reference""".split()
)
_CREDIT_NOTE = frozenset({"\\footnote", "\\footnotetext", "\\thanks", "\\blfootnote"})
_CREDIT_MARK = frozenset({"\\thefootnote", "\\addtocounter", "\\renewcommand", "\\def", "\\let"})


@dataclass(slots=True)
class Macro:
    """A macro's meaning: its body (``PARAM``+digit where an argument goes) and how its arguments
    are read: ``nargs`` undelimited (LaTeX's ``\\newcommand``, the first optional when ``default``
    is set), TeX's parameter text (``params``: the delimiters before ``#1`` and after each
    argument, empty for an undelimited one), or xparse's ``spec``."""

    body: list[str]
    nargs: int = 0
    default: list[str] | None = None
    params: list[list[str]] | None = None
    spec: list[tuple[str, str]] | None = None
    internals: tuple[str, ...] = ()  # the kernel's or a package's internal commands it calls
    substitute: bool = False
    package: bool = False  # defined by a package file: never expanded when it calls internals


def _body(tokens: list[str]) -> Macro:
    """A macro body as the expander keeps it: ``#n`` marked, ``##`` one ``#``, and a single line
    end a space, as TeX read it when the body was defined: a macro whose body begins on a new
    line, used at the start of a line, must not make a blank line (a paragraph break, inside a
    formula too) that the source does not have; a blank line in a body is a :data:`PAR` token."""
    body: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if "\n" in t and t[0] != PAR:
            t = t.replace("\n", " ")
        if t == "#" and i + 1 < n:
            nxt = tokens[i + 1]
            if nxt == "#":
                body.append("#")
                i += 2
                continue
            if nxt[0].isdigit() and nxt[0] != "0":
                body.append(PARAM + nxt[0])
                if len(nxt) > 1:
                    body.append(nxt[1:])
                i += 2
                continue
        body.append(t)
        i += 1
    defined = {_defined_name(body, k) for k, t in enumerate(body) if t in _DEFINERS}
    internals = tuple({t for t in body if t[0] == "\\" and (_internal(t) or t in DRAWING)} - defined)
    names = set(body)
    if names & _CREDIT_NOTE and names & _CREDIT_MARK and not _prints_outside_notes(body):
        return Macro([])  # \blfootnote{Equal contribution}: an author note, no text where it stands
    return Macro(body, internals=internals, substitute=any(t[0] == PARAM for t in body))


def _prints_outside_notes(body: list[str]) -> bool:
    """Whether an argument of the macro is set outside every note of its body: trackchanges'
    ``\\add{new text}`` prints the text and, when tracking, a footnote saying so; an author
    note (``\\blfootnote``) puts its argument in the footnote only."""
    depth, note_depth = 0, None  # the brace depth at which the current note's group opened
    pending = False  # a note command was just read: its group opens next
    for t in body:
        if t == "{":
            depth += 1
            if pending and note_depth is None:
                note_depth = depth
            pending = False
        elif t == "}":
            if note_depth == depth:
                note_depth = None
            depth -= 1
        elif t in _CREDIT_NOTE:
            pending = True
        elif t[0] == PARAM and note_depth is None:
            return True
    return False


# Typesetting programmed from boxes, registers and font slots: a symbol drawn
# (``\\def\\lta{\\mathrel{\\spose{\\lower 3pt\\hbox{$\\mathchar"218$}}...}}``), a box measured
# (``\\setbox0\\hbox{..}\\algindent=\\wd0``): its expansion is no text, so a macro built on it is kept
# as written (text.py knows the usual symbols' names).
DRAWING = frozenset(
    "\\mathchar \\mathchoice \\halign \\valign \\vcenter \\offinterlineskip \\spose \\char \\mathaccent "
    "\\delimiter \\radical \\setbox \\wd \\ht \\dp \\box \\copy \\unhbox \\unvbox \\dimen \\count "
    "\\skip \\advance \\multiply \\divide \\newdimen \\newcount \\newskip \\newbox \\hangindent "
    "\\hangafter \\parshape".split()
)
_PROGRAMMING = DRAWING | frozenset(
    "\\else \\fi \\or \\futurelet \\catcode \\typeout \\string \\global \\aftergroup \\afterassignment "
    "\\relax \\noexpand \\the \\number \\romannumeral \\loop \\repeat \\message \\write \\immediate".split()
)
# Arguments that are code, not text: column specs (``>{$}c<{$}`` holds math shifts that are no
# formula), after the command or after ``\\begin{env}``.
RAW_ARGUMENTS = {"\\multicolumn": "mm"}
RAW_ENV_ARGUMENTS = {
    **dict.fromkeys(
        "tabular array longtable supertabular NiceTabular NiceArray tblr mpsupertabular".split(), "om"
    ),
    **dict.fromkeys("tabular* tabularx tabulary xltabular longtblr".split(), "mom"),
}
_LET_TO_CHAR = {"\\bgroup": "{", "\\egroup": "}", "\\sp": "^", "\\sb": "_"}  # the kernel's \\let copies
_DEFINERS = frozenset("\\def \\gdef \\edef \\xdef \\let \\newcommand \\renewcommand \\providecommand".split())


def _internal(tok: str) -> bool:
    """A control word named as the kernel's and packages' internals are (``\\@title``,
    ``\\tl_set:Nn``), not a control symbol (``\\_``)."""
    return len(tok) > 2 and ("@" in tok or "_" in tok or ":" in tok)


def _defined_name(body: list[str], k: int) -> str:
    """The name the definition at ``body[k]`` makes (``\\def\\x``, ``\\newcommand{\\x}``)."""
    for t in body[k + 1 : k + 4]:
        if t[0] == "\\":
            return t
        if t != "{" and t[0] != SKIPPED and t != "*":
            break
    return ""


def _builtin(nargs: int, body: str) -> Macro:
    m = _body(tokenize(body, at_letter=True))
    m.nargs, m.internals = nargs, ()
    return m


# The kernel's macros that paper macros call (expanded so their tests can be decided).
KERNEL_MACROS = {
    "\\@firstoftwo": _builtin(2, "#1"),
    "\\@secondoftwo": _builtin(2, "#2"),
    "\\@firstofone": _builtin(1, "#1"),
    "\\@gobble": _builtin(1, ""),
    "\\@gobbletwo": _builtin(2, ""),
    "\\@empty": _builtin(0, ""),
    "\\@nameuse": _builtin(1, "\\csname #1\\endcsname"),
    "\\texorpdfstring": _builtin(2, "{#1}"),  # the PDF bookmark's variant is no text
}


class Definitions:
    """The definition half of :class:`~corpus.parse.latex.expand.Expander` (its reading methods
    and state: ``meanings``, ``groups``, ``taken``)."""

    def _define(self, name: str, meaning: object, global_: bool = False) -> None:
        """An assignment, local to the innermost group unless global (TeX's save stack)."""
        if name[1:] in self.protected:
            return
        global_ = global_ or self.global_next
        self.global_next = False
        if type(meaning) is Macro and self.discard:
            meaning.package = True
            meaning.internals = tuple(t for t in set(meaning.body) if t[0] == "\\" and self._programming(t))
        if global_:
            if name in self.saved_names:
                for g in self.groups:
                    if g.saved:
                        g.saved.pop(name, None)
        elif self.groups:
            g = self.groups[-1]
            if g.saved is None:
                g.saved = {}
            if name not in g.saved:
                g.saved[name] = self.meanings.get(name)
                self.saved_names.add(name)
        self.meanings[name] = meaning

    def _programming(self, tok: str) -> bool:
        """Whether a package macro calling ``tok`` is TeX programming rather than a shorthand
        for text: internals, definitions, ``\\csname``, conditionals on what only TeX knows (what
        the expander decides itself, ``\\@ifnextchar``, ``\\ifx``, ``\\ifstrequal``, is not). A package's macros that
        program are kept as written (their code runs on states only TeX knows); the paper's own
        are expanded."""
        m = self.meanings.get(tok)
        if type(m) is str:
            return m in (
                "def",
                "let",
                "newcommand",
                "csname",
                "expandafter",
                "prefix",
                "string",
                "if:unknown",
            )
        if tok in KERNEL_MACROS:
            return False
        if _internal(tok) or tok in _PROGRAMMING:
            return True
        return m is None and tok.startswith("\\if")

    def _defined(self) -> None:
        """A definition leaves no text; ``{}`` keeps the lines around it from joining into a blank one."""
        self.global_next = False
        if not self.discard:
            self.out.append("{}")
            self.last_cw = False

    def _name(self) -> str | None:
        """The control sequence a definition names: ``\\x`` or ``{\\x}``."""
        tok = self._take_nonspace()
        if tok == "{":
            inner = [t for t in (self._group() or []) if not t.isspace() and t[0] != SKIPPED]
            return inner[0] if len(inner) == 1 and inner[0][0] == "\\" else None
        return tok if tok is not None and (tok[0] == "\\" or tok == "~") else None

    def _h_def(self, tok: str) -> None:
        mark = len(self.taken)
        name = self._name()
        params: list[list[str]] = [[]]
        while name is not None:
            t = self._take_char()
            if t is None or t[0] == PAR:
                name = None
            elif t == "{":
                break
            elif t == "#":
                d = self._take_char()
                if d is None or not d.isdigit() or int(d) != len(params):
                    name = None
                else:
                    params.append([])
            elif t[0] != SKIPPED:
                params[-1].append(t)
        body = self._group() if name is not None else None
        if name is None or body is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        if tok in ("\\edef", "\\xdef"):
            body = self.expand_fully(body)
        macro = _body(body)
        macro.nargs = len(params) - 1
        if macro.nargs or params[0]:
            macro.params = params
        self._define(name, macro, global_=tok in ("\\gdef", "\\xdef"))
        self._defined()

    def _h_newcommand(self, tok: str) -> None:
        mark = len(self.taken)
        star = self._take_nonspace()
        if star is not None and star.startswith("*"):
            if len(star) > 1:
                self._untake(star[1:])
        elif star is not None:
            self._untake(star)
        name = self._name()
        nargs, default = 0, None
        if name is not None and tok != "\\DeclareMathOperator":
            n = self._optional()
            if n is not None:
                digits = detokenize(n)
                if digits.isdigit() and int(digits) <= 9:
                    nargs = int(digits)
                    default = self._optional()
                else:
                    name = None
        body = self._argument() if name is not None else None
        if name is None or body is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        self._defined()
        if tok in ("\\providecommand", "\\providerobustcmd") and name in self.meanings:
            return
        macro = _body(body)
        macro.nargs = nargs
        if default is not None:
            macro.default = default
        self._define(name, macro)

    def _h_xparse(self, tok: str) -> None:
        mark = len(self.taken)
        name = self._name()
        spec_tokens = self._argument() if name is not None else None
        spec = parse_spec(detokenize(spec_tokens)) if spec_tokens is not None else None
        body = self._argument() if spec is not None else None
        if name is None or spec is None or body is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        self._defined()
        if "Provide" in tok and name in self.meanings:
            return
        macro = _body(body)
        macro.spec, macro.nargs = spec, len(spec)
        self._define(name, macro)

    def _h_paired(self, tok: str) -> None:
        """mathtools' ``\\DeclarePairedDelimiter{\\abs}{\\lvert}{\\rvert}``: ``\\abs*[\\big]{x}``."""
        mark = len(self.taken)
        name = self._name()
        left = self._argument() if name is not None else None
        right = self._argument() if left is not None else None
        if name is None or right is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        self._defined()
        self._define(
            name,
            Macro([*left, PARAM + "3", *right], 3, spec=[("s", ""), ("o", ""), ("m", "")], substitute=True),
        )

    def _h_let(self, tok: str) -> None:
        mark = len(self.taken)
        name = self._name()
        target = None
        if name is not None:
            target = self._take_char()
            while target is not None and (target == " " or target[0] == SKIPPED):
                target = self._take_char()
            if target == "=":
                target = self._take_char()
                if target is not None and (target == " " or target[0] == SKIPPED):
                    target = self._take_char()
        if name is None or target is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        self._defined()
        if target == name:
            return
        meaning = self.meanings.get(target) if target[0] == "\\" else None
        self._define(name, meaning if meaning is not None else ("let", target))

    def _h_prefix(self, tok: str) -> None:
        if tok == "\\global":
            self.global_next = True
        self._skip_blank()

    def _h_stored(self, tok: str) -> None:
        """``\\newenvironment`` and the like: code kept for later, not run now, and no text where
        it stands (the later stages read environment definitions as written, from ``stored``);
        ``\\DeclareOption`` code runs only when the option is given, so not here; a
        ``\\newcolumntype`` is code for tables, no text."""
        mark = len(self.taken)
        parts = [tok]
        star = self._take_nonspace()
        if star is not None and star.startswith("*"):
            parts.append("*")
            if len(star) > 1:
                self._untake(star[1:])
        elif star is not None:
            self._untake(star)
        document = "Document" in tok
        dropped = tok in ("\\DeclareOption", "\\newcolumntype", "\\renewcolumntype")
        count = 4 if document else 2 if dropped else 3
        args: list[list[str]] = []
        options: list[list[str]] = []
        for k in range(count):
            if k == 1 and not document and tok != "\\DeclareOption":
                for _ in range(2):
                    opt = self._optional()
                    if opt is not None:
                        options.append(opt)
                        parts += ["[", *opt, "]"]
            arg = self._argument()
            if arg is None:
                self._rollback(mark)
                self._emit(tok)
                return
            args.append(arg)
            parts += ["{", *arg, "}"]
            if tok == "\\DeclareOption" and parts[1:2] == ["*"]:
                break
        del self.taken[mark:]
        if not dropped and not self.in_package:
            self.stored.append(text_of(parts))  # read by environments.user_environments
            if not document:
                self._environment(args, options)
        self._defined()

    def _environment(self, args: list[list[str]], options: list[list[str]]) -> None:
        """``\\newenvironment{name}[n][default]{begin}{end}`` of the paper: ``\\begin{name}``
        expands to its begin code (arguments read after it) and ``\\end{name}`` to its end code,
        as LaTeX's ``\\name`` and ``\\endname``; not for environments the parser reads by name."""
        name = detokenize(args[0])
        nargs = detokenize(options[0]) if options else "0"
        if not name or name in INTERPRETED_ENVS or not nargs.isdigit() or int(nargs) > 9:
            return
        begin, end = _body(args[1]), _body(args[2])
        begin.nargs = int(nargs)
        if len(options) > 1:
            begin.default = options[1]
        self._define("\\begin{" + name + "}", begin)
        self._define("\\end{" + name + "}", end)

    def _h_algdef(self, tok: str) -> None:
        """algpseudocode's ``\\algdef{SE}[DOWHILE]{Do}{doWhile}{\\algorithmicdo}[1]{...}``: a block's
        commands defined for ``algorithmic`` (no text where the definition stands)."""
        mark = len(self.taken)
        flags = self._argument()
        count = sum(1 for c in detokenize(flags) if c in "SEC") if flags is not None else 0
        self._optional()
        ok = flags is not None and all(self._argument() is not None for _ in range(count))
        for _ in range(count if ok else 0):
            self._optional()
            self._optional()
            ok = ok and self._argument() is not None
        if not ok:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        self._defined()

    def _h_raw(self, tok: str) -> None:
        """A command whose first arguments are code, not text (a column spec ``>{$}c<{$}``):
        written as they are, never run."""
        self._emit(tok)
        self.raw_arguments(RAW_ARGUMENTS[tok])

    def raw_arguments(self, spec: str) -> None:
        """Arguments by ``spec`` (``o`` optional, ``m`` mandatory) copied to the text unread."""
        for kind in spec:
            mark = len(self.taken)
            arg = self._optional() if kind == "o" else self._argument()
            del self.taken[mark:]
            if arg is None:
                if kind == "o":
                    continue
                return
            if not self.discard:
                self.out.extend(["[", *arg, "]"] if kind == "o" else ["{", *arg, "}"])
                self.last_cw = False

    def _h_csname(self, tok: str) -> None:
        name = self.csname()
        if name is None:
            self._emit(tok)
        else:
            self._push(["\\" + name])

    def _h_expandafter(self, tok: str) -> None:
        first = self._take()
        second = self._take()
        if first is None or second is None:
            if second is None and first is not None:
                self._untake(first)
            self._emit(tok)
            return
        self.expand_once(second)
        self._push([first])

    def expand_once(self, tok: str) -> None:
        """``tok`` expanded one level onto the input (``\\expandafter``); kept when it is no macro."""
        m = self.meanings.get(tok) if tok[0] == "\\" else None
        if type(m) is Macro:
            if not self._expand(tok, m):
                self._push([tok])
        elif m in ("csname", "expandafter") or (type(m) is str and m.startswith("if:")):
            self._handlers[m](tok)  # type: ignore[index]
        else:
            self._push([tok])

    def _h_noexpand(self, tok: str) -> None:
        nxt = self._take()
        if nxt is not None:
            self._emit(nxt)

    def _h_string(self, tok: str) -> None:
        """``\\string\\x``: the name as characters, never the command run."""
        nxt = self._take_char()
        if nxt is not None:
            self._emit("\\textbackslash{}" + nxt[1:] if nxt[0] == "\\" and len(nxt) > 1 else nxt)

    def _h_relax(self, tok: str) -> None:
        self._emit(tok)

    def _h_detokenize(self, tok: str) -> None:
        """e-TeX's ``\\detokenize{...}`` (expandable): its tokens as characters (the test
        ``\\if\\relax\\detokenize{#1}\\relax`` asks whether an argument is empty)."""
        mark = len(self.taken)
        nxt = self._take_nonspace()
        group = self._group() if nxt == "{" else None
        if group is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        text = detokenize(group)
        if text:
            self._push([text] if text[0] != "\\" else ["\\textbackslash{}", text[1:]])

    def _h_strcmp(self, tok: str) -> None:
        """pdfTeX's ``\\pdfstrcmp{a}{b}`` (expandable): -1, 0 or 1 as the expanded strings compare."""
        mark = len(self.taken)
        a = self._argument()
        b = self._argument() if a is not None else None
        if b is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        x, y = detokenize(self.expand_fully(a)), detokenize(self.expand_fully(b))  # type: ignore[arg-type]
        self._push(["0" if x == y else "-1" if x < y else "1"])

    def _h_ifnextchar(self, tok: str) -> None:
        mark = len(self.taken)
        char = self._take_char()
        yes = self._argument() if char is not None else None
        no = self._argument() if yes is not None else None
        if no is None:
            self._rollback(mark)
            self._emit(tok)
            return
        spaces = len(self.taken)
        nxt = self._take_nonspace()
        if nxt is not None:
            self._untake(nxt)
        if self.mode != 0:  # in math the blanks it skips part symbols in the text (TeX ignores them)
            self._rollback(spaces)
        del self.taken[mark:]
        char = _LET_TO_CHAR.get(char, char)  # type: ignore[arg-type]
        self._push(yes if nxt is not None and nxt.startswith(char) else no)  # type: ignore[arg-type]

    def _h_ifstar(self, tok: str) -> None:
        mark = len(self.taken)
        yes = self._argument()
        no = self._argument() if yes is not None else None
        if no is None:
            self._rollback(mark)
            self._emit(tok)
            return
        nxt = self._take_nonspace()
        if nxt is not None and nxt.startswith("*"):
            if len(nxt) > 1:
                self._untake(nxt[1:])
            del self.taken[mark:]
            self._push(yes)  # type: ignore[arg-type]
        else:
            if nxt is not None:
                self._untake(nxt)
            del self.taken[mark:]
            self._push(no)

    def _h_usepackage(self, tok: str) -> None:
        mark = len(self.taken)
        self._optional()
        names = self._argument()
        self._rollback(mark)
        self._emit(tok)
        if names is not None:
            self.packages.update(n.strip() for n in detokenize(names).split(","))

    def _h_documentclass(self, tok: str) -> None:
        mark = len(self.taken)
        self._optional()
        name = self._argument()
        self._rollback(mark)
        self._emit(tok)
        if name is not None:
            self.document_class = detokenize(name)
