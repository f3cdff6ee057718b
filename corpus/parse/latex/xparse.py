"""xparse commands (``\\NewDocumentCommand{\\norm}{m}{...}``): their argument specifications
read, their arguments taken from the text as xparse takes them, and the tests their bodies
make on them (``\\IfNoValueTF``, ``\\IfBooleanTF``) decided, so they expand like
``\\newcommand`` ones."""

from __future__ import annotations

import re

from corpus.parse.latex.braces import LatexError, read_arg, read_group, read_optional, skip_ws

NO_VALUE = "\ue040"  # an optional argument not given (xparse's -NoValue-)
_TRUE, _FALSE = "\\BooleanTrue", "\\BooleanFalse"
_TOKEN_RE = re.compile(r"\s*([+!]*)\s*([mosStdDrRvObeE])")


def parse_spec(spec: str) -> list[tuple[str, str]] | None:
    """An argument specification -> (kind, data) per argument: ``m``; ``o``/``O`` (data: the
    default); ``s``; ``t`` (the token); ``d``/``D``/``r``/``R`` (the delimiters, and a default
    after them); None when it holds a kind this reader does not take (verbatim, bodies)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(spec):
        if spec[i].isspace():
            i += 1
            continue
        m = _TOKEN_RE.match(spec, i)
        if not m:
            return None
        kind = m.group(2)
        i = m.end()
        if kind in "mos":
            out.append((kind, ""))
        elif kind == "O":
            default, i = read_group(spec, i)
            out.append(("o", default or ""))
        elif kind == "t":
            out.append(("t", spec[i : i + 1]))
            i += 1
        elif kind in "dDrR":
            delims = spec[i : i + 2]
            i += 2
            default = NO_VALUE
            if kind in "DR":
                default, i = read_group(spec, i)
            out.append(("d", delims + (default or "")))
        else:
            return None
    return out if len(out) <= 9 else None


def read_xparse_args(text: str, i: int, spec: list[tuple[str, str]]) -> tuple[list[str], int]:
    """The arguments of a command with ``spec`` read from ``text[i:]``, and where they end."""
    args: list[str] = []
    for kind, data in spec:
        if kind == "m":
            arg, i = read_arg(text, i)
            args.append(arg)
        elif kind == "o":
            opt, i = read_optional(text, i)
            args.append(opt if opt is not None else (data or NO_VALUE))
        elif kind in "st":
            token = "*" if kind == "s" else data
            j = skip_ws(text, i)
            present = text.startswith(token, j)
            i = j + len(token) if present else i
            args.append(_TRUE if present else _FALSE)
        else:  # d: delimited, e.g. "()" (data: the two delimiters, then a default)
            open_, close, default = data[0], data[1], data[2:]
            j = skip_ws(text, i)
            end = text.find(close, j + 1, j + 2000) if text.startswith(open_, j) else -1
            if end >= 0 and "\n\n" not in text[j:end]:
                args.append(text[j + 1 : end])
                i = end + 1
            else:
                args.append(default or NO_VALUE)
    return args, i


_TEST_RE = re.compile(r"\\(IfNoValue|IfValue|IfBoolean)(TF|T|F)(?![A-Za-z])")


def decide_tests(body: str) -> str:
    """``\\IfNoValueTF{x}{a}{b}``, ``\\IfValueT``, ``\\IfBooleanTF``... replaced by the branch
    taken (innermost decided first, then the others); values not given vanish."""
    for _ in range(16):
        found = False
        out, pos = [], 0
        for m in _TEST_RE.finditer(body):
            if m.start() < pos:
                continue
            try:
                value, i = read_arg(body, m.end())
                branches = []
                for _b in m.group(2):
                    arg, i = read_arg(body, i)
                    branches.append(arg)
            except LatexError:
                continue
            test, which = m.group(1), m.group(2)
            value = value.strip()
            holds = {
                "IfNoValue": value == NO_VALUE,
                "IfValue": value != NO_VALUE,
                "IfBoolean": value == _TRUE,
            }[test]
            if which == "TF":
                taken = branches[0] if holds else branches[1]
            else:
                taken = branches[0] if holds == (which == "T") else ""
            out.append(body[pos : m.start()] + "{" + taken + "}")
            pos = i
            found = True
        out.append(body[pos:])
        body = "".join(out)
        if not found:
            break
    return body.replace(NO_VALUE, "")
