"""The paper's bibliography as LaTeX prints it: from an inline ``thebibliography``, its .bbl, an
AAS ``references`` list or, with none of those, the entries of its .bib files that it cites
(all of them after ``\\nocite{*}``). .bbl entries without a title take it from the .bib."""

from __future__ import annotations

import re

from corpus.ingest.eprint import LatexSource
from corpus.parse.latex.bib.bibitems import _bibitems, _references_env
from corpus.parse.latex.bib.bibtex import _entry_from_bib, parse_bib_file
from corpus.parse.latex.bib.entries import _items_from, fill_from_bib
from corpus.parse.latex.bib.item import _Item
from corpus.parse.latex.bib.names import _bib_short
from corpus.parse.latex.cites import cited_keys


def bibliography(source: LatexSource, body: str) -> tuple[list[_Item], bool]:
    """The paper's bibliography items and whether they came from a .bbl / thebibliography
    (True) or from .bib files (False). .bbl entries missing a title or identifiers (the
    AAS and REVTeX styles print no article titles) take them from the .bib entry of the
    same key when the e-print has one."""
    inline = re.search(r"\\begin\s*\{thebibliography\}.*?(?:\\end\s*\{thebibliography\}|$)", body, re.S)
    refs = re.search(r"\\begin\s*\{references\}(.*?)(?:\\end\s*\{references\}|$)", body, re.S)
    if inline:
        items = _bibitems(inline.group(0))
    elif source.bbl and source.bbl.strip():
        items = _items_from(source.bbl)
    elif refs:
        return _references_env(refs.group(1)), True
    elif source.bib:
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
                items.append(_Item(key, None, entry, _bib_short(entry.authors), str(entry.year or "")))
        return items, False
    else:
        return [], True
    untitled = {it.key for it in items if not it.entry.title}
    if source.bib and untitled:
        fill_from_bib(items, bib_fields(source.bib, untitled))
    return items, True


def bib_fields(texts: list[str], keys: set[str] | None = None) -> dict[str, dict[str, str]]:
    """The .bib entries by lower-case key (BibTeX matches cite keys whatever their case)."""
    fields: dict[str, dict[str, str]] = {}
    for text in texts:
        for k, v in parse_bib_file(text, keys).items():
            fields.setdefault(k.lower(), v)
    return fields
