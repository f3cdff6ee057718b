"""Grobid TEI XML -> S2ORC-style structured full text (:class:`corpus.parse.document.StructuredDoc`).

The output follows s2orc-doc2json's ``pdf_parse`` conventions so tools built for
S2ORC read it unchanged: bib entries are keyed ``BIBREFn`` from Grobid's ``#bn``
targets, figures/tables ``FIGREFn`` / ``TABREFn`` from ``fig_n`` / ``tab_n``,
display formulas become a paragraph whose text is ``EQUATION`` carrying one
eq span (keyed ``EQREFn``, raw formula text in ``ref_entries``), footnotes are
appended to ``body_text`` with an empty section, the abstract's section is
``"Abstract"``. Where we deliberately differ from s2orc-doc2json:

* every bib entry is kept, also those without a title (they still link by arXiv
  id or DOI); arXiv ids and DOIs are also found in the raw reference text;
* the citation style is decided over *all* sections (s2orc-doc2json looks only
  at sections without a heading);
* sections are nested from their numbers: ``2.1 Node types`` under ``2 Graph``
  gives ``"Graph::Node types"`` (the leaf is the part after the last ``::``);
* text keeps Grobid's characters exactly, with runs of whitespace (and C0/C1
  control characters) collapsed to one space; no spaces are invented around
  citations. Every span satisfies ``text[start:end] == span.text``;
* appendix (``annex``), acknowledgement and funding divs go to ``back_matter``
  paragraph by paragraph with their own headings;
* cite spans Grobid left unlinked are linked by first-author surname, author count,
  year and year letter when exactly one entry matches, and in bracket papers by their
  printed number, one map per reference list (:mod:`corpus.parse.tei_citations`);
* a title Grobid began with an author-year label's year (``2022a. Title``) loses it,
  and the entry gets that year when it had none;
* header: title, authors with affiliation dicts (``laboratory``, ``institution``,
  ``department`` when present, ``location``) and email, date/year, venue, idnos
  (``DOI``, ``arXiv`` normalised, ``MD5``...), Grobid version as ``parser_version``.

Input is parsed with entity resolution, network access and huge trees off; C1
control characters are replaced by spaces first. Use :func:`parse_tei_dict` for
the plain dict (bulk path), :func:`parse_tei` for the validated model.

Post-processing of SPEC.md §3 (s2orc-paper.txt §2.1) is in :mod:`corpus.parse.tei_citations`.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterable

from lxml import etree

from corpus.ingest.arxiv_ids import try_normalize
from corpus.parse.document import StructuredDoc
from corpus.parse.tei_citations import YEAR as _YEAR
from corpus.parse.tei_citations import (
    classify_citation_style,
    link_citations,
    postprocess_citations,
    split_title_year,
)

# The version of pdf_parses (corpus.versions): bump it whenever their rows change.
TEI_PARSER_VERSION = "corpus.parse.tei/1"

__all__ = [
    "TeiError",
    "parse_tei",
    "parse_tei_dict",
    "classify_citation_style",
    "postprocess_citations",
    "SectionNester",
    "find_arxiv_ids",
    "find_dois",
    "normalize_space",
]


class TeiError(ValueError):
    """The input is not (well-formed) Grobid TEI; the message says why."""


# ---------------------------------------------------------------- text helpers

# C0/C1 controls (XML 1.0 admits the C1 range): pycld2 and JSON consumers choke on them.
# They are replaced by spaces before parsing, so text normalisation is a plain
# ``str.split`` (Unicode whitespace) + join, which is several times faster than a regex.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")
_TRAILING_NUM = re.compile(r"(\d+)$")
_BIB_ID = re.compile(r"b(\d+)")
_SEC_NUM = re.compile(r"[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*\.?")
_ARXIV_IN_TEXT = re.compile(
    r"(?:arxiv\s*(?:preprint|e-prints?)?\s*[:.]?\s*(?:arxiv\s*:\s*)?|arxiv\.org/(?:abs|pdf)/|\babs/|arxiv\.)"
    r"((?:[a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?/\d{7})|\d{4}\.\d{4,5})(?:v\d+)?",
    re.IGNORECASE,
)
_DOI_IN_TEXT = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)")
_DOI_TRAIL = ".,;:)]}>'\""


def normalize_space(text: str | None) -> str:
    """Collapse whitespace/control runs to one space and strip (the text form used everywhere)."""
    if not text:
        return ""
    if _CONTROLS.search(text):
        text = _CONTROLS.sub(" ", text)
    return " ".join(text.split())


def find_arxiv_ids(text: str) -> list[str]:
    """Canonical arXiv ids written in ``text`` with an arXiv context (``arXiv:``, ``abs/``,
    ``arxiv.org/abs/``), so numbers inside DOIs or page ranges are not mistaken for ids."""
    out: list[str] = []
    for m in _ARXIV_IN_TEXT.finditer(text):
        aid = try_normalize(m.group(1))
        if aid and aid not in out:
            out.append(aid)
    return out


def find_dois(text: str) -> list[str]:
    out: list[str] = []
    for m in _DOI_IN_TEXT.finditer(text):
        doi = m.group(1).rstrip(_DOI_TRAIL)
        if doi and doi not in out:
            out.append(doi)
    return out


class _LocalNames(dict):
    """tag -> local name (namespace or not; comments/PIs give ""), filled on first sight.

    Subscripting a dict subclass stays a C-level lookup, which matters: it runs for
    every element of every document.
    """

    def __missing__(self, tag: object) -> str:
        if isinstance(tag, str):
            i = tag.find("}")
            ln = tag[i + 1 :] if i >= 0 else tag
        else:
            ln = ""
        if len(self) < 4096:
            self[tag] = ln
        return ln


_LN = _LocalNames()


def _is_clean(s: str) -> bool:
    """True when ``" ".join(s.split())`` is just ``s.strip(" ")``: the only whitespace is
    single ASCII spaces. Most Grobid text is like that, and these checks are several times
    cheaper than splitting and joining. ASCII text: no tab, newline or CR (``in`` is a
    memchr; VT, FF and FS..US cannot occur, XML 1.0 forbids them). Other text:
    ``isprintable()`` is False for every whitespace character but the ASCII space (they
    are all in Unicode categories Zs, Zl, Zp or Cc). Double spaces are looked for last.
    """
    if s.isascii():
        if "\n" in s or "\t" in s or "\r" in s:
            return False
    elif not s.isprintable():
        return False
    return "  " not in s


def _children(el, name: str) -> list:
    """Child elements with local name ``name``, like ``el.findall("{*}name")``.

    A plain loop over the children costs a third of ElementPath's ``find`` (~0.7 vs 2.2 µs),
    which adds up over every div, figure and header author.
    """
    return [c for c in el if _LN[c.tag] == name]


def _child(el, *names: str):
    """First element at the path of local names, like ``el.find("{*}a/{*}b")`` (same
    document-order search: a later ``a`` is tried when the first has no ``b``)."""
    name, rest = names[0], names[1:]
    for c in el:
        if _LN[c.tag] == name:
            found = _child(c, *rest) if rest else c
            if found is not None:
                return found
    return None


def _text(el) -> str:
    """Normalised text content (controls were removed at parse time)."""
    if el is None:
        return ""
    if len(el):
        return " ".join("".join(el.itertext()).split())
    t = el.text
    if not t:
        return ""
    return t.strip(" ") if _is_clean(t) else " ".join(t.split())


def _year(value: str | None) -> int | None:
    if not value:
        return None
    m = _YEAR.search(value)
    return int(m.group(1)) if m else None


class _Builder:
    """Accumulates one paragraph's text and spans while normalising whitespace.

    Offsets are taken in the *output* text, so ``text[start:end] == span text`` holds
    by construction; span texts are stripped of surrounding blanks.
    """

    __slots__ = ("parts", "n", "space", "cites", "refs", "eqs")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.n = 0
        self.space = True  # at start: drop leading blanks
        self.cites: list[list] = []
        self.refs: list[list] = []
        self.eqs: list[list] = []

    def _blank(self) -> None:
        if not self.space:
            self.parts.append(" ")
            self.n += 1
            self.space = True

    def text(self, s: str | None) -> None:
        if not s:
            return
        if _is_clean(s):  # fast path: no split/join for text that is already normalised
            core = s.strip(" ")
            if not core:
                self._blank()
                return
            if s[0] == " ":
                self._blank()
            self.parts.append(core)
            self.n += len(core)
            self.space = False
            if s[-1] == " ":
                self._blank()
            return
        words = s.split()
        if not words:
            self._blank()
            return
        if s[0].isspace():
            self._blank()
        core = " ".join(words)
        self.parts.append(core)
        self.n += len(core)
        self.space = False
        if s[-1].isspace():
            self._blank()

    def span(self, s: str, bucket: list, ref_id: str | None) -> None:
        if not s:
            return
        core = s.strip(" ") if _is_clean(s) else " ".join(s.split())
        if not core:
            self._blank()
            return
        if s[0].isspace():
            self._blank()
        start = self.n
        self.parts.append(core)
        self.n += len(core)
        self.space = False
        bucket.append([start, self.n, core, ref_id])
        if s[-1].isspace():
            self._blank()

    def finish(self) -> str:
        text = "".join(self.parts)
        return text[:-1] if text.endswith(" ") else text


# ---------------------------------------------------------------- sections


class SectionNester:
    """Builds ``"A::B"`` section paths from heading numbers (``2.1`` under ``2``).

    Unnumbered headings are their own path and leave the numbering stack alone, so a
    later ``2.3`` still nests under ``2``. A trailing dot (``5.``) is ignored.
    """

    def __init__(self) -> None:
        self._stack: list[tuple[tuple[str, ...], str]] = []

    def push(self, num: str | None, title: str) -> str:
        title = title or (num or "")
        parts = _sec_parts(num)
        if parts is None:
            return title
        stack = self._stack
        while stack and not (len(stack[-1][0]) < len(parts) and parts[: len(stack[-1][0])] == stack[-1][0]):
            stack.pop()
        path = f"{stack[-1][1]}::{title}" if stack else title
        stack.append((parts, path))
        return path


def _sec_parts(num: str | None) -> tuple[str, ...] | None:
    if not num:
        return None
    num = num.strip()
    if not _SEC_NUM.fullmatch(num):
        return None
    return tuple(num.rstrip(".").split("."))


# ---------------------------------------------------------------- parsing

_local_parser = threading.local()


def _parser() -> etree.XMLParser:
    p = getattr(_local_parser, "p", None)
    if p is None:
        p = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
            load_dtd=False,
            collect_ids=False,  # no xml:id hash table: we map ids ourselves, and it costs ~20 %
        )
        _local_parser.p = p
    return p


class _Ctx:
    """Per-document lookup tables shared by the paragraph walkers."""

    __slots__ = ("bib_keys", "ref_keys", "footnotes", "formula_counter", "ref_entries")

    def __init__(self) -> None:
        self.bib_keys: dict[str, str] = {}  # xml:id "b12" -> "BIBREF12"
        self.ref_keys: dict[str, str] = {}  # xml:id "fig_0" -> "FIGREF0", "formula_3" -> "EQREF3"
        self.footnotes: list = []
        self.formula_counter = 0
        self.ref_entries: dict[str, dict] = {}


_REF_PREFIX = {"figure": "FIGREF", "table": "TABREF", "formula": "EQREF", "section": "SECREF"}


def _target_id(target: str | None) -> str | None:
    if not target:
        return None
    if target[0] == "#" and target.isprintable() and " " not in target:
        return target[1:]  # the usual single "#b12" (no whitespace: see _is_clean)
    t = target.strip().split()[0] if target.strip() else ""
    return t[1:] if t.startswith("#") else (t or None)


def _walk(el, b: _Builder, ctx: _Ctx) -> None:
    """Flatten an element's text into ``b``; refs become spans, inline formulas eq spans."""
    b.text(el.text)
    for child in el:
        ln = _LN[child.tag]
        if ln == "ref":
            rtype = child.get("type")
            txt = "".join(child.itertext()) if len(child) else (child.text or "")
            if rtype == "bibr":
                tid = _target_id(child.get("target"))
                b.span(txt, b.cites, ctx.bib_keys.get(tid) if tid else None)
            elif rtype in ("figure", "table", "formula", "section"):
                tid = _target_id(child.get("target"))
                rid = ctx.ref_keys.get(tid) if tid else None
                if rid is None and tid and rtype == "section":
                    m = _TRAILING_NUM.search(tid)
                    rid = f"SECREF{m.group(1)}" if m else None
                b.span(txt, b.refs, rid)
            else:  # foot, url, ...: part of the running text
                b.text(txt)
        elif ln == "formula":
            rid = ctx.ref_keys.get(child.get("{http://www.w3.org/XML/1998/namespace}id") or "")
            b.span(_formula_text(child), b.eqs, rid)
        elif ln == "s":
            if not b.space and b.n:
                b.text(" ")
            _walk(child, b, ctx)
        elif ln == "note":
            if child.get("place") == "foot":  # footnote text goes with the other footnotes
                ctx.footnotes.append(child)
        elif ln in ("figure", "label"):
            pass  # captions live in ref_entries
        elif ln == "lb":
            b.text(" ")
        elif ln:
            _walk(child, b, ctx)
        b.text(child.tail)


