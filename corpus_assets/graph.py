"""Graph assets: bibliography links across every day, and the citation graph with its statistics."""

import json
import os
import shutil
from pathlib import Path

import dagster as dg

from corpus.store import atomic_write_bytes
from corpus_assets.common import TABLE_ROWS, count_table, markdown_preview, rows_table, svg_plot
from corpus_assets.freshness import read_mark, read_through_tags, save_mark, take_mark
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
    from corpus.graph.citation_links import ASSET, STATE_DIR

    return corpus.store.asset_dir(ASSET) / STATE_DIR / "runs" / run_id


@dg.op(ins={"papers": dg.In(dg.Nothing), "bib_entries": dg.In(dg.Nothing)}, out=dg.DynamicOut(dg.Nothing))
def plan_link_shards(context: dg.OpExecutionContext, corpus: CorpusStore):
    """Lay the links out in the configured number of shards; one step per shard follows."""
    from corpus.graph.citation_links import ASSET, prepare_links

    save_mark(context.instance, context.run, ASSET, read_mark(context.instance))  # before reading
    n = link_shards()
    if prepare_links(corpus.home, n):
        context.log.info(f"citation_links laid out again in {n} shard(s): every shard runs in full")
    for shard in range(n):
        yield dg.DynamicOutput(None, mapping_key=f"shard_{shard}_of_{n}")


@dg.op(ins={"start": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing))
def link_one_shard(context: dg.OpExecutionContext, corpus: CorpusStore) -> None:
    """One shard of the links (corpus.graph.citation_links.link_shard); its summary goes to a file
    for the last step (values between steps would need an IO manager every executor shares)."""
    from corpus.graph.citation_links import link_shard

    _, shard, _, n = context.get_mapping_key().split("_")
    summary = link_shard(corpus.home, int(shard), int(n))
    context.log.info(f"citation_links shard {shard}/{n}: {summary['mode']}, {summary['links']} links")
    body = json.dumps(summary, sort_keys=True).encode()
    atomic_write_bytes(_runs_dir(corpus, context.run_id) / f"shard-{shard}.json", body)


@dg.op(ins={"shards": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing))
def summarise_links(context: dg.OpExecutionContext, corpus: CorpusStore) -> dg.Output:
    from corpus.graph.citation_links import ASSET, merge_summaries

    mark = take_mark(context.instance, context.run, ASSET)
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
            TABLE_ROWS: summary["links"],
            "new_entries": summary["new_entries"],
            "relinked": summary["stale"],
            "old_links_changed": summary["changed"],
            "day_files_rewritten": summary["days_rewritten"],
            "via": count_table(summary["via"], "via", of="the links"),
            "table_4_by_field": table_4_by_field(summary.get("by_field") or {}),
        }
    )
    return dg.Output(None, tags=read_through_tags(mark))


LINK_VIAS = ("arxiv_id", "doi", "title", "doi_derived", "publication")


def table_4_by_field(by_field: dict[str, dict[str, int]]) -> dg.MetadataValue:
    """S2ORC Table 4's bibliography rows per field of study of the citing paper: entries, linked
    entries (and percent) by each way of linking, and entries whose publication named several papers."""
    rows = []
    for field, counts in sorted(by_field.items()):
        entries = counts.get("entries", 0)
        linked = sum(counts.get(v, 0) for v in LINK_VIAS)
        row = {"field": field, "entries": entries, "linked": linked,
               "linked_pct": round(100 * linked / entries, 2) if entries else 0.0}  # fmt: skip
        row.update({v: counts.get(v, 0) for v in LINK_VIAS})
        row["ambiguous_publication"] = counts.get("ambiguous_publication", 0)
        rows.append(row)
    columns = ["field", "entries", "linked", "linked_pct", *LINK_VIAS, "ambiguous_publication"]
    return rows_table(rows, columns)


@dg.graph_asset(
    ins={
        "papers": dg.AssetIn("papers", dagster_type=dg.Nothing),
        "bib_entries": dg.AssetIn("bib_entries", dagster_type=dg.Nothing),
    },
    group_name="graph",
    kinds={"parquet"},
    description="Every bib entry linked to a kept paper: arXiv id, then DOI, then the S2ORC title score > 0.8, "
    "then the publication it names (journal, volume, page) when exactly one paper's journal-ref or DOI has it. "
    "Incremental (new days' entries against all titles, old entries found through an index by the papers "
    "that changed) and split into CORPUS_LINK_SHARDS shards, one step each, run in parallel by the executor.",
)
def citation_links(papers, bib_entries):
    shards = plan_link_shards(papers=papers, bib_entries=bib_entries).map(link_one_shard)
    return summarise_links(shards.collect())


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


GRAPH_SHARDS_ENV = "CORPUS_GRAPH_SHARDS"


def graph_shards() -> int:
    """How many parallel steps build the graph's changed days (``CORPUS_GRAPH_SHARDS``, default 1;
    any value gives the same files)."""
    raw = os.environ.get(GRAPH_SHARDS_ENV, "1").strip() or "1"
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{GRAPH_SHARDS_ENV}={raw!r} is not a positive integer")
    return int(raw)


