"""Front matter: the title as LaTeX prints it, the abstract, and where the body begins (front
matter such as ``\\author``, ``\\affiliation``, whatever precedes ``\\maketitle``, a hand-made
title block or title page, a thesis's copyright and committee pages is no body text)."""

from __future__ import annotations

import re

from corpus.parse.latex.braces import BRACE_TOKEN, LatexError, read_group, read_optional
from corpus.parse.latex.environments import ABSTRACT_MARK
from corpus.parse.latex.sections import HEADING_RE
from corpus.parse.latex.text import _plain

_MAKETITLE_RE = re.compile(r"\\maketitle(?![A-Za-z])")


_TITLE_RE = re.compile(r"\\(?:title|icmltitle|Title)\s*(?:\[[^\]]*\])?\s*\{")  # \Title: MDPI's classes


def title(text: str, body: str = "") -> str:
    """The paper's title, notes (``\\thanks``, ``\\footnote``...) left out: the one the first
    ``\\maketitle`` prints, the last ``\\title`` given before it (a supplement's own title
    further on is not the paper's); without a ``\\title``, the one the ``body`` sets by hand
    (:func:`display_title`: PLOS's and RSC's templates, hand-made title pages)."""
    made = _MAKETITLE_RE.search(text)
    m = None
    for m in _TITLE_RE.finditer(text, 0, made.start() if made else len(text)):  # noqa: B007
        pass  # the last one given
    if m is None:
        m = _TITLE_RE.search(text)
    if not m:
        return display_title(body) or _pdf_title(text)
    try:
        raw, _ = read_group(text, m.end() - 1)
    except LatexError:
        return ""
    given = _without_notes(re.sub(r"\\\\", " ", raw or ""))
    return given or display_title(body)


# a note's mark after a title ("Title$^\\dag$", "Title\\textsuperscript{*}"): its note is left out too
_TRAILING_MARK_RE = re.compile(
    r"\s*(?:\$\^\s*\{?[^${}]{1,12}\}?\$|\\textsuperscript\s*\{[^{}]{1,12}\})(?=[\s}]*$)"
)


_PDFTITLE_RE = re.compile(r"\bpdftitle\s*=\s*(?=\{)")


def _pdf_title(text: str) -> str:
    """The title a paper gives its PDF (hyperref's ``pdftitle={...}``), when it sets its own
    title page in a way no rule reads (classicthesis's spaced small capitals)."""
    m = _PDFTITLE_RE.search(text)
    try:
        raw, _ = read_group(text, m.end()) if m else (None, 0)
    except LatexError:
        return ""
    return _without_notes(raw or "")


def _without_notes(raw: str) -> str:
    raw = _TRAILING_MARK_RE.sub("", raw)
    out, pos = [], 0
    for n in re.finditer(r"\\(?:thanks|footnote|tnoteref|fnref|titlenote)(?![A-Za-z])", raw):
        if n.start() < pos:
            continue
        _, i = read_optional(raw, n.end())
        try:
            note, end = read_group(raw, i)
        except LatexError:
            note, end = None, i
        out.append(raw[pos : n.start()])
        pos = end if note is not None else n.end()
    out.append(raw[pos:])
    return _plain("".join(out))


_SIZE_RE = re.compile(r"\\(Huge|huge|LARGE|Large|large)(?![A-Za-z])")
_SIZES = {"large": 1, "Large": 2, "LARGE": 3, "huge": 4, "Huge": 5}
_PAR_END_RE = re.compile(r"\\(?:par|end)(?![A-Za-z])|\n[ \t]*\n")
_LINE_END_RE = re.compile(r"\\\\|\\newline(?![A-Za-z])")
_FRONT_END_RE = re.compile(r"\\begin\s*\{abstract\*?\}|\ue021")
_NEWLINE_ARGUMENT_RE = re.compile(r"(\\[A-Za-z]+)\s*\\newline(?![A-Za-z])")  # \textbf\newline{Title}


