"""CiteWorth assets: paragraphs per day, the balanced train/dev/test release, the marker audit.

``citeworth_paragraphs`` (daily) runs the App. A/B checks on every body paragraph of
the day's kept papers (corpus.release.citeworth.citeworth_day). ``citeworth_splits``
(unpartitioned) reads every materialised day from the store, not through Dagster's
IO (the daily → unpartitioned dependency is lineage only: Dagster maps an
unpartitioned asset onto all partitions of its daily parent), balances the fields,
splits by paper and writes ``$CORPUS_HOME/releases/citeworth/<split>.jsonl``.
The check ``leftover_citation_markers`` audits the released sentences.
"""

import dagster as dg
from pydantic import Field

from corpus.release.settings import CANDIDATES, PARAGRAPHS
from corpus.release.state import manifest_sha256
from corpus_assets.common import (
    TABLE_ROWS,
    asset_path,
    count_table,
    markdown_preview,
    md_code,
    md_text,
    report_day,
    rows_table,
    selected,
)
from corpus_assets.deployment import paper_workers
from corpus_assets.freshness import read_mark, read_through_tags
from corpus_assets.partitions import daily_multi_asset, partition_dates
from resources.store import CorpusStore


class CiteworthParagraphsConfig(dg.Config):
    """Paragraph filters beyond the paper's per-sentence rules."""

    require_citation: bool = Field(
        default=True,
        description=(
            "(choice) Keep only paragraphs with at least one citation. The paper does not say so, "
            "but the released cite-worth code does and Table 2's 31.8 % cite-worthy share needs it."
        ),
    )
    min_sentences: int = Field(
        default=1,
        ge=1,
        description="Fewest sentences a kept paragraph has (the code's 3 is not in the paper).",
    )


class CiteworthSplitsConfig(dg.Config):
    """How the release samples fields."""

    seed: int = Field(default=0, description="Sampling seed: the same seed and days give the same files.")
    per_field: int | None = Field(
        default=None,
        ge=0,
        description=(
            "(choice) Most paragraphs per field. Unset: the median of the non-empty fields' counts, "
            "so the big arXiv fields are cut to a typical size and small fields are kept whole."
        ),
    )


@daily_multi_asset(
    specs=[
        dg.AssetSpec(
            PARAGRAPHS,
            deps=["papers", "pdf_parses", "latex_parses"],
            group_name="release",
            kinds={"parquet"},
            description="Every body paragraph of the day's kept papers with CiteWorth labels, or the rule "
            "that rejected it (citeworth-paper.txt §3, App. A-B).",
        ),
        dg.AssetSpec(
            CANDIDATES,
            deps=["papers", "pdf_parses", "latex_parses"],
            group_name="release",
            kinds={"parquet"},
            description="One row per kept paper: CiteWorth candidate or not, why, and its paragraph counts.",
        ),
    ],
    can_subset=True,  # both tables are written together; only the selected ones are reported
)
def citeworth_paragraphs(
    context: dg.AssetExecutionContext, config: CiteworthParagraphsConfig, corpus: CorpusStore
):
    from corpus.release.citeworth import citeworth_day

    days = partition_dates(context)
    workers = paper_workers(context)
    for day in days:
        summary = citeworth_day(
            corpus.home,
            day,
            require_citation=config.require_citation,
            min_sentences=config.min_sentences,
            workers=workers,
        )
        for paper_id, detail in summary["errors"]:
            context.log.warning(f"citeworth: paper {paper_id} could not be read: {detail}")
        report_day(
            context,
            corpus.store,
            PARAGRAPHS,
            day,
            summary["paragraphs"],
            {
                "kept": summary["kept"],
                "sentences": summary["sentences"],
                "cite_worthy": summary["cite_worthy"],
                "cite_worthy_share": round(summary["cite_worthy"] / summary["sentences"], 4)
                if summary["sentences"]
                else 0.0,
                "paragraph_funnel": count_table(summary["reasons"], "reason", of="the day's paragraphs"),
                "kept_per_field": count_table(summary["fields"], "field", of="the paragraphs kept"),
            },
            preview=["paper_id", "section_title", "field", "kept", "reason", "n_sentences", "n_cite_worthy"],
        )
        report_day(
            context,
            corpus.store,
            CANDIDATES,
            day,
            summary["papers"],
            {
                "candidates": summary["candidates"],
                "papers_funnel": count_table(summary["paper_reasons"], "reason", of="the day's papers"),
            },
            preview=["paper_id", "field", "reason", "kept_paragraphs"],
        )
    corpus.store.refresh_views([PARAGRAPHS, CANDIDATES])
    if selected(context, PARAGRAPHS):
        yield dg.MaterializeResult(
            asset_key=PARAGRAPHS,
            metadata={"require_citation": config.require_citation, **asset_path(corpus.store, PARAGRAPHS)},
        )
    if selected(context, CANDIDATES):
        yield dg.MaterializeResult(asset_key=CANDIDATES, metadata=asset_path(corpus.store, CANDIDATES))


