"""Ref commands -> spans printed as LaTeX prints them: ``\\ref`` the label's number (``??``
when the label is unknown), ``\\eqref`` it in parentheses, hyperref's ``\\autoref`` with
hyperref's name of the counter ("Figure 1", "section 2.1", "Appendix A"), cleveref's
``\\cref``/``\\Cref`` with cleveref's names, plural and ranges ("figs. 1 to 3 and table 2"),
``capitalise`` and ``noabbrev`` options and the paper's own ``\\crefname``, jmlr's
``\\figureref``. The names a paper sets (``\\crefname``, ``\\renewcommand{\\sectionautorefname}``)
are read from its source (:func:`ref_names`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from corpus.parse.latex.labels import Target
from corpus.parse.latex.spans import Builder, Context

# jmlr's reference commands print their object's name ("Figure 1", "Figures 1 and 2")
_NAMED_REFS = {
    "figureref": "Figure", "tableref": "Table", "sectionref": "Section", "equationref": "Equation",
    "appendixref": "Appendix", "algorithmref": "Algorithm", "theoremref": "Theorem", "lemmaref": "Lemma",
    "corollaryref": "Corollary", "propositionref": "Proposition", "definitionref": "Definition",
    "remarkref": "Remark", "exampleref": "Example", "conjectureref": "Conjecture", "axiomref": "Axiom",
    "chapterref": "Chapter", "partref": "Part",
}  # fmt: skip
# zref's references (\zref[property]{label}; zref-xr's labels of another document, zref-clever's
# \zcref) print as the LaTeX ones they stand for
_ZREFS = {"zref": "ref", "zcref": "cref", "Zcref": "Cref", "zpageref": "pageref"}
REF_CMDS = (
    frozenset(
        "ref eqref autoref Autoref cref Cref crefrange Crefrange subref vref Vref nameref pageref proofref".split()
    )
    | frozenset(_NAMED_REFS)
    | frozenset(_ZREFS)
)
# what an e-print's .sty may not redefine: jmlr's \theoremref is a class's, and a package that
# defines its own (\providecommand{\theoremref}[1]{Theorem~\ref{theorem:#1}}) is the paper's
OWN_REFS = REF_CMDS - frozenset(_NAMED_REFS)
LIST_REFS = frozenset({"cref", "Cref", "vref", "Vref", "zcref", "Zcref"}) | frozenset(
    _NAMED_REFS
)  # a comma separates labels

# hyperref's English \<counter>autorefname (hyperref.sty); a counter without one prints no name
_AUTOREF = {
    "figure": "Figure", "table": "Table", "equation": "Equation", "footnote": "footnote", "item": "item",
    "part": "Part", "appendix": "Appendix", "chapter": "chapter", "section": "section",
    "subsection": "subsection", "subsubsection": "subsubsection", "paragraph": "paragraph",
    "subparagraph": "subparagraph", "line": "line", "theorem": "Theorem", "page": "page",
    "algorithm": "Algorithm", "listing": "Listing",
}  # fmt: skip
# cleveref's default names (cleveref.sty, English): (\cref singular, plural); \Cref capitalises
_CREF = {
    "figure": ("fig.", "figs."), "table": ("table", "tables"), "equation": ("eq.", "eqs."),
    "section": ("section", "sections"), "appendix": ("appendix", "appendices"),
    "chapter": ("chapter", "chapters"), "part": ("part", "parts"), "item": ("item", "items"),
    "footnote": ("footnote", "footnotes"), "line": ("line", "lines"), "algorithm": ("algorithm", "algorithms"),
    "listing": ("listing", "listings"), "page": ("page", "pages"),
}  # fmt: skip
_NOABBREV = {"figure": ("figure", "figures"), "equation": ("equation", "equations")}
_SECTIONS = frozenset("section subsection subsubsection paragraph subparagraph".split())
_CREFNAME_RE = re.compile(r"\\(crefname|Crefname)\s*\{\s*([^{}]+?)\s*\}\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_AUTOREFNAME_RE = re.compile(
    r"\\(?:(?:re|provide)?newcommand\*?\s*\{?\s*|[gex]?def\s*)\\([A-Za-z]+)autorefname\s*\}?\s*\{([^{}]*)\}"
)
_LET_AUTOREFNAME_RE = re.compile(
    r"\\let\s*\\([A-Za-z]+)autorefname\s*=?\s*\\([A-Za-z]+)autorefname(?![A-Za-z])"
)
_CLEVEREF_RE = re.compile(r"\\usepackage\s*\[([^\]]*)\]\s*\{[^{}]*\bcleveref\b[^{}]*\}")


@dataclass
class RefNames:
    """The names refs print before numbers, as the paper's packages and its own settings give them."""

    autoref: dict[str, str] = field(default_factory=lambda: dict(_AUTOREF))
    cref: dict[str, tuple[str, str]] = field(default_factory=lambda: dict(_CREF))
    Cref: dict[str, tuple[str, str]] = field(default_factory=dict)  # noqa: N815 (cleveref's name)
    capitalise: bool = False

    def auto(self, t: Target) -> str:
        """hyperref's name: ``\\<type>autorefname``, else none (a counter it does not know prints
        its number alone); a theorem-like environment's title."""
        return self.autoref.get(t.type or t.kind) or self.autoref.get(t.kind) or _theorem_name(t)

    def clever(self, t: Target, upper: bool, plural: bool) -> str:
        key = t.type or t.kind
        if key in _SECTIONS:
            key = "section"
        upper = upper or self.capitalise
        if upper and key in self.Cref:
            return self.Cref[key][plural]
        names = self.cref.get(key) or self.cref.get(t.kind)
        if names is None:  # a theorem-like environment: its name as declared (thmtools tells cleveref so)
            title = _theorem_name(t)
            names = (title, title + "s") if title else ("", "")
        name = names[plural]
        return name[:1].upper() + name[1:] if upper else name