def display_title(body: str) -> str:
    """The title of a paper that gives no ``\\title``: the text it sets in the largest type
    before its first heading and its abstract (PLOS's ``{\\Large \\textbf\\newline{Title}}``, RSC's
    ``\\LARGE{\\textbf{Title}}``, a thesis's ``{\\Huge Title}``); the first of the largest, and
    two words at least (a size switch also sets "Abstract" or a date)."""
    heading = HEADING_RE.search(body)
    end = heading.start() if heading else len(body)
    front = _FRONT_END_RE.search(body, 0, end)
    head = _NEWLINE_ARGUMENT_RE.sub(r"\1", body[: min(front.start() if front else end, 20_000)])
    best: tuple[int, str] | None = None
    for m in _SIZE_RE.finditer(head):
        size = _SIZES[m.group(1)]
        if best is not None and size <= best[0]:
            continue
        try:
            text = _without_notes(_sized_text(head, m.end()))
        except LatexError:
            continue
        if 2 <= len(text.split()) <= 60:
            best = (size, text)
    return best[1] if best else ""


def _sized_text(body: str, i: int) -> str:
    """The LaTeX a size switch ending at ``i`` sets: its argument (``\\LARGE{...}``), else the rest
    of its group (``{\\Large ...}``), else (outside a group) of its line."""
    arg, _ = read_group(body, i) if body[i : i + 1].strip() in ("", "{") else (None, i)
    if arg is not None:
        return arg
    stop = _PAR_END_RE.search(body, i)
    limit = stop.start() if stop else len(body)
    depth = 0
    for t in BRACE_TOKEN.finditer(body, i, limit):
        depth += {"{": 1, "}": -1}.get(t.group(), 0)
        if depth < 0:  # the group the switch is in closes first
            return body[i : t.start()]
    line = _LINE_END_RE.search(body, i, limit)
    return body[i : line.start() if line else limit]


def front_matter(preamble: str, body: str, environments: list[str]) -> tuple[list[str], str, str]:
    """The abstract's LaTeX (:func:`abstracts`; else the text under a first heading "Abstract",
    as PLOS's template writes it, or after a line or run-in label "Abstract" before the first
    heading, as hand-made title pages do), the front matter and the body without it
    (:func:`split_front`)."""
    chunks = abstracts(preamble, body, environments)
    if not chunks:
        chunk, body = _abstract_heading(body)
        if chunk is None:
            chunk, body = _abstract_label(body)
        chunks = [chunk] if chunk and chunk.strip() else []
    front, body = split_front(_book_front(body))
    return chunks, front, body


_MAINMATTER_RE = re.compile(r"\\mainmatter(?![A-Za-z])")
_ACK_HEADING_RE = re.compile(r"\s*acknowledge?ments?\s*", re.I)


def _book_front(body: str) -> str:
    """A book's or thesis's body without what it declares front matter (``\\frontmatter`` ...
    ``\\mainmatter``: title pages, dedication, preface, declaration, contents), but for its
    acknowledgments (back matter wherever they stand; its abstract is read already)."""
    main = _MAINMATTER_RE.search(body)
    if main is None:
        return body
    kept, heads = [], [h for h in HEADING_RE.finditer(body, 0, main.start()) if h.group(1)]
    for n, h in enumerate(heads):
        name, _ = _heading_title(body, h)
        if name is not None and _ACK_HEADING_RE.fullmatch(_plain(name)):
            kept.append(body[h.start() : heads[n + 1].start() if n + 1 < len(heads) else main.start()])
    return "".join(kept) + body[main.end() :]


def _heading_title(body: str, heading: re.Match) -> tuple[str | None, int]:
    """A sectioning command's title (its group after any optional argument) and where it ends."""
    _, i = read_optional(body, heading.end())
    try:
        return read_group(body, i)
    except LatexError:
        return None, i


# "Abstract" alone on its line or in its group ({\bf ABSTRACT}), or run in ("Abstract: We ...")
_ABSTRACT_LABEL_RE = re.compile(
    r"(?<![A-Za-z\\])(?:abstract|Abstract|ABSTRACT|A\s?B\s?S\s?T\s?R\s?A\s?C\s?T)(?![A-Za-z])"
    r"(?=\s*(?:[.:—–-]|\\\\|\}|\n|\\end\b|\\par\b|\\textemdash\b))"
)
# where a line of text begins: a paragraph, an environment's edge, a forced line break
_PARAGRAPH_START_RE = re.compile(r"\n[ \t]*\n|\\par(?![A-Za-z])|\\(?:begin|end)\s*\{[^{}]*\}|\\\\")


