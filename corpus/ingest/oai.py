"""OAI-PMH for arXiv: a streaming page parser (the harvester that fetches pages is corpus.ingest.harvest).

The parser reads ListRecords / GetRecord replies in the three metadata formats
arXiv serves (``arXiv``, ``arXivRaw``, ``oai_dc``) into
:class:`corpus.ingest.records.ArxivRecord`, one record at a time. A well-formed UTF-8
page of at most ``WHOLE_PAGE_MAX_BYTES`` (32 MB; arXiv pages are a few MB) is
parsed whole, which is faster; anything else -- larger, not UTF-8, truncated --
goes through lxml ``iterparse`` (elements are cleared as they are read, so memory
does not grow with the page), with the same results. Entities are never resolved, no DTD is loaded and nothing is
fetched; a reply that carries a DOCTYPE is refused outright, since OAI-PMH
replies never have one and a DTD is how entity-expansion bombs arrive.

Elements are matched by local name, not namespace: real captures include
hand-edited records whose ``<arXiv>`` element lost its namespace, and the
meaning of an element is unambiguous within a record.

Failure modes, each explicit (SPEC.md §1):

* a reply whose root is not an OAI-PMH element (a TEI file, an XHTML error
  page, garbage) raises :class:`NotOaiReply` naming the source;
* a gzip-compressed page is decompressed (capped), and a page in another
  encoding (UTF-16 with or without a byte-order mark, a declared ISO-8859-1 ...)
  is transcoded to UTF-8 first: the same records, whatever the bytes;
* a record that cannot become an :class:`ArxivRecord` (no id, invalid id,
  no datestamp, a datestamp that is not a real day or lies in the future, ...)
  is a :class:`FailedRecord` with its reason; the rest of the page goes on;
* invalid UTF-8 bytes are replaced (U+FFFD) and the page carries a warning
  naming the records concerned, instead of losing the page;
* XML that is not well-formed is recovered record by record: each
  ``<record>`` is parsed on its own, so one broken record (a control
  character, a tag left open) is one failure row and the records after it are
  still read. :class:`OaiParseError` (naming the source and position) is raised
  after every readable record has been yielded only when the page around the
  records is broken too (truncated, garbage), so a harvest fetches it again;
* ``<error code="noRecordsMatch">`` is an empty page; any other OAI error raises
  :class:`OaiError` naming the code.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import re
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import BinaryIO

from lxml import etree

from corpus.ingest import arxiv_ids
from corpus.ingest.records import ArxivRecord, AuthorName, FailedRecord, Version, normalize_ws, set_versions

OAI_ENDPOINT = "https://oaipmh.arxiv.org/oai"
LEGACY_ENDPOINT = "https://export.arxiv.org/oai2"
METADATA_PREFIXES = ("arXiv", "arXivRaw", "oai_dc")

_DOCTYPE = re.compile(rb"<!(?i:DOCTYPE)")  # a literal prefix: scanned fast
_PREFIX = rb"(?:[A-Za-z_][\w.-]*:)?"
_DATESTAMP = re.compile(rb"<" + _PREFIX + rb"datestamp\b[^>]*>\s*([^<]{0,64}?)\s*<")
_RECORD_START = re.compile(rb"<" + _PREFIX + rb"record[\s>/]")
# The same without a namespace prefix: a literal start, so scanning runs at memory speed
# (a page with prefixed tags -- rare -- is scanned with the general ones).
_DATESTAMP_PLAIN = re.compile(rb"<datestamp\b[^>]*>\s*([^<]{0,64}?)\s*<")
_RECORD_START_PLAIN = re.compile(rb"<record[\s>/]")
_RECORD_END = re.compile(rb"</" + _PREFIX + rb"record\s*>")
_IDENTIFIER = re.compile(rb"<" + _PREFIX + rb"identifier\b[^>]*>\s*([^<]{0,200}?)\s*<")
_REQUEST_TAG = re.compile(rb"<" + _PREFIX + rb"request\b([^>]*)>")
_RESPONSE_DATE = re.compile(rb"<" + _PREFIX + rb"responseDate\b[^>]*>\s*([0-9]{4}-[0-9]{2}-[0-9]{2})")
_ERROR_CODE = re.compile(rb"<" + _PREFIX + rb"""error\b[^>]*\bcode\s*=\s*["']([^"']{0,64})["']""")
_ATTR = re.compile(rb"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_ROOT_TAG = re.compile(
    rb"\s*(?:(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>)\s*)*<([^\s/>!?]+)([^>]*)>", re.S
)
_NS_DECL = re.compile(rb"""\sxmlns(?::[\w.-]+)?\s*=\s*(?:"[^"]*"|'[^']*')""")
ROOT_NAME = "OAI-PMH"
MAX_PAGE_BYTES = 256 * 1024 * 1024  # a decompressed page larger than this is refused
EARLIEST_DATESTAMP = dt.date(1991, 1, 1)  # before arXiv: not a real datestamp
# Only these elements raise events; everything inside a record is read from the record element.
_PAGE_NAMES = frozenset({"record", "responseDate", "request", "resumptionToken", "error"})
_PAGE_TAGS = [f"{{*}}{name}" for name in sorted(_PAGE_NAMES)]


