"""The Kaggle / Cornell arXiv snapshot (``arxiv-metadata-oai-snapshot.json``) -> :class:`ArxivRecord`.

One JSON object per line. Two layouts are in circulation:

* current: ``categories`` is one space-separated string, ``versions`` is a list of
  ``{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}``, plus
  ``license``, ``update_date`` (the OAI datestamp) and ``authors_parsed``;
* older (the first 2020 release, and copies such as kermitt2/arxiv_harvester's):
  ``categories`` is a list holding that string, ``versions`` is a list of labels
  (``["v1", "v2"]``) with the dates, when kept, in a parallel ``versions_dates``,
  and no ``license``, ``update_date`` or ``authors_parsed``.

Authors are split from the raw string with :func:`corpus.ingest.authors.parse_author_string`
(the same rule that made ``authors_parsed``; 200/200 agreement on the real sample),
so every reader gives the same names for the same string. Plain ``.json`` and
``.json.gz`` are read as streams.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from corpus.ingest.abs_files import strip_doi_prefix
from corpus.ingest.arxiv_ids import InvalidArxivId, parse
from corpus.ingest.authors import parse_author_string
from corpus.ingest.records import ArxivRecord, FailedRecord, Version, normalize_ws, set_versions

__all__ = ["KaggleRecordError", "record_from_kaggle", "iter_kaggle_snapshot"]


class KaggleRecordError(ValueError):
    """A snapshot line that is JSON but not a usable record."""


_TEXT = {
    "submitter": "submitter",
    "title": "title",
    "abstract": "abstract",
    "comments": "comments",
    "journal-ref": "journal_ref",
    "doi": "doi",
    "report-no": "report_no",
    "license": "license",
}


def _str(value: object, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise KaggleRecordError(f"field {field!r} is {type(value).__name__}, expected a string")
    return value


def _categories(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [c for v in value for c in v.split()]
    raise KaggleRecordError(f"categories is {type(value).__name__}, expected a string or a list of strings")


def _label(value: object) -> int:
    text = str(value).strip().lstrip("v")
    if not text.isdigit():
        raise KaggleRecordError(f"bad version label {value!r}")
    return int(text)


def _versions(obj: dict) -> list[Version]:
    raw = obj.get("versions") or []
    if not isinstance(raw, list):
        raise KaggleRecordError(f"versions is {type(raw).__name__}, expected a list")
    dates = obj.get("versions_dates") or []
    out: list[Version] = []
    for i, item in enumerate(raw):
        if isinstance(item, dict):  # current layout
            out.append(
                Version(
                    version=_label(item.get("version")),
                    date=normalize_ws(_str(item.get("created"), "created")),
                )
            )
        else:  # older layout: labels, dates (if any) in a parallel list
            date = dates[i] if i < len(dates) and isinstance(dates[i], str) else ""
            out.append(Version(version=_label(item), date=normalize_ws(date)))
    out.sort(key=lambda v: v.version)
    return out


def record_from_kaggle(obj: object) -> ArxivRecord:
    """One decoded snapshot line (either layout) -> record; :class:`KaggleRecordError` if unusable."""
    if not isinstance(obj, dict):
        raise KaggleRecordError(f"line is a JSON {type(obj).__name__}, expected an object")
    raw_id = obj.get("id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise KaggleRecordError("no 'id'")
    try:
        aid = parse(raw_id)
    except InvalidArxivId as exc:
        raise KaggleRecordError(str(exc)) from None
    rec: dict = {"id": aid.id, "source_format": "kaggle"}
    for key, field in _TEXT.items():
        rec[field] = _str(obj.get(key), key).strip()
    rec["doi"] = strip_doi_prefix(rec["doi"])
    authors_raw = normalize_ws(_str(obj.get("authors"), "authors"))
    rec["authors_raw"] = authors_raw
    rec["authors"] = parse_author_string(authors_raw)
    rec["categories"] = _categories(obj.get("categories"))
    versions = _versions(obj)
    set_versions(rec, versions, aid.version)
    update = obj.get("update_date")
    if update:
        rec["datestamp"] = _str(update, "update_date")[:10]
    try:
        return ArxivRecord(**rec)
    except ValidationError as exc:
        raise KaggleRecordError(
            f"invalid record: {exc.errors()[0].get('loc')} {exc.errors()[0].get('msg')}"
        ) from None


def _open(path: Path) -> IO[bytes]:
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")


def iter_kaggle_snapshot(path: str | Path) -> Iterator[ArxivRecord | FailedRecord]:
    """Stream the snapshot; a bad line becomes a :class:`FailedRecord` (position = 0-based line)."""
    path = Path(path)
    source = str(path)
    with _open(path) as fh:
        for position, line in enumerate(fh):
            if not line.strip():
                continue
            identifier = ""
            try:
                obj = json.loads(line)
                if isinstance(obj, dict) and isinstance(obj.get("id"), str):
                    identifier = obj["id"]
                yield record_from_kaggle(obj)
            except (
                ValueError,
                UnicodeDecodeError,
            ) as exc:  # JSONDecodeError and KaggleRecordError are ValueErrors
                reason = f"invalid JSON: {exc}" if isinstance(exc, json.JSONDecodeError) else str(exc)
                yield FailedRecord(source=source, position=position, identifier=identifier, reason=reason)
