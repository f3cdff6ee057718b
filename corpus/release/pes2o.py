"""peS2o v1/v2 (pes2o-dataset-card.md, SPEC §6): signals once, selections as cheap queries.

dolma's idea: every expensive measurement of a paper is taken once by
:func:`compute_signals` and kept (a :class:`Signals` row); the releases are then
queries over those rows (:func:`select_s2orc`, :func:`select_s2ag`) that never
look at the text again, each drop carrying the name of its rule.
:func:`make_document` (one release) and :func:`release` (all four) build the
peS2o documents; :func:`split_for` puts them in train or valid.

Choices, where the card leaves room (each one is the default; change it here,
not in callers):

* **Paragraphs** are the body paragraphs of the :class:`StructuredDoc` with text,
  NFC-normalised, the parsers' formula placeholders (Grobid's ``EQUATION``
  paragraphs, an inline ``FORMULA``: :data:`PLACEHOLDERS`) removed (no words: released
  text holds only the paper's words), unarXive placeholders (``{{formula:…}}``,
  ``{{cite:…}}`` …) removed (each still counts as one whitespace word) and whitespace runs
  collapsed, re-joined as the peS2o recipe does: within a section, a paragraph
  is appended (after a space) to the one before when that one does not end in
  ``.``, ``?`` or ``!`` or when it is a single token, since such breaks come from
  display formulas, figures and page ends (the recipe's third rule, about
  parentheses, is left out). Title and abstract are not paragraphs.
* **Language** (cld2 instead of the card's cld3, SPEC §6 choice): cld2 on the
  first 2000 characters of each paragraph as released (cleaned, whitespace
  collapsed, merged as above); the paper's language is the most
  common paragraph language, ``un`` (undetermined) included as one more value,
  as the peS2o recipe does; ties go to the language seen first.
* **Sections** are runs of consecutive paragraphs with the same ``section``
  string. A section is removed when its average log2 word probability is below
  −20; the released text keeps the others, each headed by its section title
  (the last ``::`` component) on its own line, as peS2o keeps Grobid headers.
* **Words for probabilities**: each whitespace token, lower-cased (’ read as ')
  and stripped of surrounding punctuation, is one word if wordfreq's list has it
  (so ``e.g.`` and ``don't`` are words); otherwise each run of letters in it is a
  word (``well-known`` is two, ``x_1`` one) and a token without letters (a
  number, ``=``) is none. peS2o split with blingfire and scored punctuation as
  unknown; here only letters count, so symbols neither help nor hurt.
* **Word probability**: a known word's log2 probability is log2 of its frequency
  in wordfreq's ``en`` "large" list (words with a letter; the card used the
  Google 1T web unigram list, which is not shipped). An unknown word gets
  peS2o's fictional count √V + 1 over the list's token total: log2((√V + 1) / T)
  with V = the table's vocabulary (319,881 words) and T = 588,124,220,187, the
  token total of the Google 1T unigram list the card and recipe used (wordfreq
  publishes frequencies, not counts, so its own T is unknown). That puts an
  unknown word at ≈ −29.95 bits, as in peS2o, so the −20 threshold keeps its
  meaning: a section must be about half unknown words to go. A text without any
  word scores as unknown (a leaked table of numbers goes). The average is over
  all words of the section (token-weighted).
* **Word counts and top word** split on whitespace, case kept (the recipe). The
  ≥ 500 words rule and the top-word rule look at all body paragraphs, the ≥ 5
  paragraphs rule at the paragraphs left after section removal (recipe order).
* **Year** must be ≥ 1970 ("published after 1969"); a missing year is a drop.
* **OCR** (v2, s2ag only): ``\\b([A-Za-z]\\s)([a-z]\\s)*[A-Za-z]\\b`` matches
  counted in the abstract; > 4 drops it when the abstract came from an
  OCR-prone source. Here that means a PDF extraction (``doc.source`` ``grobid``
  or ``s2orc``); LaTeX and arXiv-metadata abstracts are typed by authors.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from corpus.papers.langid import detect_lang, detect_langs
from corpus.parse.document import StructuredDoc

# The version of pes2o (corpus.versions): bump it whenever their rows change.
PES2O_VERSION = "corpus.release.pes2o/1"

# Why C (issue 18, benchmarks/token_count.py): a vectorised tally on pyarrow kernels
# (utf8_split_whitespace, dictionary_encode, numpy bincount; equal counts on every document)
# ran 3.9-5.3x slower than corpus._tally (real documents 744 against 2,951 docs/s per core,
# 36 against 144 MB/s; generated 8k-word ones 567 against 2,220 docs/s), and with it and
# Python's split/join for collapse/count_tokens the whole peS2o benchmark ran 1.69x slower
# (183 against 309 docs/s per core): over the 1.5x bound, so the C counter stays.
try:
    from corpus._tally import TokenTable, collapse, count_tokens
except ImportError as exc:  # a source checkout that was never installed
    raise ImportError(
        "corpus._tally (peS2o's C token counter, corpus/_tally.c) is not built: "
        "run `make venv` or `pip install -e .` (needs a C compiler)"
    ) from exc

__all__ = [
    "LANG_ID_CHARS",
    "LOG2_PROB_MIN",
    "GOOGLE_1T_TOTAL",
    "Outcome",
    "SectionSignal",
    "Signals",
    "Verdict",
    "avg_log2_prob",
    "body_paragraphs",
    "compute_signals",
    "count_tokens",
    "log2_table",
    "make_document",
    "ocr_matches",
    "release",
    "select",
    "select_s2ag",
    "select_s2orc",
    "split_for",
    "unknown_log2_prob",
]

Source = Literal["s2orc", "s2ag"]
Version = Literal["v1", "v2"]
VERSIONS = ("v1", "v2")

LANG_ID_CHARS = 2000  # card: cld on the first 2000 characters of each paragraph
PLACEHOLDERS = frozenset(
    {"EQUATION", "FORMULA"}
)  # what corpus.parse.tei / corpus.parse.s2orc_json write for a formula
LOG2_PROB_MIN = -20.0  # card: sections / abstracts below −20 average log prob go
GOOGLE_1T_TOTAL = 588_124_220_187  # token total of the Google 1T unigram list peS2o used
MIN_WORDS = 500
MIN_PARAGRAPHS = 5
MIN_YEAR = 1970
TOP_WORD_MAX_SHARE = 0.075
ABSTRACT_MIN_WORDS = 50
ABSTRACT_MAX_WORDS = 1000
OCR_MAX_MATCHES = 4
OCR_PRONE_SOURCES = frozenset({"grobid", "s2orc"})

_LETTERS = re.compile(r"[^\W\d_]+")
_HAS_LETTER = re.compile(r"[^\W\d_]")
_PUNCT = (
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\u2018\u2019\u201c\u201d\u00ab\u00bb\u2013\u2014\u2026\u00b7\u2022"
)
_MARKER = re.compile(r"\{\{(?:formula|cite|figure|table|ref|footnote)(?::[^{}]*)?\}\}")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_OCR = re.compile(r"\b([A-Za-z]\s)([a-z]\s)*[A-Za-z]\b")


# --------------------------------------------------------------------------- word probabilities


class _Scorer:
    """log2 word probabilities: the word rule is :meth:`token`; counting and summing is C's.

    Speed comes from not making a Python object per token: each thread's
    :class:`corpus._tally.TokenTable` splits paragraphs as ``str.split()`` does,
    looks every token up in its own cache and calls :meth:`token` only for a
    token it has never seen. The cache forgets everything past a million distinct
    tokens; results never depend on it.
    """

    def __init__(self, base: dict[str, float], unknown: float):
        self.base = base
        self.unknown = unknown
        self._local = threading.local()

    def token(self, tok: str) -> tuple[float, int]:
        """(summed log2 probability, number of words) of one whitespace token."""
        stripped = _lower(tok).strip(_PUNCT)
        value = self.base.get(stripped)
        if value is not None:
            return value, 1
        words = _LETTERS.findall(stripped)
        return sum(self.base.get(w, self.unknown) for w in words), len(words)

    @property
    def table(self) -> TokenTable:
        """This thread's token table (a table serves one thread at a time)."""
        table = getattr(self._local, "table", None)
        if table is None:
            table = self._local.table = TokenTable(self.token)
        return table

    def reset(self) -> None:
        """Forget this thread's cached tokens (the numbers stay the same)."""
        self.table.clear()

    def score(self, text: str) -> tuple[float, int]:
        """(sum of log2 probabilities, number of words) of ``text``."""
        _, sums, words, _, _ = self.table.tally([text], [0], 1)
        return sums[0], words[0]


