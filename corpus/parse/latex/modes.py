"""Groups and modes as TeX keeps them: ``{...}``, environments and ``\\begingroup`` are groups
(the paper's local definitions end with them); ``$``, ``$$``, ``\\(`` and ``\\[`` open math and
close it as TeX pairs them, and TeX's errors are recovered as TeX recovers (math still open at a
paragraph's end is closed there: "Missing $ inserted"); ``\\text{...}`` is text again inside
math. A font switch in math (``{\\rm NL}``, ``{\\cal H}``, ``{\\bf x}``) holds to the end of its
group, written as the math alphabet command the rest of the parser reads (``\\mathrm{NL}``).

Math is written in one form: ``$...$`` inline, ``displaymath`` displayed.
"""

from __future__ import annotations

from dataclasses import dataclass

from corpus.parse.latex.definitions import RAW_ENV_ARGUMENTS
from corpus.parse.latex.environments import MATH_ENVS
from corpus.parse.latex.tokens import ENV_END, SKIPPED

TEXT, INLINE, DISPLAY, ENV = 0, 1, 2, 3
_DISPLAY_ENVS = MATH_ENVS - frozenset(
    "array matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases aligned gathered split".split()
)
MATH_FONTS = {
    "\\rm": "mathrm", "\\bf": "mathbf", "\\it": "mathit", "\\cal": "mathcal", "\\sf": "mathsf",
    "\\tt": "mathtt", "\\mit": "mathit",
}  # fmt: skip
TEXT_ARGUMENT = (
    "text mbox hbox fbox textrm textbf textit textsf texttt textnormal textup textsl textsc textmd "
    "emph intertext shortintertext tag"
).split()


@dataclass(slots=True)
class Group:
    kind: str  # "{", "$", "$$", "env", "bg"
    mode: int  # the mode outside it
    name: str = ""
    at: int = 0  # where in the source it was opened (for warnings)
    font: str = ""  # the math alphabet a switch put in force in it (``mathrm``)
    wrapped: bool = False  # that alphabet's ``\mathrm{`` is open in the text
    saved: dict | None = None  # meanings its local assignments replaced


