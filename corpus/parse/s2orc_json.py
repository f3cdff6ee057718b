"""Read released S2ORC-family JSON into :class:`corpus.parse.document.StructuredDoc`.

Formats handled (all seen in ``shared/data/s2orc_family``):

* S2ORC 20190928 and the 2020-05 example paper: ``{paper_id, metadata, s2_pdf_hash,
  grobid_parse, latex_parse}``; the LaTeX parse wins when it has body text (S2ORC
  prefers it), else the Grobid parse;
* S2ORC 20200705: flat ``{paper_id, _pdf_hash, abstract, body_text, bib_entries,
  ref_entries}`` without metadata;
* S2ORC 20210101: flat parse plus ``metadata`` and ``back_matter``;
* s2orc-doc2json output: ``{paper_id, header, title, authors, year, abstract,
  pdf_parse}``;
* unarXive 2022 (:func:`iter_unarxive`): JSONL whose text carries ``{{cite:..}}``,
  ``{{formula:..}}``, ``{{figure:..}}``, ``{{table:..}}`` markers.

Spans are checked: ``text[start:end] == span.text`` holds for every span of the
result. A released span whose offsets are off is re-anchored on the nearest
occurrence of its text; if its text does not occur at all, the record fails with
:class:`S2orcFormatError` naming it (no silent loss).
"""

from __future__ import annotations

import email.utils
import gzip
import io
import json
import re
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

from corpus.ingest.arxiv_ids import arxiv_ids_in as find_arxiv_ids
from corpus.ingest.arxiv_ids import try_normalize
from corpus.parse.document import StructuredDoc
from corpus.parse.tei import SectionNester, classify_citation_style, find_dois, normalize_space

__all__ = ["S2orcFormatError", "read_s2orc_record", "iter_unarxive", "unarxive_record"]


class S2orcFormatError(ValueError):
    """A record is not in any known S2ORC-family layout, or is internally inconsistent."""


_REF_TYPES = {"figure": "figure", "table": "table", "equation": "equation", "formula": "equation"}
_ID_KEYS = {
    "doi": "DOI",
    "arxiv": "arXiv",
    "arxiv_id": "arXiv",
    "pmid": "PubMed",
    "pubmed": "PubMed",
    "pubmed_id": "PubMed",
    "pmc": "PMC",
    "pmcid": "PMC",
    "pmc_id": "PMC",
    "acl": "ACL",
    "acl_id": "ACL",
    "mag": "MAG",
    "mag_id": "MAG",
    "open_alex_id": "OpenAlex",
    "sem_open_alex_id": "SemOpenAlex",
    "issn": "ISSN",
    "links": "S2ORC",
    "link": "S2ORC",
}


# ---------------------------------------------------------------- small converters


def _ids_add(ids: dict[str, list[str]], kind: str, value: object) -> None:
    key = _ID_KEYS.get(kind.lower(), kind)
    values = value if isinstance(value, list) else [value]
    for v in values:
        if v is None or v == "":
            continue
        v = str(v).strip()
        if key == "arXiv":
            v = try_normalize(v) or (find_arxiv_ids(v) or [""])[0]
        if v and v not in ids.setdefault(key, []):
            ids[key].append(v)
    if key in ids and not ids[key]:
        del ids[key]


def _year(value: object) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        m = re.search(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)", value)
        return int(m.group(1)) if m else None
    return None


def _author(a: dict) -> dict:
    middle = a.get("middle") or []
    if isinstance(middle, str):
        middle = middle.split()
    aff = a.get("affiliation") or {}
    return {
        "first": a.get("first") or "",
        "middle": [m for m in middle if m],
        "last": a.get("last") or "",
        "suffix": a.get("suffix") or "",
        "affiliation": aff if isinstance(aff, dict) else {"raw": str(aff)},
        "email": a.get("email") or "",
    }


