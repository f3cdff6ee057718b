"""Bibliographies of LaTeX sources -> :class:`corpus.papers.BibEntry` rows with their cite keys.

Read from a ``thebibliography`` block or .bbl (natbib, REVTeX, ACM, Elsevier, AAS and
plain styles), a biblatex .bbl, or BibTeX .bib files; each reader gives :class:`_Item`
(key, printed label, natbib short author list and year, entry).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.arxiv_ids import try_normalize
from corpus.latex_text import (
    _HREF_RE,
    _URL_RE,
    _WS,
    LatexError,
    _match_brace,
    _plain,
    _read_group,
    _read_optional,
    _skip_ws,
)
from corpus.papers import Author, BibEntry

_BIBITEM_RE = re.compile(r"\\bibitem(?![A-Za-z])")
_BIBEND_RE = re.compile(r"\\end\s*\{thebibliography\}")
_NEWBLOCK_RE = re.compile(r"\\newblock(?![A-Za-z])")
_DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s{}\"<>,]+)")
_ARXIV_RES = (
    re.compile(
        r"arxiv(?:\.org/(?:abs|pdf)/|\s*:\s*|\s+preprint\s+(?:arxiv:)?\s*)([A-Za-z\-.]+/\d{7}|\d{4}\.\d{4,5})",
        re.I,
    ),
    re.compile(r"\babs/(\d{4}\.\d{4,5})"),
    re.compile(r"\\eprint\s*\{([^{}]+)\}"),
)
_YEAR_RE = re.compile(r"(?<![\d/.])(1[89]\d\d|20\d\d)(?![\d/])")
_NATBIB_LABEL = re.compile(r"^(?P<short>.*?)\((?P<year>[^()]*)\)(?P<long>.*)$", re.S)
_ITALIC_RE = re.compile(r"\{\\(?:em|it|sl)(?![A-Za-z])\s*|\\(?:emph|textit|textsl)\s*\{")
_QUOTED_RE = re.compile(r"``(.+?)(?:,)?''", re.S)
_ET_AL = re.compile(r"\bet\.?\s*al\.?", re.I)


@dataclass
class _Item:
    key: str
    label: str | None  # the bibitem's optional label, as text
    entry: BibEntry
    short: str = ""  # natbib short author list
    year_label: str = ""  # natbib year (may carry a letter: 2019a)


def _split_authors(text: str) -> list[Author]:
    text = _ET_AL.sub("", text)
    text = re.sub(r"\b(?:19|20)\d\d[a-z]?\b\.?", "", text).strip(" .,;:")
    if not text:
        return []
    parts = [p.strip(" .,") for p in re.split(r",?\s+and\s+|\s*&\s*|;\s*|,\s*", text) if p.strip(" .,")]
    names: list[str] = []
    initials = re.compile(r"^(?:[A-Z][a-z]?\.?[\s-]*)+$")
    for part in parts:  # "Smith, J. K." -> one name
        if names and initials.match(part) and not initials.match(names[-1]) and " " not in names[-1]:
            names[-1] = f"{part} {names[-1]}"
        else:
            names.append(part)
    out = []
    for name in names[:100]:
        tokens = name.split()
        if not tokens or len(tokens) > 6 or not any(c.isupper() for c in name):
            continue
        out.append(Author(first=tokens[0] if len(tokens) > 1 else "", middle=tokens[1:-1], last=tokens[-1]))
    return out


def _ids(latex: str, text: str) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    m = _DOI_RE.search(latex) or _DOI_RE.search(text)
    if m:
        ids["DOI"] = [m.group(1).rstrip(".")]
    for rx in _ARXIV_RES:
        for m in rx.finditer(latex):
            aid = try_normalize(m.group(1).rstrip("."))
            if aid:
                ids["arXiv"] = [aid]
                return ids
    return ids


def _first_italic(latex: str) -> tuple[str, int, int] | None:
    m = _ITALIC_RE.search(latex)
    if not m:
        return None
    start = m.start() if m.group().startswith("{") else m.end() - 1
    end = _match_brace(latex, start)
    if end < 0:
        return None
    inner = latex[start + 1 : end - 1]
    inner = re.sub(r"^\\(?:em|it|sl)(?![A-Za-z])", "", inner)
    return inner, m.start(), end


def _entry_from_item(body: str, idx: int, label_year: str = "") -> BibEntry:
    """Title, authors, venue, year and ids from one bibitem's LaTeX (best effort)."""
    body = body.strip()
    raw = _plain(_NEWBLOCK_RE.sub(" ", body))
    title = venue = ""
    authors_latex = ""
    blocks = [b for b in _NEWBLOCK_RE.split(body) if b.strip()]
    if len(blocks) >= 2:  # natbib/ACL styles: authors. year. \newblock title. \newblock venue.
        authors_latex, title = blocks[0], _plain(blocks[1]).strip(" .,")
        if len(blocks) >= 3:
            it = _first_italic(blocks[2])
            venue = _plain(it[0] if it else blocks[2]).strip(" .,")
            venue = re.sub(r"^In\s+", "", venue)
    else:
        q = _QUOTED_RE.search(body)
        it = _first_italic(body)
        if q:
            title, authors_latex = _plain(q.group(1)).strip(" .,"), body[: q.start()]
            rest = body[q.end() :]
            it2 = _first_italic(rest)
            venue = _plain(it2[0] if it2 else re.split(r"\{\\bf|\\textbf|\(|\d", rest, maxsplit=1)[0]).strip(
                " .,"
            )
        elif it and len(_plain(it[0]).split()) >= 3 and it[1] > 0:
            title, authors_latex = _plain(it[0]).strip(" .,"), body[: it[1]]
            rest = body[it[2] :]
            venue = _plain(re.split(r"\{\\bf|\\textbf|\(|\d", rest, maxsplit=1)[0]).strip(" .,")
            venue = re.sub(r"^(?:in|In)\s+", "", venue)
        else:
            ym = _YEAR_RE.search(body)
            authors_latex = body[: ym.start()] if ym else re.split(r"\{\\bf|\\textbf|\d", body, maxsplit=1)[0]
            if ym:
                venue = _plain(
                    re.split(r"\{\\bf|\\textbf|\d", body[ym.end() :].lstrip(" .,)"), maxsplit=1)[0]
                ).strip(" .,")
    ym = re.search(r"\d{4}", label_year or "") or _YEAR_RE.search(_URL_RE.sub("", _HREF_RE.sub("", body)))
    year = int(ym.group(0)) if ym else None
    return BibEntry(
        ref_id=f"BIBREF{idx}",
        title=title,
        authors=_split_authors(_plain(authors_latex)),
        year=year,
        venue=venue[:300],
        other_ids=_ids(body, raw),
        num=idx,
        raw_text=raw,
    )


