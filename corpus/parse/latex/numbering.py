"""Counters stepped as LaTeX steps them, in document order, and each ``\\label`` given the
current label: what the last ``\\refstepcounter`` in the current group made it.

One walk over the document (preamble, front matter, body, and each environment cut out of
the body at the place it stood) steps every counter LaTeX steps: headings (to
``secnumdepth``), floats at their caption (sub-captions lettered), display equations row by
row (``\\tag``, ``subequations``), theorem-like environments, enumerate items, the lines of
``algorithmic`` (algorithmicx's ``\\State``, algorithmic's ``\\STATE``), and the paper's own
``\\refstepcounter``, ``\\stepcounter``, ``\\setcounter``, ``\\addtocounter`` on counters
declared with ``\\newcounter`` (reset within their parent) or not declared at all. Groups
(braces and environments) end what they set, as TeX ends a local ``\\@currentlabel``.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field, replace

from corpus.parse.document import RefEntry
from corpus.parse.latex.braces import LatexError, control_words, read_arg, read_group, read_optional
from corpus.parse.latex.counters import LEVEL_COUNTERS, ClassCounters, Counters, take_the_definitions
from corpus.parse.latex.environments import FLOAT_COUNTER, Region, region_kind
from corpus.parse.latex.equations import equation_rows
from corpus.parse.latex.labels import Heading, Target, Theorem, TheoremHead, head

REGION_MARK_RE = re.compile("\ue024(\\d+)\ue025")
THE_MARK_RE = re.compile("\ue026(\\d+)\ue027")
MARKS_RE = re.compile("[\ue024\ue026]\\d+[\ue025\ue027]")

_ALGX_LINES = frozenset(
    """State BState If ElsIf Else EndIf For ForAll EndFor While EndWhile Repeat Until Loop EndLoop
    Procedure EndProcedure Function EndFunction""".split()
)  # algpseudocode's entities: each an \item that steps ALG@line
_ALGX_ENDS = frozenset(n for n in _ALGX_LINES if n.startswith("End"))
_ALGORITHMIC_LINES = frozenset(
    "STATE STMT PRINT RETURN IF ELSE ELSIF FOR FORALL WHILE LOOP REPEAT UNTIL INPUTS OUTPUTS GLOBALS BODY".split()
)  # algorithmic.sty's \ALC@it commands
_ALGORITHMIC_ENDS = frozenset("ENDIF ENDFOR ENDWHILE ENDLOOP".split())
_ENUMERATES = frozenset("enumerate enumerate* compactenum asparaenum inparaenum".split())
_LISTS = _ENUMERATES | frozenset(
    "itemize itemize* description description* compactitem compactdesc list".split()
)
_SUB_FLOATS = frozenset("subfigure subtable subfigure* subtable*".split())
_ENUM_COUNTERS = ("enumi", "enumii", "enumiii", "enumiv")
_LEVEL_KIND = {-1: "part", 0: "chapter"}
# what \refstepcounter{c} of a LaTeX counter refers to (the paper's own counters: "other", no name)
_COUNTER_KINDS = {
    "figure": "figure", "table": "table", "equation": "equation", "footnote": "footnote",
    "section": "section", "subsection": "subsection", "subsubsection": "subsubsection",
    "chapter": "chapter", "part": "part", "enumi": "item", "enumii": "item", "enumiii": "item",
    "enumiv": "item", "algorithm": "algorithm",
}  # fmt: skip

_EVENTS = (
    r"\\(?P<env>begin|end)\s*\{(?P<name>[^{}]+)\}"
    r"|\\label\s*\{(?P<label>[^{}]*)\}"
    r"|\\(?P<cmd>refstepcounter|stepcounter|addtocounter|setcounter|newcounter|numberwithin|counterwithin\*?"
    r"|counterwithout\*?|@addtoreset|appendix|appendices|caption|captionof|subcaption|subfloat|subfigure|subtable"
    r"|tablecaption|item|maketitle"
    r"|lstlinelabel|floatconts|newenvironment|renewenvironment|footnote|footnotemark|footnotetext)(?![A-Za-z@])"
    r"|\ue024(?P<region>\d+)\ue025|\ue020(?P<eq>\d+)\ue023|\ue026(?P<the>\d+)\ue027"
    r"|\\(?P<line>LINES)(?![A-Za-z@])"
)


def _events(lines: set[str] | frozenset[str]) -> re.Pattern:
    """The walk's events, with the line commands of ``algorithmic`` (its own, and those a
    paper declares with algorithmicx's ``\\algblock``...)."""
    return re.compile(_EVENTS.replace("LINES", control_words(lines)))


