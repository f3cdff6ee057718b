"""Bibliographies of LaTeX sources -> :class:`corpus.parse.document.BibEntry` rows with their cite keys.

Read from a ``thebibliography`` block or .bbl (natbib, REVTeX, ACM, Elsevier, AAS and
plain styles), a biblatex .bbl, or BibTeX .bib files; each reader gives :class:`_Item`
(key, printed label, natbib short author list and year, entry).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from corpus.ingest.arxiv_ids import try_normalize
from corpus.ingest.eprint import strip_comments
from corpus.parse.document import Author, BibEntry
from corpus.parse.latex_braces import WS, LatexError, brace_excess, match_brace, read_group, read_optional
from corpus.parse.latex_text import _HREF_RE, _URL_RE, _plain

_BIBITEM_RE = re.compile(r"\\bibitem(?![A-Za-z])")
_BIBEND_RE = re.compile(r"\\end\s*\{thebibliography\}")
_NEWBLOCK_RE = re.compile(r"\\newblock(?![A-Za-z])")
_DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s{}\"<>,]+)")
_ARXIV_RES = (
    re.compile(
        r"arxiv(?:\.org/(?:abs|pdf)/|\s*:\s*|\s+preprint\s+(?:arxiv:)?\s*)([A-Za-z\-.]+/\d{7}|\d{4}\.\d{4,5})",
        re.I,
    ),
    re.compile(r"\babs/(\d{4}\.\d{4,5})"),
    re.compile(r"\\eprint\s*\{([^{}]+)\}"),
)
_YEAR_RE = re.compile(r"(?<![\d/.])(1[89]\d\d|20\d\d)(?![\d/])")
_NATBIB_LABEL = re.compile(r"^(?P<short>.*?)\((?P<year>[^()]*)\)(?P<long>.*)$", re.S)
_ITALIC_RE = re.compile(r"\{\\(?:em|it|sl)(?![A-Za-z])\s*|\\(?:emph|textit|textsl)\s*\{")
_QUOTED_RE = re.compile(r"``(.+?)(?:,)?''", re.S)
_QUOTED_TITLE_RE = re.compile(r"``[^`']+[,.]''")
_ET_AL = re.compile(r"\bet\.?\s*al\.?", re.I)
_VANCOUVER_INITIALS = re.compile(r"[A-ZÀ-ÖØ-ÞĀ-Ž]{1,3}")


@dataclass
class _Item:
    key: str
    label: str | None  # the bibitem's optional label, as text
    entry: BibEntry
    short: str = ""  # natbib short author list
    year_label: str = ""  # natbib year (may carry a letter: 2019a)
    alpha: bool = False  # ``label`` is an alphabetic label ("Knu84"), printed in BRACKET papers


# Author lists as reference styles print them: "J. K. Smith" (initials first), "Smith J. K." and
# "Smith, J. K." (surname first: MNRAS, AAS, Springer), particles ("van der Walt") kept with the
# surname. A surname is a capitalised word ending in a lower-case letter ("Ng", "O'Leary",
# "Ramirez-Ruiz"): never an initial, a number or a venue abbreviation ("Phys.", "D", "49").
_UP = "A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮİĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽ"
_INITIALS = rf"[{_UP}][a-z]?\.(?:[\s\-]*[{_UP}][a-z]?\.)*"
_SURNAME = rf"[{_UP}][\w'’\-]*[a-zß-ÿā-ž]"
_PARTICLES = r"(?:(?:van|von|der|den|de|del|della|di|da|dos|du|la|le|ter|ten|zu|St\.)\s+)*"
_NAME_RE = re.compile(
    rf"(?P<blast>{_PARTICLES}{_SURNAME}(?:\s+{_SURNAME})?),?\s+(?P<bfirst>{_INITIALS})"
    rf"|(?P<afirst>{_INITIALS})\s*(?P<alast>{_PARTICLES}{_SURNAME})"
)
_NAME_SEP = r"(?:\s*,\s*(?:and\s+|&\s*)?|\s+and\s+|\s*&\s*|\s*;\s*)"
_NAME_ONE = _NAME_RE.pattern.replace("?P<blast>", "?:").replace("?P<bfirst>", "?:")
_NAME_ONE = _NAME_ONE.replace("?P<afirst>", "?:").replace("?P<alast>", "?:")
_AUTHOR_LIST_RE = re.compile(
    rf"\s*(?:{_NAME_ONE})(?:{_NAME_SEP}(?:{_NAME_ONE}))*(?:,?\s*(?:et\.?\s*al\.?|and\s+others))?"
    r"(?=\s*(?:[,.:;(]|\d|$)|\s+[^\W\d_])"
)


_NAME_PARTICLES = frozenset(
    "van von der den de del della di da dos du la le ter ten zu y bin ibn al el st".split()
)
_NOT_A_NAME = re.compile(r"\d|https?:|www\.|/|@")
_ABBREVIATION = re.compile(r"[A-Z][a-z]{2,}\.")


def _initials_names(text: str) -> list[Author] | None:
    """The authors of a list written with initials, or None when ``text`` is not one."""
    m = _AUTHOR_LIST_RE.match(text)
    if m is None or text[m.end() :].strip(" .,;:"):
        return None
    out = []
    for nm in _NAME_RE.finditer(text, 0, m.end()):
        first = (
            (nm["bfirst"] or nm["afirst"]).replace(" ", "").replace(".", ". ").replace(". -", ".-").split()
        )
        last = WS.sub(" ", nm["blast"] or nm["alast"]).strip()
        out.append(Author(first=first[0] if first else "", middle=first[1:], last=last))
    return out


def _split_authors(text: str) -> list[Author]:
    text = _ET_AL.sub("", text)
    text = re.sub(r"\b(?:19|20)\d\d[a-z]?\b\.?", "", text).strip(" ,;:&")
    if not text.strip("."):
        return []
    by_initials = _initials_names(text)
    if by_initials is not None:
        return by_initials
    text = text.strip(" .")
    parts = [p.strip(" .,") for p in re.split(r",?\s+and\s+|\s*&\s*|;\s*|,\s*", text) if p.strip(" .,")]
    names: list[str] = []
    initials = re.compile(r"^(?:[A-Z][a-z]?\.?[\s-]*)+$")
    for part in parts:  # "Smith, J. K." -> one name
        if names and initials.match(part) and not initials.match(names[-1]) and " " not in names[-1]:
            names[-1] = f"{part} {names[-1]}"
        else:
            names.append(part)
    out = []
    for name in names[:100]:
        tokens = name.split()
        if (
            _NOT_A_NAME.search(name)
            or sum(1 for t in tokens if _ABBREVIATION.fullmatch(t)) >= 2
            or any(t[:1].islower() and t not in _NAME_PARTICLES for t in tokens)
        ):
            break  # a number, a link, "Phys. Rev." or "learning of things": the names are over
        if not tokens or len(tokens) > 6 or not any(c.isupper() for c in name):
            continue
        if len(tokens) > 1 and _VANCOUVER_INITIALS.fullmatch(tokens[-1]) and not tokens[0].isupper():
            out.append(Author(first=tokens[-1], last=" ".join(tokens[:-1])))  # "Abbott BP" (ARA&A, Vancouver)
            continue
        out.append(Author(first=tokens[0] if len(tokens) > 1 else "", middle=tokens[1:-1], last=tokens[-1]))
    return out


def _ids(latex: str, text: str) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    m = _DOI_RE.search(latex) or _DOI_RE.search(text)
    if m:
        ids["DOI"] = [m.group(1).rstrip(".")]
    for rx in _ARXIV_RES:
        for m in rx.finditer(latex):
            aid = try_normalize(m.group(1).rstrip("."))
            if aid:
                ids["arXiv"] = [aid]
                return ids
    return ids


def _first_italic(latex: str) -> tuple[str, int, int] | None:
    m = _ITALIC_RE.search(latex)
    if not m:
        return None
    start = m.start() if m.group().startswith("{") else m.end() - 1
    end = match_brace(latex, start)
    if end < 0:
        return None
    inner = latex[start + 1 : end - 1]
    inner = re.sub(r"^\\(?:em|it|sl)(?![A-Za-z])", "", inner)
    return inner, m.start(), end


# --- bibitems

_BIBINFO_RE = re.compile(r"\\bib(info|field)\s*\{(\w+)\}\s*\{")
_BBL_NOISE_RE = re.compile(
    r"\\bib(?:info|field)\s*\{\w+\}"  # the field name; the value group stays
    r"|\\(?:BibitemOpen|bibitemStop|bibitemNoStop|EOS|urlprefix|doibase)(?![A-Za-z])"
    r"|\\BibitemShut\s*\{\w*\}|\\href@noop\s*\{\}|\\(?:selectlanguage|showISBNx|showISBNxiii|showISSN)\s*\{[^{}]*\}"
    r"|\\(?:showURL|showeprint)\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}"
)
_EPRINT_CMD_RE = re.compile(r"\\Eprint\s*\{[^{}]*\}\s*")  # apsrev: \Eprint {url} {arXiv:...}: keep the text
_NATEXLAB_RE = re.compile(r"\{?\\natexlab\s*\{([a-z]*)\}\}?")
_SAME_AUTHORS_RE = re.compile(r"^\s*(?:\\bysame|---+|—+|–{2,}|\\rule\s*\{[^{}]*\}\s*\{[^{}]*\})")
_LABEL_CMD_RE = re.compile(r"\\(?:protect\s*)?\\(citeauthoryear|astroncite|citename)(?![A-Za-z])")
_INITIAL_END = re.compile(r"(?:^|[\s.~\-])(?:[A-Z]|al|eds?|Jr|Sr|vs|[Vv]ol|[Nn]o|pp?|St|Ph|Dr|Th|Ch)$")
_VOLUME_NEXT = re.compile(r"\s*[,.;:]?\s*(?:\{\\bf\s*|\\textbf\s*\{|\()?\s*\d")
_WORDS_BEFORE_NUMBER = re.compile(r"[^\d{}\\]*?[^\W\d_]{2,}")
_BLOCK_NOT_TITLE = re.compile(r"^\s*(?:https?:|doi\b|arxiv\b|\d|\W*$)", re.I)


_MN_DOI_RE = re.compile(r"\\mn@doi\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}")
_MN_EPRINT_RE = re.compile(r"\\(?:mn@)?eprint\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def _clean_bbl(body: str) -> str:
    """A bibitem's LaTeX with the bbl-only markup of REVTeX, ACM, Elsevier, MNRAS and
    natbib styles reduced to plain LaTeX (field names, control macros, ``\\natexlab``)."""
    if "@" in body:
        dois = [m.group(2) for m in _MN_DOI_RE.finditer(body)]
        body = _MN_DOI_RE.sub(lambda m: m.group(1) or "", body)
        body = _MN_EPRINT_RE.sub(lambda m: f"{m.group(1)}:{m.group(2)}", body)
        body += "".join(f" \\doi{{{d}}}" for d in dois)  # after the venue and pages: found, not in the way
    if "\\bib" in body or "\\Bibitem" in body or "@noop" in body or "\\show" in body or "\\select" in body:
        body = _BBL_NOISE_RE.sub("", body)
    if "\\Eprint" in body:
        body = _EPRINT_CMD_RE.sub("", body)
    if "\\natexlab" in body:
        body = _NATEXLAB_RE.sub(r"\1", body)
    return body


def _entry_from_item(body: str, idx: int, label_year: str = "") -> BibEntry:
    """Title, authors, venue, year and ids from one bibitem's LaTeX (best effort):
    ``\\bibinfo{field}{value}`` markup when the style writes it, else the layout."""
    body = body.strip()
    if "\\bibinfo" in body or "\\bibfield" in body or "\\showarticletitle" in body:
        return _entry_from_fields(body, idx, label_year)
    body = _clean_bbl(body)
    raw = _plain(_NEWBLOCK_RE.sub(" ", body))
    parts = _by_blocks(body) if "\\newblock" in body else None
    if parts is None:
        parts = _by_layout(_URL_RE.sub("", _HREF_RE.sub("", _NEWBLOCK_RE.sub(" ", body))))
    authors_latex, title, venue = parts
    ym = re.search(r"\d{4}", label_year or "") or _YEAR_RE.search(_URL_RE.sub("", _HREF_RE.sub("", body)))
    year = int(ym.group(0)) if ym else None
    return BibEntry(
        ref_id=f"BIBREF{idx}",
        title=title,
        authors=_split_authors(_plain(authors_latex)),
        year=year,
        venue=venue[:300],
        other_ids=_ids(body, raw),
        num=idx,
        raw_text=raw,
    )


def _by_blocks(body: str) -> tuple[str, str, str] | None:
    """(authors LaTeX, title, venue) of a bibitem in ``\\newblock`` blocks: "authors. year.
    \\newblock title. \\newblock venue." (natbib, ACL) or "J. Pearl, {\\em Causality.}
    \\newblock Publisher, 2009."; None when no block reads as a title, or when an IEEE
    ``Title,'' is quoted (the layout reader takes those)."""
    if _QUOTED_TITLE_RE.search(body):
        return None
    blocks = [b for b in _NEWBLOCK_RE.split(body) if b.strip()]
    if len(blocks) < 2:
        return None
    it = _first_italic(blocks[0])
    if it and it[1] > 0:
        title = _plain(it[0])
        if _is_title(title):
            venue = re.split(r",?\s*(?:19|20)\d\d", _plain(blocks[1]), maxsplit=1)[0].strip(" .,")
            return blocks[0][: it[1]], title.strip(" .,"), venue
    for k in range(1, len(blocks)):
        title = _plain(blocks[k])
        if not _is_title(title):
            continue
        venue = ""
        if k + 1 < len(blocks):
            it = _first_italic(blocks[k + 1])
            venue = re.sub(r"^In\s+", "", _plain(it[0] if it else blocks[k + 1]).strip(" .,"))
        return " ".join(blocks[:k]), title.strip(" .,"), venue
    return None


def _by_layout(flat: str) -> tuple[str, str, str]:
    """(authors LaTeX, title, venue) of a bibitem from its layout (links removed): a quoted
    title, an italic title (three words, or two with a venue name after them: "{\\em Viscous
    bouncing}, Soft Matter {\\bf 16}"; an italic followed by a volume number is the venue),
    else the sentence after the authors (:func:`_by_sentences`)."""
    q = _QUOTED_RE.search(flat)
    if q:
        rest = flat[q.end() :]
        it = _first_italic(rest)
        venue = _plain(it[0] if it else re.split(r"\{\\bf|\\textbf|\(|\d", rest, maxsplit=1)[0])
        return flat[: q.start()], _plain(q.group(1)).strip(" .,"), venue.strip(" .,")
    it = _first_italic(flat)
    if it and it[1] > 0 and not _VOLUME_NEXT.match(flat, it[2]):
        title = _plain(it[0])
        n_words = len(title.split())
        if n_words >= 3 or (n_words == 2 and _WORDS_BEFORE_NUMBER.match(flat, it[2])):
            venue = _plain(re.split(r"\{\\bf|\\textbf|\(|\d", flat[it[2] :], maxsplit=1)[0]).strip(" .,")
            return flat[: it[1]], title.strip(" .,"), re.sub(r"^(?:in|In)\s+", "", venue)
    return _by_sentences(flat, it)


def _is_title(text: str) -> bool:
    """A ``\\newblock`` that can be a title: two words or more, not a link, id or number."""
    return not _BLOCK_NOT_TITLE.match(text) and sum(1 for w in text.split() if w[:1].isalpha()) >= 2


def _by_sentences(latex: str, italic: tuple[str, int, int] | None) -> tuple[str, str, str]:
    """(authors LaTeX, title, venue) of a bibitem without markup: the sentence after the
    authors is the title ("A. Smith and B. Jones. Deep things. \\emph{J}, 12, 2019."),
    unless it is only a year and venue (astronomy styles have no titles)."""
    venue = ""
    head = latex
    if italic:  # the venue: what follows is volume and pages
        venue = _plain(italic[0]).strip(" .,")
        head = latex[: italic[1]]
    by_names = _after_author_list(_plain(head), venue)
    if by_names is not None:
        return by_names
    ym = _YEAR_RE.search(head)
    parts = _sentences(_plain(head))
    if len(parts) >= 2 and _is_title(parts[1]) and not _YEAR_RE.fullmatch(parts[1].strip(" .,()")):
        authors = parts[0]
        title = parts[1] if italic or len(parts) > 2 else ""
        if not italic and len(parts) > 2:
            venue = re.split(r"[,(]|\d", parts[2], maxsplit=1)[0].strip(" .,")
        if title:
            return authors, re.sub(r"\s+In$", "", title).strip(" .,"), venue
    if ym:
        authors_latex = head[: ym.start()]
        if not venue:
            rest = _NATEXLAB_RE.sub("", latex[ym.end() :])
            rest = re.sub(r"^[a-z](?![a-z])", "", rest.lstrip(" {}")).lstrip(" .,)")
            venue = _plain(re.split(r"\{\\bf|\\textbf|\d", rest, maxsplit=1)[0]).strip(" .,")
        return authors_latex, "", venue
    return re.split(r"\{\\bf|\\textbf|\d", head, maxsplit=1)[0], "", venue


_YEAR_AFTER_NAMES = re.compile(r"[\s,.:;]*\(?(?:1[89]|20)\d\d[a-z]?\)?(?=[\s,.:;]|$)[\s,.:;]*")


def _after_author_list(plain: str, venue: str) -> tuple[str, str, str] | None:
    """(authors, title, venue) of a reference that opens with a list of names written with
    initials ("Smith J., Jones K.", "J. Smith, K. Jones", "Smith, J., Jones, K.:"), then an
    optional year, then the title and the venue; a reference whose first piece is followed by
    its volume ("Kasen D., ..., 2017, Nature, 551, 80": MNRAS and AAS print no titles) has a
    venue and no title. None when the reference does not open with such a list."""
    m = _AUTHOR_LIST_RE.match(plain)
    if m is None:
        return None
    authors, rest = plain[: m.end()], plain[m.end() :]
    comma_style = rest.lstrip()[:1] == ","
    year = _YEAR_AFTER_NAMES.match(rest)
    rest = rest[year.end() :] if year else rest.lstrip(" ,.:;")
    if not rest:
        return authors, "", venue
    comma = rest.find(", ")
    if (comma_style or year) and comma > 0 and rest[comma + 2 : comma + 3].isdigit() and not venue:
        return authors, "", rest[:comma].strip(" .,")  # "2017, Phys. Rev. Lett., 119, 1": no title
    stops = [len(rest)] + [
        s.end() - len(s.group()) for s in _SENTENCE_END.finditer(rest) if _sentence_end(rest, s)
    ][:1]
    if (comma_style or year) and comma >= 0:
        stops.append(comma)
    end = min(stops)
    first, tail = rest[:end].strip(" .,"), rest[end:].lstrip(" .,;:")
    if not first:
        return authors, "", venue
    if (not tail or tail[:1].isdigit()) and not venue:  # "2017, Nature, 551, 80": a venue, no title
        return authors, "", re.split(r"[,(]|\s\d", first, maxsplit=1)[0].strip(" .,")
    if not _is_title(first) and not venue:
        return authors, "", first
    if not venue:
        venue = re.split(r"[,(]|\d", tail, maxsplit=1)[0].strip(" .,")
    return authors, re.sub(r"\s+In$", "", first), venue


_SENTENCE_END = re.compile(r"\.\s+(?=[^\s,;:)\]])")


def _sentence_end(text: str, m: re.Match) -> bool:
    return not _INITIAL_END.search(text, 0, m.start())


def _sentences(text: str) -> list[str]:
    """Split plain reference text at ". " where the word before the period is not an
    initial or abbreviation (``J. K. Smith``, ``et al.``)."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        if not _sentence_end(text, m):
            continue
        out.append(text[start : m.start()].strip())
        start = m.end()
    out.append(text[start:].strip(" ."))
    return [p for p in out if p]


