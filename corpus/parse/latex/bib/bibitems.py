"""``thebibliography`` blocks and .bbl files written by BibTeX styles -> bibliography items:
``\\bibinfo{field}{value}`` markup (REVTeX, ACM, Elsevier, makebst styles) read field by
field, other styles by their layout (``\\newblock`` blocks, a quoted or italic title, the
sentence after the authors), natbib and AAS labels read for author-year citations."""

from __future__ import annotations

import re

from corpus.ingest.arxiv_ids import try_normalize
from corpus.parse.document import Author, BibEntry
from corpus.parse.latex.bib.item import _YEAR_RE, _ids, _Item, clean_title, read_groups, volume_of, year_in
from corpus.parse.latex.bib.names import _AUTHOR_LIST_RE, _ET_AL, _FULL_LIST_RE, _NAME_RE, _split_authors
from corpus.parse.latex.braces import LatexError, match_brace, read_group, read_optional
from corpus.parse.latex.text import _HREF_RE, _URL_RE, plain_field

_BIBITEM_RE = re.compile(r"\\bibitem(?![A-Za-z])")
_BIBEND_RE = re.compile(r"\\end\s*\{thebibliography\}")
_NEWBLOCK_RE = re.compile(r"\\newblock(?![A-Za-z])")
_NATBIB_LABEL = re.compile(r"^(?P<short>.*?)\((?P<year>[^()]*)\)(?P<long>.*)$", re.S)
_ITALIC_RE = re.compile(r"\{\\(?:em|it|sl)(?![A-Za-z])\s*|\\(?:emph|textit|textsl)\s*\{")
_QUOTED_RE = re.compile(r"``(.+?),?''|\u201c(.+?),?\u201d", re.S)
_QUOTED_TITLE_RE = re.compile(r"(?:``|\u201c)[^`'\u201c\u201d]+[,.](?:''|\u201d)")


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


_BIBINFO_RE = re.compile(r"\\bib(info|field)\s*\{(\w+)\}\s*\{")
_BBL_NOISE_RE = re.compile(
    r"\\bib(?:info|field)\s*\{\w+\}"  # the field name; the value group stays
    r"|\\(?:BibitemOpen|bibitemStop|bibitemNoStop|EOS|urlprefix|doibase)(?![A-Za-z])"
    r"|\\BibitemShut\s*\{\w*\}|\\href@noop\s*\{\}|\\(?:selectlanguage|showISBNx|showISBNxiii|showISSN)\s*\{[^{}]*\}"
    r"|\\(?:showURL|showeprint)\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}"
    r"|\\bibAnnoteFile\s*\{[^{}]*\}"  # natbib's annotation file (plos2009.bst): none shipped, nothing printed
)
_EPRINT_CMD_RE = re.compile(r"\\Eprint\s*\{[^{}]*\}\s*")  # apsrev: \Eprint {url} {arXiv:...}: keep the text
_NATEXLAB_RE = re.compile(r"\{?\\natexlab\s*\{([a-z]*)\}\}?")
_SAME_AUTHORS_RE = re.compile(r"^\s*(?:\\bysame|---+|—+|–{2,}|\\rule\s*\{[^{}]*\}\s*\{[^{}]*\})")
_LABEL_CMD_RE = re.compile(r"\\(?:protect\s*)?\\(citeauthoryear|astroncite|citename)(?![A-Za-z])")
_INITIAL_END = re.compile(r"(?:^|[\s.~\-])(?:[A-Z]|al|eds?|Jr|Sr|vs|[Vv]ol|[Nn]o|pp?|St|Ph|Dr|Th|Ch)$")
_VOLUME_NEXT = re.compile(r"\s*[,.;:]?\s*(?:\{\\bf\s*|\\textbf\s*\{|\()?\s*\d")
_WORDS_BEFORE_NUMBER = re.compile(r"[^\d{}\\]*?[^\W\d_]{2,}")
_LINK_BLOCK_RE = re.compile(r"\s*(?:URL\b|https?:|doi\b|Available)", re.I)  # a block that is no venue
_BLOCK_NOT_TITLE = re.compile(r"^\s*(?:https?:|doi\b|arxiv\b|\d|\W*$)", re.I)


