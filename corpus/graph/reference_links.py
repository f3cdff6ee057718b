"""Reference strings linked to papers, the way ``citation_links`` links bibliography entries:
``link_references(references, papers)``, the entry point others call by name (DESIGN.md §7; also
``corpus.link_references``). It puts the bibliography's parts together (an entry's ids and
publication, :mod:`corpus.graph.publication_links`; the links, :mod:`corpus.graph.linking`), so it
lives apart from both, and neither of them imports the other back."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from corpus.graph.linking import link_entries
from corpus.graph.publication_links import publication_rows, with_publications
from corpus.papers.bibliography import raw_entry_ids


def link_references(
    references: Sequence[str], papers: Iterable[tuple[str, str | None, str | None]]
) -> list[str | None]:
    """For each reference text, the arXiv id of the paper it links to among ``papers``
    (``(arxiv_id, journal_ref, doi)``), or None.

    The same path as ``citation_links``: each text becomes a bibliography entry as ``bib_entries``
    makes one from a raw reference (its arXiv id and DOI, its publication), the papers become link
    targets, and :func:`corpus.graph.linking.link_entries` links them (arXiv id, DOI, then by
    publication; the papers have no titles here, so no title links)."""
    refs = list(references)
    ids = [raw_entry_ids(text or "") for text in refs]
    entries = pl.concat(
        [
            pl.DataFrame(
                {
                    "entry_id": [str(i) for i in range(len(refs))],
                    "citing_id": [None] * len(refs),
                    "arxiv_id": [a for a, _ in ids],
                    "doi": [d for _, d in ids],
                    "norm_title": [None] * len(refs),
                },
                schema=dict.fromkeys(["entry_id", "citing_id", "arxiv_id", "doi", "norm_title"], pl.String),
            ),
            publication_rows(refs),
        ],
        how="horizontal_extend",
    )
    rows = list(papers)
    targets = pl.DataFrame(
        {
            "paper_id": [r[0] for r in rows],
            "journal_ref": [r[1] for r in rows],
            "doi": [r[2] for r in rows],
            "norm_title": [None] * len(rows),
        },
        schema=dict.fromkeys(["paper_id", "journal_ref", "doi", "norm_title"], pl.String),
    ).unique("paper_id", keep="first", maintain_order=True)
    links = link_entries(entries, with_publications(targets))
    cited = dict(zip(links["entry_id"].to_list(), links["cited_id"].to_list(), strict=True))
    return [cited.get(str(i)) for i in range(len(refs))]
