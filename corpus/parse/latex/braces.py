"""Reading TeX's groups and arguments: braces matched (escaped ones aside), ``{...}`` groups,
``[...]`` optional arguments and undelimited arguments (a group or one token), as TeX reads
them; what every LaTeX reader of the parser builds on."""

from __future__ import annotations

import re

from corpus.ingest.eprint import EprintError

LatexError = EprintError  # per-paper failures carry a code, like the e-print ones
_CONTROL_SEQUENCE = re.compile(r"\\(?:[A-Za-z@]+|.)")

BRACE_TOKEN = re.compile(r"\\[\s\S]|[{}]")
WS = re.compile(r"\s+")


def brace_excess(text: str) -> int:
    """``{`` minus ``}`` in ``text``, escaped ones (``\\{``, ``\\}``) and ``\\\\`` aside: 0 when
    they pair up by count (one pass of C-level counting, no scan)."""
    bare = text.replace("\\\\", "").replace("\\{", "").replace("\\}", "")
    return bare.count("{") - bare.count("}")


def match_brace(s: str, i: int) -> int:
    """Index just past the ``}`` matching the ``{`` at ``s[i]``; -1 when unbalanced."""
    close = s.find("}", i + 1)
    if close >= 0 and s.find("{", i + 1, close) < 0 and s.find("\\", i + 1, close) < 0:
        return close + 1  # a flat group (most are): found by two C-level scans
    depth = 0
    for m in BRACE_TOKEN.finditer(s, i):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return m.end()
    return -1


def skip_ws(s: str, i: int) -> int:
    if i >= len(s) or s[i] not in " \t\n\r":
        return i  # the common case: no space to skip
    n = len(s)
    while i < n and s[i] in " \t\n\r":
        i += 1
    return i


def read_group(s: str, i: int) -> tuple[str | None, int]:
    """A ``{...}`` group (content, end) at ``i`` after spaces, else (None, i)."""
    j = skip_ws(s, i)
    if j < len(s) and s[j] == "{":
        end = match_brace(s, j)
        if end < 0:
            raise LatexError("unbalanced_braces", f"unclosed argument near: {s[j : j + 60]!r}")
        return s[j + 1 : end - 1], end
    return None, i


def read_optional(s: str, i: int) -> tuple[str | None, int]:
    """A ``[...]`` optional argument, else (None, i): braces inside respected, and brackets
    nested as xparse nests them (``[see \\cite[p.~3]{x}]``: LaTeX 2e would cut at the first
    ``]``, which no author means)."""
    j = skip_ws(s, i)
    if j >= len(s) or s[j] != "[":
        return None, i
    close = s.find("]", j + 1)
    if close >= 0 and not any(s.find(c, j + 1, close) >= 0 for c in "\\{}["):
        return s[j + 1 : close], close + 1  # a flat argument (most are)
    depth, brackets, k = 0, 0, j + 1
    while k < len(s):
        c = s[k]
        if c == "\\":
            k += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth <= 0:
            if c == "[":
                brackets += 1
            elif c == "]":
                if brackets == 0:
                    return s[j + 1 : k], k + 1
                brackets -= 1
        k += 1
    return None, i


def read_arg(s: str, i: int) -> tuple[str, int]:
    """A mandatory macro argument: a group, a control sequence or one character."""
    group, end = read_group(s, i)
    if group is not None:
        return group, end
    j = skip_ws(s, i)
    if j >= len(s):
        return "", j
    if s[j] == "\\":
        m = _CONTROL_SEQUENCE.match(s, j)
        return m.group(), m.end()
    return s[j], j + 1


def control_words(names: set[str] | frozenset[str] | list[str]) -> str:
    """A regex alternation of command names built as a trie (``a(?:ddcontentsline|ffil)|...``):
    one branch per first letter instead of one per name, so a search over a paper stays fast
    whatever the table's size. Match it after a backslash, with ``(?![A-Za-z])`` after it."""
    tree: dict = {}
    for name in names:
        node = tree
        for c in name:
            node = node.setdefault(c, {})
        node[""] = {}

    def build(node: dict) -> str:
        branches = [re.escape(c) + build(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return "(?:" + body + ")?" if "" in node else body

    return build(tree)