# VTeX's structured markup (imsart, imsart-nameyear.bst and the IMS journals' final versions):
# ``\begin{barticle}[vtex] \bauthor{\bsnm{Solomon},~\bfnm{Fred}\binits{F.}} (\byear{1975}).
# \btitle{...}. \bjournal{...} \bvolume{3} \bpages{1--31}. \end{barticle}``: one command a field
# BMC's and Springer Nature's styles (bmc-mathphys.bst, sn-*.bst) write the same markup with their
# own names: \batitle (article), \bjtitle (journal), \bbtitle (book), \bctitle (chapter), \bfpage,
# and \oauthor in a free-text \begin{botherref}
_VTEX_GATE = re.compile(
    r"\\(?:bauthor|btitle|bjournal|bbooktitle|batitle|bjtitle|bbtitle|bctitle|oauthor)\s*\{"
    r"|\\begin\s*\{b(?:article|book|inbook|incollection|inproceedings|proceedings|techreport|manual|"
    r"mastersthesis|phdthesis|booklet|unpublished|misc|otherref|chapter)\}"
)
_VTEX_FIELD_RE = re.compile(
    r"\\(?:b(author|editor|title|journal|booktitle|series|volume|number|issue|pages|year|publisher|address|"
    r"location|doi|url|note|howpublished|school|institution|organization|edition|chapter|eprint|arxiv|id|"
    r"atitle|jtitle|btitle|ctitle|sertitle|fpage|lpage|institute)|o(author)|(doiurl|arxivurl))\s*\{"
)
_VTEX_NAMES = {
    "atitle": "title", "ctitle": "title", "jtitle": "journal", "sertitle": "series", "institute": "institution",
    "issue": "number", "arxiv": "eprint", "arxivurl": "eprint", "doiurl": "doi",
}  # fmt: skip
_VTEX_NOISE_RE = re.compile(
    r"\\OrigBibText(?![A-Za-z]).*?\\endOrigBibText(?![A-Za-z])"  # the text before VTeX's markup: prints nothing
    r"|\\(?:begin|end)\s*\{b[a-z]+\}(?:\s*\[[^\]]*\])?|\\endbibitem(?![A-Za-z])|\\bptok\s*\{[^{}]*\}"
    r"|\\b(?:mrnumber|isbn|issn|id|fnm)\s*\{[^{}]*\}",  # imsart prints the initials, never \bfnm
    re.S,
)
_VTEX_ID_DOI = re.compile(r"\bdoi\s*=\s*\{?([^,{}\s]+)")
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
    if "\\b" in body and _VTEX_GATE.search(body):
        body = _VTEX_NOISE_RE.sub("", body)
    if "\\Eprint" in body:
        body = _EPRINT_CMD_RE.sub("", body)
    if "\\natexlab" in body:
        body = _NATEXLAB_RE.sub(r"\1", body)
    return body


