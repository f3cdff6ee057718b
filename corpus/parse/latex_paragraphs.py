"""A run of body LaTeX -> paragraphs: split at blank lines, ``\\par``, ``\\item`` and
environment boundaries (never at single line breaks, the cause of S2ORC's 93 "paragraphs"
per LaTeX paper); in each, cite and ref commands become spans, footnotes paragraphs of
their own, commands whose arguments are no text are dropped, and the text between is
converted by :func:`corpus.parse.latex_text.latex_to_text`."""

from __future__ import annotations

import re

from corpus.parse.document import Paragraph
from corpus.parse.latex_cites import CITE_CMDS, REF_CMDS, cite_keys, emit_cites, emit_refs
from corpus.parse.latex_spans import Builder, Context
from corpus.parse.latex_text import (
    LatexError,
    _read_arg,
    _read_group,
    _read_optional,
    _skip_ws,
    latex_to_text,
)

_DROP_ARG_CMDS = frozenset(
    """label footnotemark thanks marginpar todo vspace hspace includegraphics
    bibliographystyle bibliography addbibresource index glossary hypertarget phantomsection
    addcontentsline setlength addtolength setcounter newcounter pagestyle thispagestyle
    graphicspath hyphenation caption keywords pacs date author affil affiliation address email institute
    orcid markboth markright title subtitle shorttitle runningtitle titlerunning authorrunning subjclass
    dedicatory preprint received revised accepted published altaffiliation collaboration nocollaboration
    homepage correspondingauthor submitjournal shortauthors ead cortext fntext tnotetext institution
    streetaddress city state country postcode additionalaffiliation authornote authornotemark titlenote
    inst IEEEauthorblockN IEEEauthorblockA IEEEmembership acmConference acmBooktitle acmDOI acmISBN
    acmPrice acmYear copyrightyear setcopyright ccsdesc altaffilmark altaffiltext SetRunningHead Received
    Accepted KeyWords keyword fontfamily fontseries fontshape fontencoding fontsize usefont addtocontents
    definecolor color""".split()
)
# Front-matter commands with more than one argument (read while the next group follows at once:
# aastex's \collaboration{n}{name} is revtex's \collaboration{name}); commands with none.
_DROP_NARGS = {
    "markboth": 2, "collaboration": 2, "acmConference": 3, "altaffiltext": 2, "SetRunningHead": 2,
    "addcontentsline": 3, "addtocontents": 2, "fontsize": 2, "usefont": 4, "definecolor": 3,
}  # fmt: skip
_NO_ARG_CMDS = frozenset({"footnotemark", "authornotemark"})
_FOOTNOTE_CMDS = frozenset({"footnote", "footnotetext"})
_HANDLED_RE = re.compile(
    r"\\("
    + "|".join(sorted(CITE_CMDS | REF_CMDS | _DROP_ARG_CMDS | _FOOTNOTE_CMDS, key=len, reverse=True))
    + r")(?![A-Za-z])(\*?)"
)
INTERPRETED = CITE_CMDS | REF_CMDS | _DROP_ARG_CMDS | _FOOTNOTE_CMDS
_PARBREAK_RE = re.compile(r"\n[ \t]*\n\s*")
_ITEM_RE = re.compile(r"\\item(?![A-Za-z])\s*(?:\[([^\]]*)\])?")
_ENV_TOKEN_RE = re.compile(r"\\(?:begin\s*\{[^{}]*\}(?:\s*\[[^\]]*\])?|end\s*\{[^{}]*\})")
_PAR_RE = re.compile(r"\\par(?![A-Za-z])")


def convert(latex: str, ctx: Context, section: str = "", sec_num: str | None = None) -> Paragraph | None:
    """One paragraph's LaTeX -> a :class:`Paragraph` with its spans (None when it has no text)."""
    b = Builder()
    pos = 0
    for m in _HANDLED_RE.finditer(latex):
        if m.start() < pos:
            continue
        b.add(latex_to_text(latex[pos : m.start()]))
        cmd = m.group(1)
        end = m.end()
        try:
            if cmd in CITE_CMDS:
                groups, end = cite_keys(latex, end, cmd.endswith("cites"))
                emit_cites(b, cmd, groups, ctx)
            elif cmd in REF_CMDS:
                if cmd == "crefrange":
                    a, end = _read_group(latex, end)
                    c, end = _read_group(latex, end)
                    emit_refs(b, "ref", [a or "", c or ""], ctx)
                else:  # only cleveref takes a list of labels: a comma may be part of a label
                    arg, end = _read_group(latex, end)
                    keys = (arg or "").split(",") if cmd in ("cref", "Cref") else [arg or ""]
                    emit_refs(b, cmd, [x.strip() for x in keys if x.strip()], ctx)
            elif cmd in _FOOTNOTE_CMDS:  # its own paragraphs, appended to the body (as Grobid does)
                _, end = _read_optional(latex, end)
                content, end = _read_group(latex, end)
                if content and content.strip():
                    ctx.footnotes.extend(paragraphs(content, ctx, "", None))
            elif cmd in _NO_ARG_CMDS:
                _, end = _read_optional(latex, end)
            else:
                _, end = _read_optional(latex, end)
                _, end = _read_group(latex, end)
                if cmd in ("setlength", "addtolength", "setcounter"):
                    _, end = _read_arg(latex, end)
                for _ in range(_DROP_NARGS.get(cmd, 1) - 1):
                    j = _skip_ws(latex, end)
                    if j < len(latex) and latex[j] == "{" and "\n\n" not in latex[end:j]:
                        _, end = _read_group(latex, end)
        except LatexError:
            end = len(latex)  # an argument runs past the paragraph: drop the rest of it
        pos = end
    b.add(latex_to_text(latex[pos:]))
    return b.paragraph(section, sec_num)


def paragraphs(latex: str, ctx: Context, section: str, sec_num: str | None) -> list[Paragraph]:
    """A run of body LaTeX -> its paragraphs, all in ``section``."""
    latex = _ENV_TOKEN_RE.sub("\n\n", latex)
    latex = _ITEM_RE.sub(lambda m: "\n\n" + (m.group(1) or "") + " ", latex)
    latex = _PAR_RE.sub("\n\n", latex)
    out = []
    for chunk in _PARBREAK_RE.split(latex):
        if chunk.strip():
            p = convert(chunk, ctx, section, sec_num)
            if p is not None:
                out.append(p)
    return out
