"""Language identification with pycld2, made safe for arbitrary paper text.

pycld2 raises ``cld2.error`` ("input contains invalid UTF-8") on some code points
that are perfectly valid in a Python ``str`` (measured over all of Unicode with
pycld2 0.42 here): C0 controls except TAB, LF, FF and CR; DEL and the C1
controls U+007F-U+009F; the noncharacters U+FDD0-U+FDEF and U+xFFFE/U+xFFFF of
every plane. Lone surrogates cannot even be encoded to UTF-8. PDF and LaTeX
extraction produce all of these, so :func:`clean_for_cld2` replaces them with a
space first (a space, not nothing, so the words on either side stay apart;
a lone surrogate becomes ``?``) and
:func:`detect` never raises: a failure comes back as language ``"un"`` with the
reason in :attr:`LangResult.error`.

Text is always passed as plain text (``isPlainText=True``): scientific text is
full of ``<`` and ``&`` that cld2's HTML mode would treat as tags and entities.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pycld2

__all__ = [
    "ENGLISH_MIN_PERCENT",
    "SHORT_TEXT_BYTES",
    "LangResult",
    "clean_for_cld2",
    "detect",
    "detect_lang",
    "detect_langs",
    "is_english_paper",
]

# The work is done on UTF-8 bytes, where it is cheap: one ``bytes.translate`` for the
# single-byte controls, and a regex only when a lead byte of a bad sequence occurs.
_C0_DEL = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F])
_BYTE_TABLE = bytes.maketrans(_C0_DEL, b" " * len(_C0_DEL))
_MULTIBYTE_BAD = re.compile(
    rb"\xc2[\x80-\x9f]"  # C1 controls U+0080-U+009F
    rb"|\xef\xb7[\x90-\xaf]"  # noncharacters U+FDD0-U+FDEF
    rb"|\xef\xbf[\xbe\xbf]"  # U+FFFE, U+FFFF
    rb"|[\xf0-\xf4][\x8f\x9f\xaf\xbf]\xbf[\xbe\xbf]"  # U+1FFFE ... U+10FFFF
)

ENGLISH_MIN_PERCENT = 90
"""SPEC §4 (choice): English must be cld2's top language with at least this percent of the text."""

SHORT_TEXT_BYTES = 200
"""Below this many scored bytes (cld2's ``textBytesFound``) a text is "short": cld2's
percentages are coarse there (a 60-byte title can come back 85 % English and 15 %
unknown), so a *reliable* English top language is enough (SPEC §4 choice)."""


class LangResult(NamedTuple):
    """cld2's verdict on one text: top language code, its percent, reliability."""

    lang: str  # ISO code as cld2 reports it ("en", "fr", "un" = unknown)
    percent: int  # share of the text's bytes cld2 gave to ``lang`` (0-100)
    reliable: bool  # cld2's own isReliable flag
    text_bytes: int  # cld2's textBytesFound: the bytes it scored (letters, plus a little)
    second: str = "un"  # runner-up language, for reports
    error: str | None = None  # why detection fell back to "un", if it did


def _cld2_bytes(text: str) -> bytes:
    """UTF-8 bytes of ``text`` that pycld2 accepts (the hot path; see clean_for_cld2)."""
    if text.isascii():
        return text.encode("ascii").translate(_BYTE_TABLE)
    data = text.encode("utf-8", "replace").translate(_BYTE_TABLE)
    if b"\xc2" in data or b"\xef" in data or b"\xbf\xbe" in data or b"\xbf\xbf" in data:
        data = _MULTIBYTE_BAD.sub(b" ", data)
    return data


def clean_for_cld2(text: str) -> str:
    """Replace every code point pycld2 rejects (see module docstring) by a space.

    Lone surrogates become ``?`` (what UTF-8 encoding with ``errors="replace"`` gives).
    """
    return _cld2_bytes(text).decode("utf-8")


def _cld2(text: str) -> tuple:
    """pycld2 on ``text`` as if cleaned first: clean text is passed as is (cleaning
    it would change nothing), and only a text pycld2 rejects is cleaned and retried.
    That keeps the cost of cleaning off the common path."""
    try:
        return pycld2.detect(text, isPlainText=True)
    except (pycld2.error, UnicodeError):
        return pycld2.detect(_cld2_bytes(text), isPlainText=True)


def detect(text: str, max_chars: int | None = None) -> LangResult:
    """Detect the language of ``text`` (its first ``max_chars`` characters if given).

    Never raises: empty text, text cld2 cannot decide (too short, no letters)
    and pycld2 errors all give ``lang="un"``; ``error`` says which.
    """
    if not isinstance(text, str):
        return LangResult("un", 0, False, 0, error=f"not a string: {type(text).__name__}")
    if max_chars is not None:
        text = text[:max_chars]
    if not text.strip():
        return LangResult("un", 0, False, 0, error="empty text")
    try:
        reliable, text_bytes, details = _cld2(text)
    except Exception as exc:  # pycld2 raises its own cld2.error; be total anyway
        return LangResult("un", 0, False, 0, error=f"cld2 failed: {exc}")
    (_, lang, percent, _), (_, second, _, _) = details[0], details[1]
    error = "undetermined by cld2" if lang == "un" else None
    return LangResult(lang, int(percent), bool(reliable), int(text_bytes), second, error)


def detect_lang(text: str, max_chars: int | None = None) -> str:
    """Just the top language code of :func:`detect` (``"un"`` on any failure); the hot path."""
    if max_chars is not None:
        text = text[:max_chars]
    try:
        return _cld2(text)[2][0][1]
    except Exception:
        return "un"


def detect_langs(texts: list[str], max_chars: int | None = None) -> list[str]:
    """:func:`detect_lang` of every text, in order (the same answers).

    Why a list version: peS2o asks cld2 about every paragraph of every paper, and
    two Python calls per paragraph around pycld2 cost about a tenth of the cld2
    work itself. A text pycld2 rejects goes the :func:`detect_lang` way.
    """
    cld2 = pycld2.detect
    out: list[str] = []
    append = out.append
    for text in texts:
        if max_chars is not None:
            text = text[:max_chars]
        try:
            append(cld2(text, isPlainText=True)[2][0][1])
        except Exception:
            append(detect_lang(text))
    return out


def is_english_paper(text: str) -> tuple[bool, str | None]:
    """The paper filter of SPEC §4: is this paper text English?

    English means cld2's top language is ``en`` with percent ≥ ``ENGLISH_MIN_PERCENT``,
    or, for short texts (fewer than ``SHORT_TEXT_BYTES`` letter bytes), a reliable
    ``en`` top language. Returns ``(True, None)`` or ``(False, reason)`` with reason
    ``"not_english"`` (another language or too little English) or ``"language_unknown"``
    (nothing cld2 could score, or cld2 failed).
    """
    res = detect(text)
    if res.lang == "un":
        return False, "language_unknown"
    if res.lang != "en":
        return False, "not_english"
    if res.percent >= ENGLISH_MIN_PERCENT:
        return True, None
    if res.text_bytes < SHORT_TEXT_BYTES and res.reliable:
        return True, None
    return False, "not_english"
