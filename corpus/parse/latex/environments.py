"""Environments that leave the body text: figures, tables, algorithms and display equations
(kept as ``ref_entries``), the abstract and acknowledgments (read apart), and blocks that are
no text (bibliographies, pictures, listings); the paper's own environments that wrap a table,
a figure or an equation are found from their definitions."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from corpus.parse.document import RefEntry
from corpus.parse.latex.braces import LatexError, match_brace, read_group, read_optional
from corpus.parse.latex.recovery import paragraph_end
from corpus.parse.latex.spans import equation_mark

_ENV_RE = re.compile(r"\\(begin|end)\s*\{([^{}]+)\}")
FIGURE_ENVS = frozenset(
    "figure figure* wrapfigure SCfigure SCfigure* sidewaysfigure sidewaysfigure* subfigure* figwindow teaserfigure".split()
)
TABLE_ENVS = frozenset(
    "table table* sidewaystable sidewaystable* SCtable SCtable* wraptable longtable longtable* tabular tabular* tabularx tabulary supertabular deluxetable deluxetable*".split()
)
# math-only environments: met at the top level inside a display (\\[ ... \\]) they are its equation,
# unnumbered; inside inline math ($A = \\left[\\begin{array}...\\right]$) part of its text
MATH_ONLY_ENVS = frozenset(
    "array matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases aligned gathered split".split()
)
MATH_ENVS = (
    frozenset(
        """equation equation* align align* eqnarray eqnarray* gather gather* multline multline* displaymath
    flalign flalign* alignat alignat* dmath dmath* math IEEEeqnarray IEEEeqnarray*""".split()
    )
    | MATH_ONLY_ENVS
)
_DROP_ENVS = frozenset(
    """thebibliography references tikzpicture picture algorithmic
    keywords keyword keypoints highlights graphicalabstract IEEEkeywords CCSXML tocentry pspicture minted code
    circuitikz pgfpicture tikzcd""".split()
)
# Front matter set apart: a title page, elsarticle's and imsart's frontmatter, imsart's author group,
# the title block of a \twocolumn[...] (RSC), Nature's affiliations. No body text, but the abstract
# in them is the abstract.
FRONT_ENVS = frozenset("titlepage frontmatter aug @twocolumnfalse affiliations".split())
ABSTRACT_ENVS = frozenset({"abstract", "abstract*"})  # Optica's template writes abstract*
_ALGORITHM_ENVS = frozenset("algorithm algorithm* algorithm2e algorithm2e*".split())
_LISTING_ENVS = frozenset({"lstlisting", "listing"})  # listings' code and minted's float
FLOAT_KIND = dict.fromkeys(_ALGORITHM_ENVS, "algorithm") | dict.fromkeys(_LISTING_ENVS, "listing")
TABLE_FLOATS = frozenset(
    "table table* sidewaystable sidewaystable* SCtable SCtable* wraptable longtable longtable* deluxetable deluxetable* supertabular".split()
)
# the counter each kind of float steps at its caption (algorithm2e's is algocf; both print "Algorithm")
FLOAT_COUNTER = {"figure": "figure", "table": "table", "algorithm": "algorithm", "listing": "listing"}
ACK_ENVS = frozenset("acknowledgments acknowledgements acknowledgment acknowledgement acks".split())
ABSTRACT_MARK = "\ue021"  # where an abstract environment or a front-matter block was: front matter ends there
_FLOATCONTS_RE = re.compile(r"\\floatconts\s*\{([^{}]*)\}")
_LST_OPTION_RE = re.compile(r"(caption|title|label)\s*=\s*(\{(?:[^{}]|\{[^{}]*\})*\}|[^,\]]*)")
_LINE_LABEL_RE = re.compile(r"\\lstlinelabel\{([^{}]*)\}\{(\d+)\}")


def _unbrace(value: str) -> str:
    value = value.strip()
    return value[1:-1] if value.startswith("{") and value.endswith("}") else value


LABEL_RE = re.compile(r"\\label\s*\{([^{}]*)\}")
_CAPTION_RE = re.compile(r"\\(?:caption(?:of\s*\{[^{}]*\})?|tablecaption)\*?(?![A-Za-z])")


@dataclass
class Region:
    start: int
    end: int
    name: str
    content: str
    ref_id: str | None = None  # the ref entry it became
    kind: str | None = None  # figure, table, algorithm, listing, equation (None: not numbered)
    options: dict[str, str] = field(default_factory=dict)  # a listing's caption=, label=


_FIRST_HEADING_RE = re.compile(r"\\(?:part|chapter|section|subsection)\*?\s*[\[{]")
_MAX_UNCLOSED = 50  # beyond this the text is not a paper TeX would typeset: fail it


def environments(
    body: str, user: dict[str, str] | None = None, warnings: list[str] | None = None
) -> list[Region]:
    """Top-level regions of environments that leave the body text, in order (``user``: the
    paper's own environments that are figures, tables or equations). One never closed ends
    where its paragraph ends, as TeX ends an unclosed display at the paragraph's end ("Missing
    $ inserted"), with an ``unbalanced_environment`` warning; the rest is read on from there.
    Front-matter blocks (:data:`FRONT_ENVS`) are regions before the first heading only: a
    ``@twocolumnfalse`` further on holds a full-width float, a ``titlepage`` a supplement's."""
    user = user or {}
    regions: list[Region] = []
    start = 0
    heading = _FIRST_HEADING_RE.search(body)
    front_end = heading.start() if heading else len(body)
    for _ in range(_MAX_UNCLOSED + 1):
        found, unclosed = _scan(body, start, user, front_end)
        regions += found
        if unclosed is None:
            return regions
        begin, name, content = unclosed
        end = paragraph_end(body, content)
        if warnings is not None:
            line = body.count("\n", 0, begin) + 1
            warnings.append(
                f"unbalanced_environment: \\begin{{{name}}} (body line {line}) never closed; closed where its paragraph ends"
            )
        regions.append(Region(begin, end, name, body[content:end]))
        start = end
    raise LatexError("unbalanced_environment", f"more than {_MAX_UNCLOSED} environments never closed")


def _scan(
    body: str, start: int, user: dict[str, str], front_end: int
) -> tuple[list[Region], tuple[int, str, int] | None]:
    """The regions from ``start`` on, and the one left open (its start, name and content start)."""
    regions: list[Region] = []
    stack: list[str] = []
    active: tuple[int, int, str, int] | None = None  # (stack index, start, name, content start)
    for m in _ENV_RE.finditer(body, start):
        kind, name = m.group(1), m.group(2).strip()
        if kind == "begin":
            stack.append(name)
            if (
                active is None
                and not (name in MATH_ONLY_ENVS and _inline_text(body, m, name))
                and (
                    name in FIGURE_ENVS
                    or name in TABLE_ENVS
                    or name in MATH_ENVS
                    or name in _DROP_ENVS
                    or name in _ALGORITHM_ENVS
                    or name in _LISTING_ENVS
                    or name in ACK_ENVS
                    or name in user
                    or name in ABSTRACT_ENVS
                    or (name in FRONT_ENVS and m.start() < front_end)
                )
            ):
                active = (len(stack) - 1, m.start(), name, m.end())
            continue
        if name not in stack:
            continue  # a stray \end: LaTeX would stop; we ignore it
        idx = len(stack) - 1 - stack[::-1].index(name)
        del stack[idx:]
        if active is not None and idx <= active[0]:
            regions.append(Region(active[1], m.end(), active[2], body[active[3] : m.start()]))
            active = None
    return regions, (active[1], active[2], active[3]) if active is not None else None


_OTHER_BEGIN_RE = re.compile(r"\\begin\s*\{(?!(?:" + "|".join(sorted(MATH_ONLY_ENVS)) + r")\})")
_DOLLAR_RE = re.compile(r"(?<!\\)\$|\\[()]")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")


def _inline_text(body: str, m: re.Match, name: str) -> bool:
    """Whether the math-only environment begun by ``m`` is part of a sentence's inline math (read
    as its text): inside ``$...$`` and holding no other environment (an array of tikz pictures
    set in ``$...$`` is a picture, cut out whole)."""
    if not _in_inline_math(body, m.start()):
        return False
    end = body.find("\\end{" + name + "}", m.end())
    return end >= 0 and _OTHER_BEGIN_RE.search(body, m.end(), end) is None


def _in_inline_math(body: str, at: int) -> bool:
    """Whether ``body[at]`` sits inside inline math: an odd number of ``$`` (or an open ``\\(``)
    since its paragraph began (displays are ``displaymath`` environments by now)."""
    start = max(body.rfind("\n\n", 0, at), at - 5000, 0)
    depth = 0
    for m in _DOLLAR_RE.finditer(body, start, at):
        tok = m.group()
        depth = (depth ^ 1) if tok == "$" else 1 if tok == "\\(" else 0
    return depth == 1


_NEWENV_RE = re.compile(r"\\(?:re)?newenvironment\*?\s*\{\s*([^{}]+?)\s*\}")
_BEGIN_ARG_RE = re.compile(r"\\begin\s*\{([^{}]+)\}\s*\{")
_NEWFLOAT_RE = re.compile(
    r"\\(?:newfloat|DeclareFloatingEnvironment|DeclareNewFloatType)\s*(?:\[[^\]]*\])?\s*\{\s*([^{}]+?)\s*\}"
)
_COLUMN_SPEC = re.compile(r"[lcrLCRXpmbSJs|@!<>*\d.\s]*[lcrLCRX][lcrLCRXpmbSJs|@!<>*\d.\s]*")
_KNOWN_ENVS = (
    FIGURE_ENVS
    | TABLE_ENVS
    | MATH_ENVS
    | _DROP_ENVS
    | _ALGORITHM_ENVS
    | _LISTING_ENVS
    | ACK_ENVS
    | FRONT_ENVS
)
_INNER_ABSTRACT_RE = re.compile(r"\\begin\s*\{abstract\*?\}(.*?)\\end\s*\{abstract\*?\}", re.S)
# Environments the parser reads by name: a paper's own definition of one is not expanded.
INTERPRETED_ENVS = _KNOWN_ENVS | frozenset(
    """abstract abstract* document thebibliography references itemize enumerate description appendix
    appendices subappendices frontmatter mainmatter backmatter minipage center quote quotation verse
    subequations comment verbatim""".split()
)


def user_environments(definitions: str, body: str) -> dict[str, str]:
    """The paper's own environments that hold a figure, a table or an equation: those its
    ``\\newenvironment`` opens with one, and unknown ones that take a column spec and hold
    ``&`` cells (``\\begin{resultstable}{|l|c|}``); and the floats it declares (``\\newfloat``,
    ``\\DeclareFloatingEnvironment``: a box, a listing of its own). Name -> figure, table,
    equation or float."""
    out: dict[str, str] = {}
    for m in _NEWENV_RE.finditer(definitions):
        _, i = read_optional(definitions, m.end())
        _, i = read_optional(definitions, i)
        try:
            begin, _ = read_group(definitions, i)
        except LatexError:
            continue
        for inner in re.findall(r"\\begin\s*\{([^{}]+)\}", begin or ""):
            inner = inner.strip()
            kind = (
                "figure" if inner in FIGURE_ENVS else "table" if inner in TABLE_ENVS
                else "equation" if inner in MATH_ENVS else None
            )  # fmt: skip
            if kind:
                out.setdefault(m.group(1), kind)
                break
    for m in _NEWFLOAT_RE.finditer(definitions):  # float's \newfloat, newfloat's declarations
        out.setdefault(m.group(1).strip(), "float")
    tried: dict[str, int] = {}  # a few occurrences of a few names: linear on any text
    for m in _BEGIN_ARG_RE.finditer(body):
        name = m.group(1).strip()
        if name in out or name in _KNOWN_ENVS or tried.get(name, 0) >= 3 or len(tried) > 50:
            continue
        tried[name] = tried.get(name, 0) + 1
        end = match_brace(body, m.end() - 1)
        spec = re.sub(r"\{[^{}]*\}", "", body[m.end() : end - 1]) if end > 0 else ""
        close = body.find("\\end{" + name + "}", m.end())
        if _COLUMN_SPEC.fullmatch(spec) and close > 0 and "&" in body[m.end() : close]:
            out[name] = "table"
    return out


def caption(content: str) -> str:
    """The LaTeX of an environment's (last) caption, labels removed."""
    caps = list(_CAPTION_RE.finditer(content))
    if not caps:
        return ""
    m = caps[-1]
    _, i = read_optional(content, m.end())
    try:
        cap, _ = read_group(content, i)
    except LatexError:
        return ""
    return LABEL_RE.sub("", cap or "")


_CELL_BREAK_RE = re.compile(r"&|\\\\|\n[ \t]*\n|\\(?:begin|end)\s*\{[^{}]*\}")
_PROSE_WORD_RE = re.compile(r"(?<![\\A-Za-z])[a-z]{2,}(?![A-Za-z])")  # names and titles are capitalised


def _front_abstracts(reg: Region) -> list[str]:
    """The abstracts in a front-matter block: its abstract environments; in a journal's front
    matter (elsarticle's and imsart's ``frontmatter``, the title block of a two-column page,
    ``@twocolumnfalse``, RSC's) that has none, the one run of prose in it (20 lower-case words at
    least: the rest are a title, names and dates). A title page is no journal's: no prose of it
    is taken (a thesis's declaration)."""
    found = [m.group(1) for m in _INNER_ABSTRACT_RE.finditer(reg.content)]
    if found or reg.name not in ("@twocolumnfalse", "frontmatter"):
        return found
    cells = _CELL_BREAK_RE.split(reg.content)
    words = [len(_PROSE_WORD_RE.findall(cell)) for cell in cells]
    best = max(range(len(cells)), key=words.__getitem__, default=-1)
    return [cells[best]] if best >= 0 and words[best] >= 20 else []


@dataclass
class TakenOut:
    """What :func:`take_out` found: the body left, and the pieces read apart from it."""

    body: str
    abstracts: list[str]  # abstract environments' LaTeX
    acknowledgments: list[str]
    captions: list[tuple[str, str]]  # (ref_id, caption LaTeX), converted once every label is known
    regions: list[Region] = field(default_factory=list)  # every environment cut out, by its mark
    equations: list[int] = field(default_factory=list)  # EQREFn -> its index in ``regions``


def region_mark(n: int) -> str:
    """What an environment cut out of the body leaves: a mark naming it, where
    :mod:`corpus.parse.latex.numbering` steps its counters in document order."""
    return f"\ue024{n}\ue025"


def region_kind(name: str) -> str | None:
    """What an environment is to LaTeX's counters: a float (its counter's kind), a display
    equation, or None."""
    if name in MATH_ENVS:
        return "equation"
    if name in FIGURE_ENVS:
        return "figure"
    if name in TABLE_FLOATS:
        return "table"
    return FLOAT_KIND.get(name)


def take_out(
    body: str,
    user_envs: dict[str, str],
    ref_entries: dict[str, RefEntry],
    warnings: list[str] | None = None,
) -> TakenOut:
    """Cut the environments that leave the body: floats and display equations become ref
    entries (``FIGREFn``, ``TABREFn``, ``ALGREFn``, ``EQREFn``, numbered later, where the
    walk of :mod:`corpus.parse.latex.numbering` meets their mark); a display equation leaves
    a :data:`GAP` (a space, not a break), every other one a :func:`region_mark`."""
    counts = {"figure": 0, "table": 0, "algorithm": 0, "listing": 0, "equation": 0, "float": 0}
    body = _unwrap_twocolumn(body)
    found = TakenOut("", [], [], [])
    captions_of = _CaptionsOf(counts, found, ref_entries)
    out, pos = [], 0
    for reg in environments(body, user_envs, warnings):
        start = reg.start
        if (
            body[start - 1 : start] == "$"
            and body[reg.end : reg.end + 1] == "$"
            and body[start - 2 : start] != "\\$"
        ):
            start, reg.end = start - 1, reg.end + 1  # a picture set as a formula ($\begin{tikzcd}...$)
        out.append(captions_of.gap(body[pos:start]))
        pos = reg.end
        name = reg.name
        if name in ABSTRACT_ENVS or name in FRONT_ENVS:
            found.abstracts.extend(_front_abstracts(reg) if name in FRONT_ENVS else [reg.content])
            out.append(ABSTRACT_MARK)  # where front matter may end (front.split_front)
            continue
        if name in ACK_ENVS:
            found.acknowledgments.append(reg.content)
            continue
        if name in MATH_ENVS or user_envs.get(name) == "equation":
            n = counts["equation"]
            counts["equation"] += 1
            reg.ref_id, reg.kind = f"EQREF{n}", "equation"
            found.equations.append(len(found.regions))
            found.regions.append(reg)
            out.append(equation_mark(n))  # a space where it stood, never a paragraph break
            ref_entries[reg.ref_id] = RefEntry(text="", latex=reg.content.strip(), type="equation", num=None)
            continue
        mark = region_mark(len(found.regions))
        found.regions.append(reg)
        kind = (
            FLOAT_KIND.get(name)
            or user_envs.get(name)
            or ("figure" if name in FIGURE_ENVS else "table" if name in TABLE_ENVS else None)
        )
        reg.kind = user_envs.get(name) or region_kind(name)
        if kind is None:
            out.append(mark)
            continue
        cap = caption(reg.content)
        has_labels = (
            LABEL_RE.search(reg.content) is not None or _FLOATCONTS_RE.search(reg.content) is not None
        )
        if name == "lstlisting":  # \begin{lstlisting}[caption={...}, label=...] (latex_macros.listings)
            out.append("\n\n")  # not a float: a display between paragraphs
            opts = dict(
                _LST_OPTION_RE.findall(reg.content.split("]", 1)[0] if reg.content.startswith("[") else "")
            )
            reg.options = {k: _unbrace(v) for k, v in opts.items()}
            cap = reg.options.get("caption", reg.options.get("title", ""))
            has_labels = bool(reg.options.get("label")) or bool(_LINE_LABEL_RE.search(reg.content))
        out.append(mark)
        if not cap.strip() and not has_labels and (name == "lstlisting" or name.startswith("tabular")):
            continue
        captions_of.pending = None  # a float's counter stepped: a label after it is the float's
        counts[kind] += 1  # a float the paper declares (kind "float") counts on its own, in the walk
        reg.ref_id = f"{_PREFIX[kind]}{counts[kind] - 1}"
        found.captions.append((reg.ref_id, cap))
        ref_entries[reg.ref_id] = RefEntry(
            latex=reg.content.strip() if kind not in ("figure", "listing") else None,
            type=kind if kind in ("figure", "table") else "other",  # type: ignore[arg-type]
            num=None,
        )
    out.append(captions_of.gap(body[pos:]))
    found.body = "".join(out)
    return found


_TWOCOLUMN_RE = re.compile(r"\\twocolumn(?![A-Za-z])\s*(?=\[)")


def _unwrap_twocolumn(body: str) -> str:
    """``\\twocolumn[...]`` as what it sets at the top of the page (a title block, a full-width
    float): its content, read like the rest; the brackets are no text."""
    if "\\twocolumn" not in body:
        return body
    out, pos = [], 0
    for m in _TWOCOLUMN_RE.finditer(body):
        if m.start() < pos:
            continue
        content, end = read_optional(body, m.end())
        if content is None:
            continue
        out.append(body[pos : m.start()] + "\n" + content + "\n")
        pos = end
    out.append(body[pos:])
    return "".join(out)


_CAPTIONOF_RE = re.compile(r"\\captionof\*?\s*\{\s*([A-Za-z]+)\s*\}")
# the text up to a \label, with no blank line and no other caption before it
_PENDING_LABEL_RE = re.compile(
    r"(?:(?!\n[ \t]*\n)[^\\]|\\(?!label\b|captionof\b))*?(?P<cmd>\\label\s*\{(?P<label>[^{}]*)\})"
)
_PREFIX = {
    "figure": "FIGREF",
    "table": "TABREF",
    "algorithm": "ALGREF",
    "listing": "LSTREF",
    "float": "FLOATREF",
}


@dataclass
class _CaptionsOf:
    """``\\captionof{table}{...}`` (caption's captions set in a minipage or a centred block,
    outside any float): each is a caption, never body text ("tableBoth strategies..."), cut
    out as a float of its kind with that caption (a :func:`region_mark` where it stood, numbered
    by the walk with the floats of its kind). Its label is the next ``\\label`` before a blank
    line or another caption, wherever it stands (after the tabular it captions: LaTeX's
    \\label takes the last counter stepped)."""

    counts: dict[str, int]
    found: TakenOut
    ref_entries: dict[str, RefEntry]
    pending: Region | None = None

    def gap(self, text: str) -> str:
        """``text`` (body between two regions) without its captions and their labels."""
        if self.pending is None and "\\captionof" not in text:
            return text
        out, pos = [], 0
        for m in _CAPTIONOF_RE.finditer(text):
            kind = FLOAT_KIND.get(m.group(1), m.group(1))
            if m.start() < pos or kind not in FLOAT_COUNTER:
                continue
            _, i = read_optional(text, m.end())
            try:
                cap, i = read_group(text, i)
            except LatexError:
                continue
            if cap is None:
                continue
            out.append(self._label(text[pos : m.start()]))
            self.counts[kind] += 1
            reg = Region(
                m.start(), i, kind, f"\\caption{{{cap}}}", f"{_PREFIX[kind]}{self.counts[kind] - 1}", kind
            )
            self.found.captions.append((reg.ref_id, LABEL_RE.sub("", cap)))
            self.ref_entries[reg.ref_id] = RefEntry(
                type=kind if kind in ("figure", "table") else "other", num=None
            )  # type: ignore[arg-type]
            out.append(region_mark(len(self.found.regions)))
            self.found.regions.append(reg)
            self.pending = None if LABEL_RE.search(cap) else reg
            pos = i
        out.append(self._label(text[pos:]))
        return "".join(out)

    def _label(self, text: str) -> str:
        """``text`` without the label of the caption before it, when it holds one before a blank
        line (the label goes to the caption's region, where the walk gives it the number)."""
        if self.pending is None:
            return text
        m = _PENDING_LABEL_RE.match(text)
        if m is None:
            if _BLANK_LINE_RE.search(text):
                self.pending = None
            return text
        self.pending.content += m.group("cmd")
        self.pending = None
        return text[: m.start("cmd")] + text[m.end() :]
