"""Author lists as reference styles print them: "J. K. Smith" (initials first), "Smith J. K.",
"Smith, J. K." and "Smith JK" (surname first: MNRAS, AAS, IOP, Vancouver), particles ("van der
Walt") kept with the surname; and natbib's short list ("Smith et al.")."""

from __future__ import annotations

import re

from corpus.parse.document import Author
from corpus.parse.latex.braces import WS

_ET_AL = re.compile(r"\bet\.?\s*al\.?", re.I)
_VANCOUVER_INITIALS = re.compile(r"[A-ZÀ-ÖØ-ÞĀ-Ž]{1,3}")

# Author lists as reference styles print them: "J. K. Smith" (initials first), "Smith J. K." and
# "Smith, J. K." (surname first: MNRAS, AAS, Springer), particles ("van der Walt") kept with the
# surname. A surname is a capitalised word ending in a lower-case letter ("Ng", "O'Leary",
# "Ramirez-Ruiz"): never an initial, a number or a venue abbreviation ("Phys.", "D", "49").
_UP = "A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮİĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽ"
# an initial: one capital, or the two letters some names keep ("Th.", "Ch.", "Yu.", "St."), never a
# short surname ("T. Tao and V. Vu. Random matrices")
_INITIAL = rf"(?:[{_UP}]|[CKPSTZ]h|Yu|Ya|St|Gy|Sz|Ts)\."
_INITIALS = rf"{_INITIAL}(?:[\s\-]*{_INITIAL})*"
_SURNAME = rf"[{_UP}][\w'’\-]*[a-zß-ÿā-ž]"
_PARTICLES = r"(?:(?:[Vv]an|[Vv]on|[Dd]er|[Dd]en|de|del|della|di|da|dos|du|la|le|ter|ten|zu|St\.)\s+)*"
# IOP and Vancouver styles write the initials without periods: "Abbott B P", "Wang X-L", "Smith JK"
_BARE_INITIALS = rf"[{_UP}](?:-?[{_UP}]){{0,2}}(?:\s+[{_UP}](?:-?[{_UP}])?)*(?![\w’'])(?!\.\w)"
_SUFFIX = r"(?:Jr|Sr)\.?|I{2,3}|IV"  # "Adams, W. W., III", "T. F. Miller III", "Foley IV, J. J."
# a second surname after initials ("V. Codina Gironès", "N. Mac Dowell") only where the name ends
_SECOND_SURNAME = rf"\s+{_PARTICLES}{_SURNAME}(?=\s*[,;.:&(“\"`]|\s+and\s|\s*$)"
# a name never ends where a venue's abbreviations run on to its volume ("V. I. Ozhogin, J. Exp. Theor. Phys. 38")
_NOT_A_VENUE = r"(?!\.\s*(?:[A-Z][a-z]*\.\s*)+\d)"
_NAME_RE = re.compile(
    rf"(?P<blast>{_PARTICLES}{_SURNAME}(?:\s+{_PARTICLES}{_SURNAME})?)(?:\s+(?P<bsuffix0>{_SUFFIX}))?,?\s+"
    rf"(?P<bfirst>{_INITIALS})(?:,?\s+(?P<bsuffix>{_SUFFIX})(?![\w’']))?"
    rf"|(?P<afirst>{_INITIALS})\s*(?P<alast>{_PARTICLES}{_SURNAME}(?:{_SECOND_SURNAME})?){_NOT_A_VENUE}"
    rf"(?:,?\s+(?P<asuffix>{_SUFFIX})(?![\w’']))?"
    rf"|(?P<clast>{_PARTICLES}{_SURNAME}(?:\s+{_SURNAME})?)\s+(?P<cfirst>{_BARE_INITIALS})"
)
_NAME_SEP = r"(?:\s*,\s*(?:and\s+|&\s*)?|\s+and\s+|\s*&\s*|\s*;\s*(?:and\s+|&\s*)?)"
_NAME_ONE = re.sub(r"\?P<\w+>", "?:", _NAME_RE.pattern)
_AUTHOR_LIST_RE = re.compile(
    rf"\s*(?:{_NAME_ONE})(?:{_NAME_SEP}(?:{_NAME_ONE}))*(?:,?\s*(?:et\.?\s*al\.?|and\s+others))?"
    r"(?=\s*(?:[,.:;(“\"`]|\d|$)|\s+[^\W\d_])"
)
# Names written in full ("Gordon D. Plotkin and John Power.", "Ting Chen, Simon Kornblith, and
# Geoffrey Hinton. 2020."): read only as a whole list that a sentence ends, so a title in capitals
# after a comma is never a name
_GIVEN = rf"[{_UP}][a-zà-ÿā-ž]+(?:-[{_UP}]?[a-zà-ÿā-ž]+)?"
_FULL_NAME_RE = re.compile(
    rf"(?P<first>{_GIVEN}(?:\s+(?:{_GIVEN}|[{_UP}]\.(?:-?[{_UP}]\.)?)){{0,3}})\s+(?P<last>{_PARTICLES}{_SURNAME})"
)
_FULL_ONE = re.sub(r"\?P<\w+>", "?:", _FULL_NAME_RE.pattern)
_FULL_LIST_RE = re.compile(
    rf"\s*(?:{_FULL_ONE})(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?:{_FULL_ONE}))*(?:,?\s*(?:et\.?\s*al\.?|and\s+others))?"
    r"(?=\.\s)"
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
    return list_names(text[: m.end()])


def _whole(rx: re.Pattern, text: str) -> bool:
    m = rx.match(text + ". ")
    return m is not None and not text[m.end() :].strip(" .,;:")


def list_names(text: str) -> list[Author]:
    """The names of an author list that :data:`_AUTHOR_LIST_RE` or :data:`_FULL_LIST_RE` matched."""
    out = []
    if _whole(_FULL_LIST_RE, text) and not _whole(_AUTHOR_LIST_RE, text):
        for nm in _FULL_NAME_RE.finditer(text):
            given = nm["first"].split()
            out.append(Author(first=given[0], middle=given[1:], last=WS.sub(" ", nm["last"]).strip()))
        return out
    for nm in _NAME_RE.finditer(text):
        if nm["cfirst"]:
            first = nm["cfirst"].split()
        else:
            first = (
                (nm["bfirst"] or nm["afirst"])
                .replace(" ", "")
                .replace(".", ". ")
                .replace(". -", ".-")
                .split()
            )
        last = WS.sub(" ", nm["blast"] or nm["alast"] or nm["clast"]).strip()
        suffix = nm["bsuffix0"] or nm["bsuffix"] or nm["asuffix"] or ""
        out.append(Author(first=first[0] if first else "", middle=first[1:], last=last, suffix=suffix))
    return out


def _split_authors(text: str) -> list[Author]:
    text = _ET_AL.sub("", text)
    # "Kurtz, T. G. (1985)", jss.bst's "(????)"
    text = re.sub(r"\(?\b(?:19|20)\d\d[a-z]?\b\)?\.?|\(\s*\)|\(\?{4}[a-z]?\)", "", text).strip(" ,;:&")
    if not text.strip("."):
        return []
    by_initials = _initials_names(text)
    if by_initials is not None:
        return by_initials
    text = text.strip(" .")
    if _whole(_FULL_LIST_RE, text):
        return list_names(text)
    parts = [
        p.strip(" .,") for p in re.split(r",?\s+and\s+|\s*&\s*|;\s*(?:and\s+)?|,\s*", text) if p.strip(" .,")
    ]
    names: list[str] = []
    suffixes: dict[int, str] = {}
    initials = re.compile(r"^(?:[A-Z][a-z]?\.?[\s-]*)+$")
    for part in parts:  # "Smith, J. K." -> one name; "Adams, W. W., III": a suffix of the name before
        if names and re.fullmatch(_SUFFIX, part + ("." if part in ("Jr", "Sr") else "")):
            suffixes[len(names) - 1] = part
        elif names and initials.match(part) and not initials.match(names[-1]) and " " not in names[-1]:
            names[-1] = f"{part} {names[-1]}"
        else:
            names.append(part)
    # Chicago (aea.bst): "Almond, Douglas, Hilary W Hoynes, and Diane Schanzenbach": the first name
    # inverted, the others not
    inverted_first = (
        len(names) >= 3 and " " not in names[0] and re.fullmatch(r"[A-Z][a-z]+(?: [A-Z]\.?)?", names[1])
    )
    if inverted_first and all(" " in n for n in names[2:]):
        names[:2] = [f"{names[1]} {names[0]}"]
        suffixes = {k - 1: v for k, v in suffixes.items() if k}
    out = []
    for n, name in enumerate(names[:100]):
        tokens = name.split()
        if (
            _NOT_A_NAME.search(name)
            or sum(1 for t in tokens if _ABBREVIATION.fullmatch(t)) >= 2
            or any(t[:1].islower() and t not in _NAME_PARTICLES for t in tokens)
        ):
            break  # a number, a link, "Phys. Rev." or "learning of things": the names are over
        if not tokens or len(tokens) > 6 or not any(c.isupper() for c in name):
            continue
        k = len(tokens)  # "Abbott BP", "Nielsen M A" (ARA&A, Vancouver, IOP): initials after the surname
        while k > 1 and _VANCOUVER_INITIALS.fullmatch(tokens[k - 1].replace("-", "")):
            k -= 1
        if k < len(tokens) and not tokens[0].isupper():
            initials = tokens[k:]
            out.append(
                Author(
                    first=initials[0],
                    middle=initials[1:],
                    last=" ".join(tokens[:k]),
                    suffix=suffixes.get(n, ""),
                )
            )
            continue
        out.append(
            Author(
                first=tokens[0] if len(tokens) > 1 else "",
                middle=tokens[1:-1],
                last=tokens[-1],
                suffix=suffixes.get(n, ""),
            )
        )
    return out


def _bib_short(authors: list[Author]) -> str:
    if not authors:
        return ""
    if len(authors) == 1:
        return authors[0].last
    if len(authors) == 2:
        return f"{authors[0].last} and {authors[1].last}"
    return f"{authors[0].last} et al."