def _entry_from_item(body: str, idx: int, label_year: str = "") -> BibEntry:
    """Title, authors, venue, year and ids from one bibitem's LaTeX (best effort):
    ``\\bibinfo{field}{value}`` markup when the style writes it, else the layout."""
    body = body.strip()
    markup = _VTEX_GATE.search(body)
    if "\\bibinfo" in body or "\\bibfield" in body or "\\showarticletitle" in body or markup:
        entry = _entry_from_fields(body, idx, label_year)
        if not (markup and not entry.title and re.search(r"\\begin\s*\{botherref\}", body)):
            return entry
        # BMC's free-text reference: the names in \oauthor, the rest read by its layout
        free = _entry_from_item(_VTEX_NOISE_RE.sub("", body).replace("\\oauthor", ""), idx, label_year)
        free.authors = entry.authors or free.authors
        return free
    body = _clean_bbl(body)
    raw = plain_field(_NEWBLOCK_RE.sub(" ", body))
    parts = _by_blocks(body) if "\\newblock" in body else None
    if parts is None:
        parts = _by_layout(_URL_RE.sub("", _HREF_RE.sub("", _NEWBLOCK_RE.sub(" ", body))))
    authors_latex, title, venue = parts
    ym = re.search(r"\d{4}", label_year or "")
    year = int(ym.group(0)) if ym else year_in(plain_field(_URL_RE.sub("", _HREF_RE.sub("", body))))
    return BibEntry(
        ref_id=f"BIBREF{idx}",
        title=clean_title(title),
        authors=_split_authors(plain_field(authors_latex)),
        year=year,
        venue=venue[:300],
        volume=volume_of(raw) if not title and venue else "",
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
    # PLOS: "Eddy SR, Durbin R (1994) Title. \newblock Journal 22: 2079.": the title in the names' block
    if _PAREN_YEAR.search(blocks[0]) and not _first_italic(blocks[0]):
        head = _after_author_list(plain_field(blocks[0]), "")
        if head is not None and head[1] and _is_title(head[1]) and not _IN_VENUE.match(blocks[1]):
            venue = re.split(r",?\s*(?:\d|\()", plain_field(blocks[1]), maxsplit=1)[0].strip(" .,")
            return head[0], head[1], venue if not _LINK_BLOCK_RE.match(plain_field(blocks[1])) else head[2]
    it = _first_italic(blocks[0])
    if it and it[1] > 0:
        title = plain_field(it[0])
        if _is_title(title):
            venue = re.split(r",?\s*(?:19|20)\d\d", plain_field(blocks[1]), maxsplit=1)[0].strip(" .,")
            return blocks[0][: it[1]], title.strip(" .,"), venue
    for k in range(1, len(blocks)):
        title = plain_field(blocks[k])
        if not _is_title(title) or _IN_VENUE.match(blocks[k]) or _is_journal_block(blocks[k]):
            continue
        venue = ""
        if k + 1 < len(blocks) and not _LINK_BLOCK_RE.match(plain_field(blocks[k + 1])):
            it = _first_italic(blocks[k + 1])
            venue = re.sub(r"^In\s+", "", plain_field(it[0] if it else blocks[k + 1]).strip(" .,"))
        return " ".join(blocks[:k]), title.strip(" .,"), venue
    return None


# a block or piece that names where the work appeared, not what it is called: "In {\em Proc. ...}",
# "In Proceedings of ...", "In: 2019 IEEE ..." (a title may open with "In": "In defense of ...")
_IN_VENUE = re.compile(
    r"\s*[Ii]n:?\s+(?:\{?\\(?:em|emph|textit|it|sl)(?![A-Za-z])|Proc\b|Proceedings\b|Advances\b|Workshops?\b|"
    r"Conference\b|Symposium\b|International\b|Annual\b|the\s+(?:\d|Proc|[Ff]irst|[Ss]econd|[Tt]hird)|\d{4}\b)"
)


_IN_BEFORE = re.compile(r"(?:^|(?<=[\s,.]))[Ii]n:?\s*$")


def _is_journal_block(block: str) -> bool:
    """A ``\\newblock`` that is a journal and its volume: an italic, then a number ("{\\em J.
    Fluid Mech.}, 12(3):1--10, 2019"), what natbib prints for an article without a title."""
    it = _first_italic(block)
    return bool(it and not block[: it[1]].strip() and _VOLUME_NEXT.match(block, it[2]))


def _by_layout(flat: str) -> tuple[str, str, str]:
    """(authors LaTeX, title, venue) of a bibitem from its layout (links removed): a quoted
    title, an italic title (three words, or two with a venue name after them: "{\\em Viscous
    bouncing}, Soft Matter {\\bf 16}"; an italic followed by a volume number is the venue),
    else the sentence after the authors (:func:`_by_sentences`)."""
    q = _QUOTED_RE.search(flat)
    if q:
        rest = flat[q.end() :]
        it = _first_italic(rest)
        venue = plain_field(it[0] if it else re.split(r"\{\\bf|\\textbf|\(|\d", rest, maxsplit=1)[0])
        return flat[: q.start()], plain_field(q.group(1) or q.group(2)).strip(" .,"), venue.strip(" .,")
    it = _first_italic(flat)
    if (
        it and it[1] > 0 and _IN_BEFORE.search(flat, 0, it[1])
    ):  # "L. Prandtl, in {\em Verhandlungen ...}": a venue
        italic = plain_field(it[0]).strip(" .,")
        head = _IN_BEFORE.sub("", flat[: it[1]])
        before = _after_author_list(plain_field(head), italic)
        return (before[0], before[1], italic) if before is not None else (head, "", italic)
    if it and it[1] > 0 and not _VOLUME_NEXT.match(flat, it[2]):
        title = plain_field(it[0])
        n_words = len(title.split())
        if n_words >= 3 or (n_words == 2 and _WORDS_BEFORE_NUMBER.match(flat, it[2])):
            before = _after_author_list(plain_field(flat[: it[1]]), title.strip(" .,"))
            if before is not None and before[1] and _is_title(before[1]):
                return before  # "Brown, T., et al. (2020). Language models .... \textit{Advances in ...}": the venue
            venue = plain_field(re.split(r"\{\\bf|\\textbf|\(|\d", flat[it[2] :], maxsplit=1)[0]).strip(" .,")
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
        venue = plain_field(italic[0]).strip(" .,")
        head = latex[: italic[1]]
    by_names = _after_author_list(plain_field(head), venue)
    if by_names is not None:
        return by_names
    ym = _YEAR_RE.search(head)
    parts = _sentences(plain_field(head))
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
            venue = plain_field(re.split(r"\{\\bf|\\textbf|\d", rest, maxsplit=1)[0]).strip(" .,")
        return authors_latex, "", venue
    return re.split(r"\{\\bf|\\textbf|\d", head, maxsplit=1)[0], "", venue


# the year after the names; jss.bst prints "(????)" for an entry without one
_YEAR_AFTER_NAMES = re.compile(r"[\s,.:;]*\(?(?:(?:1[89]|20)\d\d|\?{4})[a-z]?\)?(?=[\s,.:;]|$)[\s,.:;]*")
# elsarticle-num and other comma styles: "Names, Title (with commas), Journal 4 (9) (2020) 1929-1948."
_ELSARTICLE_TAIL = re.compile(
    r"(?P<title>[^()]{8,400}?),\s+(?P<venue>[^,()\d]{2,120}?)\s+\d+\s*(?:\(\s*[\d\-]+\s*\)\s*)?\((?:1[89]|20)\d\d\)"
)
_PAREN_YEAR = re.compile(r"\((?:1[89]|20)\d\d[a-z]?\)\s*\S")
_PIECE_END = re.compile(r"[,;]|\s\d|\s?\((?=arXiv|\d|[Ii]n\b|[Ss]ubmitted)")
_YEAR_NEXT = re.compile(r"(?:1[89]|20)\d\d[a-z]?(?:[,.;)\s]|$)")
# a piece that names a journal or a series, not a work: what astronomy styles print after the year
_VENUE_WORDS = re.compile(
    r"\b(?:Journal|Review|Reviews|Letters|Proceedings|Transactions|Annals|Bulletin|Reports|Magazine|"
    r"Communications|Notices|Society|Supplement|Series|arXiv|e-prints|preprint|in prep|submitted)\b|\.\s",
    re.I,
)


def _after_author_list(plain: str, venue: str) -> tuple[str, str, str] | None:
    """(authors, title, venue) of a reference that opens with a list of names written with
    initials ("Smith J., Jones K.", "J. Smith, K. Jones", "Smith, J., Jones, K.:"), then an
    optional year, then the title and the venue; a reference whose first piece is followed by
    its volume ("Kasen D., ..., 2017, Nature, 551, 80": MNRAS and AAS print no titles) has a
    venue and no title. None when the reference does not open with such a list."""
    m, full = _AUTHOR_LIST_RE.match(plain), _FULL_LIST_RE.match(plain)
    if (
        full is not None
        and (m is None or full.end() > m.end())
        and not _NOTHING_AFTER.match(plain, full.end())
    ):
        m = full  # "Gordon D. Plotkin and John Power. Semantics ...", not "Global Names Index. http://..."
    if m is None:
        return None
    authors, rest = plain[: m.end()], plain[m.end() :]
    if _NAME_RE.match(rest.lstrip(" ,;&.")):  # another name follows ("Gott J. Richard I, ..."): no clean list
        return None
    comma_style = rest.lstrip()[:1] == ","
    year = _YEAR_AFTER_NAMES.match(rest)
    # "Kasen D., 2017, Nature, 551, 80" (MNRAS, AAS): the year, a comma, the venue and no title;
    # "Smith, J. (2019). Title." and "Radford, A.; ...; and Sutskever, I. 2018. Title." (APA, AAAI): a title
    no_title_style = comma_style or bool(year and year.group().rstrip()[-1:] == ",")
    rest = rest[year.end() :] if year else rest.lstrip(" ,.:;")
    if not rest:
        return authors, "", venue
    quoted = _PLAIN_QUOTE_RE.match(rest)
    if quoted:  # “Title,” venue
        tail = rest[quoted.end() :].lstrip(" ,.;:")
        tail = re.sub(r"^[Ii]n:?\s+", "", tail)
        return (
            authors,
            quoted["title"].strip(" ,."),
            venue or re.split(r",|\s\d|\(", tail, maxsplit=1)[0].strip(" ."),
        )
    in_venue = _IN_VENUE.match(rest) or re.match(r"in:?\s+[A-Z\d]", rest)  # "L. Prandtl, in Verhandlungen"
    proceedings = _IN_SERIES_RE.match(rest) if not venue and (year or in_venue) else None
    if proceedings:  # AAS: "2014, in ASP Conference Series, Vol. 485, ...": a venue, no title
        return authors, "", proceedings.group(1).strip(" .,")
    published = _PUBLISHER_RE.match(rest) if not venue else None
    if published:  # "Deep Learning (MIT Press, 2016).": the title, then its publisher and year
        return authors, published["title"], published["publisher"].split(",")[0].strip()
    tail_form = _ELSARTICLE_TAIL.match(rest) if comma_style and not venue else None
    if tail_form and _is_title(tail_form["title"]):  # the venue is the piece before "Vol (Issue) (Year)"
        return authors, tail_form["title"].strip(" .,"), tail_form["venue"].strip(" .,")
    comma = rest.find(", ")
    volume_next = (
        comma > 0 and rest[comma + 2 : comma + 3].isdigit() and not _YEAR_NEXT.match(rest, comma + 2)
    )
    if no_title_style and volume_next and not venue:
        return authors, "", rest[:comma].strip(" .,")  # "2017, Phys. Rev. Lett., 119, 1": no title
    stops = [len(rest)] + [
        s.end() - len(s.group()) for s in _SENTENCE_END.finditer(rest) if _sentence_end(rest, s)
    ][:1]
    if (comma_style or year) and comma >= 0 and (no_title_style or comma < min(stops)):
        stops.append(comma)
    end = min(stops)
    first, tail = rest[:end].strip(" .,"), rest[end:].lstrip(" .,;:")
    if not first:
        return authors, "", venue
    if (not tail or tail[:1].isdigit()) and not venue:
        head = re.split(_PIECE_END, first, maxsplit=1)[0].strip(" .,")
        head = re.sub(r"\s*\([^()]*\)$", "", head)  # "... P-splines (Cambridge University Press)"
        # "2017, Nature, 551, 80" is a venue; "2014, Deep Inside Convolutional Networks: ... (arXiv:...)",
        # "Szabo, A. Modern Quantum Chemistry, 1st ed." (ACS) a title
        short = len(head.split()) < (
            4 if no_title_style else 2 if year else 3
        )  # "(2003) Inferring Phylogenies."
        if (
            short
            or not _is_title(head)
            or tail[:1].isdigit()
            or (no_title_style and _VENUE_WORDS.search(head))
        ):
            return authors, "", head
        return authors, head, first[len(head) :].strip(" .,;")
    if not _is_title(first) and not venue:
        return authors, "", first
    if not venue:
        venue = re.split(r"[,(]|\d", re.sub(r"^[Ii]n:?\s+", "", tail), maxsplit=1)[0].strip(" .,")
    return authors, _SERIES_TAIL.sub("", re.sub(r"\s+In$", "", first)), venue


_SENTENCE_END = re.compile(r"\.\s+(?=[^\s,;:)\]])")
_NOTHING_AFTER = re.compile(r"[.\s]*(?:$|https?:|www\.|doi\b|[Aa]ccessed\b|[Aa]vailable\b|URL\b)")
_PLAIN_QUOTE_RE = re.compile(r"\s*(?:\u201c|\")(?P<title>[^\u201c\u201d\"]{4,400}?)[,.]?\s*(?:\u201d|\")")
# what a book's title carries after it: "Grid homology ..., volume 208 of Mathematical Surveys", ", vol. 3"
_SERIES_TAIL = re.compile(r",\s*(?:vol(?:ume)?\.?\s*\d+\b.*|\d+(?:st|nd|rd|th)\s+ed(?:ition|\.)?.*)$", re.I)
_IN_SERIES_RE = re.compile(r"[Ii]n\s+(.+?)(?=,\s*(?:[Vv]ol\b|eds?\.|\d)|\s*\(|$)")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_PUBLISHER_RE = re.compile(
    rf"(?P<title>[^()]{{4,300}}?)\s*\((?!\s*{_MONTH}\s*,?\s*(?:1[89]|20)\d\d)"  # "(Nov. 2021)" is a date
    r"(?P<publisher>[^()\d]{2,200}?),?\s*(?:1[89]|20)\d\d[a-z]?\)\s*(?:[.,;]|\s|$)"
)


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
    if not fields and _VTEX_GATE.search(body):
        _vtex_fields(body, fields)

    def one(*names: str) -> str:
        for name in names:
            for value in fields.get(name, ()):
                text = plain_field(_clean_bbl(value)).strip(" .,;")
                if text:
                    return text
        return ""

    people = fields.get("author") or fields.get("person") or []
    authors = [a for a in (_bbl_person(v) for v in people) if a is not None]
    if not authors and fields.get("@author"):
        authors = _split_authors(plain_field(_clean_bbl(" and ".join(fields["@author"]))))
    clean = _clean_bbl(body)
    raw = plain_field(_NEWBLOCK_RE.sub(" ", clean))
    ym = re.search(r"\d{4}", label_year or "") or re.search(r"\d{4}", one("year"))
    title = clean_title(
        one("articletitle", "title") or (one("booktitle") if not fields.get("journal") else "")
    )
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
        year=int(ym.group(0)) if ym else year_in(raw),
        venue=venue[:300],
        volume=one("volume"),
        issue=one("number", "issue"),
        pages=re.sub(r"\s*[-\u2013\u2014]+\s*", "--", one("pages")),
        other_ids=ids,
        num=idx,
        raw_text=raw,
    )


