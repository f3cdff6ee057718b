"""Grobid client: PDF -> TEI over Grobid's REST API, with a TEI cache keyed by PDF sha256.

Why not grobid-client-python 0.2.1 as the transport (DESIGN.md §5, checked here):

* importing ``grobid_client.grobid_client`` runs ``logging.basicConfig(level=INFO)``
  (via its ``format.TEI2LossyJSON`` module), so the import alone reconfigures the
  root logger of the Dagster process; its own logger then bypasses Dagster's;
* a 503 is retried by unbounded recursion (``_handle_server_busy_retry`` ->
  ``_send_pdf``), 5 s apart, forever;
* a server that is down comes back as per-file status 400 "Failed to open file";
* ``process_pdf`` asks Grobid to consolidate headers by default (Grobid then needs
  the internet).

What we reuse from it: the request protocol (multipart field ``input``, the option
names ``consolidateHeader``, ``consolidateCitations``, ``includeRawCitations``,
``includeRawAffiliations``, ``teiCoordinates``, ``segmentSentences``,
``generateIDs``), its default ``teiCoordinates`` element list (copied below, a test
checks it still matches the library), and the pool size from ``/api/health``
(``pool.maxActive``). The transport is ours: httpx with one connection pool sized to
the concurrency, exactly ``concurrency`` requests in flight, bounded retries.
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

import httpx
from lxml import etree
from pydantic import BaseModel, ConfigDict

from corpus.ingest.landing_files import LandingReader, LandingRefused
from corpus.store import BlobStore, atomic_write_bytes

DEFAULT_URL = "http://localhost:8070"
FULLTEXT = "processFulltextDocument"
TEI_BLOB_KIND = "tei"  # blobs/tei/<pdf sha256[:2]>/<pdf sha256>: TEI keyed by the PDF it came from

# grobid-client-python 0.2.1 GrobidClient.DEFAULT_CONFIG["coordinates"]
TEI_COORDINATES = (
    "title",
    "persName",
    "affiliation",
    "orgName",
    "formula",
    "figure",
    "ref",
    "biblStruct",
    "head",
    "p",
    "s",
    "note",
)

# The version of grobid_tei (corpus.versions): bump it whenever their rows change.
GROBID_STAGE_VERSION = "corpus.parse.grobid/2"  # 2: CORPUS_GROBID policy (skipped rows)

# Answers worth sending again: the pool is full (503) or a proxy in front of
# replicas lost its upstream. 500 is Grobid failing on this PDF: not retried.
BUSY_STATUSES = frozenset({429, 502, 503, 504})
TEI_NS_ROOT = "{http://www.tei-c.org/ns/1.0}TEI"
_XML_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
_DOCTYPE = re.compile(rb"<!(?i:DOCTYPE)")
_APP_TAG = re.compile(rb"<application\b[^>]*>")
_APP_VERSION = re.compile(rb'\bversion="([^"]+)"')


class Logger(Protocol):
    """Anything with ``info``/``warning`` (``logging.Logger``, Dagster's ``context.log``)."""

    def debug(self, msg: str, *args: Any) -> Any: ...
    def info(self, msg: str, *args: Any) -> Any: ...
    def warning(self, msg: str, *args: Any) -> Any: ...


class GrobidUnavailable(RuntimeError):
    """No Grobid answers at ``base_url``: one clear error instead of a failure per PDF."""


class GrobidOptions(BaseModel):
    """Request options; consolidation is off (it needs Grobid to reach the internet)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    consolidate_header: bool = False
    consolidate_citations: bool = False
    include_raw_citations: bool = True
    include_raw_affiliations: bool = False
    tei_coordinates: bool = False
    segment_sentences: bool = False
    generate_ids: bool = False

    def form(self) -> dict[str, str | list[str]]:
        """Form fields as Grobid reads them (teiCoordinates repeats once per element)."""
        fields: dict[str, str | list[str]] = {
            "consolidateHeader": "1" if self.consolidate_header else "0",
            "consolidateCitations": "1" if self.consolidate_citations else "0",
            "includeRawCitations": "1" if self.include_raw_citations else "0",
        }
        if self.include_raw_affiliations:
            fields["includeRawAffiliations"] = "1"
        if self.segment_sentences:
            fields["segmentSentences"] = "1"
        if self.generate_ids:
            fields["generateIDs"] = "1"
        if self.tei_coordinates:
            fields["teiCoordinates"] = list(TEI_COORDINATES)
        return fields


@dataclass(frozen=True, slots=True)
class GrobidResult:
    """One PDF's outcome. ``reason`` is a short code (``malformed_tei``, ``http_500``,
    ``timeout``, ``busy``, ...), ``detail`` the server's words or the exception."""

    status: Literal["ok", "failed"]
    tei: bytes | None
    http_status: int | None
    reason: str | None
    grobid_version: str | None
    seconds: float
    attempts: int = 1
    detail: str = ""


