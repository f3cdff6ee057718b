"""Get a paper's PDF or e-print into the content-addressed blob store (SPEC.md §2, DESIGN.md §2-3).

For one canonical arXiv id and a kind (``pdf`` | ``eprint``), :class:`Fetcher`
looks, in this order, at:

1. ``known`` -- ``{id: sha256}`` (or ``{id: (sha256, md5)}``) from the previous
   materialisation: if that blob is in the store, nothing is read or fetched
   ("a blob already stored is never fetched again"). To pick up a new arXiv
   version, leave its id out of ``known``.
2. the landing zone -- ``landing/pdf/<file_name>.pdf`` or
   ``landing/src/<file_name>`` + one of :data:`EPRINT_SUFFIXES` (bulk data, or
   an earlier download), read under :mod:`corpus.ingest.landing_files`' rules: a link
   out of the landing zone, a FIFO, a directory or a file over the size cap is
   ``failed`` with the reason, and nothing of it is read or copied;
3. only in mode ``bulk``: arXiv's bulk tars, through ``bulk`` (a
   :class:`corpus.ingest.bulk_fetch.BulkReader`): the paper's latest version read by offset;
   what the bulk data does not hold (yet), or holds only in an older version, goes on
   to step 4 when ``bulk_fallback`` is on, else it is ``missing``;
4. only in mode ``arxiv`` (or ``bulk`` with ``bulk_fallback``): ``<base_url>/pdf/<id>`` or ``<base_url>/e-print/<id>``
   (latest version) through :class:`~corpus.ingest.http.PoliteClient`. The body lands
   in the process's scratch directory (:mod:`corpus.scratch`; cleaned by the next
   run if this one is killed), is checked (a PDF must start with ``%PDF-``; an
   e-print is named by :func:`sniff_eprint`, and an HTML error page is neither)
   and is then renamed into the landing zone, so a partial or wrong download
   never becomes a landing file nor a blob.

Mode ``landing`` never touches the network; what it cannot find is ``missing``.
Every outcome is a :class:`FetchResult` row, never an exception: ``stored``
(new blob), ``cached`` (blob was already there), ``missing`` (not in the
landing zone, or HTTP 404/410), ``failed`` (with a reason).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Literal

import httpx
from pydantic import BaseModel, ConfigDict

from corpus.ingest import arxiv_ids
from corpus.ingest.http import HttpError, PoliteClient
from corpus.ingest.landing_files import LandingReader, LandingRefused
from corpus.scratch import tmp_dir_for
from corpus.store import BlobStore

ARXIV_BASE_URL = "https://arxiv.org"
KINDS = ("pdf", "eprint")
MODES = ("landing", "arxiv", "bulk")
STORED, CACHED, MISSING, FAILED = "stored", "cached", "missing", "failed"
EPRINT_SUFFIXES = (".tar.gz", ".gz", ".tar", ".pdf", ".ps", ".tex")  # landing/src lookup order
_URL_PATH = {"pdf": "pdf", "eprint": "e-print"}
_LANDING_DIR = {"pdf": "pdf", "eprint": "src"}
_NOT_FOUND = frozenset({404, 410})

Kind = Literal["pdf", "eprint"]
Status = Literal["stored", "cached", "missing", "failed"]


class FetchResult(BaseModel):
    """One row of the fetch log (and the file part of an ``arxiv_pdfs`` / ``arxiv_sources`` row)."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: Kind
    status: Status
    sha256: str | None = None
    md5: str | None = None
    bytes: int | None = None
    source: Literal["known", "landing", "bulk", "arxiv"] | None = None
    reason: str | None = None
    http_status: int | None = None


def sniff_eprint(head: bytes) -> str | None:
    """File suffix for an e-print from its first bytes (64 KiB is plenty), or ``None`` if it is not one.

    arXiv serves a gzip'd tar, a gzip'd single file or a bare PDF; a bare tar,
    PostScript or TeX is accepted too (corpus.ingest.eprint unpacks by content, not by
    suffix). An HTML page (an error or "source not available" notice), an empty
    body or other binary data is not an e-print.
    """
    if head[:2] == b"\x1f\x8b":
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 512)
        except zlib.error:
            return ".gz"  # kept as served; unpacking will say what is wrong
        return ".tar.gz" if inner[257:262] == b"ustar" else ".gz"
    start = head.lstrip()[:64]
    if start[:5] == b"%PDF-":
        return ".pdf"
    if head[257:262] == b"ustar":
        return ".tar"
    if start[:4] == b"%!PS":
        return ".ps"
    if not start or start[:1] == b"<" or b"\0" in head[:8192]:
        return None
    return ".tex"


