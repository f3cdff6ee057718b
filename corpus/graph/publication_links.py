"""Links by publication: a bibliography entry that names a journal, volume and page (and no title
or identifier that links) is linked to the one corpus paper published there.

S2ORC links by title and identifier only; physics and mathematics cite "Phys. Rev. Lett. 80,
1121 (1998)". Every arXiv paper's metadata says where it was published: ``journal-ref`` (free
text) and ``doi``. Both sides are read by one parser (:mod:`corpus.papers.publication`), so:

* ``publication``: the entry's (volume, first page) equals a paper's journal-ref's, the journals
  are the same (:func:`corpus.papers.journals.compatible`: the same canonical journal, or one
  name abbreviating the other word by word) and the years, where both are given, differ by at
  most one (online and print years);
* ``doi_derived``: the DOI the entry's publication determines (:func:`corpus.papers.publication.
  derived_doi`: APS, JHEP, JCAP, ...) is a paper's DOI.

An entry links when these give exactly one paper (other than the citing one); both ways to the
same paper give ``doi_derived``. Several papers are an ``ambiguous_publication``: no link (a wrong
link is worse than none). :func:`corpus.graph.linking.link_entries` runs this after the arXiv-id,
DOI and title links, for the entries those left unlinked; :func:`link_references` is the same path
for reference strings and ``(arxiv_id, journal_ref, doi)`` papers.

Frames: entries carry :data:`PUB_COLUMNS` (strings, as :mod:`corpus.graph.linking` casts them);
papers carry ``paper_id``, ``doi`` and ``journal_ref``, or their publication already
(:func:`with_publications`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import polars as pl

from corpus.papers import journals
from corpus.papers.normalize import normalize_dois
from corpus.papers.publication import Publication, canonical_number, derived_doi, parse_publication

PUB_COLUMNS = ["pub_journal", "pub_volume", "pub_page", "pub_year"]
PUB_VIAS = ("doi_derived", "publication")
AMBIGUOUS = "ambiguous_publication"
_PUB_SCHEMA = dict.fromkeys(PUB_COLUMNS, pl.String)
_LINK_SCHEMA = {"entry_id": pl.String, "cited_id": pl.String, "via": pl.String}
_REASON_SCHEMA = {"entry_id": pl.String, "reason": pl.String}


def publication_rows(texts: Iterable[str | None]) -> pl.DataFrame:
    """:data:`PUB_COLUMNS` of each text (a journal-ref or a reference), nulls where none."""
    rows = []
    for text in texts:
        pub = parse_publication(text) if text else None
        rows.append(
            (pub.journal, pub.volume, pub.page_raw.upper(), str(pub.year) if pub.year else None)
            if pub
            else (None,) * 4
        )
    return pl.DataFrame(rows, schema=_PUB_SCHEMA, orient="row")


def with_publications(papers: pl.DataFrame) -> pl.DataFrame:
    """``papers`` with :data:`PUB_COLUMNS` read from their ``journal_ref`` (each distinct
    journal-ref read once); unchanged when they are there already."""
    if all(c in papers.columns for c in PUB_COLUMNS):
        return papers
    refs = papers["journal_ref"].cast(pl.String).drop_nulls().unique()
    parsed = pl.DataFrame({"journal_ref": refs}).hstack(publication_rows(refs.to_list()))
    return papers.join(parsed, on="journal_ref", how="left", nulls_equal=False)


@functools.lru_cache(maxsize=1 << 16)
def _derived(journal: str, volume: str, page: str) -> str | None:
    resolved = journals.resolve(journal) is not None
    return derived_doi(Publication(journal, volume, canonical_number(page), None, resolved, volume, page))


def _entry_dois(entries: pl.DataFrame) -> pl.Series:
    keys = entries.select(PUB_COLUMNS[:3]).rows()
    return pl.Series("ddoi", [_derived(*k) if None not in k else None for k in keys], dtype=pl.String)


def _page_key() -> pl.Expr:
    """The page as compared: leading zeros of its number dropped ("013009" = "13009")."""
    return pl.col("pub_page").str.to_uppercase().str.replace(r"^([A-Z]*)0+(\d)", "$1$2").alias("page_key")


def entry_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (with :data:`PUB_COLUMNS`) with the lookup keys of its publication: ``pub_key``
    ("volume|page", what :func:`link_publications` joins on) and ``pub_doi`` (its derived DOI)."""
    return frame.with_columns(_pub_key(), _entry_dois(frame).alias("pub_doi"))