def _abstract_label(body: str) -> tuple[str | None, str]:
    """The text after a label "Abstract" that begins a line before the first heading (up to
    that heading or the next page), and the body with an :data:`ABSTRACT_MARK` in its place."""
    heading = HEADING_RE.search(body)
    first = heading.start() if heading else len(body)
    for m in _ABSTRACT_LABEL_RE.finditer(body, 0, first):
        starts = [p.end() for p in _PARAGRAPH_START_RE.finditer(body, max(m.start() - 2000, 0), m.start())]
        if re.search(r"[^\W\d_]", _plain(body[starts[-1] if starts else 0 : m.start()])):
            continue  # words before it in its paragraph: "abstract" is a word of the text
        page = _PAGE_BREAK_RE.search(body, m.end(), first)
        end = page.start() if page else first
        chunk = re.sub(r"^\s*[.:—–-]?", "", body[m.end() : end])
        return chunk, body[: m.start()] + ABSTRACT_MARK + body[end:]
    return None, body


_ABSTRACT_TITLE_RE = re.compile(r"\s*abstract\s*[.:]?\s*", re.I)


def _abstract_heading(body: str) -> tuple[str | None, str]:
    """The text under a heading "Abstract" (the body's first, or any in a thesis's front
    matter before ``\\mainmatter``), and the body with an :data:`ABSTRACT_MARK` in its place."""
    main = _MAINMATTER_RE.search(body)
    for heading in HEADING_RE.finditer(body, 0, main.start() if main else len(body)):
        name, i = _heading_title(body, heading) if heading.group(1) else (None, heading.end())
        if name is not None and _ABSTRACT_TITLE_RE.fullmatch(_plain(name)):
            nxt = HEADING_RE.search(body, i)
            end = nxt.start() if nxt else len(body)
            return body[i:end], body[: heading.start()] + ABSTRACT_MARK + body[end:]
        if main is None:
            break  # only the first heading of an article
    return None, body


def split_front(body: str) -> tuple[str, str]:
    """The front matter and the body: what precedes ``\\maketitle`` when no heading comes
    before it; without ``\\maketitle`` (iopart and AGU print the title where it is given),
    what precedes the abstract (or a front-matter block: :data:`ABSTRACT_MARK`), else a
    hand-made title block (:func:`_title_block`); then, before the first heading, pages of
    front matter (a title page, a thesis's copyright and committee pages) and author-credit
    notes. The front (what precedes the body, and the front pages) is still walked for its
    counters (acmart's teaser figure)."""
    heading = HEADING_RE.search(body)
    first = heading.start() if heading else len(body)
    mt = _MAKETITLE_RE.search(body)
    cut = 0
    if mt and mt.start() < first:  # and a block set by hand after it (a date line, a dedication)
        rest = body[mt.end() :]
        cut = mt.end() + _title_block(rest, _first_titled_heading(rest), spacing=False)
    elif mt is None:
        abstract = body.rfind(ABSTRACT_MARK, 0, first)
        cut = abstract + 1 if abstract >= 0 else _title_block(body, first)
    front, body = body[:cut], body[cut:]
    body = body.replace(ABSTRACT_MARK, "")
    first = _first_titled_heading(body)
    pages = _front_pages(body[:first])
    front += body[: first - len(pages)]
    return front, _credit_notes(pages) + body[first:]


def _first_titled_heading(body: str) -> int:
    """Where the first heading that prints a title begins (RSC's template opens its body with
    an empty ``\\section*{}``, a space, before the notes on its authors)."""
    for m in HEADING_RE.finditer(body):
        name, _ = _heading_title(body, m) if m.group(1) else (None, 0)
        if name is None or name.strip():
            return m.start()
    return len(body)


_PAGE_BREAK_RE = re.compile(r"\\(?:newpage|clearpage|cleardoublepage|pagebreak)(?![A-Za-z])")
_TITLE_PAGE_RE = re.compile(
    r"\\(?:LARGE|Large|huge|Huge|maketitle|thispagestyle|vfill|titlepage)(?![A-Za-z])|\\begin\s*\{(?:center|flushright)\}"
)
# What a thesis or report prints on the pages before its first chapter that no chapter holds
_FRONT_PAGE_RE = re.compile(
    r"copyright|\\copyright|©|all rights reserved|dissertation|thesis|in partial fulfil|"
    r"degree of|doctor of philosophy|master of|committee|approved by|advis[oe]r|supervisor|reviewer|"
    r"oral examination|hereby declare|declaration|erkl(?:\{?\\\"\s*a\}?|ä)r|eidesstattlich|gutachter|betreuer",
    re.I,
)


