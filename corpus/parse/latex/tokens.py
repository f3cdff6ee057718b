"""TeX's mouth: LaTeX source -> tokens, read with the category codes TeX reads them with.

A token is a ``str``; its first character says its kind (cheap to test in the expander's loop):

* ``\\name`` a control word (letters, and ``@`` where ``\\makeatletter`` or a package makes it
  one; ``_`` and ``:`` under ``\\ExplSyntaxOn``), ``\\.`` a control symbol (``\\>``, ``\\,``);
* ``{`` ``}`` ``$`` ``#`` the begin-group, end-group, math-shift and parameter characters;
* :data:`SKIPPED` + spaces: the blanks TeX skips after a control word (kept for the text's lines,
  dropped when the word is expanded), :data:`PAR` + blank lines: a paragraph break (``\\par``);
* anything else: a run of characters that are text (letters, digits, punctuation, single line
  ends). Runs are read in one regex step, not a character at a time (a pure-Python tokenizer is
  otherwise the slowest part of the parser); the expander splits one where TeX would read a
  character alone (an undelimited argument, a delimiter).

Comments end at the line end as TeX ends them. Verbatim is read before the rest
(:func:`verbatim`): environments whose body TeX reads verbatim are dropped, ``\\verb|x|`` becomes
its text with the characters that are special escaped, so no brace or ``$`` inside them is read.
"""

from __future__ import annotations

import re

from corpus.parse.latex.braces import LatexError, read_group, read_optional

SKIPPED = "\x00"  # blanks after a control word
PAR = "\x01"  # a blank line
PARAM = "\x02"  # #n in a macro body (the digit follows)
NO_VALUE = "\x03"  # an xparse optional argument not given (-NoValue-)
BODY_END = "\x04"  # where a macro's expansion ends (the name follows): for catching recursion
ENV_END = "\x05"  # where a paper environment's end code ends (its name follows): its group closes
ENDS = BODY_END + ENV_END

_WS = r"[ \t]*(?:\n(?![ \t]*\n)[ \t]*)?"  # what TeX skips after a control word (one line end at most)
_REST = (
    r"|(?P<par>\n[ \t]*\n\s*)"
    r"|%[^\n]*(?:\n(?![ \t]*\n)[ \t]*)?"  # a comment with its line end and the next line's indentation
    r"|[{}$#]"
    r"|(?:[^\\{}$#%\n]+|\n(?![ \t]*\n))+"
    r"|\\"  # a backslash ending the text
)


def _token_re(letters: str) -> re.Pattern:
    return re.compile(rf"\\(?:(?P<cw>[{letters}]+)(?P<ws>{_WS})|.)" + _REST, re.S)


_PLAIN = _token_re("A-Za-z")
_AT = _token_re("A-Za-z@")
_EXPL = _token_re("A-Za-z@_:")
_CATCODE_RE = re.compile(r"\s*`\\?@\s*=?\s*(\d+)\s*|\s*64\s*=?\s*(\d+)\s*")
_SWITCHES = {
    "makeatletter": _AT,
    "makeatother": _PLAIN,
    "ExplSyntaxOn": _EXPL,
    "ExplSyntaxOff": _PLAIN,
}
_CONTROL = re.compile(r"[\x00-\x05]")


def tokenize(text: str, at_letter: bool = False) -> list[str]:
    """``text`` -> tokens. ``\\makeatletter``/``\\makeatother``, ``\\ExplSyntaxOn``/``Off`` and
    ``\\catcode`\\@=11`` (12) change how the text after them is read, as in TeX; they leave no
    token. ``at_letter``: ``@`` is a letter from the start (a package file)."""
    if _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    pattern = _AT if at_letter else _PLAIN
    out: list[str] = []
    append = out.append
    pos, n = 0, len(text)
    while pos < n:
        switched = False
        for m in pattern.finditer(text, pos):
            kind = m.lastgroup  # None: text, a brace, a control symbol, a comment
            if kind is None:
                tok = m.group()
                if tok[0] != "%":
                    append(tok)
            elif kind == "ws":  # a control word and the blanks after it
                word = m.group("cw")
                if word in _SWITCHES or word == "catcode":
                    new = _switch(word, text, m)
                    if new is not None:
                        pattern, pos = new
                        switched = True
                        break
                append("\\" + word)
                ws = m.group("ws")
                if ws:
                    append(SKIPPED + ws)
            else:
                append(PAR + m.group())
        if not switched:
            break
    return out


def _switch(word: str, text: str, m: re.Match) -> tuple[re.Pattern, int] | None:
    """The pattern after a category-code change, and where reading goes on."""
    if word != "catcode":
        return _SWITCHES[word], m.end()
    c = _CATCODE_RE.match(text, m.end("cw"))
    if not c:
        return None
    code = c.group(1) or c.group(2)
    if code == "11":
        return _AT, c.end()
    if code == "12":
        return _PLAIN, c.end()
    return None