@functools.cache
def _scorer() -> _Scorer:
    return _Scorer(*_word_table())


def _word_table() -> tuple[dict[str, float], float]:
    """(word -> log2 probability, the unknown-word value) from wordfreq's ``en`` "large" list.

    The values are ``wordfreq.get_frequency_dict``'s (``10 ** (-index / 100)`` for the word's
    last bucket; a test holds them equal), but the cBpack file is streamed here one bucket at a
    time: importing wordfreq and its cached list and dict would keep ~40 MB more than this table
    in every process that scores text (each run worker and each pool worker, on every core).
    Each bucket's value is one float shared by its words.
    """
    import gzip
    import importlib.util

    import msgpack

    spec = importlib.util.find_spec("wordfreq")  # its data file, without importing it
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("wordfreq is not installed: peS2o's word probabilities need its 'en' list")
    path = Path(spec.submodule_search_locations[0]) / "data" / "large_en.msgpack.gz"
    base: dict[str, float] = {}
    with gzip.open(path, "rb") as raw:
        unpacker = msgpack.Unpacker(raw, raw=False)
        buckets = unpacker.read_array_header() - 1
        header = unpacker.unpack()
        if not isinstance(header, dict) or header.get("format") != "cB" or header.get("version") != 1:
            raise ValueError(f"{path}: not a wordfreq cBpack v1 file (header {header!r})")
        for index in range(buckets):
            value = math.log2(10 ** (-index / 100))  # of wordfreq.cB_to_freq(-index)
            for word in unpacker.unpack():
                if _HAS_LETTER.search(word):
                    base[word] = value  # a word in two buckets keeps its last, as in get_frequency_dict
    return base, math.log2((math.sqrt(len(base)) + 1) / GOOGLE_1T_TOTAL)


