"""CiteWorth paragraphs: sentence checks, cite-worthiness labels, splits, statistics.

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
import hashlib
import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from corpus.ingest.arxiv_ids import try_normalize
from corpus.papers.fields import CITEWORTH_FIELDS
from corpus.parallel import map_papers
from corpus.parse.document import Paragraph, Span, StructuredDoc
from corpus.parse.sentences import split_sentences
from corpus.release.settings import CANDIDATES, PARAGRAPHS
from corpus.store import atomic_path

# The version of citeworth_paragraphs and citeworth_candidates (corpus.versions): bump it whenever their rows change.
CITEWORTH_VERSION = "corpus.release.citeworth/1"

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
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")

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


# --- splits, balance, statistics --------------------------------------------------------------
def _hash_int(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def split_for(paper_id: str) -> str:
    """``train`` / ``dev`` / ``test`` (80/10/10) from a stable hash of the paper id.

    The id is canonicalised first (arXiv version and prefix dropped), so a paper never
    spans two splits and re-running or adding days never moves it.
    """
    key = try_normalize(paper_id) or paper_id.strip()
    bucket = _hash_int(f"citeworth-split:{key}") % 100
    return "train" if bucket < 80 else ("dev" if bucket < 90 else "test")


def _row_field(row: dict) -> str:
    f = row.get("field") or (row.get("mag_field_of_study") or [None])[0]
    if f not in CITEWORTH_FIELDS:
        raise ValueError(f"row {row.get('paper_id')!r}/{row.get('section_index')!r} has field {f!r}")
    return f


def balance(rows: Iterable[dict], seed: int = 0, per_field: int | None = None) -> list[dict]:
    """Sample paragraph rows evenly across the 10 fields, deterministically by ``seed``.

    Each field gets ``per_field`` rows, or all it has if fewer (the data allows no more);
    with ``per_field=None`` every non-empty field gets as many as the smallest one has.
    The choice depends only on ``seed``, ``paper_id`` and ``section_index``, never on
    input order. Output is ordered by field, then by that hash.
    """
    by_field: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for row in rows:
        key = _hash_int(f"{seed}|{row['paper_id']}|{row.get('section_index', 0)}")
        by_field[_row_field(row)].append((key, row))
    if not by_field:
        return []
    n = per_field if per_field is not None else min(len(v) for v in by_field.values())
    out: list[dict] = []
    for f in CITEWORTH_FIELDS:
        items = sorted(by_field.get(f, []), key=lambda kr: (kr[0], kr[1]["paper_id"]))
        out.extend(r for _, r in items[:n])
    return out


def split_rows(rows: Iterable[dict]) -> dict[str, list[dict]]:
    """Rows grouped by :func:`split_for` of their paper (each row gets a ``split`` key)."""
    out: dict[str, list[dict]] = {"train": [], "dev": [], "test": []}
    for row in rows:
        split = split_for(row["paper_id"])
        out[split].append({**row, "split": split})
    return out


def write_release(rows: Iterable[dict], out_dir: Path) -> dict[str, int]:
    """Write paragraph rows to ``out_dir/{train,dev,test}.jsonl`` by :func:`split_for`.

    Rows are sorted by (paper_id, section_index) so a re-run writes the same bytes;
    each file is replaced atomically. Returns the row count per split.
    """
    by_split = split_rows(rows)
    counts: dict[str, int] = {}
    for split, items in by_split.items():
        items.sort(key=lambda r: (str(r["paper_id"]), r.get("section_index", 0)))
        with atomic_path(Path(out_dir) / f"{split}.jsonl") as tmp, open(tmp, "w", encoding="utf-8") as fh:
            for row in items:
                row = {k: v for k, v in row.items() if k != "split"}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        counts[split] = len(items)
    return counts


def stats(items: Iterable[dict]) -> dict:
    """Table 2's statistics over paragraph rows (with ``samples``) or sample dicts.

    Tokens are ``\\w+`` runs and single punctuation marks (scispaCy-like); per-split
    counts appear when rows carry a ``split`` key.
    """
    lengths: list[int] = []
    tokens = cite = 0
    per_split: dict[str, int] = defaultdict(int)
    per_field: dict[str, int] = defaultdict(int)
    for item in items:
        samples = item.get("samples", [item])
        for s in samples:
            text = s["text"]
            lengths.append(len(text))
            tokens += len(_TOKEN_RE.findall(text))
            cite += s["label"] == LABEL_CITE_WORTHY
            if "split" in item:
                per_split[item["split"]] += 1
            if "samples" in item and item.get("field"):
                per_field[item["field"]] += 1
    n = len(lengths)
    out: dict = {
        "total_sentences": n,
        "total_tokens": tokens,
        "cite_worthy": cite,
        "non_cite_worthy": n - cite,
        "cite_worthy_share": cite / n if n else 0.0,
        "min_chars": min(lengths) if n else 0,
        "max_chars": max(lengths) if n else 0,
        "mean_chars": statistics.fmean(lengths) if n else 0.0,
        "median_chars": statistics.median(lengths) if n else 0.0,
    }
    for split in ("train", "dev", "test"):
        if per_split:
            out[f"{split}_sentences"] = per_split.get(split, 0)
    if per_field:
        out["sentences_per_field"] = dict(per_field)
    return out


# --- store stages: one day of paragraphs, the release over every day --------------------------
# The Dagster assets (corpus_assets/citeworth.py) are thin loops over these; a script can call
# them the same way. Layout (DESIGN.md §3, §7):
#   $CORPUS_HOME/citeworth_paragraphs/date=D/   every body paragraph of D's papers, kept or with its reason
#   $CORPUS_HOME/citeworth_candidates/date=D/   every paper of D: candidate, or why it gave no paragraphs
#   $CORPUS_HOME/citeworth_splits/part-0.parquet  the released paragraphs' keys with their split
#   $CORPUS_HOME/releases/citeworth/<split>.jsonl the release (ParagraphResult.release_row shape)
SPLITS = "citeworth_splits"
SPLIT_NAMES: tuple[str, ...] = ("train", "dev", "test")
CITEWORTH_LEFTOVER_RATE = 0.019  # citeworth-paper.txt Table 3: "less than 2 %", 1.9 % measured

# Paper-level reasons (citeworth_candidates.reason); paper_candidate() adds no_abstract/no_body_text/no_bibliography.
P_DROPPED = "paper_dropped"  # the papers asset's S2ORC filters dropped it (detail: its drop_reason)
P_NO_TEXT = "no_full_text"  # kept, but no parse was chosen or the chosen parse is missing
P_NO_FIELD = "no_field"  # no CiteWorth field for its categories
P_ERROR = "extract_error"  # the parse could not be read (detail: the exception)

_SAMPLE_DTYPE = pl.Struct(
    {
        "text": pl.Utf8,
        "label": pl.Utf8,
        "original_text": pl.Utf8,
        "ref_ids": pl.List(pl.List(pl.Utf8)),
        "citation_text": pl.List(pl.Utf8),
    }
)
PARAGRAPH_SCHEMA: dict[str, pl.DataType] = {
    "paper_id": pl.Utf8,
    "section_index": pl.Int64,
    "section_title": pl.Utf8,
    "field": pl.Utf8,
    "original_text": pl.Utf8,
    "samples": pl.List(_SAMPLE_DTYPE),
    "kept": pl.Boolean,
    "reason": pl.Utf8,
    "detail": pl.Utf8,
    "n_sentences": pl.Int64,
    "n_cite_worthy": pl.Int64,
}
CANDIDATE_SCHEMA: dict[str, pl.DataType] = {
    "paper_id": pl.Utf8,
    "field": pl.Utf8,
    "parse_source": pl.Utf8,
    "reason": pl.Utf8,  # null: a candidate (its paragraphs are in citeworth_paragraphs)
    "detail": pl.Utf8,
    "paragraphs": pl.Int64,
    "kept_paragraphs": pl.Int64,
    "sentences": pl.Int64,
    "cite_worthy": pl.Int64,
}
SPLITS_SCHEMA: dict[str, pl.DataType] = {
    "paper_id": pl.Utf8,
    "section_index": pl.Int64,
    "field": pl.Utf8,
    "split": pl.Utf8,
    "n_sentences": pl.Int64,
    "n_cite_worthy": pl.Int64,
    "date": pl.Utf8,
}
#: Columns of a release line, in order (the released CiteWorth data plus ``field``).
RELEASE_COLUMNS: tuple[str, ...] = (
    "paper_id", "section_index", "section_title", "mag_field_of_study", "field", "original_text", "samples",
)  # fmt: skip


def release_dir(home: str | Path) -> Path:
    return Path(home) / "releases" / "citeworth"


@dataclass(slots=True)
class _LightSpan:
    start: int
    end: int
    text: str
    ref_id: str | None


class _LightParagraph:
    """A body paragraph whose cite spans are built only when read (most sections never are)."""

    __slots__ = ("text", "section", "_raw", "_spans")

    def __init__(self, text: str, section: str, raw_spans: list[dict]) -> None:
        self.text, self.section, self._raw = text, section, raw_spans
        self._spans: list[_LightSpan] | None = None

    @property
    def cite_spans(self) -> list[_LightSpan]:
        if self._spans is None:
            self._spans = [_LightSpan(s["start"], s["end"], s["text"], s.get("ref_id")) for s in self._raw]
        return self._spans


@dataclass(slots=True)
class _LightDoc:
    """The attributes of :class:`StructuredDoc` that :func:`extract_paragraphs` and
    :func:`paper_candidate` read (duck-typed). Pydantic's ``model_construct`` costs about
    15 µs an object: most of a day's time, for documents our own parsers already validated."""

    paper_id: str
    abstract: list[_LightParagraph]
    body_text: list[_LightParagraph]
    bib_entries: dict


