"""LaTeX's counters as LaTeX keeps them: a value each, the counters each one resets when it is
stepped (``\\newcounter{c}[p]``, ``\\numberwithin``, ``\\@addtoreset``), and how each prints:
``\\thec`` (``\\renewcommand{\\thefigure}{S\\arabic{figure}}``) and the prefix ``\\ref`` puts
before it (``\\p@c``: enumerate's "1a", REVTeX's "II A"). The document class decides the
defaults (:func:`class_counters`): IEEEtran and REVTeX number sections in Roman, report-like
classes number sections, figures and equations within chapters, and ``secnumdepth`` is the
deepest heading level that gets a number."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from corpus.parse.latex.braces import LatexError, read_group
from corpus.parse.latex.conditionals import NOT_CONDITIONALS
from corpus.parse.latex.text import _plain

# Heading counters by level, as LaTeX's \@startsection numbers them
LEVEL_COUNTERS = {
    -1: "part",
    0: "chapter",
    1: "section",
    2: "subsection",
    3: "subsubsection",
    4: "paragraph",
    5: "subparagraph",
}
_ARTICLE_THE = {
    "part": r"\Roman{part}",
    "section": r"\arabic{section}",
    "subsection": r"\thesection.\arabic{subsection}",
    "subsubsection": r"\thesubsection.\arabic{subsubsection}",
    "paragraph": r"\thesubsubsection.\arabic{paragraph}",
    "subparagraph": r"\theparagraph.\arabic{subparagraph}",
    "equation": r"\arabic{equation}",
    "figure": r"\arabic{figure}",
    "table": r"\arabic{table}",
    "enumi": r"\arabic{enumi}",
    "enumii": r"\alph{enumii}",
    "enumiii": r"\roman{enumiii}",
    "enumiv": r"\Alph{enumiv}",
}
_ARTICLE_PREFIX = {
    "enumii": r"\theenumi",
    "enumiii": r"\theenumi(\theenumii)",
    "enumiv": r"\p@enumiii\theenumiii",
}
_ARTICLE_WITHIN = {
    "subsection": "section",
    "subsubsection": "subsection",
    "paragraph": "subsubsection",
    "subparagraph": "paragraph",
    "enumii": "enumi",
    "enumiii": "enumii",
    "enumiv": "enumiii",
}
# report.cls and book.cls: sections, equations and floats within chapters (the chapter's number
# printed only once a chapter has begun)
_CHAPTER_THE = {
    "chapter": r"\arabic{chapter}",
    "section": r"\thechapter.\arabic{section}",
    "equation": r"\ifchapter\thechapter.\fi\arabic{equation}",
    "figure": r"\ifchapter\thechapter.\fi\arabic{figure}",
    "table": r"\ifchapter\thechapter.\fi\arabic{table}",
}
_CHAPTER_CLASSES = frozenset(
    "report book scrreprt scrbook memoir amsbook ociamthesis thesis ucthesis suthesis mitthesis".split()
)
# The classes that set secnumdepth to 2 (subsubsections unnumbered): report.cls, book.cls,
# llncs.cls; KOMA's report and book; memoir
_DEPTH_TWO = frozenset("report book scrreprt scrbook memoir llncs".split())
_IEEE = {  # IEEEtran.cls (not compsoc): I, I-A, I-A1; tables in Roman
    "section": r"\Roman{section}",
    "subsection": r"\thesection-\Alph{subsection}",
    "subsubsection": r"\thesubsection\arabic{subsubsection}",
    "paragraph": r"\thesubsubsection\alph{paragraph}",
    "table": r"\Roman{table}",
}
_REVTEX = {  # revtex4-2.cls \secnums@rtx: I, A, 1; \ref prints "II A 1"; tables in Roman
    "section": r"\Roman{section}",
    "subsection": r"\Alph{subsection}",
    "subsubsection": r"\arabic{subsubsection}",
    "paragraph": r"\alph{paragraph}",
    "table": r"\Roman{table}",
}
_REVTEX_PREFIX = {
    "subsection": r"\thesection\,",
    "subsubsection": r"\thesection\,\thesubsection\,",
    "paragraph": r"\thesection\,\thesubsection\,\thesubsubsection\,",
}


@dataclass
class Counters:
    """Every counter of one document: values, resets, and how each prints."""

    values: dict[str, int] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)  # counter -> the counters it resets
    the: dict[str, str] = field(default_factory=dict)  # counter -> \thec's LaTeX
    prefix: dict[str, str] = field(default_factory=dict)  # counter -> \p@c's LaTeX

    def define(self, name: str, within: str | None = None) -> None:
        """``\\newcounter{name}[within]`` (an existing counter keeps its value)."""
        self.values.setdefault(name, 0)
        self.the.setdefault(name, rf"\arabic{{{name}}}")
        if within:
            self.reset_by(name, within)

    def reset_by(self, name: str, parent: str) -> None:
        """``\\@addtoreset{name}{parent}``: stepping ``parent`` sets ``name`` to zero."""
        self.values.setdefault(parent, 0)
        kids = self.children.setdefault(parent, [])
        if name not in kids and name != parent:
            kids.append(name)

    def number_within(self, name: str, parent: str, printed: bool = True) -> None:
        """``\\numberwithin{name}{parent}`` (``\\counterwithin``; ``printed=False``: the
        starred form, which only resets)."""
        self.define(name)
        self.reset_by(name, parent)
        if printed:
            self.the[name] = rf"\the{parent}.\arabic{{{name}}}"

    def number_without(self, name: str, parent: str) -> None:
        """``\\counterwithout{name}{parent}``."""
        if name in self.children.get(parent, []):
            self.children[parent].remove(name)
        self.the[name] = rf"\arabic{{{name}}}"

    def step(self, name: str) -> None:
        """``\\stepcounter``: one more, and the counters it resets back to zero (and theirs)."""
        self.define(name)
        self.values[name] += 1
        self._reset(name, 0)

    def _reset(self, name: str, depth: int) -> None:
        for kid in self.children.get(name, ()):
            self.values[kid] = 0
            if depth < 10:
                self._reset(kid, depth + 1)

    def set(self, name: str, value: int) -> None:
        self.define(name)
        self.values[name] = value

    def add(self, name: str, value: int) -> None:
        self.define(name)
        self.values[name] += value

    def value(self, name: str) -> int:
        return self.values.get(name, 0)

    def printed(self, name: str) -> str:
        """``\\thename`` as text."""
        return self._expand(rf"\the{name}", 0)

    def ref(self, name: str) -> str:
        """What ``\\ref`` prints for a label set by ``\\refstepcounter{name}``: ``\\p@name\\thename``."""
        return self._expand(self.prefix.get(name, "") + rf"\the{name}", 0)

    def _expand(self, latex: str, depth: int) -> str:
        if depth > 8:
            return ""

        def one(m: re.Match) -> str:
            if m["the"]:
                name = m["the"]
                if name in self.the:
                    return self._expand(self.the[name], depth + 1)
                return str(self.value(name)) if name in self.values else ""
            if m["p"]:
                return self._expand(self.prefix.get(m["p"], ""), depth + 1)
            if m["cond"]:  # \ifchapter X\fi: X once a chapter has begun
                return self._expand(m["cond"], depth + 1) if self.value("chapter") > 0 else ""
            if m["value"]:
                return str(self.value(m["value"]))
            if m["name"]:  # elsarticle's \thesection in appendices: "Appendix A"
                return m["name"].capitalize() + " "
            name = m["counter"] or m["raw"] or ""
            return _format(m["style"] or m["rawstyle"] or "arabic", self.value(name))

        text = _COUNTER_RE.sub(one, latex)
        if "\\" not in text and "{" not in text and "$" not in text:
            return text.strip()
        return _plain(text.replace("\\,", " "))


_COUNTER_RE = re.compile(
    r"\\ifchapter(?P<cond>.*?)\\fi"
    r"|\\(?P<style>arabic|roman|Roman|alph|Alph|fnsymbol)\s*\{\s*(?P<counter>[^{}]+?)\s*\}"
    r"|\\@(?P<rawstyle>arabic|roman|Roman|alph|Alph|fnsymbol)\s*\\c@(?P<raw>[A-Za-z@]+)"
    r"|\\(?:number|the)\s*\\value\s*\{\s*(?P<value>[^{}]+?)\s*\}"
    r"|\\(?P<name>appendix|chapter|section)name(?![A-Za-z])"
    r"|\\p@(?P<p>[A-Za-z@]+)"
    r"|\\the(?P<the>[A-Za-z@]+)"
)


def _format(style: str, n: int) -> str:
    """A number as ``\\arabic``, ``\\roman``, ``\\alph``... print it."""
    if style == "arabic":
        return str(n)
    if n <= 0:
        return "" if style != "arabic" else str(n)
    if style in ("alph", "Alph"):
        text = chr(ord("a") + n - 1) if n <= 26 else str(n)
        return text.upper() if style == "Alph" else text
    if style in ("roman", "Roman"):
        text = _roman(n)
        return text.upper() if style == "Roman" else text
    if style == "fnsymbol":
        return ("*", "\u2020", "\u2021", "\u00a7", "\u00b6", "\u2016", "**", "\u2020\u2020", "\u2021\u2021")[
            min(n, 9) - 1
        ]
    return str(n)


def _roman(n: int) -> str:
    out = []
    for value, digits in (
        (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
        (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
    ):  # fmt: skip
        while n >= value:
            out.append(digits)
            n -= value
    return "".join(out)


@dataclass
class ClassCounters:
    """What a document class sets up: its counters and the deepest numbered heading level."""

    counters: Counters
    secnumdepth: int
    chapters: bool  # sections numbered within chapters
    appendix: str = ""  # what \appendix does to the counters, as LaTeX (the class's own definition)
    title_chapter: bool = False  # \maketitle steps the chapter (svmult: a contribution is a chapter)


_CLASS_RE = re.compile(r"\\documentclass\s*(?:\[([^\]]*)\])?\s*\{\s*([^{}]+?)\s*\}")


def document_class(text: str) -> tuple[str, list[str]]:
    """The document class and its options."""
    m = _CLASS_RE.search(text)
    if not m:
        return "", []
    name = m.group(2).rsplit("/", 1)[-1].removesuffix(".cls")  # \documentclass{Definitions/mdpi}
    return name, [o.strip() for o in (m.group(1) or "").split(",") if o.strip()]


_USEPACKAGE_RE = re.compile(r"\\usepackage\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}")


def package_options(text: str) -> dict[str, list[str]]:
    """The options each package is loaded with, the class's first: LaTeX's class options are
    global, every package sees them."""
    _, global_options = document_class(text)
    loaded: dict[str, list[str]] = {}
    for opts, names in _USEPACKAGE_RE.findall(text):
        for name in names.split(","):
            given = [o.strip() for o in (opts or "").split(",") if o.strip()]
            loaded.setdefault(name.strip(), list(global_options)).extend(given)
    return loaded


_SIAM_WITHIN = (
    ("oneeqnum", "equation"), ("onetabnum", "table"), ("onefignum", "figure"),
    ("onealgnum", "algorithm"), ("onethmnum", "theorem"),
)  # fmt: skip
# What \appendix does, class by class, as the class files define it (article.cls; report.cls;
# revtex4-2.cls; IEEEtran.cls's \appendices; mnras.cls; elsarticle.cls; sn-jnl.cls's appendices
# environment; aastex's). A class the
# e-print ships is read instead (:func:`shipped_appendix`).
_APPENDIX = {
    "article": r"\setcounter{section}{0}\setcounter{subsection}{0}\def\thesection{\Alph{section}}",
    "report": r"\setcounter{chapter}{0}\setcounter{section}{0}\def\thechapter{\Alph{chapter}}",
    "revtex": r"""\setcounter{section}{0}\setcounter{subsection}{0}\setcounter{subsubsection}{0}
        \def\thesubsection{\arabic{subsection}}\def\thesubsubsection{\alph{subsubsection}}
        \@addtoreset{equation}{section}\def\theequation{\thesection\arabic{equation}}
        \def\thesection{\Alph{section}}""",
    "IEEEtran": r"\setcounter{section}{0}\setcounter{subsection}{0}\def\thesection{\Alph{section}}",
    "mnras": r"""\@addtoreset{equation}{section}\@addtoreset{table}{section}\@addtoreset{figure}{section}
        \setcounter{section}{0}\setcounter{equation}{0}\setcounter{figure}{0}\setcounter{table}{0}
        \def\thesection{\Alph{section}}\def\thesubsection{\thesection\arabic{subsection}}
        \def\theequation{\thesection\arabic{equation}}\def\thefigure{\thesection\arabic{figure}}
        \def\thetable{\thesection\arabic{table}}""",
    "elsarticle": r"""\setcounter{section}{0}\setcounter{subsection}{0}\setcounter{equation}{0}
        \def\thefigure{\Alph{section}.\arabic{figure}}\def\thetable{\Alph{section}.\arabic{table}}
        \def\thesection{\appendixname\Alph{section}}\@addtoreset{equation}{section}
        \def\theequation{\Alph{section}.\arabic{equation}}""",
    "sn-jnl": r"""\setcounter{section}{0}\setcounter{subsection}{0}\def\thesection{\Alph{section}}
        \setcounter{figure}{0}\setcounter{table}{0}\setcounter{equation}{0}
        \def\thefigure{\Alph{section}\arabic{figure}}\def\thetable{\Alph{section}\arabic{table}}
        \def\theequation{\Alph{section}\arabic{equation}}""",
    "aastex": r"""\setcounter{section}{0}\setcounter{subsection}{0}\def\thesection{\Alph{section}}
        \@addtoreset{equation}{section}\def\theequation{\thesection\arabic{equation}}""",
}


def class_counters(
    cls: str, options: list[str], has_chapters: bool, appendix_sources: list[str] | None = None
) -> ClassCounters:
    """The counters a document class defines, as its ``.cls`` file defines them;
    ``appendix_sources``: the class file the e-print ships, its packages, the paper itself, in
    that order (the last ``\\appendix`` defined is the one LaTeX runs)."""
    c = Counters()
    for name, within in _ARTICLE_WITHIN.items():
        c.define(name, within)
    for name in ("part", "section", "equation", "figure", "table", "enumi", "footnote"):
        c.define(name)
    c.the.update(_ARTICLE_THE)
    c.prefix.update(_ARTICLE_PREFIX)
    appendix = _APPENDIX["article"]
    depth = 3
    title_chapter = cls == "svmult" and "numart" not in options  # svmult.cls's \maketitle
    chapters = cls in _CHAPTER_CLASSES or has_chapters or title_chapter
    if chapters:
        c.define("chapter")
        for name in ("section", "equation", "figure", "table"):
            c.reset_by(name, "chapter")
        c.the.update(_CHAPTER_THE)
        appendix = _APPENDIX["report"]
    if cls in _DEPTH_TWO:
        depth = 2
    if cls == "IEEEtran":
        depth = 4
        appendix = _APPENDIX["IEEEtran"]
        if "compsoc" not in options:
            c.the.update(_IEEE)
        elif "conference" in options:
            depth = 3
    elif cls.startswith("revtex4") or cls == "revtex":
        depth = 4
        if "secnumarabic" not in options:
            c.the.update(_REVTEX)
            c.prefix.update(_REVTEX_PREFIX)
        c.the["table"] = r"\Roman{table}"
        appendix = _APPENDIX["revtex"]
    elif cls.startswith("aastex"):
        appendix = _APPENDIX["aastex"]
    elif cls in _APPENDIX:
        appendix = _APPENDIX[cls]
    if cls == "mnras":
        depth = 4
    if cls.startswith(("siamart", "siamonline")):  # SIAM: numbered within sections unless one*num
        for option, counter in _SIAM_WITHIN:
            if option not in options:
                c.number_within(counter, "section")
    for text in appendix_sources or ():
        appendix = shipped_appendix(text) or appendix
    return ClassCounters(c, depth, chapters, appendix, title_chapter)


_APPENDIX_DEF_RE = re.compile(
    r"\\(?:(?:re|provide)?newcommand\*?\s*\{?\s*\\appendix\s*\}?|[gex]?def\s*\\appendix)(?![A-Za-z@])\s*(?=\{)"
)


def shipped_appendix(cls_text: str) -> str | None:
    """The body of ``\\appendix`` as the class file the e-print ships defines it."""
    found = None
    for m in _APPENDIX_DEF_RE.finditer(cls_text):
        try:
            body, _ = read_group(cls_text, m.end())
        except LatexError:
            continue
        found = body
    return found


_THE_DEF_RE = re.compile(
    r"\\(?:(?:re)?newcommand|providecommand|DeclareRobustCommand)\*?\s*(?:\{\s*\\the([A-Za-z@]+)\s*\}|\\the([A-Za-z@]+))"
    r"|\\[gex]?def\s*\\the([A-Za-z@]+)(?=\s*\{)"
)
_FORMAT_RE = re.compile(
    r"\\(?:@?(?:arabic|roman|Roman|alph|Alph|fnsymbol)|value|number|the[A-Za-z@]+)(?![A-Za-z])"
)
_STANDARD = frozenset(_ARTICLE_THE) | frozenset({"chapter", "footnote", "page", "algorithm", "lstlisting"})


def take_the_definitions(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``\\renewcommand{\\thefigure}{S\\arabic{figure}}`` and ``\\def\\theequation{...}``, each
    replaced by a mark (U+E026 n U+E027) that the counter walk reads where it stands: how a
    counter prints can change mid-document (a supplement's "Figure S1"). Only definitions that
    print a counter are taken (``\\newcommand{\\thesis}{...}`` is a macro like any other)."""
    if "\\the" not in text:
        return text, []
    defs: list[tuple[str, str]] = []
    out, pos = [], 0
    for m in _THE_DEF_RE.finditer(text):
        if m.start() < pos:
            continue
        name = m.group(1) or m.group(2) or m.group(3)
        i = m.end()
        j = i
        while j < len(text) and text[j] in " \t\n":
            j += 1
        if j < len(text) and text[j] == "[":
            continue  # a command with arguments: no counter's representation
        try:
            body, end = read_group(text, i)
        except LatexError:
            continue
        if body is None or len(body) > 300 or (name not in _STANDARD and not _FORMAT_RE.search(body)):
            continue
        out.append(text[pos : m.start()] + f"\ue026{len(defs)}\ue027")
        defs.append((name, body.strip()))
        pos = end
    out.append(text[pos:])
    return "".join(out), defs


