"""corpus: the pure library behind the Dagster assets (it never imports dagster).

Laid out by the asset groups (SPEC.md section in brackets; corpus/README.md has a line per module):

* ``corpus.ingest``: arXiv metadata and raw files (SPEC §1-2): ids, OAI-PMH, records, the
  landing zone, HTTP, fetching, bulk archives, PDF probing, e-print unpacking.
* ``corpus.parse``: full text (SPEC §3-4): the Grobid client, TEI and LaTeX parsers, the
  S2ORC document model, sentences.
* ``corpus.papers``: canonical papers and filters, bibliographies, fields, language (SPEC §5).
* ``corpus.graph``: bibliography linking, the incremental link index, the citation graph (SPEC §5).
* ``corpus.release``: peS2o v1/v2 and CiteWorth, their release writers and cards (SPEC §6-7).
* ``corpus.sample``: the synthetic landing-zone generator (demo, tests, benchmarks): not the product.
* top level: ``store`` (storage of record), ``day_io``, ``parallel``, ``scratch``.

Each group's ``days`` module holds its stages' day functions: an asset (or the Pipes worker)
calls them, and each writes only the tables its asset declares. A layer imports only from the
layers before it (tests/test_layers.py): store < ingest < parse < papers < graph < release.
"""

# The entry points others call by name (DESIGN.md §7), here as well as in the modules that own
# them, loaded on first use: ``import corpus`` stays as light as the code server needs it.
_ENTRY_POINTS = {"link_references": "corpus.graph.publication_links"}


def __getattr__(name: str):
    if name in _ENTRY_POINTS:
        import importlib

        return getattr(importlib.import_module(_ENTRY_POINTS[name]), name)
    raise AttributeError(f"module 'corpus' has no attribute {name!r}")