def _theorem_name(t: Target) -> str:
    """A theorem-like environment's title is its kind ("Lemma"); other kinds print no name."""
    return t.kind if t.kind[:1].isupper() else ""


def ref_names(source: str) -> RefNames:
    """The names of ``source``'s packages and settings: cleveref's options and ``\\crefname``
    (``\\Crefname``), hyperref's ``\\<counter>autorefname`` redefined."""
    names = RefNames()
    opts = _CLEVEREF_RE.search(source)
    if opts:
        options = {o.strip() for o in opts.group(1).split(",")}
        names.capitalise = bool(options & {"capitalise", "capitalize"})
        if "noabbrev" in options:
            names.cref.update(_NOABBREV)
    for m in _CREFNAME_RE.finditer(source):
        table = names.cref if m.group(1) == "crefname" else names.Cref
        table[m.group(2)] = (m.group(3).strip(), m.group(4).strip())
    for m in _AUTOREFNAME_RE.finditer(source):
        names.autoref[m.group(1)] = m.group(2).strip()
    for m in _LET_AUTOREFNAME_RE.finditer(source):  # \let\subsectionautorefname\sectionautorefname
        if m.group(2) in names.autoref:
            names.autoref[m.group(1)] = names.autoref[m.group(2)]
    return names


def emit_refs(b: Builder, cmd: str, labels: list[str], ctx: Context) -> None:
    cmd = _ZREFS.get(cmd, cmd)
    if cmd == "pageref":
        return  # a page number: no page is known
    if cmd in _NAMED_REFS:
        _emit_named(b, _NAMED_REFS[cmd], labels, ctx)
        return
    names = ctx.ref_names or RefNames()
    if cmd in ("cref", "Cref") and len(labels) > 1:
        _emit_clever_list(b, cmd == "Cref", labels, ctx, names)
        return
    for n, label in enumerate(labels):
        if n:
            b.add(", ")
        t = ctx.labels.get(label)
        if t is None:
            b.span("??", None, b.refs)
            continue
        num = t.num
        if cmd == "nameref":  # hyperref: the heading's title (a float's caption is not kept here)
            b.span(t.name or t.num, t.ref_id, b.refs)
            continue
        if cmd == "eqref" or (cmd in ("cref", "Cref") and t.kind == "equation"):
            num = f"({num})"
        if cmd in ("autoref", "Autoref"):
            name = names.auto(t)
            name = name[:1].upper() + name[1:] if cmd == "Autoref" else name
            num = f"{name}\u00a0{num}".strip() if name else num
        elif cmd in ("cref", "Cref"):
            num = f"{names.clever(t, cmd == 'Cref', False)} {num}".strip()
        b.span(num.replace("\u00a0", " "), t.ref_id, b.refs)


