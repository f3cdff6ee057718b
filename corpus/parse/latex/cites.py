"""Cite and ref commands -> spans printed as the paper prints them.

In BRACKET papers each cited key is its own ``[n]`` (n = position in the bibliography, or the
bibitem's own label); in NAME-YEAR papers the span is ``Smith et al., 2019`` inside
``(...; ...)`` for parenthetical cites and ``Smith et al. (2019)`` for textual ones
(``\\citet``, ``\\textcite``); ``\\cite`` is textual as in natbib, parenthetical with the
ACL-family and AAAI styles that redefine it. Unknown keys print ``[?]`` as LaTeX does and
have ``ref_id=None``. Refs are printed by :mod:`corpus.parse.latex.refs`.
"""

from __future__ import annotations

import re

from corpus.parse.latex.braces import LatexError, control_words, read_group, read_optional
from corpus.parse.latex.spans import Builder, Context
from corpus.parse.latex.style import CiteForm
from corpus.parse.latex.text import _plain

CITE_CMDS = frozenset(
    """cite citep citet citealp citealt citeauthor citeyear citeyearpar citenum Cite Citep Citet Citealp
    Citealt Citeauthor parencite Parencite textcite Textcite autocite Autocite footcite smartcite
    supercite cites parencites textcites autocites onlinecite citen citeA shortcite nocite citeN
    citeasnoun citetalias citepalias"""
    # natbib's full author list; biblatex's other citation commands; ACM's and apacite's; harvard's
    """ citefullauthor Citefullauthor Smartcite Footcite footcitetext Footcitetext footcites Footcites
    Parencites Textcites smartcites Smartcites Autocites supercites citetitle Citetitle citedate citeurl
    fullcite footfullcite citeANP citeNN citeNP citeyearNP citeauthorNP shortciteA shortciteNP
    shortciteauthor fullciteA fullciteNP possessivecite""".split()
)
# What a command prints besides the plain citation: its author list (short or full), its year,
# the title or the whole entry
_AUTHOR_ONLY = frozenset("citeauthor Citeauthor citeauthorNP shortciteauthor citeANP".split())
_FULL_AUTHORS = frozenset("citefullauthor Citefullauthor".split())
_YEAR_ONLY = frozenset("citeyear citedate citeyearNP".split())
_TITLE_ONLY = frozenset("citetitle Citetitle".split())
_WHOLE_ENTRY = frozenset("fullcite footfullcite".split())
_NOT_NUMBERED = _AUTHOR_ONLY | _FULL_AUTHORS | _YEAR_ONLY | _TITLE_ONLY | _WHOLE_ENTRY
_TEXTUAL = frozenset(
    "citet Citet textcite Textcite Textcites textcites citeasnoun citeA shortciteA fullciteA".split()
)
_NOPAREN = frozenset(
    "citealp Citealp citealt Citealt citenum citeNP shortciteNP fullciteNP possessivecite".split()
)
_NUMBERS_ONLY = frozenset("citenum citen citealp Citealp".split())  # numbers without brackets
DEFCITEALIAS_RE = re.compile(r"\\defcitealias\s*\{([^{}]*)\}\s*\{((?:[^{}]|\{[^{}]*\})*)\}")

CiteGroup = tuple[str | None, str | None, list[str]]  # (prenote, postnote, keys)
_ANGLE_RE = re.compile(r"\s*<([^<>\n]{0,300})>")


def cite_keys(s: str, i: int, multi: bool) -> tuple[list[CiteGroup], int]:
    """The argument groups of a cite command starting at ``s[i]`` (several for ``\\cites``);
    apacite's prenote may come first in angle brackets (``\\cite<e.g.,>[p.~3]{key}``)."""
    groups = []
    while True:
        angle = _ANGLE_RE.match(s, i)
        if angle:
            i = angle.end()
        pre, j = read_optional(s, i)
        post, j = read_optional(s, j)
        if post is None:
            pre, post = None, pre
        if angle:
            pre = angle.group(1)
        keys, j2 = read_group(s, j)
        if keys is None:
            break
        groups.append((pre, post, [k.strip() for k in keys.split(",") if k.strip()]))
        i = j2
        if not multi:
            break
    return groups, i


_CITE_RE = re.compile(r"\\(?:" + control_words(CITE_CMDS) + r")\*?(?![A-Za-z])")


def cited_keys(body: str) -> list[str]:
    """Every key the body cites, in first-citation order."""
    keys: list[str] = []
    seen: set[str] = set()
    for m in _CITE_RE.finditer(body):
        groups, _ = cite_keys(body, m.end(), True)
        for _, _, ks in groups:
            for k in ks:
                if k not in seen:
                    seen.add(k)
                    keys.append(k)
    return keys


