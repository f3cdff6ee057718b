"""The index of arXiv's bulk tars (unpartitioned, incremental): what ``CORPUS_SOURCE=bulk`` reads from."""

import dagster as dg

from corpus.ingest.bulk import INDEX_ASSET, BulkRoot
from corpus_assets.common import count_table, rows_table
from resources.arxiv import ArxivResource
from resources.store import CorpusStore

BULK_INDEX_JOB = "corpus_bulk_index"


@dg.asset(
    name=INDEX_ASSET,
    group_name="ingest",
    kinds={"parquet"},
    check_specs=[
        dg.AssetCheckSpec(
            "tars_verified",
            asset=INDEX_ASSET,
            description="every tar in the manifests is present and matches its MD5 and size",
        )
    ],
    description=(
        "arXiv's bulk tars (CORPUS_BULK) indexed member by member: id, version, kind, tar, offset, "
        "size, MD5. Each tar is verified against its manifest once; new or re-issued tars are indexed "
        "on the next materialisation, a tar that fails its check is reported and not used."
    ),
)
def arxiv_bulk_index(
    context: dg.AssetExecutionContext, corpus: CorpusStore, arxiv: ArxivResource
) -> dg.MaterializeResult:
    if not arxiv.bulk:
        raise dg.Failure(description="no bulk root: set CORPUS_BULK to a directory, s3:// or gs:// URL")
    if arxiv.bulk_layout != "tars":
        raise dg.Failure(description=f"layout {arxiv.bulk_layout!r} has no tars to index (read it directly)")
    from corpus.ingest.bulk_index import update_index

    root = BulkRoot.open(arxiv.bulk)
    try:
        summary = update_index(root, corpus.home, log=context.log.info)
    finally:
        root.close()
    corpus.store.refresh_views()
    for problem in summary["problems"]:
        context.log.warning(problem)
    unusable = summary["unusable"]
    return dg.MaterializeResult(
        metadata={
            "tars": summary["tars"],
            "indexed_now": summary["indexed"],
            "unchanged": summary["unchanged"],
            "dropped": summary["dropped"],
            "members": summary["members"],
            "bytes_read": summary["bytes_read"],
            "tar_status": count_table(summary["status"], "status", of="the tars"),
            "unusable_tars": rows_table(unusable[:50], ["tar", "status", "reason"]),
            "path": dg.MetadataValue.path(str(corpus.store.asset_dir(INDEX_ASSET))),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name="tars_verified",
                passed=not unusable and not summary["problems"],
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"unusable": len(unusable), "manifest_problems": len(summary["problems"])},
            )
        ],
    )


bulk_index_job = dg.define_asset_job(
    BULK_INDEX_JOB,
    selection=dg.AssetSelection.assets(INDEX_ASSET),
    description="Index the bulk root's new or re-issued tars (run after arXiv's monthly update).",
)
