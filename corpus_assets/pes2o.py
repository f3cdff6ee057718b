"""Release assets: peS2o signals and verdicts per day, and the v1 / v2 releases."""

import base64

import dagster as dg

from corpus.pes2o_release import (
    DEFAULT_CUTOFF,
    DEFAULT_MAX_SHARD_BYTES,
    ReleaseSettings,
    funnel_png,
    pes2o_day,
    release_dir,
    write_release,
)
from corpus.store import atomic_write_bytes
from corpus_assets.common import OWNERS, count_table, partition_metadata, report_day, rows_table
from corpus_assets.partitions import daily_asset, partition_dates
from resources.store import CorpusStore


@daily_asset(
    deps=["papers"],
    group_name="release",
    kinds={"parquet"},
    owners=OWNERS,
    description="peS2o signals of every kept paper (once), with the v1/v2 verdict and drop reason per "
    "source (s2orc full text, s2ag title+abstract) and the text of kept documents.",
)
def pes2o(context: dg.AssetExecutionContext, corpus: CorpusStore) -> dg.MaterializeResult:
    days = partition_dates(context)
    for day in days:
        summary = pes2o_day(corpus.home, day)
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
            "pes2o",
            day,
            summary["rows"],
            {
                "papers": summary["papers"],
                "failed": len(summary["failures"]),
                "kept": count_table(summary["kept"], "release", total=summary["papers"]),
                "drop_reasons": rows_table(drops, ["release", "reason", "dropped"]),
            },
        )
    corpus.store.refresh_views(["pes2o"])
    preview = ["id", "source", "created", "v1_keep", "v1_reason", "v2_keep", "v2_reason", "words"]
    return dg.MaterializeResult(metadata=partition_metadata(corpus.store, "pes2o", days, preview))


MAX_FILE_ROWS = 100  # shards listed in the run's metadata


class Pes2oReleaseConfig(dg.Config):
    """Release settings: the knowledge cutoff (valid = the month before the cutoff's month,
    up to the cutoff; train before; later documents are left out) and the shard bound."""

    cutoff: str = DEFAULT_CUTOFF
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES


def _release(
    context: dg.AssetExecutionContext, config: Pes2oReleaseConfig, corpus: CorpusStore, version: str
) -> dg.MaterializeResult:
    settings = ReleaseSettings(cutoff=config.cutoff, max_shard_bytes=config.max_shard_bytes)
    summary = write_release(corpus.home, version, settings)
    root = release_dir(corpus.home, version)
    stats = summary["stats"]
    jsonl = [f for f in summary["files"] if f["format"] == "jsonl"]
    context.log.info(
        f"pes2o {version}: {sum(s['documents'] for s in stats)} documents in {len(jsonl)} shard(s) under {root}"
    )
    png = funnel_png(summary["funnel"], f"peS2o {version} filter funnel (cutoff {config.cutoff})")
    plot_path = corpus.store.home / "reports" / f"pes2o_{version}_funnel.png"
    atomic_write_bytes(plot_path, png)
    return dg.MaterializeResult(
        metadata={
            "mode": summary["mode"],  # full | incremental | unchanged
            "groups_rebuilt": f"{summary['groups_rebuilt']} of {len(summary['groups'])} weeks",
            "documents": sum(s["documents"] for s in stats),
            "words": sum(s["words"] for s in stats),
            "shards": len(jsonl),
            "cutoff": config.cutoff,
            "statistics": rows_table(stats, ["source", "split", "documents", "words"]),
            "funnel": rows_table(summary["funnel"], ["source", "step", "dropped", "remaining"]),
            "files": rows_table(  # the first ones; manifest.json lists them all
                [
                    {k: f[k] for k in ("path", "documents", "bytes", "sha256")}
                    for f in summary["files"][:MAX_FILE_ROWS]
                ]
            ),
            "manifest": dg.MetadataValue.path(str(root / "manifest.json")),
            "funnel_plot": dg.MetadataValue.md(
                f"![filter funnel](data:image/png;base64,{base64.b64encode(png).decode()})"
            ),
            "funnel_plot_path": dg.MetadataValue.path(str(plot_path)),
            "path": dg.MetadataValue.path(str(root)),
            "load_with": dg.MetadataValue.md(
                f'`datasets.load_dataset("json", data_files={{"train": "{root}/train/*.jsonl.gz", '
                f'"validation": "{root}/valid/*.jsonl.gz"}})`'
            ),
        }
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
