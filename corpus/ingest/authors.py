"""Split arXiv author strings into (keyname, forenames, suffix, affiliations).

arXiv, arXivRaw, the Kaggle snapshot and ``.abs`` files carry authors as one
string: ``"A. Smith (MIT), B. van der Berg Jr. and the ATLAS Collaboration"``.
The split follows arXiv's own rule (arxiv-browse ``author_affil.py``, which made
the Kaggle ``authors_parsed`` field), re-implemented here, so our keyname and
forenames agree with arXiv's; it differs on purpose where arXiv's rule loses
information:

* numbered affiliations ``A (1), B (1,2) ((1) MIT, (2) CERN)`` are resolved even
  when the list is hard-wrapped over several lines (arXiv's regex stops at the
  first newline and leaves them empty or as ``"1 and 2"``);
* a collaboration is kept whole wherever it appears (arXiv: only at the start,
  and only its ``[a-z0-9 ]`` tail), without a leading "for the"/"on behalf of";
* a suffix is split off before surname particles are looked at, so
  ``Jan van Dam Jr.`` keeps ``van Dam`` as its keyname;
* more particles (le, du, dos, das, des, den, ten, zu, vom, los).

TeX accents (``{\\"o}``, ``\\v{s}``, ``{\\O}``) are decoded to Unicode and
whitespace is normalised in every field.
"""

from __future__ import annotations

import re
import unicodedata

from corpus.ingest.records import AuthorName, normalize_ws

__all__ = ["parse_author_string", "parse_author_name", "parse_dc_creator", "tex_to_unicode"]

# ------------------------------------------------------------------ TeX accents

_COMBINING = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "u": "\u0306",
    "v": "\u030c",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "r": "\u030a",
    "d": "\u0323",
    "b": "\u0331",
}
_SPECIAL = {
    "ss": "ß",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "aa": "å",
    "AA": "Å",
    "o": "ø",
    "O": "Ø",
    "l": "ł",
    "L": "Ł",
    "i": "ı",
    "j": "ȷ",
}
_BASE = r"(?:\\[ij](?![A-Za-z])|[A-Za-z])"
# \'e  \'{e}  {\'e}  \'\i  \"{\i}
_SYMBOL_ACCENT = re.compile(r"\\([`'^\"~=.])\s*(?:\{\s*(" + _BASE + r")\s*\}|(" + _BASE + r"))")
# \v{s}  \v s  \c{c}
_LETTER_ACCENT = re.compile(r"\\([uvHckrdb])(?:\s*\{\s*(" + _BASE + r")\s*\}|\s+(" + _BASE + r"))")
_SPECIAL_RE = re.compile(r"\\(ss|ae|AE|oe|OE|aa|AA|o|O|l|L|i|j)(?![A-Za-z])(?:\{\})?[ \t]*")
_ESCAPES = re.compile(r"\\([&%$#_])")


def _accent(m: re.Match) -> str:
    base = m.group(2) or m.group(3)
    if base in ("\\i", "\\j"):
        base = base[1]
    return base + _COMBINING[m.group(1)]


def tex_to_unicode(text: str) -> str:
    """Decode the TeX accents and letters found in arXiv author fields; drop grouping braces."""
    if "\\" not in text and "{" not in text:
        return text
    text = _SYMBOL_ACCENT.sub(_accent, text)
    text = _LETTER_ACCENT.sub(_accent, text)
    text = _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group(1)], text)
    text = _ESCAPES.sub(r"\1", text)
    text = text.replace("{", "").replace("}", "")
    return unicodedata.normalize("NFC", text)


# ------------------------------------------------------------------ tokenising

_PARENS = re.compile(r"([()])")
_AND = re.compile(r",?\s+(?:and|&)\s", re.IGNORECASE)
_SEP = re.compile(r"\s*([,:;])\s*")
_SUFFIX_ALONE = re.compile(r"^(?:Jr\.?|Sr\.?|I{2,3}|IV)$", re.IGNORECASE)
_ET_AL = re.compile(r"^(?:et\.?\s+al\.?|others|and\s+others)$", re.IGNORECASE)
_ET_AL_TAIL = re.compile(r"\s+et\.?\s+al\.?$", re.IGNORECASE)
_LEADING_AND = re.compile(r"^(?:and|&)\s+", re.IGNORECASE)
_WORD = re.compile(r"\w")


