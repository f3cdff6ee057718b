"""A run of body LaTeX -> paragraphs: split at blank lines, ``\\par``, ``\\item`` and
environment boundaries (never at single line breaks, the cause of S2ORC's 93 "paragraphs"
per LaTeX paper); in each, cite and ref commands become spans, footnotes paragraphs of
their own, commands whose arguments are no text are dropped, and the text between is
converted by :func:`corpus.parse.latex.text.latex_to_text`."""

from __future__ import annotations

import re
from collections.abc import Callable

from corpus.parse.document import Paragraph
from corpus.parse.latex.braces import LatexError, control_words, read_group, read_optional
from corpus.parse.latex.cites import CITE_CMDS, cite_keys, emit_cites
from corpus.parse.latex.commands import ARGUMENTS, environment_arguments, strip_arguments
from corpus.parse.latex.environments import MATH_ONLY_ENVS
from corpus.parse.latex.refs import LIST_REFS, OWN_REFS, REF_CMDS, emit_refs
from corpus.parse.latex.spans import Builder, Context
from corpus.parse.latex.text import latex_to_text

_FOOTNOTE_CMDS = frozenset({"footnote", "footnotetext"})
_HANDLED_RE = re.compile(
    r"\\(" + control_words(CITE_CMDS | REF_CMDS | _FOOTNOTE_CMDS) + r")(?![A-Za-z])(\*?)"
)
# commands the parser reads itself: an e-print's .sty must not redefine them
INTERPRETED = CITE_CMDS | OWN_REFS | _FOOTNOTE_CMDS | {k for k in ARGUMENTS if not k.startswith("{")}
_PARBREAK_RE = re.compile(r"\n[ \t]*\n\s*")
_ITEM_RE = re.compile(r"\\item(?![A-Za-z])\s*(?:\[([^\]]*)\])?")
# every environment but those that live in math (what take_out left of them is inline math)
_ENV_TOKEN_RE = re.compile(r"\\(begin|end)\s*\{(?!(?:" + control_words(MATH_ONLY_ENVS) + r")\})([^{}]*)\}")
# a \begin whose arguments must be read: one in the table, or any with an argument
_ARGUMENT_ENV_RE = re.compile(
    r"\\begin\s*\{(?:"
    + control_words({k[1:-1] for k in ARGUMENTS if k.startswith("{")})
    + r")\}|\\begin\s*\{[^{}]*\}\s*[\[{]"
)
_PAR_RE = re.compile(r"\\par(?![A-Za-z])")


_MATH_SHIFT_RE = re.compile(r"\\[\\$]|\$|\\[()]")  # \\ and \$ read first: no shift
_CLOSE = {"$": "$", "\\(": "\\)"}


def _open_math(text: str, opened: str | None) -> tuple[str | None, int]:
    """The inline math left open at the end of ``text`` (``$`` or ``\\(``, from ``opened`` at its
    start) and where its opening shift begins (-1: before ``text``)."""
    at = -1
    for m in _MATH_SHIFT_RE.finditer(text):
        shift = m.group(0)
        if shift in ("\\\\", "\\$"):
            continue
        if shift == "$" and opened != "\\(":
            opened, at = (None, -1) if opened else ("$", m.start())
        elif shift == "\\(" and opened is None:
            opened, at = "\\(", m.start()
        elif shift == "\\)" and opened == "\\(":
            opened, at = None, -1
    return opened, at


class _Pieces:
    """The text between a paragraph's spans, converted piece by piece. A ``\\ref`` or ``\\cite``
    inside inline math (``$(\\ref{eq:a})$``) cuts the math: each piece is closed where it is cut
    and opened again after the span, so no math shift is left unpaired (else a ``$`` was printed
    and the next formula's shifts were paired across the prose between them)."""

    def __init__(self, b: Builder):
        self.b, self.opened = b, None

    def add(self, latex: str) -> None:
        opened = self.opened
        self.opened, at = _open_math(latex, opened)
        if self.opened:  # closed where the span cuts it, unless it opened right there
            if at >= 0 and not latex[at + len(self.opened) :].strip():
                latex = latex[:at]
            else:
                latex += _CLOSE[self.opened]
        if opened:  # opened again after the span, unless the math closes at once
            head, close = latex.lstrip(), _CLOSE[opened]
            latex = head[len(close) :] if head.startswith(close) else opened + latex
        self.b.add(latex_to_text(latex, stripped=True))