@dg.op(
    ins={name: dg.In(dg.Nothing) for name in ("links", "papers", "bib_entries", "fulltext_ids")},
    out=dg.DynamicOut(dg.Nothing),
)
def plan_graph_days(context: dg.OpExecutionContext, corpus: CorpusStore):
    """Which days' edges change (corpus.graph.citation_graph.plan_graph); one step per share of them."""
    from corpus.graph.citation_graph import ASSET, plan_graph

    save_mark(context.instance, context.run, ASSET, read_mark(context.instance))  # before reading
    plan = plan_graph(corpus.home)
    n = max(1, min(graph_shards(), len(plan["days"])))
    context.log.info(f"citation_graph: {plan['mode']}, {len(plan['days'])} day(s) to build in {n} step(s)")
    for part in range(n):
        yield dg.DynamicOutput(None, mapping_key=f"part_{part}_of_{n}")


@dg.op(ins={"start": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing))
def build_graph_days(context: dg.OpExecutionContext, corpus: CorpusStore) -> None:
    from corpus.graph.citation_graph import build_days

    _, part, _, n = context.get_mapping_key().split("_")
    built = build_days(corpus.home, int(part), int(n))
    context.log.info(f"citation_graph: {built} day(s) built in part {part}/{n}")


def _edges_preview(store, edges: int, rows: int = 10) -> dg.MetadataValue:
    """The graph's first edges (its first citing days' files, in day order), saying of how many."""
    import polars as pl

    from corpus.graph.network import EDGE_SCHEMA

    frames, have = [], 0
    for path in sorted(store.asset_dir("citation_graph").glob("edges-*.parquet")):
        if have >= rows:
            break
        frame = pl.read_parquet(path, n_rows=rows - have)
        frames.append(frame)
        have += frame.height
    head = pl.concat(frames) if frames else pl.DataFrame(schema=EDGE_SCHEMA)
    first = f"the first {head.height} of" if head.height < edges else "all"
    label = f"citation_graph: {first} {edges:,} edges, first citing days first (one file per citing day)"
    return markdown_preview(head, list(EDGE_SCHEMA), rows=rows, label=label)


@dg.op(ins={"parts": dg.In(dg.Nothing)}, out=dg.Out(dg.Nothing))
def finish_graph_stats(context: dg.OpExecutionContext, corpus: CorpusStore) -> dg.Output:

    from corpus.graph.citation_graph import ASSET, finish_graph

    mark = take_mark(context.instance, context.run, ASSET)
    store = corpus.store
    plot_path = store.home / "reports" / "citation_graph_degrees.svg"
    summary = finish_graph(corpus.home, plot=plot_path)
    store.refresh_views()
    metadata: dict = {
        "mode": summary["mode"],
        "days_built": summary["days_built"],
        "nodes": summary["nodes"],
        "edges": summary["edges"],
        TABLE_ROWS: summary["edges"],
    }
    if summary["nodes"]:
        metadata.update(
            {
                "mean_degree": round(summary["mean_degree"], 4),
                "alpha_in": summary["alpha_in"],
                "alpha_out": summary["alpha_out"],
                "xmin_in": summary["xmin_in"],
                "xmin_out": summary["xmin_out"],
                "wcc_share": round(summary["wcc_share"], 4),
                "isolated_share": round(summary["isolated_share"], 4),
                "table_2": table_2(summary, summary["nodes"], summary["edges"]),
                # the WCC share and the fits are redone when the graph moved 5 % (corpus.graph.citation_graph)
                "whole_graph_stats_at_edges": summary["whole_graph_at"]["edges"],
            }
        )
        if plot_path.exists():
            metadata.update(svg_plot("degree_plot", "in/out degree distributions", plot_path))
    metadata["via"] = count_table(summary["via"], "via", of="the links")
    metadata["preview"] = _edges_preview(store, summary["edges"])
    context.add_output_metadata(metadata)
    return dg.Output(None, tags=read_through_tags(mark))


@dg.graph_asset(
    ins={  # what it reads: the links, and the days' papers, bibliographies and full-text ids
        "links": dg.AssetIn("citation_links", dagster_type=dg.Nothing),
        "papers": dg.AssetIn("papers", dagster_type=dg.Nothing),
        "bib_entries": dg.AssetIn("bib_entries", dagster_type=dg.Nothing),
        "fulltext_ids": dg.AssetIn("fulltext_ids", dagster_type=dg.Nothing),
    },
    group_name="graph",
    kinds={"parquet"},
    description="Paper-level citation edges (bib links + arXiv ids in the full text), one file per citing "
    "day (citation_graph/edges-DAY.parquet), with the statistics of Table 2 of the arXiv-as-a-dataset paper "
    "and a log-log degree plot. Incremental: only days whose inputs or deciding papers changed are built "
    "(in CORPUS_GRAPH_SHARDS parallel steps); the statistics come from integer node codes.",
)
def citation_graph(links, papers, bib_entries, fulltext_ids):
    parts = plan_graph_days(links=links, papers=papers, bib_entries=bib_entries, fulltext_ids=fulltext_ids)
    parts = parts.map(build_graph_days)
    return finish_graph_stats(parts.collect())
