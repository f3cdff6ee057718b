"""The ingest stages, one day at a time (no Dagster): ``arxiv_pdfs`` and ``arxiv_sources``.

An asset calls these in process, or a Dagster Pipes worker calls the same function in a
subprocess / container / pod (``CORPUS_DEPLOYMENT``). Each function reads its inputs from the
store, writes its asset's partition atomically and returns a JSON-able summary that becomes the
materialisation's metadata."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from corpus.day_io import frame, previous_rows, upstream
from corpus.ingest.fetch import Fetcher
from corpus.ingest.http import PoliteClient, RetryPolicy
from corpus.ingest.pdf import PdfProbe, pdf_row, probe_pdf
from corpus.parallel import map_papers
from corpus.scratch import process_scratch
from corpus.store import BlobStore, Store


@dataclass(frozen=True)
class FetchSettings:
    """How files are fetched: from the landing zone only, from arXiv (politely), or from
    arXiv's bulk archives (``bulk``: the root ``bulk``, falling back to arXiv for what it
    does not hold when ``bulk_fallback`` is ``arxiv``)."""

    mode: str = "landing"  # landing | arxiv | bulk
    bulk: str = ""  # bulk root: a directory, s3:// or gs:// URL (CORPUS_BULK)
    bulk_fallback: str = "arxiv"  # arxiv | none
    bulk_layout: str = "tars"  # tars (s3://arxiv) | kaggle (gs://arxiv-dataset/arxiv, PDFs only)
    web_url: str = "https://arxiv.org"
    min_interval_s: float = 3.0
    timeout_s: float = 120.0
    max_retries: int = 5

    def client(self, log=None) -> PoliteClient | None:
        if self.mode != "arxiv" and not (self.mode == "bulk" and self.bulk_fallback == "arxiv"):
            return None
        return PoliteClient(
            min_interval_s=self.min_interval_s,
            timeout_s=self.timeout_s,
            retry=RetryPolicy(max_retries=self.max_retries),
            log=log,
        )

    def fetcher_options(self, home: str | Path) -> dict:
        """Fetcher keyword arguments for the bulk mode (none for the others)."""
        if self.mode != "bulk":
            return {}
        from corpus.ingest.bulk_fetch import BulkReader

        if not self.bulk:
            raise ValueError("CORPUS_SOURCE=bulk needs CORPUS_BULK: a directory, s3:// or gs:// URL")
        reader = BulkReader.open(self.bulk, home, layout=self.bulk_layout)
        return {"bulk": reader, "bulk_fallback": self.bulk_fallback == "arxiv"}


PDF_SCHEMA = {
    "id": pl.Utf8,
    "version": pl.Int64,
    "status": pl.Utf8,  # stored (the blob is in the store) | missing | failed (fetch)
    "source": pl.Utf8,  # landing | bulk | arxiv: where the blob came from (this run's facts: its metadata)
    "sha256": pl.Utf8,
    "md5": pl.Utf8,
    "bytes": pl.Int64,
    "pages": pl.Int64,
    "first_page_width": pl.Float64,
    "first_page_height": pl.Float64,
    "rotate": pl.Int64,
    "encrypted": pl.Boolean,
    "probe_error": pl.Utf8,
    "passed": pl.Boolean,  # goes to Grobid
    "filter_reason": pl.Utf8,  # unreadable | too_many_pages | landscape | missing | failed
    "fetch_reason": pl.Utf8,
    "http_status": pl.Int64,
}


def known_blobs(store: Store, asset: str, day: str) -> dict[str, tuple[str, str]]:
    """Blobs the previous materialisation of this day already stored: never fetched again."""
    return {
        pid: (r["sha256"], r["md5"]) for pid, r in previous_rows(store, asset, day).items() if r["sha256"]
    }


def papers_of_day(store: Store, day: str) -> list[tuple[str, int | None]]:
    meta = upstream(store, "arxiv_metadata", day).filter(~pl.col("deleted"))
    return list(meta.select("id", "version").iter_rows())


def fetch_columns(paper_id: str, version: int | None, fetched, previous: dict | None = None) -> dict:
    """The columns every file asset shares: which file, from where, and how the fetch went.

    They describe the file, not this run, so re-running an unchanged day writes the same
    rows: ``status`` is ``stored`` whenever the blob is in the store (whether this run
    copied it or found it there), and a blob known from the previous materialisation
    keeps that row's ``source`` (landing | arxiv) and HTTP status. What this run did
    (stored/cached, known, downloads) goes into the stage summary, i.e. the run's metadata.
    """
    status, source, http_status = fetched.status, fetched.source, fetched.http_status
    if status == "cached":
        status = "stored"
    if source == "known" and previous and previous.get("sha256") == fetched.sha256:
        source, http_status = previous.get("source") or source, previous.get("http_status")
    return {
        "id": paper_id,
        "version": version,
        "status": status,
        "source": source,
        "sha256": fetched.sha256,
        "md5": fetched.md5,
        "bytes": fetched.bytes,
        "fetch_reason": fetched.reason,
        "http_status": http_status,
    }


def _probe_row(path: str) -> dict:
    """One PDF's probe columns and App. B verdict (run in a worker process)."""
    return pdf_row(probe_pdf(path))