def _entry_from_fields(body: str, idx: int, label_year: str) -> BibEntry:
    """A bibitem written with ``\\bibinfo{field}{value}`` / ``\\bibfield{field}{...}``
    (REVTeX apsrev, ACM-Reference-Format, elsarticle, naturemag and other styles made
    with "makebst"), and ACM's ``\\showarticletitle{...}``."""
    fields: dict[str, list[str]] = {}
    for m in _BIBINFO_RE.finditer(body):
        end = match_brace(body, m.end() - 1)
        if end > 0:
            name = m.group(2).lower() if m.group(1) == "info" else "@" + m.group(2).lower()
            fields.setdefault(name, []).append(body[m.end() : end - 1])
    for m in re.finditer(r"\\showarticletitle\s*\{", body):
        end = match_brace(body, m.end() - 1)
        if end > 0:
            fields.setdefault("articletitle", []).append(body[m.end() : end - 1])

    def one(*names: str) -> str:
        for name in names:
            for value in fields.get(name, ()):
                text = _plain(_clean_bbl(value)).strip(" .,;")
                if text:
                    return text
        return ""

    people = fields.get("author") or fields.get("person") or []
    authors = [a for a in (_bbl_person(v) for v in people) if a is not None]
    if not authors and fields.get("@author"):
        authors = _split_authors(_plain(_clean_bbl(" and ".join(fields["@author"]))))
    clean = _clean_bbl(body)
    raw = _plain(_NEWBLOCK_RE.sub(" ", clean))
    ym = re.search(r"\d{4}", label_year or "") or re.search(r"\d{4}", one("year")) or _YEAR_RE.search(raw)
    title = one("articletitle", "title") or (one("booktitle") if not fields.get("journal") else "")
    venue = one("journal")
    if not venue:
        booktitle = one("booktitle")
        venue = booktitle if booktitle != title else ""
        venue = venue or one("series", "howpublished", "publisher", "school", "institution", "organization")
    ids = _ids(clean, raw)
    doi = one("doi")
    if doi:
        ids["DOI"] = [doi.removeprefix("https://doi.org/").removeprefix("doi:")]
    eprint = try_normalize(one("eprint"))
    if eprint:
        ids["arXiv"] = [eprint]
    return BibEntry(
        ref_id=f"BIBREF{idx}",
        title=title,
        authors=authors,
        year=int(ym.group(0)) if ym else None,
        venue=venue[:300],
        volume=one("volume"),
        issue=one("number", "issue"),
        pages=re.sub(r"\s*[-\u2013\u2014]+\s*", "--", one("pages")),
        other_ids=ids,
        num=idx,
        raw_text=raw,
    )