def _light_doc(d: dict, n_bib: int | None = None) -> _LightDoc:
    """A :class:`_LightDoc` from a StructuredDoc dict, or from the parts :data:`_DOC_DTYPE`
    decodes with the bibliography's size in ``n_bib`` (only its emptiness matters).

    Malformed spans become a paragraph reason (``bad_span_offsets``) in
    :func:`check_paragraph`; a paragraph without text raises ``ValueError``.
    """

    def para(p: dict) -> _LightParagraph:
        text = p.get("text")
        if not isinstance(text, str):
            raise ValueError(f"paragraph without text: {str(p)[:80]}")
        return _LightParagraph(text, p.get("section") or "", p.get("cite_spans") or [])

    bib = d["bib_entries"] if "bib_entries" in d else dict.fromkeys(f"BIBREF{i}" for i in range(n_bib or 0))
    return _LightDoc(
        paper_id=d.get("paper_id") or "",
        abstract=[para(p) for p in d.get("abstract") or ()],
        body_text=[para(p) for p in d.get("body_text") or ()],
        bib_entries=bib or {},
    )


_SPAN_DTYPE = pl.Struct({"start": pl.Int64, "end": pl.Int64, "text": pl.Utf8, "ref_id": pl.Utf8})
_PARA_DTYPE = pl.Struct({"text": pl.Utf8, "section": pl.Utf8, "cite_spans": pl.List(_SPAN_DTYPE)})
_DOC_DTYPE = pl.Struct(
    {
        "paper_id": pl.Utf8,
        "source": pl.Utf8,
        "abstract": pl.List(_PARA_DTYPE),
        "body_text": pl.List(_PARA_DTYPE),
    }
)


