"""Bibliographies of LaTeX sources -> :class:`corpus.parse.document.BibEntry` rows with their cite keys.

Read from a ``thebibliography`` block or .bbl (natbib, REVTeX, ACM, Elsevier, AAS and plain
styles: :mod:`corpus.parse.latex.bib.bibitems`), a biblatex .bbl, or BibTeX .bib files
(:mod:`corpus.parse.latex.bib.bibtex`); each reader gives :class:`_Item` (key, printed label,
natbib short author list and year, entry).
"""

from __future__ import annotations

import re

from corpus.ingest.eprint import strip_comments
from corpus.parse.document import BibEntry
from corpus.parse.latex.bib.bibitems import _BIBITEM_RE, _bibitems, _references_env
from corpus.parse.latex.bib.bibtex import _bib_ids, _biblatex_items, _entry_from_bib, parse_bib_file
from corpus.parse.latex.bib.item import _Item, clean_title
from corpus.parse.latex.bib.names import _bib_short
from corpus.parse.latex.text import plain_field


def _items_from(text: str) -> list[_Item]:
    if _BIBITEM_RE.search(text) or "\\harvarditem" in text:
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
    if _BIBITEM_RE.search(text) or "\\harvarditem" in text:  # a .bbl: TeX comments (not in .bib files)
        text = strip_comments(text)
    return {item.key: item.entry for item in _items_from(text)}


def _words(text: str) -> str:
    return " " + re.sub(r"[^0-9a-z]+", " ", text.lower()).strip() + " "


def fill_from_bib(items: list[_Item], fields: dict[str, dict[str, str]]) -> int:
    """Give .bbl entries what their .bib entry (same cite key) has and they lack: title,
    DOI, arXiv id (and venue, year, authors when missing); and the .bib's title where the .bbl
    prints it but the layout reader took something else for the title (a journal, a
    proceedings name, a title cut at a comma). Returns the number of entries that got a title."""
    titled = 0
    for it in items:
        f = fields.get(it.key) or fields.get(it.key.lower())
        if f is None:
            continue
        e = it.entry
        if not e.venue or not e.year or not e.authors:
            bib = _entry_from_bib(f, e.num or 0)
            e.venue, e.year, e.authors = e.venue or bib.venue, e.year or bib.year, e.authors or bib.authors
        title = clean_title(plain_field(f.get("title", "")))
        printed = len(_words(title).split()) >= 2 and _words(title) in _words(e.raw_text)
        if title and (not e.title or (printed and _words(e.title) != _words(title))):
            if e.title and not e.venue and _words(e.title) not in _words(title):
                e.venue = e.title  # what was read as the title is the journal or the proceedings
            titled += not e.title
            e.title = title
        for kind, values in _bib_ids(f).items():
            e.other_ids.setdefault(kind, values)
    return titled


def alpha_labels(items: list[_Item], style: str = "bibtex") -> None:
    """Give entries read from .bib files the alphabetic labels their style prints ("Knu84",
    "LK94"): BibTeX's alpha.bst (one author: three letters; up to four: initials; more: three
    initials and "+") or biblatex's alphabetic (one: three letters; up to three: initials;
    more: the first name's three letters and "+"); the year's last two digits; entries with
    the same label told apart by a, b, ... in the order the style sorts them."""
    names_max = 4 if style == "bibtex" else 3
    labels: list[str] = []
    for it in items:
        lasts = [re.sub(r"[^\w]", "", a.last) for a in it.entry.authors if a.last]
        lasts = [x for x in lasts if x]
        if not lasts:
            head = re.sub(r"[^\w]", "", it.key)[:3]
        elif len(lasts) == 1:
            head = lasts[0][:3]
        elif len(lasts) <= names_max:
            head = "".join(x[0] for x in lasts)
        elif style == "bibtex":
            head = "".join(x[0] for x in lasts[:3]) + "+"
        else:
            head = lasts[0][:3] + "+"
        year = str(it.entry.year or "")[-2:]
        labels.append(head + year)
    order = sorted(range(len(items)), key=lambda i: (labels[i].lower(), items[i].entry.title.lower()))
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    seen: dict[str, int] = {}
    for i in order:
        label = labels[i]
        if counts[label] > 1:
            seen[label] = seen.get(label, 0) + 1
            label += chr(ord("a") + min(seen[label], 26) - 1)
        items[i].label, items[i].alpha = label, True
