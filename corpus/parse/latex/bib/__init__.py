"""Bibliographies of LaTeX papers: which source the paper prints (:mod:`.sources`), its items
read from ``thebibliography``/.bbl (:mod:`.bibitems`, :mod:`.entries`) or .bib/biblatex
(:mod:`.bibtex`), one item's fields and identifiers (:mod:`.item`) and author lists (:mod:`.names`)."""
