"""What a LaTeX ``\\label`` refers to, as LaTeX decides it: the last counter stepped before
it in the same group. Sections, theorem-like environments (``\\newtheorem``,
``\\declaretheorem``, ``\\spnewtheorem``; shared counters and numbering within sections),
enumerate items, and a label inside a section title. Figures, tables, equations and
algorithms are floats cut out of the body and numbered by :mod:`corpus.parse.latex` itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from corpus.parse.latex.braces import read_optional


@dataclass
class Target:
    """What ``\\ref`` prints for a label (``num``) and the ref entry it links to."""

    ref_id: str | None
    num: str
    kind: str  # figure, table, equation, section, algorithm, item, or a theorem's title ("Lemma")


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
    """A sectioning command as the parser numbered it."""

    start: int  # position in the body of the command
    level: int  # chapter 0, section 1, subsection 2...
    target: Target
    num: str | None  # None for a starred heading (its labels print its title)


_NEWTHEOREM_RE = re.compile(
    r"\\(?:sp)?newtheorem(\*?)\s*\{\s*([^{}]+?)\s*\}\s*(?:\[\s*([^\]]*?)\s*\])?\s*\{([^{}]*)\}\s*(?:\[\s*([^\]]*?)\s*\])?"
)
_DECLARETHEOREM_RE = re.compile(
    r"\\declaretheorem\s*(?:\[([^\]]*)\])?\s*\{\s*([^{}]+?)\s*\}(?:\s*\[([^\]]*)\])?"
)
_KEYVAL_RE = re.compile(r"([\w-]+)\s*=\s*\{?([^,{}]*)\}?")
_LEVEL_OF = {"chapter": 0, "section": 1, "subsection": 2, "subsubsection": 3}
# Theorem-like environments classes define without the paper declaring them (llncs, svjour,
# amsbook...): numbered on their own.
_COMMON_THEOREMS = (
    "theorem lemma proposition corollary definition remark example conjecture claim assumption "
    "hypothesis fact observation problem question exercise notation property"
).split()


def theorems(preamble: str) -> dict[str, Theorem]:
    """Theorem-like environments the paper declares, by environment name."""
    out: dict[str, Theorem] = {}
    for m in _NEWTHEOREM_RE.finditer(preamble):
        star, name, shared, title, within = m.groups()
        if shared and within:  # \newtheorem{a}[b]{T}[c] is not LaTeX; read it as sharing
            within = None
        counter = out[shared].counter if shared and shared in out else (shared or name)
        parent = out.get(shared) if shared else None
        out[name] = Theorem(
            title=title.strip(),
            counter=counter,
            within=(parent.within if parent else within) or None,
            numbered=not star,
        )
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
    for name in _COMMON_THEOREMS:
        out.setdefault(name, Theorem(title=name.capitalize(), counter=name))
    return out


_EVENT_RE = re.compile(r"\\(begin|end)\s*\{([^{}]+)\}|\\label\s*\{([^{}]*)\}|\\item(?![A-Za-z])(\s*\[)?")


@dataclass
class _Walk:
    numbers: dict[str, int] = field(default_factory=dict)
    within_num: dict[int, str] = field(default_factory=dict)  # level -> current number at that level


def assign_labels(
    body: str, headings: list[Heading], declared: dict[str, Theorem], labels: dict[str, Target]
) -> list[TheoremHead]:
    """Register every ``\\label`` of ``body`` (figures and equations already cut out) with the
    target LaTeX gives it (labels already known keep their target), and return the heading of
    each theorem-like and proof environment, numbered as the labels in it are."""
    heads: list[TheoremHead] = []
    walk = _Walk()
    levels_within = {t.counter: _LEVEL_OF.get(t.within or "") for t in declared.values() if t.numbered}
    current: Target | None = None
    stack: list[tuple[str, Target | None, int]] = []  # (environment, target before it, enumerate depth)
    depth = 0
    items: list[int] = []
    k = 0
    for m in _EVENT_RE.finditer(body):
        while k < len(headings) and headings[k].start <= m.start():
            h = headings[k]
            k += 1
            current = h.target
            if h.num is not None:
                walk.within_num[h.level] = h.num
                for lv in [lv for lv in walk.within_num if lv > h.level]:
                    del walk.within_num[lv]
            for counter, lv in levels_within.items():
                if lv is not None and h.level <= lv:
                    walk.numbers[counter] = 0
        kind, name, label = m.group(1), m.group(2), m.group(3)
        if kind == "begin":
            name = name.strip()
            stack.append((name, current, depth))
            thm = declared.get(name)
            if thm is not None and thm.numbered:
                n = walk.numbers.get(thm.counter, 0) + 1
                walk.numbers[thm.counter] = n
                lv = levels_within.get(thm.counter)
                prefix = walk.within_num.get(lv, "0") + "." if lv is not None else ""
                current = Target(current.ref_id if current else None, f"{prefix}{n}", thm.title)
            if thm is not None or name == "proof":
                heads.append(
                    _head(body, m, name, thm, current.num if thm and thm.numbered and current else None)
                )
            elif name == "enumerate":
                depth += 1
                items.append(0)
        elif kind == "end":
            name = name.strip()
            for j in range(len(stack) - 1, -1, -1):
                if stack[j][0] == name:
                    _, current, depth = stack[j]
                    del stack[j:]
                    items = items[:depth]
                    break
        elif label is not None:
            if current is not None:
                labels.setdefault(label.strip(), current)
        elif items and m.group(4) is None:  # \item (an item with its own [label] is not numbered)
            items[-1] += 1
            num = str(items[0]) + "".join(chr(ord("a") + n - 1) for n in items[1:] if 0 < n <= 26)
            current = Target(current.ref_id if current else None, num, "item")
    return heads


def _head(body: str, m: re.Match, name: str, thm: Theorem | None, num: str | None) -> TheoremHead:
    """amsthm's heading: "Title num (note). " ("Proof. ", or the proof's own title, "Proof of
    Lemma 2. ")."""
    note, end = read_optional(body, m.end())
    note = note.strip() if note else ""
    if thm is None:  # proof
        latex = (note or "Proof") + ". "
    else:
        latex = " ".join(p for p in (thm.title, num) if p) + (f" ({note})" if note else "") + ". "
    return TheoremHead(m.start(), end, name, latex)
