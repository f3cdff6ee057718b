"""Graph assets: bibliography links across every day, and the citation graph with its statistics."""

import base64

import dagster as dg
import polars as pl

from corpus.citation_links import fulltext_links, graph_input_stamp, graph_nodes, link_rows, update_links
from corpus.graph import EDGE_SCHEMA, build_edges, degree_plot_png, graph_stats
from corpus.stages import FULLTEXT_IDS
from corpus.store import atomic_write_bytes
from corpus_assets.common import count_table, markdown_preview, rows_table
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


# Table 2 of the arXiv-as-a-dataset paper (seeds/arxiv-as-a-dataset-paper.txt §2.3): its arXiv
# co-citation network, shown beside this corpus's row (31 % isolated: its text; x_min: its caption).
PAPER_TABLE_2 = {
    "dataset": "arXiv (arXiv-as-a-dataset, 2019)",
    "nodes": "1.35e6",
    "edges": "6.72e6",
    "mean_degree": "9.933",
    "alpha_in": "2.93",
    "alpha_out": "3.93",
    "wcc_pct": "62",
    "isolated_pct": "31",
    "xmin_in": "73",
    "xmin_out": "59",
}


def table_2(stats: dict, nodes: int, edges: int) -> dg.MetadataValue:
    """Table 2 as one table: this corpus's row, the paper's row beside it, exponents rounded."""

    def fmt(value, digits: int = 2) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    ours = {
        "dataset": "this corpus",
        "nodes": f"{nodes:,}",
        "edges": f"{edges:,}",
        "mean_degree": fmt(stats["mean_degree"], 3),
        "alpha_in": fmt(stats["alpha_in"]),
        "alpha_out": fmt(stats["alpha_out"]),
        "wcc_pct": fmt(100 * stats["wcc_share"], 1),
        "isolated_pct": fmt(100 * stats["isolated_share"], 1),
        "xmin_in": str(stats["xmin_in"]),
        "xmin_out": str(stats["xmin_out"]),
    }
    return rows_table([ours, PAPER_TABLE_2], list(PAPER_TABLE_2))


@dg.asset(
    deps=["citation_links"],
    group_name="graph",
    kinds={"parquet"},
    description="Paper-level citation edges (bib links + arXiv ids in the full text) with the statistics of "
    "Table 2 of the arXiv-as-a-dataset paper and a log-log degree plot.",
)
def citation_graph(context: dg.AssetExecutionContext, corpus: CorpusStore) -> dg.MaterializeResult:
    store = corpus.store
    stamp = graph_input_stamp(store, FULLTEXT_IDS)
    marker = store.home / ".index" / "citation_graph.stamp"
    if (
        marker.exists()
        and marker.read_text() == stamp
        and any(store.asset_dir("citation_graph").glob("*.parquet"))
    ):
        context.log.info("citation_graph: no input changed since the last build; nothing to do")
        return dg.MaterializeResult(metadata={"mode": "unchanged"})
    # Every input as of each paper's latest delivery (a new arXiv version replaces the old one).
    nodes = graph_nodes(store)
    links = link_rows(store)  # with each bib entry's mentions, joined a day at a time
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
                "table_2": table_2(stats, len(nodes), edges.height),
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
    metadata["mode"] = "full"
    atomic_write_bytes(marker, stamp.encode())
    return dg.MaterializeResult(metadata=metadata)