def _decode_doc(text: str) -> dict:
    """The parts of a StructuredDoc JSON that CiteWorth reads (polars decodes only those: half
    the time of ``json.loads``); a document polars refuses is read again by ``json``, whose
    error says why (raises ValueError)."""
    try:
        return pl.Series([text], dtype=pl.Utf8).str.json_decode(_DOC_DTYPE).to_list()[0]
    except pl.exceptions.PolarsError:
        pass
    doc = json.loads(text)
    if not isinstance(doc, dict):
        raise ValueError(f"not a JSON object: {text[:40]!r}")
    return doc


def _paragraph_row(res: ParagraphResult) -> dict:
    return {
        "paper_id": res.paper_id,
        "section_index": res.section_index,
        "section_title": res.section_title,
        "field": res.field,
        "original_text": res.original_text,
        "samples": [s.to_dict() for s in res.samples],
        "kept": res.kept,
        "reason": res.reason,
        "detail": res.detail,
        "n_sentences": len(res.samples),
        "n_cite_worthy": sum(s.label == LABEL_CITE_WORTHY for s in res.samples),
    }


def _frame(rows: list[dict], schema: dict) -> pl.DataFrame:
    """Rows -> a frame with exactly ``schema`` (by row: polars builds nested rows in Rust)."""
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _chosen_texts(store, day: str) -> dict[tuple[str, str], tuple[str, int | None]]:
    """``{(parse source, paper id): (StructuredDoc JSON, bibliography size)}`` of a day's
    successful parses. JSON stays a string until its paper's chunk is decoded, so a day never
    holds every parsed document at once (as ``corpus.papers.days.chosen_docs`` does too)."""
    out: dict[tuple[str, str], tuple[str, int | None]] = {}
    for source, asset in (("grobid", "pdf_parses"), ("latex", "latex_parses")):
        if store.has_partition(asset, day):
            part = store.read_partition(asset, day).filter(pl.col("status") == "ok")
            rows = part.select("id", "doc", "n_bib_entries").iter_rows()
            out.update(((source, pid), (doc, n_bib)) for pid, doc, n_bib in rows)
    return out


