"""Dagster Pipes worker: one heavy stage (``corpus.<group>.days``) over a list of days.

Started as ``python -m corpus_assets.worker`` by :func:`corpus_assets.deployment.run_stage`
in a subprocess, a Docker container or a Kubernetes pod (``CORPUS_DEPLOYMENT``); the code
here is the same in all three. It imports ``dagster_pipes`` and ``corpus`` only (never
``dagster``), so it starts fast and needs nothing but the project's image.

Protocol (the Pipes extras): ``{"stage": <name>, "days": ["YYYY-MM-DD", ...],
"params": {"home": ..., "landing": ..., "fetch": {...}, "grobid": {...}}}``. For each day,
in order, the worker runs the stage and sends
``{"kind": "summary", "stage", "day", "summary"}`` with ``report_custom_message``; the asset
reads its own metadata from the store afterwards, so nothing is reported as a
materialisation here. A failing day sends ``{"kind": "error", "stage", "day", "error",
"traceback"}`` and the worker exits non-zero (later days are not run, as in process).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import traceback
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

StageName = Literal[
    "arxiv_pdfs_day", "arxiv_sources_day", "grobid_tei_day", "latex_parses_day", "pdf_parses_day"
]
NEEDS_LANDING = {"arxiv_pdfs_day", "arxiv_sources_day", "grobid_tei_day"}
TRACEBACK_CHARS = 4000  # the tail of a failing day's traceback sent back to the orchestrator


class StageParams(BaseModel):
    """What every stage function takes besides the day: plain data, so it crosses a process boundary."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    home: str
    landing: str | None = None
    fetch: dict[str, Any] | None = None  # corpus.ingest.days.FetchSettings fields
    grobid: dict[str, Any] | None = (
        None  # corpus.parse.grobid.GrobidClient keyword arguments; None = no Grobid
    )
    grobid_policy: dict[str, Any] | None = None  # corpus.parse.grobid_policy.GrobidPolicy fields
    workers: int = Field(default=1, ge=1, le=1024)  # processes for per-paper work inside a day


class StageRequest(BaseModel):
    """The Pipes extras of one worker launch, checked before anything runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: StageName
    days: list[str]
    params: StageParams

    @field_validator("days")
    @classmethod
    def _iso_days(cls, days: list[str]) -> list[str]:
        if not days:
            raise ValueError("days must name at least one day")
        for day in days:
            try:
                same = dt.date.fromisoformat(day).isoformat() == day
            except ValueError:
                same = False
            if not same:
                raise ValueError(f"day must be YYYY-MM-DD, got {day!r}")
        if len(set(days)) != len(days):
            raise ValueError(f"days repeat: {days}")
        return days

    @model_validator(mode="after")
    def _inputs_present(self) -> StageRequest:
        if self.stage in NEEDS_LANDING and not self.params.landing:
            raise ValueError(f"{self.stage} needs params.landing (the landing zone)")
        if self.params.fetch is not None:
            fetch_settings(self.params)  # unknown or malformed fields fail here, not mid-run
        return self


def fetch_settings(params: StageParams):
    from corpus.ingest.days import FetchSettings

    try:
        return FetchSettings(**(params.fetch or {}))
    except TypeError as exc:
        raise ValueError(f"params.fetch: {exc}") from None


def _pdfs(p: StageParams, day: str, log: logging.Logger) -> dict:
    from corpus.ingest.days import arxiv_pdfs_day

    return arxiv_pdfs_day(p.home, p.landing, day, fetch_settings(p), log=log.info, workers=p.workers)


def _sources(p: StageParams, day: str, log: logging.Logger) -> dict:
    from corpus.ingest.days import arxiv_sources_day

    return arxiv_sources_day(p.home, p.landing, day, fetch_settings(p), log=log.info, workers=p.workers)


def _tei(p: StageParams, day: str, log: logging.Logger) -> dict:
    from corpus.parse.days import grobid_tei_day

    return grobid_tei_day(p.home, p.landing, day, p.grobid, log=log, policy=p.grobid_policy)


def _latex(p: StageParams, day: str, log: logging.Logger) -> dict:
    from corpus.parse.days import latex_parses_day

    return latex_parses_day(p.home, day, workers=p.workers)


def _pdf_parses(p: StageParams, day: str, log: logging.Logger) -> dict:
    from corpus.parse.days import pdf_parses_day

    return pdf_parses_day(p.home, day, workers=p.workers)


# The only stages a worker runs: a fixed table, never getattr on a name from outside.
STAGES: dict[str, Callable[[StageParams, str, logging.Logger], dict]] = {
    "arxiv_pdfs_day": _pdfs,
    "arxiv_sources_day": _sources,
    "grobid_tei_day": _tei,
    "latex_parses_day": _latex,
    "pdf_parses_day": _pdf_parses,
}


def jsonable(value: Any) -> Any:
    """A summary as plain JSON (dates and other odd values as strings) so the message always sends."""
    return json.loads(json.dumps(value, default=str))


def run_request(request: StageRequest, pipes) -> None:
    """Run the stage for each day, sending one summary (or one error) per day."""
    fn = STAGES[request.stage]
    for day in request.days:
        pipes.log.info(f"{request.stage} {day}: start")
        try:
            summary = fn(request.params, day, pipes.log)
        except Exception as exc:
            tb = traceback.format_exc()
            pipes.report_custom_message(
                {
                    "kind": "error",
                    "stage": request.stage,
                    "day": day,
                    "error": f"{type(exc).__name__}: {exc}",
                    "traceback": tb[-TRACEBACK_CHARS:],
                }
            )
            raise
        pipes.report_custom_message(
            {"kind": "summary", "stage": request.stage, "day": day, "summary": jsonable(summary)}
        )
        pipes.log.info(f"{request.stage} {day}: done")


def main() -> None:
    from dagster_pipes import open_dagster_pipes

    from corpus.parallel import interrupts_end_waits

    interrupts_end_waits()  # the step's SIGINT stops the worker's waits too
    with open_dagster_pipes() as pipes:
        run_request(StageRequest.model_validate(pipes.extras), pipes)


if __name__ == "__main__":
    main()
