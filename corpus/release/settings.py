"""The releases' asset names and default settings, in a module that imports nothing heavy.

The Dagster layer needs them when its definitions load (asset keys, config defaults), and the
code server loads the definitions without polars or numpy; the release modules that do the work
import them from here.
"""

PARAGRAPHS = "citeworth_paragraphs"  # CiteWorth: every body paragraph of a day, kept or with its reason
CANDIDATES = "citeworth_candidates"  # CiteWorth: every paper of a day, candidate or why not
# peS2o: the card's v1/v2 knowledge cutoff (train < 2022-12-01, valid up to 2023-01-03)
DEFAULT_CUTOFF = "2023-01-03"
DEFAULT_MAX_SHARD_BYTES = 128 * 1024 * 1024  # peS2o: JSON lines before gzip, per shard
# peS2o chunks: the largest expected (all of arXiv: ~5,000 per stream) and the smallest (a small
# release: ~256 chunks per stream)
DEFAULT_CHUNK_BYTES = 16 * 1024 * 1024
DEFAULT_MIN_CHUNK_BYTES = 256 * 1024
