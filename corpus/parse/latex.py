"""LaTeX source -> the S2ORC-style :class:`~corpus.parse.document.StructuredDoc` (``source="latex"``).

pylatexenc turns LaTeX into text at ~120-190 kB/s here, too slow for whole papers,
so the document is structured first with compiled regexes and a brace matcher:

1. verbatim/comment blocks dropped, braces checked, simple ``\\newcommand`` /
   ``\\def`` macros (with or without arguments) collected and expanded;
2. figures, tables, display equations and other non-text environments cut out
   of the body; captions and sources kept as ``ref_entries`` (FIGREFn, TABREFn,
   EQREFn), section labels as SECREFn;
3. the body split at headings (nested titles joined with ``::``) and into
   paragraphs at blank lines / ``\\par`` / ``\\item`` (never at single line
   breaks, the cause of S2ORC's 93 "paragraphs" per LaTeX paper);
4. in each paragraph, cite and ref commands become spans, and the text between
   them is converted by a small table of common macros, with pylatexenc only on
   the few leftover pieces (cached).

Cite span surface text (documented choice): in BRACKET papers each cited key is
its own ``[n]`` (``\\cite{a,b}`` -> ``[1], [2]``, n = position in the
bibliography, or the bibitem's own label); in NAME-YEAR papers (natbib
author-year labels in the .bbl, or an author-year style) the span is
``Smith et al., 2019`` inside ``(...; ...)`` for parenthetical cites and
``Smith et al. (2019)`` for textual ones (``\\citet``, ``\\textcite``);
``\\cite`` is textual as in natbib, parenthetical with the ACL-family and AAAI
styles that redefine it. Unknown keys print ``[?]`` as LaTeX does and have
``ref_id=None``.

Footnotes are paragraphs of their own, appended to the body with section ``""``
(as :mod:`corpus.parse.tei` does with Grobid's), with their cite spans; front matter
(``\\author``, ``\\affiliation``, ``\\thanks``, ... and whatever precedes
``\\maketitle``) is no body text. Bibliographies are read by :mod:`corpus.parse.latex_bib`,
LaTeX snippets turned into text by :mod:`corpus.parse.latex_text`.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from corpus.ingest.eprint import EprintError, Failure, LatexSource, UnpackLimits, UnpackResult, load_eprint
from corpus.parse.document import Paragraph, RefEntry, Span, StructuredDoc
from corpus.parse.latex_bib import (
    _bib_short,
    _bibitems,
    _entry_from_bib,
    _Item,
    _items_from,
    _references_env,
    fill_from_bib,
    parse_bib_file,
    parse_bibliography,
)
from corpus.parse.latex_labels import Heading, Target, assign_labels, theorems
from corpus.parse.latex_style import CiteForm, cite_mode
from corpus.parse.latex_text import (
    _BRACE_TOKEN,
    _WS,
    _match_brace,
    _plain,
    _pylatexenc,  # noqa: F401  (benchmarks/latex_parse.py clears its cache)
    _read_arg,
    _read_group,
    _read_optional,
    _skip_ws,
    brace_excess,
    latex_to_text,
)

__all__ = [
    "LatexError",
    "LatexParseResult",
    "balance_braces",
    "latex_to_text",
    "parse_bib_file",
    "parse_bibliography",
    "parse_eprint",
    "parse_latex",
]

# 2: issue 27 (brace recovery, cite modes, labels, symbols, .bib via bibtexparser); 3: rows name the
# parser (PARSER_NAME), not its version, which the partition's provenance records (corpus.store).
PARSER_VERSION = "corpus.parse.latex/3"
# What a LaTeX document's ``parser_version`` says. Not the version: a version in every row would
# change every LaTeX paper's rows at each bump, so nothing downstream could tell a fix that
# changes three papers from one that changes none (corpus.provenance).
PARSER_NAME = "corpus.parse.latex"
LatexError = EprintError  # per-paper failures carry a code, like the e-print ones
SKIPPED_CODES = frozenset({"pdf_only", "ps_only", "pdf_wrapper"})  # no LaTeX to parse, by design


_PARAGRAPH_END_RE = re.compile(r"\n[ \t]*\n|\\par(?![A-Za-z])|\\(begin|end)\s*\{|\\[\s\S]|[{}]")


_MAX_BRACE_REPAIRS = 200  # beyond this the text is not a paper TeX would typeset: fail it
_PARAGRAPH_WINDOW = 100_000
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")


def balance_braces(text: str, warnings: list[str] | None = None) -> str:
    """Pair up ``{`` and ``}`` as TeX recovers from them: a ``}`` with no ``{`` is dropped
    ("Too many }'s"), a ``{`` never closed is closed where its paragraph ends (a blank line,
    ``\\par``, or the ``\\end`` of its environment: "Paragraph ended before ... was complete").
    Each repair is an ``unbalanced_braces`` warning with its line. Text whose counts agree
    comes back as it is (one count, no scan: the common case costs nothing)."""
    if not brace_excess(text):
        return text
    opened: list[int] = []
    edits: list[tuple[int, str, int]] = []  # (position, what replaces the character there, source)
    for m in _BRACE_TOKEN.finditer(text):
        c = m.group()
        if c == "{":
            opened.append(m.start())
        elif c == "}":
            if opened:
                opened.pop()
            else:
                edits.append((m.start(), "", m.start()))
    if len(opened) + len(edits) > _MAX_BRACE_REPAIRS:
        raise LatexError(
            "unbalanced_braces", f"{len(opened)} '{{' never closed and {len(edits)} '}}' closing nothing"
        )
    edits += [(_paragraph_end(text, p + 1), "}", p) for p in opened]
    edits.sort()
    out, pos = [], 0
    for at, repl, origin in edits:
        if warnings is not None:
            line = text.count("\n", 0, origin) + 1
            what = "never closed; closed where its paragraph ends" if repl else "closes nothing; dropped"
            warnings.append(f"unbalanced_braces: '{'{' if repl else '}'}' on line {line} {what}")
        out.append(text[pos:at])
        out.append(repl)
        pos = at if repl else at + 1
    out.append(text[pos:])
    return "".join(out)


def _paragraph_end(text: str, i: int) -> int:
    """Where the paragraph holding ``text[i]`` ends: the first blank line or ``\\par`` outside
    the groups and environments opened after ``i``, or an ``\\end`` of one opened before
    (looked for over a bounded window, then the next blank line, so a hostile text stays linear)."""
    depth = envs = 0
    window = i + _PARAGRAPH_WINDOW
    if window < len(text):
        blank = _BLANK_LINE_RE.search(text, window)
        fallback = blank.start() if blank else len(text)
    else:
        fallback = len(text)
    for m in _PARAGRAPH_END_RE.finditer(text, i, min(window, len(text))):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif m.group(1) == "begin":
            envs += 1
        elif m.group(1) == "end":
            if envs == 0:
                return m.start()
            envs -= 1
        elif (c[0] == "\n" or c.startswith("\\par")) and depth <= 0 and envs == 0:
            return m.start()
    return fallback


# ----------------------------------------------------------------------------- cleanup

_VERBATIM_RE = re.compile(
    r"\\begin\s*\{(verbatim\*?|comment|lstlisting|minted|Verbatim|alltt|filecontents\*?)\}.*?\\end\s*\{\1\}",
    re.S,
)
_VERB_RE = re.compile(r"\\verb\*?([^A-Za-z\s])(.*?)\1")
_LET_RE = re.compile(r"\\let(?![A-Za-z])\s*\\[A-Za-z@]+\s*=?\s*(?:\\[A-Za-z@]+|\\.|[^\\\s])")
_MAKETITLE_RE = re.compile(r"\\maketitle(?![A-Za-z])")
_IFFALSE_RE = re.compile(r"\\iffalse(?![A-Za-z]).*?\\fi(?![A-Za-z])", re.S)


def _clean(text: str) -> str:
    text = _VERBATIM_RE.sub("", text)
    text = _VERB_RE.sub(lambda m: m.group(2).replace("\\", "\\textbackslash "), text)
    text = _IFFALSE_RE.sub("", text)
    # \let\a\b is an assignment, no text; left in, \b would be expanded with arguments
    # it never had (\let\old\addcontentsline ate the \title and \author after it)
    return _LET_RE.sub("", text) if "\\let" in text else text


def _first_argument(text: str, name: str) -> str:
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


# ----------------------------------------------------------------------------- macros

_DEF_RE = re.compile(
    r"\\(?P<cmd>(?:re)?newcommand|providecommand|DeclareRobustCommand|DeclareMathOperator)\*?"
    r"|\\(?P<def>[gex]?def)(?![A-Za-z])"
)
_NAME_RE = re.compile(r"\s*(?:\{\s*(\\[A-Za-z@]+)\s*\}|(\\[A-Za-z@]+))")
_UNSAFE_BODY = re.compile(
    r"\\(?:def|gdef|edef|xdef|newcommand|renewcommand|csname|expandafter|if[A-Za-z]*|else|fi|makeatletter|let|futurelet|catcode)(?![A-Za-z])|@"
)
# Commands this module interprets itself: a user redefinition must not hide them.
_PROTECTED = frozenset(
    """begin end section subsection subsubsection paragraph subparagraph chapter part cite citep citet
    ref eqref autoref cref Cref label caption footnote item title abstract author bibitem appendix
    input include bibliography newblock par reference bibitem""".split()
)


_CREDIT_NOTE = re.compile(r"\\(?:footnote|footnotetext|thanks|blfootnote)(?![A-Za-z])")


@dataclass
class _Macro:
    nargs: int
    default: str | None
    body: str


def _collect_macros(text: str) -> tuple[dict[str, _Macro], str]:
    """Find simple macro definitions anywhere; return them and the text without them."""
    macros: dict[str, _Macro] = {}
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
                macros[name] = _Macro(nargs, default, "")
            continue
        if m["cmd"] == "providecommand" and name in macros:
            continue
        macros[name] = _Macro(nargs, default, body)
    out.append(text[pos:])
    return macros, "".join(out)


_CTRL_WORD = re.compile(r"\\([A-Za-z]+)")


def _substitute(body: str, args: list[str]) -> str:
    def arg(a: re.Match) -> str:
        n = int(a.group(1))
        return args[n - 1] if 0 < n <= len(args) else ""

    return re.sub(r"#(\d)", arg, body)


def _expand_macros(text: str, macros: dict[str, _Macro], max_passes: int = 8) -> str:
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


# ----------------------------------------------------------------------------- structure

_ENV_RE = re.compile(r"\\(begin|end)\s*\{([^{}]+)\}")
_FIGURE_ENVS = frozenset("figure figure* wrapfigure SCfigure sidewaysfigure subfigure* figwindow".split())
_TABLE_ENVS = frozenset(
    "table table* sidewaystable wraptable longtable longtable* tabular tabular* tabularx tabulary supertabular deluxetable deluxetable*".split()
)
_MATH_ENVS = frozenset(
    """equation equation* align align* eqnarray eqnarray* gather gather* multline multline* displaymath
    flalign flalign* alignat alignat* dmath dmath* math IEEEeqnarray IEEEeqnarray*""".split()
) | frozenset(  # math-only environments, met at the top level inside $...$: unnumbered
    "array matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases aligned gathered split".split()
)
_UNNUMBERED_MATH = frozenset(
    "displaymath math dmath* array matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases aligned gathered split".split()
)
_DROP_ENVS = frozenset(
    """thebibliography references tikzpicture picture algorithmic
    keywords keyword highlights graphicalabstract IEEEkeywords CCSXML titlepage tocentry pspicture lstlisting minted code""".split()
)
_ALGORITHM_ENVS = frozenset("algorithm algorithm* algorithm2e algorithm2e*".split())
_FLOAT_KIND = dict.fromkeys(_ALGORITHM_ENVS, "algorithm")
_ACK_ENVS = frozenset("acknowledgments acknowledgements acknowledgment acknowledgement acks".split())
_DISPLAY_RE = re.compile(r"(?<!\\)\\\[(.*?)(?<!\\)\\\]|(?<!\\)\$\$(.+?)\$\$", re.S)
_HEADING_RE = re.compile(
    r"\\(part|chapter|section|subsection|subsubsection|paragraph|subparagraph)(?![A-Za-z])(\*?)"
    r"|\\(appendix)(?![A-Za-z])|\\begin\s*\{(appendix|appendices)\}"
)
_LEVELS = {
    "part": -1,
    "chapter": 0,
    "section": 1,
    "subsection": 2,
    "subsubsection": 3,
    "paragraph": 4,
    "subparagraph": 5,
}
_LABEL_RE = re.compile(r"\\label\s*\{([^{}]*)\}")
_CAPTION_RE = re.compile(r"\\(?:caption(?:of\s*\{[^{}]*\})?|tablecaption)\*?(?![A-Za-z])")
_PARBREAK_RE = re.compile(r"\n[ \t]*\n\s*")
_ITEM_RE = re.compile(r"\\item(?![A-Za-z])\s*(?:\[([^\]]*)\])?")
_GAP = "\ue020"
_ENV_TOKEN_RE = re.compile(r"\\(?:begin\s*\{[^{}]*\}(?:\s*\[[^\]]*\])?|end\s*\{[^{}]*\})")
_PAR_RE = re.compile(r"\\par(?![A-Za-z])")
_ACK_TITLE = re.compile(r"acknowledge?ments?|acknowledgment", re.I)
_NUMBERED_LINE = re.compile(r"\\\\(?!\s*$)")

_CITE_CMDS = frozenset(
    """cite citep citet citealp citealt citeauthor citeyear citeyearpar citenum Cite Citep Citet Citealp
    Citealt Citeauthor parencite Parencite textcite Textcite autocite Autocite footcite smartcite
    supercite cites parencites textcites autocites onlinecite citen citeA shortcite nocite citeN
    citeasnoun citetalias citepalias""".split()
)
_REF_CMDS = frozenset(
    "ref eqref autoref Autoref cref Cref crefrange subref vref Vref nameref pageref".split()
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
    + "|".join(sorted(_CITE_CMDS | _REF_CMDS | _DROP_ARG_CMDS | _FOOTNOTE_CMDS, key=len, reverse=True))
    + r")(?![A-Za-z])(\*?)"
)
_INTERPRETED = _CITE_CMDS | _REF_CMDS | _DROP_ARG_CMDS | _FOOTNOTE_CMDS
_TEXTUAL = frozenset("citet Citet textcite Textcite citeasnoun citeA".split())
_NOPAREN = frozenset("citealp Citealp citealt Citealt citenum".split())


@dataclass
class _Context:
    bib: dict[str, _Item]
    style: str  # BRACKET or NAME-YEAR
    labels: dict[str, Target] = field(default_factory=dict)
    # plain \cite: natbib's \citet, \citep (ACL, AAAI, acmart) or biblatex's bare form
    cite_form: CiteForm = "textual"
    aliases: dict[str, str] = field(default_factory=dict)  # natbib's \defcitealias{key}{Paper I}
    footnotes: list[Paragraph] = field(default_factory=list)


class _Builder:
    """Accumulates one paragraph's text and spans with exact offsets."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.last = ""
        self.cites: list[Span] = []
        self.refs: list[Span] = []

    def add(self, text: str) -> None:
        text = _WS.sub(" ", text.replace(_GAP, " "))
        if not text:
            return
        if text[0] == " " and (not self.size or self.last == " "):
            text = text[1:]
        if text and text[0] in ".,;:)" and self.last == " " and self.parts:
            self.parts[-1] = self.parts[-1][:-1]
            self.size -= 1
        if text:
            self.parts.append(text)
            self.size += len(text)
            self.last = text[-1]

    def span(self, text: str, ref_id: str | None, into: list[Span]) -> None:
        if not text:
            return
        into.append(Span(start=self.size, end=self.size + len(text), text=text, ref_id=ref_id))
        self.parts.append(text)
        self.size += len(text)
        self.last = text[-1]

    def paragraph(self, section: str, sec_num: str | None) -> Paragraph | None:
        text = "".join(self.parts).rstrip()
        if not text or not any(c.isalnum() for c in text):
            return None
        return Paragraph(
            text=text, cite_spans=self.cites, ref_spans=self.refs, section=section, sec_num=sec_num
        )


def _cite_keys(s: str, i: int, multi: bool) -> tuple[list[tuple[str | None, str | None, list[str]]], int]:
    groups = []
    while True:
        pre, j = _read_optional(s, i)
        post, j = _read_optional(s, j)
        if post is None:
            pre, post = None, pre
        keys, j2 = _read_group(s, j)
        if keys is None:
            break
        groups.append((pre, post, [k.strip() for k in keys.split(",") if k.strip()]))
        i = j2
        if not multi:
            break
    return groups, i


def _emit_cites(b: _Builder, cmd: str, groups, ctx: _Context) -> None:
    if cmd in ("nocite",):
        return
    for pre, post, keys in groups:
        items = [(k, ctx.bib.get(k) or ctx.bib.get(k.lower())) for k in keys]
        if cmd in ("citetalias", "citepalias"):
            _emit_alias(b, cmd, items, ctx)
            continue
        if ctx.style == "NAME-YEAR":
            _emit_name_year(b, cmd, pre, post, items, ctx.cite_form)
        else:
            _emit_bracket(b, cmd, items)


def _emit_alias(b: _Builder, cmd: str, items, ctx: _Context) -> None:
    """natbib's ``\\citetalias`` prints a key's alias ("Paper I"), ``\\citepalias`` "(Paper I)"."""
    paren = cmd == "citepalias"
    if paren:
        b.add(" (" if b.last not in ("", " ", "(") else "(")
    for n, (key, item) in enumerate(items):
        if n:
            b.add("; " if paren else ", ")
        alias = ctx.aliases.get(key) or ctx.aliases.get(key.lower())
        b.span(alias or "[?]", item.entry.ref_id if item and alias else None, b.cites)
    if paren:
        b.add(")")


_DEFCITEALIAS_RE = re.compile(r"\\defcitealias\s*\{([^{}]*)\}\s*\{((?:[^{}]|\{[^{}]*\})*)\}")


def _emit_bracket(b: _Builder, cmd: str, items) -> None:
    for n, (_key, item) in enumerate(items):
        if n:
            b.add(", ")
        if item is None:
            b.span("[?]", None, b.cites)
            continue
        label = item.label if item.label and not item.short else str(item.entry.num + 1)
        if cmd in ("citeauthor", "Citeauthor") and item.short:
            b.span(item.short, item.entry.ref_id, b.cites)
        elif cmd in _TEXTUAL and item.short:
            b.span(f"{item.short} [{label}]", item.entry.ref_id, b.cites)
        elif cmd == "citenum":
            b.span(label, item.entry.ref_id, b.cites)
        else:
            b.span(f"[{label}]", item.entry.ref_id, b.cites)


def _emit_name_year(b: _Builder, cmd: str, pre, post, items, cite_form: CiteForm = "textual") -> None:
    plain = cmd in ("cite", "Cite")
    textual = cmd in _TEXTUAL or (plain and cite_form == "textual")
    paren = (
        not textual
        and not (plain and cite_form == "bare")
        and cmd not in _NOPAREN
        and cmd not in ("citeauthor", "Citeauthor", "citeyear")
    )
    if paren:
        b.add(" (" if b.last not in ("", " ", "(") else "(")
    if pre:
        b.add(_plain(pre) + " ")
    for n, (_key, item) in enumerate(items):
        if n:
            b.add("; ")
        if item is None:
            b.span("[?]", None, b.cites)
            continue
        short = item.short or (item.entry.authors[0].last if item.entry.authors else item.key)
        year = item.year_label or (str(item.entry.year) if item.entry.year else "n.d.")
        if cmd in ("citeauthor", "Citeauthor"):
            text = short
        elif cmd in ("citeyear", "citeyearpar"):
            text = year
        elif textual:
            text = f"{short} ({year})"
        else:
            text = f"{short}, {year}"
        b.span(text, item.entry.ref_id, b.cites)
    if post:
        b.add(", " + _plain(post))
    if paren:
        b.add(")")


_REF_NAMES = {
    "figure": ("Figure", "Fig."), "table": ("Table", "Table"), "equation": ("Equation", "Eq."),
    "section": ("Section", "Section"), "algorithm": ("Algorithm", "Alg."), "item": ("item", "item"),
}  # fmt: skip


def _emit_refs(b: _Builder, cmd: str, labels: list[str], ctx: _Context) -> None:
    if cmd == "pageref":
        return
    for n, label in enumerate(labels):
        if n:
            b.add(", ")
        t = ctx.labels.get(label)
        if t is None:
            b.span("??", None, b.refs)
            continue
        num = t.num
        if cmd == "eqref" or (cmd in ("cref",) and t.kind == "equation"):
            num = f"({num})"
        if cmd in ("autoref", "Autoref", "Cref", "cref"):  # \vref prints \ref's number (and a page)
            long, short = _REF_NAMES.get(t.kind, (t.kind, t.kind))
            name = short if cmd == "cref" else long
            num = f"{name} {num}".strip()
        b.span(num, t.ref_id, b.refs)


def _convert(latex: str, ctx: _Context, section: str = "", sec_num: str | None = None) -> Paragraph | None:
    b = _Builder()
    pos = 0
    for m in _HANDLED_RE.finditer(latex):
        if m.start() < pos:
            continue
        b.add(latex_to_text(latex[pos : m.start()]))
        cmd = m.group(1)
        end = m.end()
        try:
            if cmd in _CITE_CMDS:
                groups, end = _cite_keys(latex, end, cmd.endswith("cites"))
                _emit_cites(b, cmd, groups, ctx)
            elif cmd in _REF_CMDS:
                if cmd == "crefrange":
                    a, end = _read_group(latex, end)
                    c, end = _read_group(latex, end)
                    _emit_refs(b, "ref", [a or "", c or ""], ctx)
                else:  # only cleveref takes a list of labels: a comma may be part of a label
                    arg, end = _read_group(latex, end)
                    keys = (arg or "").split(",") if cmd in ("cref", "Cref") else [arg or ""]
                    _emit_refs(b, cmd, [x.strip() for x in keys if x.strip()], ctx)
            elif cmd in _FOOTNOTE_CMDS:  # its own paragraphs, appended to the body (as Grobid does)
                _, end = _read_optional(latex, end)
                content, end = _read_group(latex, end)
                if content and content.strip():
                    ctx.footnotes.extend(_paragraphs(content, ctx, "", None))
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


def _paragraphs(latex: str, ctx: _Context, section: str, sec_num: str | None) -> list[Paragraph]:
    latex = _ENV_TOKEN_RE.sub("\n\n", latex)
    latex = _ITEM_RE.sub(lambda m: "\n\n" + (m.group(1) or "") + " ", latex)
    latex = _PAR_RE.sub("\n\n", latex)
    out = []
    for chunk in _PARBREAK_RE.split(latex):
        if chunk.strip():
            p = _convert(chunk, ctx, section, sec_num)
            if p is not None:
                out.append(p)
    return out


@dataclass
class _Region:
    start: int
    end: int
    name: str
    content: str


def _environments(body: str, user: dict[str, str] | None = None) -> list[_Region]:
    """Top-level regions of environments that leave the body text, in order (``user``: the
    paper's own environments that are figures, tables or equations)."""
    user = user or {}
    regions: list[_Region] = []
    stack: list[str] = []
    active: tuple[int, int, str, int] | None = None  # (stack index, start, name, content start)
    for m in _ENV_RE.finditer(body):
        kind, name = m.group(1), m.group(2).strip()
        if kind == "begin":
            stack.append(name)
            if active is None and (
                name in _FIGURE_ENVS
                or name in _TABLE_ENVS
                or name in _MATH_ENVS
                or name in _DROP_ENVS
                or name in _ALGORITHM_ENVS
                or name in _ACK_ENVS
                or name in user
                or name == "abstract"
            ):
                active = (len(stack) - 1, m.start(), name, m.end())
            continue
        if name not in stack:
            continue  # a stray \end: LaTeX would stop; we ignore it
        idx = len(stack) - 1 - stack[::-1].index(name)
        del stack[idx:]
        if active is not None and idx <= active[0]:
            regions.append(_Region(active[1], m.end(), active[2], body[active[3] : m.start()]))
            active = None
    if active is not None:
        line = body.count("\n", 0, active[1]) + 1
        raise LatexError(
            "unbalanced_environment", f"\\begin{{{active[2]}}} (body line {line}) is never closed"
        )
    return regions


_NEWENV_RE = re.compile(r"\\(?:re)?newenvironment\*?\s*\{\s*([^{}]+?)\s*\}")
_BEGIN_ARG_RE = re.compile(r"\\begin\s*\{([^{}]+)\}\s*\{")
_COLUMN_SPEC = re.compile(r"[lcrLCRXpmbSJs|@!<>*\d.\s]*[lcrLCRX][lcrLCRXpmbSJs|@!<>*\d.\s]*")
_KNOWN_ENVS = _FIGURE_ENVS | _TABLE_ENVS | _MATH_ENVS | _DROP_ENVS | _ALGORITHM_ENVS | _ACK_ENVS


def _user_environments(definitions: str, body: str) -> dict[str, str]:
    """The paper's own environments that hold a figure, a table or an equation: those its
    ``\\newenvironment`` opens with one, and unknown ones that take a column spec and hold
    ``&`` cells (``\\begin{resultstable}{|l|c|}``). Name -> figure, table or equation."""
    out: dict[str, str] = {}
    for m in _NEWENV_RE.finditer(definitions):
        _, i = _read_optional(definitions, m.end())
        _, i = _read_optional(definitions, i)
        try:
            begin, _ = _read_group(definitions, i)
        except LatexError:
            continue
        for inner in re.findall(r"\\begin\s*\{([^{}]+)\}", begin or ""):
            inner = inner.strip()
            kind = (
                "figure" if inner in _FIGURE_ENVS else "table" if inner in _TABLE_ENVS
                else "equation" if inner in _MATH_ENVS else None
            )  # fmt: skip
            if kind:
                out.setdefault(m.group(1), kind)
                break
    tried: dict[str, int] = {}  # a few occurrences of a few names: linear on any text
    for m in _BEGIN_ARG_RE.finditer(body):
        name = m.group(1).strip()
        if name in out or name in _KNOWN_ENVS or tried.get(name, 0) >= 3 or len(tried) > 50:
            continue
        tried[name] = tried.get(name, 0) + 1
        end = _match_brace(body, m.end() - 1)
        spec = re.sub(r"\{[^{}]*\}", "", body[m.end() : end - 1]) if end > 0 else ""
        close = body.find("\\end{" + name + "}", m.end())
        if _COLUMN_SPEC.fullmatch(spec) and close > 0 and "&" in body[m.end() : close]:
            out[name] = "table"
    return out


def _caption(content: str) -> str:
    """The LaTeX of an environment's (last) caption, labels removed."""
    caps = list(_CAPTION_RE.finditer(content))
    if not caps:
        return ""
    m = caps[-1]
    _, i = _read_optional(content, m.end())
    try:
        cap, _ = _read_group(content, i)
    except LatexError:
        return ""
    return _LABEL_RE.sub("", cap or "")


def _equation_count(name: str, content: str) -> int:
    if name.endswith("*") or name in _UNNUMBERED_MATH:
        return 0
    if name in ("equation", "dmath", "multline"):
        return 0 if re.search(r"\\no(?:number|tag)", content) else 1
    lines = [seg for seg in re.split(r"\\\\", content) if seg.strip()]
    return sum(1 for seg in lines if not re.search(r"\\no(?:number|tag)", seg)) or 1


def _title(text: str) -> str:
    m = re.search(r"\\title\s*(?:\[[^\]]*\])?\s*\{", text)
    if not m:
        return ""
    try:
        raw, _ = _read_group(text, m.end() - 1)
    except LatexError:
        return ""
    raw = re.sub(r"\\\\", " ", raw or "")
    out, pos = [], 0
    for n in re.finditer(r"\\(?:thanks|footnote|tnoteref|fnref|titlenote)(?![A-Za-z])", raw):
        if n.start() < pos:
            continue
        _, i = _read_optional(raw, n.end())
        try:
            note, end = _read_group(raw, i)
        except LatexError:
            note, end = None, i
        out.append(raw[pos : n.start()])
        pos = end if note is not None else n.end()
    out.append(raw[pos:])
    return _plain("".join(out))


def _cited_keys(body: str) -> list[str]:
    keys: list[str] = []
    seen: set[str] = set()
    for m in re.finditer(r"\\(?:" + "|".join(_CITE_CMDS) + r")\*?(?![A-Za-z])", body):
        groups, _ = _cite_keys(body, m.end(), True)
        for _, _, ks in groups:
            for k in ks:
                if k not in seen:
                    seen.add(k)
                    keys.append(k)
    return keys


def _bibliography(source: LatexSource, body: str, preamble: str) -> tuple[list[_Item], bool]:
    """The paper's bibliography items and whether they came from a .bbl / thebibliography
    (True) or from .bib files (False). .bbl entries missing a title or identifiers (the
    AAS and REVTeX styles print no article titles) take them from the .bib entry of the
    same key when the e-print has one."""
    inline = re.search(r"\\begin\s*\{thebibliography\}.*?(?:\\end\s*\{thebibliography\}|$)", body, re.S)
    refs = re.search(r"\\begin\s*\{references\}(.*?)(?:\\end\s*\{references\}|$)", body, re.S)
    if inline:
        items = _bibitems(inline.group(0))
    elif source.bbl and source.bbl.strip():
        items = _items_from(source.bbl)
    elif refs:
        return _references_env(refs.group(1)), True
    elif source.bib:
        every = re.search(r"\\nocite\s*\{\s*\*\s*\}", body)
        cited = _cited_keys(body)
        fields = _bib_fields(source.bib, None if every else set(cited))
        items = []
        cited_lower = {c.lower() for c in cited}
        seen: set[str] = set()  # keys match whatever their case, as BibTeX matches them
        for key in cited + ([k for k in fields if k not in cited_lower] if every else []):
            f = fields.get(key.lower())
            if f is not None and key.lower() not in seen:
                seen.add(key.lower())
                entry = _entry_from_bib(f, len(items))
                items.append(_Item(key, None, entry, _bib_short(entry.authors), str(entry.year or "")))
        return items, False
    else:
        return [], True
    untitled = {it.key for it in items if not it.entry.title}
    if source.bib and untitled:
        fill_from_bib(items, _bib_fields(source.bib, untitled))
    return items, True


def _bib_fields(texts: list[str], keys: set[str] | None = None) -> dict[str, dict[str, str]]:
    """The .bib entries by lower-case key (BibTeX matches cite keys whatever their case)."""
    fields: dict[str, dict[str, str]] = {}
    for text in texts:
        for k, v in parse_bib_file(text, keys).items():
            fields.setdefault(k.lower(), v)
    return fields


def parse_latex(source: LatexSource, paper_id: str, warnings: list[str] | None = None) -> StructuredDoc:
    """One paper's LaTeX -> :class:`StructuredDoc`; raises :class:`LatexError` (codes
    ``unbalanced_environment``, ``macro_blowup``) for broken input. What TeX would only warn
    about (unbalanced braces) is repaired as TeX does and appended to ``warnings``."""
    text = balance_braces(_clean(source.text), warnings)
    macros, text = _collect_macros(text)
    for name, package in source.packages.items():  # the e-print's own .sty files: the paper's macros too
        if name.endswith(".sty"):
            for key, mac in _collect_macros(_clean(package))[0].items():
                if key not in _INTERPRETED:
                    macros.setdefault(key, mac)
    text = _expand_macros(text, macros)
    text = _first_argument(text, "texorpdfstring")
    begin = re.search(r"\\begin\s*\{document\}", text)
    preamble, body = (text[: begin.start()], text[begin.end() :]) if begin else ("", text)
    end = re.search(r"\\end\s*\{document\}", body)
    body = body[: end.start()] if end else body
    body = _DISPLAY_RE.sub(
        lambda m: "\\begin{displaymath}" + (m.group(1) or m.group(2) or "") + "\\end{displaymath}", body
    )

    items, from_bbl = _bibliography(source, body, preamble)
    labels_author_year = sum(1 for it in items if it.short) * 2 >= len(items) > 0 if from_bbl else None
    mode = cite_mode(preamble, text, source.packages, labels_author_year)
    bib = {it.key.lower(): it for it in reversed(items)}  # BibTeX matches keys whatever their case
    bib.update({it.key: it for it in items})
    ctx = _Context(bib=bib, style=mode.style, cite_form=mode.cite)
    for m in _DEFCITEALIAS_RE.finditer(text):
        ctx.aliases[m.group(1).strip()] = ctx.aliases[m.group(1).strip().lower()] = _plain(m.group(2))
    doc = StructuredDoc(
        paper_id=paper_id,
        source="latex",
        title=_title(preamble + body),
        bib_entries={it.entry.ref_id: it.entry for it in items},
        citation_style=ctx.style,  # type: ignore[arg-type]
        parser_version=PARSER_NAME,
    )

    abstract_latex: list[str] = []
    ack_latex: list[str] = []
    pre_abs = re.search(r"\\begin\s*\{abstract\}(.*?)\\end\s*\{abstract\}", preamble, re.S)
    if pre_abs:
        abstract_latex.append(pre_abs.group(1))
    counts = {"figure": 0, "table": 0, "equation": 0, "algorithm": 0}
    captions: list[tuple[str, str]] = []  # (ref_id, caption LaTeX): converted once every label is known
    out, pos = [], 0
    definitions = "\n".join([preamble, *source.packages.values()])  # the paper's and its own .sty's
    user_envs = _user_environments(definitions, body)
    for reg in _environments(body, user_envs):
        out.append(body[pos : reg.start])
        pos = reg.end
        name = reg.name
        if name == "abstract":
            abstract_latex.append(reg.content)
            continue
        if name in _ACK_ENVS:
            ack_latex.append(reg.content)
            continue
        labels = [lab.strip() for lab in _LABEL_RE.findall(reg.content)]
        if name in _MATH_ENVS or user_envs.get(name) == "equation":
            out.append(_GAP)  # not whitespace: a display equation must not become a blank line
            n = _equation_count(name, reg.content)
            ref_id = f"EQREF{len([k for k in doc.ref_entries if k.startswith('EQREF')])}"
            first = counts["equation"] + 1
            counts["equation"] += n
            doc.ref_entries[ref_id] = RefEntry(
                text="", latex=reg.content.strip(), type="equation", num=str(first) if n else None
            )
            for k, lab in enumerate(labels):
                ctx.labels[lab] = Target(ref_id, str(min(first + k, first + max(n - 1, 0))), "equation")
            continue
        kind = (
            _FLOAT_KIND.get(name)
            or user_envs.get(name)
            or ("figure" if name in _FIGURE_ENVS else "table" if name in _TABLE_ENVS else None)
        )
        if kind is None:
            continue
        caption = _caption(reg.content)
        if not caption.strip() and not labels and name.startswith("tabular"):
            continue
        counts[kind] += 1
        prefix = {"figure": "FIGREF", "table": "TABREF", "algorithm": "ALGREF"}[kind]
        ref_id = f"{prefix}{counts[kind] - 1}"
        captions.append((ref_id, caption))
        doc.ref_entries[ref_id] = RefEntry(
            latex=reg.content.strip() if kind != "figure" else None,
            type=kind if kind != "algorithm" else "other",  # type: ignore[arg-type]
            num=str(counts[kind]),
        )
        for lab in labels:
            ctx.labels[lab] = Target(ref_id, str(counts[kind]), kind)
    out.append(body[pos:])
    body = "".join(out)
    # front matter (\title, \author, \affiliation ... and anything else) ends at \maketitle
    mt = _MAKETITLE_RE.search(body)
    if mt:
        heading = _HEADING_RE.search(body, 0, mt.start())
        if heading is None:
            body = body[mt.end() :]

    # sections: split at headings, number them, give their labels SECREFs
    segments: list[tuple[str, str | None, str, bool]] = []  # (section path, sec_num, latex, back matter)
    stack: list[tuple[int, str]] = []
    numbers = [0] * 7
    appendix = False
    ack = False
    pos, path, num = 0, "", None
    secref = 0
    headings: list[Heading] = []
    for m in _HEADING_RE.finditer(body):
        if m.start() < pos:
            continue
        segments.append((path, num, body[pos : m.start()], ack))
        if m.group(3) or m.group(4):
            appendix = True
            numbers[1:] = [0] * 6
            pos = m.end()
            continue
        cmd, star = m.group(1), m.group(2)
        _, i = _read_optional(body, m.end())
        try:
            title_latex, i = _read_group(body, i)
        except LatexError:
            title_latex, i = None, i
        pos = i
        title_labels = _LABEL_RE.findall(title_latex or "")
        title = _plain(_LABEL_RE.sub("", title_latex or ""))
        level = _LEVELS[cmd]
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        path = "::".join(t for _, t in stack if t)
        num = None
        if not star and 0 <= level <= 3:
            numbers[level] += 1
            numbers[level + 1 :] = [0] * (6 - level)
            first = chr(ord("A") + numbers[1] - 1) if appendix and numbers[1] else str(numbers[1])
            num = (
                ".".join([first] + [str(n) for n in numbers[2 : level + 1]])
                if level >= 1
                else str(numbers[0])
            )
        if level <= 1:
            ack = bool(_ACK_TITLE.search(title))
        ref_id = f"SECREF{secref}"
        secref += 1
        doc.ref_entries[ref_id] = RefEntry(text=title, type="other", num=num)
        target = Target(ref_id, num or title, "section")
        headings.append(Heading(m.start(), level, target, num))
        for lab in title_labels:  # \section{\label{sec:x}Title}
            ctx.labels.setdefault(lab.strip(), target)
    segments.append((path, num, body[pos:], ack))
    assign_labels(body, headings, theorems(definitions), ctx.labels)

    for chunk in abstract_latex:
        doc.abstract.extend(_paragraphs(chunk, ctx, "Abstract", None))
    if not abstract_latex:
        m = re.search(r"\\abstract\s*\{", preamble + body)
        if m:
            try:
                chunk, _ = _read_group(preamble + body, m.end() - 1)
                doc.abstract.extend(_paragraphs(chunk or "", ctx, "Abstract", None))
            except LatexError:
                pass
    for path, num, chunk, is_back in segments:
        paras = _paragraphs(chunk, ctx, path, num)
        (doc.back_matter if is_back else doc.body_text).extend(paras)
    for chunk in ack_latex:
        doc.back_matter.extend(_paragraphs(chunk, ctx, "Acknowledgments", None))
    for ref_id, caption in captions:  # cites in captions print as the paper prints them
        para = _convert(caption, ctx) if caption.strip() else None
        doc.ref_entries[ref_id].text = para.text if para else ""
    doc.body_text.extend(ctx.footnotes)
    return doc


# ----------------------------------------------------------------------------- whole e-print


class LatexParseResult(BaseModel):
    """One e-print through unpack + parse: a document or a failure, never an exception."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    paper_id: str
    kind: str
    doc: StructuredDoc | None = None
    failure: Failure | None = None
    main: str | None = None
    warnings: list[str] = []

    @property
    def status(self) -> str:
        """``ok`` (a document), ``skipped`` (no LaTeX to parse: PDF-only or PDF-wrapper
        e-prints) or ``failed``."""
        if self.doc is not None:
            return "ok"
        return "skipped" if self.failure is not None and self.failure.code in SKIPPED_CODES else "failed"


def parse_eprint(
    path: Path, paper_id: str, scratch: Path, limits: UnpackLimits | None = None, keep: bool = False
) -> LatexParseResult:
    """Unpack ``path`` into ``scratch``, parse it, and (unless ``keep``) empty ``scratch`` again."""
    unpacked: UnpackResult | None = None
    try:
        unpacked, source, failure = load_eprint(Path(path), Path(scratch), limits)
        kind = unpacked.kind
        if failure is not None or source is None:
            return LatexParseResult(paper_id=paper_id, kind=kind, failure=failure)
        warnings = list(source.warnings) + [f"non_utf8: {f} decoded as latin-1" for f in source.non_utf8]
        try:
            doc = parse_latex(source, paper_id, warnings)
        except LatexError as exc:
            return LatexParseResult(
                paper_id=paper_id, kind=kind, failure=exc.failure(), main=source.main, warnings=warnings
            )
        except (RecursionError, ValueError, IndexError) as exc:  # a parser bug must not sink the batch
            fail = Failure(code="parse_error", message=f"{type(exc).__name__}: {exc}")
            return LatexParseResult(
                paper_id=paper_id, kind=kind, failure=fail, main=source.main, warnings=warnings
            )
        return LatexParseResult(paper_id=paper_id, kind=kind, doc=doc, main=source.main, warnings=warnings)
    finally:
        if not keep and Path(scratch).exists():
            for child in Path(scratch).iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
