"""Journal names in one canonical form, for matching a reference's journal with a paper's.

Authors write one journal many ways: "Physical Review D", "Phys. Rev. D", "Phys.Rev.D", "PRD".
The canonical form comes from the JabRef journal abbreviation lists (``journals/``, CC0,
maintained, source and checksums in ``journals/SOURCE.md``): each list row pairs a full name with
an abbreviation (ISO 4, MathSciNet, a publisher's), and both are keyed to the full name. The lists
lack the acronyms and INSPIRE short forms physicists write ("JHEP", "ApJ", "Nucl.Instrum.Meth.A"):
:data:`GROUPS` adds them (written here). A name the table does not hold resolves when exactly one
journal of the table abbreviates to it word by word ("Jour. Diff. Geom." -> Journal of
Differential Geometry); otherwise it stays unresolved and two names are compared word by word
(:func:`compatible`).

A key (:func:`name_key`) is the name's words, lower-cased, accents and punctuation gone, glued
words split ("ActaPhys." -> acta phys), hyphenated words joined ("Astro-Particle"), parentheses
("(N.Y.)") and filler words ("of", "the", "and", ...) dropped, and a subtitle dropped after a
section letter ("Journal of Physics A: Mathematical and Theoretical" -> journal physics a).
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import json
import re
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

TABLE_DIR = Path(__file__).resolve().parent / "journals"
# The table as built from the lists, saved (``python -m corpus.papers.journals``): building it
# costs 0.3 CPU s, paid by every process that links references; loading it, 0.01 s
TABLE_FILE = TABLE_DIR / "table.json.gz"

_STOP = frozenset(
    "the of and for in on at to de der des du la le les di del della et und fur zur van".split()
)

# Names the lists lack or spell differently, each group one journal: acronyms, INSPIRE short forms
# and publisher abbreviations that do not abbreviate the full name word by word. The first name
# is looked up in the lists; the group joins the journal it resolves to (or becomes one).
GROUPS: tuple[tuple[str, ...], ...] = (
    ("Journal of High Energy Physics", "JHEP", "J. High Energy Phys.", "J. High Energ. Phys."),
    ("Journal of Cosmology and Astroparticle Physics", "JCAP", "J. Cosmol. Astropart. Phys."),
    ("Astrophysical Journal", "ApJ", "Ap. J.", "Astrophys. J."),
    (
        "Astrophysical Journal, Letters to the Editor",
        "Astrophysical Journal Letters",
        "ApJL",
        "ApJ Lett.",
        "Astrophys. J. Lett.",
        "Astrophys. J. Letters",
    ),  # fmt: skip
    (
        "Astrophysical Journal, Supplement Series",
        "Astrophysical Journal Supplement",
        "ApJS",
        "ApJ Suppl.",
        "Astrophys. J. Suppl.",
        "Astrophys. J. Supp.",
        "Astrophys. J. Suppl. Ser.",
    ),  # fmt: skip
    ("Astronomical Journal", "AJ", "Astron. J."),
    (
        "Monthly Notices of the Royal Astronomical Society",
        "MNRAS",
        "Mon. Not. Roy. Astron. Soc.",
        "Mon. Not. R. Astron. Soc.",
    ),  # fmt: skip
    ("Astronomy and Astrophysics", "A&A", "Astron. Astrophys."),
    ("Physical Review", "Phys. Rev."),
    ("Physical Review Letters", "PRL", "Phys. Rev. Lett."),
    ("Physical Review A", "PRA", "Phys. Rev. A"),
    ("Physical Review B", "PRB", "Phys. Rev. B"),
    ("Physical Review C", "PRC", "Phys. Rev. C"),
    ("Physical Review D", "PRD", "Phys. Rev. D"),
    ("Physical Review E", "PRE", "Phys. Rev. E"),
    ("Physical Review X", "PRX", "Phys. Rev. X"),
    ("Physical Review Research", "Phys. Rev. Research", "Phys. Rev. Res."),
    ("Physical Review Applied", "Phys. Rev. Applied", "Phys. Rev. Appl."),
    ("Physical Review Fluids", "Phys. Rev. Fluids"),
    ("Physical Review Materials", "Phys. Rev. Materials", "Phys. Rev. Mater."),
    ("Physical Review Accelerators and Beams", "Phys. Rev. Accel. Beams"),
    (
        "Physical Review Special Topics - Accelerators and Beams",
        "Phys. Rev. ST Accel. Beams",
        "Phys. Rev. Spec. Top. Accel. Beams",
    ),  # fmt: skip
    ("Physical Review Physics Education Research", "Phys. Rev. Phys. Educ. Res."),
    ("PRX Quantum",),
    ("Reviews of Modern Physics", "RMP", "Rev. Mod. Phys."),
    ("Physics Letters B", "PLB", "Phys. Lett. B"),
    ("Nuclear Physics B", "NPB", "Nucl. Phys. B"),
    ("Nuclear Physics A", "NPA", "Nucl. Phys. A"),
    ("European Physical Journal C", "EPJC", "Eur. Phys. J. C"),
    ("Classical and Quantum Gravity", "CQG", "Class. Quant. Grav.", "Class. Quantum Grav."),
    ("International Journal of Modern Physics A", "IJMPA", "Int. J. Mod. Phys. A"),
    ("International Journal of Modern Physics D", "IJMPD", "Int. J. Mod. Phys. D"),
    ("Modern Physics Letters A", "MPLA", "Mod. Phys. Lett. A"),
    ("Communications in Mathematical Physics", "CMP", "Commun. Math. Phys."),
    ("Journal of Mathematical Physics", "JMP", "J. Math. Phys."),
    ("Physics Reports", "Phys. Rept.", "Phys. Rep."),
    ("Reports on Progress in Physics", "Rept. Prog. Phys.", "Rep. Prog. Phys."),
    ("Annals of Physics", "Annals Phys."),
    ("Annalen der Physik", "Annalen Phys."),
    ("Progress of Theoretical Physics", "PTP", "Prog. Theor. Phys."),
    ("Progress of Theoretical Physics Supplement", "PTPS", "Prog. Theor. Phys. Suppl."),
    ("Progress of Theoretical and Experimental Physics", "PTEP", "Prog. Theor. Exp. Phys."),
    (
        "Nuclear Instruments and Methods in Physics Research Section A",
        "Nucl. Instrum. Meth. A",
        "Nucl. Instrum. Methods A",
        "Nucl. Instrum. Methods Phys. Res. A",
        "NIM A",
    ),  # fmt: skip
    ("Journal of Instrumentation", "JINST", "J. Instrum."),
    ("Proceedings of Science", "PoS"),
    (
        "Proceedings of the National Academy of Sciences of the United States of America",
        "PNAS",
        "Proc. Natl. Acad. Sci. USA",
        "Proc. Nat. Acad. Sci.",
    ),  # fmt: skip
    ("Journal of Statistical Mechanics: Theory and Experiment", "J. Stat. Mech.", "JSTAT"),
    ("New Journal of Physics", "NJP", "New J. Phys."),
    ("Journal of the Physical Society of Japan", "JPSJ", "J. Phys. Soc. Jpn.", "J. Phys. Soc. Japan"),
    ("General Relativity and Gravitation", "Gen. Rel. Grav.", "Gen. Relativ. Gravit."),
    ("Living Reviews in Relativity", "Living Rev. Rel.", "Living Rev. Relativ."),
    ("Physics of the Dark Universe", "Phys. Dark Univ."),
    ("Fortschritte der Physik", "Fortsch. Phys.", "Fortschr. Phys."),
    ("SciPost Physics", "SciPost Phys."),
    ("Nature Physics", "Nature Phys.", "Nat. Phys."),
    ("Nature Communications", "Nature Commun.", "Nat. Commun."),
    ("Nature Astronomy", "Nature Astron.", "Nat. Astron."),
    ("Progress in Particle and Nuclear Physics", "Prog. Part. Nucl. Phys."),
    ("Nuclear Physics B - Proceedings Supplements", "Nucl. Phys. Proc. Suppl.", "Nucl. Phys. B Proc. Suppl."),
    ("Symmetry, Integrability and Geometry: Methods and Applications", "SIGMA"),
    ("Journal für die reine und angewandte Mathematik", "J. Reine Angew. Math."),
    ("Publications Mathématiques de l'IHÉS", "Publ. Math. IHES", "Publ. Math. Inst. Hautes Études Sci."),
    ("Selecta Mathematica", "Selecta Math."),
)

_PAREN = re.compile(r"\([^()]*\)")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
_NON_WORD = re.compile(r"[^a-z0-9]+")
_ABBREVIATED = re.compile(r"([^\W\d_]+)\.")
# A subtitle after a section letter: "Journal of Physics A: ...", "... Physics A. Particles and ..."
_SUBTITLE = re.compile(r"^(.*?(?:^|[\s.])[A-Z])\.?\s*:|^(.*?[a-z]{3,}\s+[A-Z])\.\s+[A-Z][a-z]")


def _ascii_lower(text: str) -> str:
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


@functools.lru_cache(maxsize=1 << 17)
def name_tokens(name: str) -> tuple[str, ...]:
    """The words of a journal name as keys compare them (see the module doc)."""
    m = _SUBTITLE.match(name)
    if m:
        name = m.group(1) or m.group(2)
    text = _PAREN.sub(" ", name)
    text = _CAMEL.sub(" ", text).replace("&", " and ")
    text = _HYPHEN.sub("", _ascii_lower(text))
    return tuple(t for t in _NON_WORD.split(text) if t and t not in _STOP)


def name_key(name: str) -> str:
    return " ".join(name_tokens(name))


def _words_abbreviate(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two names have as many words and each word of one abbreviates (is a prefix of)
    the other's ("mon not roy astron soc" ~ "monthly notices r astronomical society")."""
    if len(a) != len(b) or not a:
        return False
    return all(x == y or x.startswith(y) or y.startswith(x) for x, y in zip(a, b, strict=True))