PAPERS_PER_WORKER = 200  # below that a pool process costs more than it saves (its imports)

# (paper id, field, StructuredDoc JSON, bibliography size, require_citation, min_sentences)
_PaperTask = tuple[str, "str | None", str, "int | None", bool, int]


def _paper_paragraphs(task: _PaperTask) -> tuple[str | None, tuple[pl.DataFrame, dict]]:
    """One candidate paper: its candidate reason (None: a candidate), its paragraph rows as a
    frame and their counts (raises on a document it cannot read)."""
    paper_id, fld, text, n_bib, require_citation, min_sentences = task
    doc = _light_doc(_decode_doc(text), n_bib)
    reason = paper_candidate(doc)
    results = [] if reason else extract_paragraphs(
        doc, paper_id, fld, min_sentences=min_sentences, require_citation=require_citation
    )  # fmt: skip
    mine = [_paragraph_row(r) for r in results]
    kept = [r for r in mine if r["kept"]]
    counts = {
        "candidate": {
            "paragraphs": len(mine),
            "kept_paragraphs": len(kept),
            "sentences": sum(r["n_sentences"] for r in kept),
            "cite_worthy": sum(r["n_cite_worthy"] for r in kept),
        },
        "reasons": Counter(r["reason"] or "kept" for r in mine),
        "fields": Counter(r["field"] for r in kept),
    }
    return reason, (_frame(mine, PARAGRAPH_SCHEMA), counts)


def _paper_unreadable(task: _PaperTask, reason: str) -> tuple[str, str]:
    return P_ERROR, reason[:300]