def _front_pages(front: str) -> str:
    """``front`` (the text before the first heading) without its leading pages of front
    matter: a short, title-like page, or one that names a thesis, its copyright, its committee
    or the author's declaration (the last, up to the heading, too, after such pages). The first
    page that is none of these ends them."""
    pos = 0
    for page in [*_PAGE_BREAK_RE.finditer(front), None]:
        if page is None and pos == 0:
            break  # no page before it was front matter: the text before the heading is the paper's
        end = page.start() if page else len(front)
        text = front[pos:end]
        title_like = page is not None and _TITLE_PAGE_RE.search(text) is not None and len(text) < 1500
        if not (title_like or (_FRONT_PAGE_RE.search(text) and len(text) < 4000)) and text.strip():
            break
        pos = page.end() if page else end
    return front[pos:]


# What a hand-made title block is made of: type sizes, centred lines, superscript marks, spacing,
# rules, notes, e-mail addresses (a journal's header line in small type above the title too)
_TITLE_BLOCK_RE = re.compile(
    r"\\(?:Huge|huge|LARGE|Large|large|small|centering|centerline|textsuperscript|thanks|vspace|vskip|bigskip|"
    r"medskip|hrule|rule|hrulefill)(?![A-Za-z])"
    r"|\\begin\s*\{(?:center|flushleft|flushright)\}|[\w.]@[\w-]+\.\w"
)
_SPACING_RE = re.compile(r"\\(?:vspace|vskip|bigskip|medskip|smallskip)(?![A-Za-z])")
_BLOCK_BREAK_RE = re.compile(r"\n[ \t]*\n|\\par(?![A-Za-z])")
_ENV_EDGE_RE = re.compile(r"\\(begin|end)\s*\{(center|flushleft|flushright)\}")


def _title_block(body: str, first: int, spacing: bool = True) -> int:
    """Where the body's text begins after a hand-made title block (no ``\\maketitle``, no
    abstract): the leading paragraphs before ``first`` that are made of title material
    (:data:`_TITLE_BLOCK_RE`; vertical spacing too unless ``spacing`` is False: after
    ``\\maketitle`` a paragraph may open with a ``\\vspace``), a centred block read whole; 0 when
    the body starts with text."""
    pos = 0
    while pos < first:
        m = _BLOCK_BREAK_RE.search(body, pos, first)
        end = m.end() if m else first
        opened = [e for e in _ENV_EDGE_RE.finditer(body, pos, end)]
        depth = sum(1 if e.group(1) == "begin" else -1 for e in opened)
        if depth > 0:  # a centred block runs over blank lines: read it to its end
            close = re.compile(r"\\end\s*\{" + opened[-1].group(2) + r"\}").search(body, end, first)
            end = close.end() if close else end
        chunk = body[pos:end]
        if chunk.strip() and not _title_material(chunk if spacing else _SPACING_RE.sub("", chunk)):
            break
        pos = end
    return pos if pos < len(body) else 0  # no heading and nothing but title material: keep it


def _title_material(chunk: str) -> bool:
    """Whether a paragraph is made of title material: set as a title block (:data:`_TITLE_BLOCK_RE`)
    and no run of prose (fewer than 50 words, or most of them capitalised: names, a title)."""
    if not _TITLE_BLOCK_RE.search(chunk):
        return False
    words = re.findall(r"[^\W\d_]{2,}", _plain(chunk))
    return len(words) < 50 or sum(w[0].islower() for w in words) * 2 < len(words)


_NOTE_RE = re.compile(r"\\(?:footnotetext|footnote|thanks)(?![A-Za-z])")
_CREDIT_RE = re.compile(
    r"contributed equally|equal(?:ly)? contribut|these authors|all (?:\w+ )?authors|corresponding author|"
    r"to whom correspondence|e-?mail\s*(?:address(?:es)?)?\s*:|[\w.]@[\w-]+\.\w|"
    r"work (?:was )?(?:done|performed|carried out) (?:while|during|at|when)|internship|"
    r"(?:current|present|permanent) (?:address|affiliation)|now (?:at|with) |on leave from|"
    r"(?:co-?)?first authors?|senior authors?|alphabetical order|project lead",
    re.I,
)