def _probe_failed(path: str, reason: str) -> dict:
    return pdf_row(PdfProbe(error=f"probe failed: {reason}"))


def arxiv_pdfs_day(
    home: str | Path, landing: str | Path, day: str, fetch: FetchSettings, log=None, workers: int = 1
) -> dict:
    """Fetch, store and probe the PDFs of one day; write ``arxiv_pdfs/date=<day>``.

    Fetching is sequential (one connection, politely); probing, the CPU-bound part, runs
    over ``workers`` processes (:func:`corpus.parallel.map_papers`)."""
    store, blobs = Store(Path(home)), BlobStore(Path(home) / "blobs")
    rows = []
    status: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    client = fetch.client(log)
    previous = previous_rows(store, "arxiv_pdfs", day)
    with Fetcher(
        blobs, Path(landing), mode=fetch.mode, client=client, base_url=fetch.web_url,
        known=known_blobs(store, "arxiv_pdfs", day), **fetch.fetcher_options(home),
    ) as fetcher:  # fmt: skip
        for paper_id, version in papers_of_day(store, day):
            fetched = fetcher.fetch(paper_id, "pdf", version)
            sources[fetched.source or "none"] += 1
            row = fetch_columns(paper_id, version, fetched, previous.get(paper_id))
            if not fetched.sha256:
                row.update(passed=False, filter_reason=fetched.status)  # missing | failed
            rows.append(row)
            status[fetched.status] += 1
    probed = [r for r in rows if r["sha256"]]
    paths = [str(blobs.path("pdf", r["sha256"])) for r in probed]
    for row, probe in zip(probed, map_papers(_probe_row, paths, workers, _probe_failed), strict=True):
        row["probe_error"] = probe.pop("error", None)
        row.update(probe)
    frame = pl.DataFrame([{k: r.get(k) for k in PDF_SCHEMA} for r in rows], schema=PDF_SCHEMA)
    store.write_partition("arxiv_pdfs", day, frame)
    return {
        "day": day,
        "papers": frame.height,
        "status": dict(status),  # this run: stored (copied now) | cached (already there) | ...
        "sources": dict(sources),  # this run: known (previous materialisation) | landing | arxiv
        "filter_reasons": [r.get("filter_reason") for r in rows],
        "downloads": fetcher.downloads,
    }


SOURCE_SCHEMA = {
    "id": pl.Utf8,
    "version": pl.Int64,
    "status": pl.Utf8,  # fetch: stored | cached | missing | failed
    "source": pl.Utf8,
    "sha256": pl.Utf8,
    "md5": pl.Utf8,
    "bytes": pl.Int64,
    "kind": pl.Utf8,  # tar | gzip_tex | tex | pdf | ps | empty | unknown
    "n_files": pl.Int64,
    "skipped": pl.List(pl.Utf8),
    "main": pl.Utf8,
    "has_bbl": pl.Boolean,
    "n_bib_files": pl.Int64,
    "non_utf8": pl.List(pl.Utf8),
    "warnings": pl.List(pl.Utf8),
    "failure": pl.Utf8,  # a failure code (unsafe_path, pdf_only, no_main_tex, input_loop, ...) or null
    "failure_message": pl.Utf8,
    "fetch_reason": pl.Utf8,
    "http_status": pl.Int64,
    "latex_source": pl.Utf8,  # corpus.ingest.eprint.LatexSource as JSON: expanded text, .bbl, .bib
}


