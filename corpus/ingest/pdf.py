"""PDF probing and the S2ORC PDF selection filters (s2orc-paper.txt App. B; SPEC.md §2).

S2ORC drops, before Grobid, PDFs that PyPDF2 cannot read, that have more than
50 pages, or whose page is wider than tall. :func:`probe_pdf` reads just what
those rules need -- the page count and the first page's size -- with pypdf in
non-strict mode and without rendering or decoding content streams, so it costs
milliseconds per file. Bad files never raise: the probe carries an ``error``.

Choices (SPEC.md: marked so they can be revisited):

* page count = the page tree's ``/Count`` (what PyPDF2 reported for S2ORC and
  what poppler's ``pdfinfo`` prints); the whole tree is walked only when
  ``/Count`` is missing or invalid. Walking every page of a PDF with object
  streams costs 10-50x more. A ``/Count`` above the file's object count (every
  page is an object) is a lie, and the PDF unreadable: 10^20 pages must not
  reach an Int64 column.
* page size = the first page's ``/MediaBox`` (inherited through the page tree),
  times ``/UserUnit``, width and height swapped when ``/Rotate`` is 90 or 270.
* an encrypted PDF is readable only if the empty user password opens it (what
  Grobid / pdfalto can do); RC4 and AES (128 and 256) are decrypted (AES through
  ``pypdf[crypto]``, i.e. the ``cryptography`` package).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# The version of arxiv_pdfs (corpus.versions): bump it whenever their rows change.
PDF_VERSION = "corpus.ingest.pdf/1"

if TYPE_CHECKING:
    from pypdf import PdfReader
    from pypdf.generic import DictionaryObject


# Filter reasons, in the order pdf_filter checks them (App. B's table order).
UNREADABLE = "unreadable"  # PyPDF2 error in S2ORC: broken, truncated, not a PDF, needs a password
TOO_MANY_PAGES = "too_many_pages"  # more than max_pages (50): likely a thesis or report
LANDSCAPE = "landscape"  # first page wider than tall: likely slides
FILTER_ORDER = (UNREADABLE, TOO_MANY_PAGES, LANDSCAPE)
S2ORC_LABELS = {
    UNREADABLE: "PyPDF2 error",
    TOO_MANY_PAGES: "Over 50 pages",
    LANDSCAPE: "Page width > height",
}
KEPT = "kept"  # the row of filter_table counting PDFs that pass

MAX_PAGES = 50
MAX_PLAUSIBLE_PAGES = 1_000_000  # a /Count above this (or above the file's objects) is a lie
DEFAULT_MAX_BYTES = 256 * 1024 * 1024  # larger files are not parsed at all
DEFAULT_TIMEOUT_S = 10.0
_HEADER_WINDOW = 1024  # pdf.js / poppler accept junk before %PDF- within the first KiB
_TAIL_WINDOW = 1024  # where %%EOF must be for a file that was not cut short
_MAX_TREE_DEPTH = 64

logging.getLogger("pypdf").setLevel(logging.ERROR)  # non-strict mode warns on every repaired file


@dataclass(frozen=True, slots=True)
class PdfProbe:
    """What the filters need to know about one PDF; ``error`` is set when it could not be read."""

    pages: int | None = None
    first_page_width: float | None = None  # points, as displayed (after /Rotate)
    first_page_height: float | None = None
    rotate: int = 0
    encrypted: bool = False
    error: str | None = None

    @property
    def readable(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict:
        return asdict(self)


class ProbeTimeout(BaseException):
    """The time cap of one probe ran out (pathological file).

    A BaseException, so pypdf's own ``except Exception`` repair paths cannot swallow it.
    """


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """SIGALRM-based cap; only possible in the main thread, elsewhere a no-op (size cap still holds)."""
    if (
        not seconds
        or seconds <= 0
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def _alarm(_signum: int, _frame: object) -> None:
        raise ProbeTimeout(f"timeout: probing took more than {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _get(node: DictionaryObject, key: str, default: object = None) -> object:
    """``node[key]`` resolved through indirect references (``dict.get`` does not resolve)."""
    value = node.get(key)
    return default if value is None else value.get_object()


def _first_page(pages_root: DictionaryObject) -> tuple[DictionaryObject, object, object]:
    """Descend ``/Kids[0]`` to the first leaf; return it with its inherited MediaBox and Rotate."""
    from pypdf.generic import ArrayObject, DictionaryObject

    node = pages_root
    mediabox = _get(node, "/MediaBox")
    rotate = _get(node, "/Rotate")
    for _ in range(_MAX_TREE_DEPTH):
        if _get(node, "/Type") == "/Page" or "/Kids" not in node:
            return node, mediabox, rotate
        kids = _get(node, "/Kids")
        if not isinstance(kids, ArrayObject) or not kids:
            raise ValueError("page tree node without kids")
        node = kids[0].get_object()
        if not isinstance(node, DictionaryObject):
            raise ValueError("page tree kid is not a dictionary")
        mediabox = _get(node, "/MediaBox", mediabox)
        rotate = _get(node, "/Rotate", rotate)
    raise ValueError(f"page tree deeper than {_MAX_TREE_DEPTH} levels")


def _probe_reader(reader: PdfReader, encrypted: bool) -> PdfProbe:
    from pypdf.generic import ArrayObject

    root = reader.trailer["/Root"].get_object()
    pages_root = root["/Pages"].get_object()
    count = _get(pages_root, "/Count")
    pages = int(count) if isinstance(count, int) and count > 0 else len(reader.pages)
    if pages < 1:
        raise ValueError("PDF has no pages")
    size = _get(reader.trailer, "/Size")
    objects = int(size) if isinstance(size, int) and size > 0 else MAX_PLAUSIBLE_PAGES
    if pages > min(objects, MAX_PLAUSIBLE_PAGES):  # every page is an object of its own
        raise ValueError(f"page tree /Count {pages} is more than the file's {objects} objects")
    page, mediabox, rotate = _first_page(pages_root)
    if mediabox is None:
        raise ValueError("first page has no /MediaBox")
    if not isinstance(mediabox, ArrayObject) or len(mediabox) < 4:
        raise ValueError(f"first page /MediaBox is not a rectangle: {mediabox!r}"[:120])
    x0, y0, x1, y1 = (float(v.get_object()) for v in mediabox[:4])
    unit = float(_get(page, "/UserUnit", 1.0))
    width, height = abs(x1 - x0) * unit, abs(y1 - y0) * unit
    if width <= 0 or height <= 0:
        raise ValueError(f"first page has an empty /MediaBox {[x0, y0, x1, y1]}")
    rot = int(rotate) % 360 if rotate is not None else 0
    if rot in (90, 270):
        width, height = height, width
    return PdfProbe(pages, round(width, 3), round(height, 3), rot, encrypted, None)


def probe_pdf(
    source: str | os.PathLike[str] | bytes,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
) -> PdfProbe:
    """Page count and first-page size of a PDF (a path or its bytes); never raises on bad files.

    Files larger than ``max_bytes`` are not parsed; parsing longer than
    ``timeout_s`` is cut (main thread only). Both give a probe with ``error``.
    """
    from pypdf import PasswordType, PdfReader  # here, not at import: 22 MB in every process

    encrypted, tail = False, b"%%EOF"
    try:
        if isinstance(source, bytes | bytearray | memoryview):
            data = bytes(source)
            size, head = len(data), data[:_HEADER_WINDOW]
            opener = contextlib.nullcontext(io.BytesIO(data))
        else:
            path = Path(source)
            size = path.stat().st_size
            opener = open(path, "rb")  # noqa: SIM115 - closed by the with below
        with opener as fh:
            if size > max_bytes:
                return PdfProbe(error=f"too large to probe: {size} bytes > {max_bytes}")
            if not isinstance(source, bytes | bytearray | memoryview):
                head = fh.read(_HEADER_WINDOW)
                fh.seek(0)
            if b"%PDF-" not in head:
                return PdfProbe(error="not a PDF: no %PDF- header")
            fh.seek(max(0, size - _TAIL_WINDOW))
            tail = fh.read(_TAIL_WINDOW)
            fh.seek(0)
            with _time_limit(timeout_s):
                reader = PdfReader(fh, strict=False)
                encrypted = reader.is_encrypted
                if encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
                    return PdfProbe(encrypted=True, error="encrypted: the empty password does not open it")
                return _probe_reader(reader, encrypted)
    except (Exception, ProbeTimeout) as exc:  # pypdf raises many types on broken files
        text = str(exc).strip()
        message = f"{type(exc).__name__}: {text.splitlines()[0][:200]}" if text else type(exc).__name__
        if b"%%EOF" not in tail:
            message = f"truncated (no %%EOF at the end): {message}"
        return PdfProbe(encrypted=encrypted, error=message)


def pdf_filter(probe: PdfProbe, max_pages: int = MAX_PAGES) -> tuple[bool, str | None]:
    """``(True, None)`` if the PDF goes to Grobid, else ``(False, reason)`` -- the first of
    :data:`FILTER_ORDER` that fails: unreadable, then too many pages, then landscape."""
    if (
        probe.error is not None
        or not probe.pages
        or not probe.first_page_width
        or not probe.first_page_height
    ):
        return False, UNREADABLE
    if probe.pages > max_pages:
        return False, TOO_MANY_PAGES
    if probe.first_page_width > probe.first_page_height:
        return False, LANDSCAPE
    return True, None


def pdf_row(probe: PdfProbe, max_pages: int = MAX_PAGES) -> dict:
    """The probe's columns plus ``passed`` and ``filter_reason``, as one ``arxiv_pdfs`` row part."""
    passed, reason = pdf_filter(probe, max_pages)
    row = probe.as_dict()
    row.update(passed=passed, filter_reason=reason)
    return row


def filter_table(rows: Iterable[str | None | Mapping]) -> list[dict]:
    """Counts per filter reason like S2ORC's Table 8: ``[{reason, label, count, share}]``.

    ``rows`` are reasons (``None`` = kept) or mappings with a ``filter_reason``
    (or ``reason``) key. Every reason of :data:`FILTER_ORDER` gets a row, even
    at zero; other reasons (e.g. ``missing`` from the fetcher) follow in first-
    seen order; the last row, ``kept``, makes the counts add up to the total.
    """
    counts: Counter[str] = Counter()
    for row in rows:
        if isinstance(row, Mapping):
            row = row.get("filter_reason", row.get("reason"))
        counts[KEPT if row is None else str(row)] += 1
    total = sum(counts.values())
    order = list(FILTER_ORDER) + [r for r in counts if r not in FILTER_ORDER and r != KEPT] + [KEPT]
    return [
        {
            "reason": reason,
            "label": S2ORC_LABELS.get(reason, reason),
            "count": counts[reason],
            "share": round(counts[reason] / total, 4) if total else 0.0,
        }
        for reason in order
    ]