class OaiError(RuntimeError):
    """An OAI-PMH protocol error reply (``badArgument``, ``badResumptionToken`` ...)."""

    def __init__(self, code: str, message: str, source: str = ""):
        super().__init__(f"OAI-PMH error {code}: {message}" + (f" ({source})" if source else ""))
        self.code = code
        self.message = message
        self.source = source


class OaiParseError(ValueError):
    """A reply that is not well-formed XML (or is refused, e.g. for a DTD)."""


class NotOaiReply(OaiParseError):
    """A reply that is not OAI-PMH at all: another XML document, an HTML page, garbage."""


@dataclass
class ResumptionToken:
    token: str
    cursor: int | None = None
    complete_list_size: int | None = None


@dataclass
class OaiPage:
    """Everything a page holds apart from its records (which are streamed)."""

    source: str
    response_date: str = ""
    request: dict[str, str] = field(default_factory=dict)
    resumption: ResumptionToken | None = None
    error_code: str | None = None
    error_message: str = ""
    warnings: list[str] = field(default_factory=list)
    n_records: int = 0
    n_failed: int = 0


# ---------------------------------------------------------------- element helpers
#
# Speed (DESIGN.md §6, >= 20,000 records/s per core): every element of a record is
# visited once. :func:`_scan` walks an element's children a single time and keeps
# only what a format asks for (the text of the first child of some names, every
# child of others), instead of grouping all children and looking names up again.


_LOCAL_NAMES: dict[str, str] = {}


def local_name(el: etree._Element) -> str:
    tag = el.tag
    name = _LOCAL_NAMES.get(tag)  # type: ignore[arg-type]
    if name is None:
        if not isinstance(tag, str):  # comments, processing instructions
            return ""
        name = _LOCAL_NAMES[tag] = tag.rsplit("}", 1)[-1]
    return name


def element_text(el: etree._Element | None) -> str:
    if el is None:
        return ""
    if len(el) == 0:  # a leaf: the common case, no itertext walk
        return el.text or ""
    return "".join(el.itertext())


_NO_NAMES: frozenset[str] = frozenset()


def _scan(
    el: etree._Element, first: frozenset[str], every: frozenset[str] = _NO_NAMES
) -> tuple[dict[str, str], dict[str, list[etree._Element]]]:
    """One pass over ``el``'s children: the raw text of the first child named in
    ``first`` and every child named in ``every`` (by local name; others are skipped).
    The local-name cache lookup is inlined: this runs for every element read."""
    texts: dict[str, str] = {}
    groups: dict[str, list[etree._Element]] = {}
    names = _LOCAL_NAMES
    for child in el:
        tag = child.tag
        name = names.get(tag)  # type: ignore[arg-type]
        if name is None:
            if not isinstance(tag, str):
                continue
            name = names[tag] = tag.rsplit("}", 1)[-1]
        if name in first:
            if name not in texts:
                texts[name] = (child.text or "") if len(child) == 0 else "".join(child.itertext())
        elif name in every:
            group = groups.get(name)
            if group is None:
                groups[name] = [child]
            else:
                group.append(child)
    return texts, groups


def _date(value: str) -> dt.date | None:
    value = value.strip()
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


_TODAY: list = [0.0, dt.date.min]  # [monotonic time read, UTC date]: the clock is read once a minute


def latest_datestamp() -> dt.date:
    """Today (UTC): a datestamp after it cannot have been given yet."""
    now = time.monotonic()
    if now - _TODAY[0] > 60:
        _TODAY[:] = [now, dt.datetime.now(dt.UTC).date()]
    return _TODAY[1]


def datestamp_problem(day: dt.date) -> str | None:
    """Why a header datestamp cannot be a partition key, or None when it can."""
    if day > latest_datestamp():
        return f"datestamp {day.isoformat()} is in the future"
    if day < EARLIEST_DATESTAMP:
        return f"datestamp {day.isoformat()} is before arXiv existed"
    return None


def partition_day(raw: str | None) -> str | None:
    """``raw`` as a partition key (YYYY-MM-DD) when it is a real, plausible day, else None."""
    day = _date(raw or "")
    if day is None or not (raw or "").strip()[:10].isascii() or datestamp_problem(day):
        return None
    return day.isoformat()


# ---------------------------------------------------------------- metadata formats


_AUTHOR_PARTS = frozenset({"keyname", "forenames", "suffix", "affiliation"})