def _vtex_fields(body: str, fields: dict[str, list[str]]) -> None:
    """VTeX's ``\\bfield{value}`` commands into ``fields`` (``\\barxiv`` as eprint, the DOI of
    ``\\bid{doi=...}``), what ``\\OrigBibText`` holds left out."""
    body = re.sub(r"\\OrigBibText(?![A-Za-z]).*?\\endOrigBibText(?![A-Za-z])", "", body, flags=re.S)
    book = []
    for m in _VTEX_FIELD_RE.finditer(body):
        end = match_brace(body, m.end() - 1)
        if end < 0:
            continue
        name, value = m.group(1) or m.group(2) or m.group(3), body[m.end() : end - 1]
        if name == "id":
            doi = _VTEX_ID_DOI.search(value)
            if doi:
                fields.setdefault("doi", []).append(doi.group(1))
        elif name == "btitle":  # BMC's book title: the title, or the book a chapter is in
            book.append(value)
        else:
            fields.setdefault(_VTEX_NAMES.get(name, name), []).append(value)
    if book:
        fields.setdefault("booktitle" if "title" in fields else "title", []).extend(book)
    if "fpage" in fields and "pages" not in fields:
        fields["pages"] = ["--".join(fields["fpage"][:1] + fields.get("lpage", [])[:1])]


