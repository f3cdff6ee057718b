"""The Grobid service as a Dagster resource: settings validated by pydantic, a client out.

``base_url`` defaults to ``$GROBID_URL`` (DESIGN.md §7), else http://localhost:8070.
``concurrency=0`` keeps as many requests in flight as the server has engines
(``/api/health`` ``pool.maxActive``), or ``fallback_concurrency`` when the server does
not say. Consolidation is off by default: it makes Grobid call external services.
``policy`` (``$CORPUS_GROBID``: ``fallback`` or ``all``) and ``sample``
(``$CORPUS_GROBID_SAMPLE``) say which PDFs are sent at all (corpus.parse.grobid_policy).
"""

from __future__ import annotations

import os

import dagster as dg
from pydantic import Field, field_validator

from corpus.parse.grobid import DEFAULT_URL, GrobidClient, GrobidOptions, Logger
from corpus.parse.grobid_policy import POLICIES, GrobidPolicy


def _default_url() -> str:
    return os.environ.get("GROBID_URL") or DEFAULT_URL


def _default_policy() -> str:
    return GrobidPolicy.from_env().mode


def _default_sample() -> float:
    return GrobidPolicy.from_env().sample


class GrobidResource(dg.ConfigurableResource):
    """Where Grobid is and how hard to push it; ``client()`` gives a :class:`GrobidClient`."""

    base_url: str = Field(
        default_factory=_default_url, validate_default=True, description="Grobid root URL ($GROBID_URL)"
    )
    timeout_s: float = Field(default=120.0, gt=0, le=3600, description="per-request timeout, seconds")
    concurrency: int = Field(default=0, ge=0, le=256, description="requests in flight; 0 = ask /api/health")
    fallback_concurrency: int = Field(default=4, ge=1, le=256, description="when /api/health does not say")
    headroom: int = Field(
        default=0, ge=0, le=64, description="requests beyond concurrency (see GrobidClient)"
    )
    max_retries: int = Field(default=8, ge=0, le=50, description="retries of a 503 (pool full) answer")
    backoff_s: float = Field(default=0.5, ge=0, le=60, description="first backoff; doubles per retry")
    policy: str = Field(
        default_factory=_default_policy,
        description=f"which PDFs are sent ($CORPUS_GROBID): {' | '.join(POLICIES)}",
    )
    sample: float = Field(
        default_factory=_default_sample,
        ge=0,
        le=1,
        description="share of LaTeX-parsed papers sent anyway, to compare the parses ($CORPUS_GROBID_SAMPLE)",
    )
    consolidate_header: bool = False
    consolidate_citations: bool = False
    include_raw_citations: bool = True
    tei_coordinates: bool = False
    segment_sentences: bool = False

    @field_validator("base_url", mode="before")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if isinstance(value, dg.EnvVar):  # resolved later by Dagster; the client checks it then
            return value
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {value!r}")
        return value

    @field_validator("policy", mode="before")
    @classmethod
    def _known_policy(cls, value: str) -> str:
        if isinstance(value, dg.EnvVar):
            return value
        return GrobidPolicy(str(value).strip().lower()).mode

    def grobid_policy(self) -> GrobidPolicy:
        return GrobidPolicy(self.policy, self.sample)

    def options(self) -> GrobidOptions:
        return GrobidOptions(
            consolidate_header=self.consolidate_header,
            consolidate_citations=self.consolidate_citations,
            include_raw_citations=self.include_raw_citations,
            tei_coordinates=self.tei_coordinates,
            segment_sentences=self.segment_sentences,
        )

    def client(self, log: Logger | None = None) -> GrobidClient:
        """A new client (close it, or use it as a context manager); pass ``context.log``."""
        return GrobidClient(
            self.base_url,
            timeout_s=self.timeout_s,
            concurrency=self.concurrency or None,
            max_retries=self.max_retries,
            backoff=self.backoff_s,
            options=self.options(),
            fallback_concurrency=self.fallback_concurrency,
            headroom=self.headroom,
            log=log,
        )