_OPTION_RE = re.compile(r"\\DeclareOption\s*\{\s*([^{}]*?)\s*\}")
_EXECUTE_RE = re.compile(r"\\ExecuteOptions\s*\{([^{}]*)\}")


def with_options(cls_text: str, options: list[str]) -> str:
    """A class or package's text with its options processed as ``\\ProcessOptions`` does: the
    code of each ``\\DeclareOption`` the document gives (or ``\\ExecuteOptions`` defaults) where
    it was declared, the others gone (the code of an option not given never runs)."""
    if "\\DeclareOption" not in cls_text:
        return cls_text
    given = set(options) | {o.strip() for m in _EXECUTE_RE.finditer(cls_text) for o in m.group(1).split(",")}
    out, pos = [], 0
    for m in _OPTION_RE.finditer(cls_text):
        if m.start() < pos:
            continue
        try:
            code, end = read_group(cls_text, m.end())
        except LatexError:
            continue
        out.append(cls_text[pos : m.start()])
        if m.group(1) in given and code is not None:
            out.append(code)
        pos = end
    out.append(cls_text[pos:])
    return "".join(out)


_SWITCH_TOKEN_RE = re.compile(r"\\([A-Za-z@]+)|\\.|[{}]|(?<!\\)%[^\n]*", re.S)