def log2_table() -> dict[str, float]:
    """word -> log2 probability (wordfreq ``en`` large, words with a letter), built once."""
    return _scorer().base


def unknown_log2_prob() -> float:
    """log2 probability given to a word not in the table (≈ −29.95, see module doc)."""
    return _scorer().unknown


def _lower(text: str) -> str:
    text = text.lower()
    return text if text.isascii() else text.replace("\u2019", "'")


def avg_log2_prob(text: str) -> float:
    """Average log2 word probability of ``text`` (module doc); no words → unknown value."""
    scorer = _scorer()
    total, n = scorer.score(text)
    return total / n if n else scorer.unknown


def ocr_matches(text: str) -> int:
    """Number of spaced-single-letter runs (peS2o v2's OCR pattern) in ``text``."""
    return sum(1 for _ in _OCR.finditer(text))


# --------------------------------------------------------------------------- text preparation


def _clean(text: str) -> tuple[str, int]:
    """(NFC text without unarXive placeholders, whitespace collapsed; placeholders removed).

    ``collapse`` is ``" ".join(text.split())`` in C, returning ``text`` itself when
    it is already single-spaced (nearly every paragraph is) at a fraction of the cost.
    """
    markers = 0
    if "{{" in text:
        text, markers = _MARKER.subn(" ", text)
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return collapse(text), markers


