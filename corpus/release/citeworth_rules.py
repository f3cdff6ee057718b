"""CiteWorth's rules for one paper: which paragraphs are kept, their sentences and labels.

Follows citeworth-paper.txt §3 and App. A-B (SPEC.md §7). For one paper's
structured full text (:class:`corpus.parse.document.StructuredDoc`, from Grobid TEI,
LaTeX or S2ORC JSON), every body paragraph becomes a :class:`ParagraphResult`:
kept, with one :class:`Sample` per sentence, or rejected with a reason code
(:data:`REASONS`) so the filter funnel is a count.

A paragraph is kept only if its section title is permissible (App. A) and
*every* sentence passes, in this order:

1. cite spans are BRACKET (``[3]``, ``[3, 4]``, ``[3]-[5]``) or parenthetical
   NAME-YEAR (``(Smith et al., 2019; Jones 2020)``); adjacent spans (gap of
   spaces, ``, ; -`` or ``and``) form one citation group, and a NAME-YEAR group
   takes in the parenthesis Grobid often leaves outside its spans;
2. each group sits at the end of its sentence (only punctuation after it);
3. no citation the parser missed: App. B's bracket and year regexes (the year
   regex with its lost ``{3}`` restored) and ``et al.``, on the sentence after
   the spans are removed;
4. no hanging marker after removal: App. B's hanging-citation regex (a sentence
   ending on "see", "of", "by", "e.g.", an empty "( )" ...), on every sentence as
   the code does (an uncited sentence ending in "see." hides a lost citation);
5. first character upper case, last one of ``. ! ?``, at least 20 characters.

Only ``body_text`` paragraphs are used (the paper: "paragraphs from the body
text"); App. A's "abstract" matters for body sections so titled.
Cite-worthy sentences lose their citation groups and any hanging punctuation
(`` ,;:/-&@``) before the final mark.

Where the published cite-worth code (``build_dataset.py``) and the paper
disagree, this module follows the paper:

* the code's ``[,-;]`` is a character range (``,`` to ``;``, so also ``.``,
  ``/``, digits and ``:``); the paper means the three separators ``, - ;``,
  which is what :data:`BRACKET_RE` uses (plus the en dash of ``[3–5]``). The
  regex is also rewritten so that it cannot backtrack exponentially; it accepts
  exactly the same strings (tested against the original form);
* the code labels sentences with mid-sentence or other-format citations
  ``context-only`` (an undocumented third label) and keeps the paragraph; the
  paper drops such paragraphs, and so do we: labels are only the released
  ``check-worthy`` (cite-worthy) and ``non-check-worthy``;
* the code's ``et( )?al`` also hits "metal" or "fetal"; we match the word;
* the code keeps only paragraphs with a citation, ≥ 3 sentences, in papers with
  > 5 spans -- none of this is in the paper, so it is off by default
  (``min_sentences``, ``require_citation`` turn the first two on);
* the paper says "at least 20 characters" (the code's ``> 20`` gives Table 2's
  minimum of 21); we keep the paper's ≥ 20.

JSONL rows (:meth:`ParagraphResult.release_row`) have the released data's shape:
``paper_id, section_index, section_title, mag_field_of_study ([field]),
original_text, samples[text, label, original_text, ref_ids, citation_text]``
plus ``field``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from corpus.papers.fields import CITEWORTH_FIELDS
from corpus.parse.document import Paragraph, Span, StructuredDoc
from corpus.parse.sentences import split_sentences

LABEL_CITE_WORTHY = "check-worthy"  # the released data's label names (the paper says "cite-worthy")
LABEL_NOT_CITE_WORTHY = "non-check-worthy"

# App. A, verbatim (shared/data/citeworth/permissible_section_titles.txt; a test checks they agree).
PERMISSIBLE_SECTION_TITLES: tuple[str, ...] = (
    "introduction",
    "abstract",
    "method",
    "methods",
    "results",
    "discussion",
    "discussions",
    "conclusion",
    "conclusions",
    "results and discussion",
    "related work",
    "experimental results",
    "literature review",
    "experiments",
    "background",
    "methodology",
    "conclusions and future work",
    "related works",
    "limitations",
    "procedure",
    "material and methods",
    "discussion and conclusion",
    "implementation",
    "evaluation",
    "performance evaluation",
    "experiments and results",
    "overview",
    "experimental design",
    "discussion and conclusions",
    "results and discussions",
    "motivation",
    "proposed method",
    "analysis",
    "future work",
    "results and analysis",
    "implementation details",
)
_PERMISSIBLE = frozenset(PERMISSIBLE_SECTION_TITLES)

# --- App. B regexes -------------------------------------------------------------------------
#: Paper: ``\[([0-9]+\s*[,-;]*\s*)*[0-9]+\s*\]`` with ``[,-;]`` meant as the set {, - ;}.
#: Same language, written so each digit run is maximal (no nested-quantifier blow-up).
BRACKET_PATTERN = r"\[(?:[0-9]+(?:\s*[,;\-\u2013]+\s*|\s+))*[0-9]+\s*\]"
#: Paper (PDF lost the braces): ``\(?[12][0-9]3[a-z]?\s*\)``; restored ``{3}``. Not after a digit.
YEAR_PATTERN = r"\(?(?<![0-9])[12][0-9]{3}[a-z]?\s*\)"
ET_AL_PATTERN = r"\bet\.?\s?al\b\.?"
#: App. B hanging-citation regex, verbatim (applied to the lower-cased sentence).
HANGING_PATTERN = (
    r"\s+\(?(?:\(\s*\)|like|reference|including|include|with|for instance|for example|see also|at"
    r"|following|of|from|to|in|by|see|as|e\.?g\.?(?:,)?|viz(?:\.)?(?:,)?)\s*(?:,)*(?:-)*[\)\]]?\s*[.?!]\s*$"
)
BRACKET_RE = re.compile(BRACKET_PATTERN)
YEAR_RE = re.compile(YEAR_PATTERN)
ET_AL_RE = re.compile(ET_AL_PATTERN)
HANGING_RE = re.compile(HANGING_PATTERN)
_MISSED_RE = re.compile(f"{BRACKET_PATTERN}|{YEAR_PATTERN}|{ET_AL_PATTERN}")
_HANGING_TAIL = 96  # the hanging regex is anchored at $: searching the tail is enough and O(1)

_GAP_PATTERN = r"[\s,;\-\u2013]*(?:(?:and|&)[\s,]*)?"  # between spans of one citation group
_GAP_RE = re.compile(_GAP_PATTERN)
_BRACKET_GROUP_RE = re.compile(rf"{BRACKET_PATTERN}(?:{_GAP_PATTERN}{BRACKET_PATTERN})*")
_YEAR_IN_SPAN_RE = re.compile(r"(?<![0-9])[12][0-9]{3}[a-z]?(?![0-9])")
_AFTER_END_RE = re.compile(r"[\s,;:/&@\-\u2013.!?'\"\u2019\u201d)\]]*")
_DOUBLE_END_RE = re.compile(r"(?<![.!?])[.!?]\s*[.!?]$")
_HANGING_PUNCT = frozenset(" @&:;/-,\n\t\u2013")

_SECTION_NUM_RE = re.compile(r"^\s*(?:[0-9]+(?:\.[0-9]+)*\.?|(?:[ivxlc]+|[a-z])[.)])\s+", re.IGNORECASE)
_SECTION_TRAIL_RE = re.compile(r"[\s.:;,]+$")
_WS_RE = re.compile(r"\s+")

# Reason codes (one per rejected paragraph: the first failing rule of the first failing sentence).
R_SECTION = "section_not_permissible"
R_EMPTY = "empty_paragraph"
R_SPAN_OFFSETS = "bad_span_offsets"
R_CROSSES = "citation_crosses_sentence"
R_FORM = "citation_form"
R_NOT_AT_END = "citation_not_at_end"
R_MISSED = "missed_citation"
R_HANGING = "hanging_marker"
R_LOWER = "lowercase_start"
R_END_PUNCT = "bad_final_punctuation"
R_SHORT = "too_short"
R_FEW_SENTENCES = "too_few_sentences"
R_NO_CITATION = "no_citation"
REASONS: tuple[str, ...] = (
    R_SECTION, R_EMPTY, R_SPAN_OFFSETS, R_CROSSES, R_FORM, R_NOT_AT_END, R_MISSED,
    R_HANGING, R_LOWER, R_END_PUNCT, R_SHORT, R_FEW_SENTENCES, R_NO_CITATION,
)  # fmt: skip
MIN_CHARS = 20


# --- section titles ---------------------------------------------------------------------------
def normalize_section_title(title: str) -> str:
    """``"2.1. Related Work:"`` -> ``"related work"``; ``"I. INTRODUCTION"`` -> ``"introduction"``."""
    t = _SECTION_NUM_RE.sub("", title or "", count=1)
    t = _WS_RE.sub(" ", t.replace("&", " and ")).strip().lower()
    return _SECTION_TRAIL_RE.sub("", t)


@functools.lru_cache(maxsize=65536)
def permissible_section(title: str) -> bool:
    """Whether a section title is on App. A's list after normalisation.

    Nested titles (``"Methods::Data sets"``, S2ORC's ``::``) pass when the innermost or
    the outermost title is permissible (a subsection of "Related Work" is related work).
    """
    if not title:
        return False
    if "::" in title:
        parts = title.split("::")
        return permissible_section(parts[-1]) or permissible_section(parts[0])
    return normalize_section_title(title) in _PERMISSIBLE


# --- results ---------------------------------------------------------------------------------
@dataclass(slots=True)
class Sample:
    """One sentence of a kept paragraph, as in the released data."""

    text: str
    label: str
    original_text: str
    ref_ids: list[list[str | None]] | None = None
    citation_text: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "label": self.label,
            "original_text": self.original_text,
            "ref_ids": self.ref_ids,
            "citation_text": self.citation_text,
        }


@dataclass(slots=True)
class ParagraphResult:
    """A body paragraph's verdict: kept (``samples``) or rejected (``reason``, ``detail``)."""

    paper_id: str
    section_index: int
    section_title: str
    field: str
    original_text: str
    kept: bool
    reason: str | None = None
    detail: str = ""
    samples: list[Sample] = field(default_factory=list)

    def release_row(self) -> dict:
        """The released CiteWorth JSONL shape (for kept paragraphs)."""
        return {
            "paper_id": self.paper_id,
            "section_index": self.section_index,
            "section_title": self.section_title,
            "mag_field_of_study": [self.field],
            "field": self.field,
            "original_text": self.original_text,
            "samples": [s.to_dict() for s in self.samples],
        }

    def to_row(self) -> dict:
        """Flat row for the paragraphs table: kept and rejected alike, with the reason."""
        row = self.release_row()
        row.update(kept=self.kept, reason=self.reason, detail=self.detail)
        return row


class ParagraphRejected(ValueError):
    """Why :func:`check_paragraph` refused a paragraph (``reason`` is one of :data:`REASONS`)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


@dataclass(slots=True)
class _Group:
    """Adjacent cite spans that form one citation (``[3]-[5]``, ``(A, 2019; B, 2020)``)."""

    start: int
    end: int
    spans: list[Span]


# --- citation groups --------------------------------------------------------------------------
def _check_spans(text: str, spans: Sequence[Span]) -> list[Span]:
    out = sorted(spans, key=lambda s: (s.start, s.end))
    n = len(text)
    for s in out:
        if not (0 <= s.start < s.end <= n) or text[s.start : s.end] != s.text:
            raise ParagraphRejected(R_SPAN_OFFSETS, f"span {s.start}:{s.end} {s.text!r}")
    return out


def _groups(text: str, spans: list[Span]) -> list[_Group]:
    groups: list[_Group] = []
    for s in spans:
        if groups:
            g = groups[-1]
            if s.start < g.end or _GAP_RE.fullmatch(text, g.end, s.start):
                g.end = max(g.end, s.end)
                g.spans.append(s)
                continue
        groups.append(_Group(s.start, s.end, [s]))
    for g in groups:  # take in the parenthesis Grobid leaves outside a NAME-YEAR span
        inner = text[g.start : g.end]
        opens, closes = inner.count("("), inner.count(")")
        if closes > opens or (opens == closes and not inner.startswith(("(", "["))):
            i = g.start
            while i > 0 and text[i - 1].isspace():
                i -= 1
            if i > 0 and text[i - 1] == "(":
                g.start = i - 1
                opens += 1
        if opens > closes:
            j = g.end
            while j < len(text) and text[j].isspace():
                j += 1
            if j < len(text) and text[j] == ")":
                g.end = j + 1
    return groups


def _citation_form_ok(text: str, g: _Group) -> bool:
    """BRACKET: the group is only bracket citations; NAME-YEAR: '(' ... year ... ')' with a name."""
    gt = text[g.start : g.end]
    if gt[0] == "[":
        return _BRACKET_GROUP_RE.fullmatch(gt) is not None
    if gt[0] == "(" and gt[-1] == ")":
        return _YEAR_IN_SPAN_RE.search(gt) is not None and any(c.isupper() for c in gt)
    return False


def _remove(text: str, start: int, end: int, groups: list[_Group]) -> str:
    """The sentence without its citation groups (the cite-worth code's joining rule)."""
    out = text[start : groups[0].start]
    for i, g in enumerate(groups):
        nxt = groups[i + 1].start if i + 1 < len(groups) else end
        piece = text[g.end : nxt]
        stripped = piece.lstrip()
        if stripped[:1] and not stripped[0].isalnum():
            out = out.rstrip()
        elif out and not out[-1].isspace() and stripped:
            out += " "
        out += stripped
    return clean_hanging_punctuation(out.strip())


def clean_hanging_punctuation(sentence: str) -> str:
    """Drop spaces and ``,;:/-&@`` left before the final ``.``, ``!`` or ``?``, and the
    second mark of ``shown. [8].`` -> ``shown..`` (an ellipsis ``...`` stays)."""
    if len(sentence) < 2 or sentence[-1] not in ".!?":
        return sentence
    i = len(sentence) - 1
    while i > 0 and sentence[i - 1] in _HANGING_PUNCT:
        i -= 1
    if i < len(sentence) - 1:
        sentence = sentence[:i] + sentence[-1]
    m = _DOUBLE_END_RE.search(sentence)
    return sentence[: m.start() + 1] if m else sentence


def _sentence_problem(sentence: str) -> str | None:
    """Checks 3-5 on a sentence after citation removal; the reason code or None."""
    if _MISSED_RE.search(sentence):
        return R_MISSED
    if HANGING_RE.search(sentence[-_HANGING_TAIL:].lower()):
        return R_HANGING
    if not sentence[:1].isupper():
        return R_LOWER
    if sentence[-1:] not in (".", "!", "?"):
        return R_END_PUNCT
    if len(sentence) < MIN_CHARS:
        return R_SHORT
    return None


def check_paragraph(
    para: Paragraph, *, min_sentences: int = 1, require_citation: bool = False
) -> list[Sample]:
    """Samples of a paragraph whose sentences all pass; else raises :class:`ParagraphRejected`."""
    text = para.text
    if not text.strip():
        raise ParagraphRejected(R_EMPTY)
    spans = _check_spans(text, para.cite_spans)
    groups = _groups(text, spans) if spans else []
    sents = split_sentences(text, [(g.start, g.end) for g in groups])
    if len(sents) < min_sentences:
        raise ParagraphRejected(R_FEW_SENTENCES, f"{len(sents)} sentences")
    if require_citation and not groups:
        raise ParagraphRejected(R_NO_CITATION)
    samples: list[Sample] = []
    gi = 0
    for si, (s, e) in enumerate(sents):
        mine: list[_Group] = []
        while gi < len(groups) and groups[gi].start < e:
            g = groups[gi]
            if g.start < s or g.end > e:
                raise ParagraphRejected(R_CROSSES, f"sentence {si}: {text[g.start : g.end]!r}")
            mine.append(g)
            gi += 1
        original = text[s:e]
        if mine:
            for g in mine:
                if not _citation_form_ok(text, g):
                    raise ParagraphRejected(R_FORM, f"sentence {si}: {text[g.start : g.end]!r}")
            # groups separated only by a gap are merged, so a second group means the first is mid-sentence
            if len(mine) > 1 or not _AFTER_END_RE.fullmatch(text, mine[-1].end, e):
                raise ParagraphRejected(R_NOT_AT_END, f"sentence {si}: {original[:80]!r}")
            cleaned = _remove(text, s, e, mine)
        else:
            cleaned = original
        problem = _sentence_problem(cleaned)
        if problem:
            raise ParagraphRejected(problem, f"sentence {si}: {cleaned[-80:]!r}")
        if mine:
            samples.append(
                Sample(
                    text=cleaned,
                    label=LABEL_CITE_WORTHY,
                    original_text=original,
                    ref_ids=[[sp.ref_id for sp in g.spans] for g in mine],
                    citation_text=[text[g.start : g.end] for g in mine],
                )
            )
        else:
            samples.append(Sample(text=cleaned, label=LABEL_NOT_CITE_WORTHY, original_text=original))
    return samples


def extract_paragraphs(
    doc: StructuredDoc,
    paper_id: str | None = None,
    field: str = "",
    *,
    min_sentences: int = 1,
    require_citation: bool = False,
) -> list[ParagraphResult]:
    """One :class:`ParagraphResult` per body paragraph of ``doc`` (kept or with its reason).

    ``field`` must be one of :data:`corpus.papers.fields.CITEWORTH_FIELDS` (see
    :func:`corpus.papers.fields.citeworth_field`); a wrong one raises ``ValueError``.
    """
    if field not in CITEWORTH_FIELDS:
        raise ValueError(f"field {field!r} is not one of the 10 CiteWorth fields {CITEWORTH_FIELDS}")
    pid = paper_id or doc.paper_id
    results: list[ParagraphResult] = []
    for idx, para in enumerate(doc.body_text):
        res = ParagraphResult(pid, idx, para.section, field, para.text, kept=False)
        if not permissible_section(para.section):
            res.reason = R_SECTION
            res.detail = para.section[:80]
        else:
            try:
                res.samples = check_paragraph(
                    para, min_sentences=min_sentences, require_citation=require_citation
                )
                res.kept = True
            except ParagraphRejected as rej:
                res.reason, res.detail = rej.reason, rej.detail
        results.append(res)
    return results


def paper_candidate(doc: StructuredDoc) -> str | None:
    """§3.1's per-paper requirements we can see in the parse; the reason it fails or None."""
    if not any(p.text.strip() for p in doc.abstract):
        return "no_abstract"
    if not doc.body_text:
        return "no_body_text"
    if not doc.bib_entries:
        return "no_bibliography"
    return None


# --- audit ------------------------------------------------------------------------------------
_AUDIT_EXTRA = (("empty_brackets", re.compile(r"\[\s*[,;\-\u2013]*\s*\]|\(\s*[,;\-\u2013]*\s*\)")),)


def leftover_marker(sentence: str) -> str | None:
    """Name of the first citation marker found in a released sentence, else None."""
    if BRACKET_RE.search(sentence):
        return "bracket"
    if YEAR_RE.search(sentence):
        return "year"
    if ET_AL_RE.search(sentence):
        return "et_al"
    if HANGING_RE.search(sentence.lower()):
        return "hanging"
    for name, rx in _AUDIT_EXTRA:
        if rx.search(sentence):
            return name
    return None


def audit_leftover_markers(sentences: Iterable[str]) -> float:
    """Share of sentences that still carry a citation marker (CiteWorth measured 1.9 %)."""
    n = bad = 0
    for s in sentences:
        n += 1
        bad += leftover_marker(s) is not None
    return bad / n if n else 0.0