def _vtex_group(latex: str, name: str) -> str:
    """The text of the first ``\\<name>{...}`` in ``latex``, or ""."""
    m = re.search(r"\\" + name + r"\s*\{", latex)
    end = match_brace(latex, m.end() - 1) if m else -1
    return plain_field(latex[m.end() : end - 1]).strip() if m and end > 0 else ""


def _bbl_person(latex: str) -> Author | None:
    """One ``\\bibinfo{author}`` value: ``\\bibfnamefont{J.~S.}\\ \\bibnamefont{Bell}``,
    ``Sendner, C.`` or ``Mart{\\'\\i}n Abadi``; None for "et al." and the like."""
    if "\\bsnm" in latex:  # VTeX: \bparticle{van}~\bsnm{Last},~\bfnm{First}\binits{F.}\bsuffix{Jr}
        last = " ".join(p for p in (_vtex_group(latex, "bparticle"), _vtex_group(latex, "bsnm")) if p)
        given = re.sub(
            r"\.(?=[^\s.\-])", ". ", _vtex_group(latex, "bfnm") or _vtex_group(latex, "binits")
        ).split()
        if not last or last.lower() == "others":
            return None
        return Author(
            first=given[0] if given else "", middle=given[1:], last=last, suffix=_vtex_group(latex, "bsuffix")
        )
    m = re.search(r"\\bibnamefont\s*\{", latex)
    if m:
        end = match_brace(latex, m.end() - 1)
        last = plain_field(latex[m.end() : end - 1]) if end > 0 else ""
        fm = re.search(r"\\bibfnamefont\s*\{", latex)
        fend = match_brace(latex, fm.end() - 1) if fm else -1
        first = plain_field(latex[fm.end() : fend - 1]).split() if fm and fend > 0 else []
        return Author(first=first[0] if first else "", middle=first[1:], last=last) if last else None
    name = plain_field(_clean_bbl(latex)).strip(" ,;")
    if not name.strip(".") or _ET_AL.fullmatch(name) or name.lower() in ("others", "and others"):
        return None
    if "," in name:
        last, _, first = name.partition(",")
        tokens = first.split()
        return Author(first=tokens[0] if tokens else "", middle=tokens[1:], last=last.strip())
    tokens = name.split()
    return Author(first=tokens[0] if len(tokens) > 1 else "", middle=tokens[1:-1], last=tokens[-1])