def _split_blocks(line: str) -> list[str]:
    """Top-level text and ``(...)`` blocks (nested parentheses stay inside their block)."""
    blocks: list[str] = []
    cur: list[str] = []
    depth = 0
    for bit in _PARENS.split(line):
        if not bit:
            continue
        if bit == "(":
            depth += 1
            if depth == 1:
                if cur:
                    blocks.append("".join(cur))
                cur = ["("]
                continue
        elif bit == ")":
            if depth == 0:  # stray closing parenthesis: keep it as text
                cur.append(bit)
                continue
            depth -= 1
            if depth == 0:
                cur.append(")")
                blocks.append("".join(cur))
                cur = []
                continue
        cur.append(bit)
    if cur:
        blocks.append("".join(cur))
    return blocks


def _tokens(line: str) -> list[str]:
    """Names, separators (``,`` ``:``) and ``(...)`` blocks in order, like arXiv's split_authors."""
    out: list[str] = []
    for block in _split_blocks(line):
        block = normalize_ws(block)
        if not block:
            continue
        if block.startswith("("):
            out.append(block)
            continue
        block = _AND.sub(",", " " + block + " ")
        for part in _SEP.split(block):
            part = _LEADING_AND.sub("", part.strip())
            if part == ";":
                part = ","
            m = _ON_BEHALF.match(part) if _COLLAB.search(part) else None
            if m and not _COLLAB.search(m.group(1)):  # "A. Smith on behalf of the X Collaboration": two
                out.extend((m.group(1), ",", m.group(2)))
            elif part:
                out.append(part)
    # re-attach suffixes split off by a comma: "John Smith, Jr." -> "John Smith Jr."
    merged: list[str] = []
    for tok in out:
        if (
            _SUFFIX_ALONE.match(tok)
            and len(merged) >= 2
            and merged[-1] == ","
            and not merged[-2].startswith("(")
        ):
            merged.pop()
            merged[-1] = f"{merged[-1]} {tok}"
        else:
            merged.append(tok)
    return merged


# ------------------------------------------------------------------ single names

_PARTICLES = "van|von|der|den|de|la|le|del|della|da|di|du|dos|das|des|los|mac|ter|ten|dem|zu|vom|vaziri"
_DOUBLE_PREFIX = re.compile(rf"^(.*)\s+((?:{_PARTICLES})\s(?:{_PARTICLES})\s\S+)$", re.IGNORECASE)
_PREFIX = re.compile(rf"^(.*)\s+((?:{_PARTICLES})\s\S+)$", re.IGNORECASE)
_SUFFIX = re.compile(r"^(.*\S)\s+,?\s*((?i:jr|sr)\.?|I{2,3}|IV|V)$")
_TIDY_DOT = re.compile(r"(?<!\\)\.(\S)")
_COLLAB = re.compile(r"\b(?:collaborations?|consortium|collab\.|group|team)(?:\W|$)", re.IGNORECASE)
_ON_BEHALF = re.compile(r"^(\S.*?)\s+(?:for|on\s+behalf\s+of)\s+(\S.*)$", re.IGNORECASE)
_COLLAB_LEAD = re.compile(r"^(?:for\s+|on\s+behalf\s+of\s+)+", re.IGNORECASE)


def _tidy(name: str) -> str:
    """arXiv's tidy: one space between words, a space after each dot ("J.P." -> "J. P.")."""
    return _TIDY_DOT.sub(r". \1", normalize_ws(name))


def _is_collaboration(name: str) -> bool:
    return bool(_COLLAB.search(name))


def parse_author_name(name: str) -> AuthorName:
    """One name (``"Floris van der Tak"``, ``"Neal J. Evans II"``) -> keyname/forenames/suffix."""
    name = _tidy(tex_to_unicode(name)).strip(" ,;")
    if _is_collaboration(name):
        return AuthorName(keyname=_COLLAB_LEAD.sub("", name))
    suffix = ""
    m = _SUFFIX.match(name)
    if m and " " in m.group(1) or m and m.group(2).lower().startswith(("jr", "sr")):
        name, suffix = m.group(1).rstrip(" ,"), m.group(2)
    for pattern in (_DOUBLE_PREFIX, _PREFIX):
        m = pattern.match(name)
        if m:
            return AuthorName(keyname=m.group(2), forenames=m.group(1), suffix=suffix)
    head, _, last = name.rpartition(" ")
    return AuthorName(keyname=last, forenames=head, suffix=suffix)


