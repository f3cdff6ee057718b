"""BibTeX .bib files and biblatex .bbl files -> bibliography items.

bibtexparser reads the entries (fields, ``@string`` macros and ``#`` concatenation, enclosing
braces and quotes) and splits names as BibTeX does ("von Last, Jr, First"). Before it, a
scanner cuts the file into entries, so only the entries a paper cites are handed to it (a
paper cites ~50 of the thousands in a shared .bib) and an entry whose braces never close ends
where the next ``@type{`` line starts, as in BibTeX, instead of swallowing the rest.
"""

from __future__ import annotations

import logging
import re

from corpus.ingest.arxiv_ids import try_normalize
from corpus.parse.document import Author, BibEntry
from corpus.parse.latex.bib.item import _ids, _Item, clean_title
from corpus.parse.latex.braces import WS, brace_excess, match_brace
from corpus.parse.latex.text import plain_field

logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # a broken entry is skipped, not logged per paper

_BIB_AT_RE = re.compile(r"@\s*(\w+)\s*([{(])")
_BIB_NEXT_RE = re.compile(r"\n[ \t]*@[ \t]*[A-Za-z]+[ \t]*[{(]")


def _entry_end(text: str, m: re.Match) -> tuple[int, bool]:
    """End of the entry whose ``@type{`` is ``m`` and whether it closed: its closing brace, or
    the next entry's start."""
    if m.group(2) == "{":
        end = match_brace(text, m.end() - 1)
    else:
        close = text.find(")", m.end())
        end = close + 1 if close >= 0 else -1
    closed = end >= 0
    end = len(text) if end < 0 else end
    nxt = _BIB_NEXT_RE.search(text, m.end(), end)
    return (nxt.start() + 1, False) if nxt else (end, closed)


def _bib_blocks(text: str, keys: set[str] | frozenset[str] | None) -> str:
    """The ``@string`` blocks and the wanted entries (keys compared lower-case) of a .bib, each
    entry closed."""
    wanted = {k.lower() for k in keys} if keys is not None else None
    out, pos = [], 0
    while m := _BIB_AT_RE.search(text, pos):
        kind = m.group(1).lower()
        if kind in ("comment", "preamble"):
            pos = _entry_end(text, m)[0]
            continue
        if wanted is not None and kind != "string":
            comma = text.find(",", m.end(), m.end() + 300)
            if comma < 0 or text[m.end() : comma].strip().lower() not in wanted:
                pos = m.end()
                continue
        end, closed = _entry_end(text, m)
        block = text[m.start() : end].rstrip()
        if not closed:  # close what is open in it, as BibTeX ends it at the next entry
            block = block.rstrip(",") + "}" * max(brace_excess(block), 0)
            block += ")" if m.group(2) == "(" else ""
        out.append(block)
        pos = end
    return "\n".join(out)


def parse_bib_file(text: str, keys: set[str] | frozenset[str] | None = None) -> dict[str, dict[str, str]]:
    """BibTeX entries as ``{key: {field: latex value}}`` (``ENTRYTYPE`` too; ``@string`` macros
    resolved, field names lower-case). With ``keys``, only those entries (matched as BibTeX
    matches keys, whatever their case)."""
    import bibtexparser
    from bibtexparser.model import DuplicateFieldKeyBlock, Entry

    blocks = _bib_blocks(text, keys)
    if not blocks:
        return {}
    library = bibtexparser.parse_string(blocks)
    macros: dict[str, str] = {}
    for string in library.strings:
        value = str(string.value)
        macros[string.key.lower()] = _concatenation(value, macros) if "#" in value else value
    entries: dict[str, dict[str, str]] = {}
    for entry in library.entries:
        fields = {"ENTRYTYPE": entry.entry_type.lower()}
        for f in entry.fields:
            value = f.value if isinstance(f.value, str) else str(f.value)
            fields.setdefault(f.key.lower(), _concatenation(value, macros) if "#" in value else value)
        entries.setdefault(entry.key, fields)
    for block in library.failed_blocks:  # a field given twice: BibTeX warns and keeps the first
        entry = getattr(block, "ignore_error_block", None)
        if isinstance(block, DuplicateFieldKeyBlock) and isinstance(entry, Entry):
            fields = {"ENTRYTYPE": entry.entry_type.lower()}
            for f in entry.fields:  # as written: enclosing braces or quotes, macro names
                raw = f.value if isinstance(f.value, str) else str(f.value)
                fields.setdefault(f.key.lower(), _concatenation(raw.strip(), macros))
            entries.setdefault(entry.key, fields)
    return entries