def _fix_spans(text: str, spans: list | None, what: str, eq: bool = False) -> list[dict]:
    out: list[dict] = []
    for s in spans or []:
        start, end, stext = s.get("start"), s.get("end"), s.get("text") or ""
        if not isinstance(start, int) or not isinstance(end, int):
            raise S2orcFormatError(f"{what}: span without integer offsets: {s!r}")
        if text[start:end] != stext:
            # Re-anchor on the nearest occurrence (released data has shifted offsets).
            best = -1
            for m in re.finditer(re.escape(stext), text) if stext else ():
                if best < 0 or abs(m.start() - start) < abs(best - start):
                    best = m.start()
            if best < 0:
                raise S2orcFormatError(f"{what}: span text {stext!r} not in paragraph text")
            start, end = best, best + len(stext)
        span = {"start": start, "end": end, "text": stext, "ref_id": s.get("ref_id")}
        if eq:
            span["latex"] = s.get("latex") or ""
        out.append(span)
    out.sort(key=lambda x: (x["start"], x["end"]))
    return out


def _paragraphs(items: object, what: str, ref_entries: dict, default_section: str = "") -> list[dict]:
    if items is None:
        return []
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        raise S2orcFormatError(f"{what}: expected a list of paragraphs, got {type(items).__name__}")
    out = []
    for i, p in enumerate(items):
        if not isinstance(p, dict) or not isinstance(p.get("text"), str):
            raise S2orcFormatError(f"{what}[{i}]: paragraph without text")
        text = p["text"]
        where = f"{what}[{i}]"
        eqs = []
        for s in p.get("eq_spans") or []:
            s = dict(s)
            if s.get("raw_str") is not None:  # s2orc-doc2json: raw formula -> ref_entries
                key = f"EQREF{len(ref_entries)}"
                while key in ref_entries:
                    key += "_"
                ref_entries[key] = {
                    "text": s["raw_str"],
                    "latex": None,
                    "type": "equation",
                    "num": s.get("eq_num"),
                }
                s["ref_id"] = key
            eqs.append(s)
        sec_num = p.get("sec_num", p.get("sec_number"))
        out.append(
            {
                "text": text,
                "cite_spans": _fix_spans(text, p.get("cite_spans"), where),
                "ref_spans": _fix_spans(text, p.get("ref_spans"), where),
                "eq_spans": _fix_spans(text, eqs, where, eq=True),
                "section": p.get("section") or default_section,
                "sec_num": str(sec_num) if sec_num not in (None, "") else None,
            }
        )
    return out


def _bib(key: str, b: dict) -> dict:
    ids: dict[str, list[str]] = {}
    for k, v in (b.get("other_ids") or {}).items():
        _ids_add(ids, k, v)
    for k in ("links", "link", "issn"):
        if b.get(k):
            _ids_add(ids, k, b[k])
    urls = b.get("urls") or []
    return {
        "ref_id": key,
        "title": b.get("title") or "",
        "authors": [_author(a) for a in b.get("authors") or [] if isinstance(a, dict)],
        "year": _year(b.get("year")),
        "venue": b.get("venue") or "",
        "volume": str(b.get("volume") or ""),
        "issue": str(b.get("issue") or ""),
        "pages": str(b.get("pages") or ""),
        "other_ids": ids,
        "num": b.get("num") if isinstance(b.get("num"), int) else None,
        "urls": [u for u in urls if isinstance(u, str)],
        "raw_text": b.get("raw_text") or "",
    }


def _ref_entry(r: dict) -> dict:
    rtype = r.get("type") or r.get("type_str") or "other"
    num = r.get("num")
    return {
        "text": r.get("text") or r.get("caption") or "",
        "latex": r.get("latex"),
        "type": _REF_TYPES.get(rtype, "other"),
        "num": str(num) if num is not None else None,
    }


# ---------------------------------------------------------------- released S2ORC / doc2json