def _released(p) -> str:
    """A paragraph's text without the placeholders the parsers write where a formula has
    no text (:data:`PLACEHOLDERS`): a whole placeholder paragraph is empty, an inline one
    (an eq span that is a placeholder) is cut out. The parse keeps them."""
    text = p.text
    if text in PLACEHOLDERS:
        return ""
    if not p.eq_spans:
        return text
    cut = [s for s in p.eq_spans if s.text in PLACEHOLDERS and text[s.start : s.end] == s.text]
    if not cut:
        return text
    parts, pos = [], 0
    for s in sorted(cut, key=lambda s: s.start):
        parts.append(text[pos : s.start])
        pos = s.end
    parts.append(text[pos:])
    return " ".join(parts)


def body_paragraphs(doc: StructuredDoc) -> list[tuple[str, str]]:
    """(section, cleaned text) of every peS2o paragraph, in order (see module doc).

    This list is what paragraph indices in :class:`Signals` refer to, and the
    texts are the ones measured: language, words and probabilities are of them.
    """
    return [(section, text) for section, text, _ in _paragraphs(doc)]


def _paragraphs(doc: StructuredDoc) -> list[tuple[str, str, int]]:
    """(section, cleaned text, placeholders) of the merged paragraphs (:func:`_clean`).

    The last answer is kept: :func:`release` (and :func:`make_document`) ask again
    for the paper :func:`compute_signals` has just measured, and comparing the
    (section, text) pairs (the same string objects, so mostly identity checks)
    costs a tenth of redoing the work. Callers must not change the returned list.
    """
    global _last_paragraphs
    key = [(p.section, _released(p)) for p in doc.body_text]
    last_key, last = _last_paragraphs
    if key == last_key:
        return last
    out = _merge_paragraphs(key)
    _last_paragraphs = (key, out)
    return out


_last_paragraphs: tuple[list[tuple[str | None, str]], list[tuple[str, str, int]]] = ([], [])


def _merge_paragraphs(raw: list[tuple[str | None, str]]) -> list[tuple[str, str, int]]:
    """:func:`_paragraphs` of a body given as (section, text) pairs."""
    out: list[tuple[str, str, int]] = []
    prev = None
    for section, raw_text in raw:
        text, markers = _clean(raw_text)
        if not text:
            continue
        section = section or ""
        # a collapsed text without a space is a single token
        if out and section == prev and (out[-1][1][-1] not in ".?!" or " " not in text):
            _, before, n = out[-1]
            out[-1] = (section, f"{before} {text}", n + markers)
        else:
            out.append((section, text, markers))
        prev = section
    return out


def _section(name: str, first: int, paras: int, words: int, log_sum: float, n: int, unknown: float):
    avg = log_sum / n if n else unknown
    # validated, not model_construct: pydantic-core validates five scalars faster
    # than model_construct copies them in Python (2 µs against 3 µs measured)
    return SectionSignal(name=name, first=first, paragraphs=paras, words=words, avg_log2_prob=avg)


def _header_text(text: str) -> str:
    """A title or abstract paragraph, cleaned, control characters too (cheap: once per doc).

    Body paragraphs are not searched for control characters (it would cost every
    paragraph a regex pass); corpus.parse.tei and corpus.parse.s2orc_json already remove them.
    """
    return _clean(_CONTROL.sub(" ", text))[0]


def _title(doc: StructuredDoc) -> str:
    return _header_text(doc.title)


def _abstract_text(doc: StructuredDoc) -> str:
    return "\n\n".join(t for t in (_header_text(_released(p)) for p in doc.abstract) if t)


# --------------------------------------------------------------------------- token statistics