def _label(label: str) -> tuple[str, str, str, str]:
    """(text, natbib short author list, year, full author list) of a bibitem's optional label:
    ``Smith et~al.(2019)Smith, Jones, and Lee``, ``{\\citenamefont{Bell}(1964)}``,
    ``\\protect\\citeauthoryear{long}{short}{year}`` (or ``{short}{year}``),
    ``\\protect\\astroncite{short}{year}``, ``\\protect\\citename{short }year``."""
    m = _LABEL_CMD_RE.search(label)
    if m:
        args, i = read_groups(label, m.end(), 3)
        tail = plain_field(label[i:]).strip()
        if m.group(1) == "citename" and args:
            short, year = plain_field(args[0]).strip(" ,"), tail
        elif len(args) >= 2:
            short, year = plain_field(args[-2]).strip(" ,"), plain_field(args[-1]).strip()
        else:
            short, year = "", ""
        if short and re.search(r"\d{4}|n\.d\.", year):
            long = (
                plain_field(args[0]).strip(" ,") if m.group(1) == "citeauthoryear" and len(args) == 3 else ""
            )
            return f"{short} ({year})", short, year, long
    text = plain_field(label)
    nm = _NATBIB_LABEL.match(text)
    if nm and (re.search(r"\d{4}|n\.d\.", nm["year"]) or (not nm["year"].strip() and nm["short"].strip())):
        # natbib's "short(year)long", the year empty for an entry without one ("{Lumerical Solutions,
        # Inc.}()"): a numeric paper prints its number, an author-year one the names
        return text, nm["short"].strip(' "'), nm["year"].strip(), nm["long"].strip()
    return text, "", "", ""


