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
_INITIALS = rf"[{_UP}][a-z]?\.(?:[\s\-]*[{_UP}][a-z]?\.)*"
_SURNAME = rf"[{_UP}][\w'’\-]*[a-zß-ÿā-ž]"
_PARTICLES = r"(?:(?:van|von|der|den|de|del|della|di|da|dos|du|la|le|ter|ten|zu|St\.)\s+)*"
# IOP and Vancouver styles write the initials without periods: "Abbott B P", "Wang X-L", "Smith JK"
_BARE_INITIALS = rf"[{_UP}](?:-?[{_UP}]){{0,2}}(?:\s+[{_UP}](?:-?[{_UP}])?)*(?![\w’'])(?!\.\w)"
_NAME_RE = re.compile(
    rf"(?P<blast>{_PARTICLES}{_SURNAME}(?:\s+{_SURNAME})?),?\s+(?P<bfirst>{_INITIALS})"
    rf"|(?P<afirst>{_INITIALS})\s*(?P<alast>{_PARTICLES}{_SURNAME})"
    rf"|(?P<clast>{_PARTICLES}{_SURNAME}(?:\s+{_SURNAME})?)\s+(?P<cfirst>{_BARE_INITIALS})"
)
_NAME_SEP = r"(?:\s*,\s*(?:and\s+|&\s*)?|\s+and\s+|\s*&\s*|\s*;\s*)"
_NAME_ONE = re.sub(r"\?P<\w+>", "?:", _NAME_RE.pattern)
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
        k = len(tokens)  # "Abbott BP", "Nielsen M A" (ARA&A, Vancouver, IOP): initials after the surname
        while k > 1 and _VANCOUVER_INITIALS.fullmatch(tokens[k - 1].replace("-", "")):
            k -= 1
        if k < len(tokens) and not tokens[0].isupper():
            initials = tokens[k:]
            out.append(Author(first=initials[0], middle=initials[1:], last=" ".join(tokens[:k])))
            continue
        out.append(Author(first=tokens[0] if len(tokens) > 1 else "", middle=tokens[1:-1], last=tokens[-1]))
    return out


def _bib_short(authors: list[Author]) -> str:
    if not authors:
        return ""
    if len(authors) == 1:
        return authors[0].last
    if len(authors) == 2:
        return f"{authors[0].last} and {authors[1].last}"
    return f"{authors[0].last} et al."