class _Table:
    """Keys of full names and abbreviations -> the canonical key (a full name's), and each
    canonical key's display name."""

    def __init__(self, canon: dict[str, str], abbreviated_words: frozenset[str], display: dict[str, str]):
        self.canon = canon
        # words the lists write with a period ("phys", "astrophys"): abbreviations, not sentence ends
        self.abbreviated_words = abbreviated_words
        self.display = display
        self._buckets: dict[tuple[int, str], list[tuple[tuple[str, ...], str]]] | None = None

    @classmethod
    def build(cls) -> _Table:
        """The table from the lists and :data:`GROUPS`."""
        fulls: dict[str, str] = {}  # canonical key -> full name as written
        owners: dict[str, Counter] = defaultdict(Counter)  # abbreviation key -> full keys
        written: dict[str, Counter] = defaultdict(Counter)  # full key -> abbreviations as written
        abbreviated: set[str] = set()
        for path in sorted(TABLE_DIR.glob("*.csv")):
            with open(path, encoding="utf-8", newline="") as fh:
                for row in csv.reader(fh, skipinitialspace=True):
                    if len(row) < 2 or "$" in row[0] or "\\" in row[0]:
                        continue
                    full, abbr = row[0].strip(), row[1].strip()
                    fk, ak = name_key(full), name_key(abbr)
                    if not fk:
                        continue
                    if fk not in fulls or ("(" in fulls[fk] and "(" not in full):
                        fulls[fk] = full  # the name without a place in parentheses, if any
                    abbreviated.update(w.lower() for w in _ABBREVIATED.findall(_ascii_lower(abbr)))
                    if ak and ak != fk:
                        owners[ak][fk] += 1
                        written[fk][abbr] += 1
        canon = {fk: fk for fk in fulls}
        for ak, who in owners.items():
            (top, votes), *rest = who.most_common()
            # an abbreviation of several journals names none, unless the lists agree on one
            # (a stray row "European Physical Journal","Eur. Phys. J. B" is outvoted)
            if ak not in canon and (not rest or (votes >= 2 and votes >= 3 * sum(n for _, n in rest))):
                canon[ak] = top
        for group in GROUPS:
            target = canon.get(name_key(group[0]), name_key(group[0]))
            fulls.setdefault(target, group[0])
            for name in group:
                canon[name_key(name)] = target
                if "." in name:
                    written[target][name] += 2  # the group's spelling first
        display: dict[str, str] = {}
        for fk, full in fulls.items():
            good = [a for a, _ in written[fk].most_common() if "." in a and canon.get(name_key(a)) == fk]
            good.sort(key=lambda a: "(" in a)  # stable: the most written first, without places
            display[fk] = good[0] if good else full
        return cls(canon, frozenset(abbreviated), display)

    def as_json(self) -> dict:
        return {
            "canon": self.canon,
            "abbreviated_words": sorted(self.abbreviated_words),
            "display": self.display,
        }

    def buckets(self) -> dict[tuple[int, str], list[tuple[tuple[str, ...], str]]]:
        if self._buckets is None:
            out: dict[tuple[int, str], list[tuple[tuple[str, ...], str]]] = defaultdict(list)
            for key, target in self.canon.items():
                toks = tuple(key.split())
                out[(len(toks), "".join(t[0] for t in toks))].append((toks, target))
            self._buckets = dict(out)
        return self._buckets


