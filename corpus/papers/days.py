"""The papers stages, one day at a time (no Dagster): ``papers`` (with its side table
``fulltext_ids``, declared by the same multi-asset) and ``bib_entries``; and the chosen full
text of a day's kept papers, which the release stages read."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from corpus.day_io import upstream
from corpus.papers.fulltext_ids import FULLTEXT_IDS
from corpus.store import Store


def parsed_texts(store: Store, asset: str, day: str) -> dict[str, str]:
    """``{paper id: StructuredDoc JSON}`` for the successful parses of a day (missing table = none)."""
    if not store.has_partition(asset, day):
        return {}
    rows = store.read_partition(asset, day).filter(pl.col("status") == "ok").select("id", "doc")
    return dict(rows.iter_rows())


def parsed_docs(store: Store, asset: str, day: str) -> dict[str, dict]:
    """``{paper id: StructuredDoc dict}`` for the successful parses of a day (missing table = none)."""
    return {pid: json.loads(doc) for pid, doc in parsed_texts(store, asset, day).items()}


def chosen_texts(store: Store, day: str) -> dict[str, str]:
    """The full text ``papers`` chose for each kept paper of a day (Grobid or LaTeX), as JSON.

    Callers decode one paper at a time (:func:`chosen_docs`): decoded documents are
    several times the size of their JSON, so a day never holds all of them at once.
    """
    papers = upstream(store, "papers", day).filter(pl.col("kept") & pl.col("parse_source").is_not_null())
    by_source = {
        "grobid": parsed_texts(store, "pdf_parses", day),
        "latex": parsed_texts(store, "latex_parses", day),
    }
    return {
        pid: by_source[src][pid]
        for pid, src in papers.select("id", "parse_source").iter_rows()
        if pid in by_source.get(src, {})
    }


def chosen_docs(store: Store, day: str) -> Iterator[tuple[str, dict]]:
    """(paper id, StructuredDoc dict) of :func:`chosen_texts`, decoded one paper at a time."""
    for pid, text in chosen_texts(store, day).items():
        yield pid, json.loads(text)


def papers_day(home: str | Path, day: str) -> dict:
    """Canonical metadata, the chosen parse and the S2ORC filters for one day's papers."""
    from corpus.papers.fulltext_ids import fulltext_id_edges
    from corpus.papers.metadata import canonical_papers, paper_counts, papers_frame

    store = Store(Path(home))
    meta = upstream(store, "arxiv_metadata", day).filter(~pl.col("deleted"))
    grobid = parsed_docs(store, "pdf_parses", day)
    latex = parsed_docs(store, "latex_parses", day)
    rows, failures = canonical_papers(meta.to_dicts(), grobid, latex)
    papers = papers_frame(rows)
    store.write_partition("papers", day, papers)
    by_source = {"grobid": grobid, "latex": latex}
    docs = pl.DataFrame(
        {
            "paper_id": [r["id"] for r in rows if r["kept"] and r["parse_source"]],
            "text": [
                "\n".join(p["text"] for p in by_source[r["parse_source"]][r["id"]]["body_text"])
                for r in rows
                if r["kept"] and r["parse_source"]
            ],
        },
        schema={"paper_id": pl.Utf8, "text": pl.Utf8},
    )
    store.write_partition(FULLTEXT_IDS, day, fulltext_id_edges(docs))
    return {
        "day": day,
        "papers": papers.height,
        "failures": failures,
        "drop_reasons": papers["drop_reason"].to_list(),
        "counts": paper_counts(papers),
        "parse_reasons": dict(Counter(papers["parse_reason"].to_list())),
    }


def bib_entries_day(home: str | Path, day: str) -> dict:
    """Every bibliography entry of every chosen parse of one day, normalised for linking."""
    from corpus.papers.bibliography import bib_frame, bib_rows

    store = Store(Path(home))
    rows = []
    for pid, doc in chosen_docs(store, day):
        rows.extend(bib_rows(pid, doc))
    entries = bib_frame(rows)
    store.write_partition("bib_entries", day, entries)
    return {
        "day": day,
        "entries": entries.height,
        "with_title": int(entries["norm_title"].is_not_null().sum()),
        "with_doi": int(entries["doi"].is_not_null().sum()),
        "with_arxiv_id": int(entries["arxiv_id"].is_not_null().sum()),
    }