def parse_dc_creator(text: str) -> AuthorName:
    """oai_dc ``<dc:creator>`` form: ``"Keyname, Forenames[, Suffix]"`` or a collaboration."""
    text = normalize_ws(tex_to_unicode(text))
    if "," not in text:
        return parse_author_name(text)
    if _is_collaboration(text):  # arXiv inverted "the CALIFA team" into "team, the CALIFA"
        last, _, first = text.partition(",")
        return AuthorName(keyname=f"{first.strip()} {last.strip()}".strip())
    parts = [p.strip() for p in text.split(",")]
    suffix = parts[2] if len(parts) > 2 else ""
    return AuthorName(keyname=parts[0], forenames=parts[1], suffix=suffix)


# ------------------------------------------------------------------ affiliations

_REFS = re.compile(r"^\d+(?:\s*(?:,|;|&|\band\b)\s*\d+)*$", re.IGNORECASE)
_REF_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*", re.IGNORECASE)
_ENUM_MARK = re.compile(r"\(\s*(\d+)\s*\)")
_ENUM_BARE = re.compile(r"(?:^|[;,])\s*(\d+)\s+(?=[^\d\s,;])")
_AFFIL_TAIL = re.compile(r"[\s.,;]+$")
_ENUM_START = re.compile(r"^\(\s*\d+\s*\)")
_BARE_START = re.compile(r"^\d+\s+[^\d\s]")


def _inner(block: str) -> str:
    return normalize_ws(block[1:-1] if block.endswith(")") else block[1:])


def _enum_affiliations(block: str) -> dict[str, str]:
    """``((1) MIT, (2) CERN)`` or ``(1 MIT; 2 CERN)`` -> {"1": "MIT", "2": "CERN"}."""
    inner = _inner(block)
    parts = _ENUM_MARK.split(inner)
    if len(parts) < 3:
        parts = _ENUM_BARE.split(inner)
    out: dict[str, str] = {}
    for key, text in zip(parts[1::2], parts[2::2], strict=False):
        text = _AFFIL_TAIL.sub("", text.strip())
        if text:
            out[key] = tex_to_unicode(text)
    return out


def _looks_enumerated(block: str) -> bool:
    inner = _inner(block)
    return bool(
        _ENUM_START.match(inner) or (_BARE_START.match(inner) and len(_ENUM_BARE.findall(inner)) >= 2)
    )


# ------------------------------------------------------------------ author strings


def _affiliations(blocks: list[str], enum: dict[str, str]) -> list[str]:
    """A name's own blocks -> affiliations: text as is, numbers looked up in the enumerated list."""
    out: list[str] = []
    for block in blocks:
        inner = _inner(block)
        if _REFS.match(inner):
            out.extend(enum[k] for k in _REF_SPLIT.split(inner) if k in enum)
        elif inner:
            out.append(tex_to_unicode(inner))
    return out


def parse_author_string(raw: str) -> list[AuthorName]:
    """Split an arXiv author string into names with affiliations (arXiv's rule, see module doc)."""
    if not raw or not raw.strip():
        return []
    entries: list[tuple[str, list[str]]] = []  # (name, its parenthesised blocks)
    enum: dict[str, str] = {}  # "1" -> "MIT" from a trailing ((1) MIT, (2) ...) list
    for tok in _tokens(raw):
        if tok in (",", ":"):
            continue
        if tok.startswith("("):
            if entries and entries[-1][1] and _looks_enumerated(tok):
                enum.update(_enum_affiliations(tok))
            elif entries:
                entries[-1][1].append(tok)
            continue
        tok = _ET_AL_TAIL.sub("", tok)
        if tok and not _ET_AL.match(tok) and _WORD.search(tok):
            entries.append((tok, []))

    authors: list[AuthorName] = []
    for name, blocks in entries:
        author = parse_author_name(name)
        author.affiliations = _affiliations(blocks, enum)
        authors.append(author)

    # back-propagate: "A, B (X)" means A is at X too; never into collaborations or
    # into names that carried their own (unresolvable) reference
    last: list[str] = []
    for i in range(len(authors) - 1, -1, -1):
        name, blocks = entries[i]
        if _is_collaboration(name):
            last = []
        elif authors[i].affiliations:
            last = authors[i].affiliations
        elif last and not blocks:
            authors[i].affiliations = list(last)
    return [a for a in authors if a.keyname]