def _authors_arxiv(authors_el: etree._Element | None) -> tuple[list[dict], str]:
    """``<authors><author><keyname/><forenames/><suffix/><affiliation/>*`` as plain dicts
    (validated once, in bulk, by ArxivRecord: far cheaper than a model per author)."""
    names: list[dict] = []
    raw_parts: list[str] = []
    if authors_el is None:
        return names, ""
    local = _LOCAL_NAMES
    for author in authors_el:
        if local.get(author.tag) != "author" and local_name(author) != "author":
            continue
        keyname = forenames = suffix = ""
        affiliations: list[str] = []
        for part in author:
            name = local.get(part.tag) or local_name(part)
            if name not in _AUTHOR_PARTS:
                continue
            text = normalize_ws(element_text(part))
            if name == "keyname":
                keyname = text
            elif name == "forenames":
                forenames = text
            elif name == "suffix":
                suffix = text
            elif text:
                affiliations.append(text)
        if not keyname and not forenames:
            continue
        if not keyname:
            keyname, forenames = forenames, ""
        names.append(
            {"keyname": keyname, "forenames": forenames, "suffix": suffix, "affiliations": affiliations}
        )
        raw = f"{forenames} {keyname}" if forenames else keyname  # keyname is never empty here
        raw_parts.append(f"{raw} {suffix}" if suffix else raw)
    return names, ", ".join(raw_parts)


def _parse_author_string(raw: str) -> list[AuthorName]:
    from corpus.ingest.authors import parse_author_string  # plain strings: arXivRaw, oai_dc fallbacks

    return parse_author_string(raw)


def _split_ws(value: str) -> list[str]:
    return value.split() if value else []


# Elements with the same name and meaning in the arXiv and arXivRaw formats -> record fields.
_TEXT_FIELDS = (
    ("title", "title"),
    ("abstract", "abstract"),
    ("comments", "comments"),
    ("journal-ref", "journal_ref"),
    ("report-no", "report_no"),
    ("msc-class", "msc_class"),
    ("acm-class", "acm_class"),
    ("license", "license"),
    ("doi", "doi"),
)
_TEXT_NAMES = frozenset(name for name, _ in _TEXT_FIELDS)
_ARXIV_FIRST = _TEXT_NAMES | {"id", "created", "updated", "categories"}
_ARXIV_EVERY = frozenset({"authors"})
_RAW_FIRST = _TEXT_NAMES | {"id", "submitter", "authors", "categories"}
_RAW_EVERY = frozenset({"version"})
_VERSION_FIRST = frozenset({"date", "size", "source_type"})


def _text_fields(texts: dict[str, str], rec: dict) -> None:
    for name, key in _TEXT_FIELDS:
        rec[key] = texts.get(name, "").strip()
    rec["categories"] = texts.get("categories", "").split()


def _record_arxiv(meta: etree._Element, rec: dict) -> None:
    texts, groups = _scan(meta, _ARXIV_FIRST, _ARXIV_EVERY)
    rec["id"] = texts.get("id", "").strip()
    rec["created"] = _date(texts.get("created", ""))
    rec["updated"] = _date(texts.get("updated", ""))
    authors = groups.get("authors")
    rec["authors"], rec["authors_raw"] = _authors_arxiv(authors[0] if authors else None)
    _text_fields(texts, rec)


def _record_arxiv_raw(meta: etree._Element, rec: dict) -> None:
    texts, groups = _scan(meta, _RAW_FIRST, _RAW_EVERY)
    rec["id"] = texts.get("id", "").strip()
    rec["submitter"] = texts.get("submitter", "").strip()
    versions = []
    for v in groups.get("version", ()):
        label = (v.get("version") or "").lstrip("v")
        if label.isdigit():
            vt = _scan(v, _VERSION_FIRST)[0]
            versions.append(
                Version(
                    version=int(label),
                    date=normalize_ws(vt.get("date")),
                    size=vt.get("size", "").strip(),
                    source_type=vt.get("source_type", "").strip(),
                )
            )
    set_versions(rec, versions, None)
    rec["authors_raw"] = normalize_ws(texts.get("authors"))
    rec["authors"] = _parse_author_string(rec["authors_raw"]) if rec["authors_raw"] else []
    _text_fields(texts, rec)


_DC_ABS = re.compile(r"arxiv\.org/abs/(\S+)", re.IGNORECASE)
_DC_FIRST = frozenset({"title", "rights"})
_DC_EVERY = frozenset({"creator", "description", "date", "identifier"})


