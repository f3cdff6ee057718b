"""Graph assets: bibliography links across every day, and the citation graph with its statistics."""

import base64

import dagster as dg
import polars as pl

from corpus.citation_links import entry_mentions, fulltext_links, graph_nodes, scan_links, update_links
from corpus.graph import EDGE_SCHEMA, build_edges, degree_plot_png, graph_stats
from corpus.stages import FULLTEXT_IDS
from corpus.store import atomic_write_bytes
from corpus_assets.common import count_table, markdown_preview
from resources.store import CorpusStore


@dg.asset(
    deps=["papers", "bib_entries"],
    group_name="graph",
    kinds={"parquet"},
    description="Every bib entry linked to a kept paper: arXiv id, then DOI, then the S2ORC title score > 0.8. "
    "Incremental: a new day's entries are linked against all titles, old entries against its titles.",
)
def citation_links(context: dg.AssetExecutionContext, corpus: CorpusStore) -> dg.MaterializeResult:
    summary = update_links(corpus.home)
    corpus.store.refresh_views()
    context.log.info(
        f"citation_links: {summary['mode']} over {summary['days_linked']} of {summary['days']} day(s)"
    )
    return dg.MaterializeResult(
        metadata={
            "mode": summary["mode"],
            "days": summary["days"],
            "days_linked": summary["days_linked"],
            "links": summary["links"],
            "via": count_table(summary["via"], "via"),
        }
    )


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