def _bbl_person(latex: str) -> Author | None:
    """One ``\\bibinfo{author}`` value: ``\\bibfnamefont{J.~S.}\\ \\bibnamefont{Bell}``,
    ``Sendner, C.`` or ``Mart{\\'\\i}n Abadi``; None for "et al." and the like."""
    m = re.search(r"\\bibnamefont\s*\{", latex)
    if m:
        end = match_brace(latex, m.end() - 1)
        last = _plain(latex[m.end() : end - 1]) if end > 0 else ""
        fm = re.search(r"\\bibfnamefont\s*\{", latex)
        fend = match_brace(latex, fm.end() - 1) if fm else -1
        first = _plain(latex[fm.end() : fend - 1]).split() if fm and fend > 0 else []
        return Author(first=first[0] if first else "", middle=first[1:], last=last) if last else None
    name = _plain(_clean_bbl(latex)).strip(" ,;")
    if not name.strip(".") or _ET_AL.fullmatch(name) or name.lower() in ("others", "and others"):
        return None
    if "," in name:
        last, _, first = name.partition(",")
        tokens = first.split()
        return Author(first=tokens[0] if tokens else "", middle=tokens[1:], last=last.strip())
    tokens = name.split()
    return Author(first=tokens[0] if len(tokens) > 1 else "", middle=tokens[1:-1], last=tokens[-1])