def _formula_text(el) -> str:
    parts = [el.text or ""]
    for c in el:
        if _LN[c.tag] != "label":
            parts.append("".join(c.itertext()))
        parts.append(c.tail or "")
    return normalize_space("".join(parts))


def _paragraph(el, ctx: _Ctx, section: str, sec_num: str | None) -> dict | None:
    b = _Builder()
    _walk(el, b, ctx)
    text = b.finish()
    if not text:
        return None
    return {
        "text": text,
        "cite_spans": b.cites,
        "ref_spans": b.refs,
        "eq_spans": b.eqs,
        "section": section,
        "sec_num": sec_num,
    }


def _equation_paragraph(el, ctx: _Ctx, section: str, sec_num: str | None) -> dict:
    xid = el.get("{http://www.w3.org/XML/1998/namespace}id") or ""
    rid = ctx.ref_keys.get(xid)
    if rid is None:  # formula without xml:id: give it a fresh key
        rid = _fresh_key(ctx.ref_entries, "EQREF")
        _add_formula_entry(ctx, el, rid)
    return {
        "text": "EQUATION",
        "cite_spans": [],
        "ref_spans": [],
        "eq_spans": [[0, 8, "EQUATION", rid]],
        "section": section,
        "sec_num": sec_num,
    }


def _fresh_key(entries: dict, prefix: str) -> str:
    i = len(entries)
    while f"{prefix}{i}" in entries:
        i += 1
    return f"{prefix}{i}"


