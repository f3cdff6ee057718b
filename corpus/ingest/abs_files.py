"""arXiv ``.abs`` files (arXiv's own per-paper metadata files) -> :class:`ArxivRecord`.

Users bootstrap from a mirror of these before following OAI. Layout::

    ------------------------------------------------------------------------------
    \\\\
    arXiv:0704.0001                      (older files: "Paper: hep-th/9901001")
    From: Pavel Nadolsky <...>
    Date: Mon, 2 Apr 2007 19:18:42 GMT   (443kb)
    Date (revised v2): Tue, 24 Jul 2007 20:10:27 GMT   (370kb)

    Title: Calculation of prompt diphoton production cross sections at Tevatron and
      LHC energies
    Authors: C. Bal\\'azs, E. L. Berger, P. M. Nadolsky, C.-P. Yuan
    Categories: hep-ph
    Comments: ... / Report-no: / MSC-class: / ACM-class: / Journal-ref: / DOI: / License:
    \\\\
      abstract ...
    \\\\

Header values continue on lines that start with white space. The dashes and the
first ``\\\\`` are missing in some old copies (the KDD-cup hep-th set), so both
are optional; what is required is an id and a ``\\\\`` line after the header.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from corpus.ingest.arxiv_ids import InvalidArxivId, parse
from corpus.ingest.authors import parse_author_string
from corpus.ingest.records import ArxivRecord, FailedRecord, Version, normalize_ws, set_versions, version_date

__all__ = ["AbsParseError", "read_abs", "iter_abs_files", "version_date", "strip_doi_prefix"]


class AbsParseError(ValueError):
    """An ``.abs`` file that cannot be read; the message names the file and the reason."""


_KEY = re.compile(r"^([A-Za-z][A-Za-z-]*(?:\s*\([^)]*\))?)\s*:\s?(.*)$")
_REVISED = re.compile(r"^date\s*\(revised(?:\s+v(\d+))?\)$", re.IGNORECASE)
_DATE_VALUE = re.compile(r"^(.*?)\s*(?:\(([^)]*)\))?\s*$")
_FROM_ANGLE = re.compile(r"^(.*?)\s*<[^>]*>\s*$")
_FROM_PAREN = re.compile(r"^\S+@\S+\s*\((.*)\)\s*$")
_SEPARATOR = "\\\\"
_DOI_PREFIX = re.compile(r"^\s*doi:\s*", re.IGNORECASE)

_FIELDS = {
    "title": "title",
    "authors": "authors_raw",
    "comments": "comments",
    "report-no": "report_no",
    "journal-ref": "journal_ref",
    "doi": "doi",
    "license": "license",
    "msc-class": "msc_class",
    "acm-class": "acm_class",
}


def strip_doi_prefix(doi: str) -> str:
    """``doi:10.1103/X`` (as some files write it) -> ``10.1103/X``."""
    return _DOI_PREFIX.sub("", doi)


def _submitter(value: str) -> str:
    m = _FROM_ANGLE.match(value)
    if m:
        return m.group(1).strip().strip('"')
    m = _FROM_PAREN.match(value)
    if m:
        return m.group(1).strip()
    return value.strip()


def _split(text: str) -> tuple[list[str], list[str]]:
    """(header lines, abstract lines) between the ``\\\\`` separators."""
    lines = text.splitlines()
    i = 0
    while i < len(lines) and (not lines[i].strip() or set(lines[i].strip()) == {"-"}):
        i += 1
    if i < len(lines) and lines[i].strip() == _SEPARATOR:
        i += 1
    header: list[str] = []
    while i < len(lines) and lines[i].strip() != _SEPARATOR:
        header.append(lines[i])
        i += 1
    if i >= len(lines):
        raise ValueError("no '\\\\' line after the header")
    i += 1
    abstract: list[str] = []
    while i < len(lines) and lines[i].strip() != _SEPARATOR:
        abstract.append(lines[i])
        i += 1
    return header, abstract


def _header_fields(lines: list[str]) -> list[tuple[str, str]]:
    fields: list[tuple[str, str]] = []
    for line in lines:
        if not line.strip():
            continue
        if line[0].isspace() and fields:
            key, value = fields[-1]
            fields[-1] = (key, f"{value} {line.strip()}")
            continue
        m = _KEY.match(line)
        if not m:
            raise ValueError(f"unexpected header line {line[:60]!r}")
        fields.append((m.group(1).strip(), m.group(2).strip()))
    return fields


def _id_from_path(path: Path) -> str | None:
    """``.../papers/0704/0704.0001.abs`` or ``.../hep-th/papers/9901/9901001.abs``."""
    stem = path.name[: -len(".abs")] if path.name.endswith(".abs") else path.stem
    if "." in stem:
        return stem
    parts = path.parts
    if len(parts) >= 4 and parts[-3] == "papers":
        return f"{parts[-4]}/{stem}"
    return None


def _parse(text: str, path: Path | None) -> ArxivRecord:
    header, abstract = _split(text)
    rec: dict = {"source_format": "abs", "abstract": normalize_ws(" ".join(abstract))}
    raw_id = None
    versions: list[Version] = []
    for key, value in _header_fields(header):
        low = key.lower()
        if low in ("arxiv", "paper") or low.startswith("paper ("):
            if value and raw_id is None:
                raw_id = value.split()[0]
        elif low == "from":
            rec["submitter"] = _submitter(value)
        elif low == "date" or _REVISED.match(low):
            m = _REVISED.match(low)
            number = int(m.group(1)) if m and m.group(1) else (versions[-1].version + 1 if versions else 1)
            dm = _DATE_VALUE.match(value)
            date_text, extra = (dm.group(1), dm.group(2) or "") if dm else (value, "")
            size, _, source_type = extra.partition(",")
            versions.append(
                Version(
                    version=number,
                    date=normalize_ws(date_text),
                    size=size.strip(),
                    source_type=source_type.strip(),
                )
            )
        elif low == "categories":
            rec["categories"] = value.split()
        elif low in _FIELDS:
            rec[_FIELDS[low]] = normalize_ws(value)
    rec["doi"] = strip_doi_prefix(rec.get("doi", ""))
    if raw_id is None and path is not None:
        raw_id = _id_from_path(path)
    if not raw_id:
        raise ValueError("no 'arXiv:' or 'Paper:' line and no id in the file name")
    try:
        aid = parse(raw_id)
    except InvalidArxivId as exc:
        raise ValueError(str(exc)) from None
    rec["id"] = aid.id
    if "categories" not in rec and aid.old_style:
        rec["categories"] = [aid.id.split("/")[0]]  # very old files: the archive is the category
    set_versions(rec, versions, aid.version)
    rec["authors"] = parse_author_string(rec.get("authors_raw", ""))
    return ArxivRecord(**rec)


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # pre-2000 files are not always UTF-8


def read_abs(path_or_text: str | Path | bytes) -> ArxivRecord:
    """One ``.abs`` file (a path, its text or its bytes) -> record; :class:`AbsParseError` if malformed."""
    path: Path | None = None
    if isinstance(path_or_text, bytes):
        text = _decode(path_or_text)
    elif isinstance(path_or_text, Path) or ("\n" not in path_or_text and path_or_text.endswith(".abs")):
        path = Path(path_or_text)
        try:
            text = _decode(path.read_bytes())
        except OSError as exc:
            raise AbsParseError(f"{path}: cannot read: {exc}") from exc
    else:
        text = path_or_text
    try:
        return _parse(text, path)
    except (ValueError, ValidationError) as exc:  # pydantic's ValidationError is a ValueError too
        where = str(path) if path else "<text>"
        raise AbsParseError(f"{where}: {exc}") from exc


def iter_abs_files(root: str | Path) -> Iterator[ArxivRecord | FailedRecord]:
    """Every ``*.abs`` under ``root`` in path order; a bad file becomes a :class:`FailedRecord`."""
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"no .abs tree at {root}")
    paths = [root] if root.is_file() else sorted(root.rglob("*.abs"))
    for position, path in enumerate(paths):
        try:
            yield read_abs(path)
        except AbsParseError as exc:
            guess = _id_from_path(path) or ""
            yield FailedRecord(source=str(path), position=position, identifier=guess, reason=str(exc))
