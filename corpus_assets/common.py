"""Small helpers the assets share: metadata tables and previews."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

if TYPE_CHECKING:
    import polars as pl


def count_table(
    counts: Mapping[str, int], key: str, total: int | None = None, of: str = "the rows counted"
) -> dg.MetadataValue:
    """A three-column table (name, count, percent of ``total``) as Dagster table metadata (a
    share as a percent: the UI shows a float of 1 as "1", not "100 %"). ``total`` defaults to
    the sum of the counts, which is right only when each item is counted once (a status per
    paper); statistics that overlap (papers with LaTeX, papers with a DOI) or a table of the
    largest counts only must pass what they are a share of, and ``of`` says it in the column's
    description."""
    total = total if total is not None else sum(counts.values())
    columns = [
        dg.TableColumn(key, "string"),
        dg.TableColumn("count", "int"),
        dg.TableColumn("percent", "float", description=f"percent of {of} ({total})"),
    ]
    records = [
        dg.TableRecord({key: str(k), "count": int(v), "percent": round(100 * v / total, 2) if total else 0.0})
        for k, v in counts.items()
    ]
    return dg.MetadataValue.table(records, schema=dg.TableSchema(columns=columns))


_MD_SYNTAX = re.compile(r"([\\`*_\[\]|~#])")
_MD_LINE_START = re.compile(r"^(\d*)([-+.)])")


def md_text(value: object, width: int | None = None) -> str:
    """Any text as literal Markdown on one line: what a reason, a title or a path says is what the
    UI shows. HTML is escaped as entities (the UI's sanitiser drops tags, so ``no </record>
    before the next record`` lost its ``</record>``) and Markdown syntax with backslashes (a
    ``*`` or ``_`` in a title no longer starts emphasis, a ``|`` no longer splits a table cell).
    ``width`` cuts the text first, with an ellipsis."""
    text = " ".join(str(value if value is not None else "").split("\n")).replace("\r", " ")
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    text = _MD_SYNTAX.sub(r"\\\1", html.escape(text.strip(), quote=False))
    return _MD_LINE_START.sub(r"\1\\\2", text)  # "1." / "-" / "+" would start a list


def md_code(value: object) -> str:
    """Text as an inline code span (shown verbatim, HTML included): fenced by more backticks than
    it holds in a row."""
    text = " ".join(str(value).split("\n"))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_preview(
    frame: pl.DataFrame, columns: Sequence[str], rows: int = 10, width: int = 80, label: str | None = None
) -> dg.MetadataValue:
    """The first rows of a frame as a markdown table, long cells cut to ``width``, every cell
    shown as the text it holds (:func:`md_text`), under ``label``: a line saying what the rows
    are a preview of (whose first rows, of how many)."""
    cols = [c for c in columns if c in frame.columns]
    caption = f"{md_text(label)}\n\n" if label else ""
    if frame.is_empty() or not cols:
        return dg.MetadataValue.md(caption + "_no rows_")
    head = caption + "| " + " | ".join(md_text(c) for c in cols) + " |\n|" + "---|" * len(cols) + "\n"
    lines = []
    for row in frame.head(rows).select(cols).iter_rows():
        lines.append("| " + " | ".join(md_text(value, width) for value in row) + " |")
    return dg.MetadataValue.md(head + "\n".join(lines))


def rows_table(rows: Sequence[Mapping], columns: Sequence[str] | None = None) -> dg.MetadataValue:
    """Any list of flat dicts as Dagster table metadata (types inferred from the first row)."""
    columns = list(columns or (rows[0].keys() if rows else []))
    kinds = {bool: "bool", int: "int", float: "float"}
    first = rows[0] if rows else {}
    schema = dg.TableSchema(
        columns=[dg.TableColumn(c, kinds.get(type(first.get(c)), "string")) for c in columns]
    )
    records = [
        dg.TableRecord(
            {c: (r.get(c) if isinstance(r.get(c), bool | int | float) else str(r.get(c))) for c in columns}
        )
        for r in rows
    ]
    return dg.MetadataValue.table(records, schema=schema)


OWNERS = ["team:corpus"]  # who answers for the assets (the project's maintainers)
# Dagster's row counts (TableMetadataSet): a partition's rows, and the whole table's (the cross-day
# assets', which the asset overview shows as "Row count").
PARTITION_ROWS, TABLE_ROWS = "dagster/partition_row_count", "dagster/row_count"


def report_day(
    context: dg.AssetExecutionContext,
    store,
    asset: str,
    day: str,
    rows: int,
    metadata: Mapping | None = None,
    preview: Sequence[str] = (),
    preview_width: int = 80,
) -> None:
    """Metadata of one daily partition, on that partition's own materialisation event.

    A backfill run covers several days; each day gets its own counts (its rows as
    ``dagster/partition_row_count``, and the stage's summary), its column schema and a preview of its own first rows (the
    ``preview`` columns, cells cut at ``preview_width``), so a partition's page shows that
    partition, and nothing in an event grows with the number of days in a run. Also the partition's content ``fingerprint`` (from
    its provenance, corpus.store): what the cross-day assets' catch-up compares
    (corpus_assets.freshness) and what tells two builds of a day with the same rows apart from
    two with different ones; the code version that made it is the event's
    ``dagster/code_version`` tag.

    Not ``dagster/row_count``: Dagster means by it the rows of the whole table (TableMetadataSet),
    and the UI shows the latest event's as the asset's "Row count"; a daily asset's whole table
    is every day's rows (``select count(*)`` in data/corpus.duckdb), which no one day's event knows.
    """
    if dg.AssetKey(asset) not in context.selected_asset_keys:  # a subset of a multi-asset
        return
    from corpus_assets.freshness import FINGERPRINT

    extra: dict = {}
    fingerprint = store.fingerprint(asset, day)
    if fingerprint is not None:
        extra[FINGERPRINT] = fingerprint
        extra.update(_partition_rows_metadata(store, asset, day, int(rows), preview, preview_width))
    context.add_asset_metadata(
        {PARTITION_ROWS: int(rows), **(metadata or {}), **extra}, asset_key=asset, partition_key=day
    )


def _partition_rows_metadata(
    store, asset: str, day: str, rows: int, preview: Sequence[str], width: int
) -> dict:
    """One partition's column schema (its Parquet footer) and first rows (only the ``preview``
    columns are read)."""
    from corpus_assets.columns import parquet_column_schema

    out: dict = {}
    path = store.partition_dir(asset, day) / "part-0.parquet"
    schema = parquet_column_schema(asset, path)
    if schema is not None:
        out["dagster/column_schema"] = schema
    if preview:
        import polars as pl

        frame = pl.scan_parquet(path)
        cols = [c for c in preview if c in frame.collect_schema().names()]
        head = frame.select(cols).head(10).collect() if cols else pl.DataFrame()
        shown = f"the first {head.height} of" if head.height < rows else "all"
        label = f"{asset} of {day}: {shown} {rows:,} row{'s' if rows != 1 else ''}"
        out["preview"] = markdown_preview(head, cols, width=width, label=label)
    return out


def selected(context: dg.AssetExecutionContext, asset: str) -> bool:
    return dg.AssetKey(asset) in context.selected_asset_keys


def asset_path(store, asset: str) -> dict:
    """Where the asset's partitions are (the same for every partition of a run)."""
    return {"path": dg.MetadataValue.path(str(store.asset_dir(asset)))}


def partitions_label(days: Sequence[str]) -> str:
    """The partitions a check covered, as one short string."""
    if not days:
        return ""
    return days[0] if len(days) == 1 else f"{days[0]}...{days[-1]} ({len(days)} days)"


def svg_plot(key: str, alt: str, path: Path) -> dict[str, dg.MetadataValue]:
    """``key``: the SVG chart at ``path`` shown inline (a data URI in markdown, which the UI's
    sanitiser allows), and ``key_path``: where it is. The PNG (and its cache key) that earlier
    versions drew beside it goes, so a report folder holds each chart once."""
    for legacy in (".png", ".png.key"):
        path.with_name(path.stem + legacy).unlink(missing_ok=True)
    data = base64.b64encode(path.read_bytes()).decode()
    return {
        key: dg.MetadataValue.md(f"![{alt}](data:image/svg+xml;base64,{data})"),
        f"{key}_path": dg.MetadataValue.path(str(path)),
    }