def _label(label: str) -> tuple[str, str, str]:
    """(text, natbib short author list, year) of a bibitem's optional label:
    ``Smith et~al.(2019)Smith, Jones, and Lee``, ``{\\citenamefont{Bell}(1964)}``,
    ``\\protect\\citeauthoryear{long}{short}{year}`` (or ``{short}{year}``),
    ``\\protect\\astroncite{short}{year}``, ``\\protect\\citename{short }year``."""
    m = _LABEL_CMD_RE.search(label)
    if m:
        args: list[str] = []
        i = m.end()
        while len(args) < 3:
            group, j = read_group(label, i)
            if group is None:
                break
            args.append(group)
            i = j
        tail = _plain(label[i:]).strip()
        if m.group(1) == "citename" and args:
            short, year = _plain(args[0]).strip(" ,"), tail
        elif len(args) >= 2:
            short, year = _plain(args[-2]).strip(" ,"), _plain(args[-1]).strip()
        else:
            short, year = "", ""
        if short and re.search(r"\d{4}|n\.d\.", year):
            return f"{short} ({year})", short, year
    text = _plain(label)
    nm = _NATBIB_LABEL.match(text)
    if nm and re.search(r"\d{4}|n\.d\.", nm["year"]):
        return text, nm["short"].strip(' "'), nm["year"].strip()
    return text, "", ""


