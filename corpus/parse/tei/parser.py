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
  printed number, one map per reference list (:mod:`corpus.parse.tei.citations`);
* a title Grobid began with an author-year label's year (``2022a. Title``) loses it,
  and the entry gets that year when it had none;
* header: title, authors with affiliation dicts (``laboratory``, ``institution``,
  ``department`` when present, ``location``) and email, date/year, venue, idnos
  (``DOI``, ``arXiv`` normalised, ``MD5``...), Grobid version as ``parser_version``.

Input is parsed with entity resolution, network access and huge trees off; C1
control characters are replaced by spaces first. Use :func:`parse_tei_dict` for
the plain dict (bulk path), :func:`parse_tei` for the validated model.

Post-processing of SPEC.md §3 (s2orc-paper.txt §2.1) is in :mod:`corpus.parse.tei.citations`;
the text of elements (whitespace, spans) in :mod:`corpus.parse.tei.text`; authors and
bibliography entries in :mod:`corpus.parse.tei.bibliography`.
"""

from __future__ import annotations

import contextlib
import re
import threading

from lxml import etree

from corpus.parse.document import StructuredDoc
from corpus.parse.tei.bibliography import add_id, bib_entries, header_author, title_years
from corpus.parse.tei.citations import classify_citation_style, link_citations, postprocess_citations
from corpus.parse.tei.text import (
    CONTROLS,
    LN,
    ParagraphBuilder,
    find_arxiv_ids,
    find_child,
    find_children,
    find_dois,
    fresh_key,
    normalize_space,
    text_of,
    year_of,
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


# C1 controls in UTF-8 input (XML 1.0 admits them): replaced by spaces before parsing.
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")
_TRAILING_NUM = re.compile(r"(\d+)$")
_SEC_NUM = re.compile(r"[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*\.?")


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
        return target[1:]  # the usual single "#b12" (no whitespace: see is_clean)
    t = target.strip().split()[0] if target.strip() else ""
    return t[1:] if t.startswith("#") else (t or None)


def _walk(el, b: ParagraphBuilder, ctx: _Ctx) -> None:
    """Flatten an element's text into ``b``; refs become spans, inline formulas eq spans."""
    b.text(el.text)
    for child in el:
        ln = LN[child.tag]
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
        if LN[c.tag] != "label":
            parts.append("".join(c.itertext()))
        parts.append(c.tail or "")
    return normalize_space("".join(parts))


def _paragraph(el, ctx: _Ctx, section: str, sec_num: str | None) -> dict | None:
    b = ParagraphBuilder()
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
        rid = fresh_key(ctx.ref_entries, "EQREF")
        _add_formula_entry(ctx, el, rid)
    return {
        "text": "EQUATION",
        "cite_spans": [],
        "ref_spans": [],
        "eq_spans": [[0, 8, "EQUATION", rid]],
        "section": section,
        "sec_num": sec_num,
    }


def _add_formula_entry(ctx: _Ctx, el, rid: str) -> None:
    label = find_child(el, "label")
    ctx.ref_entries[rid] = {
        "text": _formula_text(el),
        "latex": None,
        "type": "equation",
        "num": text_of(label) or None,
    }


def _walk_container(
    container, ctx: _Ctx, out: list, nester: SectionNester, section: str, sec_num: str | None
):
    """Walk body/back/div children in order; returns the (section, sec_num) in force at the end."""
    for el in container:
        ln = LN[el.tag]
        if ln == "div":
            dtype = el.get("type")
            if dtype == "references":
                continue
            head = find_child(el, "head")
            if head is not None:
                num = head.get("n")
                sec_num = num.strip() if num else None
                section = nester.push(sec_num, text_of(head))
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
            for item in find_children(el, "item"):
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
            first.setdefault(LN[c.tag], c)
        desc = text_of(first.get("figDesc"))
        if not desc:
            desc = text_of(first.get("note")) or text_of(first.get("head"))
        label = text_of(first.get("label"))
        entry = {"text": desc, "latex": None, "type": "table" if is_table else "figure", "num": label or None}
        key = f"{prefix}{m.group(1)}" if m else None
        if key is None or key in ctx.ref_entries:
            pending.append((prefix, xid, entry))
            continue
        ctx.ref_entries[key] = entry
        if xid:
            ctx.ref_keys[xid] = key
    for prefix, xid, entry in pending:
        key = fresh_key(ctx.ref_entries, prefix)
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


