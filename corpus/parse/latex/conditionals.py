"""Conditionals as TeX counts and decides them, and the tests packages build on them.

TeX's ``\\if...`` / ``\\else`` / ``\\or`` / ``\\fi`` are counted as TeX counts them: a false branch
is skipped to its own ``\\else`` or ``\\fi`` whatever the braces, each conditional inside it
counted (``\\iffalse ... \\iffalse ... \\fi ... \\fi`` is one block; the paper's ``\\newif``
switches, ``\\let`` copies of ``\\iftrue`` and a package's unknown ``\\ifsomething`` too). A test
is decided where its arguments are known (``\\iftrue``, ``\\if00``, ``\\ifx\\a\\b`` on the paper's
macros, ``\\ifnum`` on numbers, ``\\ifdefined``, ``\\ifmmode``, switches set by ``\\Xtrue``);
one that is not (``\\ifpdf``, ``\\ifdim``) is kept as it is written, branches and all.

The tests of ifthen (``\\ifthenelse{\\boolean{x}}``, ``\\equal``), etoolbox (``\\ifstrequal``,
``\\iftoggle``, ``\\ifbool``, ``\\ifdef``, ``\\ifnumcomp``), xstring (``\\IfStrEq``), xparse
(``\\IfBooleanTF``, ``\\IfNoValueTF``) and LaTeX's ``\\@ifundefined``/``\\@ifpackageloaded``
expand to the branch they take.
"""

from __future__ import annotations

import re

from corpus.parse.latex.tokens import NO_VALUE, PAR, SKIPPED, detokenize, is_space

CONDITIONAL_BUILTINS: dict[str, str] = {
    "\\iftrue": "if:true",
    "\\iffalse": "if:false",
    "\\if": "if:char",
    "\\ifcat": "if:unknown",
    "\\ifx": "if:x",
    "\\ifnum": "if:num",
    "\\ifdim": "if:unknown",
    "\\ifodd": "if:odd",
    "\\ifcase": "if:case",
    "\\ifdefined": "if:defined",
    "\\ifcsname": "if:csname",
    "\\ifmmode": "if:mmode",
    **dict.fromkeys(
        "\\ifvmode \\ifhmode \\ifinner \\ifvoid \\ifhbox \\ifvbox \\ifeof \\ifincsname".split(), "if:unknown"
    ),
    "\\else": "else",
    "\\fi": "fi",
    "\\or": "or",
    "\\ifthenelse": "ifthenelse",
    "\\iftoggle": "iftoggle",
    "\\nottoggle": "iftoggle",
    "\\ifbool": "ifbool",
    "\\notbool": "ifbool",
    "\\ifstrequal": "ifstrequal",
    "\\ifstrempty": "ifblank",
    "\\ifblank": "ifblank",
    **dict.fromkeys("\\ifdef \\ifundef \\ifcsdef \\ifcsundef \\@ifundefined".split(), "ifdef"),
    "\\ifdefempty": "ifdefempty",
    "\\ifdefstring": "ifdefstring",
    **dict.fromkeys("\\ifnumcomp \\ifnumequal \\ifnumgreater \\ifnumless \\ifnumodd".split(), "ifnumcomp"),
    "\\IfStrEq": "ifstreq",
    **dict.fromkeys("\\IfBooleanTF \\IfBooleanT \\IfBooleanF".split(), "ifboolean"),
    **dict.fromkeys(
        "\\IfNoValueTF \\IfNoValueT \\IfNoValueF \\IfValueTF \\IfValueT \\IfValueF".split(), "ifboolean"
    ),
    **dict.fromkeys("\\@ifpackageloaded \\IfPackageLoadedTF".split(), "ifpackage"),
    "\\@ifclassloaded": "ifpackage",
    "\\newif": "newif",
    **dict.fromkeys("\\newboolean \\provideboolean \\newbool \\providebool".split(), "newbool"),
    **dict.fromkeys("\\setboolean \\setbool".split(), "setbool"),
    **dict.fromkeys("\\booltrue \\boolfalse".split(), "setbool"),
    **dict.fromkeys("\\newtoggle \\providetoggle".split(), "newtoggle"),
    **dict.fromkeys("\\settoggle \\toggletrue \\togglefalse".split(), "settoggle"),
}
# \if... names that are macros, not conditionals TeX counts: etoolbox's, biblatex's, the \iff symbol
NOT_CONDITIONALS = frozenset(
    """iff ifthenelse ifdefvoid ifdefparam ifdefprefix ifdefprotected ifdefltxprotect ifdefcounter
    ifdeflength ifdefdimen ifdefmacro ifcsvoid ifcsmacro ifcsparam ifcsprefix ifcsprotected
    ifcsltxprotect ifcscounter ifcslength ifcsdimen ifltxcounter iflength ifboolexpr ifboolexpe
    ifpatchable ifpatchable* ifdimcomp ifdimequal ifdimgreater ifdimless ifrmnum ifinlist ifinlistcs
    ifdefstrequal ifcsstring ifcsstrequal ifstrmatch ifcsempty ifdefequal ifcsequal iffieldundef
    iffieldequals iffieldequalstr iffieldsequal iffieldint iffieldnum iffieldxref ifnameundef
    ifnameequals iflistundef iflistequals ifentrytype ifkeyword ifcategory ifentrycategory
    ifentrykeyword ifcurrentfield ifcurrentname ifcurrentlist ifnumerals ifpages ifuseauthor
    ifuseeditor ifusetranslator ifsingletitle ifuniquetitle ifandothers ifmorenames ifciteseen
    ifentryseen ifciteibid ifciteidem ifopcit ifloccit iffirstcitekey iflastcitekey ifcitation
    ifbibliography ifnatbibmode ifcapital iffootnote ifpunctmark ifbibstring ifbibxstring
    ifnextchar ifstar ifnum@ ifnumodd ifnumcomp ifcsdef ifcsundef ifdef ifundef""".split()
)
ALWAYS_UNDEFINED = frozenset({"\\undefined", "\\@undefined", "\\UnDeFiNeD"})
_NUMERIC_TEST = re.compile(r"\s*(-?\d+)\s*([<=>])\s*(-?\d+)\s*")