def _bibitems(text: str) -> list[_Item]:
    items: list[_Item] = []
    starts = list(_BIBITEM_RE.finditer(text))
    for n, m in enumerate(starts):
        label, i = _read_optional(text, m.end())
        try:
            key, i = _read_group(text, i)
        except LatexError:
            key = None
        if key is None:
            continue
        stop = starts[n + 1].start() if n + 1 < len(starts) else len(text)
        end = _BIBEND_RE.search(text, i, stop)
        body = text[i : end.start() if end else stop]
        short = year = ""
        label_text = _plain(label) if label else None
        if label_text:
            nm = _NATBIB_LABEL.match(label_text)
            if nm and re.search(r"\d{4}|n\.d\.", nm["year"]):
                short, year = nm["short"].strip(' "'), nm["year"].strip()
        entry = _entry_from_item(body, len(items), year)
        items.append(_Item(key.strip(), label_text, entry, short, year))
    return items


def _references_env(text: str) -> list[_Item]:
    """AAS/PASP ``references`` lists: keyless ``\\reference`` entries (keys ``_ref1``...)."""
    items = []
    for n, chunk in enumerate(re.split(r"\\(?:reference|refitem|item)(?![A-Za-z])", text)[1:]):
        if chunk.strip():
            items.append(_Item(f"_ref{n + 1}", None, _entry_from_item(chunk, len(items))))
    return items


# --- BibTeX (.bib) files, used when there is no .bbl

_BIB_AT_RE = re.compile(r"@\s*(\w+)\s*([{(])")
_BIB_FIELD_RE = re.compile(r"\s*,?\s*([A-Za-z][\w\-:.+]*)\s*=\s*")


def _bib_value(s: str, i: int, strings: dict[str, str]) -> tuple[str, int]:
    parts = []
    while True:
        i = _skip_ws(s, i)
        if i >= len(s):
            break
        if s[i] == "{":
            end = _match_brace(s, i)
            end = len(s) if end < 0 else end
            parts.append(s[i + 1 : end - 1])
            i = end
        elif s[i] == '"':
            j, depth = i + 1, 0
            while j < len(s) and not (s[j] == '"' and depth == 0):
                depth += {"{": 1, "}": -1}.get(s[j], 0)
                j += 1
            parts.append(s[i + 1 : j])
            i = j + 1
        else:
            m = re.compile(r"[\w\-.:]+").match(s, i)
            if not m:
                break
            parts.append(strings.get(m.group().lower(), m.group()))
            i = m.end()
        j = _skip_ws(s, i)
        if j < len(s) and s[j] == "#":
            i = j + 1
            continue
        break
    return "".join(parts), i