def check_tei(data: bytes) -> str | None:
    """None if ``data`` is a well-formed TEI document, else why not (lxml, no DTD/network)."""
    if not data or not data.strip():
        return "empty body"
    if _DOCTYPE.search(data, 0, 65536):
        return "has a DOCTYPE (Grobid never writes one; entity declarations are refused)"
    try:
        root = etree.fromstring(data, _XML_PARSER)
    except etree.XMLSyntaxError as exc:
        return f"not XML: {exc}"
    if root.tag != TEI_NS_ROOT and etree.QName(root).localname != "TEI":
        return f"root is <{etree.QName(root).localname}>, not <TEI>"
    return None


def tei_version(data: bytes) -> str | None:
    """The Grobid version a TEI declares in ``encodingDesc/appInfo/application``."""
    head = data[:65536]
    for match in _APP_TAG.finditer(head):
        tag = match.group(0)
        if b'ident="GROBID"' in tag:
            version = _APP_VERSION.search(tag)
            if version:
                return version.group(1).decode("ascii", "replace")
    return None


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _parse_version(response: httpx.Response) -> str:
    """``/api/version`` is JSON ``{"version": ...}`` on recent Grobid, plain text on old."""
    text = response.text.strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return text
    if isinstance(payload, dict):
        for key in ("version", "grobidVersion"):
            if isinstance(payload.get(key), str):
                return payload[key].removeprefix("grobid-service ").strip()
    return text