def decide_switches(text: str) -> str:
    """A package's text with its ``\\newif`` switches decided as TeX decides them where they
    stand: ``\\if@imsart@seceqn ... \\fi`` keeps its branch only when an option the document
    gives ran ``\\@imsart@seceqntrue`` before it (imsart's equations numbered within sections
    only with ``seceqn``). Only switches set and tested outside every group are decided (a
    definition's body runs when it is used); other conditionals stay as written, each counted
    as TeX counts it so that a skipped branch ends at its own ``\\fi``."""
    if "\\newif" not in text:
        return text
    switches: dict[str, bool] = {}
    frames: list[tuple[bool, bool, bool]] = []  # (decided, value, in else) of each open \if
    out: list[str] = []
    pos = depth = 0
    declaring = False

    def active() -> bool:
        return all(not decided or value != in_else for decided, value, in_else in frames)

    for m in _SWITCH_TOKEN_RE.finditer(text):
        tok, name = m.group(0), m.group(1)
        live = active()
        keep = live
        if tok.startswith("%"):
            keep = False
        elif declaring and name:
            declaring = False
            if name.startswith("if"):
                switches.setdefault(name[2:], False)
        elif tok in "{}":
            depth += (1 if tok == "{" else -1) if live else 0
        elif name == "newif":
            declaring = live
        elif name and name.startswith("if") and name[2:] in switches and live and depth == 0:
            frames.append((True, switches[name[2:]], False))
            keep = False
        elif name and name.startswith("if") and len(name) > 2 and name not in NOT_CONDITIONALS:
            frames.append((False, False, False))
        elif name in ("else", "fi") and frames:
            decided, value, _ = frames[-1]
            if name == "fi":
                frames.pop()
            else:
                frames[-1] = (decided, value, True)
            keep = live and not decided
            if decided and name == "else":
                keep = False
        elif name and live and depth == 0 and name.endswith(("true", "false")):
            switch = name.removesuffix("true").removesuffix("false")
            if switch in switches:
                switches[switch] = name.endswith("true")
        out.append(text[pos : m.start()] if live else "")
        out.append(tok if keep else "")
        pos = m.end()
    out.append(text[pos:] if active() else "")
    return "".join(out)
