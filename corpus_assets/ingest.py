"""Ingest assets: arXiv metadata per OAI datestamp day."""

import os
from collections import Counter

import dagster as dg

from corpus.ingest import arxiv_ids
from corpus.ingest.landing import LandingZone
from corpus.ingest.records import failures_frame, records_frame
from corpus_assets.common import (
    asset_path,
    count_table,
    partitions_label,
    report_day,
    selected,
)
from corpus_assets.partitions import daily_multi_asset, partition_dates
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

METADATA_FAILURES = "arxiv_metadata_failures"  # side table: records that could not be read, with reasons


def harvest_into_landing(
    context: dg.AssetExecutionContext, arxiv: ArxivResource, landing: LandingZone, days: list[str]
) -> None:
    """Harvest each day live and save its pages into the landing zone before parsing.

    All pages of a day are fetched first; only then are they written (page
    files ``<day>_<prefix>[_<set>]-pNNNN.xml``) and stale higher-numbered
    pages of an earlier harvest of that day removed, so a failed harvest
    leaves the previous pages intact.
    """
    harvester = arxiv.harvester(log=context.log.info)
    try:
        for day in days:
            pages = list(
                harvester.list_records(
                    arxiv.metadata_prefix, from_=day, until=day, set_=arxiv.set_spec or None
                )
            )
            set_part = f"_{arxiv.set_spec.replace(':', '-')}" if arxiv.set_spec else ""
            stem = f"{day}_{arxiv.metadata_prefix}{set_part}"
            for page in pages:
                landing.save_page(f"{stem}-p{page.index + 1:04d}.xml", page.raw)
            for old in landing.oai_dir.glob(f"{stem}-p*.xml"):
                number = old.stem.rsplit("-p", 1)[-1]
                if number.isdigit() and int(number) > len(pages):
                    old.unlink()
            n = sum(len(p.records) for p in pages)
            context.log.info(f"harvested {day}: {len(pages)} page(s), {n} records")
    finally:
        harvester.client.close()


METADATA_CHECKS = [
    dg.AssetCheckSpec("ids_unique", asset="arxiv_metadata", description="no id twice in a partition"),
    dg.AssetCheckSpec("ids_valid", asset="arxiv_metadata", description="every id is a valid arXiv id"),
    dg.AssetCheckSpec(
        "required_fields_present",
        asset="arxiv_metadata",
        description="every live record has id, datestamp, title, authors and categories",
    ),
    dg.AssetCheckSpec(
        "no_unreadable_records",
        asset="arxiv_metadata",
        description="no record or page of these days failed to parse (see arxiv_metadata_failures)",
    ),
]
LANDING_MARKER = "landing"  # sidecar of each arxiv_metadata partition: the pages' fingerprint


def network_pool() -> str | None:
    """The ``arxiv_api`` pool (one request stream, arXiv's terms) only when the assets talk to
    arxiv.org; reading a landing zone or bulk archives is not throttled by it."""
    return "arxiv_api" if os.environ.get("CORPUS_SOURCE", "landing") == "arxiv" else None


