"""Which PDFs go to Grobid: ``CORPUS_GROBID`` and ``CORPUS_GROBID_SAMPLE``.

Grobid is the one stage whose cost is counted in engine-hours (docs/sizing.md: ~1.5 s per PDF
per engine, ~1,000 engine-hours for all of arXiv), and most arXiv papers have LaTeX source
that :mod:`corpus.parse.latex` parses, which ``papers`` prefers anyway (S2ORC §2.2). So:

* ``fallback`` (the default) sends a paper's PDF only when the LaTeX parse cannot serve: there
  is none (no e-print, one that only wraps a PDF, no main ``.tex``: ``no_latex``), it failed
  (``latex_failed``), or it falls short of what the PDF shows (:func:`latex_shortfall`);
* ``all`` sends every PDF that passed the filters (the behaviour before this policy).

``CORPUS_GROBID_SAMPLE`` (a share, default 0) sends that share of the papers whose LaTeX parse
serves too (``sample``), chosen by a hash of the paper id, so the same papers are chosen on
every run and by every machine: the two parses of those papers can be compared.

A TEI that costs no Grobid time (in the TEI cache, keyed by the PDF's sha256, or in
``landing/tei``) is used whatever the policy; a PDF the policy does not send is a ``skipped``
row of ``grobid_tei`` whose reason says why (:data:`SKIP_REASON`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

POLICIES = ("fallback", "all")
POLICY_ENV, SAMPLE_ENV = "CORPUS_GROBID", "CORPUS_GROBID_SAMPLE"

MIN_BODY_CHARS_PER_PAGE = 250
"""A LaTeX body under this many characters per PDF page is taken as a failed expansion (a
missing ``\\input``, a wrapper around ``\\includepdf``, text the parser lost). 24 real papers
with PDF and Grobid TEI in ../shared (tests/test_grobid_policy.py) hold 1,018 to 3,633 body
characters per page (median ~2,000): this is a quarter of the sparsest."""

SKIP_REASON = "latex_parsed"  # grobid_tei.reason of a PDF not sent: its LaTeX parse serves
SEND_REASONS = {
    "all": "CORPUS_GROBID=all: every PDF that passed the filters",
    "no_latex": "no LaTeX parse (no e-print, no main .tex, a PDF-only e-print, ...)",
    "latex_failed": "the LaTeX parse failed",
    "latex_short_body": f"the LaTeX body is under {MIN_BODY_CHARS_PER_PAGE} characters per PDF page",
    "latex_no_bib": "the LaTeX parse has no bibliography entries",
    "sample": f"in the {SAMPLE_ENV} share of papers whose LaTeX parse serves (to compare the parses)",
}
"""Why a PDF goes to Grobid (the ``wanted`` counts of the asset's metadata)."""


@dataclass(frozen=True)
class GrobidPolicy:
    """``mode`` (:data:`POLICIES`) and ``sample``, the share of LaTeX-parsed papers sent anyway."""

    mode: str = "fallback"
    sample: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in POLICIES:
            raise ValueError(f"{POLICY_ENV}={self.mode!r}: expected one of {', '.join(POLICIES)}")
        if not 0.0 <= self.sample <= 1.0:
            raise ValueError(f"{SAMPLE_ENV}={self.sample!r}: expected a share from 0 to 1")

    @property
    def reads_latex(self) -> bool:
        """Whether the decision needs the day's ``latex_parses`` (``all`` sends everything)."""
        return self.mode == "fallback"

    @classmethod
    def from_env(cls) -> GrobidPolicy:
        mode = os.environ.get(POLICY_ENV, "").strip().lower() or "fallback"
        raw = os.environ.get(SAMPLE_ENV, "").strip() or "0"
        try:
            sample = float(raw)
        except ValueError:
            raise ValueError(f"{SAMPLE_ENV}={raw!r} is not a number") from None
        return cls(mode, sample)


def sampled(paper_id: str, share: float) -> bool:
    """Whether ``paper_id`` is in the sample ``share``: the same answer on every run and machine
    (a hash of the id, not a random draw), and a larger share keeps every paper a smaller one had."""
    if share <= 0.0:
        return False
    digest = hashlib.sha256(f"grobid-sample|{paper_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def latex_shortfall(latex: Mapping[str, Any], pages: int | None) -> str | None:
    """Why a LaTeX parse that succeeded cannot serve (a :data:`SEND_REASONS` code), or None.

    ``latex`` is its ``latex_parses`` row (``body_chars``, ``n_bib_entries``), ``pages`` the
    PDF's page count. The signals are the ones :func:`corpus.papers.metadata.choose_parse` acts
    on, measured without Grobid's parse: a body far shorter than the PDF's pages hold (it would
    lose to Grobid's as ``latex_body_short``), and no bibliography (``latex_no_bib``: the
    citation graph would lose the paper's references)."""
    if (latex.get("body_chars") or 0) < MIN_BODY_CHARS_PER_PAGE * max(pages or 1, 1):
        return "latex_short_body"
    if not latex.get("n_bib_entries"):
        return "latex_no_bib"
    return None


def send_reason(
    policy: GrobidPolicy, paper_id: str, latex: Mapping[str, Any] | None, pages: int | None
) -> str | None:
    """Why the paper's PDF goes to Grobid (a :data:`SEND_REASONS` code), or None: its LaTeX parse
    serves and the PDF is skipped. ``latex``: its ``latex_parses`` row (None: no row)."""
    if policy.mode == "all":
        return "all"
    if latex is None or latex.get("status") == "skipped":
        return "no_latex"
    if latex.get("status") != "ok":
        return "latex_failed"
    why = latex_shortfall(latex, pages)
    if why is not None:
        return why
    return "sample" if sampled(paper_id, policy.sample) else None