class _Tally(NamedTuple):
    """Whitespace-token statistics of a document's paragraphs, per section run."""

    tokens: list[int]  # whitespace tokens per run
    log2_sums: list[float]  # summed log2 word probability per run
    words: list[int]  # words (for probabilities) per run
    top_word: str  # the most frequent whitespace token (the first seen among equals)
    top_count: int


def _tally(texts: list[str], run_of: list[int], runs: int, scorer: _Scorer) -> _Tally:
    """Token statistics of paragraph ``texts`` (``run_of``: the run of each), in C.

    :func:`_tally_python` is the same computation in Python, the reference it is
    tested against: the same tokens, counts, top token and (summed in the same
    order) the same log2 sums, bit for bit.
    """
    return _Tally(*scorer.table.tally(texts, run_of, runs))


def _tally_python(texts: list[str], run_of: list[int], runs: int, scorer: _Scorer) -> _Tally:
    """The reference: ``str.split`` per paragraph, the word rule per token, a Counter over all."""
    tokens, sums, words = [0] * runs, [0.0] * runs, [0] * runs
    all_tokens: list[str] = []
    for text, run in zip(texts, run_of, strict=True):
        toks = text.split()
        all_tokens.extend(toks)
        tokens[run] += len(toks)
        for tok in toks:
            value, n = scorer.token(tok)
            sums[run] += value
            words[run] += n
    top = Counter(all_tokens).most_common(1)
    top_word, top_count = top[0] if top else ("", 0)
    return _Tally(tokens, sums, words, top_word, top_count)


# --------------------------------------------------------------------------- signals


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SectionSignal(_Model):
    """One run of consecutive body paragraphs under the same section title."""

    name: str
    first: int  # index of its first paragraph in body_paragraphs(doc)
    paragraphs: int
    words: int  # whitespace words
    avg_log2_prob: float


class Signals(_Model):
    """Everything the peS2o selections need, measured once per document."""

    paper_id: str
    year: int | None
    # title and abstract (s2ag, and the s2orc presence rule)
    title_words: int
    abstract_words: int
    title_lang: str
    abstract_lang: str
    title_avg_log2_prob: float
    abstract_avg_log2_prob: float
    abstract_ocr_matches: int
    abstract_ocr_prone: bool
    ta_top_words: list[str]  # the two most frequent whitespace tokens of title + abstract
    ta_top_counts: list[int]
    # full text (s2orc)
    paragraph_langs: list[str]
    paper_lang: str
    words: int  # whitespace words over all body paragraphs
    paragraphs: int
    sections: list[SectionSignal]
    top_word: str
    top_word_count: int
    top_word_share: float