def sniff_pdf(head: bytes) -> str | None:
    """``.pdf`` if the first KiB holds the PDF header (readers allow junk before it)."""
    return ".pdf" if b"%PDF-" in head[:1024] else None


_SNIFF = {"pdf": sniff_pdf, "eprint": sniff_eprint}


def _hash_file(path: Path, chunk: int = 1 << 20) -> tuple[str, str, int]:
    with open(path, "rb") as fh:
        return _hash_stream(fh, chunk)


def _hash_stream(fh, chunk: int = 1 << 20) -> tuple[str, str, int]:
    sha, md5, size = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
    while block := fh.read(chunk):
        sha.update(block)
        md5.update(block)
        size += len(block)
    return sha.hexdigest(), md5.hexdigest(), size


class Fetcher:
    """Fetch PDFs / e-prints into a :class:`BlobStore`; see the module docstring for the order."""

    def __init__(
        self,
        blobs: BlobStore,
        landing: Path,
        mode: Literal["landing", "arxiv", "bulk"] = "landing",
        *,
        bulk=None,
        bulk_fallback: bool = True,
        client: PoliteClient | None = None,
        base_url: str = ARXIV_BASE_URL,
        known: Mapping[str, str | tuple[str, str]] | None = None,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.blobs = blobs
        self.landing = Path(landing)
        self.reader = LandingReader(self.landing)
        self.mode = mode
        if mode == "bulk" and bulk is None:
            raise ValueError("mode 'bulk' needs a bulk reader (corpus.ingest.bulk_fetch.BulkReader)")
        self.bulk = bulk
        self.bulk_fallback = bulk_fallback
        self.base_url = base_url.rstrip("/")
        self._client = client
        self._own_client = False
        self.known: dict[str, tuple[str, str | None]] = {}
        for raw_id, value in (known or {}).items():
            aid = arxiv_ids.try_normalize(raw_id)
            if aid and value:
                sha, md5 = (value, None) if isinstance(value, str) else (value[0], value[1])
                self.known[aid] = (sha, md5)
        self.downloads = 0  # requests that reached the network (successful or not)

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def client(self) -> PoliteClient:
        if self._client is None:
            self._client = PoliteClient()
            self._own_client = True
        return self._client

    def close(self) -> None:
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None
        if self.bulk is not None:
            self.bulk.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- lookup ----------------------------------------------------------------------------
    def landing_file(self, arxiv_id: str, kind: Kind) -> Path | None:
        """The landing-zone file for a canonical id, if there is one."""
        name = arxiv_ids.to_file_name(arxiv_id)
        folder = self.landing / _LANDING_DIR[kind]
        suffixes = (".pdf",) if kind == "pdf" else EPRINT_SUFFIXES
        for suffix in suffixes:
            path = folder / f"{name}{suffix}"
            if self.reader.present(path):  # whatever it is: reading it says if it may be read
                return path
        return None

    def url(self, arxiv_id: str, kind: Kind) -> str:
        return f"{self.base_url}/{_URL_PATH[kind]}/{arxiv_id}"

    # -- fetching --------------------------------------------------------------------------
    def fetch(self, paper_id: str, kind: Kind, version: int | None = None) -> FetchResult:
        """Bring one paper's file into the store; every outcome is a row. ``version``: the
        latest version the metadata names (bulk mode prefers no older copy)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        aid = arxiv_ids.try_normalize(paper_id)
        if aid is None:
            return FetchResult(id=str(paper_id), kind=kind, status=FAILED, reason="invalid arXiv id")
        try:
            hit = self._from_known(aid, kind)
            if hit is not None:
                return hit
            local = self.landing_file(aid, kind)
            if local is not None:
                return self._store(aid, kind, local, source="landing")
            note = None
            if self.mode == "bulk":
                hit, note = self.bulk.fetch(aid, kind, self.blobs, version, fallback=self.bulk_fallback)
                if hit is not None:
                    return hit
            if self.mode == "landing" or (self.mode == "bulk" and not self.bulk_fallback):
                reason = "not in the landing zone" + (f"; {note}" if note else "")
                return FetchResult(id=aid, kind=kind, status=MISSING, reason=reason)
            got = self._download(aid, kind)
            return (
                got.model_copy(update={"reason": f"{got.reason}; {note}" if got.reason else note})
                if note
                else got
            )
        except LandingRefused as exc:
            return FetchResult(id=aid, kind=kind, status=FAILED, reason=str(exc))
        except OSError as exc:
            return FetchResult(id=aid, kind=kind, status=FAILED, reason=f"{type(exc).__name__}: {exc}")

    def fetch_many(self, paper_ids: Iterable[str], kind: Kind) -> Iterator[FetchResult]:
        for paper_id in paper_ids:
            yield self.fetch(paper_id, kind)

    def _from_known(self, aid: str, kind: Kind) -> FetchResult | None:
        entry = self.known.get(aid)
        if entry is None or not self.blobs.has(kind, entry[0]):
            return None
        sha, md5 = entry
        path = self.blobs.path(kind, sha)
        if md5 is None:  # hash once: gives the md5 and proves the blob is intact
            real_sha, md5, size = _hash_file(path)
            if real_sha != sha:  # a corrupt blob: drop it so the landing zone / network replaces it
                path.unlink(missing_ok=True)
                return None
        else:
            size = path.stat().st_size
        return FetchResult(id=aid, kind=kind, status=CACHED, sha256=sha, md5=md5, bytes=size, source="known")

    def _store(
        self, aid: str, kind: Kind, path: Path, source: str, http_status: int | None = None
    ) -> FetchResult:
        """Hash the landing file; copy it into the store only if that blob is not there yet.
        It is opened once, under the landing-zone rules, and both passes read that descriptor."""
        with self.reader.open(path, _LANDING_DIR[kind]) as fh:
            sha, md5, size = _hash_stream(fh)
            status = CACHED
            if not self.blobs.has(kind, sha):
                fh.seek(0)
                ref = self.blobs.put_file(kind, fh)
                sha, md5, size, status = ref.sha256, ref.md5, ref.size, STORED
        return FetchResult(
            id=aid,
            kind=kind,
            status=status,
            sha256=sha,
            md5=md5,
            bytes=size,
            source=source,
            http_status=http_status,
        )

    def _download(self, aid: str, kind: Kind) -> FetchResult:
        folder = self.landing / _LANDING_DIR[kind]
        folder.mkdir(parents=True, exist_ok=True)
        token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"  # two runs never write one incoming file
        incoming = (
            tmp_dir_for(self.blobs.home, folder) / f".{arxiv_ids.to_file_name(aid)}.{kind}.{token}.part"
        )
        url = self.url(aid, kind)
        self.downloads += 1
        try:
            self.client.download(url, incoming)
        except HttpError as exc:
            status = MISSING if exc.status in _NOT_FOUND else FAILED
            return FetchResult(id=aid, kind=kind, status=status, reason=str(exc), http_status=exc.status)
        except httpx.HTTPError as exc:  # e.g. TooManyRedirects, which PoliteClient lets through
            return FetchResult(id=aid, kind=kind, status=FAILED, reason=f"{type(exc).__name__}: {exc}")
        try:
            with open(incoming, "rb") as fh:
                head = fh.read(1 << 16)
            suffix = _SNIFF[kind](head)
            if suffix is None:
                what = "a PDF" if kind == "pdf" else "an e-print (gzip, tar, PDF, PS or TeX)"
                return FetchResult(
                    id=aid,
                    kind=kind,
                    status=FAILED,
                    reason=f"{url} did not return {what}: starts with {head[:40]!r}",
                    http_status=200,
                )
            final = folder / f"{arxiv_ids.to_file_name(aid)}{suffix}"
            os.replace(incoming, final)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(incoming)
        return self._store(aid, kind, final, source="arxiv", http_status=200)
