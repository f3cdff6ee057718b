"""The arXiv metadata record: one model for every reader (OAI arXiv / arXivRaw / oai_dc,
the Kaggle snapshot, ``.abs`` files), with the fields of SPEC.md §1."""

from __future__ import annotations

import datetime as dt
import email.utils
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# The version of arxiv_metadata and its failures (corpus.versions): bump it whenever their rows change.
# 2: a failure row names its page relative to the landing zone, and a page's reason no longer repeats it.
METADATA_VERSION = "corpus.ingest.records/2"

SourceFormat = Literal["arXiv", "arXivRaw", "oai_dc", "kaggle", "abs"]
# Free-text fields whose whitespace runs are collapsed on validation (hard-wrapped in the sources).
_WS_FIELDS = ("title", "abstract", "comments", "journal_ref", "report_no", "submitter")


def normalize_ws(text: str | None) -> str:
    """Collapse runs of whitespace (titles and abstracts are hard-wrapped at ~72-79 columns).

    Same result as ``" ".join(text.split())``, which is the fallback. The fast path
    (most texts: single spaces, line breaks as ``\n``) avoids a string object per
    word: every whitespace character except the space is non-printable (checked
    over all of Unicode by tests/test_oai.py), so a stripped printable text
    without two spaces in a row has nothing left to collapse.
    """
    if not text:
        return ""
    out = text.strip()
    if "\n" in out:
        out = out.replace("\n", " ")
    if "  " not in out and out.isprintable():
        return out
    return " ".join(out.split())


class AuthorName(BaseModel):
    """arXiv's author split: keyname (surname), forenames, suffix, plus affiliations."""

    model_config = ConfigDict(extra="forbid")
    keyname: str
    forenames: str = ""
    suffix: str = ""
    affiliations: list[str] = Field(default_factory=list)


class Version(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int
    date: str = ""  # as arXiv writes it, e.g. "Mon, 2 Apr 2007 19:18:42 GMT"
    size: str = ""
    source_type: str = ""


class ArxivRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str  # canonical, without version (corpus.ingest.arxiv_ids.normalize)
    version: int | None = None  # latest version known to the source
    datestamp: dt.date | None = None  # OAI header datestamp (the partition key)
    sets: list[str] = Field(default_factory=list)
    deleted: bool = False
    submitter: str = ""
    authors_raw: str = ""
    authors: list[AuthorName] = Field(default_factory=list)
    title: str = ""
    abstract: str = ""
    comments: str = ""
    journal_ref: str = ""
    doi: str = ""
    report_no: str = ""
    msc_class: str = ""
    acm_class: str = ""
    categories: list[str] = Field(default_factory=list)  # the first is the primary category
    license: str = ""
    versions: list[Version] = Field(default_factory=list)
    created: dt.date | None = None
    updated: dt.date | None = None
    source_format: SourceFormat = "arXiv"

    @model_validator(mode="before")
    @classmethod
    def _ws(cls, data: object) -> object:
        """Collapse whitespace in the free-text fields (one call per record rather than
        one per field: this runs for every record read, DESIGN.md §6)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)  # never change the caller's dict
        for key in _WS_FIELDS:
            if key in data:
                value = data[key]
                if isinstance(value, str) or value is None:
                    data[key] = normalize_ws(value)
        return data

    @property
    def primary_category(self) -> str:
        return self.categories[0] if self.categories else ""

    def to_row(self) -> dict:
        """A flat dict for Parquet (lists and structs stay nested)."""
        row = self.model_dump()
        row["primary_category"] = self.primary_category
        return row


def utf8_text(text: str) -> str:
    """``text`` with lone surrogates (an undecodable file name, via ``os.fsdecode``) shown as
    ``\\xNN``, so it can be written to Parquet (polars refuses what is not valid UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class FailedRecord(BaseModel):
    """A record that could not be read, kept with its reason instead of being lost."""

    model_config = ConfigDict(extra="forbid")
    source: str  # file or URL the record came from
    position: int  # index of the record in that source
    identifier: str = ""  # whatever id could be read, if any
    datestamp: str = ""  # the header datestamp when it could be read (the partition it belongs to)
    reason: str

    @field_validator("source", "identifier", "datestamp", "reason")
    @classmethod
    def _utf8(cls, value: str) -> str:
        return utf8_text(value)


# ---------------------------------------------------------------- the Parquet table


def metadata_schema():
    """The column types of ``arxiv_metadata`` (fixed, so empty partitions have them too)."""
    import polars as pl

    author = pl.Struct(
        {"keyname": pl.Utf8, "forenames": pl.Utf8, "suffix": pl.Utf8, "affiliations": pl.List(pl.Utf8)}
    )
    version = pl.Struct({"version": pl.Int64, "date": pl.Utf8, "size": pl.Utf8, "source_type": pl.Utf8})
    return {
        "id": pl.Utf8,
        "version": pl.Int64,
        "datestamp": pl.Date,
        "sets": pl.List(pl.Utf8),
        "deleted": pl.Boolean,
        "submitter": pl.Utf8,
        "authors_raw": pl.Utf8,
        "authors": pl.List(author),
        "title": pl.Utf8,
        "abstract": pl.Utf8,
        "comments": pl.Utf8,
        "journal_ref": pl.Utf8,
        "doi": pl.Utf8,
        "report_no": pl.Utf8,
        "msc_class": pl.Utf8,
        "acm_class": pl.Utf8,
        "categories": pl.List(pl.Utf8),
        "license": pl.Utf8,
        "versions": pl.List(version),
        "created": pl.Date,
        "updated": pl.Date,
        "source_format": pl.Utf8,
        "primary_category": pl.Utf8,
        "is_new": pl.Boolean,
    }


def is_new(record: ArxivRecord) -> bool:
    """A record is *new* when it has one version only (no ``updated`` date, at most
    one entry in ``versions``); anything else is an update of an earlier paper."""
    return record.updated is None and len(record.versions) <= 1


def records_frame(records: list[ArxivRecord]):
    """Records -> a polars DataFrame with :func:`metadata_schema`."""
    import polars as pl

    rows = []
    for r in records:
        row = r.to_row()
        row["is_new"] = is_new(r)
        rows.append(row)
    return pl.DataFrame(rows, schema=metadata_schema())


def failures_frame(failures: list[FailedRecord]):
    import polars as pl

    schema = {
        "source": pl.Utf8,
        "position": pl.Int64,
        "identifier": pl.Utf8,
        "datestamp": pl.Utf8,
        "reason": pl.Utf8,
    }
    return pl.DataFrame([f.model_dump() for f in failures], schema=schema)


# ---------------------------------------------------------------- versions (every reader)


def set_versions(rec: dict, versions: list[Version], id_version: int | None) -> None:
    """Versions in order, and what follows from them: the latest version, ``created`` (v1's
    date) and ``updated`` (the latest date, when there is more than one version)."""
    versions.sort(key=lambda v: v.version)
    rec["versions"] = versions
    if versions:
        rec["version"] = versions[-1].version
        rec["created"] = version_date(versions[0].date)
        if len(versions) > 1:
            rec["updated"] = version_date(versions[-1].date)
    elif id_version:
        rec["version"] = id_version


def version_date(value: str) -> dt.date | None:
    """``'Mon, 2 Apr 2007 19:18:42 GMT'`` (also ``'Thu, 2 JAN 92 12:17 N'``) -> the date as written."""
    parts = email.utils.parsedate_tz(value) if value else None
    if not parts:
        return None
    try:
        return dt.date(parts[0], parts[1], parts[2])
    except (TypeError, ValueError):
        return None