def compute_signals(
    doc: StructuredDoc,
    year: int | None = None,
    *,
    ocr_prone: bool | None = None,
) -> Signals:
    """Measure ``doc`` once for both peS2o sources and versions.

    ``year`` defaults to ``doc.year``; ``ocr_prone`` (whether the abstract came
    from an OCR-prone source, v2) defaults to ``doc.source`` being a PDF parse.
    An unarXive placeholder counts as one whitespace word (a PDF parse would
    have kept the formula or citation as text) but is no word for probabilities.
    """
    scorer = _scorer()
    title = _title(doc)
    abstract = _abstract_text(doc)

    paragraphs = _paragraphs(doc)
    texts = [text for _, text, _ in paragraphs]
    langs = detect_langs(texts, LANG_ID_CHARS)
    # Sections are runs of paragraphs with the same section string.
    names: list[str] = []
    firsts: list[int] = []
    markers: list[int] = []
    run_of: list[int] = []  # run index of every paragraph
    for index, (section, _, n_markers) in enumerate(paragraphs):
        if not names or section != names[-1]:
            names.append(section)
            firsts.append(index)
            markers.append(0)
        markers[-1] += n_markers
        run_of.append(len(names) - 1)
    tally = _tally(texts, run_of, len(names), scorer)
    sections = [
        _section(
            name,
            firsts[i],
            (firsts[i + 1] if i + 1 < len(names) else len(texts)) - firsts[i],
            tally.tokens[i] + markers[i],
            tally.log2_sums[i],
            tally.words[i],
            scorer.unknown,
        )
        for i, name in enumerate(names)
    ]
    total_words = sum(sec.words for sec in sections)
    n = len(texts)
    top_word, top_count = tally.top_word, tally.top_count
    ta_top = Counter(f"{title} {abstract}".split()).most_common(2)
    return Signals.model_construct(
        paper_id=doc.paper_id,
        year=doc.year if year is None else year,
        title_words=len(title.split()),
        abstract_words=len(abstract.split()),
        title_lang=detect_lang(title, LANG_ID_CHARS),
        abstract_lang=detect_lang(abstract, LANG_ID_CHARS),
        title_avg_log2_prob=avg_log2_prob(title),
        abstract_avg_log2_prob=avg_log2_prob(abstract),
        abstract_ocr_matches=ocr_matches(abstract),
        abstract_ocr_prone=doc.source in OCR_PRONE_SOURCES if ocr_prone is None else ocr_prone,
        ta_top_words=[w for w, _ in ta_top],
        ta_top_counts=[c for _, c in ta_top],
        paragraph_langs=langs,
        paper_lang=Counter(langs).most_common(1)[0][0] if langs else "un",
        words=total_words,
        paragraphs=n,
        sections=sections,
        top_word=top_word,
        top_word_count=top_count,
        top_word_share=top_count / total_words if total_words else 0.0,
    )


# --------------------------------------------------------------------------- selections


class Verdict(NamedTuple):
    """A selection's answer: keep?, the rule that dropped it, the sections kept (indices)."""

    keep: bool
    reason: str | None
    kept_sections: tuple[int, ...] = ()


def _check_version(version: str) -> None:
    if version not in VERSIONS:
        raise ValueError(f"unknown peS2o version {version!r}; expected one of {VERSIONS}")


def _year_reason(year: int | None) -> str | None:
    if year is None:
        return "no_year"
    if year < MIN_YEAR:
        return "published_before_1970"
    return None


def select_s2orc(signals: Signals, version: str) -> Verdict:
    """Full-text (``s2orc``) selection; v1 and v2 are the same for this source.

    Rules in order, each a drop reason: ``no_title``, ``no_abstract``,
    ``not_english``, ``too_few_words`` (< 500; checked first when the body is empty or
    its language undetermined, which such a short body says nothing about), ``no_year`` /
    ``published_before_1970``, ``too_few_paragraphs`` (< 5 after removing
    sections below −20), ``top_word_not_alpha``, ``top_word_too_frequent`` (≥ 7.5 %).
    """
    _check_version(version)
    s = signals
    if s.title_words == 0:
        return Verdict(False, "no_title")
    if s.abstract_words == 0:
        return Verdict(False, "no_abstract")
    if s.words == 0 or (s.paper_lang == "un" and s.words < MIN_WORDS):
        return Verdict(False, "too_few_words")  # no body, or too little to tell its language
    if s.paper_lang != "en":
        return Verdict(False, "not_english")
    if s.words < MIN_WORDS:
        return Verdict(False, "too_few_words")
    if reason := _year_reason(s.year):
        return Verdict(False, reason)
    kept = tuple(i for i, sec in enumerate(s.sections) if sec.avg_log2_prob >= LOG2_PROB_MIN)
    if sum(s.sections[i].paragraphs for i in kept) < MIN_PARAGRAPHS:
        return Verdict(False, "too_few_paragraphs", kept)
    if not s.top_word.isalpha():
        return Verdict(False, "top_word_not_alpha", kept)
    if s.top_word_share >= TOP_WORD_MAX_SHARE:
        return Verdict(False, "top_word_too_frequent", kept)
    return Verdict(True, None, kept)


def _alpha2(word: str) -> bool:
    return len(word) >= 2 and word.isalpha()