def read_s2orc_record(d: dict, paper_id: str | None = None) -> StructuredDoc:
    """One released S2ORC-family JSON record -> :class:`StructuredDoc` (source ``s2orc``).

    ``paper_id`` overrides the record's own id. Raises :class:`S2orcFormatError` for
    records in no known layout (no parse with ``body_text`` or ``abstract``).
    """
    if not isinstance(d, dict):
        raise S2orcFormatError(f"expected a JSON object, got {type(d).__name__}")
    pid = paper_id or str(d.get("paper_id") or "")
    if not pid:
        raise S2orcFormatError("record has no paper_id and none was given")
    version = ""
    header = d.get("header")
    if isinstance(header, dict) and header.get("generated_with"):
        version = str(header["generated_with"])
    if "pdf_parse" in d and isinstance(d["pdf_parse"], dict):  # s2orc-doc2json output
        parse, which = d["pdf_parse"], "pdf_parse"
    elif "grobid_parse" in d or "latex_parse" in d:  # 20190928 / 2020-05 example
        latex, grobid = d.get("latex_parse"), d.get("grobid_parse")
        if isinstance(latex, dict) and latex.get("body_text"):
            parse, which = latex, "latex_parse"
        elif isinstance(grobid, dict):
            parse, which = grobid, "grobid_parse"
        else:
            raise S2orcFormatError(f"{pid}: neither grobid_parse nor latex_parse holds a parse")
    elif "body_text" in d or "abstract" in d:  # 20200705 / 20210101 flat
        parse, which = d, "flat"
    else:
        raise S2orcFormatError(f"{pid}: not an S2ORC record (keys: {sorted(d)[:8]})")

    meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
    ref_entries = {
        str(k): _ref_entry(v) for k, v in (parse.get("ref_entries") or {}).items() if isinstance(v, dict)
    }
    abstract = parse.get("abstract")
    abstract_paras = (
        _paragraphs(abstract, f"{pid}.abstract", ref_entries, "Abstract")
        if isinstance(abstract, list)
        else []
    )
    if not abstract_paras:
        text = abstract if isinstance(abstract, str) else meta.get("abstract") or d.get("abstract")
        if isinstance(text, str) and text.strip():
            abstract_paras = [_plain_paragraph(normalize_space(text), "Abstract")]
    body = _paragraphs(parse.get("body_text"), f"{pid}.body_text", ref_entries)
    back = _paragraphs(parse.get("back_matter"), f"{pid}.back_matter", ref_entries)
    bib = {
        str(k): _bib(str(k), v) for k, v in (parse.get("bib_entries") or {}).items() if isinstance(v, dict)
    }

    ids: dict[str, list[str]] = {}
    for k in ("doi", "arxiv_id", "acl_id", "pmc_id", "pubmed_id", "mag_id"):
        if meta.get(k):
            _ids_add(ids, k, meta[k])
    authors = meta.get("authors") or d.get("authors") or []
    year = _year(meta.get("year", d.get("year")))
    doc = {
        "paper_id": pid,
        "source": "s2orc",
        "title": normalize_space(meta.get("title") or d.get("title") or ""),
        "authors": [_author(a) for a in authors if isinstance(a, dict)],
        "year": year,
        "date": str(year) if year else "",
        "venue": meta.get("venue") or meta.get("journal") or "",
        "identifiers": ids,
        "abstract": abstract_paras,
        "body_text": body,
        "back_matter": back,
        "bib_entries": bib,
        "ref_entries": ref_entries,
        "citation_style": classify_citation_style(abstract_paras + body),
        "parser_version": f"{version} ({which})" if version else which,
    }
    return StructuredDoc.model_validate(doc)


def _plain_paragraph(text: str, section: str, sec_num: str | None = None) -> dict:
    return {
        "text": text,
        "cite_spans": [],
        "ref_spans": [],
        "eq_spans": [],
        "section": section,
        "sec_num": sec_num,
    }


# ---------------------------------------------------------------- unarXive

_MARKER = re.compile(r"\{\{(cite|formula|figure|table):([^{}]*)\}\}")


def _arxiv_date(meta: dict) -> str:
    versions = meta.get("versions") or []
    created = versions[0].get("created") if versions and isinstance(versions[0], dict) else None
    if created:
        try:
            return email.utils.parsedate_to_datetime(created).date().isoformat()
        except (TypeError, ValueError):
            pass
    return str(meta.get("update_date") or "")


