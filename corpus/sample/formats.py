"""The same synthetic record in each of arXiv's metadata formats: OAI-PMH ListRecords pages in
the ``arXiv`` format (byte-compatible with ``shared/landing/oai``, paged with resumption
tokens as the endpoint serves big days), Kaggle snapshot lines and ``.abs`` files."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from corpus.ingest.records import ArxivRecord
from corpus.sample.metadata import wrap_abstract, wrap_title
from corpus.store import atomic_path

OAI_BASE_URL = "http://export.arxiv.org/oai2"


# ---------------------------------------------------------------- writers


def _esc(text: str) -> str:
    if "&" in text or "<" in text or ">" in text or '"' in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return text


_OAI_OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">\n'
)
_ARXIV_OPEN = (
    ' <arXiv xmlns="http://arxiv.org/OAI/arXiv/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://arxiv.org/OAI/arXiv/ http://arxiv.org/OAI/arXiv.xsd">\n'
)


def oai_record_xml(rec: ArxivRecord) -> str:
    """One ``<record>`` in arXiv's ``arXiv`` metadata format, element order as the endpoint's."""
    out = ["<record>\n<header>\n", f" <identifier>oai:arXiv.org:{rec.id}</identifier>\n"]
    out.append(f" <datestamp>{rec.datestamp.isoformat()}</datestamp>\n")
    out.extend(f" <setSpec>{s}</setSpec>\n" for s in rec.sets)
    out.append("</header>\n<metadata>\n")
    out.append(_ARXIV_OPEN)
    out.append(f" <id>{rec.id}</id><created>{rec.created.isoformat()}</created>")
    if rec.updated:
        out.append(f"<updated>{rec.updated.isoformat()}</updated>")
    out.append("<authors>")
    for a in rec.authors:
        out.append(f"<author><keyname>{_esc(a.keyname)}</keyname>")
        if a.forenames:
            out.append(f"<forenames>{_esc(a.forenames)}</forenames>")
        if a.suffix:
            out.append(f"<suffix>{_esc(a.suffix)}</suffix>")
        out.extend(f"<affiliation>{_esc(x)}</affiliation>" for x in a.affiliations)
        out.append("</author>")
    out.append(f"</authors><title>{_esc(wrap_title(rec.title))}</title>")
    out.append(f"<categories>{' '.join(rec.categories)}</categories>")
    for tag, value in (
        ("comments", wrap_title(rec.comments) if rec.comments else ""),
        ("report-no", rec.report_no),
        ("msc-class", rec.msc_class),
        ("acm-class", rec.acm_class),
        ("journal-ref", rec.journal_ref),
        ("doi", rec.doi),
        ("license", rec.license),
    ):
        if value:
            out.append(f"<{tag}>{_esc(value)}</{tag}>")
    out.append(f"<abstract>{_esc(wrap_abstract(rec.abstract))}</abstract></arXiv>\n</metadata>\n</record>\n")
    return "".join(out)


class OaiArxivWriter:
    """Writes each day's records as OAI-PMH ListRecords pages under ``<out>/oai/``, atomically."""

    def __init__(self, out: Path, page_size: int | None = None, seed: int = 0):
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be >= 1")
        self.dir = Path(out) / "oai"
        self.page_size = page_size
        self.seed = seed
        self.files: list[Path] = []

    def _names(self, day: dt.date, count: int) -> list[str]:
        if not self.page_size or count <= self.page_size:
            return [f"{day.isoformat()}.xml"]
        pages = -(-count // self.page_size)
        return [f"{day.isoformat()}-p{i:03d}.xml" for i in range(1, pages + 1)]

    def write_day(self, day: dt.date, records: Iterator[ArxivRecord], count: int) -> list[Path]:
        """Consume exactly ``count`` records (all with this datestamp) into this day's page files."""
        names = self._names(day, count)
        size = self.page_size if len(names) > 1 else max(count, 1)
        token_base = random.Random(f"{self.seed}:{day}").randrange(100000, 999999)
        response = f"{(day + dt.timedelta(days=1)).isoformat()}T02:56:16Z"
        written: list[Path] = []
        tokens = [f"{token_base}|{i * size + 1}" for i in range(len(names))]
        for page, name in enumerate(names):
            n = min(size, count - page * size)
            if page == 0:
                request = f'<request verb="ListRecords" until="{day}" from="{day}" metadataPrefix="arXiv">'
            else:
                request = f'<request verb="ListRecords" resumptionToken="{tokens[page]}">'
            parts = [
                _OAI_OPEN,
                f"<responseDate>{response}</responseDate>\n",
                f"{request}{OAI_BASE_URL}</request>\n",
            ]
            parts.append("<ListRecords>\n")
            for _ in range(n):
                rec = next(records)
                if rec.datestamp != day:
                    raise ValueError(f"record {rec.id} has datestamp {rec.datestamp}, page is for {day}")
                parts.append(oai_record_xml(rec))
            if len(names) > 1:
                attrs = f'cursor="{page * size}" completeListSize="{count}"'
                if page + 1 < len(names):
                    parts.append(f"<resumptionToken {attrs}>{tokens[page + 1]}</resumptionToken>\n")
                else:
                    parts.append(f"<resumptionToken {attrs}/>\n")
            parts.append("</ListRecords>\n</OAI-PMH>\n")
            path = self.dir / name
            with atomic_path(path) as tmp:
                tmp.write_bytes("".join(parts).encode("utf-8"))
            written.append(path)
        self.files.extend(written)
        return written


def kaggle_line(rec: ArxivRecord) -> str:
    """The record as one line of the Kaggle snapshot (current layout)."""
    obj = {
        "id": rec.id,
        "submitter": rec.submitter or None,
        "authors": rec.authors_raw,
        "title": wrap_title(rec.title),
        "comments": wrap_title(rec.comments) if rec.comments else None,
        "journal-ref": rec.journal_ref or None,
        "doi": rec.doi or None,
        "report-no": rec.report_no or None,
        "categories": " ".join(rec.categories),
        "license": rec.license or None,
        "abstract": wrap_abstract(rec.abstract),
        "versions": [{"version": f"v{v.version}", "created": v.date} for v in rec.versions],
        "update_date": rec.datestamp.isoformat() if rec.datestamp else None,
        "authors_parsed": [[a.keyname, a.forenames, a.suffix, *a.affiliations] for a in rec.authors],
    }
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"))


class KaggleWriter:
    """Kaggle snapshot lines to an open text stream (later records of an id supersede earlier ones)."""

    def __init__(self, fh: IO[str]):
        self.fh = fh

    def write(self, rec: ArxivRecord) -> None:
        self.fh.write(kaggle_line(rec) + "\n")


def abs_text(rec: ArxivRecord) -> str:
    """The record as an arXiv ``.abs`` file."""
    lines = ["-" * 78, "\\\\", f"arXiv:{rec.id}", f"From: {rec.submitter} <submitter@example.org>"]
    for v in rec.versions:
        label = "Date" if v.version == 1 else f"Date (revised v{v.version})"
        lines.append(f"{label}: {v.date}   ({v.size or '100kb'})")
    lines += ["", f"Title: {wrap_title(rec.title)}", f"Authors: {wrap_title(rec.authors_raw)}"]
    lines.append(f"Categories: {' '.join(rec.categories)}")
    for label, value in (
        ("Comments", rec.comments),
        ("Report-no", rec.report_no),
        ("MSC-class", rec.msc_class),
        ("ACM-class", rec.acm_class),
        ("Journal-ref", rec.journal_ref),
        ("DOI", rec.doi),
        ("License", rec.license),
    ):
        if value:
            lines.append(f"{label}: {wrap_title(value)}")
    lines += ["\\\\", wrap_abstract(rec.abstract).rstrip("\n"), "\\\\", ""]
    return "\n".join(lines)
