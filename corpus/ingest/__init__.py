"""Ingest (SPEC §1-2, asset group ``ingest``): arXiv metadata from OAI-PMH pages, the Kaggle
snapshot or ``.abs`` files, and each paper's PDF and e-print from the landing zone, arXiv's bulk
archives or arXiv itself, probed and unpacked without trusting them."""