def _bibitems(text: str) -> list[_Item]:
    items: list[_Item] = []
    starts = list(_BIBITEM_RE.finditer(text))
    for n, m in enumerate(starts):
        label, i = read_optional(text, m.end())
        try:
            key, i = read_group(text, i)
        except LatexError:
            key = None
        if key is None:
            continue
        stop = starts[n + 1].start() if n + 1 < len(starts) else len(text)
        end = _BIBEND_RE.search(text, i, stop)
        body = text[i : end.start() if end else stop]
        label_text, short, year = _label(label) if label else (None, "", "")
        entry = _entry_from_item(body, len(items), year)
        if not entry.authors and items and _SAME_AUTHORS_RE.match(body):
            entry.authors = [a.model_copy() for a in items[-1].entry.authors]  # "---." as before
        items.append(_Item(key.strip(), label_text, entry, short, year))
    return items


def _references_env(text: str) -> list[_Item]:
    """AAS/PASP ``references`` lists: keyless ``\\reference`` entries (keys ``_ref1``...)."""
    items = []
    for n, chunk in enumerate(re.split(r"\\(?:reference|refitem|item)(?![A-Za-z])", text)[1:]):
        if chunk.strip():
            items.append(_Item(f"_ref{n + 1}", None, _entry_from_item(chunk, len(items))))
    return items


