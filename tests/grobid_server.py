"""A loopback fake Grobid for tests and the client benchmark.

It answers ``/api/isalive``, ``/api/version``, ``/api/health`` and
``/api/processFulltextDocument`` the way Grobid does: ``slots`` engines, a request
that finds them all busy waits ``pool_wait_s`` for one (Grobid's ``poolMaxWait``, 1 s
there; 0 here unless asked) and then gets 503, and a
PDF it knows gets back the TEI a real Grobid made from it (the recorded pairs in
shared/data/pdf_tei_pairs and shared/landing, matched by the PDF's sha256).

Faults are injected through :class:`Faults` (503 bursts, a status per PDF, slow
answers, malformed TEI, 503s for the first k sends of a PDF; in the stand-in container,
every PDF answered 503 between a SIGUSR1 and a SIGUSR2). :func:`dead_url` is a
loopback URL where nothing listens. Bounded: 127.0.0.1 only, a free port, idle
keep-alive connections close after ``idle_timeout_s``, every sleep waits on the stop
event and is capped at ``max_sleep_s``; ``stop()`` returns within a few seconds.

The same server is the Grobid stand-in container of the compose stack's tests
(docker/grobid-standin/Dockerfile): ``--host 0.0.0.0 --port 8070 --recorded DIR ...``
inside the container's own network namespace, answering the recorded pairs found under
each DIR (a ``pdf_tei_pairs`` folder or a landing zone), until SIGTERM or ``--max-seconds``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_BOUNDARY = re.compile(r'boundary="?([^";]+)"?')
_DISPOSITION_NAME = re.compile(rb'name="([^"]*)"')
TEI_SUFFIXES = (".grobid.tei.xml", ".tei.xml", ".xml")
MALFORMED_TEI = b"<?xml version='1.0'?><TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader>"


@dataclass(frozen=True)
class RecordedPair:
    name: str
    pdf: Path
    tei: Path
    sha256: str


def _tei_stem(path: Path) -> str | None:
    for suffix in TEI_SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return None


def recorded_pairs(data_dir: Path, landing_dir: Path) -> list[RecordedPair]:
    """Real PDF + Grobid TEI pairs: same stem, or (s2orc-doc2json) a PDF named by the
    TEI's sha1 minus its first 4 hex digits. First pair wins for a repeated PDF."""
    found: list[tuple[str, Path, Path]] = []
    for folder in sorted(p for p in (data_dir / "pdf_tei_pairs").glob("*") if p.is_dir()):
        teis = {stem: p for p in folder.iterdir() if (stem := _tei_stem(p))}
        for pdf in sorted(folder.glob("*.pdf")):
            tei = teis.get(pdf.stem)
            if tei is None and len(pdf.stem) >= 32:
                tei = next((t for s, t in teis.items() if s.endswith(pdf.stem)), None)
            if tei is not None:
                found.append((f"{folder.name}/{pdf.stem}", pdf, tei))
    for pdf in sorted((landing_dir / "pdf").glob("*.pdf")):
        tei = landing_dir / "tei" / f"{pdf.stem}.tei.xml"
        if tei.exists():
            found.append((f"landing/{pdf.stem}", pdf, tei))
    pairs, seen = [], set()
    for name, pdf, tei in found:
        sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
        if sha not in seen:
            seen.add(sha)
            pairs.append(RecordedPair(name, pdf, tei, sha))
    return pairs