_MONTHS = dict(
    zip(
        "jan feb mar apr may jun jul aug sep oct nov dec".split(),
        ("January February March April May June July August September October November December".split()),
        strict=True,
    )
)
_BIB_WORD = re.compile(r"[^\s\"{}#,=]+")


def _concatenation(value: str, macros: dict[str, str]) -> str:
    """``"Astron. " # aa # {~Suppl.}`` joined, macros (and BibTeX's month names) expanded: what
    bibtexparser leaves as written. A value that is not such an expression (a URL with ``#``)
    comes back unchanged."""
    pieces, depth, quoted, start = [], 0, False, 0
    for i, c in enumerate(value):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == '"' and depth == 0:
            quoted = not quoted
        elif c == "#" and depth == 0 and not quoted:
            pieces.append(value[start:i].strip())
            start = i + 1
    pieces.append(value[start:].strip())
    out = []
    for p in pieces:
        if len(p) >= 2 and (p[0], p[-1]) in (('"', '"'), ("{", "}")):
            out.append(p[1:-1])
        elif _BIB_WORD.fullmatch(p) and (p.isdigit() or p[0].isalpha()):
            out.append(macros.get(p.lower(), _MONTHS.get(p.lower(), p)))
        else:
            return value
    return "".join(out)


_SUFFIX_RE = re.compile(r"(?:Jr|Sr|I{2,3}|IV|V)\.?", re.I)


def _bib_authors(value: str) -> list[Author]:
    """BibTeX names ("First von Last", "von Last, First", "von Last, Jr, First"), split as
    BibTeX splits them (a braced group is one word: ``{The LIGO Collaboration}``)."""
    from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names

    out = []
    for name in split_multiple_persons_names(WS.sub(" ", value).strip()):
        if not name or name.lower() == "others":
            continue
        try:
            parts = parse_single_name_into_parts(name, strict=False)
        except ValueError:
            continue
        if parts.jr and len(parts.first) == 1 and _SUFFIX_RE.fullmatch(parts.first[0]):
            parts.first, parts.jr = parts.jr, parts.first  # ADS writes "{Gott}, J.~R., III"
        first = [plain_field(w) for w in parts.first if plain_field(w)]
        last = plain_field(" ".join(parts.von + parts.last))
        if not last and not first:
            continue
        out.append(
            Author(
                first=first[0] if first else "",
                middle=first[1:],
                last=last,
                suffix=plain_field(" ".join(parts.jr)),
            )
        )
    return out


def _bib_ids(fields: dict[str, str]) -> dict[str, list[str]]:
    """DOI and arXiv id of a .bib entry (``eprint`` when the archive is arXiv, else an id
    written in the journal, url, note or volume field)."""
    ids: dict[str, list[str]] = {}
    if fields.get("doi"):
        ids["DOI"] = [fields["doi"].strip()]
    cand = fields.get("eprint", "") if fields.get("archiveprefix", "arxiv").lower() == "arxiv" else ""
    aid = (
        try_normalize(cand)
        or _ids(" ".join(fields.get(f, "") for f in ("journal", "url", "note", "volume")), "").get(
            "arXiv", [None]
        )[0]
    )
    if aid:
        ids["arXiv"] = [aid]
    return ids


def _entry_from_bib(fields: dict[str, str], idx: int) -> BibEntry:
    authors = _bib_authors(fields.get("author", fields.get("editor", "")))
    title = clean_title(plain_field(fields.get("title", "")))
    venue = plain_field(
        fields.get("journal")
        or fields.get("booktitle")
        or fields.get("journaltitle")
        or fields.get("publisher", "")
    )
    ym = re.search(r"\d{4}", fields.get("year", "") or fields.get("date", ""))
    year = int(ym.group()) if ym else None
    raw = ". ".join(
        p
        for p in (", ".join(f"{a.first} {a.last}".strip() for a in authors), str(year or ""), title, venue)
        if p
    )
    ids = _bib_ids(fields)
    return BibEntry(
        ref_id=f"BIBREF{idx}",
        title=title,
        authors=authors,
        year=year,
        venue=venue,
        volume=fields.get("volume", ""),
        issue=fields.get("number", ""),
        pages=re.sub(r"\s*[-\u2013\u2014]+\s*", "-", plain_field(fields.get("pages", ""))),
        other_ids=ids,
        num=idx,
        urls=[fields["url"]] if fields.get("url") else [],
        raw_text=raw,
    )