# --- BibTeX (.bib) files, used when there is no .bbl (and for titles a .bbl leaves out)
#
# bibtexparser reads the entries (fields, ``@string`` macros and ``#`` concatenation, enclosing
# braces and quotes) and splits names as BibTeX does ("von Last, Jr, First"). Before it, a
# scanner cuts the file into entries, so only the entries a paper cites are handed to it (a
# paper cites ~50 of the thousands in a shared .bib) and an entry whose braces never close ends
# where the next ``@type{`` line starts, as in BibTeX, instead of swallowing the rest.

logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # a broken entry is skipped, not logged per paper

_BIB_AT_RE = re.compile(r"@\s*(\w+)\s*([{(])")
_BIB_NEXT_RE = re.compile(r"\n[ \t]*@[ \t]*[A-Za-z]+[ \t]*[{(]")


def _entry_end(text: str, m: re.Match) -> tuple[int, bool]:
    """End of the entry whose ``@type{`` is ``m`` and whether it closed: its closing brace, or
    the next entry's start."""
    if m.group(2) == "{":
        end = match_brace(text, m.end() - 1)
    else:
        close = text.find(")", m.end())
        end = close + 1 if close >= 0 else -1
    closed = end >= 0
    end = len(text) if end < 0 else end
    nxt = _BIB_NEXT_RE.search(text, m.end(), end)
    return (nxt.start() + 1, False) if nxt else (end, closed)


def _bib_blocks(text: str, keys: set[str] | frozenset[str] | None) -> str:
    """The ``@string`` blocks and the wanted entries (keys compared lower-case) of a .bib, each
    entry closed."""
    wanted = {k.lower() for k in keys} if keys is not None else None
    out, pos = [], 0
    while m := _BIB_AT_RE.search(text, pos):
        kind = m.group(1).lower()
        if kind in ("comment", "preamble"):
            pos = _entry_end(text, m)[0]
            continue
        if wanted is not None and kind != "string":
            comma = text.find(",", m.end(), m.end() + 300)
            if comma < 0 or text[m.end() : comma].strip().lower() not in wanted:
                pos = m.end()
                continue
        end, closed = _entry_end(text, m)
        block = text[m.start() : end].rstrip()
        if not closed:  # close what is open in it, as BibTeX ends it at the next entry
            block = block.rstrip(",") + "}" * max(brace_excess(block), 0)
            block += ")" if m.group(2) == "(" else ""
        out.append(block)
        pos = end
    return "\n".join(out)


def parse_bib_file(text: str, keys: set[str] | frozenset[str] | None = None) -> dict[str, dict[str, str]]:
    """BibTeX entries as ``{key: {field: latex value}}`` (``ENTRYTYPE`` too; ``@string`` macros
    resolved, field names lower-case). With ``keys``, only those entries (matched as BibTeX
    matches keys, whatever their case)."""
    import bibtexparser
    from bibtexparser.model import DuplicateFieldKeyBlock, Entry

    blocks = _bib_blocks(text, keys)
    if not blocks:
        return {}
    library = bibtexparser.parse_string(blocks)
    macros: dict[str, str] = {}
    for string in library.strings:
        value = str(string.value)
        macros[string.key.lower()] = _concatenation(value, macros) if "#" in value else value
    entries: dict[str, dict[str, str]] = {}
    for entry in library.entries:
        fields = {"ENTRYTYPE": entry.entry_type.lower()}
        for f in entry.fields:
            value = f.value if isinstance(f.value, str) else str(f.value)
            fields.setdefault(f.key.lower(), _concatenation(value, macros) if "#" in value else value)
        entries.setdefault(entry.key, fields)
    for block in library.failed_blocks:  # a field given twice: BibTeX warns and keeps the first
        entry = getattr(block, "ignore_error_block", None)
        if isinstance(block, DuplicateFieldKeyBlock) and isinstance(entry, Entry):
            fields = {"ENTRYTYPE": entry.entry_type.lower()}
            for f in entry.fields:  # as written: enclosing braces or quotes, macro names
                raw = f.value if isinstance(f.value, str) else str(f.value)
                fields.setdefault(f.key.lower(), _concatenation(raw.strip(), macros))
            entries.setdefault(entry.key, fields)
    return entries


_MONTHS = dict(
    zip(
        "jan feb mar apr may jun jul aug sep oct nov dec".split(),
        ("January February March April May June July August September October November December".split()),
        strict=True,
    )
)
_BIB_WORD = re.compile(r"[^\s\"{}#,=]+")


def _concatenation(value: str, macros: dict[str, str]) -> str:
    """``"Astron. " # aa # {~Suppl.}`` joined, macros (and BibTeX's month names) expanded: what
    bibtexparser leaves as written. A value that is not such an expression (a URL with ``#``)
    comes back unchanged."""
    pieces, depth, quoted, start = [], 0, False, 0
    for i, c in enumerate(value):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == '"' and depth == 0:
            quoted = not quoted
        elif c == "#" and depth == 0 and not quoted:
            pieces.append(value[start:i].strip())
            start = i + 1
    pieces.append(value[start:].strip())
    out = []
    for p in pieces:
        if len(p) >= 2 and (p[0], p[-1]) in (('"', '"'), ("{", "}")):
            out.append(p[1:-1])
        elif _BIB_WORD.fullmatch(p) and (p.isdigit() or p[0].isalpha()):
            out.append(macros.get(p.lower(), _MONTHS.get(p.lower(), p)))
        else:
            return value
    return "".join(out)