def select_s2ag(signals: Signals, version: str) -> Verdict:
    """Title + abstract (``s2ag``) selection; v2 adds the OCR rule.

    Rules in order: ``no_title``, ``no_abstract``, ``abstract_not_english``,
    ``title_not_english`` (not English and average log2 prob ≤ −20),
    ``abstract_low_probability`` (≤ −20), ``abstract_too_short`` (< 50 words),
    ``abstract_too_long`` (> 1000), ``top_word_not_alpha`` (the most frequent
    token is not a 2+ letter word, nor ``a`` followed by one), ``no_year`` /
    ``published_before_1970``; v2: ``ocr_spaced_letters`` (> 4 matches in an
    abstract from an OCR-prone source).
    """
    _check_version(version)
    s = signals
    if s.title_words == 0:
        return Verdict(False, "no_title")
    if s.abstract_words == 0:
        return Verdict(False, "no_abstract")
    if s.abstract_lang != "en":
        return Verdict(False, "abstract_not_english")
    if s.title_lang != "en" and not s.title_avg_log2_prob > LOG2_PROB_MIN:
        return Verdict(False, "title_not_english")
    if not s.abstract_avg_log2_prob > LOG2_PROB_MIN:
        return Verdict(False, "abstract_low_probability")
    if s.abstract_words < ABSTRACT_MIN_WORDS:
        return Verdict(False, "abstract_too_short")
    if s.abstract_words > ABSTRACT_MAX_WORDS:
        return Verdict(False, "abstract_too_long")
    top = s.ta_top_words
    if not ((top and _alpha2(top[0])) or (len(top) > 1 and top[0] == "a" and _alpha2(top[1]))):
        return Verdict(False, "top_word_not_alpha")
    if reason := _year_reason(s.year):
        return Verdict(False, reason)
    if version == "v2" and s.abstract_ocr_prone and s.abstract_ocr_matches > OCR_MAX_MATCHES:
        return Verdict(False, "ocr_spaced_letters")
    return Verdict(True, None)


def select(signals: Signals, source: str, version: str) -> Verdict:
    """Dispatch to :func:`select_s2orc` or :func:`select_s2ag` by source name."""
    if source == "s2orc":
        return select_s2orc(signals, version)
    if source == "s2ag":
        return select_s2ag(signals, version)
    raise ValueError(f"unknown peS2o source {source!r}; expected 's2orc' or 's2ag'")


# --------------------------------------------------------------------------- documents