def _unpack_row(task: tuple[str, str, str]) -> dict:
    """Unpack one e-print into its own scratch directory and assemble its LaTeX (a worker
    process): the columns of ``arxiv_sources`` that describe the source."""
    import shutil

    from corpus.ingest.eprint import load_eprint

    _paper_id, blob, scratch = task
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        unpacked, source, failure = load_eprint(Path(blob), Path(scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    row: dict = {"kind": unpacked.kind, "n_files": len(unpacked.files), "skipped": unpacked.skipped}
    if failure is not None:  # the scratch path is this process's: not in the row
        row.update(failure=failure.code, failure_message=failure.message.replace(str(scratch), "<e-print>"))
    if source is not None:
        row.update(
            main=source.main,
            has_bbl=bool(source.bbl),
            n_bib_files=len(source.bib),
            non_utf8=source.non_utf8,
            warnings=source.warnings,
            latex_source=source.model_dump_json(),
        )
    return row


def _unpack_failed(task: tuple[str, str, str], reason: str) -> dict:
    return {"failure": "unpack_error", "failure_message": reason}


def arxiv_sources_day(
    home: str | Path, landing: str | Path, day: str, fetch: FetchSettings, log=None, workers: int = 1
) -> dict:
    """Fetch the e-prints of one day (sequentially), then unpack each without trusting it and
    assemble its LaTeX over ``workers`` processes."""
    import shutil

    from corpus.ingest import arxiv_ids

    store, blobs = Store(Path(home)), BlobStore(Path(home) / "blobs")
    # This process's own scratch (corpus.scratch): two runs of one day never share it, and
    # what a killed run leaves there is removed by the next run.
    scratch_root = process_scratch(home) / "eprints"
    rows = []
    status: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    previous = previous_rows(store, "arxiv_sources", day)
    with Fetcher(
        blobs, Path(landing), mode=fetch.mode, client=fetch.client(log), base_url=fetch.web_url,
        known=known_blobs(store, "arxiv_sources", day), **fetch.fetcher_options(home),
    ) as fetcher:  # fmt: skip
        for paper_id, version in papers_of_day(store, day):
            fetched = fetcher.fetch(paper_id, "eprint", version)
            status[fetched.status] += 1
            sources[fetched.source or "none"] += 1
            columns = fetch_columns(paper_id, version, fetched, previous.get(paper_id))
            row = {**columns, "skipped": [], "non_utf8": [], "warnings": []}
            if not fetched.sha256:
                row.update(failure=fetched.status, failure_message=fetched.reason)
            rows.append(row)
    fetched_rows = [r for r in rows if r["sha256"]]
    tasks = [
        (r["id"], str(blobs.path("eprint", r["sha256"])), str(scratch_root / arxiv_ids.to_file_name(r["id"])))
        for r in fetched_rows
    ]
    for row, unpacked in zip(
        fetched_rows, map_papers(_unpack_row, tasks, workers, _unpack_failed), strict=True
    ):
        row.update(unpacked)
    shutil.rmtree(scratch_root, ignore_errors=True)
    store.write_partition("arxiv_sources", day, frame(rows, SOURCE_SCHEMA))
    return {
        "day": day,
        "papers": len(rows),
        "status": dict(status),  # this run: stored (copied now) | cached (already there) | ...
        "sources": dict(sources),  # this run: known (previous materialisation) | landing | arxiv
        "kinds": dict(Counter(r.get("kind") or "none" for r in rows)),
        "failures": dict(Counter(r.get("failure") or "ok" for r in rows)),
    }
