"""What a ``\\ref`` prints for a label (:class:`Target`), the headings the body is split at,
and the theorem-like environments a paper declares (``\\newtheorem``, ``\\declaretheorem``,
``\\spnewtheorem``; shared counters and numbering within sections) with the heading LaTeX
prints at each. The labels themselves are given their targets by the walk of
:mod:`corpus.parse.latex.numbering`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.parse.latex.braces import read_optional


@dataclass
class Target:
    """What ``\\ref`` prints for a label (``num``) and the ref entry it links to."""

    ref_id: str | None
    num: str
    kind: str  # figure, table, equation, section, subsection, appendix, item, line, or a theorem's title
    type: str = ""  # the counter or environment LaTeX names it by (cleveref's and hyperref's names)
    name: str = ""  # what hyperref's \nameref prints: a heading's title (a theorem's note)


@dataclass
class Theorem:
    title: str
    counter: str  # the counter it steps (its own name, or the one it shares)
    within: str | None = None  # section, subsection, chapter: numbered "2.3"
    numbered: bool = True


@dataclass
class TheoremHead:
    """The heading LaTeX prints at a theorem-like environment: "Theorem 2.3 (Morse). "."""

    start: int  # position of its \\begin in the body
    end: int  # after the \\begin{name} and its optional note
    name: str  # the environment
    latex: str  # the heading, the note's LaTeX inside it (its cites and refs print as in the text)


@dataclass
class Heading:
    """A sectioning command of the body; numbered by the walk (:mod:`corpus.parse.latex.numbering`)."""

    start: int  # position in the body of the command
    level: int  # part -1, chapter 0, section 1, subsection 2...
    star: bool
    ref_id: str  # its SECREFn entry
    title: str  # its title as plain text (what a \\ref to an unnumbered heading's label prints)
    title_latex: str
    num: str | None = None  # as LaTeX prints it; None when unnumbered (starred, or past secnumdepth)


_NEWTHEOREM_RE = re.compile(  # elsarticle's \newdefinition and \newproof are \newtheorem's kin
    r"\\((?:sp)?newtheorem|newdefinition|newproof)(\*?)\s*\{\s*([^{}]+?)\s*\}\s*(?:\[\s*([^\]]*?)\s*\])?\s*\{([^{}]*)\}\s*(?:\[\s*([^\]]*?)\s*\])?"
)
_DECLARETHEOREM_RE = re.compile(
    r"\\declaretheorem\s*(?:\[([^\]]*)\])?\s*\{\s*([^{}]+?)\s*\}(?:\s*\[([^\]]*)\])?"
)
_KEYVAL_RE = re.compile(r"([\w-]+)\s*=\s*\{?([^,{}]*)\}?")
# Theorem-like environments classes define without the paper declaring them (llncs, svjour,
# amsbook...): numbered on their own.
_COMMON_THEOREMS = (
    "theorem lemma proposition corollary definition remark example conjecture claim assumption "
    "hypothesis fact observation problem question exercise notation property"
).split()


# Theorem-like environments a class declares itself on its theorem counter, as its .cls declares
# them (siamart and siamonline, whose \newsiamthm and \newsiamremark add to it; LIPIcs and OASIcs,
# within sections with the numberwithinsect option)
_SIAM = "lemma corollary proposition definition"
_LIPICS = "lemma corollary proposition exercise definition conjecture observation example note remark claim"
_ACMART = "conjecture proposition lemma corollary example definition"
_CLASS_THEOREMS = {
    "siamart": _SIAM, "siamonline": _SIAM, "lipics-v": _LIPICS, "lipics": _LIPICS, "oasics-v": _LIPICS,
    "acmart": _ACMART,
}  # fmt: skip
_NEWSIAMTHM_RE = re.compile(r"\\newsiam(?:thm|remark)\s*\{\s*([^{}]+?)\s*\}\s*\{")


def class_theorems(cls: str, options: list[str]) -> str:
    """The ``\\newtheorem`` declarations of a document class (``siamart220329`` is siamart's)."""
    family = re.sub(r"\d+$", "", cls)
    if family not in _CLASS_THEOREMS:
        return ""
    within = "[section]" if family.startswith(("lipics", "oasics")) and "numberwithinsect" in options else ""
    if family == "acmart":  # theorems within sections, unless acmthm=false
        if "acmthm=false" in options:
            return ""
        within = "[section]"
    shared = "".join(
        f"\\newtheorem{{{n}}}[theorem]{{{n.capitalize()}}}" for n in _CLASS_THEOREMS[family].split()
    )
    return f"\\newtheorem{{theorem}}{{Theorem}}{within}{shared}"


def theorems(preamble: str, class_declared: str = "") -> dict[str, Theorem]:
    """Theorem-like environments the paper declares, by environment name, then those its class
    declares that the paper does not (``class_declared``: acmart declares its own at the end of
    the preamble, each only if undefined)."""
    out: dict[str, Theorem] = {}
    _newtheorems(_NEWSIAMTHM_RE.sub(r"\\newtheorem{\1}[theorem]{", preamble), out)
    for m in _DECLARETHEOREM_RE.finditer(preamble):
        opts = dict(_KEYVAL_RE.findall((m[1] or "") + "," + (m[3] or "")))
        name = m[2]
        shared = opts.get("sibling") or opts.get("sharenumber") or opts.get("numberlike")
        parent = out.get(shared or "")
        out[name] = Theorem(
            title=(opts.get("name") or opts.get("title") or name.capitalize()).strip(),
            counter=parent.counter if parent else (shared or name),
            within=parent.within if parent else (opts.get("numberwithin") or opts.get("within") or None),
            numbered=opts.get("numbered", "yes").strip() != "no",
        )
    _newtheorems(class_declared, out, only_new=True)
    for name in _COMMON_THEOREMS:
        out.setdefault(name, Theorem(title=name.capitalize(), counter=name))
    return out


def _newtheorems(text: str, out: dict[str, Theorem], only_new: bool = False) -> None:
    """``\\newtheorem`` (and elsarticle's kin) in ``text``, into ``out``."""
    for m in _NEWTHEOREM_RE.finditer(text):
        cmd, star, name, shared, title, within = m.groups()
        if only_new and name in out:
            continue
        if shared and within:  # \newtheorem{a}[b]{T}[c] is not LaTeX; read it as sharing
            within = None
        counter = out[shared].counter if shared and shared in out else (shared or name)
        parent = out.get(shared) if shared else None
        out[name] = Theorem(
            title=title.strip(),
            counter=counter,
            within=(parent.within if parent else within) or None,
            numbered=not star and cmd != "newproof",
        )


def head(body: str, m: re.Match, name: str, thm: Theorem | None, num: str | None) -> TheoremHead:
    """amsthm's heading: "Title num (note). " ("Proof. ", or the proof's own title, "Proof of
    Lemma 2. ")."""
    note, end = read_optional(body, m.end())
    note = note.strip() if note else ""
    if thm is None:  # proof
        latex = (note or "Proof") + ". "
    else:
        latex = " ".join(p for p in (thm.title, num) if p) + (f" ({note})" if note else "") + ". "
    return TheoremHead(m.start(), end, name, latex)