def emit_cites(b: Builder, cmd: str, groups: list[CiteGroup], ctx: Context) -> None:
    cmd = ctx.cite_as.get(cmd, cmd)  # what the paper's class makes of it (acmart: \citeNN is \citeyearpar)
    if cmd in ("nocite",):
        return
    for pre, post, keys in groups:
        # REVTeX / mcite: a starred key is merged into the entry of the key before it
        keys = [k.lstrip("*") for n, k in enumerate(keys) if not (n and k.startswith("*"))]
        items = [(k, ctx.bib.get(k) or ctx.bib.get(k.lower())) for k in keys]
        if cmd in ("citetalias", "citepalias"):
            _emit_alias(b, cmd, items, ctx)
            continue
        if ctx.style == "NAME-YEAR":
            _emit_name_year(b, cmd, pre, post, items, ctx.cite_form)
        elif cmd in _TEXTUAL or cmd in _NOT_NUMBERED:
            _emit_bracket(b, cmd, items)
        else:
            _emit_numbers(b, cmd, pre, post, items, ctx)


def _emit_alias(b: Builder, cmd: str, items, ctx: Context) -> None:
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


def _emit_bracket(b: Builder, cmd: str, items) -> None:
    for n, (_key, item) in enumerate(items):
        if n:
            b.add(", ")
        if item is None:
            b.span("[?]", None, b.cites)
            continue
        label = item.label if item.label and not item.short else str(item.entry.num + 1)
        printed = _not_numbered(cmd, item)
        if printed is not None:
            b.span(printed, item.entry.ref_id, b.cites)
        elif cmd in _AUTHOR_ONLY and item.short:
            b.span(item.short, item.entry.ref_id, b.cites)
        elif cmd in _TEXTUAL and item.short:
            b.span(f"{item.short} [{label}]", item.entry.ref_id, b.cites)
        elif cmd == "citenum":
            b.span(label, item.entry.ref_id, b.cites)
        else:
            b.span(f"[{label}]", item.entry.ref_id, b.cites)


def _not_numbered(cmd: str, item) -> str | None:
    """What an entry prints for a command that prints no label: the full author list, the year,
    the title or the whole entry; None for the other commands."""
    if cmd in _FULL_AUTHORS:
        return item.long or item.short or None
    if cmd in _YEAR_ONLY:
        return item.year_label or (str(item.entry.year) if item.entry.year else "n.d.")
    if cmd in _TITLE_ONLY:
        return item.entry.title or None
    if cmd in _WHOLE_ENTRY:
        return item.entry.raw_text or None
    return None


def _label(item) -> str:
    """What a BRACKET paper prints for an entry: its alphabetic or own label, else its number."""
    return item.label if item.label and (item.alpha or not item.short) else str(item.entry.num + 1)


def _emit_numbers(b: Builder, cmd: str, pre, post, items, ctx: Context) -> None:
    """Several keys of one numeric citation as LaTeX prints them: one pair of brackets,
    ``[1, 2, 3]`` (LaTeX's \\cite, natbib) or sorted with ranges ``[1, 3–5]`` (compress), or
    IEEE's ``[1], [2]`` / ``[1]–[3]``; the post-note last (``[1, Thm. 2]``), the pre-note first.
    Each entry is a span (the first takes the opening bracket, the last the closing one); a
    range is one span per entry it covers, all over the range text (as the TEI parser does)."""
    tokens: list[tuple[str, list[str | None]]] = []  # (printed, ref ids)
    numbered = [
        (int(_label(it)), it.entry.ref_id) for _, it in items if it is not None and _label(it).isdigit()
    ]
    form = ctx.numbers
    if form in ("compress", "each-compress") and len(numbered) == sum(1 for _, it in items if it):
        tail = [("?", [None])] * sum(1 for _, it in items if it is None)
        for run in _runs(sorted(set(numbered))):
            if len(run) >= 3:
                tokens.append((f"{run[0][0]}\u2013{run[-1][0]}", [r for _, r in run]))
            else:
                tokens += [(str(n), [r]) for n, r in run]
        tokens += tail
    else:
        tokens = [(_label(it), [it.entry.ref_id]) if it else ("?", [None]) for _, it in items]
    if not tokens:
        return
    bare = cmd in _NUMBERS_ONLY
    if form.startswith("each") and not bare:
        for n, (text, refs) in enumerate(tokens):
            if n:
                b.add(", ")
            if "\u2013" in text:
                text = "]\u2013[".join(text.split("\u2013"))
            last = n == len(tokens) - 1
            _span(b, "[" + text + ("" if last and post else "]"), refs)
        if post:
            b.add(", " + _plain(post) + "]")
        return
    sep = "; " if ctx.alpha and ctx.alpha_style == "biblatex" else ", "
    if not bare:
        b.add(" [" if b.last not in ("", " ", "(", "[") else "[")
        if pre:
            b.add(_plain(pre) + " ")
    for n, (text, refs) in enumerate(tokens):
        if n:
            b.add(sep)
        if not bare and n == 0 and not pre:
            b.parts[-1] = b.parts[-1][:-1]  # the "[" joins the first span
            b.size -= 1
            text = "[" + text
        if not bare and n == len(tokens) - 1 and not post:
            text += "]"
        _span(b, text, refs)
    if post:
        b.add(", " + _plain(post))
    if not bare and post:
        b.add("]")