def _add_formula_entry(ctx: _Ctx, el, rid: str) -> None:
    label = _child(el, "label")
    ctx.ref_entries[rid] = {
        "text": _formula_text(el),
        "latex": None,
        "type": "equation",
        "num": _text(label) or None,
    }


def _walk_container(
    container, ctx: _Ctx, out: list, nester: SectionNester, section: str, sec_num: str | None
):
    """Walk body/back/div children in order; returns the (section, sec_num) in force at the end."""
    for el in container:
        ln = _LN[el.tag]
        if ln == "div":
            dtype = el.get("type")
            if dtype == "references":
                continue
            head = _child(el, "head")
            if head is not None:
                num = head.get("n")
                sec_num = num.strip() if num else None
                section = nester.push(sec_num, _text(head))
            elif dtype and not section:
                section = _DIV_TYPE_SECTION.get(dtype, dtype)
            section, sec_num = _walk_container(el, ctx, out, nester, section, sec_num)
        elif ln == "p":
            para = _paragraph(el, ctx, section, sec_num)
            if para:
                out.append(para)
        elif ln == "formula":
            out.append(_equation_paragraph(el, ctx, section, sec_num))
        elif ln == "list":
            for item in _children(el, "item"):
                para = _paragraph(item, ctx, section, sec_num)
                if para:
                    out.append(para)
        elif ln == "note" and el.get("place") == "foot":
            ctx.footnotes.append(el)
        # head (already used), figure (ref_entries), others: not body text
    return section, sec_num