def sources_digest() -> str:
    """What the table is made from: the lists and this module (its GROUPS and key rules)."""
    h = hashlib.sha256()
    for path in (*sorted(TABLE_DIR.glob("*.csv")), Path(__file__)):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def read_table_file(path: Path | None = None) -> dict | None:
    """The saved table (:data:`TABLE_FILE`), or None when the file is missing or unreadable."""
    try:
        with gzip.open(path or TABLE_FILE, "rt", encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError, EOFError):
        return None


def write_table_file(path: Path | None = None) -> None:
    """Save the table built from the lists, with the digest of what it was built from (same
    sources, same bytes: the file is compared in the tests)."""
    body = json.dumps(
        {"sources": sources_digest(), **_Table.build().as_json()}, sort_keys=True, ensure_ascii=False
    )
    path = path or TABLE_FILE
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        gz.write(body.encode("utf-8"))
    tmp.replace(path)


@functools.cache
def _table() -> _Table:
    """The saved table when it was made from these sources, else built from them (a list or this
    module edited since: right, only slower, until the file is made again)."""
    saved = read_table_file()
    if saved is not None and saved.get("sources") == sources_digest():
        return _Table(saved["canon"], frozenset(saved["abbreviated_words"]), saved["display"])
    return _Table.build()


