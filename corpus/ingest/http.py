"""A polite HTTP client for arXiv: one connection, a minimum interval between
requests, bounded retries with backoff, ``Retry-After`` honoured.

arXiv's terms (SPEC.md §1): at most one request every 3 s on one connection.
The OAI harvester and the PDF / e-print downloader both go through this client,
so the spacing holds across everything one process sends.
"""

from __future__ import annotations

import contextlib
import email.utils
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

USER_AGENT = "corpus-pipeline/0.1 (arXiv -> S2ORC/peS2o/CiteWorth research corpus builder)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_REDIRECTS = 5
BODY_RETRIES = 2  # re-downloads of a body cut short (each request already retries on its own)


class HttpError(RuntimeError):
    """A request that failed for good (after retries, or with a status not worth retrying)."""

    def __init__(self, message: str, status: int | None = None, url: str = ""):
        super().__init__(message)
        self.status = status
        self.url = url


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


@dataclass
class RetryPolicy:
    max_retries: int = 5  # retries after the first attempt
    backoff_base_s: float = 2.0
    backoff_max_s: float = 120.0
    max_retry_after_s: float = 600.0  # a Retry-After above this is capped, not obeyed blindly

    def backoff(self, attempt: int) -> float:
        return min(self.backoff_max_s, self.backoff_base_s * (2**attempt))


class PoliteClient:
    """Sequential GETs with spacing and bounded retries.

    ``sleep`` and ``clock`` are injectable so tests run without real waiting.
    """

    def __init__(
        self,
        min_interval_s: float = 3.0,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        user_agent: str = USER_AGENT,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        log: Callable[[str], None] | None = None,
    ):
        self.min_interval_s = min_interval_s
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._clock = clock
        self._log = log or (lambda _msg: None)
        self._last_request: float | None = None
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        self._client = httpx.Client(
            timeout=timeout_s,
            limits=limits,
            headers={"User-Agent": user_agent},
            transport=transport,
            follow_redirects=False,  # followed in _send, so every hop is spaced
        )
        self.requests_sent = 0

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> PoliteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait_turn(self) -> None:
        if self._last_request is not None:
            wait = self.min_interval_s - (self._clock() - self._last_request)
            if wait > 0:
                self._sleep(wait)
        self._last_request = self._clock()

    def _send(self, url: str, params: dict | None, stream: bool) -> httpx.Response:
        """Send with retries; return the final 2xx/4xx response (streaming if asked).

        Redirects are followed here, not by httpx, so every hop waits its turn
        and counts as a request; more than ``MAX_REDIRECTS`` hops is an error.
        """
        last_error = ""
        attempt = hops = 0
        while True:
            self._wait_turn()
            self.requests_sent += 1
            try:
                request = self._client.build_request("GET", url, params=params)
                response = self._client.send(request, stream=stream)
            except httpx.UnsupportedProtocol as exc:  # can never succeed: no retry
                raise HttpError(f"GET {url}: {exc}", url=url) from exc
            except (httpx.TransportError, httpx.DecodingError) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                delay = self.retry.backoff(attempt)
                status = None
            else:
                if response.is_redirect and response.next_request is not None:
                    response.close()
                    hops += 1
                    if hops > MAX_REDIRECTS:
                        raise HttpError(f"GET {url}: more than {MAX_REDIRECTS} redirects", url=url)
                    url, params = str(response.next_request.url), None
                    continue
                if response.status_code not in RETRY_STATUSES:
                    return response
                status = response.status_code
                last_error = f"HTTP {status}"
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                response.close()
                if retry_after is not None:
                    delay = min(retry_after, self.retry.max_retry_after_s)
                else:
                    delay = self.retry.backoff(attempt)
            if attempt >= self.retry.max_retries:
                raise HttpError(
                    f"GET {url} failed after {attempt + 1} attempts: {last_error}", status=status, url=url
                )
            self._log(f"GET {url}: {last_error}; retry {attempt + 1} in {delay:.1f}s")
            self._sleep(delay)
            attempt += 1

    def get(self, url: str, params: dict | None = None) -> httpx.Response:
        """GET with the body read; raises :class:`HttpError` on a final 4xx/5xx."""
        response = self._send(url, params, stream=False)
        if response.status_code >= 400:
            raise HttpError(f"GET {url}: HTTP {response.status_code}", status=response.status_code, url=url)
        return response

    def download(self, url: str, dest: Path, chunk: int = 1 << 16) -> int:
        """Stream ``url`` into ``dest`` atomically; return the byte count.

        The body goes to a temporary file first: an interrupted download never
        becomes ``dest``. A body shorter than its Content-Length is retried.
        """
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.part")
        for attempt in range(BODY_RETRIES + 1):
            response = self._send(url, None, stream=True)
            try:
                if response.status_code >= 400:
                    raise HttpError(
                        f"GET {url}: HTTP {response.status_code}", status=response.status_code, url=url
                    )
                size = 0
                with open(tmp, "wb") as fh:
                    for block in response.iter_bytes(chunk):
                        fh.write(block)
                        size += len(block)
                expected = response.headers.get("Content-Length")
                identity = response.headers.get("Content-Encoding") in (None, "identity")
                if expected is not None and identity and int(expected) != size:
                    raise httpx.ReadError(f"short body: {size} of {expected} bytes")
                os.replace(tmp, dest)
                return size
            except (httpx.TransportError, httpx.DecodingError) as exc:
                if attempt == BODY_RETRIES:
                    raise HttpError(f"GET {url} failed: {exc}", url=url) from exc
                self._sleep(self.retry.backoff(attempt))
            finally:
                response.close()
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        raise HttpError(f"GET {url} failed", url=url)