def _emit_clever_list(b: Builder, upper: bool, labels: list[str], ctx: Context, names: RefNames) -> None:
    """cleveref's ``\\cref{a,b,c}``: labels of one kind together, sorted, consecutive numbers
    compressed ("figs. 1 to 3 and 5"), kinds joined with "and" ("fig. 1 and table 2")."""
    groups: list[tuple[str, list[tuple[str, Target | None]]]] = []
    for label in labels:
        t = ctx.labels.get(label)
        key = (t.type or t.kind) if t else "??"
        key = "section" if key in _SECTIONS else key
        if groups and groups[-1][0] == key:
            groups[-1][1].append((label, t))
        else:
            groups.append((key, [(label, t)]))
    for g, (_key, members) in enumerate(groups):
        if g:
            b.add(" and " if g == len(groups) - 1 else ", ")
        targets = [t for _, t in members]
        if any(t is None for t in targets):
            for n, t in enumerate(targets):
                b.add(", " if n else "")
                b.span(t.num if t else "??", t.ref_id if t else None, b.refs)
            continue
        runs = _runs([t for t in targets if t is not None])
        plural = len(targets) > 1
        first = targets[0]
        assert first is not None
        name = names.clever(first, upper and g == 0, plural)
        paren = first.kind == "equation"
        for n, run in enumerate(runs):
            if n:
                b.add(" and " if n == len(runs) - 1 else ", ")
            start = b.size
            for k, t in enumerate(run if len(run) < 3 else [run[0], run[-1]]):
                num = f"({t.num})" if paren else t.num
                if n == 0 and k == 0 and name:
                    num = f"{name} {num}"
                if k:
                    b.add(" and " if len(run) == 2 else " to ")
                b.span(num, t.ref_id, b.refs)
            if len(run) > 2:  # "1 to 3": the labels it covers, each a span over the range
                covered = b.refs[-1].model_copy(update={"start": start, "text": "".join(b.parts)[start:]})
                b.refs.extend(covered.model_copy(update={"ref_id": t.ref_id}) for t in run[1:-1])


def _runs(targets: list[Target]) -> list[list[Target]]:
    """Targets sorted by number (when numbers they are), consecutive ones in runs."""
    if not all(t.num.isdigit() for t in targets):
        return [[t] for t in targets]
    ordered = sorted(targets, key=lambda t: int(t.num))
    runs: list[list[Target]] = []
    for t in ordered:
        if runs and int(runs[-1][-1].num) + 1 == int(t.num):
            runs[-1].append(t)
        else:
            runs.append([t])
    return runs


def _emit_named(b: Builder, name: str, labels: list[str], ctx: Context) -> None:
    """jmlr's ``\\figureref{a,b}``: "Figures 1 and 2" (one label: "Figure 1", one span)."""
    targets = [ctx.labels.get(lab) for lab in labels]
    if len(targets) == 1:
        t = targets[0]
        b.span(f"{name} {t.num}" if t else "??", t.ref_id if t else None, b.refs)
        return
    b.add(name + "s ")
    for n, t in enumerate(targets):
        if n:
            b.add(" and " if n == len(targets) - 1 else ", ")
        b.span(t.num if t else "??", t.ref_id if t else None, b.refs)
