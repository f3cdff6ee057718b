"""papers + bib_entries speed: canonical_paper (vote, chosen parse, filters incl. cld2) and
bib_rows per paper, on one core.

Usage: ``benchmarks/papers.py [INPUT ...]`` where an input is a Grobid TEI file
(``*.xml``), an arXiv e-print (``*.tar.gz`` / ``*.gz``) or an S2ORC JSON record
(``*.json``). Without inputs: the real TEI and e-prints of ../shared/landing and
the TEI of ../shared/data/pdf_tei_pairs. Each paper gets its OAI row from
../shared/landing/oai when the id is there, else a row made from the parse's
header. Parsing happens once, before timing; the set is repeated until
``MIN_SECONDS`` of CPU time have passed. Both parse forms are timed: the
pydantic StructuredDoc and the plain dict (``parse_tei_dict``, the bulk path).
Target (DESIGN.md §6): a 1,000-paper day end to end in ≤ 120 s on 2 cores.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from _common import SHARED, peak_mb, result

from corpus.ingest.oai import read_page
from corpus.ingest.records import records_frame
from corpus.papers.bibliography import bib_frame, bib_rows
from corpus.papers.metadata import canonical_paper, filter_table, papers_frame

MIN_SECONDS = 3.0


def _oai_rows() -> dict[str, dict]:
    records = []
    for path in sorted((SHARED / "landing" / "oai").glob("*.xml")):
        records += read_page(path)[1]
    return {r["id"]: r for r in records_frame(records).to_dicts()}


def load(paths: list[Path]) -> list[tuple[str, object, object]]:
    """(paper id, grobid parse or None, latex parse or None) per input; bad inputs are skipped loudly."""
    from corpus.parse.latex import parse_eprint
    from corpus.parse.s2orc_json import read_s2orc_record
    from corpus.parse.tei import parse_tei

    out = []
    with tempfile.TemporaryDirectory() as scratch:
        for i, p in enumerate(paths):
            try:
                if p.suffix == ".json":
                    doc = read_s2orc_record(json.loads(p.read_text()))
                    out.append((doc.paper_id, doc, None))
                elif p.name.endswith((".tar.gz", ".gz")):
                    pid = p.name.removesuffix(".gz").removesuffix(".tar")
                    res = parse_eprint(p, pid, Path(scratch) / str(i))
                    if res.doc is None:
                        raise ValueError(res.failure)
                    out.append((pid, None, res.doc))
                else:
                    pid = p.name.removesuffix(".xml").removesuffix(".tei").removesuffix(".grobid")
                    out.append((pid, parse_tei(p.read_bytes(), pid), None))
            except Exception as exc:  # a bad input is reported, not fatal
                print(f"skip {p}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return out


def default_inputs() -> list[Path]:
    landing = SHARED / "landing"
    return (
        sorted((landing / "tei").glob("*.tei.xml"))
        + sorted((landing / "src").glob("*.tar.gz"))
        + sorted((SHARED / "data").glob("pdf_tei_pairs/*/*.xml"))
    )


def _row_for(pid: str, doc, oai: dict[str, dict]) -> dict:
    if pid in oai:
        return oai[pid]
    authors = [{"keyname": a.last, "forenames": a.first} for a in doc.authors] if doc is not None else []
    return {"id": pid, "title": getattr(doc, "title", ""), "authors": authors, "categories": ["cs.CL"]}


def run(items: list[tuple[str, dict, object, object]]) -> tuple[int, int, float, list, list]:
    """Repeat the whole set until MIN_SECONDS of CPU time: (papers, entries, seconds, last rows)."""
    n_papers = n_entries = 0
    papers, bibs = [], []
    start = time.process_time()
    while time.process_time() - start < MIN_SECONDS:
        papers, bibs = [], []
        for pid, rec, g, lx in items:
            row = canonical_paper(rec, g, lx)
            papers.append(row)
            chosen = lx if row["parse_source"] == "latex" else g
            if chosen is not None:
                bibs.extend(bib_rows(pid, chosen))
        n_papers += len(items)
        n_entries += len(bibs)
    return n_papers, n_entries, time.process_time() - start, papers, bibs


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or default_inputs()
    oai = _oai_rows()
    loaded = load(paths)
    if not loaded:
        raise SystemExit("no usable inputs")
    items = [(pid, _row_for(pid, g or lx, oai), g, lx) for pid, g, lx in loaded]
    n, n_bib, secs, papers, bibs = run(items)
    rate = n / secs
    print(
        f"{len(items)} papers ({sum(lx is not None for *_, lx in items)} LaTeX), {n} rows in {secs:.2f} s CPU"
    )
    print(f"model form: {rate:.0f} papers/s per core, {n_bib / secs:.0f} bib entries/s")

    # the dict form (what the bulk path hands over): same rows, no pydantic objects
    dict_items = [
        (pid, rec, g.model_dump() if g is not None else None, lx.model_dump() if lx is not None else None)
        for pid, rec, g, lx in items
    ]
    n_d, _, secs_d, papers_d, _ = run(dict_items)
    assert papers_d == papers, "dict and model parses must give the same rows"
    print(f"dict form:  {n_d / secs_d:.0f} papers/s per core")

    frame = papers_frame(papers)
    bf = bib_frame(bibs)
    print("filters:", [(t["filter"], t["dropped"]) for t in filter_table(frame)])
    print(f"{bf.height} bib entries per pass, {bf['arxiv_id'].is_not_null().sum()} with an arXiv id")
    result(
        papers_per_s=round(rate, 1),
        papers_per_s_dict=round(n_d / secs_d, 1),
        bib_entries_per_s=round(n_bib / secs, 1),
        papers=len(items),
        peak_mb=round(peak_mb(), 1),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