# --- biblatex .bbl

_BLX_ENTRY_RE = re.compile(r"\\entry\s*\{([^{}]+)\}\s*\{(\w+)\}(.*?)\\endentry", re.S)
_BLX_FIELD_RE = re.compile(r"\\field\s*(?:\[[^\]]*\])?\s*\{(\w+)\}\s*\{")
_BLX_VERB_RE = re.compile(r"\\verb\s*\{(\w+)\}\s*\\verb\s+(.*?)\s*\\endverb", re.S)


def _biblatex_items(text: str) -> list[_Item]:
    items = []
    for m in _BLX_ENTRY_RE.finditer(text):
        body, fields = m.group(3), {}
        for fm in _BLX_FIELD_RE.finditer(body):
            end = match_brace(body, fm.end() - 1)
            if end > 0:
                fields[fm.group(1).lower()] = body[fm.end() : end - 1]
        for vm in _BLX_VERB_RE.finditer(body):
            fields.setdefault(vm.group(1).lower(), vm.group(2).strip())
        names = _blx_names(body, "author") or _blx_names(body, "editor")
        fields["author"] = " and ".join(names)
        if fields.get("eprinttype", "arxiv").lower() != "arxiv":
            fields.pop("eprint", None)
        entry = _entry_from_bib(fields, len(items))
        short = (
            ", ".join(a.last for a in entry.authors[:2])
            if len(entry.authors) <= 2
            else f"{entry.authors[0].last} et al."
        )
        year = fields.get("labelyear", "") or (str(entry.year) if entry.year else "")
        label = fields.get("labelalpha")
        extra = fields.get("extraalpha", "").strip()
        if label and extra.isdigit() and 0 < int(extra) <= 26:
            label += chr(ord("a") + int(extra) - 1)  # Knu84a, Knu84b: biblatex's extraalpha
        items.append(_Item(m.group(1).strip(), label, entry, short, year, alpha=label is not None))
    return items


_BLX_NAME_RE = re.compile(r"\\name\s*\{(\w+)\}\s*\{\d+\}\s*\{[^{}]*\}\s*\{")
_BLX_KEYVAL_RE = re.compile(r"(\w+)\s*=\s*\{((?:[^{}]|\{[^{}]*\})*)\}")


def _groups(text: str) -> list[str]:
    """The top-level ``{...}`` groups of ``text``, in order (what lies between them skipped)."""
    out, i = [], 0
    while (j := text.find("{", i)) >= 0:
        end = match_brace(text, j)
        if end < 0:
            break
        out.append(text[j + 1 : end - 1])
        i = end
    return out


def _blx_names(body: str, role: str) -> list[str]:
    """``\\name{role}`` of a biblatex .bbl entry as BibTeX names ("von Last, First"): biber's
    key=value parts (``family={..}, given={..}, prefix={..}``, biblatex 3.3 on) or the older
    positional groups ``{hash}{family}{familyi}{given}{giveni}{prefix}{prefixi}{suffix}{suffixi}``."""
    for m in _BLX_NAME_RE.finditer(body):
        if m.group(1) != role:
            continue
        end = match_brace(body, m.end() - 1)
        names = []
        for person in _groups(body[m.end() : end - 1] if end > 0 else ""):
            parts = _groups(person)
            if len(parts) >= 2 and "family=" in parts[1]:
                kv = dict(_BLX_KEYVAL_RE.findall(parts[1]))
                family, given, prefix, suffix = (
                    kv.get(k, "") for k in ("family", "given", "prefix", "suffix")
                )
            elif len(parts) >= 4:
                family, given = parts[1], parts[3]
                prefix = parts[5] if len(parts) > 5 else ""
                suffix = parts[7] if len(parts) > 7 else ""
            else:
                continue
            last = f"{prefix} {family}".strip()
            names.append(", ".join(p for p in (last, suffix, given) if p) if given or suffix else last)
        return names
    return []