_SUFFIX_RE = re.compile(r"(?:Jr|Sr|I{2,3}|IV|V)\.?", re.I)


def _bib_authors(value: str) -> list[Author]:
    """BibTeX names ("First von Last", "von Last, First", "von Last, Jr, First"), split as
    BibTeX splits them (a braced group is one word: ``{The LIGO Collaboration}``)."""
    from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names

    out = []
    for name in split_multiple_persons_names(WS.sub(" ", value).strip()):
        if not name or name.lower() == "others":
            continue
        try:
            parts = parse_single_name_into_parts(name, strict=False)
        except ValueError:
            continue
        if parts.jr and len(parts.first) == 1 and _SUFFIX_RE.fullmatch(parts.first[0]):
            parts.first, parts.jr = parts.jr, parts.first  # ADS writes "{Gott}, J.~R., III"
        first = [_plain(w) for w in parts.first if _plain(w)]
        last = _plain(" ".join(parts.von + parts.last))
        if not last and not first:
            continue
        out.append(
            Author(
                first=first[0] if first else "",
                middle=first[1:],
                last=last,
                suffix=_plain(" ".join(parts.jr)),
            )
        )
    return out


def _bib_ids(fields: dict[str, str]) -> dict[str, list[str]]:
    """DOI and arXiv id of a .bib entry (``eprint`` when the archive is arXiv, else an id
    written in the journal, url, note or volume field)."""
    ids: dict[str, list[str]] = {}
    if fields.get("doi"):
        ids["DOI"] = [fields["doi"].strip()]
    cand = fields.get("eprint", "") if fields.get("archiveprefix", "arxiv").lower() == "arxiv" else ""
    aid = (
        try_normalize(cand)
        or _ids(" ".join(fields.get(f, "") for f in ("journal", "url", "note", "volume")), "").get(
            "arXiv", [None]
        )[0]
    )
    if aid:
        ids["arXiv"] = [aid]
    return ids


def _entry_from_bib(fields: dict[str, str], idx: int) -> BibEntry:
    authors = _bib_authors(fields.get("author", fields.get("editor", "")))
    title = _plain(fields.get("title", "")).strip(" .")
    venue = _plain(
        fields.get("journal")
        or fields.get("booktitle")
        or fields.get("journaltitle")
        or fields.get("publisher", "")
    )
    ym = re.search(r"\d{4}", fields.get("year", "") or fields.get("date", ""))
    year = int(ym.group()) if ym else None
    raw = ". ".join(
        p
        for p in (", ".join(f"{a.first} {a.last}".strip() for a in authors), str(year or ""), title, venue)
        if p
    )
    ids = _bib_ids(fields)
    return BibEntry(
        ref_id=f"BIBREF{idx}",
        title=title,
        authors=authors,
        year=year,
        venue=venue,
        volume=fields.get("volume", ""),
        issue=fields.get("number", ""),
        pages=re.sub(r"\s*[-\u2013\u2014]+\s*", "-", _plain(fields.get("pages", ""))),
        other_ids=ids,
        num=idx,
        urls=[fields["url"]] if fields.get("url") else [],
        raw_text=raw,
    )


# --- biblatex .bbl

_BLX_ENTRY_RE = re.compile(r"\\entry\s*\{([^{}]+)\}\s*\{(\w+)\}(.*?)\\endentry", re.S)
_BLX_FIELD_RE = re.compile(r"\\field\s*(?:\[[^\]]*\])?\s*\{(\w+)\}\s*\{")
_BLX_VERB_RE = re.compile(r"\\verb\s*\{(\w+)\}\s*\\verb\s+(.*?)\s*\\endverb", re.S)


def _biblatex_items(text: str) -> list[_Item]:
    items = []
    for m in _BLX_ENTRY_RE.finditer(text):
        body, fields = m.group(3), {}
        for fm in _BLX_FIELD_RE.finditer(body):
            end = match_brace(body, fm.end() - 1)
            if end > 0:
                fields[fm.group(1).lower()] = body[fm.end() : end - 1]
        for vm in _BLX_VERB_RE.finditer(body):
            fields.setdefault(vm.group(1).lower(), vm.group(2).strip())
        names = _blx_names(body, "author") or _blx_names(body, "editor")
        fields["author"] = " and ".join(names)
        if fields.get("eprinttype", "arxiv").lower() != "arxiv":
            fields.pop("eprint", None)
        entry = _entry_from_bib(fields, len(items))
        short = (
            ", ".join(a.last for a in entry.authors[:2])
            if len(entry.authors) <= 2
            else f"{entry.authors[0].last} et al."
        )
        year = fields.get("labelyear", "") or (str(entry.year) if entry.year else "")
        label = fields.get("labelalpha")
        extra = fields.get("extraalpha", "").strip()
        if label and extra.isdigit() and 0 < int(extra) <= 26:
            label += chr(ord("a") + int(extra) - 1)  # Knu84a, Knu84b: biblatex's extraalpha
        items.append(_Item(m.group(1).strip(), label, entry, short, year, alpha=label is not None))
    return items


_BLX_NAME_RE = re.compile(r"\\name\s*\{(\w+)\}\s*\{\d+\}\s*\{[^{}]*\}\s*\{")
_BLX_KEYVAL_RE = re.compile(r"(\w+)\s*=\s*\{((?:[^{}]|\{[^{}]*\})*)\}")