def convert(latex: str, ctx: Context, section: str = "", sec_num: str | None = None) -> Paragraph | None:
    """One paragraph's LaTeX -> a :class:`Paragraph` with its spans (None when it has no text)."""
    b = Builder(ctx.equations)
    pieces = _Pieces(b)
    pos = 0
    latex = strip_arguments(latex)
    for m in _HANDLED_RE.finditer(latex):
        if m.start() < pos:
            continue
        pieces.add(latex[pos : m.start()])
        cmd = m.group(1)
        end = m.end()
        try:
            if cmd in CITE_CMDS:
                groups, end = cite_keys(latex, end, cmd.endswith("cites"))
                emit_cites(b, cmd, groups, ctx)
            elif cmd in REF_CMDS:
                if cmd in ("crefrange", "Crefrange"):
                    a, end = read_group(latex, end)
                    c, end = read_group(latex, end)
                    emit_refs(b, "ref", [a or "", c or ""], ctx)
                else:  # only cleveref takes a list of labels: a comma may be part of a label
                    _, end = read_optional(latex, end)  # \zref[page]{label}, \zcref[S]{a,b}
                    arg, end = read_group(latex, end)
                    keys = (arg or "").split(",") if cmd in LIST_REFS else [arg or ""]
                    emit_refs(b, cmd, [x.strip() for x in keys if x.strip()], ctx)
            elif cmd in _FOOTNOTE_CMDS:  # one paragraph of its own, appended to the body (as Grobid does)
                _, end = read_optional(latex, end)
                content, end = read_group(latex, end)
                content = ctx.held_notes.pop(content, content) if content else content
                note = (
                    convert(_one_paragraph(content), ctx, "", None) if content and content.strip() else None
                )
                if note is not None:
                    ctx.footnotes.append(note)
        except LatexError:
            end = len(latex)  # an argument runs past the paragraph: drop the rest of it
        pos = end
    pieces.add(latex[pos:])
    para = b.paragraph(section, sec_num)
    if para is None:
        ctx.orphan_eqs += b.eqs  # a display equation alone: its paragraph anchors it
    elif ctx.orphan_eqs:
        for e in ctx.orphan_eqs:
            e.start = e.end = 0
        para.eq_spans[:0] = ctx.orphan_eqs
        ctx.orphan_eqs = []
    return para


def paragraphs(
    latex: str, ctx: Context, section: str, sec_num: str | None, drop: Callable[[str], bool] | None = None
) -> list[Paragraph]:
    """A run of body LaTeX -> its paragraphs, all in ``section``; a paragraph whose text ``drop``
    refuses is left out with its footnotes (front matter)."""
    latex = _hold_notes(latex, ctx)
    latex = _environment_breaks(latex)
    latex = _ITEM_RE.sub(lambda m: "\n\n" + (m.group(1) or "") + " ", latex)
    latex = _PAR_RE.sub("\n\n", latex)
    out = []
    for chunk in _PARBREAK_RE.split(latex):
        if chunk.strip():
            notes = len(ctx.footnotes)
            p = convert(chunk, ctx, section, sec_num)
            if p is not None and drop is not None and drop(p.text):
                del ctx.footnotes[notes:]
            elif p is not None:
                out.append(p)
            elif ctx.orphan_eqs and out:  # an equation standing alone ends the paragraph before it
                for e in ctx.orphan_eqs:
                    e.start = e.end = len(out[-1].text)
                out[-1].eq_spans.extend(ctx.orphan_eqs)
                ctx.orphan_eqs = []
    return out


def _environment_breaks(latex: str) -> str:
    """Every ``\\begin`` and ``\\end`` a paragraph break; an environment's arguments dropped
    but for those the table says are text (:func:`~corpus.parse.latex.commands.environment_arguments`)."""
    if "\\begin" not in latex and "\\end" not in latex:
        return latex
    if _ARGUMENT_ENV_RE.search(latex) is None:  # the common case: no argument to read, one C-level pass
        return _ENV_TOKEN_RE.sub("\n\n", latex)
    out, pos = [], 0
    for m in _ENV_TOKEN_RE.finditer(latex):
        if m.start() < pos:
            continue
        out.append(latex[pos : m.start()])
        out.append("\n\n")
        pos = m.end()
        if m.group(1) == "begin":
            kept, pos = environment_arguments(latex, pos, m.group(2).strip())
            out.append(kept)
    out.append(latex[pos:])
    return "".join(out)


def _one_paragraph(latex: str) -> str:
    """A note's LaTeX as one paragraph: a footnote is one unit of the text however many
    paragraphs, lists or quotations it holds (LaTeXML and Grobid count it so)."""
    latex = _environment_breaks(latex)
    latex = _ITEM_RE.sub(lambda m: " " + (m.group(1) or "") + " ", latex)
    return _PARBREAK_RE.sub(" ", _PAR_RE.sub(" ", latex))


_NOTE_RE = re.compile(r"\\(?:footnote|footnotetext)(?![A-Za-z])\*?")
_BREAKS_RE = re.compile(r"\\(?:begin|end|par|item)(?![A-Za-z])|\n[ \t]*\n")


def _hold_notes(latex: str, ctx: Context) -> str:
    """Footnote texts set aside (a key in their place) while the run is cut into paragraphs:
    an environment or a blank line inside a note belongs to the note, not to the text."""
    if "\\footnote" not in latex:
        return latex
    out, pos = [], 0
    for m in _NOTE_RE.finditer(latex):
        if m.start() < pos:
            continue
        _, i = read_optional(latex, m.end())
        try:
            content, end = read_group(latex, i)
        except LatexError:
            continue
        if content is None or not _BREAKS_RE.search(content):
            continue  # nothing in it would cut a paragraph
        key = f"\ue030{len(ctx.held_notes)}\ue031"
        ctx.held_notes[key] = content
        out.append(latex[pos:i] + "{" + key + "}")
        pos = end
    out.append(latex[pos:])
    return "".join(out)
