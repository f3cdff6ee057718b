"""Display equations numbered as amsmath numbers them: a number per row of an align (rows of
a nested ``aligned`` are one row), one for an equation however many lines, none for starred
environments and ``\\nonumber`` rows, a row's ``\\tag{..}`` instead of its number, and
``subequations``: one number, its rows lettered (4a, 4b), a label on the group its number."""

from __future__ import annotations

import bisect
import re

from corpus.parse.latex.labels import Target
from corpus.parse.latex.text import _plain

UNNUMBERED_MATH = frozenset(
    "displaymath math dmath* array matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases aligned gathered split".split()
)
_SINGLE_EQUATIONS = frozenset({"equation", "dmath", "multline"})  # one number, however many lines
_NONUMBER_RE = re.compile(r"\\no(?:number|tag)(?![A-Za-z])")
_ROW_RE = re.compile(r"\\\\|\\(begin|end)\s*\{[^{}]*\}")
_TAG_RE = re.compile(r"\\tag\*?\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_LABEL_RE = re.compile(r"\\label\s*\{([^{}]*)\}")
_SUBEQUATIONS_RE = re.compile(r"\\begin\s*\{subequations\}(.*?)\\end\s*\{subequations\}", re.S)
_MATH_ENV_RE = re.compile(r"\\begin\s*\{(\w+\*?)\}.*?\\end\s*\{\1\}", re.S)


class EquationNumbers:
    """The equation counter over one body, display environment after display environment."""

    def __init__(self, body: str, labels: dict[str, Target]) -> None:
        self.counter = 0
        self.labels = labels
        self.groups: list[tuple[int, int, list[str]]] = []  # subequations: (start, end, own labels)
        if "subequations" in body:
            for m in _SUBEQUATIONS_RE.finditer(body):
                own = _LABEL_RE.findall(_MATH_ENV_RE.sub("", m.group(1)))
                self.groups.append((m.start(), m.end(), [lab.strip() for lab in own]))
        self.starts = [lo for lo, _, _ in self.groups]
        self.group: int | None = None  # the subequations group being numbered
        self.letter = 0

    def number(self, at: int, name: str, content: str, ref_id: str) -> tuple[str | None, dict[str, str]]:
        """The first number the environment at ``at`` prints and each of its labels' numbers."""
        k = bisect.bisect_right(self.starts, at) - 1
        group = k if k >= 0 and at < self.groups[k][1] else None
        if group is not None and group != self.group:
            self.counter += 1
            self.letter = 0
            for lab in self.groups[group][2]:  # \label{eq:all} on the group: its own number
                self.labels.setdefault(lab, Target(ref_id, str(self.counter), "equation"))
        self.group = group
        numbered = not name.endswith("*") and name not in UNNUMBERED_MATH
        rows = [content] if name in _SINGLE_EQUATIONS else _rows(content)
        first: str | None = None
        numbers: dict[str, str] = {}
        last = str(self.counter) if self.counter else ""
        for row in rows:
            if not row.strip():
                continue
            tag = _TAG_RE.search(row)
            if tag:
                num: str | None = _plain(tag.group(1))
            elif numbered and not _NONUMBER_RE.search(row):
                num = self._next(group is not None)
                last = num
            else:
                num = None
            first = first or num
            for lab in _LABEL_RE.findall(row):
                numbers[lab.strip()] = num or last
        return first, numbers

    def _next(self, lettered: bool) -> str:
        if lettered:
            self.letter += 1
            return f"{self.counter}{chr(ord('a') + min(self.letter, 26) - 1)}"
        self.counter += 1
        return str(self.counter)


def _rows(content: str) -> list[str]:
    """The rows of an align-like environment: split at ``\\\\`` outside nested environments."""
    rows, depth, pos = [], 0, 0
    for m in _ROW_RE.finditer(content):
        if m.group(1) == "begin":
            depth += 1
        elif m.group(1) == "end":
            depth -= 1
        elif depth <= 0:
            rows.append(content[pos : m.start()])
            pos = m.end()
    rows.append(content[pos:])
    return rows