_DIV_TYPE_SECTION = {
    "acknowledgement": "Acknowledgements",
    "funding": "Funding",
    "availability": "Availability",
    "annex": "Appendix",
    "contribution": "Author contributions",
    "conflict": "Conflict of interest",
}


def _collect_ref_entries(figures: list, formulas: list, ctx: _Ctx) -> None:
    """Figures/tables -> FIGREFn/TABREFn (numbers from Grobid's xml:id), formulas -> EQREFn."""
    xml_id = "{http://www.w3.org/XML/1998/namespace}id"
    pending = []
    for fig in figures:
        is_table = fig.get("type") == "table"
        prefix = "TABREF" if is_table else "FIGREF"
        xid = fig.get(xml_id) or ""
        m = _TRAILING_NUM.search(xid)
        first: dict[str, object] = {}  # local name -> first such child, in one pass
        for c in fig:
            first.setdefault(_LN[c.tag], c)
        desc = _text(first.get("figDesc"))
        if not desc:
            desc = _text(first.get("note")) or _text(first.get("head"))
        label = _text(first.get("label"))
        entry = {"text": desc, "latex": None, "type": "table" if is_table else "figure", "num": label or None}
        key = f"{prefix}{m.group(1)}" if m else None
        if key is None or key in ctx.ref_entries:
            pending.append((prefix, xid, entry))
            continue
        ctx.ref_entries[key] = entry
        if xid:
            ctx.ref_keys[xid] = key
    for prefix, xid, entry in pending:
        key = _fresh_key(ctx.ref_entries, prefix)
        ctx.ref_entries[key] = entry
        if xid and xid not in ctx.ref_keys:
            ctx.ref_keys[xid] = key
    for f in formulas:
        xid = f.get(xml_id) or ""
        m = _TRAILING_NUM.search(xid)
        if not m:
            continue
        key = f"EQREF{m.group(1)}"
        if key in ctx.ref_entries:
            continue
        _add_formula_entry(ctx, f, key)
        ctx.ref_keys[xid] = key