def citeworth_day(
    home: str | Path, day: str, *, require_citation: bool = True, min_sentences: int = 1, workers: int = 1
) -> dict:
    """Every body paragraph of one day's papers, kept or with its reason (SPEC.md §7).

    Reads ``papers`` (kept flag, CiteWorth ``field``, chosen ``parse_source``) and the
    chosen parse; writes ``citeworth_paragraphs`` and ``citeworth_candidates`` for
    ``day`` atomically. The candidate papers are read over ``workers`` processes
    (:func:`corpus.parallel.map_papers`, at least :data:`PAPERS_PER_WORKER` papers each). A
    paper whose parse cannot be read, or that kills its process, is a candidate row with
    reason ``extract_error``, never a failed day. Returns a JSON-able summary.
    """
    from corpus.day_io import upstream
    from corpus.store import Store

    store = Store(Path(home))
    papers = upstream(store, "papers", day).select("id", "field", "kept", "drop_reason", "parse_source")
    texts = _chosen_texts(store, day)
    candidates: list[dict] = []
    todo: list[tuple[dict, str, int | None]] = []  # (candidate row, doc JSON, bibliography size)
    for pid, fld, kept, drop_reason, source in sorted(papers.iter_rows()):
        cand = {"paper_id": pid, "field": fld, "parse_source": source, "paragraphs": 0, "kept_paragraphs": 0}
        cand.update(sentences=0, cite_worthy=0)
        candidates.append(cand)
        text = texts.get((source, pid)) if source else None
        if not kept:
            cand.update(reason=P_DROPPED, detail=drop_reason)
        elif text is None:
            cand.update(reason=P_NO_TEXT, detail=source)
        elif fld not in CITEWORTH_FIELDS:
            cand.update(reason=P_NO_FIELD, detail=fld)
        else:
            todo.append((cand, *text))
    frames: list[pl.DataFrame] = []  # a frame per paper: few Python objects alive (GC time)
    reasons: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    tasks = [
        (cand["paper_id"], cand["field"], doc, n_bib, require_citation, min_sentences)
        for cand, doc, n_bib in todo
    ]
    outcomes = map_papers(
        _paper_paragraphs, tasks, workers, _paper_unreadable, min_per_worker=PAPERS_PER_WORKER
    )
    for (cand, _, _), (reason, found) in zip(todo, outcomes, strict=True):
        if reason == P_ERROR:
            cand.update(reason=P_ERROR, detail=found)
            continue
        frame, counts = found
        cand["reason"] = reason
        cand.update(counts["candidate"])
        reasons.update(counts["reasons"])
        fields.update(counts["fields"])
        if frame.height:
            frames.append(frame)
    paragraphs = pl.concat(frames, how="vertical").rechunk() if frames else _frame([], PARAGRAPH_SCHEMA)
    store.write_partition(PARAGRAPHS, day, paragraphs)
    store.write_partition(CANDIDATES, day, _frame(candidates, CANDIDATE_SCHEMA))
    return {
        "day": day,
        "papers": len(candidates),
        "candidates": sum(c.get("reason") is None for c in candidates),
        "paper_reasons": dict(Counter(c.get("reason") or "candidate" for c in candidates)),
        "errors": [(c["paper_id"], c["detail"]) for c in candidates if c.get("reason") == P_ERROR],
        "paragraphs": sum(reasons.values()),
        "kept": reasons.get("kept", 0),
        "reasons": dict(reasons),
        "sentences": sum(c["sentences"] for c in candidates),
        "cite_worthy": sum(c["cite_worthy"] for c in candidates),
        "fields": dict(fields),
    }


def default_cap(counts: dict[str, int]) -> int:
    """The default per-field cap **(choice)**: the median of the non-empty fields' counts.

    CiteWorth samples the 10 fields evenly. arXiv is mostly Physics, Mathematics and
    Computer Science, so capping at the *smallest* field (true evenness) would throw
    away nearly all data for the sake of, say, Psychology (q-bio.NC only). The median
    cuts the large fields down to a typical field's size and keeps the small ones whole.
    """
    sizes = [n for n in counts.values() if n > 0]
    return math.ceil(statistics.median(sizes)) if sizes else 0


_HASH_CHUNK = 200_000  # keys hashed at a time: Python strings for a slice only, not the corpus


def _key_hashes(keys: pl.DataFrame, seed: int) -> pl.Series:
    """:func:`balance`'s per-row hash of ``seed|paper_id|section_index``, a slice at a time."""
    parts = []
    for start in range(0, keys.height, _HASH_CHUNK):
        chunk = keys.slice(start, _HASH_CHUNK)
        ids, idx = chunk["paper_id"].to_list(), chunk["section_index"].to_list()
        parts.append(
            pl.Series("_h", [_hash_int(f"{seed}|{p}|{i}") for p, i in zip(ids, idx, strict=True)], pl.UInt64)
        )
    return pl.concat(parts) if parts else pl.Series("_h", [], pl.UInt64)


def balanced_keys(keys: pl.DataFrame, seed: int = 0, per_field: int | None = None) -> pl.DataFrame:
    """:func:`balance` on a frame of ``paper_id, section_index, field``: the same rows chosen,
    without a Python dict per row (a corpus-wide key table has millions of rows)."""
    bad = keys.filter(~pl.col("field").is_in(CITEWORTH_FIELDS))
    if bad.height:
        row = bad.row(0, named=True)
        raise ValueError(f"row {row['paper_id']!r}/{row['section_index']!r} has field {row['field']!r}")
    if keys.is_empty():
        return keys
    n = per_field if per_field is not None else keys.group_by("field").len()["len"].min()
    return (
        keys.with_columns(_key_hashes(keys, seed))
        .sort("_h", "paper_id")
        .filter(pl.int_range(pl.len()).over("field") < n)
        .drop("_h")
    )