def parse_bib_file(text: str) -> dict[str, dict[str, str]]:
    """BibTeX entries as ``{key: {field: latex value}}`` (``@string`` macros resolved)."""
    entries: dict[str, dict[str, str]] = {}
    strings: dict[str, str] = {}
    pos = 0
    while m := _BIB_AT_RE.search(text, pos):
        kind = m.group(1).lower()
        if m.group(2) == "{":
            end = _match_brace(text, m.end() - 1)
        else:
            close = text.find(")", m.end())
            end = close + 1 if close >= 0 else -1
        end = len(text) if end < 0 else end
        body = text[m.end() : end - 1]
        pos = end
        if kind in ("comment", "preamble"):
            continue
        if kind == "string":
            fm = _BIB_FIELD_RE.match(body)
            if fm:
                strings[fm.group(1).lower()] = _bib_value(body, fm.end(), strings)[0]
            continue
        comma = body.find(",")
        if comma < 0:
            continue
        key, fields, i = body[:comma].strip(), {"ENTRYTYPE": kind}, comma
        while fm := _BIB_FIELD_RE.match(body, i):
            value, i = _bib_value(body, fm.end(), strings)
            fields[fm.group(1).lower()] = value
        entries.setdefault(key, fields)
    return entries


def _bib_authors(value: str) -> list[Author]:
    out = []
    for name in re.split(r"\s+and\s+", _WS.sub(" ", value).strip()):
        name = _plain(name)
        if not name or name.lower() == "others":
            continue
        if "," in name:
            last, _, first = name.partition(",")
            tokens = first.split()
            out.append(Author(first=tokens[0] if tokens else "", middle=tokens[1:], last=last.strip()))
        else:
            tokens = name.split()
            out.append(
                Author(first=tokens[0] if len(tokens) > 1 else "", middle=tokens[1:-1], last=tokens[-1])
            )
    return out


def _entry_from_bib(fields: dict[str, str], idx: int) -> BibEntry:
    authors = _bib_authors(fields.get("author", fields.get("editor", "")))
    title = _plain(fields.get("title", "")).strip(" .")
    venue = _plain(
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
    return BibEntry(
        ref_id=f"BIBREF{idx}",
        title=title,
        authors=authors,
        year=year,
        venue=venue,
        volume=fields.get("volume", ""),
        issue=fields.get("number", ""),
        pages=fields.get("pages", "").replace("--", "-"),
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
            end = _match_brace(body, fm.end() - 1)
            if end > 0:
                fields[fm.group(1).lower()] = body[fm.end() : end - 1]
        for vm in _BLX_VERB_RE.finditer(body):
            fields.setdefault(vm.group(1).lower(), vm.group(2).strip())
        names = []
        nm = re.search(r"\\name\s*\{author\}", body)
        if nm:
            for fam in re.finditer(
                r"family=\{([^{}]*)\}(?:,familyi=\{[^{}]*\})?(?:,given=\{([^{}]*)\})?",
                body[nm.end() :].split("\\name")[0].split("\\list")[0],
            ):
                names.append(f"{fam.group(1)}, {fam.group(2) or ''}")
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
        items.append(_Item(m.group(1).strip(), fields.get("labelalpha"), entry, short, year))
    return items


def _bib_short(authors: list[Author]) -> str:
    if not authors:
        return ""
    if len(authors) == 1:
        return authors[0].last
    if len(authors) == 2:
        return f"{authors[0].last} and {authors[1].last}"
    return f"{authors[0].last} et al."


def _items_from(text: str) -> list[_Item]:
    if _BIBITEM_RE.search(text):
        return _bibitems(text)
    if "\\endentry" in text:
        return _biblatex_items(text)
    if re.search(r"\\begin\s*\{references\}", text):
        return _references_env(text)
    items = []
    for key, fields in parse_bib_file(text).items():
        entry = _entry_from_bib(fields, len(items))
        items.append(_Item(key, None, entry, _bib_short(entry.authors), str(entry.year or "")))
    return items


def parse_bibliography(text: str) -> dict[str, BibEntry]:
    """Cite key -> :class:`BibEntry` (``BIBREF0``... in bibliography order) from a .bbl
    (natbib or biblatex), a ``thebibliography`` block, or a .bib file."""
    return {item.key: item.entry for item in _items_from(text)}
