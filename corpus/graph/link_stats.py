"""``citation_links``' counts per field of study (S2ORC Table 4, per field), kept per day in a
shard's state (corpus.graph.citation_links): ``entries``, links per ``via`` and
``ambiguous_publication`` entries of each day's decided entries.

A new day changes the links of many old days (old entries gain links to its papers), so the
counts of every touched day are computed again; they are computed for all of them in one pass
(one read of the days' ``papers`` files, one group-by), not day by day: the per-call cost of a
day was most of what a touched day cost here.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from corpus.store import Store, scan_days

AMBIGUOUS_SCHEMA = {"entry_id": pl.String, "citing_id": pl.String}
EMPTY_AMBIGUOUS = pl.DataFrame(schema=AMBIGUOUS_SCHEMA)
STATS_SCHEMA = {"day": pl.String, "field": pl.String, "measure": pl.String, "n": pl.Int64}
EMPTY_STATS = pl.DataFrame(schema=STATS_SCHEMA)


def entry_ids(store: Store, days: list[str], citing: pl.Series | None = None) -> pl.DataFrame:
    """``entry_id, citing_id, _day`` of these days' ``bib_entries`` (only those columns read), of
    the ``citing`` papers only when given (filtered while read)."""
    if not days:
        return pl.DataFrame(schema={"entry_id": pl.String, "citing_id": pl.String, "_day": pl.String})
    paths = [store.partition_dir("bib_entries", day) / "part-0.parquet" for day in days]
    frame = scan_days(paths, {"entry_id": pl.String, "citing_id": pl.String}, hive=True)
    if citing is not None:
        frame = frame.filter(pl.col("citing_id").is_in(citing.implode()))
    return frame.select("entry_id", "citing_id", pl.col("date").alias("_day")).collect()


def _with_fields(store: Store, rows: pl.DataFrame) -> pl.DataFrame:
    """``rows[_day, citing_id, ...]`` with ``field``: the citing paper's field of study in that
    day's ``papers`` (``unknown`` when it has none)."""
    days = sorted(rows["_day"].unique().to_list())
    papers = scan_days(  # the two columns it needs (a day written without fields: null)
        [store.partition_dir("papers", day) / "part-0.parquet" for day in days],
        {"id": pl.String, "field_of_study": pl.String},
        hive=True,
    ).collect()
    fields = papers.select(
        pl.col("date").alias("_day"),
        pl.col("id").alias("citing_id"),
        pl.col("field_of_study").fill_null("unknown").alias("field"),
    ).unique(["_day", "citing_id"])
    return rows.join(fields, on=["_day", "citing_id"], how="left").with_columns(
        pl.col("field").fill_null("unknown")
    )


def days_stats(
    store: Store, entries: pl.DataFrame, links: pl.DataFrame, ambiguous: pl.DataFrame
) -> pl.DataFrame:
    """STATS_SCHEMA rows of the days in ``entries[entry_id, citing_id, _day]`` (each day's decided
    entries; a day without any has no rows), from ``links`` (LINK_SCHEMA and the ``_day`` of their
    file) and the ``ambiguous`` entries."""
    if entries.height == 0:
        return EMPTY_STATS
    day_of = entries.select("entry_id", "_day").unique("entry_id")
    parts = [
        entries.select("_day", "citing_id", pl.lit("entries").alias("measure")),
        links.join(day_of, on=["entry_id", "_day"], how="semi").select(
            "_day", "citing_id", pl.col("via").alias("measure")
        ),
        ambiguous.join(day_of, on="entry_id").select(
            "_day", "citing_id", pl.lit("ambiguous_publication").alias("measure")
        ),
    ]
    return (
        _with_fields(store, pl.concat(parts))
        .group_by("_day", "field", "measure")
        .len("n")
        .select(pl.col("_day").alias("day"), "field", "measure", "n")
        .sort("day", "field", "measure")
        .cast(STATS_SCHEMA)
    )