class Conditionals:
    """The conditional half of :class:`~corpus.parse.latex.expand.Expander` (its reading methods
    and state: ``meanings``, ``conds``, ``taken``, ``mode``)."""

    # ------------------------------------------------------------------ TeX's conditionals

    def is_conditional(self, name: str) -> bool:
        """Whether TeX counts ``name`` (not the paper's) as a conditional: an ``\\if`` name that is
        not one of the macros named like one."""
        return len(name) > 3 and name[1:] not in NOT_CONDITIONALS

    def unknown_conditional(self, tok: str) -> None:
        self._emit(tok)
        self.conds.append("U")

    def _kind(self, tok: str) -> str | None:
        """ "if", "else", "or", "fi" for the tokens a skipped branch counts, else None."""
        m = self.meanings.get(tok)
        if type(m) is tuple and m[0] == "let":
            tok, m = m[1], self.meanings.get(m[1])
        if m is None:
            return "if" if tok.startswith("\\if") and self.is_conditional(tok) else None
        if type(m) is str:
            if m.startswith("if:"):
                return "if"
            if m in ("else", "fi", "or"):
                return m
        return None

    def _skip(self, want_else: bool, case: int = -1) -> str | None:
        """Skip a branch TeX does not take, to its ``\\else`` (``want_else``), its ``case``-th
        ``\\or`` or its ``\\fi``; None (nothing skipped) when no ``\\fi`` ever comes."""
        mark = len(self.taken)
        depth = ors = 0
        while True:
            t = self._take()
            if t is None:
                self._rollback(mark)
                return None
            if t[0] != "\\":
                continue
            kind = self._kind(t)
            if kind is None:
                continue
            if kind == "if":
                depth += 1
            elif kind == "fi":
                if depth == 0:
                    del self.taken[mark:]
                    return "fi"
                depth -= 1
            elif depth == 0 and kind == "else" and want_else:
                del self.taken[mark:]
                return "else"
            elif depth == 0 and kind == "or" and case > 0:
                ors += 1
                if ors == case:
                    del self.taken[mark:]
                    return "or"

    def _h_conditional(self, tok: str) -> None:
        kind = self.meanings.get(tok)
        if type(kind) is tuple:
            kind = self.meanings.get(kind[1])
        mark = len(self.taken)
        self.cond_at = self.pos
        if kind == "if:case":
            n = self._number()
            if n is None:
                self._undecided(tok, mark)
            elif n == 0:
                del self.taken[mark:]
                self.conds.append("C")
            else:
                del self.taken[mark:]
                end = self._skip(want_else=True, case=n)
                if end is None:
                    self._incomplete(tok)
                elif end != "fi":
                    self.conds.append("C" if end == "or" else "T")
            return
        result = self._test(kind)  # type: ignore[arg-type]
        if result is None:
            self._undecided(tok, mark)
            return
        del self.taken[mark:]
        if result:
            self.conds.append("T")
            return
        end = self._skip(want_else=True)
        if end is None:
            self._incomplete(tok)
        elif end == "else":
            self.conds.append("T")

    def _undecided(self, tok: str, mark: int) -> None:
        """A test that cannot be decided: kept as written, what it read read again (a
        conditional in its number, ``\\ifnum 0\\ifxetex 1\\fi=0``, is counted)."""
        self._rollback(mark)
        self._emit(tok)
        self.conds.append("U")

    def _incomplete(self, tok: str) -> None:
        self._warn(
            f"unclosed_conditional: {tok} on line {{line}} never closed by \\fi; its text kept", self.cond_at
        )
        self._emit(tok)
        self.conds.append("U")

    def _h_else(self, tok: str) -> None:
        self._end_branch(tok, "else")

    def _h_or(self, tok: str) -> None:
        self._end_branch(tok, "or")

    def _end_branch(self, tok: str, kind: str) -> None:
        if not self.conds:
            self._warn(f"extra_conditional: Extra {tok} on line {self._line()} ignored")
            return
        top = self.conds[-1]
        if top == "U":
            self._emit(tok)
            return
        if kind == "or" and top != "C":
            self._warn(f"extra_conditional: Extra \\or on line {self._line()} ignored")
            return
        self.conds.pop()
        if self._skip(want_else=False) is None:
            self._warn(f"unclosed_conditional: no \\fi after the {tok} on line {self._line()}")

    def _h_fi(self, tok: str) -> None:
        if not self.conds:
            self._warn(f"extra_conditional: Extra \\fi on line {self._line()} ignored")
            return
        if self.conds.pop() == "U":
            self._emit(tok)

    def _test(self, kind: str) -> bool | None:
        if kind == "if:true":
            return True
        if kind == "if:false":
            return False
        if kind == "if:mmode":
            return self.mode != 0
        if kind == "if:char":  # character codes; two commands that do not expand are equal
            a, b = self._char_code(self._expanded_char()), self._char_code(self._expanded_char())
            return None if a is None or b is None else a == b
        if kind == "if:x":
            a, b = self._take_char(), self._take_char()
            if a is None or b is None:
                return None
            return self._same_meaning(a, b)
        if kind in ("if:num", "if:odd"):
            a = self._number()
            if kind == "if:odd" or a is None:
                return None if a is None else a % 2 == 1
            rel = self._expanded_char()
            while rel == " ":
                rel = self._expanded_char()
            b = self._number() if rel in ("<", "=", ">") else None
            if b is None:
                return None
            return a < b if rel == "<" else a == b if rel == "=" else a > b
        if kind == "if:defined":
            t = self._take_char()
            return None if t is None else self._is_defined(t)
        if kind == "if:csname":
            name = self.csname()
            return None if name is None else self._is_defined("\\" + name)
        return None

    def _char_code(self, tok: str | None) -> str | None:
        """What ``\\if`` compares: a character, "" for a command known not to expand, None for
        one only TeX knows."""
        if tok is None or tok[0] != "\\":
            return tok
        return "" if type(self.meanings.get(tok)) is str else None

    def _is_defined(self, tok: str) -> bool | None:
        if tok in self.meanings:
            return True
        return False if tok in ALWAYS_UNDEFINED else None

    def _same_meaning(self, a: str, b: str) -> bool | None:
        if a == b:
            return True
        ka, kb = self._meaning_key(a), self._meaning_key(b)
        if ka[0] == "unknown" or kb[0] == "unknown":
            if ka[0] == "unknown" and kb[0] == "unknown":
                return None
            other, name = (kb, ka[1]) if ka[0] == "unknown" else (ka, kb[1])
            return True if other == ("prim", name) else None
        return ka == kb

    def _meaning_key(self, tok: str) -> tuple:
        if tok[0] != "\\":
            return ("char", tok)
        m = self.meanings.get(tok)
        if m is None:
            return ("undefined",) if tok in ALWAYS_UNDEFINED else ("unknown", tok)
        if type(m) is tuple:
            if m[0] == "let":
                target = m[1]
                if target[0] != "\\":
                    return ("char", target)
                inner = self.meanings.get(target)
                return ("prim", target) if inner is None else self._meaning_key(target)
            return ("prim", m)
        if type(m) is str:
            return ("prim", m)
        return (  # a macro: its parameters and body
            "macro",
            m.nargs,
            tuple(m.body),
            tuple(tuple(p) for p in m.params or ()),
            tuple(m.default) if m.default is not None else None,
        )

    def _expanded_char(self) -> str | None:
        """The next token after expansion, one character of a run at a time (what is expanded
        leaves the log: a rollback reads its expansion again, as TeX would)."""
        for _ in range(10_000):
            mark = len(self.taken)
            t = self._take_char()
            if t is None or t[0] != "\\":
                return t
            m = self.meanings.get(t)
            if type(m) is tuple and m[0] == "let" and m[1][0] != "\\":
                return m[1]
            if type(m).__name__ == "Macro":
                if not self._expand(t, m):
                    return t
            elif m in ("strcmp", "csname", "expandafter", "detokenize"):
                self._handlers[m](t)
            else:
                return t
            del self.taken[mark:]
        return None

    def _number(self) -> int | None:
        """A TeX number written out (signs, digits, one optional space after), else None."""
        sign = 1
        c = self._expanded_char()
        while c is not None and c in " +-":
            if c == "-":
                sign = -sign
            c = self._expanded_char()
        if c is None or not c.isdigit():
            return None
        digits = c
        while True:
            c = self._expanded_char()
            if c is None:
                break
            if not c.isdigit():
                if c != " ":
                    self._untake(c)
                break
            digits += c
        return sign * int(digits)

    # ------------------------------------------------------------------ the packages' tests

    def _branches(
        self, tok: str, before: int, count: int = 2
    ) -> tuple[list[list[str]], list[list[str]]] | None:
        """``before`` test arguments and ``count`` branches read, or None (all put back)."""
        mark = len(self.taken)
        args: list[list[str]] = []
        for _ in range(before + count):
            arg = self._argument()
            if arg is None:
                self._rollback(mark)
                return None
            args.append(arg)
        self._mark = mark
        return args[:before], args[before:]

    def _take_branch(self, tok: str, branches: list[list[str]], holds: bool | None) -> None:
        if holds is None:  # not decidable here: kept as written
            self._rollback(self._mark)
            self._emit(tok)
            return
        del self.taken[self._mark :]
        yes, no = (branches + [[], []])[:2]
        self._push(yes if holds else no)

    def _h_ifthenelse(self, tok: str) -> None:
        got = self._branches(tok, 1)
        if got is None:
            self._emit(tok)
            return
        (test,), branches = got
        self._take_branch(tok, branches, self._ifthen([t for t in test if not is_space(t)]))

    def _ifthen(self, test: list[str]) -> bool:
        """An ifthen test: ``\\boolean{x}``, ``\\equal{a}{b}``, ``\\isundefined``, ``\\isodd``,
        numbers compared, with ``\\NOT``, ``\\AND``, ``\\OR`` (left to right) and ``\\( \\)``;
        what cannot be decided is false (LaTeX would stop)."""
        value: bool | None = None
        negate, join = False, ""
        i = 0

        def group() -> list[str]:
            nonlocal i
            if i < len(test) and test[i] == "{":
                depth, start = 0, i
                while i < len(test):
                    depth += (test[i] == "{") - (test[i] == "}")
                    i += 1
                    if depth == 0:
                        return test[start + 1 : i - 1]
            elif i < len(test):
                i += 1
                return [test[i - 1]]
            return []

        while i < len(test):
            t = test[i]
            i += 1
            if t == "\\NOT":
                negate = not negate
                continue
            if t in ("\\AND", "\\OR"):
                join = t
                continue
            if t == "\\boolean":
                result = self._bool(detokenize(group()))
            elif t == "\\equal":
                a, b = group(), group()
                result = detokenize(self.expand_fully(a)) == detokenize(self.expand_fully(b))
            elif t == "\\isundefined":
                result = not any(x in self.meanings for x in group())
            elif t == "\\isodd":
                n = detokenize(self.expand_fully(group()))
                result = n.lstrip("-").isdigit() and int(n) % 2 == 1
            elif t == "\\(":
                depth, start = 1, i
                while i < len(test) and depth:
                    depth += (test[i] == "\\(") - (test[i] == "\\)")
                    i += 1
                result = self._ifthen(test[start : i - 1])
            else:  # a comparison of numbers: up to the next \AND / \OR
                start = i - 1
                while i < len(test) and test[i] not in ("\\AND", "\\OR", "\\NOT"):
                    i += 1
                m = _NUMERIC_TEST.fullmatch(detokenize(self.expand_fully(test[start:i])))
                result = bool(m) and _compare(int(m.group(1)), m.group(2), int(m.group(3)))  # type: ignore[union-attr]
            result = result != negate
            negate = False
            value = result if value is None else (value and result if join == "\\AND" else value or result)
        return bool(value)

    def _bool(self, name: str) -> bool:
        """An ifthen / etoolbox boolean (a ``\\newif`` switch): false until set."""
        return self.meanings.get("\\if" + name.strip()) == "if:true"

    def _h_iftoggle(self, tok: str) -> None:
        got = self._branches(tok, 1)
        if got is None:
            self._emit(tok)
            return
        (name,), branches = got
        holds = self.toggles.get(detokenize(name), False)
        self._take_branch(tok, branches, holds != (tok == "\\nottoggle"))

    def _h_ifbool(self, tok: str) -> None:
        got = self._branches(tok, 1)
        if got is None:
            self._emit(tok)
            return
        (name,), branches = got
        self._take_branch(tok, branches, self._bool(detokenize(name)) != (tok == "\\notbool"))

    def _h_ifstrequal(self, tok: str) -> None:
        got = self._branches(tok, 2)
        if got is None:
            self._emit(tok)
            return
        (a, b), branches = got
        self._take_branch(tok, branches, detokenize(a) == detokenize(b))

    def _h_ifblank(self, tok: str) -> None:
        got = self._branches(tok, 1)
        if got is None:
            self._emit(tok)
            return
        (a,), branches = got
        self._take_branch(tok, branches, detokenize(a) == "")

    def _h_ifdef(self, tok: str) -> None:
        got = self._branches(tok, 1)
        if got is None:
            self._emit(tok)
            return
        (arg,), branches = got
        name = detokenize(arg)
        cs = name if tok in ("\\ifdef", "\\ifundef") else "\\" + name
        defined = self._is_defined(cs)
        if defined is not None and tok in ("\\ifundef", "\\ifcsundef", "\\@ifundefined"):
            defined = not defined
        self._take_branch(tok, branches, defined)

    def _h_ifdefempty(self, tok: str) -> None:
        got = self._branches(tok, 1)
        if got is None:
            self._emit(tok)
            return
        (arg,), branches = got
        m = self.meanings.get(detokenize(arg))
        body = getattr(m, "body", None)
        self._take_branch(tok, branches, None if body is None else detokenize(body) == "")

    def _h_ifdefstring(self, tok: str) -> None:
        got = self._branches(tok, 2)
        if got is None:
            self._emit(tok)
            return
        (arg, value), branches = got
        body = getattr(self.meanings.get(detokenize(arg)), "body", None)
        self._take_branch(tok, branches, None if body is None else detokenize(body) == detokenize(value))

    def _h_ifnumcomp(self, tok: str) -> None:
        before = {"\\ifnumcomp": 3, "\\ifnumodd": 1}.get(tok, 2)
        got = self._branches(tok, before)
        if got is None:
            self._emit(tok)
            return
        args, branches = got
        nums = [detokenize(self.expand_fully(a)) for a in args]
        if tok == "\\ifnumcomp":
            nums, rel = [nums[0], nums[2]], nums[1]
        else:
            rel = {"\\ifnumequal": "=", "\\ifnumgreater": ">", "\\ifnumless": "<"}.get(tok, "")
        holds = None
        if all(n.lstrip("-").isdigit() for n in nums):
            values = [int(n) for n in nums]
            holds = values[0] % 2 == 1 if tok == "\\ifnumodd" else _compare(values[0], rel, values[1])
        self._take_branch(tok, branches, holds)

    def _h_ifstreq(self, tok: str) -> None:
        star = self._take_nonspace()
        if star is not None and star.startswith("*"):
            if len(star) > 1:
                self._untake(star[1:])
        elif star is not None:
            self._untake(star)
            star = None
        got = self._branches(tok, 2)
        if got is None:
            self._emit(tok)
            return
        (a, b), branches = got
        if not star:
            a, b = self.expand_fully(a), self.expand_fully(b)
        self._take_branch(tok, branches, detokenize(a) == detokenize(b))

    def _h_ifboolean(self, tok: str) -> None:
        """xparse's ``\\IfBooleanTF{#1}``, ``\\IfNoValueT{#2}``, ``\\IfValueF``..."""
        which = "TF" if tok.endswith("TF") else tok[-1]
        got = self._branches(tok, 1, len(which))
        if got is None:
            self._emit(tok)
            return
        (value,), branches = got
        value = [t for t in value if not is_space(t)]
        if tok.startswith("\\IfBoolean"):
            holds = value == ["\\BooleanTrue"]
        else:
            holds = (value == [NO_VALUE]) == tok.startswith("\\IfNoValue")
        if which == "F":
            branches = [[], branches[0]]
        self._take_branch(tok, branches, holds)

    def _h_ifpackage(self, tok: str) -> None:
        got = self._branches(tok, 1)
        if got is None:
            self._emit(tok)
            return
        (name,), branches = got
        if tok == "\\@ifclassloaded":
            holds = detokenize(name) == self.document_class
        else:
            holds = detokenize(name) in self.packages
        self._take_branch(tok, branches, holds)

    # ------------------------------------------------------------------ switches and booleans

    def _switch(self, name: str) -> None:
        """``\\newif\\ifX``: ``\\ifX`` false, ``\\Xtrue`` / ``\\Xfalse`` its setters."""
        self._define("\\if" + name, "if:false", global_=True)
        self._define("\\" + name + "true", ("setif", name, True), global_=True)
        self._define("\\" + name + "false", ("setif", name, False), global_=True)

    def _h_newif(self, tok: str) -> None:
        mark = len(self.taken)
        name = self._name()
        if name is None or not name.startswith("\\if") or len(name) < 4:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        self._switch(name[3:])
        self._defined()

    def _h_newbool(self, tok: str) -> None:
        mark = len(self.taken)
        arg = self._argument()
        if arg is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        name = detokenize(arg)
        if not (tok.startswith("\\provide") and "\\if" + name in self.meanings):
            self._switch(name)
        self._defined()

    def _h_setbool(self, tok: str) -> None:
        mark = len(self.taken)
        arg = self._argument()
        value = ["true" if tok == "\\booltrue" else "false"] if tok in ("\\booltrue", "\\boolfalse") else None
        if value is None and arg is not None:
            value = self._argument()
        if arg is None or value is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        truth = detokenize(value).lower() == "true"
        self._define("\\if" + detokenize(arg), "if:true" if truth else "if:false", global_=True)
        self._defined()

    def _h_newtoggle(self, tok: str) -> None:
        mark = len(self.taken)
        arg = self._argument()
        if arg is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        self.toggles.setdefault(detokenize(arg), False)
        self._defined()

    def _h_settoggle(self, tok: str) -> None:
        mark = len(self.taken)
        arg = self._argument()
        value: list[str] | None = [tok[7:]] if tok != "\\settoggle" else None
        if value is None and arg is not None:
            value = self._argument()
        if arg is None or value is None:
            self._rollback(mark)
            self._emit(tok)
            return
        del self.taken[mark:]
        self.toggles[detokenize(arg)] = detokenize(value).lower() == "true"
        self._defined()


def _compare(a: int, rel: str, b: int) -> bool:
    return a < b if rel == "<" else a > b if rel == ">" else a == b


__all__ = ["ALWAYS_UNDEFINED", "CONDITIONAL_BUILTINS", "NOT_CONDITIONALS", "PAR", "SKIPPED", "Conditionals"]
