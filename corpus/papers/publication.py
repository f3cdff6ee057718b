"""Where a paper was published, read from a reference or an arXiv ``journal-ref``: journal,
volume, first page (or article number) and year.

Physics and mathematics cite by journal, volume and page ("D. Boschi et al., Phys. Rev. Lett. 80,
1121 (1998)") and arXiv's ``journal-ref`` says the same in free text ("Phys.Rev.D76:013009,2007",
"Nucl.Phys.B 800 (2008) 1-32", "JHEP 0805:012,2008", "Eur. Phys. J. C (2017) 77:856"). One reader
serves both sides, so a reference and a paper agree when they name the same publication.

Reading: every number that may open the numbers of a publication is tried in turn. The journal is
the run of journal-like words right before it (capitalised words and abbreviations, "of", "and",
"&", ":", a place in parentheses), cut at a comma, a quote or a sentence end, and then at its
longest tail the journal table resolves (:mod:`corpus.papers.journals`: "... bound states. Phys.
Rev., D87" -> Phys. Rev. D). The numbers after it are read as a small grammar: volume (after
"Vol." or first), an issue ("(3)", "no. 8", "No 41", skipped), the first page of a range or an
article number (after "pp.", "Paper No."), and a year (in parentheses anywhere, or a bare year
last). A reference naming several publications gives the first one whose journal resolves.

Canonical numbers: leading zeros dropped ("013009" = "13009", "009" = "9"), letters upper-case
("L191"). JHEP and JCAP number their volumes by month: "JHEP 0805:012,2008", "JHEP 05 (2008) 012"
and "JHEP05(2008)012" are volume 200805, so "JHEP 05 (2011) 009" (201105) is not "JHEP 0005:009"
(200005); a two-digit volume without a year says no month and gives nothing.

:func:`derived_doi` gives the DOI of a publication where the publisher's scheme makes it
deterministic (APS ``10.1103/PhysRevD.76.013009``, JHEP, JCAP, Prog. Theor. Phys., JPSJ).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from corpus.papers import journals

__all__ = [
    "Publication",
    "canonical_number",
    "derived_doi",
    "parse_publication",
    "parse_publications",
    "publication_from_fields",
]


@dataclass(frozen=True, slots=True)
class Publication:
    journal: str  # canonical display name ("Phys. Rev. D"), or the name as written if unresolved
    volume: str  # canonical: no leading zeros; JHEP/JCAP: year and month ("200805")
    page: str  # first page or article number, canonical ("13009", "L191"; page_raw: as printed)
    year: int | None
    resolved: bool  # the journal resolved through the journal table
    volume_raw: str = ""  # as printed (DOIs keep it)
    page_raw: str = ""
    issue: str | None = None


# --------------------------------------------------------------------------- cleaning

_PLACEHOLDER = re.compile(r"\{\{\w+:[^}]*\}\}")  # unarXive's {{formula:...}}, {{cite:...}}
_IDS = re.compile(
    r"(?:\bdoi\s*:?\s*)?\b10\.\d{4,9}/\S+|https?://\S+|www\.\S+|\barxiv\s*:\s*\S+"
    r"|\b[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7}\b|\b\d{4}\.\d{4,5}(?:v\d+)?\b",
    re.I,
)
_LATEX = re.compile(
    r"\\(?:textbf|textit|textrm|emph|mathrm|mathbf|bf|it|em|sl|rm|bibinfo|newblock)(?![A-Za-z])\s*"
)
_DASH = re.compile(r"[\u2010-\u2015\u2212]|--+")
_SPACES = re.compile(r"\s+")


def clean(text: str) -> str:
    """Reference text with identifiers, placeholders and LaTeX markup out of the way (their
    numbers are not volumes or pages), dashes as "-", and single spaces."""
    if "{{" in text:
        text = _PLACEHOLDER.sub(" ", text)
    if "\\" in text or "{" in text:
        text = _LATEX.sub(" ", text).replace("{", "").replace("}", "").replace("\\", " ")
    text = _IDS.sub(" ", text).replace("~", " ")
    return _SPACES.sub(" ", _DASH.sub("-", text)).strip()


# --------------------------------------------------------------------------- the journal

_CONNECTORS = frozenset("of the and for in on de der des du la le di del della et und für fur zur i".split())
_JTOKEN = re.compile(r"[^\W\d_][\w'’.:&\-]*|&|-|:|\([^()\d]{1,24}\)")
# after the journal, before the volume: separators, "Vol.", a MathSciNet series "(3)"
_TRAIL = re.compile(
    r"(?:[\s,]|\b(?:[Vv]ol(?:ume)?|V|[Nn]o|N[or])\.?|\bArt(?:icle)?\.?\s*(?:ID|[Nn]o)\.?|\(\d\)|\(\s*[IVX]{1,4}\s*\))*$"
)
_WORD = re.compile(r"[^\W\d_]{2}|&")  # a journal name has a word (or is "A&A"), not only initials
_SECTION = re.compile(r"[A-Z]")  # "Phys. Rev., D87"; "Schwarz, H. 2017" is an author
_BOUNDARY_WORD = re.compile(r"[^\W\d_]{5,}\.")  # "formalism." ends a sentence; "Phys." does not


@functools.cache
def _abbreviated_words() -> frozenset[str]:
    """Words the journal table writes with a period ("phys", "astrophys", "lett"): such a word
    followed by a period continues a journal name rather than ending a sentence."""
    return journals._table().abbreviated_words


def _journal_words(before: str) -> list[str]:
    """The journal-like words that end ``before`` (the text right before a volume)."""
    before = _TRAIL.sub("", before)
    toks = before.split()
    out: list[str] = []
    crossed = False
    for tok in reversed(toks):
        if tok.endswith(",") and out:
            # "Phys. Rev., D87": a section letter after the comma continues the name
            if len(out) == 1 and _SECTION.fullmatch(out[0]) and not crossed:
                tok, crossed = tok[:-1], True
            else:
                break
        if tok[-1] in ",;\"”“'`)]" and not tok.startswith("("):
            break
        if not _JTOKEN.fullmatch(tok):
            break
        if tok[0].islower() and tok.lower().rstrip(".:") not in _CONNECTORS:
            break
        if out and _BOUNDARY_WORD.fullmatch(tok) and tok[:-1].lower() not in _abbreviated_words():
            break
        out.append(tok)
        if len(out) >= 14:
            break
    out.reverse()
    while out and (out[0].lower().rstrip(":") in _CONNECTORS or out[0] in "&-:" or out[0].startswith("(")):
        out.pop(0)
    return out


def _journal(words: list[str]) -> tuple[str, bool]:
    """(journal name, resolved): ``words`` when the table resolves them, else the longest tail
    after a word ending in a period or colon that it resolves ("G. Kim. Phys. Rev. A", "... in QCD.
    Phys. Rev. D"), else all. Only there: a tail elsewhere is often another journal ("PLoS Comp
    Biol" is not "Comp Biol"); and not a lone abbreviation ("Ann. Phys." is not "Phys.")."""
    for k in range(len(words)):
        if k and not words[k - 1].endswith((".", ":")):
            continue
        if k and k == len(words) - 1 and words[k].endswith("."):
            continue
        name = " ".join(words[k:])
        if journals.resolve(name) is not None:
            return journals.canonical_name(name), True
    return " ".join(words), False


# --------------------------------------------------------------------------- the numbers

_YEAR_PAREN = re.compile(
    r"\(\s*(?:\d{1,2}\s+)?(?:[A-Za-z]{3,9}\.?\s+)?(?:\d{1,2},?\s+)?((?:1[89]|20)\d\d)[a-z]?\s*\)"
)
_ISSUE_PAREN = re.compile(r"\(\s*([A-Za-z]?\d{1,4}(?:\s*[-/]\s*\d{1,4})?)\s*\)")
_ISSUE = re.compile(
    r"(?:[Nn]o|[Nn]r|[Nn]um|[Ii]ssues?|[Nn]umber|N)\.?\s*(\d{1,4}(?:\s*-\s*\d{1,4})?)(?![\w.])"
)
_VOLUME_WORD = re.compile(r"(?:[Vv]ol(?:ume)?|V)\.?\s*(?=\d)")
_PAGE_WORD = re.compile(
    r"(?:pp?|[Pp]ages?|[Pp]aper\s+[Nn]o|[Aa]rt(?:icle)?(?:\s+[Nn]o)?|[Aa]rticle\s+[Nn]umber)\.?\s*"
    r"(?=[A-Za-z]?\d)"
)
_NUMBER = re.compile(r"(e?[A-Z]{0,2}\d+(?:[A-Z]\d+)?)(?:\s*-\s*e?[A-Z]{0,2}\d+(?:[A-Z]\d+)?)?(?![\w/])")
_SEPARATORS = re.compile(r"[\s,:]*")
_DOT_ISSUE = re.compile(r"(?<=\d)\.(\d{1,3})(?=\s*,)")
_VANCOUVER = re.compile(r";\s*(?=\d)")
_YEAR_FORM = re.compile(r"(?:1[89]|20)\d\d")


def _numbers(text: str, pos: int) -> tuple[str | None, str | None, str | None, int | None]:
    """(volume, issue, page, year) read from ``text[pos:]`` (see the module doc)."""
    volume = issue = page = None
    year: int | None = None
    want = None  # "volume" or "page": what a keyword said the next number is
    extra = False
    while pos < len(text):
        pos = _SEPARATORS.match(text, pos).end()
        if m := _YEAR_PAREN.match(text, pos):
            year = year or int(m.group(1))
        elif volume is not None and page is None and issue is None and (m := _ISSUE_PAREN.match(text, pos)):
            issue = m.group(1)
        elif volume is not None and page is None and (m := _DOT_ISSUE.match(text, pos)):
            issue = m.group(1)  # "Physical Review Letters 85.24, 5226"
        elif m := _ISSUE.match(text, pos):
            issue = issue or m.group(1)
        elif m := _VOLUME_WORD.match(text, pos):
            if volume is not None and page is None and year is None and _YEAR_FORM.fullmatch(volume):
                year, volume = int(volume), None  # "Ann. Appl. Probab. 2008, Vol. 18, ..."
            want = "volume"
        elif m := _PAGE_WORD.match(text, pos):
            want = "page"
        elif (
            volume is not None
            and page is None
            and year is None
            and _YEAR_FORM.fullmatch(volume)
            and (m := _VANCOUVER.match(text, pos))
        ):
            year, volume = int(volume), None  # "Phys Rev E. 2009;80(3):031403"
        elif m := _NUMBER.match(text, pos):
            value = m.group(1)
            if want == "volume" or (volume is None and want is None):
                volume = value
            elif page is None:
                page = value
            elif year is None and _YEAR_FORM.fullmatch(value):
                year = int(value)
            elif extra or year is not None:
                break
            else:
                extra = True  # one number more ("Paper No. 15, 29, 2022": 29 pages), then the year
            want = None
        else:
            break
        pos = m.end()
    if page is not None and year is None and _YEAR_FORM.fullmatch(page):
        year, page = int(page), None  # "Nature 551, 2017": a year, no page
    return volume, issue, page, year


def canonical_number(value: str) -> str:
    """Leading zeros of the first digit run dropped, letters upper-case ("L051502" -> "L51502")."""
    m = re.match(r"([A-Za-z]*)0*(\d.*)$", value)
    return (m.group(1) + m.group(2)).upper() if m else value.upper()


_MONTH_VOLUMES = frozenset({"journal high energy physics", "journal cosmology astroparticle physics"})
_YEAR_VOLUMES = frozenset({"journal statistical mechanics theory experiment"})


def _publication(
    journal: str, resolved: bool, volume: str | None, issue: str | None, page: str | None, year: int | None
) -> Publication | None:
    if year is not None and not 1700 < year <= 2100:
        year = None
    key = journals.resolve(journal) if resolved else None
    if key in _YEAR_VOLUMES and page is None and volume is not None and year is not None:
        volume, page = str(year), volume  # "J. Stat. Mech. (2008) P10008"
    if not volume or not page or not re.search(r"\d", volume) or not _WORD.search(journal):
        return None
    if not resolved and year is None and _YEAR_FORM.fullmatch(volume):
        return None  # "Smith, J. 2011, , 528, A139", "Springer, Cham, 2018, pp. 103": no journal
    canon_volume = canonical_number(volume)
    if key in _MONTH_VOLUMES:
        digits = volume
        if not digits.isdigit():
            return None
        if len(digits) == 4 and not (year is not None and int(digits) == year):
            yy, month = int(digits[:2]), int(digits[2:])
            full = (1900 if yy >= 90 else 2000) + yy
            if year is not None and abs(year - full) > 1:
                return None
            year = full
        elif len(digits) <= 2 and year is not None:
            month = int(digits)
        else:
            return None
        if not 1 <= month <= 12:
            return None
        canon_volume = f"{year}{month:02d}"
    return Publication(
        journal=journal,
        volume=canon_volume,
        page=canonical_number(page),
        year=year,
        resolved=resolved,
        volume_raw=volume,
        page_raw=page,
        issue=issue,
    )


# --------------------------------------------------------------------------- reading

_ANCHOR = re.compile(r"\d+")
_POS = re.compile(r"\bPoS\s*\(?\s*([A-Za-z][\w\-]*)\s*\)?\s*\(?\s*((?:19|20)\d\d)?\s*\)?\s*,?\s*(\d{1,4})\b")


def _candidates(text: str):
    """Publications in ``text`` (already :func:`clean`), in text order."""
    for m in _POS.finditer(text):  # "PoS(LATTICE2019) (2019) 123": the volume is a conference
        yield Publication("Proceedings of Science", m.group(1).upper(), canonical_number(m.group(3)),
                          int(m.group(2)) if m.group(2) else None, True, m.group(1), m.group(3))  # fmt: skip
    for m in _ANCHOR.finditer(text):
        p = m.start()
        if p and text[p - 1] == "(":
            # "Eur. Phys. J. C (2017) 77:856": a year in parentheses right after the journal
            ym = _YEAR_PAREN.match(text, p - 1)
            if ym is None or not re.match(r"\s*,?\s*(?:[Vv]ol\.?\s*)?\d", text[ym.end() :]):
                continue
            p -= 1
        elif p and (text[p - 1].isdigit() or text[p - 1] in "/-"):
            continue
        words = _journal_words(text[:p])
        if not words:
            continue
        volume, issue, page, year = _numbers(text, p)
        journal, resolved = _journal(words)
        pub = _publication(journal, resolved, volume, issue, page, year)
        if pub is not None:
            yield pub


@functools.lru_cache(maxsize=1 << 16)
def parse_publications(text: str) -> tuple[Publication, ...]:
    """Every publication a reference or journal-ref names, in text order."""
    if not text or not any(c.isdigit() for c in text):
        return ()
    return tuple(_candidates(clean(text)))


def parse_publication(text: str | None) -> Publication | None:
    """The publication a reference or journal-ref names: the first whose journal resolves, else
    the first; None when it names none (no journal before a volume and a page)."""
    found = parse_publications(text or "")
    return next((p for p in found if p.resolved), found[0] if found else None)


def publication_from_fields(
    venue: str | None, volume: str | None, pages: str | None, year: int | None, issue: str | None = None
) -> Publication | None:
    """The publication of a structured entry (BibTeX ``journal``/``volume``/``pages``, Grobid's
    ``biblStruct``), read by the same grammar as text."""
    if not venue or not volume or not pages:
        return None
    parts = [f"{venue.strip()} {volume.strip()}"]
    if issue:
        parts.append(f"({issue.strip()})")
    parts.append(f", {pages.strip()}")
    if year:
        parts.append(f" ({year})")
    return parse_publication("".join(parts))


# --------------------------------------------------------------------------- DOIs

_APS = {
    journals.name_key(name): code
    for name, code in (
        ("Physical Review", "PhysRev"),
        ("Physical Review A", "PhysRevA"),
        ("Physical Review B", "PhysRevB"),
        ("Physical Review C", "PhysRevC"),
        ("Physical Review D", "PhysRevD"),
        ("Physical Review E", "PhysRevE"),
        ("Physical Review X", "PhysRevX"),
        ("Physical Review Letters", "PhysRevLett"),
        ("Reviews of Modern Physics", "RevModPhys"),
        ("Physical Review Research", "PhysRevResearch"),
        ("Physical Review Applied", "PhysRevApplied"),
        ("Physical Review Fluids", "PhysRevFluids"),
        ("Physical Review Materials", "PhysRevMaterials"),
        ("Physical Review Accelerators and Beams", "PhysRevAccelBeams"),
        ("Physical Review Special Topics - Accelerators and Beams", "PhysRevSTAB"),
        ("Physical Review Physics Education Research", "PhysRevPhysEducRes"),
        ("PRX Quantum", "PRXQuantum"),
    )
}
_JHEP, _JCAP = "journal high energy physics", "journal cosmology astroparticle physics"
_PTP, _PTPS = "progress theoretical physics", "progress theoretical physics supplement"
_JPSJ = "journal physical society japan"


def derived_doi(pub: Publication) -> str | None:
    """The publication's DOI (lower-case) where the publisher's scheme makes it deterministic:
    APS (``10.1103/PhysRevD.76.013009``), JHEP (IOP up to 2009, Springer from 2010), JCAP, Prog.
    Theor. Phys. (and its Supplement), JPSJ; None elsewhere or for an unresolved journal."""
    if not pub.resolved:
        return None
    key = journals.resolve(pub.journal)
    volume, page = pub.volume, pub.page_raw.upper()
    if key in _APS:
        return f"10.1103/{_APS[key]}.{volume}.{page}".lower()
    if key in (_JHEP, _JCAP):
        if not pub.page.isdigit():
            return None
        year, month, article = volume[:4], volume[4:], int(pub.page)
        if key == _JCAP:
            return f"10.1088/1475-7516/{year}/{month}/{article:03d}"
        if int(year) <= 2009:
            return f"10.1088/1126-6708/{year}/{month}/{article:03d}"
        return f"10.1007/jhep{month}({year}){article:03d}"
    if key in (_PTP, _PTPS) and pub.page.isdigit():
        return f"10.1143/{'ptp' if key == _PTP else 'ptps'}.{volume}.{pub.page}"
    if key == _JPSJ and volume.isdigit():
        return f"{'10.1143' if int(volume) <= 81 else '10.7566'}/jpsj.{volume}.{page.lower()}"
    return None
