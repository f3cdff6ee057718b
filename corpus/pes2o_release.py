"""peS2o as data: the daily ``pes2o`` table and the ``v1``/``v2`` release writer.

:mod:`corpus.pes2o` measures one document and decides; this module runs it over
the store (no Dagster here, the assets in ``corpus_assets.pes2o`` are thin).

**Daily** (:func:`pes2o_day`): for every paper ``papers`` kept on a day, the
signals are computed once, on the paper as peS2o sees it: the canonical title
and abstract (the card takes them from metadata, not from Grobid) and, when
``papers`` chose a full text, that parse's body paragraphs. Two rows follow,
one per source: ``s2orc`` (full text; a paper without one is dropped as
``no_full_text``) and ``s2ag`` (title and abstract; metadata-only papers too),
each with the v1 and v2 verdict and drop reason, the signals as JSON, and the
released ``text`` (with its whitespace word count) when either version keeps
it. v1 and v2 keep the same text for a source, so it is stored once.
``added`` is the partition's day: the OAI datestamp on which the paper came into
the corpus (a date, not the wall clock, so a re-run gives the same bytes);
``created`` is the paper's arXiv ``created`` date (its year's 1 January when
only the year is known). A paper that cannot be measured gets rows with reason
``failed`` and the error in ``detail``; the day goes on. A paper the S2ORC
filters of ``papers`` dropped gets rows too, with reason ``paper_filter`` and
the ``papers`` drop reason in ``detail`` and no signals: so the funnel starts
from every paper, and a paper dropped on a later day is not released from an
earlier day's row.

**Release** (:func:`write_release`): a paper seen on several days counts once, with its
latest day's verdict and text (``added`` is the *first* day it was seen). Documents are
grouped by the ISO week of their latest delivery; each group's kept documents are streamed
in (source, id) order (an external sort in buckets of ``sort_bucket_bytes`` of text: memory
does not grow with the group), put in ``train`` or ``valid`` by :func:`corpus.pes2o.split_for`
against the cutoff setting (documents created after the cutoff belong to no split and are
counted), and written as

    <root>/<version>/<split>/<source>-<YYYY>-W<WW>-00000.jsonl.gz   one JSON object a line
    <root>/<version>/<split>/<source>-<YYYY>-W<WW>-00000.parquet    the same documents
    <root>/<version>/manifest.json    files, statistics, funnel, settings, per-group counts
    <root>/<version>/README.md        the Hugging Face dataset card

A shard holds at most ``max_shard_bytes`` of JSON lines before compression (a longer single
document gets a shard of its own). gzip headers carry no name and mtime 0, rows are sorted
and nothing depends on the clock, so the same input gives byte-identical files. A new run
rebuilds only the groups the changed days can touch and hard-links the rest (the partition
stamps it was built from are kept in ``$CORPUS_HOME/.index``, outside the release); the
whole version directory is written next to the old one and swapped in, so readers see the
old release or the new one.
"""

from __future__ import annotations

import bisect
import datetime as dt
import gzip
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from corpus import pes2o
from corpus.dataset_card import STRING, CardConfig, card_text, markdown_table, write_card
from corpus.papers import Paragraph, ParseSource, StructuredDoc
from corpus.stages import chosen_texts, upstream
from corpus.store import Store, atomic_write_bytes, swap_dir

__all__ = [
    "ASSET",
    "DEFAULT_CUTOFF",
    "DEFAULT_MAX_SHARD_BYTES",
    "DOC_FIELDS",
    "PES2O_SCHEMA",
    "RULES",
    "SOURCES",
    "SPLITS",
    "ReleaseSettings",
    "funnel_png",
    "funnel_rows",
    "paper_doc",
    "paper_rows",
    "pes2o_day",
    "release_dir",
    "write_release",
]

ASSET = "pes2o"
SOURCES = ("s2orc", "s2ag")
SPLITS = ("train", "valid")
DOC_FIELDS = ("added", "created", "id", "source", "text", "version")
DEFAULT_CUTOFF = "2023-01-03"  # the card's v1/v2 knowledge cutoff: train < 2022-12-01, valid to 2023-01-03
DEFAULT_MAX_SHARD_BYTES = 128 * 1024 * 1024  # JSON lines before gzip, per shard
RELEASES = ("releases", "pes2o")