def _unarxive_text(
    text: str, bib_index: dict[str, int], fig_index: dict[str, int], ref_entries: dict
) -> dict:
    """Replace markers: cites -> ``[n]`` (n = 1-based bib entry number, linked to
    ``BIBREF{n-1}``), formulas -> their LaTeX as eq spans, figure/table refs -> their
    number as ref spans. Offsets are taken in the rewritten text."""
    parts: list[str] = []
    n = 0
    pos = 0
    cites: list[dict] = []
    refs: list[dict] = []
    eqs: list[dict] = []
    for m in _MARKER.finditer(text):
        chunk = text[pos : m.start()]
        parts.append(chunk)
        n += len(chunk)
        kind, key = m.group(1), m.group(2)
        if kind == "cite":
            i = bib_index.get(key)
            rep = f"[{i + 1}]" if i is not None else "[?]"
            cites.append(
                {
                    "start": n,
                    "end": n + len(rep),
                    "text": rep,
                    "ref_id": f"BIBREF{i}" if i is not None else None,
                }
            )
        elif kind == "formula":
            entry = ref_entries.get(key) or {}
            rep = " ".join(str(entry.get("latex") or "").split()) or "FORMULA"
            eqs.append({"start": n, "end": n + len(rep), "text": rep, "ref_id": None, "latex": rep})
        else:
            i = fig_index.get(key)
            prefix = "FIGREF" if kind == "figure" else "TABREF"
            rep = str(i + 1) if i is not None else "?"
            refs.append(
                {
                    "start": n,
                    "end": n + len(rep),
                    "text": rep,
                    "ref_id": f"{prefix}{i}" if i is not None else None,
                }
            )
        parts.append(rep)
        n += len(rep)
        pos = m.end()
    parts.append(text[pos:])
    return {"text": "".join(parts), "cite_spans": cites, "ref_spans": refs, "eq_spans": eqs}