def _record_oai_dc(meta: etree._Element, rec: dict) -> None:
    """oai_dc carries no category codes and no author split: creators are
    ``Last, First``; categories fall back to the header's sets (documented
    loss -- harvest ``arXiv`` or ``arXivRaw`` for full metadata)."""
    texts, groups = _scan(meta, _DC_FIRST, _DC_EVERY)
    rec["title"] = texts.get("title", "").strip()
    authors: list[dict | AuthorName] = []  # dicts: validated in bulk by ArxivRecord
    raw_parts: list[str] = []
    for creator in groups.get("creator", ()):
        text = normalize_ws(element_text(creator))
        if not text:
            continue
        if "," in text:
            last, first = text.split(",", 1)
            last, first = last.strip(), first.strip()
            authors.append({"keyname": last, "forenames": first})
            raw_parts.append(f"{first} {last}" if first and last else first or last)
        else:
            for a in _parse_author_string(text):
                authors.append(a)
                raw_parts.append(" ".join(p for p in (a.forenames, a.keyname) if p))
    rec["authors"] = authors
    rec["authors_raw"] = ", ".join(raw_parts)
    descriptions = [element_text(d) for d in groups.get("description", ())]
    rec["abstract"] = next((d for d in descriptions if not d.strip().startswith("Comment:")), "")
    rec["comments"] = next(
        (d.strip()[len("Comment:") :] for d in descriptions if d.strip().startswith("Comment:")), ""
    )
    dates = sorted(d for d in (_date(element_text(x)) for x in groups.get("date", ())) if d)
    if dates:
        rec["created"] = dates[0]
        rec["updated"] = dates[-1] if len(dates) > 1 else None
    for ident in groups.get("identifier", ()):
        value = element_text(ident).strip()
        m = _DC_ABS.search(value)
        if m and not rec.get("id"):
            rec["id"] = m.group(1)
        elif value.lower().startswith("doi:"):
            rec["doi"] = value[4:].strip()
        elif value and not value.startswith("http"):
            rec["journal_ref"] = value
    rec["license"] = texts.get("rights", "").strip()


_FORMATS: dict[str, tuple[str, Callable[[etree._Element, dict], None]]] = {
    "arXiv": ("arXiv", _record_arxiv),
    "arXivRaw": ("arXivRaw", _record_arxiv_raw),
    "dc": ("oai_dc", _record_oai_dc),
}
_RECORD_EVERY = frozenset({"header", "metadata"})
_HEADER_FIRST = frozenset({"identifier", "datestamp"})
_HEADER_EVERY = frozenset({"setSpec"})


def _header_datestamp(header: etree._Element) -> dt.date | None:
    return _date(_scan(header, _HEADER_FIRST)[0].get("datestamp", ""))


def record_from_element(record_el: etree._Element, position: int, source: str) -> ArxivRecord | FailedRecord:
    """One ``<record>`` element -> a record, or a failure row with the reason."""
    item = _record_from_element(record_el, position, source)
    if isinstance(item, FailedRecord) and not item.datestamp:
        header = next((c for c in record_el if local_name(c) == "header"), None)
        if header is not None:
            stamp = _header_datestamp(header)
            if stamp:
                item.datestamp = stamp.isoformat()
    return item


def _record_from_element(record_el: etree._Element, position: int, source: str) -> ArxivRecord | FailedRecord:
    identifier = ""
    try:
        parts = _scan(record_el, _NO_NAMES, _RECORD_EVERY)[1]
        header = parts["header"][0] if "header" in parts else None
        if header is None:
            return FailedRecord(source=source, position=position, reason="record without <header>")
        htexts, hgroups = _scan(header, _HEADER_FIRST, _HEADER_EVERY)
        identifier = htexts.get("identifier", "").strip()
        datestamp = _date(htexts.get("datestamp", ""))
        sets = [element_text(s).strip() for s in hgroups.get("setSpec", ())]
        deleted = header.get("status") == "deleted"
        rec: dict = {"datestamp": datestamp, "sets": sets, "deleted": deleted}
        meta_wrapper = parts["metadata"][0] if "metadata" in parts else None
        meta = next((c for c in meta_wrapper if local_name(c)), None) if meta_wrapper is not None else None
        if meta is None:
            if not deleted:
                return FailedRecord(
                    source=source,
                    position=position,
                    identifier=identifier,
                    reason="record without <metadata>",
                )
            rec["id"] = identifier.rsplit(":", 1)[-1]
            rec["source_format"] = "arXiv"
        else:
            fmt = _FORMATS.get(local_name(meta))
            if fmt is None:
                return FailedRecord(
                    source=source,
                    position=position,
                    identifier=identifier,
                    reason=f"unknown metadata format <{local_name(meta)}>",
                )
            rec["source_format"], fill = fmt
            fill(meta, rec)
        raw_id = rec.get("id") or identifier.rsplit(":", 1)[-1]
        if not raw_id:
            return FailedRecord(source=source, position=position, identifier=identifier, reason="no arXiv id")
        try:
            parsed = arxiv_ids.parse(raw_id)
        except arxiv_ids.InvalidArxivId:
            return FailedRecord(
                source=source, position=position, identifier=identifier, reason=f"invalid arXiv id {raw_id!r}"
            )
        rec["id"] = parsed.id
        if rec.get("version") is None and parsed.version is not None:
            rec["version"] = parsed.version
        if datestamp is None:
            raw = htexts.get("datestamp", "").strip()
            return FailedRecord(
                source=source,
                position=position,
                identifier=identifier,
                reason=f"invalid <datestamp> {raw[:40]!r}" if raw else "missing <datestamp>",
            )
        problem = datestamp_problem(datestamp)
        if problem:
            return FailedRecord(source=source, position=position, identifier=identifier, reason=problem)
        if not deleted and not rec.get("title"):
            return FailedRecord(
                source=source, position=position, identifier=identifier, reason="missing <title>"
            )
        return ArxivRecord.model_validate(rec)
    except Exception as exc:  # one bad record never loses the rest of the page
        return FailedRecord(
            source=source, position=position, identifier=identifier, reason=f"{type(exc).__name__}: {exc}"
        )


