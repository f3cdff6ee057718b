"""Synthetic landing zones (and bulk roots) for the demo, tests and benchmarks: arXiv-shaped
metadata, PDFs, TEI and e-prints from a seed. Not part of the product: nothing else imports it.
``python -m corpus.sample --help``."""
