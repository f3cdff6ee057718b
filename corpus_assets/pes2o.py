"""Release assets: peS2o signals and verdicts per day, and the v1 / v2 releases."""

from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from corpus.release.settings import (
    DEFAULT_CHUNK_BYTES,
    DEFAULT_CUTOFF,
    DEFAULT_MAX_SHARD_BYTES,
    DEFAULT_MIN_CHUNK_BYTES,
)
from corpus.release.state import manifest_sha256
from corpus.store import atomic_write_bytes
from corpus_assets.common import (
    TABLE_ROWS,
    asset_path,
    count_table,
    md_code,
    report_day,
    rows_table,
    svg_plot,
)
from corpus_assets.deployment import paper_workers
from corpus_assets.freshness import read_mark, read_through_tags
from corpus_assets.partitions import daily_asset, partition_dates
from resources.store import CorpusStore

if TYPE_CHECKING:
    from corpus.release.pes2o_release import ReleaseSettings


@daily_asset(
    deps=["papers", "pdf_parses", "latex_parses"],  # signals are measured on the parse papers chose
    group_name="release",
    kinds={"parquet"},
    description="peS2o signals of every kept paper (once), with the v1/v2 verdict and drop reason per "
    "source (s2orc full text, s2ag title+abstract) and the text of kept documents.",
)
def pes2o(context: dg.AssetExecutionContext, corpus: CorpusStore) -> dg.MaterializeResult:
    from corpus.release.pes2o_table import pes2o_day

    days = partition_dates(context)
    workers = paper_workers(context)
    for day in days:
        summary = pes2o_day(corpus.home, day, workers=workers)
        for f in summary["failures"]:
            context.log.warning(f"pes2o: paper {f['id']} could not be measured: {f['reason']}")
        if summary["duplicates"]:
            context.log.warning(
                f"pes2o: ids listed twice in papers (first row used): {summary['duplicates'][:20]}"
            )
        drops = [
            {"release": key, "reason": reason, "dropped": n}
            for key, counts in sorted(summary["reasons"].items())
            for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
        ]
        report_day(
            context,
            corpus.store,
            "pes2o",
            day,
            summary["rows"],
            {
                "papers": summary["papers"],
                "failed": len(summary["failures"]),
                "kept": count_table(summary["kept"], "release", summary["papers"], "the day's papers"),
                "drop_reasons": rows_table(drops, ["release", "reason", "dropped"]),
            },
            preview=["id", "source", "created", "v1_keep", "v1_reason", "v2_keep", "v2_reason", "words"],
        )
    corpus.store.refresh_views(["pes2o"])
    return dg.MaterializeResult(metadata=asset_path(corpus.store, "pes2o"))


MAX_FILE_ROWS = 100  # shards listed in the run's metadata


class Pes2oReleaseConfig(dg.Config):
    """Release settings: the knowledge cutoff (only days up to it are read; valid = the month
    before the cutoff's month, up to the cutoff; train before; later documents are left out),
    the shard bound, the chunk size and the build processes."""

    cutoff: str = DEFAULT_CUTOFF
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES
    chunk_bytes: int = Field(
        default=DEFAULT_CHUNK_BYTES,
        ge=4096,
        description=(
            "Largest chunk a stream is cut into (bytes of JSON lines; chunks are ~1/256 of a stream "
            "up to this). A paper whose text changes rewrites its chunk's shard: with a cutoff that "
            "moves every day, a smaller value makes each revision cheaper, in more files. Changing "
            "it rebuilds the release in full."
        ),
    )
    workers: int = Field(
        default=0, ge=0, description="Build processes; 0: one per CPU when there are several tasks."
    )

    def settings(self) -> "ReleaseSettings":
        """The library's settings (imported when a run needs them: the definitions load without polars)."""
        from corpus.release.pes2o_release import ReleaseSettings

        return ReleaseSettings(
            cutoff=self.cutoff,
            max_shard_bytes=self.max_shard_bytes,
            chunk_bytes=self.chunk_bytes,
            min_chunk_bytes=min(DEFAULT_MIN_CHUNK_BYTES, self.chunk_bytes),
        )