# ---------------------------------------------------------------- page parsing


_PARSER_OPTIONS = dict(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_comments=True
)
# Pages up to this size are parsed whole (see _whole_page); a tree costs ~6x the bytes.
WHOLE_PAGE_MAX_BYTES = 32 * 1024 * 1024
_XML_DECL = re.compile(rb"<\?xml[^>]*?\?>")
_DECL_ENCODING = re.compile(rb"""encoding\s*=\s*["']([^"']*)["']""")
# Byte-order marks and, without one, the first bytes of "<?" in each wide encoding (XML 1.0 App. F).
_WIDE = (
    (b"\x00\x00\xfe\xff", "utf-32-be", 4),
    (b"\xff\xfe\x00\x00", "utf-32-le", 4),
    (b"\xfe\xff", "utf-16-be", 2),
    (b"\xff\xfe", "utf-16-le", 2),
    (b"\x00\x00\x00<", "utf-32-be", 0),
    (b"<\x00\x00\x00", "utf-32-le", 0),
    (b"\x00<\x00?", "utf-16-be", 0),
    (b"<\x00?\x00", "utf-16-le", 0),
)
_UTF8_NAMES = frozenset({"utf-8", "utf8"})


def _refuse_doctype(data: bytes, source: str) -> None:
    if _DOCTYPE.search(data):
        raise OaiParseError(
            f"{source}: refusing a reply with a DOCTYPE/DTD (entity declarations not allowed)"
        )


def _gunzip(data: bytes, source: str, warnings: list[str]) -> bytes:
    """A gzip-compressed page (saved as ``.xml`` by a mirror), decompressed up to the cap."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            out = gz.read(MAX_PAGE_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise NotOaiReply(f"{source}: gzip-compressed page that does not decompress: {exc}") from exc
    if len(out) > MAX_PAGE_BYTES:
        raise NotOaiReply(f"{source}: gzip-compressed page larger than {MAX_PAGE_BYTES} bytes decompressed")
    warnings.append("gzip-compressed page: decompressed before parsing")
    return out


def _transcode(data: bytes, codec: str, skip: int, source: str, warnings: list[str]) -> bytes:
    """``data`` in ``codec`` -> UTF-8 with its declaration saying so (libxml2 then reads it as
    it reads every page; undecodable bytes become U+FFFD with a warning, as in UTF-8 pages)."""
    body = data[skip:]
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        warnings.append(f"invalid {codec} at byte {exc.start}: invalid bytes replaced with U+FFFD")
        text = body.decode(codec, errors="replace")
    except LookupError as exc:
        raise NotOaiReply(f"{source}: unknown character encoding {codec!r}") from exc
    if text.startswith("<?xml"):
        end = text.find("?>")
        if end > 0:
            decl = text[: end + 2]
            text = re.sub(r"""encoding\s*=\s*["'][^"']*["']""", 'encoding="UTF-8"', decl) + text[end + 2 :]
    return text.encode("utf-8")


def page_bytes(data: bytes, source: str = "<bytes>", warnings: list[str] | None = None) -> bytes:
    """The reply as the UTF-8 bytes the parser reads: gunzipped when it is gzip, transcoded
    when a byte-order mark or its XML declaration says another encoding. A page that is
    already UTF-8 (every arXiv reply) comes back unchanged at the cost of a few compares."""
    warnings = warnings if warnings is not None else []
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, source, warnings)
    if data[:1] == b"<" and data[1:2] != b"\x00":
        decl = _XML_DECL.match(data) if data.startswith(b"<?xml") else None
        encoding = _DECL_ENCODING.search(decl.group()) if decl else None
        name = encoding.group(1).decode("ascii", "replace").lower() if encoding else "utf-8"
        if name in _UTF8_NAMES or name.startswith(("utf-16", "utf-32", "ucs")):
            return data  # UTF-8 (a wide encoding declared on 8-bit bytes is read as UTF-8)
        return _transcode(data, name, 0, source, warnings)
    if data[:3] == b"\xef\xbb\xbf":
        return data[3:]
    for mark, codec, skip in _WIDE:
        if data.startswith(mark):
            return _transcode(data, codec, skip, source, warnings)
    return data


def _check_root(data: bytes, source: str) -> bytes:
    """The root element's start tag, when the reply is OAI-PMH; else :class:`NotOaiReply`."""
    m = _ROOT_TAG.match(data, 0, 65536)
    if m is None:
        head = data[:40]
        raise NotOaiReply(f"{source}: not an OAI-PMH reply: no XML element at the start ({head!r})")
    name = m.group(1).decode("utf-8", "replace").rsplit(":", 1)[-1]
    if name != ROOT_NAME:
        raise NotOaiReply(f"{source}: not an OAI-PMH reply: the root element is <{name[:60]}>")
    return m.group(0)