def build_release(
    home: str | Path, *, seed: int = 0, per_field: int | None = None, out_dir: str | Path | None = None
) -> dict:
    """The CiteWorth release over every materialised day (SPEC.md §7), brought up to date.

    Kept paragraphs of every paper's latest day, balanced over the fields as
    :func:`balanced_keys` chooses (``per_field``, or :func:`default_cap` when ``None``, with
    ``seed``), split by :func:`split_for`; written to ``<out_dir>/{train,dev,test}.jsonl``
    (default ``$home/releases/citeworth``) sorted by (paper_id, section_index), with
    ``manifest.json``, a dataset card and the ``citeworth_splits`` key table. Only days whose
    content changed are read and only split files whose paragraphs changed are rewritten; the
    bytes are those of a build from scratch (:mod:`corpus.release.citeworth_release`). Returns counts,
    Table 2 statistics and ``mode``.
    """
    from corpus.release.citeworth_release import build_release as build

    return build(home, seed=seed, per_field=per_field, out_dir=out_dir)


class _SentenceStats:
    """:func:`stats` over released sentences (``{"text", "label", "split"}`` items), added a frame
    of rows at a time: the same numbers without a dict per sentence (lengths are a histogram,
    which gives the exact median)."""

    def __init__(self) -> None:
        self.lengths: Counter[int] = Counter()
        self.tokens = 0
        self.cite = 0
        self.per_split: Counter[str] = Counter()

    def add(self, split: str, rows: pl.DataFrame) -> None:
        flat = rows.select("samples").explode("samples", empty_as_null=False).unnest("samples")
        texts = flat["text"].to_list()
        self.lengths.update(map(len, texts))
        self.tokens += sum(len(_TOKEN_RE.findall(t)) for t in texts)
        self.cite += int((flat["label"] == LABEL_CITE_WORTHY).sum())
        self.per_split[split] += len(texts)

    def _kth(self, k: int) -> int:
        """The ``k``-th smallest length (0-based)."""
        for length in sorted(self.lengths):
            k -= self.lengths[length]
            if k < 0:
                return length
        raise IndexError(k)

    def result(self) -> dict:
        n = self.lengths.total()
        if n:
            total = sum(length * c for length, c in self.lengths.items())
            mid = n // 2
            median = self._kth(mid) if n % 2 else (self._kth(mid - 1) + self._kth(mid)) / 2
        out: dict = {
            "total_sentences": n,
            "total_tokens": self.tokens,
            "cite_worthy": self.cite,
            "non_cite_worthy": n - self.cite,
            "cite_worthy_share": self.cite / n if n else 0.0,
            "min_chars": min(self.lengths) if n else 0,
            "max_chars": max(self.lengths) if n else 0,
            "mean_chars": float(total) / n if n else 0.0,
            "median_chars": median if n else 0.0,
        }
        for split in SPLIT_NAMES:
            if n:
                out[f"{split}_sentences"] = self.per_split.get(split, 0)
        return out


def audit_release(out_dir: str | Path, examples: int = 10) -> dict:
    """Leftover citation markers in the released sentences (:func:`leftover_marker`).

    Reads the JSONL files line by line, so it audits exactly what was released. The
    rate is over all sentences of all splits; CiteWorth measured 1.9 %.
    """
    out_dir = Path(out_dir)
    n = 0
    per_split: dict[str, int] = {}
    by_marker: dict[str, int] = defaultdict(int)
    flagged: list[dict] = []
    for split in SPLIT_NAMES:
        path = out_dir / f"{split}.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: materialise citeworth_splits first")
        per_split[split] = 0
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                for s in row["samples"]:
                    n += 1
                    per_split[split] += 1
                    marker = leftover_marker(s["text"])
                    if marker:
                        by_marker[marker] += 1
                        if len(flagged) < examples:
                            flagged.append({"paper_id": row["paper_id"], "marker": marker, "text": s["text"]})
    bad = sum(by_marker.values())
    return {
        "sentences": n,
        "sentences_per_split": per_split,
        "with_marker": bad,
        "rate": bad / n if n else 0.0,
        "by_marker": dict(by_marker),
        "examples": flagged,
    }
