"""What TeX recovers from instead of stopping: braces that do not pair up (it closes or drops
them and warns), so one slip does not lose a paper."""

from __future__ import annotations

import re

from corpus.parse.latex.braces import BRACE_TOKEN, LatexError, brace_excess

_PARAGRAPH_END_RE = re.compile(r"\n[ \t]*\n|\\par(?![A-Za-z])|\\(begin|end)\s*\{|\\[\s\S]|[{}]")
_MAX_BRACE_REPAIRS = 200  # beyond this the text is not a paper TeX would typeset: fail it
_PARAGRAPH_WINDOW = 100_000
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")


def balance_braces(text: str, warnings: list[str] | None = None) -> str:
    """Pair up ``{`` and ``}`` as TeX recovers from them: a ``}`` with no ``{`` is dropped
    ("Too many }'s"), a ``{`` never closed is closed where its paragraph ends (a blank line,
    ``\\par``, or the ``\\end`` of its environment: "Paragraph ended before ... was complete").
    Each repair is an ``unbalanced_braces`` warning with its line. Text whose counts agree
    comes back as it is (one count, no scan: the common case costs nothing)."""
    if not brace_excess(text):
        return text
    opened: list[int] = []
    edits: list[tuple[int, str, int]] = []  # (position, what replaces the character there, source)
    for m in BRACE_TOKEN.finditer(text):
        c = m.group()
        if c == "{":
            opened.append(m.start())
        elif c == "}":
            if opened:
                opened.pop()
            else:
                edits.append((m.start(), "", m.start()))
    if len(opened) + len(edits) > _MAX_BRACE_REPAIRS:
        raise LatexError(
            "unbalanced_braces", f"{len(opened)} '{{' never closed and {len(edits)} '}}' closing nothing"
        )
    edits += [(paragraph_end(text, p + 1), "}", p) for p in opened]
    edits.sort()
    out, pos = [], 0
    for at, repl, origin in edits:
        if warnings is not None:
            line = text.count("\n", 0, origin) + 1
            what = "never closed; closed where its paragraph ends" if repl else "closes nothing; dropped"
            warnings.append(f"unbalanced_braces: '{'{' if repl else '}'}' on line {line} {what}")
        out.append(text[pos:at])
        out.append(repl)
        pos = at if repl else at + 1
    out.append(text[pos:])
    return "".join(out)


def paragraph_end(text: str, i: int) -> int:
    """Where the paragraph holding ``text[i]`` ends: the first blank line or ``\\par`` outside
    the groups and environments opened after ``i``, or an ``\\end`` of one opened before
    (looked for over a bounded window, then the next blank line, so a hostile text stays linear)."""
    depth = envs = 0
    window = i + _PARAGRAPH_WINDOW
    if window < len(text):
        blank = _BLANK_LINE_RE.search(text, window)
        fallback = blank.start() if blank else len(text)
    else:
        fallback = len(text)
    for m in _PARAGRAPH_END_RE.finditer(text, i, min(window, len(text))):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif m.group(1) == "begin":
            envs += 1
        elif m.group(1) == "end":
            if envs == 0:
                return m.start()
            envs -= 1
        elif (c[0] == "\n" or c.startswith("\\par")) and depth <= 0 and envs == 0:
            return m.start()
    return fallback