def _credit_notes(front: str) -> str:
    """Notes about the authors before the first heading ("All four authors contributed
    equally", a corresponding author's e-mail, a work done during an internship) are front
    matter, not footnotes of the text; so is a ``\\footnotetext`` given before the text's first
    word, which no mark in the text calls (RSC's addresses, "ESI available")."""
    if not _NOTE_RE.search(front):
        return front
    out, pos = [], 0
    for m in _NOTE_RE.finditer(front):
        if m.start() < pos:
            continue
        _, i = read_optional(front, m.end())
        try:
            note, end = read_group(front, i)
        except LatexError:
            continue
        before = HEADING_RE.sub("", "".join(out) + front[pos : m.start()])  # an empty \\section*{}
        leading = m.group() == "\\footnotetext" and not re.search(r"\w", _plain(before))
        if note is not None and (leading or _CREDIT_RE.search(note)):
            out.append(front[pos : m.start()])
            pos = end
    out.append(front[pos:])
    return "".join(out)


_FRONT_LINE_RE = re.compile(
    r"(?:Key ?words|Index terms|PACS(?: numbers)?|MSC(?: \d{4})?|Mathematics Subject Classification|"
    r"JEL(?: classification)?|Submitted to|Received|Accepted)\b\s*[:.—–-]",
    re.I,
)


def front_line(text: str) -> bool:
    """Whether a paragraph before the first heading is a front-matter line: keywords, PACS and
    subject classes, "Submitted to", dates of receipt."""
    return _FRONT_LINE_RE.match(text) is not None


_ABSTRACT_ENV_RE = re.compile(r"\\begin\s*\{abstract\}(.*?)\\end\s*\{abstract\}", re.S)
_ABSTRACT_CMD_RE = re.compile(r"\\(?:abstract|Abstract)\s*\{")  # \Abstract: the JSS class
# A&A's structured abstract: each part prints its name ("Context. Stars form.")
_AA_PARTS_RE = re.compile(r"\\(context|aims|methods|results|conclusions)\s*\{")


def abstracts(preamble: str, body: str, environments: list[str]) -> list[str]:
    """The LaTeX of the abstract: an ``abstract`` environment in the preamble or the body, or
    else the ``\\abstract{...}`` command (A&A, Springer Nature), wherever it is (before
    ``\\maketitle`` too)."""
    found = [m.group(1) for m in _ABSTRACT_ENV_RE.finditer(preamble)] + environments
    if not found:
        for text in (preamble, body):
            m = _ABSTRACT_CMD_RE.search(text)
            if m:
                try:
                    chunk = _abstract_groups(text, m.end() - 1)
                except LatexError:
                    continue
                if chunk and chunk.strip():
                    found.append(chunk)
                    break
    return [_aa_parts(chunk) for chunk in found]


_AA_PARTS = ("context", "aims", "methods", "results", "conclusions")


def _abstract_groups(text: str, i: int) -> str | None:
    """``\\abstract{...}``'s text from its group at ``i``; A&A's structured form gives five groups
    in a row (context, aims, methods, results, conclusions), each printed with its name."""
    groups: list[str] = []
    while len(groups) < len(_AA_PARTS):
        group, j = read_group(text, i)
        if group is None or (groups and "\n\n" in text[i:j].split("{", 1)[0]):
            break
        groups.append(group)
        i = j
    if len(groups) < 2:
        return groups[0] if groups else None
    return " ".join(f"\\{name}{{{g}}}" for name, g in zip(_AA_PARTS, groups, strict=False) if g.strip())


def _aa_parts(chunk: str) -> str:
    if "\\" not in chunk or not _AA_PARTS_RE.search(chunk):
        return chunk
    out, pos = [], 0
    for m in _AA_PARTS_RE.finditer(chunk):
        if m.start() < pos:
            continue
        try:
            part, end = read_group(chunk, m.end() - 1)
        except LatexError:
            continue
        out.append(chunk[pos : m.start()] + f" {m.group(1).capitalize()}. {part} ")
        pos = end
    out.append(chunk[pos:])
    return "".join(out)