# ---------------------------------------------------------------- persons and bibliography


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
        person["last"] = _text(org)
        return bool(person["last"])
    if not (person["first"] or person["middle"] or person["last"]):
        person["last"] = _text(pers)
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
    for org in _children(aff, "orgName"):
        t = _text(org)
        kind = org.get("type") or "institution"
        if t:
            out[kind] = f"{out[kind]}, {t}" if out.get(kind) else t
    loc: dict = {}
    addr = _child(aff, "address")
    if addr is not None:
        for c in addr:
            t = _text(c)
            if t and _LN[c.tag]:
                loc[_LN[c.tag]] = t
    out["location"] = loc
    return out


def _header_author(author) -> dict | None:
    person = _person(author)
    if person is None:
        return None
    pers = aff = None
    emails: list[str] = []
    for c in author:  # one pass instead of three finds
        ln = _LN[c.tag]
        if ln == "persName":
            pers = pers if pers is not None else c
        elif ln == "affiliation":
            aff = aff if aff is not None else c
        elif ln == "email":
            emails.append(_text(c))
    if pers is None:
        return None  # Grobid lists orphan affiliations as authors without a name
    person["affiliation"] = _affiliation(aff) if aff is not None else {}
    person["email"] = next((e for e in emails if e), "")
    return person


_ID_KEYS = {"doi": "DOI", "arxiv": "arXiv", "pmid": "PubMed", "pmcid": "PMC", "pii": "PII"}


def _add_id(ids: dict[str, list[str]], kind: str, value: str) -> None:
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
            cl = _LN[tag]
            if cl == "title":
                txt = _text(el)
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
                kind, val = el.get("type"), _text(el)
                if kind and val:
                    _add_id(ids, kind, val)
            elif cl == "ptr":
                target = el.get("target")
                if target:
                    urls.append(target)
            elif cl == "meeting" and not meeting:
                meeting = _text(el)
        elif parent is imprint:
            sl = _LN[tag]
            if sl == "biblScope":
                unit = el.get("unit")
                if unit == "volume":
                    volume = volume or _text(el)
                elif unit == "issue":
                    issue = issue or _text(el)
                elif unit == "page" and not pages:
                    frm, to = el.get("from"), el.get("to")
                    pages = f"{frm}--{to}" if frm and to else (frm or to or _text(el))
            elif sl == "date" and year is None:
                year = _year(el.get("when")) or _year(_text(el))
        elif parent is bs:
            pl = _LN[tag]
            if pl == "analytic" or pl == "monogr":
                part, analytic = el, pl == "analytic"
            elif pl == "note":
                nt = el.get("type")
                if nt == "raw_reference":
                    raw = _text(el)
                elif nt == "report_type" and not report_type:
                    report_type = _text(el)
            elif pl == "idno":
                kind, val = el.get("type"), _text(el)
                if kind and val:
                    _add_id(ids, kind, val)
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
            _add_id(ids, "arXiv", aid)
    if "DOI" not in ids and "10." in raw:
        for doi in find_dois(raw):
            _add_id(ids, "DOI", doi)
    if year is None and raw:
        year = _year(raw)
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