_BRACE_RE = re.compile(r"[{}]")
_SCRIPT_RE = re.compile(
    r"\\(?P<cmd>stepcounter|addtocounter|setcounter|newcounter|numberwithin|counterwithin\*?|counterwithout\*?"
    r"|@addtoreset)(?![A-Za-z@])|\ue026(?P<the>\d+)\ue027"
)
_ALL_LINES = _ALGX_LINES | _ALGORITHMIC_LINES | _ALGORITHMIC_ENDS
_EVENT_RE = _events(_ALL_LINES)
_INT_RE = re.compile(r"\s*(-?\s*\d+)\s*$")
_VALUE_RE = re.compile(r"\s*(-)?\s*\\value\s*\{\s*([^{}]+?)\s*\}\s*$")
_CAPTION_RE = re.compile(r"\\(?:caption|tablecaption)(?![A-Za-z@])(?!\s*\*)|\\captionof\s*\{")
# subcaption's sub-floats: the caption package steps the float's counter for them, caption or not
_SUBCAPTION_ENV_RE = re.compile(r"\\begin\s*\{sub(?:figure|table)\*?\}")
# environments inside a float whose captions are their own: sub-figures, a float in a float
_SUB_ENV_RE = re.compile(
    r"\\begin\s*\{((?:sub(?:figure|table)|algorithm|algorithm2e|table|figure|wrapfigure|wraptable)\*?)\}.*?\\end\s*\{\1\}",
    re.S,
)
_ENUM_STYLE_RE = re.compile(r"\\(arabic|alph|Alph|roman|Roman)\*")
_SHORT_LABEL_RE = re.compile(r"[aAiI1]")
_KEYVAL_RE = re.compile(r"([\w*]+)\s*=\s*(\{(?:[^{}]|\{[^{}]*\})*\}|[^,]*)")
_SHORT_STYLES = {"a": "alph", "A": "Alph", "i": "roman", "I": "Roman", "1": "arabic"}
_LABEL_RE = re.compile(r"\\label\s*\{([^{}]*)\}")
_NOEND_RE = re.compile(
    r"\\usepackage\s*\[[^\]]*\bnoend\b[^\]]*\]\s*\{\s*(?:algpseudocode|algorithmic|algcompatible)"
)
_ALG_NOTEXT_RE = re.compile(r"\\alg(?:text\*|notext)\s*(?:\[[^\]]*\])?\s*\{\s*(\w+)\s*\}")
_ALG_BLOCK_RE = re.compile(
    r"\\alg(?:block|cblock|loop|cloop|blockdefx|cblockdefx|loopdefx|cloopdefx|blockx|cblockx)\s*(?:\[[^\]]*\])?"
    r"\s*\{\s*(\w+)\s*\}(?:\s*\{\s*(\w+)\s*\})?"
)


# a float being walked: (counter, kind, ref id, the counter's value its first caption was numbered
# with at its begin, None once that caption is met)
_Float = tuple[str, str, str | None, int | None]


@dataclass
class _Group:
    kind: str  # "{" or an environment's name
    current: Target | None  # the current label when it opened
    anchor: str | None
    line: str | None  # the algorithmic line counter that was the current label
    float: _Float | None  # the float it is in
    value: tuple[str, int] | None = None  # a counter's value set back at its end (subequations)
    the: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # \thec, \p@c set back


@dataclass
class Document:
    """What the walk needs to know of the paper beyond the text it walks."""

    classes: ClassCounters
    theorems: dict[str, Theorem]
    regions: list[Region] = field(default_factory=list)  # what take_out cut, by mark
    equations: list[int] = field(default_factory=list)  # EQREFn -> its region
    the_defs: list[tuple[str, str]] = field(default_factory=list)  # (counter, \thec's LaTeX), by mark
    alg_options: str = ""  # what the preamble says of algorithmic line entities
    # the class and packages the e-print ships, their definitions out: (LaTeX, its \the definitions)
    scripts: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)