def with_delta(store: Store, stats: pl.DataFrame, delta: pl.DataFrame) -> pl.DataFrame:
    """``stats`` changed by signed rows ``delta[_day, citing_id, measure, sign]`` (an entry, link
    or ambiguous entry that left a day: -1, or came: +1), each counted under its citing paper's
    field that day; a count that reaches 0 goes. What a day's counts computed again would give,
    for the cost of what changed (a new day changes links in many old days)."""
    if delta.height == 0:
        return stats
    counts = (
        _with_fields(store, delta)
        .group_by("_day", "field", "measure")
        .agg(pl.col("sign").sum().alias("n"))
        .select(pl.col("_day").alias("day"), "field", "measure", "n")
        .cast(STATS_SCHEMA)
    )
    days = counts["day"].unique().implode()
    summed = (
        pl.concat([stats.filter(pl.col("day").is_in(days)), counts])
        .group_by("day", "field", "measure")
        .agg(pl.col("n").sum())
        .filter(pl.col("n") != 0)
        .sort("day", "field", "measure")
        .select(list(STATS_SCHEMA))
        .cast(STATS_SCHEMA)
    )
    return pl.concat([stats.filter(~pl.col("day").is_in(days)), summed])


_DELTA_SCHEMA = {"_day": pl.String, "citing_id": pl.String, "measure": pl.String, "sign": pl.Int64}


def _signed(frame: pl.DataFrame, day: pl.Expr, measure: pl.Expr, sign: int) -> pl.DataFrame:
    return frame.select(day.alias("_day"), "citing_id", measure.alias("measure"), pl.lit(sign).alias("sign"))


@dataclass
class Moves:
    """What an incremental run moved in and out of the days' counts: the shard's papers whose
    deciding delivery moved (``mine[id, old_day, day]``), the new ``latest`` table, the new
    bibliographies (``new_entries``), each day file's (dropped, added) links, and the ambiguous
    entries that left (``amb_out``, counted on their paper's old day) and came (``amb_in``)."""

    mine: pl.DataFrame
    latest: pl.DataFrame
    new_entries: pl.DataFrame
    links: dict[str, tuple[pl.DataFrame, pl.DataFrame]]
    amb_out: pl.DataFrame
    amb_in: pl.DataFrame

    def rows(self, store: Store, days: list[str]) -> pl.DataFrame:
        """The signed rows (:func:`with_delta`) of these days: the entries of papers that left a
        day (its citing ids read again, those only) or came to it, links dropped and added,
        ambiguous entries gone and new."""
        day, via = pl.col("_day"), pl.col("via")
        left = self.mine.drop_nulls("old_day").select(
            pl.col("id").alias("citing_id"), pl.col("old_day").alias("_day")
        )
        left = left.filter(day.is_in(days))
        came = self.mine.drop_nulls("day").select(
            pl.col("id").alias("citing_id"), pl.col("day").alias("_day")
        )
        parts = [pl.DataFrame(schema=_DELTA_SCHEMA)]
        if left.height:
            ids = entry_ids(store, sorted(left["_day"].unique().to_list()), left["citing_id"])
            parts.append(
                _signed(ids.join(left, on=["citing_id", "_day"], how="semi"), day, pl.lit("entries"), -1)
            )
        parts.append(_signed(self.new_entries.join(came, on="citing_id"), day, pl.lit("entries"), 1))
        for d, (dropped, added) in self.links.items():
            parts += [_signed(dropped, pl.lit(d), via, -1), _signed(added, pl.lit(d), via, 1)]
        now = self.latest.select(pl.col("id").alias("citing_id"), pl.col("day").alias("_day"))
        before = pl.concat([now.join(self.mine.select(citing_id="id"), on="citing_id", how="anti"),
                            self.mine.drop_nulls("old_day").select(citing_id="id", _day="old_day")])  # fmt: skip
        amb = pl.lit("ambiguous_publication")
        parts += [
            _signed(self.amb_out.join(before, on="citing_id"), day, amb, -1),
            _signed(self.amb_in.join(now, on="citing_id"), day, amb, 1),
        ]
        return pl.concat([p.cast(_DELTA_SCHEMA) for p in parts]).filter(day.is_in(days))


def by_field(stats: pl.DataFrame) -> dict[str, dict[str, int]]:
    """``{field: {measure: n}}`` over every day (what the summary and the asset's table show)."""
    out: dict[str, dict[str, int]] = {}
    for field_, measure, n in (
        stats.group_by("field", "measure").agg(pl.col("n").sum()).sort("field", "measure").iter_rows()
    ):
        out.setdefault(field_, {})[measure] = int(n)
    return out
