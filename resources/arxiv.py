"""arXiv as a Dagster resource: the OAI-PMH endpoint (and, later, PDFs and e-prints).

``source`` chooses where records come from: ``landing`` reads only the landing
zone and never touches the network (the demo and every test); ``arxiv``
harvests live, saving each page into the landing zone before parsing it; ``bulk``
reads metadata as ``landing`` does and PDFs / e-prints from arXiv's bulk archives
(``bulk``, from ``CORPUS_BULK``: a directory laid out like ``s3://arxiv``, an ``s3://``
or a ``gs://`` URL), falling back to the polite per-paper download for what they do
not hold yet unless ``bulk_fallback`` is ``none``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import Field

from corpus.ingest.harvest import OaiHarvester
from corpus.ingest.http import USER_AGENT, PoliteClient, RetryPolicy
from corpus.ingest.oai import METADATA_PREFIXES, OAI_ENDPOINT


def _bulk_root(value: str) -> str:
    """A local bulk root made absolute (workers may start elsewhere); URLs as given."""
    value = value.strip()
    return value if not value or "://" in value else str(Path(value).resolve())


class ArxivResource(dg.ConfigurableResource):
    source: Literal["landing", "arxiv", "bulk"] = "landing"
    bulk: str = Field(default="", description="bulk root: directory, s3:// or gs:// URL (CORPUS_BULK)")
    bulk_fallback: Literal["arxiv", "none"] = Field(
        default="arxiv",
        description="what the bulk data lacks: fetch it politely from arXiv, or mark it missing",
    )
    bulk_layout: Literal["tars", "kaggle"] = Field(
        default="tars", description="tars: s3://arxiv's; kaggle: gs://arxiv-dataset/arxiv (PDFs only)"
    )
    oai_url: str = OAI_ENDPOINT
    web_url: str = Field(default="https://arxiv.org", description="base of /pdf/<id> and /e-print/<id>")
    metadata_prefix: str = "arXiv"
    set_spec: str = Field(default="", description="optional OAI set, e.g. 'cs' or 'physics:hep-th'")
    min_interval_s: float = Field(default=3.0, ge=0.0, description="arXiv asks for >= 3 s between requests")
    timeout_s: float = 120.0
    max_retries: int = Field(default=5, ge=0, le=20)
    user_agent: str = USER_AGENT

    @classmethod
    def from_env(cls) -> ArxivResource:
        return cls(
            source=os.environ.get("CORPUS_SOURCE", "landing"),  # type: ignore[arg-type]
            oai_url=os.environ.get("CORPUS_OAI_URL", OAI_ENDPOINT),
            web_url=os.environ.get("CORPUS_ARXIV_URL", "https://arxiv.org"),
            bulk=_bulk_root(os.environ.get("CORPUS_BULK", "")),
            bulk_fallback=os.environ.get("CORPUS_BULK_FALLBACK", "arxiv"),  # type: ignore[arg-type]
            bulk_layout=os.environ.get("CORPUS_BULK_LAYOUT", "tars"),  # type: ignore[arg-type]
        )

    def model_post_init(self, _ctx) -> None:
        if self.metadata_prefix not in METADATA_PREFIXES:
            raise ValueError(
                f"metadata_prefix must be one of {METADATA_PREFIXES}, not {self.metadata_prefix!r}"
            )

    def client(self, log: Callable[[str], None] | None = None) -> PoliteClient:
        return PoliteClient(
            min_interval_s=self.min_interval_s,
            timeout_s=self.timeout_s,
            retry=RetryPolicy(max_retries=self.max_retries),
            user_agent=self.user_agent,
            log=log,
        )

    def harvester(self, log: Callable[[str], None] | None = None) -> OaiHarvester:
        return OaiHarvester(self.client(log), base_url=self.oai_url, log=log)
