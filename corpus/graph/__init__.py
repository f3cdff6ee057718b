"""Graph (SPEC §5, asset group ``graph``): bibliography entries linked to papers (arXiv id, DOI,
S2ORC title score), kept up to date through a persisted index, and the citation graph with the
arXiv-as-a-dataset paper's Table 2 statistics."""
