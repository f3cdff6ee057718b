"""Graph assets: bibliography links across every day, and the citation graph with its statistics."""

import base64
import json
import os
import shutil
from pathlib import Path

import dagster as dg
import polars as pl

from corpus.citation_links import (
    ASSET,
    STATE_DIR,
    entry_mentions,
    fulltext_links,
    graph_nodes,
    link_shard,
    merge_summaries,
    prepare_links,
    scan_links,
)
from corpus.graph import EDGE_SCHEMA, build_edges, degree_plot_png, graph_stats
from corpus.stages import FULLTEXT_IDS
from corpus.store import atomic_write_bytes
from corpus_assets.common import count_table, markdown_preview
from resources.store import CorpusStore

LINK_SHARDS_ENV = "CORPUS_LINK_SHARDS"


def link_shards() -> int:
    """How many shards ``citation_links`` is split into (``CORPUS_LINK_SHARDS``, default 1): a
    setting of the deployment, read when a run plans its steps; changing it relinks everything."""
    raw = os.environ.get(LINK_SHARDS_ENV, "1").strip() or "1"
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{LINK_SHARDS_ENV}={raw!r} is not a positive integer")
    return int(raw)


def _runs_dir(corpus: CorpusStore, run_id: str) -> Path:
    return corpus.store.asset_dir(ASSET) / STATE_DIR / "runs" / run_id


@dg.op(ins={"papers": dg.In(dg.Nothing), "bib_entries": dg.In(dg.Nothing)}, out=dg.DynamicOut(dg.Nothing))
def plan_link_shards(context: dg.OpExecutionContext, corpus: CorpusStore):
    """Lay the links out in the configured number of shards; one step per shard follows."""
    n = link_shards()
    if prepare_links(corpus.home, n):
        context.log.info(f"citation_links laid out again in {n} shard(s): every shard runs in full")
    for shard in range(n):
        yield dg.DynamicOutput(None, mapping_key=f"shard_{shard}_of_{n}")


@dg.op(ins={"start": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing))
def link_one_shard(context: dg.OpExecutionContext, corpus: CorpusStore) -> None:
    """One shard of the links (corpus.citation_links.link_shard); its summary goes to a file
    for the last step (values between steps would need an IO manager every executor shares)."""
    _, shard, _, n = context.get_mapping_key().split("_")
    summary = link_shard(corpus.home, int(shard), int(n))
    context.log.info(f"citation_links shard {shard}/{n}: {summary['mode']}, {summary['links']} links")
    body = json.dumps(summary, sort_keys=True).encode()
    atomic_write_bytes(_runs_dir(corpus, context.run_id) / f"shard-{shard}.json", body)


@dg.op(ins={"shards": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing))
def summarise_links(context: dg.OpExecutionContext, corpus: CorpusStore) -> None:
    runs = _runs_dir(corpus, context.run_id)
    summaries = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(runs.glob("shard-*.json"))]
    shutil.rmtree(runs, ignore_errors=True)
    summary = merge_summaries(summaries)
    corpus.store.refresh_views()
    context.log.info(
        f"citation_links: {summary['mode']} over {summary['days_linked']} of {summary['days']} day(s), "
        f"{summary['shards']} shard(s)"
    )
    context.add_output_metadata(
        {
            "mode": summary["mode"],
            "shards": summary["shards"],
            "days": summary["days"],
            "days_linked": summary["days_linked"],
            "links": summary["links"],
            "new_entries": summary["new_entries"],
            "relinked": summary["stale"],
            "old_links_changed": summary["changed"],
            "day_files_rewritten": summary["days_rewritten"],
            "via": count_table(summary["via"], "via"),
        }
    )


@dg.graph_asset(
    ins={
        "papers": dg.AssetIn("papers", dagster_type=dg.Nothing),
        "bib_entries": dg.AssetIn("bib_entries", dagster_type=dg.Nothing),
    },
    group_name="graph",
    kinds={"parquet"},
    description="Every bib entry linked to a kept paper: arXiv id, then DOI, then the S2ORC title score > 0.8. "
    "Incremental (new days' entries against all titles, old entries found through an index by the papers "
    "that changed) and split into CORPUS_LINK_SHARDS shards, one step each, run in parallel by the executor.",
)
def citation_links(papers, bib_entries):
    shards = plan_link_shards(papers=papers, bib_entries=bib_entries).map(link_one_shard)
    return summarise_links(shards.collect())


@dg.asset(
    deps=["citation_links"],
    group_name="graph",
    kinds={"parquet"},
    description="Paper-level citation edges (bib links + arXiv ids in the full text) with the statistics of "
    "Table 2 of the arXiv-as-a-dataset paper and a log-log degree plot.",
)
def citation_graph(context: dg.AssetExecutionContext, corpus: CorpusStore) -> dg.MaterializeResult:
    store = corpus.store
    # Every input as of each paper's latest delivery (a new arXiv version replaces the old one).
    nodes = graph_nodes(store)
    links = scan_links(store).collect()
    mentions = entry_mentions(store)
    links = links.join(mentions, on="entry_id", how="left").with_columns(pl.col("mentions").fill_null(0))
    fulltext = fulltext_links(store, FULLTEXT_IDS)
    edges = (
        build_edges(links, fulltext)
        if links.height or fulltext is not None
        else pl.DataFrame(schema=EDGE_SCHEMA)
    )
    edges = edges.filter(
        pl.col("citing_id").is_in(nodes.implode()) & pl.col("cited_id").is_in(nodes.implode())
    )
    store.write_table("citation_graph", edges.sort("citing_id", "cited_id"))
    store.refresh_views()
    metadata: dict = {"nodes": len(nodes), "edges": edges.height}
    if len(nodes):
        stats = graph_stats(edges, nodes)
        png = degree_plot_png(edges, nodes)
        plot_path = store.home / "reports" / "citation_graph_degrees.png"
        atomic_write_bytes(plot_path, png)
        metadata.update(
            {
                "mean_degree": round(stats["mean_degree"], 4),
                "alpha_in": stats["alpha_in"],
                "alpha_out": stats["alpha_out"],
                "xmin_in": stats["xmin_in"],
                "xmin_out": stats["xmin_out"],
                "wcc_share": round(stats["wcc_share"], 4),
                "isolated_share": round(stats["isolated_share"], 4),
                "degree_plot": dg.MetadataValue.md(
                    f"![in/out degree distributions](data:image/png;base64,{base64.b64encode(png).decode()})"
                ),
                "degree_plot_path": dg.MetadataValue.path(str(plot_path)),
            }
        )
    metadata["via"] = count_table(
        dict(edges.group_by("via").len().iter_rows()) if edges.height else {}, "via"
    )
    metadata["preview"] = markdown_preview(edges, list(EDGE_SCHEMA))
    return dg.MaterializeResult(metadata=metadata)
