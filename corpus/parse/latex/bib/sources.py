"""The paper's bibliography as LaTeX prints it: every list it prints, in the order it prints
them: each inline ``thebibliography``, and at each ``\\bibliography{...}`` (or biblatex's
``\\printbibliography``) its .bbl or, without one, the entries of its .bib files that it cites
(all of them after ``\\nocite{*}``); with neither, an AAS ``references`` list, the .bbl or the
.bib. .bbl entries without a title take it from the .bib."""

from __future__ import annotations

import re

from corpus.ingest.eprint import LatexSource
from corpus.parse.latex.bib.bibitems import _bibitems, _references_env
from corpus.parse.latex.bib.bibtex import _entry_from_bib, parse_bib_file
from corpus.parse.latex.bib.entries import _items_from, fill_from_bib
from corpus.parse.latex.bib.item import _Item
from corpus.parse.latex.bib.names import _bib_short
from corpus.parse.latex.braces import LatexError, read_group, read_optional
from corpus.parse.latex.cites import cited_keys
from corpus.parse.latex.text import plain_field

# The places a list is printed: an inline thebibliography, or BibTeX's / biblatex's list
_LIST_RE = re.compile(
    r"\\begin\s*\{thebibliography\}.*?(?:\\end\s*\{thebibliography\}|$)"
    r"|\\bibliography\s*\{[^{}]*\}|\\printbibliography(?![A-Za-z])",
    re.S,
)


def bibliography(source: LatexSource, body: str, definitions: str = "") -> tuple[list[_Item], bool]:
    """The paper's bibliography items and whether they came from a .bbl / thebibliography
    (True) or from .bib files only (False). A paper may print several lists (a hand-written
    ``thebibliography`` beside its ``\\bibliography{refs}``): each is read where it is printed,
    numbered from 1 as LaTeX numbers each list, and a key LaTeX has already seen is not read
    twice. .bbl entries missing a title or identifiers (the AAS and REVTeX styles print no
    article titles) take them from the .bib entry of the same key when the e-print has one.
    ``definitions``: the paper's environment definitions, which the front end takes out of the
    text (a redefined ``thebibliography`` that sets its counter)."""
    places = list(_LIST_RE.finditer(body))
    inline = [m for m in places if m.group().startswith("\\begin")]
    if inline:
        items: list[_Item] = []
        from_bbl = True
        bbl_read = False
        for m in places:
            start = 1
            if m.group().startswith("\\begin"):
                part = _bibitems(m.group())
                start = _first_number(body, m, definitions)
            elif bbl_read:
                continue  # the .bbl prints where its first \bibliography is
            else:
                bbl_read = True
                part, from_bbl_part = _printed_list(source, body)
                from_bbl = from_bbl and from_bbl_part
            _append_list(items, part, start)
        return _titled(source, items), from_bbl
    refs = re.search(r"\\begin\s*\{references\}(.*?)(?:\\end\s*\{references\}|$)", body, re.S)
    if not (source.bbl and source.bbl.strip()) and refs:
        return _references_env(refs.group(1)), True
    items, from_bbl = _printed_list(source, body)
    return (_titled(source, items) if from_bbl else items), from_bbl


def _printed_list(source: LatexSource, body: str) -> tuple[list[_Item], bool]:
    """What ``\\bibliography{...}`` prints: the .bbl, else the cited entries of the .bib files."""
    if source.bbl and source.bbl.strip():
        return _items_from(source.bbl), True
    if not source.bib:
        return [], True
    every = re.search(r"\\nocite\s*\{\s*\*\s*\}", body)
    cited = cited_keys(body)
    fields = bib_fields(source.bib, None if every else set(cited))
    items = []
    cited_lower = {c.lower() for c in cited}
    seen: set[str] = set()  # keys match whatever their case, as BibTeX matches them
    for key in cited + ([k for k in fields if k not in cited_lower] if every else []):
        f = fields.get(key.lower())
        if f is not None and key.lower() not in seen:
            seen.add(key.lower())
            entry = _entry_from_bib(f, len(items))
            year = str(entry.year) if entry.year else plain_field(f.get("year", "")).strip(" .")  # "in press"
            items.append(_Item(key, None, entry, _bib_short(entry.authors), year))
    return items, False


_RENEW_LIST_RE = re.compile(
    r"\\renew(?:environment\s*\{thebibliography\}|command\s*\{?\\thebibliography(?![A-Za-z])\}?)"
)
_ENUMIV_RE = re.compile(r"\\(set|addto)counter\s*\{enumiv\}\s*\{\s*(-?\d+)\s*\}")


def _first_number(body: str, found: re.Match, definitions: str = "") -> int:
    """The number of an inline list's first item: 1 (each ``thebibliography`` resets its counter),
    or after what ``\\setcounter{enumiv}{62}`` sets, written in the list before its first item or
    in the paper's redefinition of the environment (Nature's "Methods References" go on from the
    main list's numbers): the last before the list in ``body``, else the last of ``definitions``."""
    head = found.group()
    first_item = head.find("\\bibitem")
    counter = _ENUMIV_RE.search(head, 0, first_item if first_item >= 0 else len(head))
    if counter is None:
        renews = list(_RENEW_LIST_RE.finditer(body, 0, found.start()))
        if not renews:
            body = definitions
            renews = list(_RENEW_LIST_RE.finditer(body))
        renew = renews[-1] if renews else None
        if renew is not None:
            _, i = read_optional(body, renew.end())  # the number of arguments
            _, i = read_optional(body, i)
            try:
                begin, _ = read_group(body, i)
            except LatexError:
                begin = None
            counter = _ENUMIV_RE.search(begin or "")
    if counter is None:
        return 1
    return int(counter.group(2)) + 1


def _append_list(items: list[_Item], part: list[_Item], start: int = 1) -> None:
    """Add one printed list to ``items``: entries renumbered after those already there (their
    ids stay unique), a list after the first printing its own numbers from ``start`` (1 but where
    the paper sets the counter), and keys already defined left out (the paper's one entry for the
    key is the first)."""
    first = not items
    seen = {it.key.lower() for it in items}
    position = start - 1
    for it in part:
        if it.key.lower() in seen:
            continue
        seen.add(it.key.lower())
        position += 1
        n = len(items)
        it.entry.ref_id, it.entry.num = f"BIBREF{n}", n
        if (not first or start != 1) and it.label is None:
            it.label = str(position)  # each thebibliography list counts from 1, or from its counter
        items.append(it)


def _titled(source: LatexSource, items: list[_Item]) -> list[_Item]:
    """The items with what the e-print's .bib adds to them (:func:`fill_from_bib`)."""
    if source.bib and items:
        fill_from_bib(items, bib_fields(source.bib, {it.key for it in items}))
    return items


def bib_fields(texts: list[str], keys: set[str] | None = None) -> dict[str, dict[str, str]]:
    """The .bib entries by lower-case key (BibTeX matches cite keys whatever their case)."""
    fields: dict[str, dict[str, str]] = {}
    for text in texts:
        for k, v in parse_bib_file(text, keys).items():
            fields.setdefault(k.lower(), v)
    return fields
