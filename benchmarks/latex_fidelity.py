"""LaTeX parse fidelity on real sources: what a reader of the parses would count by hand.

    python benchmarks/latex_fidelity.py [--per-paper] [EPRINT_OR_DIR ...]

Inputs are e-prints (.gz / .tar.gz) or unpacked source directories; by default every
real LaTeX paper under ../shared (fidelity/latex, latex_sources, the landing zone's
src/), the same file once (by content hash). For each paper and in total:

* parsed: the paper gives a document (failures are listed with their code);
* cite spans, how many are linked to a bibliography entry, and unknown keys (``[?]``);
* ref spans and unresolved ``??`` refs;
* the main file chosen, and why (:func:`corpus.ingest.eprint.main_file`);
* theorem-like headings printed ("Theorem 2.3.", "Lemma 4.1 (Morse).", "Proof."): paragraphs
  that open with one;
* bibliography entries, and those with a *clean* title and authors: a title without
  LaTeX left in it (no backslash, brace or ``@``) and at least one author, every author
  a name (letters, spaces, hyphens, apostrophes and initials; no digits, URLs or
  abbreviated venue words such as "Phys." as a last name).

The figures are heuristics a reader can check, not a gold standard; they are meant to be
compared before and after a parser change. Ends with a ``RESULT`` line.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from _common import SHARED, cpu_timer, peak_mb, result

from corpus.ingest import eprint
from corpus.ingest.eprint import EprintError, assemble_source, find_main_tex
from corpus.parse.document import BibEntry, StructuredDoc
from corpus.parse.latex import parse_eprint, parse_latex

_THEOREM_HEAD = re.compile(
    r"(?:Theorem|Lemma|Proposition|Corollary|Definition|Remark|Example|Claim|Conjecture|Assumption|"
    r"Hypothesis|Fact|Observation|Problem|Question|Exercise|Notation|Property|Axiom|Condition)"
    r"(?: [\dA-Z]+(?:\.\d+)*)?(?: \([^()]*\))?\. |(?:[A-Z][a-z]+ )*[Pp]roof(?: of [^.]{1,60}| sketch)?\. "
)


def default_inputs() -> list[Path]:
    """Every real LaTeX paper under ../shared, each file content once."""
    data = SHARED / "data"
    cands: list[Path] = []
    for repo in sorted((data / "fidelity/latex").iterdir()):
        cands += [d for d in sorted(repo.iterdir()) if d.is_dir() and any(d.rglob("*.tex"))]
    cands += sorted((data / "latex_sources/s2orc-doc2json").glob("*.gz"))
    for group in ("engrafo", "korzen_benchmark", "paper_repos"):
        cands += sorted(p for p in (data / "latex_sources" / group).iterdir() if p.is_dir())
    cands += sorted((SHARED / "landing/src").glob("*.gz"))
    seen: set[str] = set()
    out = []
    for path in cands:
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else str(path)
        if digest not in seen:
            seen.add(digest)
            out.append(path)
    return out


_NAME_TOKEN = re.compile(r"(?:[^\W\d_]\.?|[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*\.?)(?:-[^\W\d_]\.?)*")
_LATEX_LEFT = re.compile(r"[\\{}@]")


def clean_author(first: str, middle: list[str], last: str) -> bool:
    """A person's name: the last name a word (or words) of letters, not an initial or an
    abbreviated word ("Phys."), the given names words or initials."""
    if not last or last.endswith(".") or len(last.replace(" ", "")) < 2:
        return False
    tokens = last.split() + first.split() + [t for m in middle for t in m.split()]
    return all(_NAME_TOKEN.fullmatch(t) for t in tokens)


def clean_entry(e: BibEntry) -> bool:
    title = e.title.strip()
    if len(title) < 3 or _LATEX_LEFT.search(title):
        return False
    return bool(e.authors) and all(clean_author(a.first, a.middle, a.last) for a in e.authors)


@dataclass
class Figures:
    papers: int = 0
    parsed: int = 0
    failures: list[str] = field(default_factory=list)
    paragraphs: int = 0
    cites: int = 0
    linked: int = 0
    unknown_cites: int = 0  # "[?]"
    refs: int = 0
    unresolved_refs: int = 0  # "??"
    bib: int = 0
    clean_bib: int = 0
    theorem_heads: int = 0
    styles: dict[str, int] = field(default_factory=dict)

    def add_doc(self, doc: StructuredDoc) -> None:
        self.parsed += 1
        paras = doc.abstract + doc.body_text + doc.back_matter
        self.paragraphs += len(doc.body_text)
        cites = [s for p in paras for s in p.cite_spans]
        refs = [s for p in paras for s in p.ref_spans]
        self.cites += len(cites)
        self.linked += sum(1 for s in cites if s.ref_id)
        self.unknown_cites += sum(1 for s in cites if s.ref_id is None and "?" in s.text)  # [?], "[2, ?]"
        self.refs += len(refs)
        self.unresolved_refs += sum(1 for s in refs if s.ref_id is None)
        self.bib += len(doc.bib_entries)
        self.clean_bib += sum(1 for e in doc.bib_entries.values() if clean_entry(e))
        self.theorem_heads += sum(1 for p in doc.body_text if _THEOREM_HEAD.match(p.text))
        self.styles[doc.citation_style] = self.styles.get(doc.citation_style, 0) + 1


def parse_one(path: Path, scratch: Path) -> tuple[StructuredDoc, str]:
    """A document and the main file chosen (with why), or :class:`EprintError` with the failure's code."""
    if path.is_dir():
        root = path
        main, why = _main(root)
        if main is None:
            raise EprintError("no_main_tex", str(path))
        doc = parse_latex(assemble_source(path, main), path.name)
    else:
        res = parse_eprint(path, path.name, scratch, keep=True)
        if res.doc is None:
            fail = res.failure
            raise EprintError(fail.code if fail else "failed", fail.message if fail else "")
        root, doc = scratch, res.doc
        main, why = _main(root)
    name = main.relative_to(root.resolve()).as_posix() if main else "?"
    return doc, f"{name} ({why})" if why else name