def _timestamp(value: str | dt.date | dt.datetime) -> str:
    """peS2o's timestamp form, ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, dt.date):
        return f"{value.isoformat()}T00:00:00.000Z"
    if isinstance(value, str):
        _parse_date(value)  # validates
        return value
    raise TypeError(f"expected a date, datetime or ISO string, got {type(value).__name__}")


def _parse_date(value: str | dt.date | dt.datetime) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError as exc:
            raise ValueError(f"not an ISO date: {value!r}") from exc
    raise TypeError(f"expected a date, datetime or ISO string, got {type(value).__name__}")


def _header(section: str) -> str:
    return section.rsplit("::", 1)[-1].strip()


def make_document(
    doc: StructuredDoc,
    signals: Signals,
    source: str,
    version: str,
    added: str | dt.date | dt.datetime,
    created: str | dt.date | dt.datetime,
    *,
    kept_sections: Iterable[int] | None = None,
) -> dict:
    """The peS2o document: ``added``, ``created``, ``id``, ``source``, ``text``, ``version``.

    ``text`` is the title, the abstract paragraphs and (``s2orc``) the kept
    sections' paragraphs, separated by blank lines; each kept section's title
    heads its first paragraph on a line of its own. Raises ``ValueError`` when
    the selection drops this document (call :func:`select` first to count drops).
    """
    verdict = select(signals, source, version)
    if not verdict.keep:
        raise ValueError(f"{doc.paper_id}: dropped from peS2o {source} {version} ({verdict.reason})")
    if signals.paper_id != doc.paper_id:
        raise ValueError(f"signals are for {signals.paper_id!r}, document is {doc.paper_id!r}")
    keep = verdict.kept_sections if kept_sections is None else tuple(kept_sections)
    return _document(doc, source, version, _text(doc, signals, source, keep, None), added, created)


def _text(
    doc: StructuredDoc,
    signals: Signals,
    source: str,
    kept_sections: tuple[int, ...],
    paras: list[tuple[str, str]] | None,
) -> str:
    parts = [_title(doc), _abstract_text(doc)]
    if source == "s2orc":
        paras = body_paragraphs(doc) if paras is None else paras
        for idx in kept_sections:
            sec = signals.sections[idx]
            header = _header(sec.name)
            for j in range(sec.first, sec.first + sec.paragraphs):
                text = paras[j][1]
                parts.append(f"{header}\n{text}" if j == sec.first and header else text)
    return "\n\n".join(p for p in parts if p)


def _document(doc: StructuredDoc, source: str, version: str, text: str, added, created) -> dict:
    return {
        "added": _timestamp(added),
        "created": _timestamp(created),
        "id": doc.paper_id,
        "source": source,
        "text": text,
        "version": version,
    }


class Outcome(NamedTuple):
    """One paper in one release: the verdict, and the document when it is kept."""

    source: str
    version: str
    keep: bool
    reason: str | None
    document: dict | None


def release(
    doc: StructuredDoc,
    signals: Signals,
    added: str | dt.date | dt.datetime,
    created: str | dt.date | dt.datetime,
    versions: Iterable[str] = VERSIONS,
) -> list[Outcome]:
    """Every (source, version) verdict for one paper, with its document when kept.

    What an asset building several releases calls: the body text is cleaned once
    and a text shared by two releases (s2orc v1 and v2 keep the same sections) is
    built once, where separate :func:`make_document` calls would redo both.
    """
    if signals.paper_id != doc.paper_id:
        raise ValueError(f"signals are for {signals.paper_id!r}, document is {doc.paper_id!r}")
    out: list[Outcome] = []
    paras: list[tuple[str, str]] | None = None
    texts: dict[tuple[str, tuple[int, ...]], str] = {}
    for version in versions:
        for source in ("s2orc", "s2ag"):
            verdict = select(signals, source, version)
            document = None
            if verdict.keep:
                key = (source, verdict.kept_sections)
                if key not in texts:
                    if source == "s2orc" and paras is None:
                        paras = body_paragraphs(doc)
                    texts[key] = _text(doc, signals, source, verdict.kept_sections, paras)
                document = _document(doc, source, version, texts[key], added, created)
            out.append(Outcome(source, version, verdict.keep, verdict.reason, document))
    return out


# --------------------------------------------------------------------------- splits


def split_for(created_date: str | dt.date | dt.datetime, cutoff: str | dt.date | dt.datetime) -> str:
    """``"train"`` or ``"valid"`` for a document created on ``created_date``.

    The card's v1/v2 knowledge cutoff is 2023-01-03; its train set is papers
    before 2022-12-01 and its valid set papers from 2022-12-01 until the cutoff.
    So ``cutoff`` is the knowledge cutoff date, and valid starts on the first day
    of the month *before* the cutoff's month: cutoff 2023-01-03 → valid
    2022-12-01 … 2023-01-03 inclusive, train < 2022-12-01. A document created
    after the cutoff belongs to no split: ``ValueError`` (filter them first).
    """
    created = _parse_date(created_date)
    cut = _parse_date(cutoff)
    valid_start = dt.date(cut.year - 1, 12, 1) if cut.month == 1 else dt.date(cut.year, cut.month - 1, 1)
    if created > cut:
        raise ValueError(f"created {created} is after the knowledge cutoff {cut}")
    return "valid" if created >= valid_start else "train"
