"""People and references in Grobid TEI: authors (the paper's, with affiliations and email, and
every bibliography entry's), identifiers (DOI, arXiv, PubMed ...) and the bibliography entries
keyed ``BIBREFn`` as s2orc-doc2json keys them (:mod:`corpus.parse.tei` reads the rest)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from corpus.ingest.arxiv_ids import try_normalize
from corpus.parse.tei.citations import split_title_year
from corpus.parse.tei.text import (
    LN,
    find_arxiv_ids,
    find_child,
    find_children,
    find_dois,
    fresh_key,
    text_of,
    year_of,
)

_BIB_ID = re.compile(r"b(\d+)")


_TEI_NS = "{http://www.tei-c.org/ns/1.0}"
_PERS = frozenset((f"{_TEI_NS}persName", "persName"))
_ORG = frozenset((f"{_TEI_NS}orgName", "orgName"))
_FORE = frozenset((f"{_TEI_NS}forename", "forename"))
_SUR = frozenset((f"{_TEI_NS}surname", "surname"))
_GEN = frozenset((f"{_TEI_NS}genName", "genName"))


# An author's name is read the same way in the header (nested loops, :func:`_person`) and
# in the flat bibliography pass (:func:`_bib_entry`): the person dict is created first,
# :func:`_add_name_part` fills it from the children of the author's first persName and
# :func:`_keep_person` applies the fallbacks. Tags are compared raw (TEI namespace or none).


def _new_person() -> dict:
    return {"first": "", "middle": [], "last": "", "suffix": "", "affiliation": {}, "email": ""}


def _add_name_part(person: dict, c, tag) -> None:
    """A child of the persName: forename (first, or middle by type), surname, genName (suffix).
    Plain single-word names skip normalisation."""
    t = c.text if not len(c) else "".join(c.itertext())
    if not t:
        return
    if not t.isalpha():
        t = " ".join(t.split())
        if not t:
            return
    if tag in _FORE:
        if c.get("type") == "middle":
            person["middle"].append(t)
        else:
            person["first"] = f"{person['first']} {t}" if person["first"] else t
    elif tag in _SUR:
        person["last"] = f"{person['last']} {t}" if person["last"] else t
    elif tag in _GEN:
        person["suffix"] = f"{person['suffix']} {t}" if person["suffix"] else t


def _keep_person(person: dict, pers, org) -> bool:
    """Fallbacks once the name parts are in: no persName -> the first orgName before it as
    last name (a collaboration); no name parts -> the persName text as last name. False when
    there is no name at all."""
    if pers is None:
        person["last"] = text_of(org)
        return bool(person["last"])
    if not (person["first"] or person["middle"] or person["last"]):
        person["last"] = text_of(pers)
        return bool(person["last"])
    return True


def _person(author) -> dict | None:
    """first / middle / last / suffix of an ``<author>`` (a collaboration's orgName as last)."""
    pers = org = None
    for c in author:
        tag = c.tag
        if tag in _PERS:
            pers = c
            break
        if org is None and tag in _ORG:
            org = c
    person = _new_person()
    if pers is not None:
        for c in pers:
            _add_name_part(person, c, c.tag)
    return person if _keep_person(person, pers, org) else None


def _affiliation(aff) -> dict:
    out: dict = {"laboratory": "", "institution": ""}
    for org in find_children(aff, "orgName"):
        t = text_of(org)
        kind = org.get("type") or "institution"
        if t:
            out[kind] = f"{out[kind]}, {t}" if out.get(kind) else t
    loc: dict = {}
    addr = find_child(aff, "address")
    if addr is not None:
        for c in addr:
            t = text_of(c)
            if t and LN[c.tag]:
                loc[LN[c.tag]] = t
    out["location"] = loc
    return out


def header_author(author) -> dict | None:
    person = _person(author)
    if person is None:
        return None
    pers = aff = None
    emails: list[str] = []
    for c in author:  # one pass instead of three finds
        ln = LN[c.tag]
        if ln == "persName":
            pers = pers if pers is not None else c
        elif ln == "affiliation":
            aff = aff if aff is not None else c
        elif ln == "email":
            emails.append(text_of(c))
    if pers is None:
        return None  # Grobid lists orphan affiliations as authors without a name
    person["affiliation"] = _affiliation(aff) if aff is not None else {}
    person["email"] = next((e for e in emails if e), "")
    return person


_ID_KEYS = {"doi": "DOI", "arxiv": "arXiv", "pmid": "PubMed", "pmcid": "PMC", "pii": "PII"}


def add_id(ids: dict[str, list[str]], kind: str, value: str) -> None:
    key = _ID_KEYS.get(kind.lower(), kind)
    if key == "arXiv":
        value = try_normalize(value) or (find_arxiv_ids(value) or [""])[0]
    if not value:
        return
    lst = ids.setdefault(key, [])
    if value not in lst:
        lst.append(value)


def _bib_entry(bs, key: str) -> dict | None:
    """One ``<biblStruct>`` in one flat pass (this is the hot loop of a parse).

    ``bs.iter()`` is a single C-level iterator over the whole entry, while nested
    ``for c in el`` loops create one iterator per element: over a bibliography the flat
    pass costs about half. Each element is still used only where the nested reading
    (children of biblStruct, of analytic/monogr, of imprint, of an author, of its
    persName) would use it: its parent is compared with the containers in force, and
    ``getparent()`` of a proxy we hold is a pointer lookup. So titles under ``<series>``
    or names under ``<editor>`` are ignored as before.
    """
    a_title = ""
    a_main = False
    authors: list[dict] = []
    m_authors: list[dict] = []
    m_titles: dict[str, str] = {}
    volume = issue = pages = meeting = raw = report_type = ""
    year = None
    ids: dict[str, list[str]] = {}
    urls: list[str] = []
    part = imprint = author = pers = org = person = None
    analytic = person_analytic = False
    it = bs.iter()
    next(it)  # bs itself
    for el in it:
        tag = el.tag
        parent = el.getparent()
        if parent is pers:
            _add_name_part(person, el, tag)
        elif parent is author:
            if pers is None:  # the first persName counts, and an orgName before it
                if tag in _PERS:
                    pers = el
                elif org is None and tag in _ORG:
                    org = el
        elif parent is part:
            cl = LN[tag]
            if cl == "title":
                txt = text_of(el)
                if not txt:
                    continue
                if analytic:
                    if el.get("type") == "main" and not a_main:
                        a_title, a_main = txt, True
                    elif not a_title:
                        a_title = txt
                else:
                    m_titles.setdefault(el.get("level") or "m", txt)
            elif cl == "author":
                if person is not None and _keep_person(person, pers, org):
                    (authors if person_analytic else m_authors).append(person)
                author, pers, org, person, person_analytic = el, None, None, _new_person(), analytic
            elif cl == "imprint":
                imprint = el
            elif cl == "idno":
                kind, val = el.get("type"), text_of(el)
                if kind and val:
                    add_id(ids, kind, val)
            elif cl == "ptr":
                target = el.get("target")
                if target:
                    urls.append(target)
            elif cl == "meeting" and not meeting:
                meeting = text_of(el)
        elif parent is imprint:
            sl = LN[tag]
            if sl == "biblScope":
                unit = el.get("unit")
                if unit == "volume":
                    volume = volume or text_of(el)
                elif unit == "issue":
                    issue = issue or text_of(el)
                elif unit == "page" and not pages:
                    frm, to = el.get("from"), el.get("to")
                    pages = f"{frm}--{to}" if frm and to else (frm or to or text_of(el))
            elif sl == "date" and year is None:
                year = year_of(el.get("when")) or year_of(text_of(el))
        elif parent is bs:
            pl = LN[tag]
            if pl == "analytic" or pl == "monogr":
                part, analytic = el, pl == "analytic"
            elif pl == "note":
                nt = el.get("type")
                if nt == "raw_reference":
                    raw = text_of(el)
                elif nt == "report_type" and not report_type:
                    report_type = text_of(el)
            elif pl == "idno":
                kind, val = el.get("type"), text_of(el)
                if kind and val:
                    add_id(ids, kind, val)
            elif pl == "ptr":
                target = el.get("target")
                if target:
                    urls.append(target)
    if person is not None and _keep_person(person, pers, org):
        (authors if person_analytic else m_authors).append(person)
    if not authors:
        authors = m_authors
    if a_title:
        title = a_title
        venue = m_titles.get("j") or m_titles.get("m") or m_titles.get("s") or ""
    else:
        title = m_titles.get("m", "")
        venue = m_titles.get("j") or m_titles.get("s") or ""
    venue = venue or meeting or report_type
    # arXiv ids / DOIs written in the reference but not tagged by Grobid
    blob = " ".join(filter(None, (raw, title, venue, volume, report_type)))
    low = blob.lower()
    if "arxiv" in low or "abs/" in low:
        for aid in find_arxiv_ids(blob):
            add_id(ids, "arXiv", aid)
    if "DOI" not in ids and "10." in raw:
        for doi in find_dois(raw):
            add_id(ids, "DOI", doi)
    if year is None and raw:
        year = year_of(raw)
    if not (title or authors or venue or ids or raw or urls):
        return None
    return {
        "ref_id": key,
        "title": title,
        "authors": authors,
        "year": year,
        "venue": venue,
        "volume": volume,
        "issue": issue,
        "pages": pages,
        "other_ids": ids,
        "num": None,
        "urls": urls,
        "raw_text": raw,
    }


def bib_entries(structs: Iterable, bib_keys: dict[str, str]) -> tuple[dict[str, dict], list[str]]:
    """Bib entries keyed ``BIBREFn`` (``n`` from Grobid's ``bn`` id); returns entries and doc order,
    and fills ``bib_keys`` (Grobid's xml:id -> key) for the cite spans."""
    xml_id = "{http://www.w3.org/XML/1998/namespace}id"
    entries: dict[str, dict] = {}
    order: list[str] = []
    pending = []
    for bs in structs:
        xid = bs.get(xml_id) or ""
        m = _BIB_ID.fullmatch(xid)
        key = f"BIBREF{m.group(1)}" if m else None
        if key is None or key in entries:
            pending.append((len(order), xid, bs))
            order.append("")
            continue
        entry = _bib_entry(bs, key)
        order.append(key)
        if entry is not None:
            entries[key] = entry
            bib_keys[xid] = key
    for i, xid, bs in pending:  # entries without a usable id, numbered after the others
        key = fresh_key(entries, "BIBREF")
        entry = _bib_entry(bs, key)
        order[i] = key
        if entry is not None:
            entries[key] = entry
            if xid and xid not in bib_keys:
                bib_keys[xid] = key
    return entries, order


def title_years(entries: dict[str, dict]) -> None:
    """Grobid sometimes leaves an author-year label's year in the title (``2022a. Title``):
    move it to ``year`` (when there is none) and out of the title. Run after name linking,
    which reads the letter from there."""
    for e in entries.values():
        title = e["title"]
        if title[:1].isdigit():
            rest, year, _ = split_title_year(title)
            if year is not None:
                e["title"] = rest
                e["year"] = e["year"] or year