class GrobidClient:
    """A Grobid client that keeps exactly ``concurrency + headroom`` requests in flight.

    ``concurrency=None`` (or 0) asks ``/api/health`` for the server's pool size and
    falls back to ``fallback_concurrency`` on servers without it. ``headroom`` (default
    0) sends that many more, so the next PDF is already uploaded and waiting in
    Grobid's pool (``poolMaxWait``, 1 s) when an engine frees: worth 1 when a PDF takes
    Grobid well under a second or this host is CPU-starved; with slower PDFs the
    surplus request gets 503 after each wait and costs re-uploads (see the benchmark).

    Retries are bounded: ``max_retries`` on busy answers (503...), ``transport_retries``
    on connection errors and ``timeout_retries`` on answers slower than ``timeout_s``;
    4xx and 500 are final. Backoff is exponential with jitter, capped at
    ``backoff_max_s``; a ``Retry-After`` in seconds is honoured up to that cap. Logs go
    to ``log`` (pass Dagster's ``context.log``), never to handlers of our own.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        timeout_s: float = 120.0,
        concurrency: int | None = None,
        max_retries: int = 8,
        backoff: float = 0.5,
        options: GrobidOptions | None = None,
        *,
        backoff_max_s: float = 30.0,
        transport_retries: int = 2,
        timeout_retries: int = 1,
        connect_timeout_s: float = 5.0,
        fallback_concurrency: int = 4,
        headroom: int = 0,
        log: Logger | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")
        if max_retries < 0 or transport_retries < 0 or timeout_retries < 0:
            raise ValueError("retry counts must be >= 0")
        if headroom < 0:
            raise ValueError("headroom must be >= 0")
        if concurrency is not None and concurrency < 0:
            raise ValueError("concurrency must be >= 0 (0 = ask /api/health)")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.base_url = base_url.strip().rstrip("/")
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff = backoff
        self.backoff_max_s = backoff_max_s
        self.transport_retries = transport_retries
        self.timeout_retries = timeout_retries
        self.connect_timeout_s = min(connect_timeout_s, timeout_s)
        self.fallback_concurrency = fallback_concurrency
        self.headroom = headroom
        self.options = options or GrobidOptions()
        self.log: Logger = log or logging.getLogger(__name__)
        self._sleep = sleep
        self._concurrency = concurrency or None
        self._version: str | None = None
        self._http: httpx.Client | None = None
        self._meta: httpx.Client | None = None
        self._lock = threading.Lock()

    # -- plumbing ---------------------------------------------------------------------

    def url(self, endpoint: str) -> str:
        return f"{self.base_url}/api/{endpoint}"

    @property
    def concurrency(self) -> int:
        """Requests kept in flight: the setting, else the server's pool, else the fallback."""
        if self._concurrency is None:
            pool = self.pool_size()
            self._concurrency = pool if pool else self.fallback_concurrency
        return self._concurrency

    def _client(self) -> httpx.Client:
        n = self.concurrency + self.headroom  # may ask /api/health: outside the lock
        with self._lock:
            if self._http is None:
                self._http = httpx.Client(
                    timeout=httpx.Timeout(self.timeout_s, connect=self.connect_timeout_s),
                    limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
                )
            return self._http

    def close(self) -> None:
        for http in (self._http, self._meta):
            if http is not None:
                http.close()
        self._http = self._meta = None

    def __enter__(self) -> GrobidClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _get(self, endpoint: str) -> httpx.Response:
        """A small GET with a short timeout, on its own connection outside the PDF pool."""
        with self._lock:
            if self._meta is None:
                timeout = httpx.Timeout(min(10.0, self.timeout_s), connect=self.connect_timeout_s)
                self._meta = httpx.Client(timeout=timeout, limits=httpx.Limits(max_connections=1))
            meta = self._meta
        return meta.get(self.url(endpoint))

    # -- service endpoints ------------------------------------------------------------

    def alive_detail(self) -> str | None:
        """None when ``/api/isalive`` says true, else what went wrong."""
        try:
            response = self._get("isalive")
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {exc}"
        if response.status_code != 200:
            return f"/api/isalive answered HTTP {response.status_code}"
        if response.text.strip().lower() != "true":
            return f"/api/isalive answered {response.text.strip()[:80]!r}"
        return None

    def is_alive(self) -> bool:
        return self.alive_detail() is None

    def ensure_alive(self) -> None:
        detail = self.alive_detail()
        if detail is not None:
            raise GrobidUnavailable(f"Grobid at {self.base_url} is not available: {detail}")

    def version(self) -> str:
        """The server's version (``/api/version``), asked once; "unknown" if it will not say."""
        if self._version is None:
            try:
                response = self._get("version")
                ok = response.status_code == 200 and response.text.strip()
                self._version = _parse_version(response) if ok else "unknown"
            except httpx.HTTPError:
                return "unknown"  # not cached: the server may come up later
        return self._version

    def pool_size(self) -> int | None:
        """``pool.maxActive`` from ``/api/health`` (Grobid >= 0.8.2), None when absent."""
        try:
            response = self._get("health")
            payload = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        pool = payload.get("pool") if isinstance(payload, dict) else None
        size = pool.get("maxActive") if isinstance(pool, dict) else None
        return size if isinstance(size, int) and size > 0 else None

    # -- one PDF ----------------------------------------------------------------------

    def _delay(self, attempt: int, retry_after: str | None = None) -> float:
        if retry_after and retry_after.strip().isdigit():
            return min(float(retry_after), self.backoff_max_s)
        base = min(self.backoff_max_s, self.backoff * (2**attempt))
        return base * random.uniform(0.5, 1.0)

    def process(self, pdf: bytes | Path | str, name: str = "document.pdf") -> GrobidResult:
        """Send one PDF to ``processFulltextDocument``; never raises for a per-PDF failure."""
        return _validated(self._send(pdf, name))

    def _send(self, pdf: bytes | Path | str, name: str) -> GrobidResult:
        """The HTTP exchange with its retries; a 200 body is not checked yet."""
        start = time.perf_counter()
        version = self.version()

        def done(status, tei=None, http=None, reason=None, attempts=1, detail=""):
            secs = time.perf_counter() - start
            return GrobidResult(status, tei, http, reason, version, secs, attempts, detail[:500])

        if isinstance(pdf, (str, Path)):
            try:
                data = Path(pdf).read_bytes()
            except OSError as exc:
                return done("failed", reason="read_error", attempts=0, detail=str(exc))
        else:
            data = pdf
        client = self._client()
        form = self.options.form()
        busy = transport = timeouts = 0
        attempts = 0
        while True:
            attempts += 1
            try:
                response = client.post(
                    self.url(FULLTEXT),
                    data=form,
                    files={"input": (name, data, "application/pdf")},
                    headers={"Accept": "application/xml"},
                )
            except httpx.TransportError as exc:
                if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
                    timeouts += 1
                    over, reason = timeouts > self.timeout_retries, "timeout"
                    detail = f"no answer within {self.timeout_s:g}s ({type(exc).__name__})"
                else:
                    transport += 1
                    over, reason = transport > self.transport_retries, "connect_error"
                    detail = f"{type(exc).__name__}: {exc}"
                if over:
                    self.log.warning(f"Grobid request for {name} failed: {detail}")
                    return done("failed", reason=reason, attempts=attempts, detail=detail)
                delay = self._delay(attempts - 1)
                self.log.debug(f"Grobid {reason} for {name} ({detail}); retry in {delay:.2f}s")
                self._sleep(delay)
                continue
            except httpx.HTTPError as exc:  # e.g. a body that will not decode: not worth a retry
                return done(
                    "failed", reason="http_error", attempts=attempts, detail=f"{type(exc).__name__}: {exc}"
                )
            status = response.status_code
            if status in BUSY_STATUSES:
                busy += 1
                if busy > self.max_retries:
                    detail = f"HTTP {status} after {attempts} attempts: {response.text[:200]}"
                    self.log.warning(f"Grobid stayed busy for {name}: {detail}")
                    return done("failed", http=status, reason="busy", attempts=attempts, detail=detail)
                delay = self._delay(busy - 1, response.headers.get("Retry-After"))
                self.log.debug(f"Grobid busy (HTTP {status}) for {name}; retry {busy} in {delay:.2f}s")
                self._sleep(delay)
                continue
            if status == 200:
                return done("ok", tei=response.content, http=200, attempts=attempts)
            reason = "no_content" if status == 204 else f"http_{status}"
            return done("failed", http=status, reason=reason, attempts=attempts, detail=response.text)

    # -- many PDFs --------------------------------------------------------------------

    def process_many(
        self,
        items: Iterable[tuple[str, bytes | Path | str]],
        on_result: Callable[[str, GrobidResult], None] | None = None,
        *,
        check_alive: bool = True,
    ) -> Iterator[tuple[str, GrobidResult]]:
        """Process ``(key, pdf)`` pairs, yielding ``(key, result)`` in completion order.

        ``concurrency + headroom`` worker threads each take the next item as soon as
        their previous answer is in, so that many requests stay in flight;
        the TEI check (lxml) and the caller's work on a result happen in the calling
        thread, off that path. At most twice that many results wait unconsumed
        (input is read lazily). ``/api/isalive`` is asked first: a dead server raises
        :class:`GrobidUnavailable` before anything is sent. If the server dies midway
        (connection errors and ``isalive`` no longer true), the results so far have
        been yielded, :class:`GrobidUnavailable` is raised and the rest are not sent.
        Closing the iterator early waits for the requests already in flight.
        """
        if check_alive:
            self.ensure_alive()
        n = self.concurrency + self.headroom
        self._client()
        source = iter(items)
        source_lock = threading.Lock()
        stop = threading.Event()
        credits = threading.BoundedSemaphore(2 * n)
        out: queue.SimpleQueue[tuple[str, GrobidResult] | BaseException | None] = queue.SimpleQueue()

        def worker() -> None:
            try:
                while not stop.is_set():
                    if not credits.acquire(timeout=0.1):
                        continue
                    with source_lock:
                        item = next(source, None)
                    if item is None or stop.is_set():
                        return
                    key, pdf = item
                    name = pdf.name if isinstance(pdf, Path) else f"{key}.pdf"
                    out.put((key, self._send(pdf, name)))
            except BaseException as exc:  # an input iterator that raises: hand it to the caller
                out.put(exc)
            finally:
                out.put(None)

        threads = [threading.Thread(target=worker, name=f"grobid-{i}", daemon=True) for i in range(n)]
        for thread in threads:
            thread.start()
        running = n
        try:
            while running:
                got = out.get()
                if got is None:
                    running -= 1
                    continue
                if isinstance(got, BaseException):
                    raise got
                key, result = got
                credits.release()
                if result.reason == "connect_error" and not self.is_alive():
                    raise GrobidUnavailable(f"Grobid at {self.base_url} stopped answering: {result.detail}")
                result = _validated(result)
                if on_result is not None:
                    on_result(key, result)
                yield key, result
        finally:
            stop.set()
            for thread in threads:  # each finishes at most its one request in flight
                thread.join()