def _bib_entries(structs: Iterable, ctx: _Ctx) -> tuple[dict[str, dict], list[str]]:
    """Bib entries keyed ``BIBREFn`` (``n`` from Grobid's ``bn`` id); returns entries and doc order."""
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
            ctx.bib_keys[xid] = key
    for i, xid, bs in pending:  # entries without a usable id, numbered after the others
        key = _fresh_key(entries, "BIBREF")
        entry = _bib_entry(bs, key)
        order[i] = key
        if entry is not None:
            entries[key] = entry
            if xid and xid not in ctx.bib_keys:
                ctx.bib_keys[xid] = key
    return entries, order


def _title_years(entries: dict[str, dict]) -> None:
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


# ---------------------------------------------------------------- header


def _header(root, doc: dict) -> None:
    header = _child(root, "teiHeader")
    if header is None:
        return
    title_el = None
    ts = _child(header, "fileDesc", "titleStmt")
    if ts is not None:
        titles = _children(ts, "title")
        title_el = next((t for t in titles if t.get("type") == "main"), titles[0] if titles else None)
    doc["title"] = _text(title_el)
    src = _child(header, "fileDesc", "sourceDesc", "biblStruct")
    date = ""
    if src is not None:
        analytic = _child(src, "analytic")
        if analytic is not None:
            doc["authors"] = [a for a in map(_header_author, _children(analytic, "author")) if a]
            if not doc["title"]:
                doc["title"] = _text(_child(analytic, "title"))
        monogr = _child(src, "monogr")
        if monogr is not None:
            if not doc["authors"]:
                doc["authors"] = [a for a in map(_header_author, _children(monogr, "author")) if a]
            venue = {t.get("level") or "m": _text(t) for t in _children(monogr, "title")}
            doc["venue"] = venue.get("j") or venue.get("m") or ""
            dates = [d for imp in _children(monogr, "imprint") for d in _children(imp, "date")]
            for d in dates:
                date = d.get("when") or _text(d)
                if date:
                    break
        ids: dict[str, list[str]] = {}
        for idno in src.iter("{*}idno"):
            kind, val = idno.get("type"), _text(idno)
            if kind and val:
                _add_id(ids, kind, val)
        doc["identifiers"] = ids
    if not date:
        d = _child(header, "fileDesc", "publicationStmt", "date")
        if d is not None:
            date = d.get("when") or _text(d)
    doc["date"] = date
    doc["year"] = _year(date)
    app = _child(header, "encodingDesc", "appInfo", "application")
    if app is not None and app.get("version"):
        doc["parser_version"] = app.get("version")


def _abstract(root, ctx: _Ctx) -> list[dict]:
    abstract = _child(root, "teiHeader", "profileDesc", "abstract")
    if abstract is None:
        return []
    out: list[dict] = []
    _walk_container(abstract, ctx, out, SectionNester(), "Abstract", None)
    if not out:
        para = _paragraph(abstract, ctx, "Abstract", None)
        if para:
            out.append(para)
    for p in out:  # headings inside the abstract ("Background", ...) stay under Abstract
        if p["section"] != "Abstract":
            p["section"] = f"Abstract::{p['section']}" if p["section"] else "Abstract"
    return out


# ---------------------------------------------------------------- entry point


def _to_span_dicts(paragraphs: list[dict]) -> None:
    for p in paragraphs:  # most paragraphs have no spans of some kind: skip empty lists
        if p["cite_spans"]:
            p["cite_spans"] = [
                {"start": s[0], "end": s[1], "text": s[2], "ref_id": s[3]} for s in p["cite_spans"]
            ]
        if p["ref_spans"]:
            p["ref_spans"] = [
                {"start": s[0], "end": s[1], "text": s[2], "ref_id": s[3]} for s in p["ref_spans"]
            ]
        if p["eq_spans"]:
            p["eq_spans"] = [
                {"start": s[0], "end": s[1], "text": s[2], "ref_id": s[3], "latex": ""} for s in p["eq_spans"]
            ]