def _release(
    context: dg.AssetExecutionContext, config: Pes2oReleaseConfig, corpus: CorpusStore, version: str
) -> dg.MaterializeResult:
    from corpus.release.pes2o_release import funnel_svg, release_dir, write_release

    settings = config.settings()
    mark = read_mark(context.instance)  # before reading: what is above it is checked again
    summary = write_release(corpus.home, version, settings, workers=config.workers or None)
    root = release_dir(corpus.home, version)
    stats = summary["stats"]
    jsonl = [f for f in summary["files"] if f["format"] == "jsonl"]
    context.log.info(
        f"pes2o {version} ({summary['mode']}): {sum(s['documents'] for s in stats)} documents in {len(jsonl)} "
        f"shard(s) under {root}; {summary['shards_written']} written, {summary['shards_reused']} kept; "
        f"{summary['days_changed']} day(s) changed, {summary['days_after_cutoff']} after the cutoff not read"
    )
    title = f"peS2o {version} filter funnel (cutoff {config.cutoff})"
    plot_path = corpus.store.home / "reports" / f"pes2o_{version}_funnel.svg"
    atomic_write_bytes(plot_path, funnel_svg(summary["funnel"], title))
    return dg.MaterializeResult(
        data_version=dg.DataVersion(
            manifest_sha256(root / "manifest.json") or ""
        ),  # changes iff the release does
        metadata={
            "documents": sum(s["documents"] for s in stats),
            TABLE_ROWS: sum(s["documents"] for s in stats),
            "words": sum(s["words"] for s in stats),
            "shards": len(jsonl),
            "mode": summary["mode"],
            "shards_written": summary["shards_written"],
            "shards_reused": summary["shards_reused"],
            "days_changed": summary["days_changed"],
            "days_after_cutoff": summary["days_after_cutoff"],
            "cutoff": config.cutoff,  # days after it are not read (corpus_assets.freshness)
            "statistics": rows_table(stats, ["source", "split", "documents", "words"]),
            "funnel": rows_table(summary["funnel"], ["source", "step", "dropped", "remaining"]),
            "files": rows_table(  # the first ones; manifest.json lists them all
                [
                    {k: f[k] for k in ("path", "documents", "bytes", "sha256")}
                    for f in summary["files"][:MAX_FILE_ROWS]
                ]
            ),
            "manifest": dg.MetadataValue.path(str(root / "manifest.json")),
            "dataset_card": dg.MetadataValue.path(str(root / "README.md")),
            **svg_plot("funnel_plot", "filter funnel", plot_path),
            "path": dg.MetadataValue.path(str(root)),
            "load_with": dg.MetadataValue.md(
                f"{md_code(f'datasets.load_dataset({str(root)!r})')} (configs: default, s2orc, s2ag)"
            ),
        },
        tags=read_through_tags(mark),
    )


@dg.asset(
    deps=["pes2o"],
    group_name="release",
    kinds={"json", "parquet"},
    description="peS2o v1 over every pes2o partition: train/valid gzip JSONL shards plus Parquet under "
    "releases/pes2o/v1, with the card's statistics table and the filter funnel.",
)
def pes2o_v1(
    context: dg.AssetExecutionContext, config: Pes2oReleaseConfig, corpus: CorpusStore
) -> dg.MaterializeResult:
    return _release(context, config, corpus, "v1")


@dg.asset(
    deps=["pes2o"],
    group_name="release",
    kinds={"json", "parquet"},
    description="peS2o v2 (v1 plus the OCR rule on s2ag abstracts) under releases/pes2o/v2, as pes2o_v1.",
)
def pes2o_v2(
    context: dg.AssetExecutionContext, config: Pes2oReleaseConfig, corpus: CorpusStore
) -> dg.MaterializeResult:
    return _release(context, config, corpus, "v2")