def _runs(numbers: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    runs: list[list[tuple[int, str]]] = []
    for n, ref in numbers:
        if runs and runs[-1][-1][0] == n - 1:
            runs[-1].append((n, ref))
        else:
            runs.append([(n, ref)])
    return runs


def _span(b: Builder, text: str, refs: list[str | None]) -> None:
    """One printed citation, a span for each entry it stands for (all over the same text)."""
    start = b.size
    b.span(text, refs[0], b.cites)
    for ref in refs[1:]:
        b.cites.append(b.cites[-1].model_copy(update={"ref_id": ref, "start": start}))


def _emit_name_year(b: Builder, cmd: str, pre, post, items, cite_form: CiteForm = "textual") -> None:
    plain = cmd in ("cite", "Cite")
    textual = cmd in _TEXTUAL or (plain and cite_form == "textual")
    paren = (
        not textual
        and not (plain and cite_form == "bare")
        and cmd not in _NOPAREN
        and cmd not in _NOT_NUMBERED
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
        printed = _not_numbered(cmd, item)
        if printed is not None:
            text = printed
        elif cmd in _AUTHOR_ONLY:
            text = short
        elif cmd == "citeyearpar":
            text = year
        elif cmd == "possessivecite":
            text = f"{short}\u2019s ({year})"
        elif textual:
            text = f"{short} ({year})"
        else:
            text = f"{short}, {year}"
        b.span(text, item.entry.ref_id, b.cites)
    if post:
        b.add(", " + _plain(post))
    if paren:
        b.add(")")


_QUOTE_RE = re.compile(
    r"\\(enquote|(?:foreign|hybrid)?(?:text|block)c?quote|foreignquote|foreigncquote)(\*?)(?![A-Za-z])"
    r"|\\begin\s*\{(displaycquote)\}"
)


def quotations(latex: str) -> str:
    """csquotes' quotations as they print: ``\\enquote{x}`` “x”, ``\\textquote[cite][.]{x}``
    “x”. cite, ``\\textcquote[pre][post]{key}{x}`` “x” ``\\cite[pre][post]{key}``, block
    quotes without the marks; the citation they carry stays a citation."""
    if "quote" not in latex:
        return latex
    out, pos = [], 0
    for m in _QUOTE_RE.finditer(latex):
        if m.start() < pos:
            continue
        name, star = m.group(1), m.group(2)
        i = m.end()
        try:
            if m.group(3):  # \begin{displaycquote}[pre][post]{key}[punct]
                cite, i = _cquote_cite(latex, i)
                _, i = read_optional(latex, i)
                out.append(latex[pos : m.start()] + "\\begin{displaycquote}" + cite + " ")
                pos = i
                continue
            if name.startswith(("foreign", "hybrid")) and name != "hybridblockquote":
                _, i = read_group(latex, i)  # the language
            cite, punct = "", ""
            if name != "enquote":
                if "cquote" in name:
                    cite, i = _cquote_cite(latex, i)
                else:
                    cite, i = read_optional(latex, i)
                punct, i = read_optional(latex, i)
            text, i = read_group(latex, i)
        except LatexError:
            continue
        if text is None:
            continue
        block = "block" in name
        marks = ("", "") if block else ("\u2018", "\u2019") if star else ("\u201c", "\u201d")
        out.append(latex[pos : m.start()])
        out.append("{" + marks[0] + text + marks[1] + (punct or "") + "}" + (" " + cite if cite else ""))
        pos = i
    out.append(latex[pos:])
    return "".join(out)


def _cquote_cite(s: str, i: int) -> tuple[str, int]:
    """``[pre][post]{key}`` of a csquotes c-command -> ``\\cite[pre][post]{key}``."""
    pre, i = read_optional(s, i)
    post, i = read_optional(s, i)
    key, i = read_group(s, i)
    if key is None:
        return "", i
    opts = (f"[{pre}]" if pre is not None else "") + (f"[{post}]" if post is not None else "")
    return f"\\cite{opts}{{{key}}}", i