def _has_c1(data: bytes) -> bool:
    """Whether UTF-8 ``data`` holds a C1 control (C2 80 .. C2 9F), like ``_C1_UTF8.search``:
    a find loop over the C2 lead bytes (memchr) is ten times faster than the regex scan."""
    i = data.find(b"\xc2")
    while i >= 0:
        if b"\x80" <= data[i + 1 : i + 2] <= b"\x9f":
            return True
        i = data.find(b"\xc2", i + 1)
    return False


def parse_tei(data: bytes, paper_id: str, parser_version: str = "") -> StructuredDoc:
    """Parse one Grobid TEI document (``processFulltextDocument``, header-only or a bare
    ``biblStruct`` from ``processCitation``) into a :class:`StructuredDoc` (source ``grobid``).

    Raises :class:`TeiError` naming the problem for empty, malformed or non-TEI input.
    ``parser_version`` is used only when the TEI does not name its Grobid version.
    """
    return StructuredDoc.model_validate(parse_tei_dict(data, paper_id, parser_version))


def parse_tei_dict(data: bytes, paper_id: str, parser_version: str = "") -> dict:
    """Like :func:`parse_tei` but returns the plain dict (equal to ``StructuredDoc.model_dump()``).

    The bulk path (Parquet rows, JSON lines) uses this: pydantic validation of a full
    paper costs about as much as the whole parse, and the tests check that this dict
    always validates and round-trips.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data or data.isspace():
        raise TeiError(f"{paper_id}: empty input")
    if _has_c1(data):  # C1 controls are legal XML but poison text consumers
        with contextlib.suppress(UnicodeDecodeError):
            data = _CONTROLS.sub(" ", data.decode("utf-8")).encode("utf-8")
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise TeiError(f"{paper_id}: malformed XML: {exc}") from None
    if root is None:
        raise TeiError(f"{paper_id}: no root element")
    kind = _LN[root.tag]
    if kind not in ("TEI", "teiCorpus", "biblStruct"):
        raise TeiError(f"{paper_id}: not a Grobid TEI document (root element <{kind}>)")
    if kind == "teiCorpus":
        inner = _child(root, "TEI")
        if inner is None:
            raise TeiError(f"{paper_id}: teiCorpus without a TEI document")
        root = inner

    doc: dict = {
        "paper_id": paper_id,
        "source": "grobid",
        "title": "",
        "authors": [],
        "year": None,
        "date": "",
        "venue": "",
        "identifiers": {},
        "abstract": [],
        "body_text": [],
        "back_matter": [],
        "bib_entries": {},
        "ref_entries": {},
        "citation_style": "OTHER",
        "parser_version": parser_version,
    }
    ctx = _Ctx()
    if kind == "biblStruct":
        entries, _ = _bib_entries([root], ctx)
        doc["bib_entries"] = entries
        return doc

    _header(root, doc)
    text_el = _child(root, "text")
    structs: list = []
    figures: list = []
    formulas: list = []
    if text_el is not None:  # one pass over the tree for all three
        for el in text_el.iter("{*}listBibl", "{*}figure", "{*}formula"):
            ln = _LN[el.tag]
            if ln == "figure":
                figures.append(el)
            elif ln == "formula":
                formulas.append(el)
            else:
                structs.extend(_children(el, "biblStruct"))
    entries, order = _bib_entries(structs, ctx)
    _collect_ref_entries(figures, formulas, ctx)

    doc["abstract"] = _abstract(root, ctx)
    body: list[dict] = []
    back: list[dict] = []
    if text_el is not None:
        body_el = _child(text_el, "body")
        if body_el is not None:
            _walk_container(body_el, ctx, body, SectionNester(), "", None)
        back_el = _child(text_el, "back")
        if back_el is not None:
            for div in back_el:
                if _LN[div.tag] != "div" or div.get("type") == "references":
                    continue
                dtype = div.get("type") or ""
                _walk_container(div, ctx, back, SectionNester(), _DIV_TYPE_SECTION.get(dtype, dtype), None)
        for note in ctx.footnotes:
            para = _paragraph(note, ctx, "", None)
            if para:
                body.append(para)

    style = link_citations(doc["abstract"] + body, back, entries, order)
    _title_years(entries)
    for group in (doc["abstract"], body, back):
        _to_span_dicts(group)
    doc["body_text"] = body
    doc["back_matter"] = back
    doc["bib_entries"] = entries
    doc["ref_entries"] = ctx.ref_entries
    doc["citation_style"] = style
    return doc