def dead_url() -> str:
    """A loopback URL where nothing listens (a port just bound and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@dataclass
class Faults:
    """What goes wrong, changeable while the server runs (guarded by the server's lock)."""

    busy_burst: int = 0  # the next N fulltext requests get 503 whatever the slots
    all_busy: bool = False  # every fulltext request gets 503 until cleared (SIGUSR1 / SIGUSR2)
    status_for: dict[str, int] = field(default_factory=dict)  # pdf sha -> HTTP status
    slow_for: dict[str, float] = field(default_factory=dict)  # pdf sha -> extra seconds
    malformed_for: set[str] = field(default_factory=set)  # pdf sha -> truncated TEI
    flaky_for: dict[str, int] = field(default_factory=dict)  # pdf sha -> 503 for its first k sends


@dataclass
class Stats:
    fulltext: int = 0
    answered: Counter = field(default_factory=Counter)  # HTTP status -> count of fulltext answers
    by_sha: Counter = field(default_factory=Counter)  # pdf sha -> requests received
    in_flight: int = 0
    max_in_flight: int = 0
    busy_seconds: float = 0.0  # engine time used (sum over slots)
    forms: list = field(default_factory=list)  # the last few option forms received


def _parse_multipart(body: bytes, content_type: str) -> dict[str, bytes]:
    match = _BOUNDARY.search(content_type)
    if not match:
        raise ValueError("no multipart boundary")
    fields: dict[str, bytes] = {}
    for part in body.split(b"--" + match.group(1).encode())[1:]:
        if part.startswith(b"--"):
            break
        head, sep, content = part.partition(b"\r\n\r\n")
        name = _DISPOSITION_NAME.search(head)
        if sep and name:
            key = name.group(1).decode()
            value = content[:-2] if content.endswith(b"\r\n") else content
            fields[key] = fields[key] + b"," + value if key in fields else value
    return fields


class FakeGrobid:
    """Run with ``with FakeGrobid(...) as server: server.url``."""

    def __init__(
        self,
        tei_by_sha: dict[str, bytes] | None = None,
        *,
        slots: int = 4,
        latency_s: float = 0.0,
        version: str = "0.8.1",
        health: bool = True,
        default_tei: bytes | None = None,
        max_sleep_s: float = 30.0,
        idle_timeout_s: float = 5.0,
        pool_wait_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.host, self.port = host, port
        self.tei_by_sha = dict(tei_by_sha or {})
        self.slots = slots
        self.latency_s = latency_s
        self.version = version
        self.health = health
        self.default_tei = default_tei
        self.max_sleep_s = max_sleep_s
        self.pool_wait_s = min(pool_wait_s, max_sleep_s)
        self.faults = Faults()
        self.stats = Stats()
        self.lock = threading.Lock()
        self._engines = threading.BoundedSemaphore(slots)
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._idle_timeout_s = idle_timeout_s
        self._connections: set[socket.socket] = set()

    @classmethod
    def from_pairs(cls, pairs: list[RecordedPair], **kwargs) -> FakeGrobid:
        return cls({p.sha256: p.tei.read_bytes() for p in pairs}, **kwargs)

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host = "127.0.0.1" if self.host == "0.0.0.0" else self.host
        return f"http://{host}:{self._httpd.server_address[1]}"

    def start(self) -> FakeGrobid:
        handler = type("Handler", (_Handler,), {"fake": self, "timeout": self._idle_timeout_s})
        self._httpd = ThreadingHTTPServer((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and drop open connections (a running client sees a dead server)."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        with self.lock:
            connections, self._connections = list(self._connections), set()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeGrobid:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(min(seconds, self.max_sleep_s))

    def answer(self, pdf: bytes) -> tuple[int, bytes, str]:
        """(status, body, content type) for one PDF, holding an engine for the work."""
        sha = hashlib.sha256(pdf).hexdigest()
        with self.lock:
            self.stats.fulltext += 1
            self.stats.by_sha[sha] += 1
            faults = self.faults
            if faults.busy_burst > 0:
                faults.busy_burst -= 1
                return 503, b"busy burst", "text/plain"
            if faults.all_busy:
                return 503, b"all engines busy", "text/plain"
            if faults.flaky_for.get(sha, 0) > 0:
                faults.flaky_for[sha] -= 1
                return 503, b"flaky", "text/plain"
            status = faults.status_for.get(sha)
            extra = faults.slow_for.get(sha, 0.0)
            malformed = sha in faults.malformed_for
        got = self._engines.acquire(timeout=self.pool_wait_s) if self.pool_wait_s > 0 else None
        if not (got or self._engines.acquire(blocking=False)):
            return 503, b"all engines busy", "text/plain"
        start = time.perf_counter()
        with self.lock:
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        try:
            self.sleep(self.latency_s + extra)
            if status is not None:
                return status, f"[BAD_INPUT_DATA] injected {status}".encode(), "text/plain"
            if malformed:
                return 200, MALFORMED_TEI, "application/xml"
            tei = self.tei_by_sha.get(sha, self.default_tei)
            if tei is None:
                return 500, b"[BAD_INPUT_DATA] PDF to XML conversion failed", "text/plain"
            return 200, tei, "application/xml"
        finally:
            # the engine goes back before the answer is written, as in Grobid
            with self.lock:
                self.stats.in_flight -= 1
                self.stats.busy_seconds += time.perf_counter() - start
            self._engines.release()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeGrobid

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.fake.lock:
            self.fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.fake.lock:
            self.fake._connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def _send(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client gave up (timeout) and closed the connection
            self.close_connection = True

    def do_GET(self) -> None:
        fake = self.fake
        if self.path == "/api/isalive":
            self._send(200, b"true")
        elif self.path == "/api/version":
            self._send(200, json.dumps({"version": fake.version}).encode(), "application/json")
        elif self.path == "/fake/stats":
            with fake.lock:
                st = fake.stats
                payload = {"fulltext": st.fulltext, "answered": {str(k): v for k, v in st.answered.items()}}
                payload |= {"max_in_flight": st.max_in_flight, "busy_seconds": st.busy_seconds}
            self._send(200, json.dumps(payload).encode(), "application/json")
        elif self.path == "/api/health" and fake.health:
            payload = {"ready": True, "pool": {"maxActive": fake.slots, "numActive": fake.stats.in_flight}}
            self._send(200, json.dumps(payload).encode(), "application/json")
        else:
            self._send(404, b"not found")

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length")
        if length is None:
            self.close_connection = True
            self._send(411, b"length required")
            return
        body = self.rfile.read(int(length))
        if self.path != "/api/processFulltextDocument":
            self._send(404, b"not found")
            return
        try:
            form = _parse_multipart(body, self.headers.get("Content-Type", ""))
        except ValueError as exc:
            self._send(400, str(exc).encode())
            return
        pdf = form.pop("input", None)
        with self.fake.lock:
            self.fake.stats.forms = [*self.fake.stats.forms[-9:], {k: v.decode() for k, v in form.items()}]
        if pdf is None:
            self._send(400, b"no input field")
            return
        status, answer, ctype = self.fake.answer(pdf)
        with self.fake.lock:
            self.fake.stats.answered[status] += 1
        self._send(status, answer, ctype)


def main(argv: list[str] | None = None) -> None:
    """Serve in its own process: the client benchmark (print the URL, stop on stdin EOF or
    timeout) or the stand-in container (``--recorded``: stop on SIGTERM or timeout)."""
    import argparse
    import signal
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--tei", type=Path, help="TEI answered for every PDF")
    parser.add_argument("--pool-wait", type=float, default=1.0, help="Grobid's poolMaxWait")
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--recorded", type=Path, nargs="*", default=[],
        help="answer the real TEI recorded for each PDF under these folders (data/ or a landing zone)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    default_tei = args.tei.read_bytes() if args.tei else None
    if default_tei is None and not args.recorded:
        default_tei = MALFORMED_TEI + b"</teiHeader></TEI>"
    tei_by_sha: dict[str, bytes] = {}
    for folder in args.recorded:
        data_dir, landing_dir = (
            (folder, folder / "none") if (folder / "pdf_tei_pairs").is_dir() else (folder / "none", folder)
        )
        tei_by_sha |= {p.sha256: p.tei.read_bytes() for p in recorded_pairs(data_dir, landing_dir)}
    fake = FakeGrobid(
        tei_by_sha, slots=args.slots, latency_s=args.latency, default_tei=default_tei,
        pool_wait_s=args.pool_wait, host=args.host, port=args.port,
    )  # fmt: skip
    done = threading.Event()
    with fake:
        print(fake.url, flush=True)
        if args.recorded:
            print(f"serving {len(tei_by_sha)} recorded PDF->TEI pairs", file=sys.stderr, flush=True)
            signal.signal(signal.SIGTERM, lambda *_: done.set())
            signal.signal(signal.SIGINT, lambda *_: done.set())
            # the chaos test's "Grobid answering 503": every engine busy from SIGUSR1 to SIGUSR2
            # (`docker kill --signal USR1 <grobid>`), the server itself up all along
            signal.signal(signal.SIGUSR1, lambda *_: setattr(fake.faults, "all_busy", True))
            signal.signal(signal.SIGUSR2, lambda *_: setattr(fake.faults, "all_busy", False))
        else:
            threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
        done.wait(args.max_seconds)


if __name__ == "__main__":
    main()