def _groups(text: str) -> list[str]:
    """The top-level ``{...}`` groups of ``text``, in order (what lies between them skipped)."""
    out, i = [], 0
    while (j := text.find("{", i)) >= 0:
        end = match_brace(text, j)
        if end < 0:
            break
        out.append(text[j + 1 : end - 1])
        i = end
    return out


def _blx_names(body: str, role: str) -> list[str]:
    """``\\name{role}`` of a biblatex .bbl entry as BibTeX names ("von Last, First"): biber's
    key=value parts (``family={..}, given={..}, prefix={..}``, biblatex 3.3 on) or the older
    positional groups ``{hash}{family}{familyi}{given}{giveni}{prefix}{prefixi}{suffix}{suffixi}``."""
    for m in _BLX_NAME_RE.finditer(body):
        if m.group(1) != role:
            continue
        end = match_brace(body, m.end() - 1)
        names = []
        for person in _groups(body[m.end() : end - 1] if end > 0 else ""):
            parts = _groups(person)
            if len(parts) >= 2 and "family=" in parts[1]:
                kv = dict(_BLX_KEYVAL_RE.findall(parts[1]))
                family, given, prefix, suffix = (
                    kv.get(k, "") for k in ("family", "given", "prefix", "suffix")
                )
            elif len(parts) >= 4:
                family, given = parts[1], parts[3]
                prefix = parts[5] if len(parts) > 5 else ""
                suffix = parts[7] if len(parts) > 7 else ""
            else:
                continue
            last = f"{prefix} {family}".strip()
            names.append(", ".join(p for p in (last, suffix, given) if p) if given or suffix else last)
        return names
    return []


def _bib_short(authors: list[Author]) -> str:
    if not authors:
        return ""
    if len(authors) == 1:
        return authors[0].last
    if len(authors) == 2:
        return f"{authors[0].last} and {authors[1].last}"
    return f"{authors[0].last} et al."


def _items_from(text: str) -> list[_Item]:
    if _BIBITEM_RE.search(text):
        return _bibitems(text)
    if "\\endentry" in text:
        return _biblatex_items(text)
    if re.search(r"\\begin\s*\{references\}", text):
        return _references_env(text)
    items = []
    for key, fields in parse_bib_file(text).items():
        entry = _entry_from_bib(fields, len(items))
        items.append(_Item(key, None, entry, _bib_short(entry.authors), str(entry.year or "")))
    return items


def parse_bibliography(text: str) -> dict[str, BibEntry]:
    """Cite key -> :class:`BibEntry` (``BIBREF0``... in bibliography order) from a .bbl
    (natbib or biblatex), a ``thebibliography`` block, or a .bib file."""
    if _BIBITEM_RE.search(text):  # a .bbl: TeX comments (not in .bib files, where % is text)
        text = strip_comments(text)
    return {item.key: item.entry for item in _items_from(text)}


def fill_from_bib(items: list[_Item], fields: dict[str, dict[str, str]]) -> int:
    """Give .bbl entries what their .bib entry (same cite key) has and they lack: title,
    DOI, arXiv id (and venue, year, authors when missing). Returns the number of entries
    that got a title."""
    titled = 0
    for it in items:
        f = fields.get(it.key) or fields.get(it.key.lower())
        if f is None:
            continue
        e = it.entry
        if not e.venue or not e.year or not e.authors:
            bib = _entry_from_bib(f, e.num or 0)
            e.venue, e.year, e.authors = e.venue or bib.venue, e.year or bib.year, e.authors or bib.authors
        title = _plain(f.get("title", "")).strip(" .")
        if not e.title and title:
            e.title = title
            titled += 1
        for kind, values in _bib_ids(f).items():
            e.other_ids.setdefault(kind, values)
    return titled


def alpha_labels(items: list[_Item], style: str = "bibtex") -> None:
    """Give entries read from .bib files the alphabetic labels their style prints ("Knu84",
    "LK94"): BibTeX's alpha.bst (one author: three letters; up to four: initials; more: three
    initials and "+") or biblatex's alphabetic (one: three letters; up to three: initials;
    more: the first name's three letters and "+"); the year's last two digits; entries with
    the same label told apart by a, b, ... in the order the style sorts them."""
    names_max = 4 if style == "bibtex" else 3
    labels: list[str] = []
    for it in items:
        lasts = [re.sub(r"[^\w]", "", a.last) for a in it.entry.authors if a.last]
        lasts = [x for x in lasts if x]
        if not lasts:
            head = re.sub(r"[^\w]", "", it.key)[:3]
        elif len(lasts) == 1:
            head = lasts[0][:3]
        elif len(lasts) <= names_max:
            head = "".join(x[0] for x in lasts)
        elif style == "bibtex":
            head = "".join(x[0] for x in lasts[:3]) + "+"
        else:
            head = lasts[0][:3] + "+"
        year = str(it.entry.year or "")[-2:]
        labels.append(head + year)
    order = sorted(range(len(items)), key=lambda i: (labels[i].lower(), items[i].entry.title.lower()))
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    seen: dict[str, int] = {}
    for i in order:
        label = labels[i]
        if counts[label] > 1:
            seen[label] = seen.get(label, 0) + 1
            label += chr(ord("a") + min(seen[label], 26) - 1)
        items[i].label, items[i].alpha = label, True