@daily_multi_asset(
    specs=[
        dg.AssetSpec(
            "arxiv_metadata",
            group_name="ingest",
            kinds={"parquet"},
            description="arXiv metadata (SPEC.md §1), one partition per OAI datestamp day.",
        ),
        dg.AssetSpec(
            METADATA_FAILURES,
            group_name="ingest",
            kinds={"parquet"},
            description="Records and pages of the day that could not be read, each with its reason.",
        ),
    ],
    pool=network_pool(),
    check_specs=METADATA_CHECKS,
    can_subset=True,  # `--select arxiv_metadata` works; both tables are still written, together
)
def arxiv_metadata(context: dg.AssetExecutionContext, corpus: CorpusStore, arxiv: ArxivResource):
    import polars as pl

    days = partition_dates(context)
    landing = corpus.landing_zone
    if arxiv.source == "arxiv":
        harvest_into_landing(context, arxiv, landing, days)
    store = corpus.store
    cache = corpus.landing_index_cache
    fingerprints = landing.day_fingerprints(cache)  # before reading: a later change means a re-run
    found = landing.read_days(days, cache=cache)
    for w in found.warnings:
        context.log.warning(w)

    dup_ids = 0
    bad_ids: list[str] = []
    missing_ids: list[str] = []
    failures = []
    for day in days:
        frame = records_frame(found.records[day])
        day_failures = [f for f in found.failures if f.datestamp == day]
        failures += day_failures
        store.write_partition(
            "arxiv_metadata", day, frame, markers={LANDING_MARKER: fingerprints.get(day, "")}
        )
        store.write_partition(METADATA_FAILURES, day, failures_frame(day_failures))
        dup_ids += frame.height - frame["id"].n_unique()
        bad_ids += [i for i in frame["id"].to_list() if not arxiv_ids.is_valid(i)]
        missing_ids += (
            frame.filter(~pl.col("deleted"))
            .filter(
                (pl.col("title").str.len_chars() == 0)
                | (pl.col("authors").list.len() == 0)
                | (pl.col("categories").list.len() == 0)
                | pl.col("datestamp").is_null()
            )["id"]
            .to_list()
        )
        categories = Counter(c for c in frame["primary_category"].to_list() if c)
        report_day(
            context,
            store,
            "arxiv_metadata",
            day,
            frame.height,
            {
                "new": int(frame["is_new"].sum()),
                "updated": frame.height - int(frame["is_new"].sum()),
                "deleted": int(frame["deleted"].sum()),
                "failed_records": len(day_failures),
                "primary_categories": count_table(dict(categories.most_common(15)), "category"),
            },
            preview=["id", "version", "datestamp", "primary_category", "title"],
        )
        report_day(
            context,
            store,
            METADATA_FAILURES,
            day,
            len(day_failures),
            {"reasons": count_table(Counter(f.reason.split(":")[0] for f in day_failures), "reason")},
            preview=["source", "position", "identifier", "reason"],
        )
    store.refresh_views(["arxiv_metadata", METADATA_FAILURES])
    if failures:
        context.log.warning(f"{len(failures)} record(s)/page(s) could not be read: see {METADATA_FAILURES}")

    if selected(context, METADATA_FAILURES):
        yield dg.MaterializeResult(
            asset_key=METADATA_FAILURES,
            metadata=asset_path(store, METADATA_FAILURES),
        )
    if not selected(context, "arxiv_metadata"):
        return
    covered = partitions_label(days)
    yield dg.MaterializeResult(
        asset_key="arxiv_metadata",
        metadata={
            "duplicates_dropped": found.duplicates_dropped,
            "landing_files_read": len(found.files),
            **asset_path(store, "arxiv_metadata"),
        },
    )
    yield dg.AssetCheckResult(
        asset_key="arxiv_metadata",
        check_name="ids_unique",
        passed=dup_ids == 0,
        metadata={"partitions": covered, "duplicates": dup_ids},
    )
    yield dg.AssetCheckResult(
        asset_key="arxiv_metadata",
        check_name="ids_valid",
        passed=not bad_ids,
        metadata={"partitions": covered, "invalid": len(bad_ids), "examples": str(bad_ids[:5])},
    )
    yield dg.AssetCheckResult(
        asset_key="arxiv_metadata",
        check_name="required_fields_present",
        passed=not missing_ids,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "partitions": covered,
            "records_missing_fields": len(missing_ids),
            "examples": str(missing_ids[:5]),
        },
    )
    yield dg.AssetCheckResult(
        asset_key="arxiv_metadata",
        check_name="no_unreadable_records",
        passed=not failures,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "partitions": covered,
            "failures": len(failures),
            "reasons": str(Counter(f.reason.split(":")[0] for f in failures).most_common(5)),
        },
    )