@functools.lru_cache(maxsize=1 << 17)
def resolve(name: str) -> str | None:
    """The canonical key of a journal name, or None when the table cannot tell which journal it
    is (unknown, or an abbreviation several journals share: "Ann. Phys.")."""
    toks = name_tokens(name)
    if not toks:
        return None
    table = _table()
    key = " ".join(toks)
    if key in table.canon:
        return table.canon[key]
    found = {
        target
        for cand, target in table.buckets().get((len(toks), "".join(t[0] for t in toks)), ())
        if _words_abbreviate(toks, cand)
    }
    return found.pop() if len(found) == 1 else None


def canonical_name(name: str) -> str:
    """The journal's display name ("Phys. Rev. D") when it resolves, else the name as written."""
    key = resolve(name)
    return _table().display[key] if key is not None else name.strip()


@functools.lru_cache(maxsize=1 << 17)
def compatible(a: str, b: str) -> bool:
    """Whether two journal names may name the same journal: the same canonical key when both
    resolve, else word-by-word abbreviation of one by the other (either as written, or the
    resolved one's full name)."""
    if a == b:
        return True
    ka, kb = resolve(a), resolve(b)
    if ka is not None and kb is not None:
        return ka == kb
    forms_a = {name_tokens(a)} | ({tuple(ka.split())} if ka else set())
    forms_b = {name_tokens(b)} | ({tuple(kb.split())} if kb else set())
    return any(_words_abbreviate(x, y) for x in forms_a for y in forms_b)


if __name__ == "__main__":
    write_table_file()
    print(f"wrote {TABLE_FILE}")
