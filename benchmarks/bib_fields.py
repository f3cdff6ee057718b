"""Bibliography fields read from reference strings, against what the strings say: title,
authors and year, and the time per string.

    python benchmarks/bib_fields.py [--candidate refextract] [--show] [EPRINT_OR_DIR ...]

Two sets of real references:

* ``titleless``: 173 strings of ../shared/data/titleless (4 per citing paper, every citing
  paper, seed 44) with their title, author surnames and year written out by hand in
  ``tests/data/titleless_gold.jsonl`` (an empty title where the string prints none);
* ``bbl``: for each e-print given (or unpacked directory; by default the real LaTeX papers of
  ../shared) that ships a .bbl and the .bib it was made from, every .bbl entry read as the parser reads it, against its .bib entry (same key):
  the .bib title where the .bbl prints it (normalised words found in the entry's text), else
  none; the .bib surnames as many as the .bbl prints before "et al."; the .bib year.

A title is right when it normalises (:func:`corpus.papers.normalize.normalize_title`) to the
expected one; authors when the surnames (last word, letters only, accents dropped) are the
expected list; year when equal. ``--candidate refextract`` scores refextract (INSPIRE's
reference extractor, if installed) on the titleless strings the same way: its authors split by
this parser's name reader, its title the first sentence of its ``misc`` text (it has no title
field: its ``title`` when it gives one). Ends with a ``RESULT`` line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from _common import REPO, SHARED, peak_mb, result
from latex_fidelity import default_inputs

from corpus.ingest.eprint import assemble_source, find_main_tex, load_eprint
from corpus.papers.normalize import normalize_title
from corpus.parse.latex.bib.bibitems import _entry_from_item
from corpus.parse.latex.bib.entries import _items_from
from corpus.parse.latex.bib.names import _split_authors
from corpus.parse.latex.bib.sources import bib_fields
from corpus.parse.latex.text import plain_field

GOLD = REPO / "tests/data/titleless_gold.jsonl"
STRINGS = SHARED / "data/titleless/unarxive_2212_086_bib_entries.jsonl"

Fields = tuple[str, list[str], int | None]  # title, surnames, year


def surname_key(name: str) -> str:
    """A surname compared by its last word (a suffix left out: "Foley IV"), letters only, accents
    and case dropped."""
    words = [w for w in name.split() if not re.fullmatch(r"(?:Jr|Sr)\.?|I{2,3}|IV", w)]
    word = unicodedata.normalize("NFKD", words[-1] if words else "")
    return re.sub(r"[^a-z]", "", word.lower())


def titleless_cases() -> list[tuple[str, Fields]]:
    """(reference string, expected fields) of the hand-checked titleless strings."""
    raw = {}
    for line in STRINGS.read_text().splitlines():
        row = json.loads(line)
        raw[row["key"]] = row["bib_entry_raw"]
    cases = []
    for line in GOLD.read_text().splitlines():
        g = json.loads(line)
        cases.append((raw[g["key"]], (g["title"], g["authors"], g["year"])))
    return cases


def ours(text: str) -> Fields:
    e = _entry_from_item(text, 0)
    return e.title, [a.last for a in e.authors], e.year


def refextract_reader() -> Callable[[str], Fields]:
    from refextract import extract_references_from_string

    extract_references_from_string(
        "J. Smith, Phys. Rev. D 1, 2 (2000).", is_only_references=True
    )  # its tables

    def read(text: str) -> Fields:
        refs = extract_references_from_string(text, is_only_references=True)
        r = refs[0] if refs else {}
        misc = " ".join(r.get("misc", [])).strip(' \u201c"')
        title = (r.get("title") or [""])[0]  # refextract has a title only for some references
        if not title and misc:
            title = re.split(r"\.\s|,\s|\u201c|\u201d", misc, maxsplit=1)[0]
        title = title.strip(' .,\u201c\u201d"')
        authors = _split_authors(" and ".join(r.get("author", [])))
        year = (r.get("year") or [""])[0]
        return title, [a.last for a in authors], int(year) if year.isdigit() else None

    return read


class Score:
    def __init__(self) -> None:
        self.n = self.title = self.authors = self.first = self.year = 0
        self.cpu = 0.0
        self.misses: list[str] = []

    def add(self, text: str, got: Fields, want: Fields) -> None:
        self.n += 1
        t = normalize_title(got[0]) == normalize_title(want[0])
        a = [surname_key(x) for x in got[1]] == [surname_key(x) for x in want[1]]
        f = (surname_key(got[1][0]) if got[1] else "") == (surname_key(want[1][0]) if want[1] else "")
        y = got[2] == want[2]
        self.title += t
        self.authors += a
        self.first += f
        self.year += y
        if not (t and a and y):
            self.misses.append(f"{text[:160]}\n    got  {got}\n    want {want}")

    def line(self, name: str) -> str:
        n = max(self.n, 1)
        return (
            f"{name:22} n={self.n:4d} title={self.title / n:.3f} authors={self.authors / n:.3f} "
            f"first_author={self.first / n:.3f} year={self.year / n:.3f} cpu_ms_per_string={1000 * self.cpu / n:.2f}"
        )


def score_strings(read: Callable[[str], Fields], cases: list[tuple[str, Fields]]) -> Score:
    s = Score()
    start = time.process_time()
    got = [read(text) for text, _ in cases]
    s.cpu = time.process_time() - start
    for (text, want), g in zip(cases, got, strict=True):
        s.add(text, g, want)
    return s


def bbl_cases(paths: list[Path]) -> list[tuple[str, Fields, Fields]]:
    """(entry text, read fields, fields the .bib says the entry prints) of every .bbl entry
    whose key the e-print's .bib has."""
    out = []
    with tempfile.TemporaryDirectory(prefix="bib-fields-") as tmp:
        for n, path in enumerate(paths):
            try:
                if path.is_dir():
                    main = find_main_tex(path)
                    source = assemble_source(path, main) if main else None
                else:
                    _, source, _ = load_eprint(path, Path(tmp) / str(n))
            except Exception as exc:  # noqa: BLE001 - a broken e-print is skipped and said
                print(f"skipped {path.name}: {exc}", file=sys.stderr)
                continue
            if source is None or not source.bbl or not source.bib:
                continue
            items = _items_from(source.bbl)
            bib = bib_fields(source.bib, {it.key for it in items})
            for it in items:
                f = bib.get(it.key.lower())
                if f is None or re.match(r"\W*(?:—|–|-{2,})", it.entry.raw_text):
                    continue  # "—. 2019b, ...": the names printed above, not this entry's
                out.append((it.entry.raw_text, _fields(it.entry), _printed(f, it.entry.raw_text)))
    return out