def _pub_key() -> pl.Expr:
    return pl.concat_str([pl.col("pub_volume"), _page_key()], separator="|").alias("pub_key")


def _compatible_pairs(pairs: pl.DataFrame) -> pl.DataFrame:
    """``pairs[ej, pj]`` of distinct journal names with ``ok``: :func:`journals.compatible`."""
    return pairs.with_columns(
        pl.Series("ok", [journals.compatible(a, b) for a, b in pairs.iter_rows()], dtype=pl.Boolean)
    )


def link_publications(entries: pl.DataFrame, papers: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(links ``[entry_id, cited_id, via]``, reasons ``[entry_id, reason]``) of ``entries[entry_id,
    citing_id, *PUB_COLUMNS]`` against ``papers[paper_id, doi, *PUB_COLUMNS]`` (see the module doc)."""
    ent = entries.filter(pl.col("pub_volume").is_not_null() & pl.col("pub_page").is_not_null())
    if ent.height == 0 or papers.height == 0:
        return pl.DataFrame(schema=_LINK_SCHEMA), pl.DataFrame(schema=_REASON_SCHEMA)
    ent = ent.select("entry_id", "citing_id", *PUB_COLUMNS).with_columns(_entry_dois(ent), _page_key())
    pap = papers.select(
        pl.col("paper_id").cast(pl.String),
        normalize_dois(papers["doi"].cast(pl.String)).alias("doi"),
        *[pl.col(c).cast(pl.String) for c in PUB_COLUMNS],
    ).with_columns(_page_key())
    by_pub = ent.join(
        pap.drop("doi", "pub_page")
        .drop_nulls(["pub_volume", "page_key"])
        .rename({"pub_journal": "pj", "pub_year": "py"}),
        on=["pub_volume", "page_key"],
        how="inner",
    )
    if by_pub.height:
        pairs = by_pub.select(pl.col("pub_journal").alias("ej"), "pj").unique()
        by_pub = by_pub.join(
            _compatible_pairs(pairs), left_on=["pub_journal", "pj"], right_on=["ej", "pj"], how="left"
        )
        ey, py = pl.col("pub_year").cast(pl.Int64, strict=False), pl.col("py").cast(pl.Int64, strict=False)
        by_pub = by_pub.filter(pl.col("ok") & (ey.is_null() | py.is_null() | ((ey - py).abs() <= 1)))
    by_pub = by_pub.select(
        "entry_id", "citing_id", pl.col("paper_id").alias("cited_id"), pl.lit(1).alias("_r")
    )
    by_doi = (
        ent.drop_nulls("ddoi")
        .join(pap.select("paper_id", "doi").drop_nulls("doi"), left_on="ddoi", right_on="doi", how="inner")
        .select("entry_id", "citing_id", pl.col("paper_id").alias("cited_id"), pl.lit(0).alias("_r"))
    )
    cand = (
        pl.concat([by_doi, by_pub])
        .filter(pl.col("citing_id").is_null() | (pl.col("citing_id") != pl.col("cited_id")))
        .group_by("entry_id", "cited_id")
        .agg(pl.col("_r").min())
    )
    n = cand.group_by("entry_id").agg(pl.len().alias("n"))
    one = cand.join(n.filter(pl.col("n") == 1), on="entry_id", how="semi")
    links = one.select(
        "entry_id",
        "cited_id",
        pl.when(pl.col("_r") == 0).then(pl.lit(PUB_VIAS[0])).otherwise(pl.lit(PUB_VIAS[1])).alias("via"),
    ).sort("entry_id")
    reasons = n.filter(pl.col("n") > 1).select("entry_id", pl.lit(AMBIGUOUS).alias("reason")).sort("entry_id")
    return links.cast(_LINK_SCHEMA), reasons.cast(_REASON_SCHEMA)


def link_references(
    references: Sequence[str], papers: Iterable[tuple[str, str | None, str | None]]
) -> list[str | None]:
    """For each reference text, the arXiv id of the paper it links to among ``papers``
    (``(arxiv_id, journal_ref, doi)``), or None.

    The same path as ``citation_links``: each text becomes a bibliography entry as ``bib_entries``
    makes one from a raw reference (its arXiv id and DOI, its publication), the papers become link
    targets, and :func:`corpus.graph.linking.link_entries` links them (arXiv id, DOI, then by
    publication; the papers have no titles here, so no title links)."""
    from corpus.graph.linking import link_entries  # linking runs this module's step: import at call
    from corpus.papers.bibliography import raw_entry_ids

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