def _table_2(st: dict) -> dg.MetadataValue:
    """citeworth-paper.txt Table 2 from :func:`corpus.release.citeworth.stats`."""
    n = st["total_sentences"] or 1
    rows = [
        ("Total sentences", f"{st['total_sentences']:,}"),
        ("Total number of tokens", f"{st['total_tokens']:,}"),
        ("Train sentences", f"{st.get('train_sentences', 0):,}"),
        ("Dev sentences", f"{st.get('dev_sentences', 0):,}"),
        ("Test sentences", f"{st.get('test_sentences', 0):,}"),
        ("Total cite-worthy", f"{st['cite_worthy']:,} ({100 * st['cite_worthy'] / n:.2f}%)"),
        ("Total non-cite-worthy", f"{st['non_cite_worthy']:,} ({100 * st['non_cite_worthy'] / n:.2f}%)"),
        ("Min char length", f"{st['min_chars']:,}"),
        ("Max char length", f"{st['max_chars']:,}"),
        ("Average char length", f"{st['mean_chars']:.0f}"),
        ("Median char length", f"{st['median_chars']:.0f}"),
    ]
    return rows_table([{"metric": m, "value": v} for m, v in rows], ["metric", "value"])


@dg.asset(
    deps=[PARAGRAPHS, CANDIDATES],
    group_name="release",
    kinds={"parquet", "json"},
    description=(
        "The CiteWorth release over every materialised day: fields balanced (seeded), train/dev/test "
        "80/10/10 by a hash of the paper id, JSONL in the released data's shape, Table 2 statistics, a "
        "dataset card; only days whose content changed are read, only changed split files rewritten."
    ),
)
def citeworth_splits(
    context: dg.AssetExecutionContext, config: CiteworthSplitsConfig, corpus: CorpusStore
) -> dg.MaterializeResult:
    from corpus.release.citeworth import release_dir
    from corpus.release.citeworth_release import build_release

    mark = read_mark(context.instance)  # before reading: what is above it is checked again
    summary = build_release(corpus.home, seed=config.seed, per_field=config.per_field)
    corpus.store.refresh_views()
    st = summary["stats"]
    fields = [
        {
            "field": f,
            "available": summary["available_per_field"][f],
            "released": summary["released_per_field"][f],
        }
        for f in summary["available_per_field"]
    ]
    splits = [
        {
            "split": s,
            "paragraphs": summary["paragraphs_per_split"][s],
            "papers": summary["papers_per_split"][s],
        }
        for s in summary["paragraphs_per_split"]
    ]
    preview = corpus.store.scan("citeworth_splits").head(10).collect()
    root = release_dir(corpus.home)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(
            manifest_sha256(root / "manifest.json") or ""
        ),  # changes iff the release does
        metadata={
            "mode": summary["mode"],  # full | incremental | unchanged
            "days_changed": summary["days_changed"],
            "files_written": summary["files_written"],
            "paragraphs": summary["paragraphs"],
            TABLE_ROWS: summary["paragraphs"],
            "papers": summary["papers"],
            "sentences": st["total_sentences"],
            "cite_worthy_share": round(st["cite_worthy_share"], 4),
            "available_paragraphs": summary["available_paragraphs"],
            "per_field_cap": summary["per_field_cap"],
            "seed": summary["seed"],
            "table_2": _table_2(st),
            "fields": rows_table(fields, ["field", "available", "released"]),
            "splits": rows_table(splits, ["split", "paragraphs", "papers"]),
            "release_dir": dg.MetadataValue.path(str(root)),
            "manifest": dg.MetadataValue.path(str(root / "manifest.json")),
            "dataset_card": dg.MetadataValue.path(str(root / "README.md")),
            "load_with": dg.MetadataValue.md(
                f"{md_code(f'datasets.load_dataset({str(root)!r})')} (train, validation, test)"
            ),
            "preview": markdown_preview(
                preview,
                ["paper_id", "section_index", "field", "split", "n_sentences", "n_cite_worthy"],
                label=f"citeworth_splits: the first {preview.height} of {summary['paragraphs']:,} released paragraphs",
            ),
        },
        tags=read_through_tags(mark),
    )


@dg.asset_check(
    asset=citeworth_splits,
    description=(
        "Released sentences audited with App. B's bracket, year and hanging-citation regexes, "
        "'et al.' and empty brackets: the leftover-marker rate must stay below CiteWorth's 1.9 %."
    ),
)
def leftover_citation_markers(corpus: CorpusStore) -> dg.AssetCheckResult:
    from corpus.release.citeworth import CITEWORTH_LEFTOVER_RATE
    from corpus.release.citeworth_release import release_audit

    audit = release_audit(corpus.home)  # from the markers each line got when written: costs what changed
    examples = "\n".join(
        f"- {md_code(e['marker'])} {md_text(e['paper_id'])}: {md_text(e['text'], 160)}"
        for e in audit["examples"]
    )
    return dg.AssetCheckResult(
        passed=audit["rate"] < CITEWORTH_LEFTOVER_RATE,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "rate": round(audit["rate"], 6),
            "citeworth_rate": CITEWORTH_LEFTOVER_RATE,
            "sentences": audit["sentences"],
            "with_marker": audit["with_marker"],
            "by_marker": count_table(
                audit["by_marker"], "marker", audit["sentences"], "the released sentences"
            ),
            "examples": dg.MetadataValue.md(examples or "_no sentence with a leftover marker_"),
        },
    )
