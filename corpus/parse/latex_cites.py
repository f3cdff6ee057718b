"""Cite and ref commands -> spans printed as the paper prints them.

In BRACKET papers each cited key is its own ``[n]`` (n = position in the bibliography, or the
bibitem's own label); in NAME-YEAR papers the span is ``Smith et al., 2019`` inside
``(...; ...)`` for parenthetical cites and ``Smith et al. (2019)`` for textual ones
(``\\citet``, ``\\textcite``); ``\\cite`` is textual as in natbib, parenthetical with the
ACL-family and AAAI styles that redefine it. Unknown keys print ``[?]`` as LaTeX does and
have ``ref_id=None``. A ref prints its target's number (``??`` when the label is unknown).
"""

from __future__ import annotations

import re

from corpus.parse.latex_braces import read_group, read_optional
from corpus.parse.latex_spans import Builder, Context
from corpus.parse.latex_style import CiteForm
from corpus.parse.latex_text import _plain

CITE_CMDS = frozenset(
    """cite citep citet citealp citealt citeauthor citeyear citeyearpar citenum Cite Citep Citet Citealp
    Citealt Citeauthor parencite Parencite textcite Textcite autocite Autocite footcite smartcite
    supercite cites parencites textcites autocites onlinecite citen citeA shortcite nocite citeN
    citeasnoun citetalias citepalias""".split()
)
REF_CMDS = frozenset("ref eqref autoref Autoref cref Cref crefrange subref vref Vref nameref pageref".split())
_TEXTUAL = frozenset("citet Citet textcite Textcite citeasnoun citeA".split())
_NOPAREN = frozenset("citealp Citealp citealt Citealt citenum".split())
DEFCITEALIAS_RE = re.compile(r"\\defcitealias\s*\{([^{}]*)\}\s*\{((?:[^{}]|\{[^{}]*\})*)\}")

CiteGroup = tuple[str | None, str | None, list[str]]  # (prenote, postnote, keys)


def cite_keys(s: str, i: int, multi: bool) -> tuple[list[CiteGroup], int]:
    """The argument groups of a cite command starting at ``s[i]`` (several for ``\\cites``)."""
    groups = []
    while True:
        pre, j = read_optional(s, i)
        post, j = read_optional(s, j)
        if post is None:
            pre, post = None, pre
        keys, j2 = read_group(s, j)
        if keys is None:
            break
        groups.append((pre, post, [k.strip() for k in keys.split(",") if k.strip()]))
        i = j2
        if not multi:
            break
    return groups, i


def cited_keys(body: str) -> list[str]:
    """Every key the body cites, in first-citation order."""
    keys: list[str] = []
    seen: set[str] = set()
    for m in re.finditer(r"\\(?:" + "|".join(CITE_CMDS) + r")\*?(?![A-Za-z])", body):
        groups, _ = cite_keys(body, m.end(), True)
        for _, _, ks in groups:
            for k in ks:
                if k not in seen:
                    seen.add(k)
                    keys.append(k)
    return keys


def emit_cites(b: Builder, cmd: str, groups: list[CiteGroup], ctx: Context) -> None:
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
        if cmd in ("citeauthor", "Citeauthor") and item.short:
            b.span(item.short, item.entry.ref_id, b.cites)
        elif cmd in _TEXTUAL and item.short:
            b.span(f"{item.short} [{label}]", item.entry.ref_id, b.cites)
        elif cmd == "citenum":
            b.span(label, item.entry.ref_id, b.cites)
        else:
            b.span(f"[{label}]", item.entry.ref_id, b.cites)


def _emit_name_year(b: Builder, cmd: str, pre, post, items, cite_form: CiteForm = "textual") -> None:
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


def emit_refs(b: Builder, cmd: str, labels: list[str], ctx: Context) -> None:
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