def _repair_utf8(data: bytes, page: OaiPage) -> bytes:
    try:
        if not data.isascii():  # ASCII is valid UTF-8; isascii is a fast scan, decode is not
            data.decode("utf-8")
    except UnicodeDecodeError as exc:
        page.warnings.append(f"invalid UTF-8 at byte {exc.start}: invalid bytes replaced with U+FFFD")
        data = data.decode("utf-8", errors="replace").encode("utf-8")
    return data


def _is_utf8_xml(data: bytes) -> bool:
    """True when libxml2 reads ``data`` as UTF-8: it starts with ``<`` (no byte-order
    mark) and declares no encoding or UTF-8. libxml2 then rejects every invalid
    UTF-8 sequence (tests/test_oai.py checks overlongs, surrogates, truncations)."""
    if not data.startswith(b"<"):
        return False
    if not data.startswith(b"<?xml"):
        return True
    decl = _XML_DECL.match(data)
    if decl is None:
        return False
    encoding = _DECL_ENCODING.search(decl.group())
    return encoding is None or encoding.group(1).lower() == b"utf-8"


def _whole_page(data: bytes) -> list[etree._Element] | None:
    """The page-level elements of a well-formed UTF-8 page parsed in one go, or None.

    Why: iterparse pays ~40k CPU instructions per record for its event hooks on
    every element, and the streaming path decodes the page once more in Python to
    check its UTF-8; parsing a page (arXiv serves a few MB at most) whole skips both,
    ~10 % fewer instructions per record (callgrind), while libxml2 itself rejects
    invalid UTF-8. The result must equal what the streaming path sees, so this
    returns None -- and the caller streams -- when the page is large, not UTF-8, not
    well-formed (the streaming path yields the records before the fault and says
    where it is), or when a page-level element sits anywhere but directly under the
    root or under a child of the root that is not page-level itself (then document
    order, used here, could differ from the end-tag order of the streaming path).
    """
    if len(data) > WHOLE_PAGE_MAX_BYTES or not _is_utf8_xml(data):
        return None
    try:
        root = etree.fromstring(data, etree.XMLParser(**_PARSER_OPTIONS))
    except etree.XMLSyntaxError:
        return None
    if local_name(root) in _PAGE_NAMES:
        return None
    found = list(root.iter(_PAGE_TAGS))  # document order
    checked = None  # the parent last found to be a plain child of the root (<ListRecords>)
    for el in found:
        parent = el.getparent()
        if parent is root or parent is checked:
            continue
        if parent.getparent() is not root or local_name(parent) in _PAGE_NAMES:
            return None
        checked = parent
    return found


def _streamed(data: bytes) -> Iterator[etree._Element]:
    """Page-level elements at their end tags, one at a time; each record is cleared
    (with the records before it) once the caller is done with it, so memory does not
    grow with the page."""
    for _event, el in etree.iterparse(io.BytesIO(data), events=("end",), tag=_PAGE_TAGS, **_PARSER_OPTIONS):
        yield el
        if local_name(el) == "record":
            el.clear()
            parent = el.getparent()
            if parent is not None:
                while el.getprevious() is not None:
                    del parent[0]


class _PageReader:
    """What :func:`iter_page` does with each page-level element, shared by the normal
    path and the record-by-record recovery."""

    def __init__(self, page: OaiPage, source: str, track: bool = False):
        self.page, self.source, self.position = page, source, 0
        # What was yielded (streaming path only): the recovery skips exactly these, since the
        # records a broken page yielded before failing need not be its first N (an unclosed
        # record makes the next one its child, which the stream still yields).
        self.seen: Counter[tuple] | None = Counter() if track else None

    @staticmethod
    def key(item: ArxivRecord | FailedRecord) -> tuple:
        if isinstance(item, FailedRecord):
            return ("failed", item.identifier, item.reason)
        return ("record", item.id, item.version, item.datestamp, item.title)

    def record(self, el: etree._Element) -> ArxivRecord | FailedRecord:
        return self.count(record_from_element(el, self.position, self.source))

    def count(self, item: ArxivRecord | FailedRecord) -> ArxivRecord | FailedRecord:
        self.position += 1
        if self.seen is not None:
            self.seen[self.key(item)] += 1
        if isinstance(item, FailedRecord):
            self.page.n_failed += 1
        else:
            self.page.n_records += 1
            if "\ufffd" in item.title or "\ufffd" in item.abstract or "\ufffd" in item.authors_raw:
                self.page.warnings.append(f"record {item.id}: invalid UTF-8 replaced")
        return item

    def envelope(self, el: etree._Element) -> None:
        page, name = self.page, local_name(el)
        if name == "responseDate":
            page.response_date = element_text(el).strip()
        elif name == "request":
            page.request = dict(el.attrib)
        elif name == "resumptionToken":
            cursor, size = el.get("cursor"), el.get("completeListSize")
            page.resumption = ResumptionToken(
                token=element_text(el).strip(),
                cursor=int(cursor) if cursor and cursor.isascii() and cursor.isdigit() else None,
                complete_list_size=int(size) if size and size.isascii() and size.isdigit() else None,
            )
        elif name == "error":
            page.error_code = el.get("code", "unknown")
            page.error_message = normalize_ws(element_text(el))


