"""Parse (SPEC §3-4, asset group ``parse``): PDFs through Grobid to TEI, TEI and LaTeX to the
S2ORC-style structured document (corpus.parse.document), sentence splitting."""