def is_space(tok: str) -> bool:
    """A token TeX reads as blank: skipped blanks, or a run of spaces (not a paragraph break)."""
    return tok[0] == SKIPPED or tok.isspace()


def text_of(tokens: list[str]) -> str:
    """Tokens back to LaTeX source, markers removed (what the rest of the parser reads)."""
    text = "".join(tokens)
    if SKIPPED in text or PAR in text or NO_VALUE in text:
        text = text.replace(SKIPPED, "").replace(PAR, "").replace(NO_VALUE, "")
    return text


def detokenize(tokens: list[str]) -> str:
    """Tokens as the string ``\\detokenize`` would give (blanks one space): for comparing."""
    return " ".join(text_of(tokens).split())


# ----------------------------------------------------------------------------- verbatim

_VERBATIM_RE = re.compile(
    r"\\begin\s*\{(verbatim\*?|comment|minted|Verbatim\*?|BVerbatim|alltt|filecontents\*?|lstlisting"
    r"|spverbatim|verbatimtab|boxedverbatim)\}"
    r"|\\(verb)\*?(?![A-Za-z])"
    r"|\\(lstinputlisting|url|nolinkurl|path)(?![A-Za-z])"
)
_FIRSTNUMBER_RE = re.compile(r"firstnumber\s*=\s*(\d+)")
_LABEL_RE = re.compile(r"\\label\s*\{([^{}]*)\}")
_VERB_SPECIAL = re.compile(r"[\\{}$&#^_%~]")
_VERB_ESCAPES = {
    "\\": "\\textbackslash{}", "{": "\\{", "}": "\\}", "$": "\\$", "&": "\\&", "#": "\\#",
    "^": "\\textasciicircum{}", "_": "\\_", "%": "\\%", "~": "\\textasciitilde{}",
}  # fmt: skip


def verbatim(text: str) -> str:
    """What TeX reads verbatim, read first: ``verbatim``-like environments dropped (their code is
    no text), ``\\verb|...|`` made its text with special characters escaped, a ``%`` inside
    ``\\url{...}`` a percent sign; a ``lstlisting`` keeps its options and the labels of its lines
    (``\\lstlinelabel{line:add}{2}``), ``\\lstinputlisting[opts]{file}`` is an empty listing."""
    if "\\begin" not in text and "\\verb" not in text and "\\url" not in text and "\\lst" not in text:
        return text
    out, pos = [], 0
    for m in _VERBATIM_RE.finditer(text):
        if m.start() < pos:
            continue
        env, command = m.group(1), m.group(3)
        if env:
            end = re.compile(r"\\end\s*\{" + re.escape(env) + r"\}").search(text, m.end())
            if end is None:
                continue  # never closed: the rest is text
            out.append(text[pos : m.start()])
            if env == "lstlisting":
                out.append(_listing(text, m.end(), end.start()))
            pos = end.end()
        elif m.group(2):  # \verb<c>...<c> on one line
            j = m.end()
            if j >= len(text) or text[j].isspace() or text[j].isalpha():
                continue
            close = text.find(text[j], j + 1)
            if close < 0 or "\n" in text[j + 1 : close]:
                continue
            out.append(text[pos : m.start()])
            out.append(_VERB_SPECIAL.sub(lambda c: _VERB_ESCAPES[c.group()], text[j + 1 : close]))
            pos = close + 1
        elif command == "lstinputlisting":
            opts, i = read_optional(text, m.end())
            try:
                _, i = read_group(text, i)
            except LatexError:
                continue
            out.append(text[pos : m.start()] + "\\begin{lstlisting}[" + (opts or "") + "]\\end{lstlisting}")
            pos = i
        else:  # \url{...}: hyperref reads it with % a character
            j = m.end()
            while j < len(text) and text[j] in " \t":
                j += 1
            close = text.find("}", j)
            if j >= len(text) or text[j] != "{" or close < 0 or "%" not in text[j:close]:
                continue
            out.append(text[pos:j] + re.sub(r"(?<!\\)%", r"\\%", text[j:close]))
            pos = close
    out.append(text[pos:])
    return "".join(out)


def _listing(text: str, start: int, end: int) -> str:
    """A listing's options and the labels escaped into its code, each with its line number."""
    opts, i = read_optional(text, start)
    first = _FIRSTNUMBER_RE.search(opts or "")
    number = int(first.group(1)) if first else 1
    lines = text[i:end].split("\n")[1:]  # the code begins on the next line
    marks = [
        f"\\lstlinelabel{{{lab.strip()}}}{{{number + k}}}"
        for k, line in enumerate(lines)
        for lab in _LABEL_RE.findall(line)
    ]
    return "\\begin{lstlisting}[" + (opts or "") + "]" + "".join(marks) + "\\end{lstlisting}"
