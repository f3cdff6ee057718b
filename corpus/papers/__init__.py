"""Papers (SPEC §5, asset group ``papers``): canonical metadata by majority vote, the chosen
full text, the S2ORC filters, bibliography entries, arXiv categories to fields, language id."""