# Drop reasons in the order corpus.pes2o applies them (the funnel's order); "paper_filter"
# (dropped by the S2ORC filters of ``papers``), "failed" (not measurable) and
# "no_full_text" (s2orc without a chosen parse) come first.
RULES: dict[str, tuple[str, ...]] = {
    "s2orc": (
        "paper_filter",
        "failed",
        "no_full_text",
        "no_title",
        "no_abstract",
        "not_english",
        "too_few_words",
        "no_year",
        "published_before_1970",
        "too_few_paragraphs",
        "top_word_not_alpha",
        "top_word_too_frequent",
    ),
    "s2ag": (
        "paper_filter",
        "failed",
        "no_title",
        "no_abstract",
        "abstract_not_english",
        "title_not_english",
        "abstract_low_probability",
        "abstract_too_short",
        "abstract_too_long",
        "top_word_not_alpha",
        "no_year",
        "published_before_1970",
        "ocr_spaced_letters",
    ),
}

PES2O_SCHEMA: dict[str, Any] = {
    "id": pl.Utf8,
    "source": pl.Utf8,  # s2orc | s2ag
    "added": pl.Utf8,  # peS2o timestamp of the partition's day
    "created": pl.Utf8,  # peS2o timestamp of the paper's created date (null: unknown)
    "created_date": pl.Date,
    "year": pl.Int64,
    "v1_keep": pl.Boolean,
    "v1_reason": pl.Utf8,
    "v2_keep": pl.Boolean,
    "v2_reason": pl.Utf8,
    "detail": pl.Utf8,  # the error (reason "failed") or the papers drop reason ("paper_filter")
    "text": pl.Utf8,  # the released text when v1 or v2 keeps it
    "words": pl.Int64,  # whitespace words of text
    "signals": pl.Utf8,  # corpus.pes2o.Signals as JSON (null when not measured)
}

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


# --------------------------------------------------------------------------- daily


def _timestamp(day: dt.date) -> str:
    return f"{day.isoformat()}T00:00:00.000Z"


def _created(row: Mapping[str, Any]) -> dt.date | None:
    created = row.get("created")
    if isinstance(created, dt.date):
        return created
    year = row.get("year")
    return dt.date(year, 1, 1) if isinstance(year, int) and 1 <= year <= 9999 else None