def _main(root: Path) -> tuple[Path | None, str]:
    """The main file and why (the reason only where the code says it: ``eprint.main_file``)."""
    if hasattr(eprint, "main_file"):
        return eprint.main_file(root)
    return find_main_tex(root), ""


def _name(path: Path) -> str:
    parts = path.parts
    return "/".join(parts[-2:]) if path.is_dir() else path.name


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="*", type=Path)
    ap.add_argument("--per-paper", action="store_true", help="one line per paper")
    args = ap.parse_args(argv)
    inputs = args.inputs or default_inputs()
    total = Figures()
    rows = []
    with tempfile.TemporaryDirectory(prefix="latex-fidelity-") as tmp, cpu_timer() as cpu:
        for n, path in enumerate(inputs):
            one = Figures(papers=1)
            total.papers += 1
            try:
                doc, main = parse_one(path, Path(tmp) / str(n))
            except EprintError as exc:
                total.failures.append(f"{_name(path)}: {exc.code}")
                rows.append((_name(path), one, exc.code, ""))
                continue
            one.add_doc(doc)
            total.add_doc(doc)
            rows.append((_name(path), one, doc.citation_style, main))
    if args.per_paper:
        print(
            f"{'paper':40} {'style':10} {'para':>5} {'cites':>6} {'linked':>6} {'[?]':>4} {'??':>4} {'bib':>5} "
            f"{'clean':>5} {'thm':>4}  main file"
        )
        for name, f, style, main in rows:
            print(
                f"{name[:40]:40} {style:10} {f.paragraphs:5d} {f.cites:6d} {f.linked:6d} {f.unknown_cites:4d} "
                f"{f.unresolved_refs:4d} {f.bib:5d} {f.clean_bib:5d} {f.theorem_heads:4d}  {main}"
            )
    print(f"papers parsed: {total.parsed}/{total.papers}; failures: {total.failures or 'none'}")
    print(f"citation styles: {dict(sorted(total.styles.items()))}")
    print(f"body paragraphs: {total.paragraphs}")
    print(f"cite spans: {total.cites}, linked {total.linked}, [?] {total.unknown_cites}")
    print(f"ref spans: {total.refs}, unresolved ?? {total.unresolved_refs}")
    print(f"bib entries: {total.bib}, clean title and authors {total.clean_bib}")
    print(f"theorem-like headings printed: {total.theorem_heads}")
    result(
        papers=total.papers,
        parsed=total.parsed,
        cites=total.cites,
        linked=total.linked,
        unresolved_refs=total.unresolved_refs,
        bib=total.bib,
        clean_bib=total.clean_bib,
        theorem_heads=total.theorem_heads,
        cpu_s=round(cpu["s"], 2),
        peak_mb=round(peak_mb(), 1),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
