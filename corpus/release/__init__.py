"""Release (SPEC §6-7, asset group ``release``): peS2o v1/v2 signals, verdicts and release
shards, CiteWorth paragraphs and splits, their incremental state and dataset cards."""