def _failed(reader: _PageReader, chunk: bytes, reason: str, position: int) -> FailedRecord:
    """A failure row for a record read by bytes alone: its identifier and datestamp by regex."""
    ident = _IDENTIFIER.search(chunk)
    stamp = _DATESTAMP.search(chunk)
    return FailedRecord(
        source=reader.source,
        position=position,
        identifier=ident.group(1).decode("utf-8", "replace") if ident else "",
        datestamp=(stamp.group(1)[:10].decode("utf-8", "replace") if stamp else ""),
        reason=reason,
    )


def _record_spans(data: bytes) -> list[tuple[int, int, bool]]:
    """``(start, end, closed)`` of every ``<record>`` by bytes alone: a record runs to its
    ``</record>``, or -- when that is missing -- up to the next ``<record`` (or the end)."""
    starts = [m.start() for m in _RECORD_START.finditer(data)]
    spans = []
    for i, start in enumerate(starts):
        limit = starts[i + 1] if i + 1 < len(starts) else len(data)
        tag_end = data.find(b">", start, limit)
        if tag_end > 0 and data[tag_end - 1 : tag_end] == b"/":
            spans.append((start, tag_end + 1, True))
            continue
        close = _RECORD_END.search(data, start, limit)
        spans.append((start, close.end(), True) if close else (start, limit, False))
    return spans


def _recover(data: bytes, reader: _PageReader, root_tag: bytes, first: etree.XMLSyntaxError):
    """Every record of a page that is not well-formed, each parsed on its own (wrapped in an
    element declaring the root's namespaces) and skipped when the stream already yielded
    it; then the envelope without the records, which must parse for the page to be whole.
    A recovered record's position is its place among the page's ``<record>`` tags (the
    stream's count is off once an unclosed record has swallowed the next one)."""
    spans = _record_spans(data)
    wrap_open = b"<recovered" + b"".join(_NS_DECL.findall(root_tag)) + b">"
    parser = etree.XMLParser(**_PARSER_OPTIONS)
    already = reader.seen or Counter()
    reader.seen = None
    for position, (start, end, closed) in enumerate(spans):
        chunk = data[start:end]
        item: ArxivRecord | FailedRecord
        if not closed:
            item = _failed(
                reader, chunk, "record cut off: no </record> before the next record or the end", position
            )
        else:
            try:
                wrapper = etree.fromstring(wrap_open + chunk + b"</recovered>", parser)
            except etree.XMLSyntaxError as exc:
                item = _failed(reader, chunk, f"record is not well-formed XML: {exc.msg}", position)
            else:
                el = next((c for c in wrapper if local_name(c) == "record"), None)
                item = (
                    record_from_element(el, position, reader.source)
                    if el is not None
                    else _failed(reader, chunk, "record element not found", position)
                )
        key = reader.key(item)
        if already[key] > 0:  # yielded before the fault
            already[key] -= 1
            continue
        yield reader.count(item)
    pieces, pos = [], 0
    for start, end, _closed in spans:
        pieces.append(data[pos:start])
        pos = end
    pieces.append(data[pos:])
    try:
        root = etree.fromstring(b"".join(pieces), parser)
    except etree.XMLSyntaxError:
        raise OaiParseError(
            f"{reader.source}: not well-formed XML after {reader.position} records "
            f"(line {first.lineno}): {first.msg}"
        ) from first
    for el in root.iter(_PAGE_TAGS):
        reader.envelope(el)