class Numbering:
    """The walk: counters, the current label, and the labels registered so far."""

    def __init__(self, doc: Document, labels: dict[str, Target], ref_entries: dict[str, RefEntry]) -> None:
        self.doc = doc
        self.c: Counters = doc.classes.counters
        self.c.set("secnumdepth", doc.classes.secnumdepth)
        self.labels = labels
        self.ref_entries = ref_entries
        self.current: Target | None = None
        self.line: str | None = None  # an algorithmic's line counter, while it is the current label
        self.float: _Float | None = None  # the float being walked
        self.group_target: Target | None = None  # a subequations' number, until its first display
        self.anchor: str | None = None  # the ref entry labels fall in (float, equation, heading)
        self.stack: list[_Group] = []
        self.braces = 0  # brace groups opened since the state last changed (pushed when it does)
        self.heads: list[TheoremHead] = []
        self.user_envs: dict[str, str] = {}  # the paper's \newenvironment: name -> begin code
        self.expanding: set[str] = set()  # environments whose begin code is being walked
        self.appendix = False
        for thm in doc.theorems.values():
            if thm.numbered:
                self.c.define(thm.counter)
                if thm.within:
                    self.c.number_within(thm.counter, thm.within)
        noend = _NOEND_RE.search(doc.alg_options) is not None
        self.alg_lines = set(_ALGX_LINES - (_ALGX_ENDS if noend else set()))
        self.alg_lines |= _ALGORITHMIC_LINES | (set() if noend else _ALGORITHMIC_ENDS)
        for m in _ALG_BLOCK_RE.finditer(doc.alg_options):
            self.alg_lines.update(n for n in m.groups() if n)
        self.alg_lines -= set(_ALG_NOTEXT_RE.findall(doc.alg_options))
        self.events = _EVENT_RE if self.alg_lines <= _ALL_LINES else _events(self.alg_lines | _ALL_LINES)

    # ----------------------------------------------------------------- the walk

    def walk(self, text: str, headings: list[Heading] | None = None, body: bool = False) -> None:
        """Every event of ``text`` in order; ``headings`` are the body's, by position;
        ``body``: theorem headings are kept (their positions are the body's). Braces are no
        events: they are counted between events (:meth:`_braces`)."""
        headings = headings or []
        k, n = 0, len(headings)
        pos = 0  # where the text read so far ends
        bare = text.replace("\\\\", "  ").replace("\\{", "  ").replace("\\}", "  ")  # same length
        for m in self.events.finditer(text):
            at = m.start()
            if at < pos:
                continue  # inside an environment read already
            while k < n and headings[k].start <= at:
                h = headings[k]
                if h.start >= pos:
                    self._braces(bare, pos, h.start)
                    pos = h.start
                self._heading(h)
                k += 1
            self._braces(bare, pos, at)
            pos = m.end()
            if m.lastgroup is not None:
                with contextlib.suppress(LatexError):  # an argument never closed: the walk goes on
                    pos = self._event(text, m, body)
        while k < n:
            self._heading(headings[k])
            k += 1

    def _braces(self, bare: str, start: int, end: int) -> None:
        """The groups ``bare[start:end]`` opens and closes. Counted (C-speed) while no group
        holds a state of its own; one by one while one does, to end it where it closes."""
        if start >= end:
            return
        if not (self.stack and self.stack[-1].kind == "{"):
            opened = bare.count("{", start, end)
            if opened or self.braces:
                self.braces = max(self.braces + opened - bare.count("}", start, end), 0)
            return
        for m in _BRACE_RE.finditer(bare, start, end):
            if m.group() == "{":
                self.braces += 1
            elif self.braces:
                self.braces -= 1
            elif self.stack and self.stack[-1].kind == "{":
                self._pop(len(self.stack) - 1)

    def _event(self, text: str, m: re.Match, body: bool) -> int:
        kind = m.lastgroup
        if kind == "label":
            self._label(m["label"].strip())
        elif kind == "name":
            return self._environment(text, m, body)
        elif kind == "cmd":
            return self._command(text, m)
        elif kind == "line":
            self._algorithm_line(m["line"])
        elif kind == "region":
            self._region(self.doc.regions[int(m["region"])])
        elif kind == "eq":
            n = int(m["eq"])
            if n < len(self.doc.equations):
                reg = self.doc.regions[self.doc.equations[n]]
                self._equation(reg.name, reg.content, reg.ref_id)
        elif kind == "the":  # \renewcommand{\thefigure}: local to the group it is in
            name, latex = self.doc.the_defs[int(m["the"])]
            self._touch()
            if self.stack:
                self._local(self.stack[-1], name)
            self.c.the[name] = latex
        return m.end()

    # ----------------------------------------------------------------- groups and labels

    def _touch(self) -> None:
        """Push the brace groups opened since the state last changed: each ends what the
        state is about to become."""
        if self.braces:
            g = _Group("{", self.current, self.anchor, self.line, self.float)
            self.stack.extend(_Group("{", g.current, g.anchor, g.line, g.float) for _ in range(self.braces))
            self.braces = 0

    def _push(self, kind: str) -> _Group:
        self._touch()
        g = _Group(kind, self.current, self.anchor, self.line, self.float)
        self.stack.append(g)
        return g

    def _local(self, g: _Group, counter: str) -> None:
        """``\\thecounter`` and ``\\p@counter`` set inside ``g`` are set back at its end."""
        g.the.setdefault(counter, (self.c.the.get(counter), self.c.prefix.get(counter)))

    def _pop(self, index: int) -> None:
        for g in reversed(self.stack[index:]):
            if g.value is not None:
                self.c.set(*g.value)
            for counter, (the, prefix) in g.the.items():
                for table, value in ((self.c.the, the), (self.c.prefix, prefix)):
                    if value is None:
                        table.pop(counter, None)
                    else:
                        table[counter] = value
        g = self.stack[index]
        del self.stack[index:]
        self.braces = 0
        self.current, self.anchor, self.line, self.float = g.current, g.anchor, g.line, g.float

    def _set(self, target: Target) -> None:
        self._touch()
        self.current = target
        self.line = None

    def _label(self, label: str) -> None:
        if not label:
            return
        if self.line is not None:  # algorithmicx: \@currentlabel is \theALG@line, read now
            self.labels[label] = Target(self.anchor, str(self.c.value(self.line)), "line", "line")
        elif self.current is not None:
            self.labels[label] = self.current
        else:  # nothing stepped yet: LaTeX's \ref prints nothing
            self.labels[label] = Target(self.anchor, "", "other")

    def _refstep(self, counter: str, kind: str, type_: str | None = None) -> Target:
        """``\\refstepcounter``: the counter stepped, the current label its ``\\ref``."""
        self.c.step(counter)
        target = Target(self.anchor, self.c.ref(counter), kind, type_ or counter)
        self._set(target)
        return target

    # ----------------------------------------------------------------- headings

    def _heading(self, h: Heading) -> None:
        counter = LEVEL_COUNTERS.get(h.level, "section")
        self._touch()
        self.anchor = h.ref_id
        numbered = not h.star and h.level <= self.c.value("secnumdepth")
        if h.level == 0 and not self.doc.classes.chapters:
            numbered = False
        if numbered:  # unnumbered: no \refstepcounter, a label after it is what was current before
            kind = _LEVEL_KIND.get(h.level) or ("appendix" if self.appendix and h.level == 1 else counter)
            self._refstep(counter, kind, kind).name = h.title
            h.num = self.c.printed(counter)
        else:  # hyperref's \nameref names the heading all the same (nothing stepped yet: \ref prints nothing)
            current = self.current if self.current is not None and self.current.num else None
            self._set(replace(current or Target(h.ref_id, "", "other"), name=h.title))
        entry = self.ref_entries.get(h.ref_id or "")
        if entry is not None:
            entry.num = h.num

    # ----------------------------------------------------------------- environments

    def _environment(self, text: str, m: re.Match, body: bool) -> int:
        name = m["name"].strip()
        if m["env"] == "end":
            for j in range(len(self.stack) - 1, -1, -1):
                if self.stack[j].kind == name:
                    self._pop(j)
                    break
            return m.end()
        end = m.end()
        kind = region_kind(name)
        if kind is not None:  # a float or display met in place (the preamble, or inside a region)
            close = _environment_end(text, end, name)
            if close is not None:
                content_end, after = close
                self._region(Region(m.start(), after, name, text[end:content_end]))
                return after
        g = self._push(name)
        code = self.user_envs.get(name)
        if code is not None and name not in self.expanding:  # the paper's own: its begin code runs
            self.expanding.add(name)
            self.walk(code)
            self.expanding.discard(name)
        thm = self.doc.theorems.get(name)
        if thm is not None:
            num = None
            if thm.numbered:
                self._refstep(thm.counter, thm.title, name)
                num = self.c.printed(thm.counter)
            if body:
                self.heads.append(head(text, m, name, thm, num))
        elif name == "proof":
            if body:
                self.heads.append(head(text, m, name, None, None))
        elif name in _ENUMERATES:
            return self._enumerate(text, end)
        elif name == "algorithmic":
            self.c.set("ALG@line", 0)
            self.line = "ALG@line"  # algorithmicx: \def\@currentlabel{\theALG@line}
        elif name == "subequations":  # amsmath: one number, the rows inside it lettered
            self.anchor = None
            self.group_target = self._refstep("equation", "equation")  # linked to its first display
            parent = self.c.ref("equation")
            g.value = ("equation", self.c.value("equation"))
            self._local(g, "equation")
            self.c.set("equation", 0)
            self.c.the["equation"] = parent + r"\alph{equation}"
            self.c.prefix["equation"] = ""
        elif name in ("appendix", "appendices", "subappendices"):  # the appendix package's too
            self._appendix()
        return end

    def _enumerate(self, text: str, end: int) -> int:
        """An enumerate level: its counter from zero (enumitem's ``start=``, ``resume``), and
        its label as enumitem's ``label=``/``ref=`` or enumerate's ``[(a)]`` print it."""
        depth = sum(1 for g in self.stack if g.kind in _ENUMERATES)
        counter = _ENUM_COUNTERS[min(depth, 4) - 1]
        opts, after = read_optional(text, end)
        opts = opts or ""
        if "resume" not in opts:
            self.c.set(counter, 0)
        if not opts:
            return end
        g = self.stack[-1]
        keys = dict(_KEYVAL_RE.findall(opts))
        start = keys.get("start", "").strip("{} ")
        if start.lstrip("-").isdigit():
            self.c.set(counter, int(start) - 1)
        fmt = (keys.get("ref") or keys.get("label") or "").strip()
        if fmt:  # enumitem: \alph* stands for the counter; \ref prints the label
            fmt = fmt[1:-1] if fmt.startswith("{") and fmt.endswith("}") else fmt
            self._local(g, counter)
            self.c.the[counter] = _ENUM_STYLE_RE.sub(lambda s: rf"\{s.group(1)}{{{counter}}}", fmt)
            self.c.prefix[counter] = ""
        elif "=" not in opts:  # enumerate package: the first of a A i I 1 is the counter
            style = _SHORT_LABEL_RE.search(re.sub(r"\{[^{}]*\}", "", opts))  # {A} is a letter
            if style:
                self._local(g, counter)
                self.c.the[counter] = "\\" + _SHORT_STYLES[style.group()] + "{" + counter + "}"
                self.c.prefix[counter] = ""
        return after

    def _region(self, reg: Region) -> None:
        """An environment cut out of the body (or met in place): its counters at its place.
        A float's number is set at its begin when it has a caption (a label before the caption
        is the float's, as readers mean it) or a subcaption sub-float (which the caption package
        numbers, caption or not), each further caption steps it again."""
        index = len(self.stack)
        self._push("region")
        if reg.ref_id is not None:
            self.anchor = reg.ref_id
        kind = reg.kind or region_kind(reg.name)
        if kind == "equation":
            self._equation(reg.name, reg.content, reg.ref_id)
        elif reg.name == "lstlisting":
            self._listing(reg)
        elif kind in FLOAT_COUNTER or kind == "float":  # a float the paper declares counts on its own
            counter = (
                reg.name
                if kind == "float"
                else "algocf"
                if reg.name.startswith("algorithm2e")
                else FLOAT_COUNTER[kind]
            )
            pending = None
            # longtable steps the table counter at its start, caption or not (longtable.sty); a
            # float holding one is numbered at its caption, after it
            nested = "\\begin{longtable" in reg.content and not reg.name.startswith("longtable")
            numbered = _has_caption(reg.content) or _SUBCAPTION_ENV_RE.search(reg.content) is not None
            if (numbered and not nested) or reg.name.startswith("longtable"):
                self._float_number(counter, kind, reg.ref_id)
                pending = self.c.value(counter)
            self.float = (counter, kind, reg.ref_id, pending)
            self.walk(reg.content)
        else:  # as it stood: its own \begin (algorithmic's line counter) and \end
            self.walk(f"\\begin{{{reg.name}}}{reg.content}\\end{{{reg.name}}}")
        self._pop(index)

    def _float_number(self, counter: str, kind: str, ref_id: str | None) -> None:
        self._refstep(counter, kind)
        entry = self.ref_entries.get(ref_id or "")
        if entry is not None and entry.num is None:
            entry.num = self.c.printed(counter)

    def _listing(self, reg: Region) -> None:
        opts = reg.options
        if opts.get("caption") or opts.get("title"):
            self._float_number("listing", "listing", reg.ref_id)
        if opts.get("label"):
            self._label(opts["label"])
        for lab, line in re.findall(r"\\lstlinelabel\{([^{}]*)\}\{(\d+)\}", reg.content):
            self.labels[lab.strip()] = Target(reg.ref_id, line, "line", "line")

    # ----------------------------------------------------------------- equations

    def _equation(self, name: str, content: str, ref_id: str | None) -> None:
        """A display's rows: a number each (amsmath), its labels that row's, ``\\tag`` its own.
        A label on an unnumbered row is the next numbered row's: amsmath's ``\\label`` waits in
        ``\\df@label`` until a row makes its tag (``\\make@display@tag``); with none after it,
        it is the number LaTeX has current."""
        index = len(self.stack)
        if self.group_target is not None and self.group_target.ref_id is None:
            self.group_target.ref_id = ref_id
        self.group_target = None
        self._push(name)
        self.anchor = ref_id
        first: str | None = None
        if name.startswith("eqnarray"):  # LaTeX's own: the number of the row being set is current
            first = self._eqnarray(name, content, ref_id)
        waiting: list[str] = []  # labels of unnumbered rows: amsmath keeps them for the next tag
        for row, numbered, tag in () if name.startswith("eqnarray") else equation_rows(name, content):
            if tag is not None:
                self._set(Target(ref_id, tag, "equation"))
                first = first or tag
            elif numbered:
                self._refstep("equation", "equation")
                first = first or self.c.printed("equation")
            if "\\label" in row:
                waiting.extend(lab.strip() for lab in _LABEL_RE.findall(row))
            if tag is not None or numbered:
                for lab in waiting:
                    self._label(lab)
                waiting.clear()
        for lab in waiting:  # no numbered row after it: the number LaTeX has current
            self._label(lab)
        entry = self.ref_entries.get(ref_id or "")
        if entry is not None and entry.num is None:
            entry.num = first
        self._pop(index)

    def _eqnarray(self, name: str, content: str, ref_id: str | None) -> str | None:
        """LaTeX's eqnarray steps the equation counter before its first row and after each
        numbered one (ltmath.dtx), its current label the counter: a label on a ``\\nonumber``
        row is the number the next numbered row prints."""
        self._refstep("equation", "equation")
        first: str | None = None
        for row, numbered, _ in equation_rows(name, content):
            current = self.current
            if "\\label" in row:
                for lab in _LABEL_RE.findall(row):
                    self._label(lab.strip())
            if numbered:
                first = first or (current.num if current else None)
                self._refstep("equation", "equation")
        self.c.add("equation", -1)  # \endeqnarray: the step after the last row taken back
        return first

    # ----------------------------------------------------------------- commands

    def _command(self, text: str, m: re.Match) -> int:
        cmd = m["cmd"]
        end = m.end()
        if cmd == "item":
            opt = read_optional(text, end)[0]
            if opt is None:
                self._item()
            return end
        if cmd == "maketitle":  # a class whose title opens a chapter (svmult's contributions)
            if self.doc.classes.title_chapter:
                self._refstep("chapter", "chapter")
            return end
        if cmd in ("appendix", "appendices"):  # IEEEtran's \appendices
            self._appendix()
            return end
        if cmd in ("caption", "tablecaption", "subcaption"):
            if not text[end : end + 8].lstrip().startswith("*"):  # caption's \caption*: no number
                self._caption(cmd == "subcaption")
            return end
        if cmd == "captionof":  # caption's \captionof{figure}: in a figure, that figure's caption
            name, end = read_arg(text, end)
            kind = name.strip().rstrip("*")
            if self.float is not None and self.float[1] == kind:
                self._caption(False)
            elif kind in FLOAT_COUNTER:
                self._refstep(FLOAT_COUNTER[kind], kind)
            return end
        if cmd in ("subfloat", "subfigure", "subtable"):  # subfig's \subfloat, subfigure's \subfigure
            return self._subfloat(text, end, parens=cmd != "subfloat")
        if cmd == "floatconts":  # jmlr: \floatconts{label}{caption}{content}: the float's label
            label, end = read_arg(text, end)
            self._label(label.strip())
            return end
        if cmd == "lstlinelabel":
            return end
        if cmd in ("newenvironment", "renewenvironment"):  # kept, stepped where one begins
            return self._define_environment(text, end)
        if cmd.startswith("footnote"):
            return self._footnote(cmd, text, end)
        name, end = read_arg(text, end)
        name = name.strip()
        if cmd == "refstepcounter":  # the paper's own counter: named as hyperref and cleveref name it
            self._refstep(name, _COUNTER_KINDS.get(name, "other"), name)
        elif cmd == "stepcounter":
            self.c.step(name)
        elif cmd in ("setcounter", "addtocounter"):
            value, end = read_arg(text, end)
            n = self._integer(value)
            if n is not None:
                (self.c.set if cmd == "setcounter" else self.c.add)(name, n)
        elif cmd == "newcounter":
            within, end = read_optional(text, end)
            self.c.define(name, within.strip() if within else None)
        elif cmd in ("numberwithin", "counterwithin", "counterwithin*", "@addtoreset"):
            parent, end = read_arg(text, end)
            self.c.number_within(name, parent.strip(), printed=cmd in ("numberwithin", "counterwithin"))
        elif cmd in ("counterwithout", "counterwithout*"):
            parent, end = read_arg(text, end)
            self.c.number_without(name, parent.strip())
        return end

    def _footnote(self, cmd: str, text: str, end: int) -> int:
        """``\\footnote`` steps the footnote counter (``\\footnotemark`` too; an optional
        number is used as it is); in its text, a label is the footnote's number."""
        mark, end = read_optional(text, end)
        if mark is None and cmd != "footnotetext":
            self.c.step("footnote")
        if cmd == "footnotemark":
            return end
        note, after = read_group(text, end)
        if note is None:
            return end
        index = len(self.stack)
        self._push("footnote")
        self._set(
            Target(self.anchor, mark.strip() if mark else self.c.ref("footnote"), "footnote", "footnote")
        )
        self.walk(note)
        self._pop(index)
        return after

    def _define_environment(self, text: str, end: int) -> int:
        """``\\newenvironment{name}[n][default]{begin}{end}``: its begin code is walked where
        the environment begins (``\\refstepcounter{point}`` there), not where it is defined."""
        if end < len(text) and text[end] == "*":
            end += 1
        name, end = read_arg(text, end)
        _, end = read_optional(text, end)
        _, end = read_optional(text, end)
        begin, end = read_group(text, end)
        _, end = read_group(text, end)
        if begin is not None:
            self.user_envs[name.strip()] = begin
        return end

    def _integer(self, value: str) -> int | None:
        m = _INT_RE.match(value)
        if m:
            return int(m.group(1).replace(" ", ""))
        v = _VALUE_RE.match(value)
        if v:
            n = self.c.value(v.group(2))
            return -n if v.group(1) else n
        return None

    def _item(self) -> None:
        for g in reversed(self.stack):
            if g.kind in _LISTS:
                if g.kind in _ENUMERATES:
                    depth = sum(1 for x in self.stack if x.kind in _ENUMERATES)
                    self._refstep(_ENUM_COUNTERS[min(depth, 4) - 1], "item", "item")
                return

    def _algorithm_line(self, name: str) -> None:
        if name not in self.alg_lines or not any(g.kind == "algorithmic" for g in self.stack):
            return
        counter = "ALC@line" if name.isupper() else "ALG@line"
        self.c.step(counter)
        self._touch()
        self.line = counter

    def _caption(self, sub: bool) -> None:
        if self.float is None:
            return  # \caption outside a float: LaTeX stops with an error
        counter, kind, ref_id, pending = self.float
        if sub or any(g.kind in _SUB_FLOATS for g in self.stack):
            self._sub_caption()
            return
        if pending is not None:  # the float's first caption: numbered at its begin
            self._touch()
            self.float = (counter, kind, ref_id, None)
            for g in reversed(self.stack):  # the float's own group keeps it
                if g.kind == "region":
                    break
                g.float = self.float
            if self.c.value(counter) == pending:
                return
            # stepped since (a longtable in the table): the caption steps it again, as LaTeX does
            entry = self.ref_entries.get(ref_id or "")
            if entry is not None:
                entry.num = None
        self._float_number(counter, kind, ref_id)

    def _sub_caption(self, parens: bool = False) -> None:
        """subcaption's ``\\caption`` in a ``subfigure``, subfig's ``\\subfloat``: the
        sub-counter within the float's, ``\\ref`` printing "1a" with either package; the old
        subfigure package's ``\\subfigure`` (``parens``) prints "1(a)"."""
        parent, kind = (self.float[0], self.float[1]) if self.float else ("figure", "figure")
        sub = "sub" + parent
        if sub not in self.c.prefix or parens:  # a \thesubfigure the paper set is kept
            if parens:
                self.c.the[sub] = rf"(\alph{{{sub}}})"
            self.c.the.setdefault(sub, rf"\alph{{{sub}}}")
            self.c.define(sub, parent)
            self.c.prefix[sub] = rf"\the{parent}"
        self._refstep(sub, kind, kind)

    def _subfloat(self, text: str, end: int, parens: bool = False) -> int:
        """subfig's ``\\subfloat[list][caption]{body}`` (subfigure's ``\\subfigure``): its
        sub-figure number is the current label inside its arguments only (stepped in a group)."""
        index = len(self.stack)
        self._push("subfloat")
        self._sub_caption(parens)
        first, end = read_optional(text, end)
        second, end = read_optional(text, end)
        body, end = read_group(text, end)
        self.walk((first or "") + " " + (second or "") + " " + (body or ""))
        self._pop(index)
        return end

    def _appendix(self) -> None:
        """``\\appendix``: what the class's definition does to the counters."""
        if self.appendix:
            return
        self.appendix = True
        self.run(self.doc.classes.appendix)

    def run(self, latex: str, defs: list[tuple[str, str]] | None = None, package: bool = False) -> None:
        """A piece of LaTeX that sets counters (a class's ``\\appendix``, a package the e-print
        ships): its ``\\the`` definitions (``defs``: taken out already, marks in their place),
        ``\\setcounter``, ``\\numberwithin`` and ``\\@addtoreset`` in order; no label, no group.
        ``package``: only what stands outside every group (a definition's body runs when it is
        used, not where it is defined), and no ``\\stepcounter``."""
        text = latex
        if defs is None:
            text, defs = take_the_definitions(latex)
        base = len(self.doc.the_defs)
        self.doc.the_defs.extend(defs)
        text = THE_MARK_RE.sub(lambda m: f"\ue026{int(m.group(1)) + base}\ue027", text)
        bare = text.replace("\\\\", "  ").replace("\\{", "  ").replace("\\}", "  ") if package else ""
        depth, pos = 0, 0
        for m in _SCRIPT_RE.finditer(text):
            if package:
                depth += bare.count("{", pos, m.start()) - bare.count("}", pos, m.start())
                pos = m.start()
                if depth > 0 or m["cmd"] in ("stepcounter", "addtocounter"):
                    continue
            with contextlib.suppress(LatexError):
                if m.lastgroup == "the":
                    self._event(text, m, False)
                else:
                    self._command(text, m)


