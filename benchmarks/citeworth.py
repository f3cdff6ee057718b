"""CiteWorth paragraph extraction speed: papers/s and sentences/s on one core.

Usage: ``benchmarks/citeworth.py [INPUT ...]`` where an input is a Grobid TEI file
(``*.xml``) or an S2ORC JSON record (``*.json``). Without inputs it uses the real
TEI in ../shared (landing zone and pdf_tei_pairs) and the real S2ORC records.
Parsing happens once, before timing: only ``extract_paragraphs`` is measured
(target ≥ 300 papers/s per core, DESIGN.md §6). Also prints the sentence
splitter against pysbd on the hand cases (corpus.parse.sentences docstring numbers).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from _common import SHARED, peak_mb, result, timer

from corpus.parse.document import Paragraph, Span, StructuredDoc
from corpus.parse.sentences import HAND_CASES, split_sentences
from corpus.release.citeworth import (
    LABEL_CITE_WORTHY,
    audit_leftover_markers,
    extract_paragraphs,
    permissible_section,
)

MIN_SECONDS = 3.0


def _s2orc(path: Path) -> StructuredDoc:
    record = json.loads(path.read_text())
    try:
        from corpus.parse.s2orc_json import read_s2orc_record

        return read_s2orc_record(record)
    except ImportError:
        parse = record.get("pdf_parse") or record.get("grobid_parse") or record
        paras = [
            Paragraph(
                text=p["text"],
                section=p.get("section") or "",
                cite_spans=[Span(start=c["start"], end=c["end"], text=c["text"]) for c in p["cite_spans"]],
            )
            for p in parse["body_text"]
        ]
        return StructuredDoc(paper_id=str(record["paper_id"]), source="s2orc", body_text=paras)


def load(paths: list[Path]) -> list[StructuredDoc]:
    from corpus.parse.tei import parse_tei

    docs = []
    for p in paths:
        try:
            docs.append(_s2orc(p) if p.suffix == ".json" else parse_tei(p.read_bytes(), p.name))
        except Exception as exc:  # a bad input is reported, not fatal
            print(f"skip {p}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return docs


def default_inputs() -> list[Path]:
    data = SHARED / "data"
    tei = sorted((SHARED / "landing" / "tei").glob("*.tei.xml")) + sorted(data.glob("pdf_tei_pairs/*/*.xml"))
    return tei + sorted(data.glob("s2orc_family/s2orc-doc2json/s2orc/*.json"))


def splitter_comparison() -> None:
    ours = sum([t[s:e] for s, e in split_sentences(t)] == exp for t, exp in HAND_CASES)
    line = f"splitter hand cases: ours {ours}/{len(HAND_CASES)}"
    try:
        import pysbd

        seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
        theirs = sum([x.sent.strip() for x in seg.segment(t)] == exp for t, exp in HAND_CASES)
        line += f", pysbd {theirs}/{len(HAND_CASES)}"
    except ImportError:
        seg = None
    print(line)
    if seg is not None:
        texts = [p.text for d in load(default_inputs()[:6]) for p in d.body_text if p.text][:300]
        with timer() as t_ours:
            n_ours = sum(len(split_sentences(x)) for x in texts * 10)
        with timer() as t_sbd:
            n_sbd = sum(len(seg.segment(x)) for x in texts)
        print(
            f"splitter speed: ours {n_ours / t_ours['s']:,.0f} sentences/s, "
            f"pysbd {n_sbd / t_sbd['s']:,.0f} sentences/s"
        )


def _checked_sentences(docs: list[StructuredDoc]) -> int:
    """Sentences in permissible paragraphs: what the checks look at (a rejected paragraph stops early)."""
    return sum(
        len(split_sentences(p.text)) for d in docs for p in d.body_text if permissible_section(p.section)
    )


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or default_inputs()
    docs = load(paths)
    if not docs:
        raise SystemExit("no readable inputs")
    splitter_comparison()
    rounds = paragraphs = kept = sentences = cite = 0
    released: list[str] = []
    start, cpu_start = time.perf_counter(), time.process_time()
    while rounds == 0 or time.perf_counter() - start < MIN_SECONDS:
        for doc in docs:
            results = extract_paragraphs(doc, field="Computer Science")
            paragraphs += len(results)
            for r in results:
                if r.kept:
                    kept += 1
                    sentences += len(r.samples)
                    cite += sum(s.label == LABEL_CITE_WORTHY for s in r.samples)
                    if rounds == 0:
                        released.extend(s.text for s in r.samples)
        rounds += 1
    secs = time.perf_counter() - start
    cpu = time.process_time() - cpu_start  # the machine is shared: CPU time is the per-core figure
    papers = rounds * len(docs)
    checked = _checked_sentences(docs) * rounds
    print(
        f"{len(docs)} documents x {rounds} rounds: {papers} papers, {paragraphs} paragraphs, "
        f"{kept} kept, {sentences} released sentences ({cite} cite-worthy) in {secs:.2f}s"
    )
    print(f"leftover-marker audit on released sentences: {audit_leftover_markers(released):.4f}")
    result(
        papers_per_s=papers / secs,
        papers_per_cpu_s=papers / cpu,
        sentences_per_s=checked / secs,
        paragraphs_per_s=paragraphs / secs,
        kept_share=kept / max(paragraphs, 1),
        peak_mb=peak_mb(),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