class Modes:
    """The group and mode half of :class:`~corpus.parse.latex.expand.Expander`."""

    def _open(self, kind: str, name: str = "", mode: int | None = None) -> None:
        """A group opened; in math a brace group inherits the alphabet in force, whose command
        is closed before it (the rest of the parser reads flat ``\\mathbf{...}`` only)."""
        parent = self.groups[-1] if self.groups else None
        group = Group(kind, self.mode, name, self.pos)
        self.groups.append(group)
        if mode is not None:
            self.mode = mode
        if parent is not None and parent.font and kind == "{":
            if parent.wrapped and not self.discard:
                self.out.append("}")
            parent.wrapped = False
            if self.mode != TEXT:
                group.font = parent.font

    def _resume_font(self) -> None:
        """The alphabet in force in the innermost group written again (after a group closed or
        opened in it)."""
        g = self.groups[-1] if self.groups else None
        if g is not None and g.font and not g.wrapped and self.mode != TEXT:
            self._emit("\\" + g.font + "{")
            self.last_cw = False
            g.wrapped = True

    def _pop(self) -> None:
        g = self.groups.pop()
        if g.wrapped and not self.discard:
            self.out.append("}")
        if g.saved:
            for name, meaning in g.saved.items():
                if meaning is None:
                    self.meanings.pop(name, None)
                else:
                    self.meanings[name] = meaning
        self.mode = g.mode

    def _close_brace(self, tok: str) -> None:
        groups = self.groups
        if groups and groups[-1].kind == "{" and not groups[-1].wrapped and not groups[-1].saved:
            self.mode = groups.pop().mode  # the common case: a plain group closes
            self._emit(tok)
            if groups and groups[-1].font:
                self._resume_font()
            return
        if not any(g.kind == "{" for g in groups):
            self._emit(tok)  # a } closing nothing (the text was balanced: it came from a macro)
            return
        while self.groups[-1].kind != "{":
            g = self.groups[-1]
            if g.kind in ("$", "$$"):
                self._warn(
                    f"unclosed_math: Extra }}, or forgotten $: math closed before the }} on line {self._line()}"
                )
                self._close_math()
            else:
                self._pop()
        self._pop()
        self._emit(tok)
        self._resume_font()

    def _math_shift(self) -> None:
        """``$``: math opened in text, closed in math; ``$$`` a display. A ``$`` inside a group
        of a formula (or anywhere in a display) is in a box TeX sets as text (``\\node{$x$}``,
        ``\\scalebox{.5}{$k$}``, else the paper would not compile): math inside it."""
        if self.mode == TEXT:
            nxt = self._peek()
            if nxt == "$":
                self._take()
                self._open("$$", mode=DISPLAY)
                self._emit("\\begin{displaymath}")
            else:
                self._open("$", mode=INLINE)
                self._emit("$")
            return
        top = next((g for g in reversed(self.groups) if g.kind != "bg"), None)  # \\bgroup: a macro's
        if top is not None and top.kind == "$$":
            if self._peek() == "$":
                self._take()
            else:
                self._warn(f"unclosed_math: Display math should end with $$ (line {self._line()})")
            self._close_math()
        elif top is not None and top.kind == "$":
            self._close_math()
        else:
            self._open("$", mode=INLINE)
            self._emit("$")

    def _math_group(self) -> Group | None:
        for g in reversed(self.groups):
            if g.kind in ("$", "$$"):
                return g
            if g.kind == "env" and g.mode == TEXT and g.name in _DISPLAY_ENVS:
                return None
        return None

    def _close_math(self) -> None:
        """Close the innermost math shift and the groups left open inside it."""
        while self.groups:
            g = self.groups[-1]
            self._pop()
            if g.kind == "$":
                self._emit("$")
                return
            if g.kind == "$$":
                self._emit("\\end{displaymath}")
                return
            if g.kind == "{" and not self.discard:
                self.out.append("}")

    def _h_math(self, tok: str) -> None:
        """``\\(`` ``\\)`` ``\\[`` ``\\]``: LaTeX's math delimiters, paired like ``$`` and ``$$``."""
        opening = tok in ("\\(", "\\[")
        top = next((g for g in reversed(self.groups) if g.kind != "bg"), None)
        if opening and self.mode != TEXT and top is not None and top.kind not in ("$", "$$"):
            self._open("$", mode=INLINE) if tok == "\\(" else self._open("$$", mode=DISPLAY)
            self._emit("$" if tok == "\\(" else "\\begin{displaymath}")  # in a box inside a formula
            return
        if opening and self.mode == TEXT:
            if tok == "\\(":
                self._open("$", mode=INLINE)
                self._emit("$")
            else:
                self._open("$$", mode=DISPLAY)
                self._emit("\\begin{displaymath}")
            return
        top = self._math_group() if not opening else None
        if top is not None and (top.kind == "$") == (tok == "\\)"):
            self._close_math()
            return
        self._warn(f"unclosed_math: Bad math environment delimiter {tok} on line {self._line()}")

    def _par(self, tok: str) -> None:
        if self.mode in (INLINE, DISPLAY):
            while (g := self._math_group()) is not None:
                self._warn(
                    "unclosed_math: math opened on line {line} never closed; closed where its paragraph "
                    "ends (Missing $ inserted)",
                    g.at,
                )
                self._close_math()
        if self.mode == ENV:
            self.mode = TEXT  # an equation left open: environments.py closes it at this paragraph
        self._emit(tok)

    def _h_par(self, tok: str) -> None:
        self._par(tok)

    def _h_bgroup(self, tok: str) -> None:
        self._open("bg")
        self._emit(tok)

    def _h_egroup(self, tok: str) -> None:
        if self.groups and self.groups[-1].kind == "bg":
            self._pop()
        self._emit(tok)

    def _env_name(self) -> list[str] | None:
        mark = len(self.taken)
        tok = self._take_nonspace()
        name = self._group() if tok == "{" else None
        if name is None:
            self._rollback(mark)
        else:
            del self.taken[mark:]
        return name

    def _h_begin(self, tok: str) -> None:
        name_tokens = self._env_name()
        if name_tokens is None:
            self._emit(tok)
            return
        name = "".join(name_tokens).replace(SKIPPED, "").strip()
        mode = None
        if self.mode == TEXT and name in _DISPLAY_ENVS:
            mode = ENV
        elif self.mode == TEXT and name == "math":
            mode = INLINE
        self._open("env", name, mode)
        code = self.meanings.get("\\begin{" + name + "}")  # the paper's environment: its begin code
        if code is not None and not self.discard and self._expand("\\begin{" + name + "}", code):  # type: ignore[arg-type]
            return
        self._emit("\\begin{" + name + "}")
        if name in RAW_ENV_ARGUMENTS:
            self.raw_arguments(RAW_ENV_ARGUMENTS[name])

    def _h_end(self, tok: str) -> None:
        name_tokens = self._env_name()
        if name_tokens is None:
            self._emit(tok)
            return
        name = "".join(name_tokens).replace(SKIPPED, "").strip()
        code = self.meanings.get("\\end{" + name + "}")
        if (
            code is not None
            and not self.discard
            and any(g.kind == "env" and g.name == name for g in self.groups)
        ):
            self.pending.append(ENV_END + name)  # the paper's environment: its end code, then its group ends
            if self._expand("\\end{" + name + "}", code):  # type: ignore[arg-type]
                return
            self.pending.pop()
        self.close_environment(name, emit=True)

    def close_environment(self, name: str, emit: bool) -> None:
        """``\\end{name}``: the groups opened in the environment closed with it (math left open
        closed with a warning), then ``\\end{name}`` written (``emit``)."""
        if any(g.kind == "env" and g.name == name for g in self.groups):
            while True:
                g = self.groups[-1]
                if g.kind in ("$", "$$"):
                    self._warn(
                        f"unclosed_math: Missing $ inserted before \\end{{{name}}} on line {self._line()}"
                    )
                    self._close_math()
                    continue
                self._pop()
                if g.kind == "env" and g.name == name:
                    break
        if emit:
            self._emit("\\end{" + name + "}")

    def _h_font(self, tok: str) -> None:
        """``{\\rm NL}``, ``{\\cal H}``, ``{\\bf x}`` in math: the switch holds to the end of its
        group, written as the math alphabet command the rest of the parser reads."""
        if self.mode == TEXT or not self.groups:
            self._emit(tok)
            return
        self._skip_blank()
        g = self.groups[-1]
        if g.wrapped and not self.discard:
            self.out.append("}")
        g.font, g.wrapped = MATH_FONTS[tok], False
        self._resume_font()

    def _h_textarg(self, tok: str) -> None:
        """``\\text{...}`` in math: its argument is text again (a ``$`` in it opens math)."""
        self._argument_mode(tok, TEXT)

    def _h_matharg(self, tok: str) -> None:
        self._argument_mode(tok, INLINE if self.mode == TEXT else self.mode)

    def _argument_mode(self, tok: str, mode: int) -> None:
        self._emit(tok)
        if mode == self.mode:
            return
        mark = len(self.taken)
        nxt = self._take_nonspace()
        if nxt == "{":
            self._open("{", mode=mode)
            self._emit("{")
        elif nxt is not None:
            self._untake(nxt)
        del self.taken[mark:]

    def _close_all(self) -> None:
        """The end of the text: math still open is closed (TeX: "Missing $ inserted")."""
        while self.groups:
            if self.groups[-1].kind in ("$", "$$"):
                self._warn("unclosed_math: Missing $ inserted: math never closed before the end of the text")
                self._close_math()
            else:
                self._pop()
        if self.conds and any(c != "U" for c in self.conds):
            self._warn(f"unclosed_conditional: {len(self.conds)} conditional(s) never closed by \\fi")