def _validated(result: GrobidResult) -> GrobidResult:
    """A 200 whose body is not a TEI document becomes ``failed: malformed_tei``."""
    if result.status != "ok" or result.tei is None:
        return result
    problem = check_tei(result.tei)
    if problem is None:
        return result
    return replace(result, status="failed", tei=None, reason="malformed_tei", detail=problem)


# -- the TEI cache and the per-PDF rows of the grobid_tei asset ---------------------------


@dataclass(frozen=True, slots=True)
class PdfItem:
    """A PDF to turn into TEI. ``tei_hint``: an existing TEI for it (``landing/tei/<id>.tei.xml``).
    ``skip``: why it is not sent to Grobid (corpus.parse.grobid_policy); a TEI that costs no
    Grobid time (cached, or the hint) is still used."""

    key: str
    pdf: Path | bytes
    sha256: str | None = None
    tei_hint: Path | None = None
    skip: str | None = None


@dataclass(slots=True)
class TeiRow:
    """One row of ``grobid_tei``: every PDF gets exactly one.

    status: ``ok`` (fresh from Grobid), ``cached`` (TEI already in the cache or the
    landing zone), ``failed`` (reason and HTTP status say why; sent again next run),
    ``pending`` (to be sent, but Grobid is unavailable), ``skipped`` (not to be sent: the
    reason is the policy's, corpus.parse.grobid_policy).
    """

    key: str
    pdf_sha256: str | None
    status: Literal["ok", "cached", "failed", "pending", "skipped"]
    source: str | None = None  # grobid | cache | landing
    tei_path: str | None = None
    tei_bytes: int | None = None
    grobid_version: str | None = None
    http_status: int | None = None
    reason: str | None = None
    detail: str = ""
    attempts: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TeiCache:
    """TEI blobs keyed by the PDF's sha256 (``blobs/tei/<sha[:2]>/<sha>``), written atomically."""

    blobs: BlobStore
    kind: str = TEI_BLOB_KIND

    def path(self, pdf_sha256: str) -> Path:
        return self.blobs.path(self.kind, pdf_sha256)

    def has(self, pdf_sha256: str) -> bool:
        return self.path(pdf_sha256).exists()

    def get(self, pdf_sha256: str) -> bytes | None:
        path = self.path(pdf_sha256)
        return path.read_bytes() if path.exists() else None

    def put(self, pdf_sha256: str, tei: bytes) -> Path:
        path = self.path(pdf_sha256)
        atomic_write_bytes(path, tei, self.blobs.tmp_dir(self.kind))
        return path