def iter_page(
    data: bytes | Path | BinaryIO, source: str | None = None, page: OaiPage | None = None
) -> Iterator[ArxivRecord | FailedRecord]:
    """Stream the records of one OAI-PMH reply; fill ``page`` with its envelope.

    Raises :class:`NotOaiReply` for a reply that is not OAI-PMH, :class:`OaiParseError`
    (after yielding every record that could be read, one by one past a fault) when the
    page itself is not well-formed, and :class:`OaiError` for OAI errors other than
    ``noRecordsMatch``. A page of at most :data:`WHOLE_PAGE_MAX_BYTES` is parsed whole
    when it is well-formed UTF-8 (faster, same results); anything else is streamed
    element by element.
    """
    if isinstance(data, Path):
        source = source or str(data)
        data = data.read_bytes()
    elif not isinstance(data, bytes):
        data = data.read()
    source = source or "<bytes>"
    page = page if page is not None else OaiPage(source=source)
    page.source = source
    data = page_bytes(data, source, page.warnings)
    _refuse_doctype(data, source)
    root_tag = _check_root(data, source)
    elements: Iterable[etree._Element] | None = _whole_page(data)
    reader = _PageReader(page, source, track=elements is None)
    if elements is None:
        data = _repair_utf8(data, page)
        elements = _streamed(data)
    try:
        for el in elements:
            if local_name(el) == "record":
                yield reader.record(el)
                el.clear()
            else:
                reader.envelope(el)
    except etree.XMLSyntaxError as exc:
        page.warnings.append(f"not well-formed XML (line {exc.lineno}: {exc.msg}): records read one by one")
        yield from _recover(data, reader, root_tag, exc)
    if page.error_code and page.error_code != "noRecordsMatch":
        raise OaiError(page.error_code, page.error_message, source)


def read_page(
    data: bytes | Path | BinaryIO, source: str | None = None
) -> tuple[OaiPage, list[ArxivRecord], list[FailedRecord]]:
    """Parse a whole page into lists (convenience for small pages and tests)."""
    page = OaiPage(source=source or "")
    records: list[ArxivRecord] = []
    failed: list[FailedRecord] = []
    for item in iter_page(data, source, page):
        (failed if isinstance(item, FailedRecord) else records).append(item)
    return page, records, failed


@dataclass
class PageScan:
    """What a page holds, learnt with byte regexes (no XML parse): enough to tell which
    partitions its records -- and its failures -- belong to."""

    stamps: dict[str, int] = field(default_factory=dict)  # datestamp text as written -> records
    records: int = 0  # <record> elements
    request_from: str = ""  # the request's from= and until= (a one-day harvest names its day)
    request_until: str = ""
    response_day: str = ""
    problem: str | None = None  # why the page cannot be read at all (not OAI-PMH, bad gzip, a DTD ...)

    def days(self) -> dict[str, int]:
        """Records per partition day, for the records whose datestamp is a real day."""
        out: dict[str, int] = {}
        for raw, n in self.stamps.items():
            day = partition_day(raw)
            if day:
                out[day] = out.get(day, 0) + n
        return out

    def unplaced(self) -> int:
        """Records without a usable datestamp (missing, not a day, in the future ...)."""
        return self.records - sum(self.days().values()) if self.problem is None else 0

    def as_dict(self) -> dict:
        return asdict(self)


def _scanners(data: bytes) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """The datestamp and record-start patterns for ``data``: plain unless it has prefixed tags."""
    if b":datestamp" in data:
        return _DATESTAMP, _RECORD_START
    return _DATESTAMP_PLAIN, _RECORD_START_PLAIN


def scan_page(data: bytes, source: str = "<bytes>") -> PageScan:
    """A :class:`PageScan` of one reply (decoded as :func:`iter_page` decodes it)."""
    scan = PageScan()
    try:  # a DOCTYPE is refused when the page is read (a failure row on the days it holds)
        data = page_bytes(data, source)
        _check_root(data, source)
    except OaiParseError as exc:
        scan.problem = str(exc)
        return scan
    datestamps, records = _scanners(data)
    for m in datestamps.finditer(data):
        raw = m.group(1).decode("utf-8", "replace")
        scan.stamps[raw] = scan.stamps.get(raw, 0) + 1
    scan.records = sum(1 for _ in records.finditer(data))
    request = _REQUEST_TAG.search(data)
    if request:
        attrs = {m.group(1): (m.group(2) or m.group(3) or b"") for m in _ATTR.finditer(request.group(1))}
        scan.request_from = attrs.get(b"from", b"").decode("utf-8", "replace")[:32]
        scan.request_until = attrs.get(b"until", b"").decode("utf-8", "replace")[:32]
    response = _RESPONSE_DATE.search(data)
    scan.response_day = response.group(1).decode() if response else ""
    error = _ERROR_CODE.search(data) if not scan.records else None
    if error and error.group(1) != b"noRecordsMatch":  # a failed harvest: its day must say so
        scan.problem = f"{source}: OAI-PMH error {error.group(1).decode('utf-8', 'replace')}"
    return scan


def scan_datestamps(data: bytes) -> dict[str, int]:
    """Count records per header datestamp with a byte regex (no XML parse): the landing
    sensor maps changed files to days with it. Every datestamp that is a calendar day is
    counted, even one outside the partitions (the sensor says so); the partition index
    uses :func:`scan_page`, which also places records without a usable datestamp."""
    try:
        data = page_bytes(data)
    except OaiParseError:
        return {}
    counts: dict[str, int] = {}
    for m in _scanners(data)[0].finditer(data):
        raw = m.group(1)[:10]
        day = _date(raw.decode("ascii")) if raw.isascii() else None
        if day is not None:
            key = day.isoformat()
            counts[key] = counts.get(key, 0) + 1
    return counts