_HARVARDITEM_RE = re.compile(r"\\harvarditem(?![A-Za-z])")


def _harvard_as_bibitems(text: str) -> str:
    """The harvard package's ``\\harvarditem[short]{long}{year}{key}`` (aea.bst, agsm.bst, dcu.bst)
    as natbib reads it: ``\\bibitem[short(year)long]{key}``; ``\\harvardand`` an ampersand."""
    out, pos = [], 0
    for m in _HARVARDITEM_RE.finditer(text):
        if m.start() < pos:
            continue
        try:
            short, i = read_optional(text, m.end())
            args, i = read_groups(text, i, 3)
        except LatexError:
            continue
        if len(args) < 3:
            continue
        long, year, key = args
        label = f"{short}({year}){long}" if short else f"{long}({year})"
        out.append(text[pos : m.start()] + "\\bibitem[{" + label + "}]{" + key + "}")
        pos = i
    out.append(text[pos:])
    return re.sub(r"\\harvardand(?![A-Za-z])\\?\s*", "\\& ", "".join(out))


def _bibitems(text: str) -> list[_Item]:
    if "\\harvarditem" in text:
        text = _harvard_as_bibitems(text)
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
        label_text, short, year, long = _label(label) if label else (None, "", "", "")
        entry = _entry_from_item(body, len(items), year)
        if not entry.authors and items and _SAME_AUTHORS_RE.match(body):
            entry.authors = [a.model_copy() for a in items[-1].entry.authors]  # "---." as before
        items.append(_Item(key.strip(), label_text, entry, short, year, long_label=long))
    return items


def _references_env(text: str) -> list[_Item]:
    """AAS/PASP ``references`` lists: keyless ``\\reference`` entries (keys ``_ref1``...)."""
    items = []
    for n, chunk in enumerate(re.split(r"\\(?:reference|refitem|item)(?![A-Za-z])", text)[1:]):
        if chunk.strip():
            items.append(_Item(f"_ref{n + 1}", None, _entry_from_item(chunk, len(items))))
    return items