def unarxive_record(d: dict) -> StructuredDoc:
    """One unarXive 2022 JSON record -> :class:`StructuredDoc` (source ``latex``: unarXive
    parses arXiv LaTeX sources). Cite markers become bracket citations ``[n]`` linked to
    ``BIBREF{n-1}`` (bib entries in the record's order), so the paper is BRACKET style."""
    if not isinstance(d, dict) or not isinstance(d.get("body_text"), list):
        raise S2orcFormatError("not an unarXive record (no body_text list)")
    meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
    raw_id = str(d.get("paper_id") or meta.get("id") or "")
    if not raw_id:
        raise S2orcFormatError("unarXive record without paper_id")
    pid = try_normalize(raw_id) or raw_id
    raw_refs = d.get("ref_entries") or {}
    bib_raw = d.get("bib_entries") or {}
    bib_index = {k: i for i, k in enumerate(bib_raw)}
    fig_index: dict[str, int] = {}
    ref_entries: dict[str, dict] = {}
    counts = {"figure": 0, "table": 0}
    for key, r in raw_refs.items():
        rtype = r.get("type") if isinstance(r, dict) else None
        if rtype in counts:
            i = counts[rtype]
            counts[rtype] += 1
            fig_index[key] = i
            prefix = "FIGREF" if rtype == "figure" else "TABREF"
            ref_entries[f"{prefix}{i}"] = {
                "text": normalize_space(r.get("caption") or ""),
                "latex": None,
                "type": rtype,
                "num": str(i + 1),
            }
    nester = SectionNester()
    body = []
    last_key = None
    section = ""
    for i, p in enumerate(d["body_text"]):
        if not isinstance(p, dict) or not isinstance(p.get("text"), str):
            raise S2orcFormatError(f"{pid}.body_text[{i}]: paragraph without text")
        sec_num = p.get("sec_number") or None
        key = (p.get("section"), sec_num)
        if key != last_key:
            section = nester.push(sec_num, normalize_space(p.get("section") or ""))
            last_key = key
        para = _unarxive_text(normalize_space(p["text"]), bib_index, fig_index, raw_refs)
        if not para["text"]:
            continue
        para["section"] = section
        para["sec_num"] = str(sec_num) if sec_num else None
        body.append(para)
    bib = {}
    for key, b in bib_raw.items():
        i = bib_index[key]
        ids: dict[str, list[str]] = {}
        b = b if isinstance(b, dict) else {}
        for k, v in (b.get("ids") or {}).items():
            _ids_add(ids, k, v)
        for a in b.get("contained_arXiv_ids") or []:
            _ids_add(ids, "arXiv", a.get("id") if isinstance(a, dict) else a)
        urls = [x.get("url") for x in b.get("contained_links") or [] if isinstance(x, dict) and x.get("url")]
        raw = normalize_space(b.get("bib_entry_raw") or "")
        for aid in find_arxiv_ids(raw):  # ids written in the reference, for linking
            _ids_add(ids, "arXiv", aid)
        if "DOI" not in ids:
            for doi in find_dois(raw):
                _ids_add(ids, "doi", doi)
        bib[f"BIBREF{i}"] = {
            "ref_id": f"BIBREF{i}",
            "title": "",
            "authors": [],
            "year": _year(raw),
            "venue": "",
            "volume": "",
            "issue": "",
            "pages": "",
            "other_ids": ids,
            "num": i + 1,
            "urls": urls,
            "raw_text": raw,
        }
    abstract = d.get("abstract")
    abs_text = abstract.get("text") if isinstance(abstract, dict) else abstract
    abs_text = normalize_space(abs_text if isinstance(abs_text, str) else meta.get("abstract") or "")
    ids: dict[str, list[str]] = {"arXiv": [pid]} if try_normalize(pid) else {}
    if meta.get("doi"):
        _ids_add(ids, "doi", meta["doi"])
    authors = []
    for a in meta.get("authors_parsed") or []:
        if isinstance(a, list) and a:
            first = a[1] if len(a) > 1 else ""
            authors.append(_author({"first": first, "last": a[0], "suffix": a[2] if len(a) > 2 else ""}))
    date = _arxiv_date(meta)
    doc = {
        "paper_id": pid,
        "source": "latex",
        "title": normalize_space(meta.get("title") or ""),
        "authors": authors,
        "year": _year(date),
        "date": date,
        "venue": normalize_space(meta.get("journal-ref") or ""),
        "identifiers": ids,
        "abstract": [_plain_paragraph(abs_text, "Abstract")] if abs_text else [],
        "body_text": body,
        "back_matter": [],
        "bib_entries": bib,
        "ref_entries": ref_entries,
        "citation_style": classify_citation_style(body),
        "parser_version": "unarXive 2022",
    }
    return StructuredDoc.model_validate(doc)


def _jsonl_streams(path: Path) -> Iterator[tuple[str, io.TextIOBase]]:
    name = path.name
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                if member.isfile() and member.name.endswith((".jsonl", ".jsonl.gz")):
                    fh = tar.extractfile(member)
                    if fh is None:
                        continue
                    raw = gzip.GzipFile(fileobj=fh) if member.name.endswith(".gz") else fh
                    yield member.name, io.TextIOWrapper(raw, encoding="utf-8")
    elif name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            yield name, fh
    else:
        with open(path, encoding="utf-8") as fh:
            yield name, fh


def iter_unarxive(
    path: str | Path, on_error: Callable[[str, Exception], None] | None = None
) -> Iterator[StructuredDoc]:
    """Stream unarXive records from a ``.jsonl``, ``.jsonl.gz`` or a ``.tar.gz`` of them
    (read in place, nothing extracted to disk).

    A bad line raises :class:`S2orcFormatError` naming file and line, unless
    ``on_error(where, exc)`` is given: then it is reported there and skipped.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(path)
    for name, fh in _jsonl_streams(path):
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path.name}:{name}:{lineno}"
            try:
                doc = unarxive_record(json.loads(line))
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                if on_error is None:
                    raise S2orcFormatError(f"{where}: {exc}") from exc
                on_error(where, exc)
                continue
            yield doc