# ---------------------------------------------------------------- header


def _header(root, doc: dict) -> None:
    header = find_child(root, "teiHeader")
    if header is None:
        return
    title_el = None
    ts = find_child(header, "fileDesc", "titleStmt")
    if ts is not None:
        titles = find_children(ts, "title")
        title_el = next((t for t in titles if t.get("type") == "main"), titles[0] if titles else None)
    doc["title"] = text_of(title_el)
    src = find_child(header, "fileDesc", "sourceDesc", "biblStruct")
    date = ""
    if src is not None:
        analytic = find_child(src, "analytic")
        if analytic is not None:
            doc["authors"] = [a for a in map(header_author, find_children(analytic, "author")) if a]
            if not doc["title"]:
                doc["title"] = text_of(find_child(analytic, "title"))
        monogr = find_child(src, "monogr")
        if monogr is not None:
            if not doc["authors"]:
                doc["authors"] = [a for a in map(header_author, find_children(monogr, "author")) if a]
            venue = {t.get("level") or "m": text_of(t) for t in find_children(monogr, "title")}
            doc["venue"] = venue.get("j") or venue.get("m") or ""
            dates = [d for imp in find_children(monogr, "imprint") for d in find_children(imp, "date")]
            for d in dates:
                date = d.get("when") or text_of(d)
                if date:
                    break
        ids: dict[str, list[str]] = {}
        for idno in src.iter("{*}idno"):
            kind, val = idno.get("type"), text_of(idno)
            if kind and val:
                add_id(ids, kind, val)
        doc["identifiers"] = ids
    if not date:
        d = find_child(header, "fileDesc", "publicationStmt", "date")
        if d is not None:
            date = d.get("when") or text_of(d)
    doc["date"] = date
    doc["year"] = year_of(date)
    app = find_child(header, "encodingDesc", "appInfo", "application")
    if app is not None and app.get("version"):
        doc["parser_version"] = app.get("version")


def _abstract(root, ctx: _Ctx) -> list[dict]:
    abstract = find_child(root, "teiHeader", "profileDesc", "abstract")
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
            data = CONTROLS.sub(" ", data.decode("utf-8")).encode("utf-8")
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise TeiError(f"{paper_id}: malformed XML: {exc}") from None
    if root is None:
        raise TeiError(f"{paper_id}: no root element")
    kind = LN[root.tag]
    if kind not in ("TEI", "teiCorpus", "biblStruct"):
        raise TeiError(f"{paper_id}: not a Grobid TEI document (root element <{kind}>)")
    if kind == "teiCorpus":
        inner = find_child(root, "TEI")
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
        entries, _ = bib_entries([root], ctx.bib_keys)
        doc["bib_entries"] = entries
        return doc

    _header(root, doc)
    text_el = find_child(root, "text")
    structs: list = []
    figures: list = []
    formulas: list = []
    if text_el is not None:  # one pass over the tree for all three
        for el in text_el.iter("{*}listBibl", "{*}figure", "{*}formula"):
            ln = LN[el.tag]
            if ln == "figure":
                figures.append(el)
            elif ln == "formula":
                formulas.append(el)
            else:
                structs.extend(find_children(el, "biblStruct"))
    entries, order = bib_entries(structs, ctx.bib_keys)
    _collect_ref_entries(figures, formulas, ctx)

    doc["abstract"] = _abstract(root, ctx)
    body: list[dict] = []
    back: list[dict] = []
    if text_el is not None:
        body_el = find_child(text_el, "body")
        if body_el is not None:
            _walk_container(body_el, ctx, body, SectionNester(), "", None)
        back_el = find_child(text_el, "back")
        if back_el is not None:
            for div in back_el:
                if LN[div.tag] != "div" or div.get("type") == "references":
                    continue
                dtype = div.get("type") or ""
                _walk_container(div, ctx, back, SectionNester(), _DIV_TYPE_SECTION.get(dtype, dtype), None)
        for note in ctx.footnotes:
            para = _paragraph(note, ctx, "", None)
            if para:
                body.append(para)

    style = link_citations(doc["abstract"] + body, back, entries, order)
    title_years(entries)
    for group in (doc["abstract"], body, back):
        _to_span_dicts(group)
    doc["body_text"] = body
    doc["back_matter"] = back
    doc["bib_entries"] = entries
    doc["ref_entries"] = ctx.ref_entries
    doc["citation_style"] = style
    return doc