def _has_caption(content: str) -> bool:
    """Whether a float has a caption of its own (a sub-figure's is not)."""
    if not _CAPTION_RE.search(content):
        return False
    if "\\begin" in content:
        content = _SUB_ENV_RE.sub("", content)
    return _CAPTION_RE.search(content) is not None


_ENV_TOKEN_RE = re.compile(r"\\(begin|end)\s*\{([^{}]+)\}")


def _environment_end(text: str, start: int, name: str) -> tuple[int, int] | None:
    """Where the environment whose content begins at ``start`` ends: (content end, end)."""
    depth = 0
    for m in _ENV_TOKEN_RE.finditer(text, start):
        if m.group(2).strip() != name:
            continue
        if m.group(1) == "begin":
            depth += 1
        elif depth == 0:
            return m.start(), m.end()
        else:
            depth -= 1
    return None


def number(
    doc: Document,
    preamble: str,
    front: str,
    body: str,
    headings: list[Heading],
    labels: dict[str, Target],
    ref_entries: dict[str, RefEntry],
) -> list[TheoremHead]:
    """Walk the paper; register every label in ``labels``, number ``headings`` and the ref
    entries of floats and equations; return the theorem headings of ``body``."""
    walk = Numbering(doc, labels, ref_entries)
    for script, defs in doc.scripts:  # the class and packages the e-print ships: their numbering
        walk.run(script, defs, package=True)
    walk.walk(preamble)
    walk.stack.clear()
    walk.braces = 0
    walk.current, walk.anchor = None, None
    walk.walk(front)
    walk.walk(body, headings, body=True)
    return walk.heads


def strip_marks(latex: str) -> str:
    """The text without the marks the walk reads (regions cut out, ``\\the`` definitions)."""
    return MARKS_RE.sub("", latex) if "\ue024" in latex or "\ue026" in latex else latex