@dataclass
class TeiRunSummary:
    """Counts for the asset's metadata; ``unavailable`` says why rows are pending."""

    counts: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    unavailable: str | None = None
    sent: int = 0

    def add(self, row: TeiRow) -> None:
        self.counts[row.status] = self.counts.get(row.status, 0) + 1
        if row.reason:
            self.reasons[row.reason] = self.reasons.get(row.reason, 0) + 1


def _row_for_cached(item: PdfItem, sha: str, path: Path, source: str) -> TeiRow:
    """A cached TEI's row; only its head is read (for the version Grobid wrote into it)."""
    with open(path, "rb") as fh:
        head = fh.read(65536)
    return TeiRow(
        item.key,
        sha,
        "cached",
        source=source,
        tei_path=str(path),
        tei_bytes=path.stat().st_size,
        grobid_version=tei_version(head),
    )


def collect_tei(
    items: Iterable[PdfItem],
    cache: TeiCache,
    client: GrobidClient | None,
    summary: TeiRunSummary | None = None,
    landing: LandingReader | None = None,
) -> Iterator[TeiRow]:
    """One :class:`TeiRow` per item: cached TEI first, the rest from Grobid.

    A TEI in the cache or given as ``tei_hint`` (read under the landing-zone rules of
    ``landing`` -- by default the hint's grandparent, ``landing/tei/<id>.tei.xml`` --
    checked with :func:`check_tei`, then copied into the cache) is never sent, an item
    with a ``skip`` reason and no such TEI is a ``skipped`` row, and a PDF listed twice is
    sent once. A hint that is refused or rejected is said on the
    row (reason ``tei_rejected`` while Grobid cannot parse the PDF instead; the detail
    always says why) and the PDF goes to Grobid. With no client, or a Grobid that is
    down or goes down midway, the unsent PDFs come back ``pending``: the caller
    materialises what it has and says so (``summary.unavailable``).
    """
    summary = summary if summary is not None else TeiRunSummary()
    to_send: dict[str, list[PdfItem]] = {}  # pdf sha256 -> the items with that PDF
    rejected: dict[str, str] = {}  # item key -> why its landing TEI was not used

    def emit(row: TeiRow) -> TeiRow:
        summary.add(row)
        return row

    for item in items:
        try:
            if item.sha256:
                sha = item.sha256
            elif isinstance(item.pdf, bytes):
                sha = hashlib.sha256(item.pdf).hexdigest()
            else:
                sha = sha256_file(item.pdf)
        except OSError as exc:
            yield emit(TeiRow(item.key, None, "failed", reason="read_error", detail=str(exc)))
            continue
        if cache.has(sha):
            yield emit(_row_for_cached(item, sha, cache.path(sha), "cache"))
            continue
        if item.tei_hint is not None:
            reader = landing or LandingReader(item.tei_hint.parent.parent)
            if reader.present(item.tei_hint):
                try:
                    hint = reader.read_bytes(item.tei_hint, "tei")
                    problem = check_tei(hint)
                except LandingRefused as exc:
                    problem = str(exc)
                if problem is None:
                    yield emit(_row_for_cached(item, sha, cache.put(sha, hint), "landing"))
                    continue
                rejected[item.key] = f"landing TEI {item.tei_hint.name} rejected: {problem}"[:400]
        if item.skip is not None:
            yield emit(TeiRow(item.key, sha, "skipped", reason=item.skip, detail=rejected.get(item.key, "")))
            continue
        to_send.setdefault(sha, []).append(item)

    def note(item: PdfItem, detail: str) -> str:
        why = rejected.get(item.key)
        return f"{why}; {detail}" if why and detail else why or detail

    def pending(shas: Iterable[str], why: str) -> Iterator[TeiRow]:
        summary.unavailable = why
        for sha in shas:
            for item in to_send[sha]:
                reason = "tei_rejected" if item.key in rejected else "grobid_unavailable"
                yield emit(TeiRow(item.key, sha, "pending", reason=reason, detail=note(item, why)))

    for sha in [sha for sha in to_send if cache.has(sha)]:  # a later item's hint filled it
        for item in to_send.pop(sha):
            yield emit(_row_for_cached(item, sha, cache.path(sha), "cache"))
    if not to_send:
        return
    if client is None:
        yield from pending(list(to_send), "no Grobid configured")
        return
    detail = client.alive_detail()
    if detail is not None:
        yield from pending(list(to_send), f"Grobid at {client.base_url} is not available: {detail}")
        return
    done: set[str] = set()
    try:
        stream = ((sha, items_[0].pdf) for sha, items_ in to_send.items())
        for sha, result in client.process_many(stream, check_alive=False):
            done.add(sha)
            summary.sent += 1
            tei_path = None
            if result.status == "ok" and result.tei is not None:
                tei_path = str(cache.put(sha, result.tei))
            for item in to_send[sha]:
                yield emit(
                    TeiRow(
                        item.key,
                        sha,
                        result.status,
                        source="grobid" if tei_path else None,
                        tei_path=tei_path,
                        tei_bytes=len(result.tei) if tei_path and result.tei else None,
                        grobid_version=result.grobid_version,
                        http_status=result.http_status,
                        reason=result.reason,
                        detail=note(item, result.detail),
                        attempts=result.attempts,
                        seconds=round(result.seconds, 3),
                    )
                )
    except GrobidUnavailable as exc:
        client.log.warning(f"{exc}; {len(to_send) - len(done)} PDFs left pending")
        yield from pending([sha for sha in to_send if sha not in done], str(exc))
