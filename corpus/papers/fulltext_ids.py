"""arXiv ids named in a paper's body text: the ``fulltext_ids`` side table of ``papers``, which
the citation graph turns into ``fulltext_id`` edges (arXiv-as-a-dataset §2.3: co-citations by id
in the text, beside the bibliography's links)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from corpus.ingest.arxiv_ids import find_arxiv_ids

if TYPE_CHECKING:  # imported when edges are built: the asset name below is read where polars is not
    import polars as pl

FULLTEXT_IDS = "fulltext_ids"  # the side table's asset name


def fulltext_id_edges(docs: pl.DataFrame, known_ids: pl.Series | None = None) -> pl.DataFrame:
    """``docs[paper_id, text]`` -> ``[citing_id, cited_id, mentions]`` from arXiv ids in the text.

    ``mentions`` is how often the id occurs in that paper's text.  A paper naming
    its own id is not an edge; with ``known_ids`` only ids of those papers are kept
    (the graph's nodes).  Pass body text, not the bibliography: bibliography
    entries are linked by :mod:`corpus.graph.linking` already.
    """
    import polars as pl

    missing = [c for c in ("paper_id", "text") if c not in docs.columns]
    if missing:
        raise ValueError(f"docs frame lacks column(s) {missing}; has {docs.columns}")
    citing, cited = [], []
    for pid, text in docs.select("paper_id", "text").iter_rows():
        if not text:
            continue
        for aid, _, _ in find_arxiv_ids(text):
            citing.append(pid)
            cited.append(aid)
    hits = pl.DataFrame(
        {"citing_id": citing, "cited_id": cited}, schema={"citing_id": pl.String, "cited_id": pl.String}
    )
    hits = hits.filter(pl.col("citing_id") != pl.col("cited_id"))
    if known_ids is not None:
        hits = hits.filter(pl.col("cited_id").is_in(known_ids.cast(pl.String).implode()))
    return (
        hits.group_by("citing_id", "cited_id")
        .agg(pl.len().cast(pl.Int64).alias("mentions"))
        .sort("citing_id", "cited_id")
    )