def _fields(e) -> Fields:
    return e.title, [a.last for a in e.authors], e.year


def _printed(f: dict[str, str], text: str) -> Fields:
    from corpus.parse.latex.bib.bibtex import _entry_from_bib

    e = _entry_from_bib(f, 0)
    flat = normalize_title(text)
    title = e.title if normalize_title(e.title) and normalize_title(e.title) in flat else ""
    names = [a.last for a in e.authors]
    etal = re.search(r"\bet\.?\s*al\b|\band others\b", text)
    if etal:  # the names printed before "et al.", in order
        letters = re.sub(r"[^a-z]", "", unicodedata.normalize("NFKD", text[: etal.start()]).lower())
        n, at = 0, 0
        while (
            n < len(names) and surname_key(names[n]) and (at := letters.find(surname_key(names[n]), at)) >= 0
        ):
            n += 1
        names = names[: max(1, n)]
    return plain_field(title), names, e.year


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "inputs", nargs="*", type=Path, help="e-prints or directories (default: ../shared's papers)"
    )
    ap.add_argument("--candidate", choices=["refextract"], help="also score this reference parser")
    ap.add_argument("--show", action="store_true", help="print each string read wrongly")
    args = ap.parse_args(argv)
    cases = titleless_cases()
    mine = score_strings(ours, cases)
    print(mine.line("titleless: parser"))
    if args.show:
        print("\n".join(mine.misses))
    figures = {
        "titleless_title": round(mine.title / mine.n, 3),
        "titleless_authors": round(mine.authors / mine.n, 3),
        "titleless_year": round(mine.year / mine.n, 3),
        "parser_ms_per_string": round(1000 * mine.cpu / mine.n, 3),
    }
    if args.candidate == "refextract":
        cand = score_strings(refextract_reader(), cases)
        print(cand.line("titleless: refextract"))
        if args.show:
            print("\n".join(cand.misses))
        figures |= {
            "refextract_title": round(cand.title / cand.n, 3),
            "refextract_authors": round(cand.authors / cand.n, 3),
            "refextract_ms_per_string": round(1000 * cand.cpu / cand.n, 3),
        }
    inputs = args.inputs or default_inputs()  # the real LaTeX papers of ../shared
    if inputs:
        bbl = Score()
        for text, got, want in bbl_cases(inputs):
            bbl.add(text, got, want)
        print(bbl.line("bbl vs bib: parser"))
        if args.show:
            print("\n".join(bbl.misses))
        figures |= {
            "bbl_entries": bbl.n,
            "bbl_title": round(bbl.title / max(bbl.n, 1), 3),
            "bbl_authors": round(bbl.authors / max(bbl.n, 1), 3),
            "bbl_year": round(bbl.year / max(bbl.n, 1), 3),
        }
    result(**figures, peak_mb=round(peak_mb(), 1))


if __name__ == "__main__":
    main(sys.argv[1:])
