"""Which code made each asset's rows: one version constant per stage, in the module that owns
its rules, and the asset -> constant map that Dagster's ``code_version`` and the store's
partition provenance both read.

A stage's version moves whenever the stage writes different rows for the same input (a parser
fix, a new column, a changed filter). Existing corpora then re-derive exactly the partitions
built with an older version, and downstream only where the new rows differ
(:mod:`corpus.provenance`, ``make rederive``). ``tests/test_stage_versions.py`` fails when a
stage's output on the real files in ``../shared`` changes while its version stays put.

The constants are read from their modules' source, not imported: the code server that
describes the assets must not load the parsers and data libraries those modules import
(tests/test_layers.py). A test checks that what is read here equals what the module holds.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

_ROOT = Path(__file__).resolve().parent

# asset -> (module under corpus/, constant). The assets of one multi-asset share their stage's
# version: one function writes both tables.
STAGES: dict[str, tuple[str, str]] = {
    "arxiv_metadata": ("ingest/records.py", "METADATA_VERSION"),
    "arxiv_metadata_failures": ("ingest/records.py", "METADATA_VERSION"),
    "arxiv_bulk_index": ("ingest/bulk_index.py", "BULK_INDEX_VERSION"),
    "arxiv_pdfs": ("ingest/pdf.py", "PDF_VERSION"),
    "arxiv_sources": ("ingest/eprint.py", "EPRINT_VERSION"),
    "grobid_tei": ("parse/grobid.py", "GROBID_STAGE_VERSION"),
    "pdf_parses": ("parse/tei/parser.py", "TEI_PARSER_VERSION"),
    "latex_parses": ("parse/latex/parser.py", "PARSER_VERSION"),
    "papers": ("papers/metadata.py", "PAPERS_VERSION"),
    "fulltext_ids": ("papers/metadata.py", "PAPERS_VERSION"),
    "bib_entries": ("papers/bibliography.py", "BIB_ENTRIES_VERSION"),
    "pes2o": ("release/pes2o.py", "PES2O_VERSION"),
    "citeworth_paragraphs": ("release/citeworth.py", "CITEWORTH_VERSION"),
    "citeworth_candidates": ("release/citeworth.py", "CITEWORTH_VERSION"),
    "citation_links": ("graph/linking.py", "LINKING_VERSION"),
    "citation_graph": ("graph/network.py", "GRAPH_VERSION"),
    "pes2o_v1": ("release/pes2o_release.py", "PES2O_RELEASE_VERSION"),
    "pes2o_v2": ("release/pes2o_release.py", "PES2O_RELEASE_VERSION"),
    "citeworth_splits": ("release/citeworth_release.py", "CITEWORTH_SPLITS_VERSION"),
}


def module_name(asset: str) -> str:
    """The dotted module that owns ``asset``'s version constant."""
    path = STAGES[asset][0]
    return "corpus." + path.removesuffix(".py").replace("/", ".")


@functools.cache
def _read_constant(path: str, name: str) -> str:
    text = (_ROOT / path).read_text(encoding="utf-8")
    # NAME = "value"  or  NAME = (\n "value"  # comment\n)
    found = re.search(rf'^{name}\s*=\s*\(?\s*"([^"\n]+)"', text, re.MULTILINE)
    if found is None:
        raise LookupError(f'corpus/{path} defines no {name} = "..." (a stage\'s version constant)')
    return found.group(1)


def code_version(asset: str) -> str:
    """The version of the code that decides ``asset``'s rows (Dagster's ``code_version``)."""
    try:
        path, name = STAGES[asset]
    except KeyError:
        raise KeyError(f"{asset} has no stage version: add it to corpus.versions.STAGES") from None
    return _read_constant(path, name)


def code_versions() -> dict[str, str]:
    """Every asset's code version."""
    return {asset: code_version(asset) for asset in STAGES}


# Partitions written before versions were recorded carry none: each is taken as built by its
# stage's version at the time recording began (the code they were built with is not known
# better), unless its own rows name the version that made them (a stage whose rows carry a
# version column: latex_parses names its parser's, so a day parsed by corpus.parse.latex/1 is
# known to be older).
FIRST_RECORDED: dict[str, str] = {  # never changes: the versions of 2026-11-28
    "arxiv_metadata": "corpus.ingest.records/1",
    "arxiv_metadata_failures": "corpus.ingest.records/1",
    "arxiv_bulk_index": "corpus.ingest.bulk_index/1",
    "arxiv_pdfs": "corpus.ingest.pdf/1",
    "arxiv_sources": "corpus.ingest.eprint/1",
    "grobid_tei": "corpus.parse.grobid/1",
    "pdf_parses": "corpus.parse.tei/1",
    "latex_parses": "corpus.parse.latex/2",
    "papers": "corpus.papers.metadata/1",
    "fulltext_ids": "corpus.papers.metadata/1",
    "bib_entries": "corpus.papers.bibliography/1",
    "pes2o": "corpus.release.pes2o/1",
    "citeworth_paragraphs": "corpus.release.citeworth/1",
    "citeworth_candidates": "corpus.release.citeworth/1",
    "citation_links": "corpus.graph.linking/1",
    "citation_graph": "corpus.graph.network/1",
    "pes2o_v1": "corpus.release.pes2o_release/1",
    "pes2o_v2": "corpus.release.pes2o_release/1",
    "citeworth_splits": "corpus.release.citeworth_release/1",
}
VERSION_COLUMNS: dict[str, str] = {"latex_parses": "parser_version"}