class _BodyParagraph(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: str
    section: str | None = ""


class _ChosenBody(BaseModel):
    """What peS2o reads of a stored parse: its source and its body paragraphs' text and section."""

    model_config = ConfigDict(extra="ignore")
    source: ParseSource
    body_text: list[_BodyParagraph]


def paper_doc(row: Mapping[str, Any], parse_json: str | bytes | None) -> StructuredDoc:
    """The paper as peS2o measures it: canonical title and abstract, the chosen body.

    ``parse_json`` is the chosen parse as stored (a :class:`StructuredDoc` as JSON).
    Only what :func:`corpus.pes2o.compute_signals` reads is decoded and validated
    (paragraph text and section, in pydantic's JSON parser); bibliography, spans
    and the rest are skipped without becoming Python objects, which makes this
    about twice as fast as ``json.loads`` alone. Bad JSON raises ``ValueError``.
    """
    abstract = [Paragraph(text=t) for t in _PARAGRAPH_BREAK.split(row.get("abstract") or "") if t.strip()]
    body: list[Paragraph] = []
    source = "s2orc"  # no parse: the value is unused (ocr_prone is passed explicitly)
    if parse_json is not None:
        parse = _ChosenBody.model_validate_json(parse_json)
        source = parse.source
        body = [Paragraph(text=p.text, section=p.section or "") for p in parse.body_text]
    return StructuredDoc(
        paper_id=row["id"],
        source=source,
        title=row.get("title") or "",
        year=row.get("year"),
        abstract=abstract,
        body_text=body,
    )


def paper_rows(row: Mapping[str, Any], parse_json: str | bytes | None, day: dt.date) -> list[dict]:
    """The s2orc and s2ag rows of one kept paper (raises on input it cannot measure).

    ``row``: its ``papers`` row; ``parse_json``: its chosen parse as stored (None when
    it has none). What :func:`pes2o_day` does for every kept paper of a day.
    """
    has_parse = parse_json is not None
    doc = paper_doc(row, parse_json)
    created = _created(row)
    signals = pes2o.compute_signals(
        doc,
        row.get("year"),
        ocr_prone=(row.get("abstract_source") or "") in pes2o.OCR_PRONE_SOURCES,
    )
    outcomes = pes2o.release(doc, signals, day, created or dt.date(1970, 1, 1))
    base = {
        "id": row["id"],
        "added": _timestamp(day),
        "created": _timestamp(created) if created else None,
        "created_date": created,
        "year": row.get("year"),
        "signals": signals.model_dump_json(),
    }
    rows = []
    for source in SOURCES:
        out = {**base, "source": source}
        texts = set()
        for o in outcomes:
            if o.source != source:
                continue
            keep, reason = o.keep, o.reason
            if source == "s2orc" and not has_parse:
                keep, reason = False, "no_full_text"
            out[f"{o.version}_keep"], out[f"{o.version}_reason"] = keep, reason
            if keep:
                texts.add(o.document["text"])
        if len(texts) > 1:  # corpus.pes2o keeps one text per source; anything else is a bug there
            raise ValueError(f"{row['id']}: v1 and v2 {source} texts differ")
        if texts:
            out["text"] = texts.pop()
            out["words"] = pes2o.count_tokens(out["text"])
        rows.append(out)
    return rows


def _dropped_rows(row: Mapping[str, Any], day: dt.date, reason: str, detail: str | None) -> list[dict]:
    """Both sources dropped before measuring, for ``reason`` (``failed`` / ``paper_filter``)."""
    created = _created(row)
    return [
        {
            "id": row["id"],
            "source": source,
            "added": _timestamp(day),
            "created": _timestamp(created) if created else None,
            "created_date": created,
            "year": row.get("year"),
            "v1_keep": False,
            "v1_reason": reason,
            "v2_keep": False,
            "v2_reason": reason,
            "detail": detail,
        }
        for source in SOURCES
    ]


def pes2o_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows -> a frame with exactly :data:`PES2O_SCHEMA`, sorted by (id, source)."""
    rows = [{k: r.get(k) for k in PES2O_SCHEMA} for r in rows]
    frame = (
        pl.DataFrame(rows, schema=PES2O_SCHEMA, orient="row") if rows else pl.DataFrame(schema=PES2O_SCHEMA)
    )
    return frame.sort("id", "source")


def pes2o_day(home: str | Path, day: str) -> dict:
    """Signals and v1/v2 verdicts of one day's kept papers; writes ``pes2o/date=<day>``.

    Returns a JSON-able summary: ``papers`` (all of the day's, kept or not), ``rows``, ``kept`` (``{"s2orc_v1": n, ...}``),
    ``reasons`` (``{"s2orc_v1": {reason: n}}``), ``failures`` (``[{id, reason}]``),
    ``duplicates`` (ids listed twice in the day's ``papers``; the first row counts).
    """
    store = Store(Path(home))
    date = dt.date.fromisoformat(day)
    papers = upstream(store, "papers", day)
    texts = chosen_texts(store, day)  # decoded one paper at a time below (paper_doc)
    rows: list[dict] = []
    failures: list[dict] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    cols = ["id", "title", "abstract", "abstract_source", "year", "created", "kept", "drop_reason"]
    for row in papers.select(cols).iter_rows(named=True):
        if row["id"] in seen:
            duplicates.append(row["id"])
            continue
        seen.add(row["id"])
        if not row["kept"]:
            rows.extend(_dropped_rows(row, date, "paper_filter", row["drop_reason"]))
            continue
        try:
            rows.extend(paper_rows(row, texts.get(row["id"]), date))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # one paper, not the day
            failed = _dropped_rows(row, date, "failed", f"{type(exc).__name__}: {exc}"[:500])
            failures.append({"id": row["id"], "reason": failed[0]["detail"]})
            rows.extend(failed)
    frame = pes2o_frame(rows)
    store.write_partition(ASSET, day, frame)
    kept: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {}
    for r in rows:
        for v in pes2o.VERSIONS:
            key = f"{r['source']}_{v}"
            kept[key] += bool(r[f"{v}_keep"])
            if not r[f"{v}_keep"]:
                reasons.setdefault(key, Counter())[r[f"{v}_reason"]] += 1
    return {
        "day": day,
        "papers": len(seen),
        "rows": frame.height,
        "kept": {f"{s}_{v}": kept[f"{s}_{v}"] for s in SOURCES for v in pes2o.VERSIONS},
        "reasons": {k: dict(c) for k, c in sorted(reasons.items())},
        "failures": failures,
        "duplicates": duplicates,
    }


# --------------------------------------------------------------------------- release


@dataclass(frozen=True)
class ReleaseSettings:
    """How a release is cut: knowledge cutoff (valid = from the 1st of the month before
    its month up to it, :func:`corpus.pes2o.split_for`), shard bound, gzip level."""

    cutoff: str = DEFAULT_CUTOFF
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES
    compresslevel: int = 6
    row_group_docs: int = 1000  # Parquet row groups: bounded memory, fixed so bytes repeat
    duckdb_memory_limit: str = "1GB"
    sort_bucket_bytes: int = 128 * 1024 * 1024  # kept text sorted in memory at once (peak memory)

    def __post_init__(self) -> None:
        dt.date.fromisoformat(self.cutoff)  # a clear error for a malformed setting
        if self.max_shard_bytes < 1:
            raise ValueError(f"max_shard_bytes must be positive, got {self.max_shard_bytes}")
        if self.sort_bucket_bytes < 1:
            raise ValueError(f"sort_bucket_bytes must be positive, got {self.sort_bucket_bytes}")
        if not 0 <= self.compresslevel <= 9:
            raise ValueError(f"compresslevel must be 0-9, got {self.compresslevel}")


def release_dir(home: str | Path, version: str) -> Path:
    """``$CORPUS_HOME/releases/pes2o/<version>`` (DESIGN.md §7)."""
    return Path(home).joinpath(*RELEASES, version)


_PA_SCHEMA = pa.schema([(f, pa.string()) for f in DOC_FIELDS])


@dataclass
class _ShardWriter:
    """Sequential shards of one (source, split): gzip JSONL and Parquet side by side."""

    directory: Path
    source: str
    settings: ReleaseSettings
    files: list[dict] = field(default_factory=list)
    _index: int = -1
    _raw: Any = None
    _gz: gzip.GzipFile | None = None
    _bytes: int = 0
    _docs: int = 0
    _pq: pq.ParquetWriter | None = None
    _buffer: list[dict] = field(default_factory=list)

    def write(self, doc: dict) -> None:
        line = (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        if self._gz is None or (self._docs and self._bytes + len(line) > self.settings.max_shard_bytes):
            self._open_next()
        self._gz.write(line)
        self._bytes += len(line)
        self._docs += 1
        self._buffer.append(doc)
        if len(self._buffer) >= self.settings.row_group_docs:
            self._flush_parquet()

    def _name(self, ext: str) -> Path:
        return self.directory / f"{self.source}-{self._index:05d}.{ext}"

    def _open_next(self) -> None:
        self.close()
        self._index += 1
        self.directory.mkdir(parents=True, exist_ok=True)
        self._raw = open(self._name("jsonl.gz"), "wb")  # noqa: SIM115 (closed in close())
        self._gz = gzip.GzipFile(
            filename="", mode="wb", fileobj=self._raw, compresslevel=self.settings.compresslevel, mtime=0
        )
        self._pq = pq.ParquetWriter(self._name("parquet"), _PA_SCHEMA, compression="zstd")
        self._bytes = self._docs = 0

    def _flush_parquet(self) -> None:
        if self._buffer and self._pq is not None:
            self._pq.write_table(pa.Table.from_pylist(self._buffer, schema=_PA_SCHEMA))
        self._buffer = []

    def close(self) -> None:
        if self._gz is None:
            return
        self._flush_parquet()
        self._gz.close()
        self._raw.close()
        self._pq.close()
        self.files.append({"jsonl": self._name("jsonl.gz"), "parquet": self._name("parquet"),
                           "documents": self._docs, "jsonl_bytes": self._bytes})  # fmt: skip
        self._gz = self._raw = self._pq = None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def funnel_rows(reasons: Mapping[str, Mapping[str | None, int]], after_cutoff: Mapping[str, int],
                splits: Mapping[tuple[str, str], int]) -> list[dict]:  # fmt: skip
    """The filter funnel per source: ``{source, step, dropped, remaining}`` rows.

    ``reasons[source]`` counts each drop reason (``None`` = kept) over the input
    rows, in :data:`RULES` order (a reason not listed there is added after them,
    never lost); then ``created_after_cutoff`` and one ``split:<name>`` line per split.
    """
    out = []
    for source in SOURCES:
        counts = dict(reasons.get(source, {}))
        remaining = sum(counts.values())
        out.append({"source": source, "step": "input", "dropped": 0, "remaining": remaining})
        extra = sorted(r for r in counts if r is not None and r not in RULES[source])
        for reason in (*RULES[source], *extra):
            n = counts.get(reason, 0)
            remaining -= n
            out.append({"source": source, "step": reason, "dropped": n, "remaining": remaining})
        n = after_cutoff.get(source, 0)
        remaining -= n
        out.append({"source": source, "step": "created_after_cutoff", "dropped": n, "remaining": remaining})
        for split in SPLITS:
            out.append({"source": source, "step": f"split:{split}", "dropped": 0,
                        "remaining": splits.get((source, split), 0)})  # fmt: skip
    return out


def funnel_png(funnel: list[dict], title: str = "peS2o filter funnel") -> bytes:
    """PNG of the funnel: documents remaining after each step, one panel per source."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    steps = {
        s: [r for r in funnel if r["source"] == s and not r["step"].startswith("split:")] for s in SOURCES
    }
    height = max(len(v) for v in steps.values()) * 0.28 + 1.2
    fig = Figure(figsize=(11, height), dpi=90)
    FigureCanvasAgg(fig)
    for i, source in enumerate(SOURCES, start=1):
        ax = fig.add_subplot(1, len(SOURCES), i)
        rows = steps[source][::-1]
        ax.barh([r["step"] for r in rows], [r["remaining"] for r in rows], color="tab:blue")
        for y, r in enumerate(rows):
            if r["dropped"]:
                ax.annotate(f"-{r['dropped']:,}", (r["remaining"], y), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7, color="tab:red")  # fmt: skip
        ax.set_title(source)
        ax.set_xlabel("documents remaining")
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


FORMAT = 2  # 2: shards grouped by the ISO week of each document's latest delivery (incremental)
LATEST = "_latest"  # DuckDB table: (id, source) -> latest delivery date, first day, its group


def _group_of(day: str) -> str:
    """The group of a document delivered last on ``day``: its ISO week (``2024-W09``). A week
    keeps a new day's rewrite small (its own week, plus the weeks its re-delivered papers came
    from) while a shard stays near a week of arXiv (~7,000 documents at today's rates)."""
    year, week, _ = dt.date.fromisoformat(day).isocalendar()
    return f"{year}-W{week:02d}"


def _connect(store: Store, settings: ReleaseSettings, spill: Path) -> duckdb.DuckDBPyConnection:
    """DuckDB with ``_latest``: each (id, source)'s latest delivery day, its first day and the
    group it is grouped under. Reads only the id, source and date columns of the partitions."""
    con = duckdb.connect()
    con.execute(f"SET memory_limit='{settings.duckdb_memory_limit}'")
    con.execute(f"SET temp_directory='{spill}'")
    con.execute("SET preserve_insertion_order=false")
    glob = store.asset_dir(ASSET).resolve() / "date=*" / "*.parquet"
    con.execute(
        f"CREATE TEMP TABLE {LATEST} AS SELECT id, source, max(CAST(date AS DATE)) AS date, "
        "min(CAST(date AS DATE)) AS first_day, strftime(max(CAST(date AS DATE)), '%G-W%V') AS grp "
        f"FROM read_parquet('{glob}', hive_partitioning=true, union_by_name=true) "
        "WHERE id IS NOT NULL AND source IS NOT NULL GROUP BY id, source"
    )
    return con


def _affected_groups(
    con: duckdb.DuckDBPyConnection, store: Store, changed: list[str], gone: list[str]
) -> set[str]:
    """Groups whose documents a set of changed (new, re-written or removed) days can change:
    the changed days' own groups, and the groups where the ids they hold were grouped before."""
    groups = {_group_of(d) for d in [*changed, *gone]}
    if not changed:
        return groups
    files = ", ".join(f"'{store.partition_dir(ASSET, d).resolve() / 'part-0.parquet'}'" for d in changed)
    dates = ", ".join(f"DATE '{d}'" for d in changed)
    glob = store.asset_dir(ASSET).resolve() / "date=*" / "*.parquet"
    rows = con.execute(
        "WITH touched AS (SELECT DISTINCT id, source FROM read_parquet([" + files + "])) "
        "SELECT DISTINCT strftime(max(CAST(p.date AS DATE)), '%G-W%V') "
        f"FROM read_parquet('{glob}', hive_partitioning=true) p JOIN touched USING (id, source) "
        f"WHERE CAST(p.date AS DATE) NOT IN ({dates}) GROUP BY p.id, p.source"
    ).fetchall()
    return groups | {g for (g,) in rows if g}


def _group_view(con: duckdb.DuckDBPyConnection, store: Store, version: str, group: str) -> bool:
    """``grp``: the latest rows of the documents grouped under ``group`` (they live in that
    group's partitions), with their first day. False when the group has no partition."""
    days = [d for d in store.partitions(ASSET) if _group_of(d) == group]
    if not days:
        return False
    files = ", ".join(f"'{store.partition_dir(ASSET, d).resolve() / 'part-0.parquet'}'" for d in days)
    con.execute(
        "CREATE OR REPLACE TEMP VIEW grp AS SELECT s.source, s.id, l.first_day, "
        f"s.{version}_keep AS keep, s.{version}_reason AS reason, s.created, s.created_date, s.words, "
        f"CASE WHEN s.{version}_keep THEN s.text END AS text "
        f"FROM read_parquet([{files}], hive_partitioning=true, union_by_name=true) s "
        f"JOIN {LATEST} l ON s.id = l.id AND s.source = l.source AND CAST(s.date AS DATE) = l.date "
        f"WHERE l.grp = '{group}'"
    )
    return True


# Documents of a group are written in (source, id) order by an external sort of our own:
# DuckDB's ORDER BY holds every text in memory and fails at its memory limit on a few GB of
# text. So: bucket bounds from the keys alone (each bucket a run of consecutive keys with
# about sort_bucket_bytes of kept text), one streaming pass scattering every kept row to its
# bucket's Arrow file, then one bucket at a time sorted in memory. Peak memory is about one
# bucket, whatever the size of the group.
_MAX_BUCKETS = 256  # scatter files open at once; beyond, buckets grow instead
_BATCH = 2048  # rows per Arrow batch read or converted to Python
_SCATTER_COLUMNS = ("source", "id", "first_day", "created", "created_date", "words", "text")


def _bucket_bounds(con: duckdb.DuckDBPyConnection, target: int) -> list[tuple[str, str]]:
    """The first (source, id) of every bucket after the first, in release order."""
    total = con.execute("SELECT coalesce(sum(strlen(text)), 0) FROM grp WHERE keep").fetchone()[0]
    target = max(target, -(-int(total) // _MAX_BUCKETS))
    bounds: list[tuple[str, str]] = []
    filled = 0
    reader = con.execute(
        "SELECT source, id, strlen(text) FROM grp WHERE keep ORDER BY source, id"
    ).to_arrow_reader(1 << 16)
    for batch in reader:
        cols = batch.to_pydict()
        for source, pid, size in zip(*cols.values(), strict=True):
            if filled >= target:  # so at most _MAX_BUCKETS buckets, each under target + one text
                bounds.append((source, pid))
                filled = 0
            filled += size or 0
    return bounds


def _scatter(con: duckdb.DuckDBPyConnection, bounds: list[tuple[str, str]], spill: Path) -> list[Path]:
    """Every kept row of the group into its bucket's Arrow stream file; returns the files in
    bucket order (so in release order)."""
    paths = [spill / f"bucket-{i:05d}.arrows" for i in range(len(bounds) + 1)]
    sinks: dict[int, tuple[Any, pa.ipc.RecordBatchStreamWriter]] = {}
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    reader = con.execute(f"SELECT {', '.join(_SCATTER_COLUMNS)} FROM grp WHERE keep").to_arrow_reader(_BATCH)
    try:
        for batch in reader:
            if bounds:
                keys = zip(batch.column("source").to_pylist(), batch.column("id").to_pylist(), strict=True)
                buckets = np.fromiter(
                    (bisect.bisect_right(bounds, k) for k in keys), np.int64, batch.num_rows
                )
            else:
                buckets = np.zeros(batch.num_rows, np.int64)
            order = np.argsort(buckets, kind="stable")
            ranked = buckets[order]
            cuts = [0, *(np.flatnonzero(np.diff(ranked)) + 1).tolist(), len(ranked)]
            for start, end in zip(cuts, cuts[1:]):  # noqa: B905 (cuts[1:] is one shorter)
                if start == end:
                    continue
                b = int(ranked[start])
                if b not in sinks:
                    sink = pa.OSFile(str(paths[b]), "wb")
                    sinks[b] = (sink, pa.ipc.new_stream(sink, batch.schema, options=options))
                sinks[b][1].write_batch(batch.take(pa.array(order[start:end])))
    finally:
        for sink, writer in sinks.values():
            writer.close()
            sink.close()
    return [p for p in paths if p.exists()]


def _sorted_rows(paths: list[Path]) -> Iterable[tuple]:
    """The scattered rows in (source, id) order, one bucket in memory at a time."""
    keys = [("source", "ascending"), ("id", "ascending")]
    for path in paths:
        with pa.OSFile(str(path), "rb") as fh:
            table = pa.ipc.open_stream(fh).read_all()
        order = pc.sort_indices(table, sort_keys=keys)
        for start in range(0, len(order), _BATCH):
            cols = table.take(order[start : start + _BATCH]).to_pydict()
            yield from zip(*(cols[c] for c in _SCATTER_COLUMNS), strict=True)
        del table, order


def write_release(home: str | Path, version: str, settings: ReleaseSettings | None = None) -> dict:
    """Bring ``releases/pes2o/<version>`` up to date with every ``pes2o`` partition, atomically.

    Documents are grouped by the ISO week of their latest delivery (a paper re-delivered on a
    later day moves to that day's week), and every shard belongs to one group:
    ``<split>/<source>-<YYYY>-W<WW>-<NNNNN>.jsonl.gz`` (and ``.parquet``). A run rebuilds only
    the groups that the days changed since the last release can touch (their own weeks and
    the weeks their papers were grouped under before); the other groups' shards are carried
    over as hard links. Rebuilding a group is the same code in a full build, so the result is
    byte-identical to building from scratch; unchanged inputs rewrite nothing.

    Returns (and writes as ``manifest.json``) ``{version, settings, stats, funnel, files,
    groups}`` plus ``mode`` (``full`` | ``incremental`` | ``unchanged``) and
    ``groups_rebuilt`` (not written): ``stats`` one ``{source, split, documents, words}`` row
    per source and split (the card's table), ``funnel`` as :func:`funnel_rows`, ``files``
    every shard with its documents, bytes and sha256 (paths relative to the version dir).
    """
    if version not in pes2o.VERSIONS:
        raise ValueError(f"unknown peS2o version {version!r}; expected one of {pes2o.VERSIONS}")
    settings = settings or ReleaseSettings()
    store = Store(Path(home))
    inputs = store.partition_stamps(ASSET)
    if not inputs:
        raise FileNotFoundError(f"{ASSET} has no partitions under {store.home}: materialise it first")
    final = release_dir(home, version)
    state_path = store.home / ".index" / f"pes2o_{version}_release.json"
    old = _usable_manifest(final, _settings_dict(settings), state_path)
    if old is not None and old["inputs"] == inputs:
        return {**old, "mode": "unchanged", "groups_rebuilt": 0}
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{version}.staging-"))
    spill = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{version}.spill-"))
    try:
        summary = _write(store, version, settings, inputs, old, final, staging, spill)
        _swap_in(staging, final)
        _write_state(state_path, final, inputs)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    return summary


def _settings_dict(settings: ReleaseSettings) -> dict:
    return {"cutoff": settings.cutoff, "max_shard_bytes": settings.max_shard_bytes,
            "compresslevel": settings.compresslevel}  # fmt: skip


def _usable_manifest(final: Path, settings: dict, state_path: Path) -> dict | None:
    """The current release's manifest, with the partition stamps it was built from, when a run
    may build on it: same format and settings, and the state file (kept outside the release, so
    the release's bytes depend on the data only) names this very manifest."""
    try:
        raw = (final / "manifest.json").read_bytes()
        old = json.loads(raw)
        state = json.loads(state_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(old, dict) and old.get("format") == FORMAT and old.get("settings") == settings
    ok = ok and isinstance(old.get("groups"), dict) and isinstance(state, dict)
    if not ok or state.get("manifest_sha256") != hashlib.sha256(raw).hexdigest():
        return None
    return {**old, "inputs": state.get("inputs") or {}}


def _write_state(state_path: Path, final: Path, inputs: dict[str, str]) -> None:
    digest = hashlib.sha256((final / "manifest.json").read_bytes()).hexdigest()
    state = {"manifest_sha256": digest, "inputs": inputs}
    atomic_write_bytes(state_path, json.dumps(state, sort_keys=True).encode())


def _write(
    store: Store, version: str, settings: ReleaseSettings, inputs: dict[str, str], old: dict | None,
    final: Path, out: Path, spill: Path,
) -> dict:  # fmt: skip
    con = _connect(store, settings, spill)
    try:
        groups_all = [g for (g,) in con.execute(f"SELECT DISTINCT grp FROM {LATEST} ORDER BY 1").fetchall()]
        if old is None:
            rebuild, mode = set(groups_all), "full"
        else:
            changed = [d for d, st in inputs.items() if old["inputs"].get(d) != st]
            gone = [d for d in old["inputs"] if d not in inputs]
            rebuild, mode = _affected_groups(con, store, changed, gone), "incremental"
        groups = {}
        for group in groups_all:
            if group in rebuild or group not in old["groups"]:
                groups[group] = _build_group(con, store, version, settings, group, out, spill)
            else:
                groups[group] = old["groups"][group]
                for f in groups[group]["files"]:
                    (out / f["path"]).parent.mkdir(parents=True, exist_ok=True)
                    os.link(final / f["path"], out / f["path"])
    finally:
        con.close()
    for split in SPLITS:
        (out / split).mkdir(parents=True, exist_ok=True)  # present even when empty
    summary = _summarise(version, settings, groups)
    (out / "manifest.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    write_card(out, pes2o_card(summary))
    return {**summary, "mode": mode, "groups_rebuilt": len(rebuild & set(groups_all))}


def _build_group(
    con: duckdb.DuckDBPyConnection, store: Store, version: str, settings: ReleaseSettings, group: str,
    out: Path, spill: Path,
) -> dict:  # fmt: skip
    """Write the shards of one group's documents; return their files, counts and drop reasons."""
    built: dict = {"files": [], "stats": {}, "reasons": {}, "after_cutoff": {}}
    if not _group_view(con, store, version, group):
        return built
    for source, reason, n in con.execute("SELECT source, reason, count(*) FROM grp GROUP BY ALL").fetchall():
        built["reasons"].setdefault(source, {})[reason if reason is not None else ""] = n
    bucket_dir = Path(tempfile.mkdtemp(dir=spill, prefix=f"{group}-"))
    buckets = _scatter(con, _bucket_bounds(con, settings.sort_bucket_bytes), bucket_dir)
    writers = {(s, sp): _ShardWriter(out / sp, f"{s}-{group}", settings) for s in SOURCES for sp in SPLITS}
    cutoff = dt.date.fromisoformat(settings.cutoff)
    for source, pid, first_day, created, created_date, words, text in _sorted_rows(buckets):
        if created_date is None or created_date > cutoff:
            built["after_cutoff"][source] = built["after_cutoff"].get(source, 0) + 1
            continue
        split = pes2o.split_for(created_date, cutoff)
        writers[(source, split)].write(
            {
                "added": _timestamp(first_day),
                "created": created,
                "id": pid,
                "source": source,
                "text": text,
                "version": version,
            }  # fmt: skip
        )
        docs, n_words = built["stats"].get(f"{source}/{split}", [0, 0])
        built["stats"][f"{source}/{split}"] = [docs + 1, n_words + (words or 0)]
    shutil.rmtree(bucket_dir, ignore_errors=True)
    for writer in writers.values():
        writer.close()
        for f in writer.files:
            for kind in ("jsonl", "parquet"):
                path = f[kind]
                built["files"].append({"path": path.relative_to(out).as_posix(), "format": kind,
                                       "documents": f["documents"], "bytes": path.stat().st_size,
                                       "sha256": _sha256(path)})  # fmt: skip
    return built


def _summarise(version: str, settings: ReleaseSettings, groups: dict) -> dict:
    """The manifest: totals over the groups (so a carried-over group is never re-read)."""
    stats = {(s, sp): [0, 0] for s in SOURCES for sp in SPLITS}
    reasons: dict[str, Counter] = {s: Counter() for s in SOURCES}
    after: Counter[str] = Counter()
    for group in groups.values():
        for key, (docs, words) in group["stats"].items():
            source, split = key.split("/")
            stats[(source, split)][0] += docs
            stats[(source, split)][1] += words
        for source, counts in group["reasons"].items():
            reasons.setdefault(source, Counter()).update({(r or None): n for r, n in counts.items()})
        after.update(group["after_cutoff"])
    return {
        "format": FORMAT,
        "version": version,
        "settings": _settings_dict(settings),
        "stats": [
            {"source": s, "split": sp, "documents": stats[(s, sp)][0], "words": stats[(s, sp)][1]}
            for s in SOURCES
            for sp in SPLITS
        ],  # fmt: skip
        "funnel": funnel_rows(reasons, after, {k: v[0] for k, v in stats.items()}),
        "files": sorted((f for g in groups.values() for f in g["files"]), key=lambda f: f["path"]),
        "groups": groups,
    }


HF_SPLITS = {"train": "train", "valid": "validation"}  # release folder -> Hugging Face split name
DOC_FEATURES = [{"name": k, **STRING} for k in ("added", "created", "id", "source", "text", "version")]


def pes2o_card(summary: Mapping[str, Any]) -> str:
    """The release's dataset card: ``default`` (both sources) and one config per source."""
    version = summary["version"]
    docs = {(s["source"], s["split"]): s["documents"] for s in summary["stats"]}

    def config(name: str, sources: tuple[str, ...], default: bool = False) -> CardConfig:
        files, examples = {}, {}
        for split, hf in HF_SPLITS.items():
            n = sum(docs.get((src, split), 0) for src in sources)
            if n:
                pattern = "*" if len(sources) > 1 else f"{sources[0]}-*"
                files[hf], examples[hf] = f"{split}/{pattern}.jsonl.gz", n
        return CardConfig(name, files, examples, default)

    configs = [config("default", SOURCES, default=True), *(config(src, (src,)) for src in SOURCES)]
    cutoff = summary["settings"]["cutoff"]
    return card_text(
        title=f"peS2o {version} (arXiv)",
        summary=(
            f"peS2o {version} built from arXiv by this project, following the peS2o dataset card: "
            "`s2orc` documents are full text (title, abstract and body paragraphs from Grobid section "
            "headers and paragraphs), `s2ag` documents are title and abstract. Train holds documents "
            f"created before the month of the cutoff ({cutoff}), validation that month up to the cutoff. "
            "Load it with `datasets.load_dataset(<this directory>)` (both sources), or the `s2orc` / "
            "`s2ag` configuration. The same documents are in Parquet beside each JSONL shard."
        ),
        configs=configs,
        features=DOC_FEATURES,
        licence="other",
        sections={
            "Statistics": markdown_table(summary["stats"], ["source", "split", "documents", "words"]),
            "Filter funnel": markdown_table(summary["funnel"], ["source", "step", "dropped", "remaining"]),
            "Licence": (
                "peS2o itself is released under ODC-By 1.0. The texts here are arXiv papers, each under "
                "the licence its authors chose (the `license` column of `arxiv_metadata`); many use "
                "arXiv's non-exclusive distribution licence, which does not allow redistribution. Check "
                "each paper's licence before sharing this release."
            ),
        },
    )


def _fsync_tree(root: Path) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            with open(path, "rb") as fh:
                os.fsync(fh.fileno())


def _swap_in(staging: Path, final: Path) -> None:
    """Replace directory ``final`` by ``staging``, every file synced first."""
    _fsync_tree(staging)
    swap_dir(staging, final)
