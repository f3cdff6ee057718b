"""Builders for hostile landing-zone inputs (OAI pages, PDFs, TEI, e-prints) and the means to
check that nothing outside a landing zone is read. Shared by test_landing_safety.py and
test_hostile_inputs.py; nothing here is a test itself."""

from __future__ import annotations

import contextlib
import ctypes
import gzip
import io
import os
import shutil
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

OAI_NS = "http://www.openarchives.org/OAI/2.0/"


def record(
    arxiv_id: str,
    datestamp: str | None = "2025-01-15",
    title: str = "A title",
    extra: str = "",
) -> str:
    """One ``<record>`` in arXiv's OAI ``arXiv`` format (``datestamp=None``: no element)."""
    stamp = f"<datestamp>{datestamp}</datestamp>" if datestamp is not None else ""
    return (
        f"<record><header><identifier>oai:arXiv.org:{arxiv_id}</identifier>{stamp}<setSpec>cs</setSpec>"
        f'</header><metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/" '
        f'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><id>{arxiv_id}</id>'
        f"<created>2025-01-10</created><authors><author><keyname>Doe</keyname><forenames>Jane</forenames>"
        f"</author></authors><title>{title}</title><categories>cs.CL</categories>{extra}"
        f"<abstract>We study things.</abstract></arXiv></metadata></record>"
    )


def page(records: list[str], day: str | None = "2025-01-15", decl: str = 'encoding="UTF-8"') -> str:
    """A ListRecords reply; ``day`` is the one-day harvest's from/until (None: no request dates)."""
    dates = f' from="{day}" until="{day}"' if day else ""
    return (
        f'<?xml version="1.0" {decl}?>\n'
        f'<OAI-PMH xmlns="{OAI_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        f"<responseDate>2025-01-16T00:00:00Z</responseDate>"
        f'<request verb="ListRecords"{dates} metadataPrefix="arXiv">http://export.arxiv.org/oai2</request>'
        f"<ListRecords>{''.join(records)}</ListRecords></OAI-PMH>"
    )


def utf16(text: str) -> bytes:
    """A page in UTF-16 with its byte-order mark and a declaration that says so."""
    return text.replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16")


def sparse(path: Path, size: int) -> Path:
    """A file that reads as ``size`` bytes but occupies a few KB on disk."""
    with open(path, "wb") as fh:
        fh.write(b"%PDF-1.4\n")
        fh.truncate(size)
    return path


def minimal_pdf(count: int | str = 1, width: int = 612, height: int = 792, note: str = "") -> bytes:
    """A hand-written one-page PDF whose page tree claims ``/Count count`` (xref offsets exact)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [3 0 R] /Count {count} >>".encode(),
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width} {height}] /Contents 4 0 R >>".encode(),
    ]
    stream = f"BT /F1 12 Tf 72 720 Td ({note or 'hello'}) Tj ET".encode()
    objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def tar_gz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return buf.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o644
    return info


def tex(body: str = "Hello world.", bib: str = "") -> bytes:
    return (
        "\\documentclass{article}\n\\title{A paper}\n\\begin{document}\n\\maketitle\n"
        f"\\section{{Introduction}}\n{body}\n{bib}\n\\end{{document}}\n"
    ).encode()


def gz(data: bytes) -> bytes:
    return gzip.compress(data)


# ---------------------------------------------------------------- unreadable files, even for root

CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _capabilities():
    libc = ctypes.CDLL(None, use_errno=True)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    return libc, header, data


@contextlib.contextmanager
def without_read_override() -> Iterator[None]:
    """Make mode-000 files unreadable to this thread even when it runs as root (the test
    machine does): CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH leave the *effective* set of
    the calling thread only, and come back after (they stay in the permitted set)."""
    if os.geteuid() != 0:
        yield
        return
    libc, header, data = _capabilities()
    saved = data[0].effective
    data[0].effective = saved & ~((1 << CAP_DAC_OVERRIDE) | (1 << CAP_DAC_READ_SEARCH))
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    try:
        yield
    finally:
        data[0].effective = saved
        libc.capset(ctypes.byref(header), data)


def unprivileged_prefix() -> list[str]:
    """A command prefix under which root cannot read mode-000 files (children included)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise RuntimeError("running as root without setpriv: cannot make files unreadable")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]


# ---------------------------------------------------------------- nothing outside is read

AUDIT_ENV = "CORPUS_TEST_FORBIDDEN"
AUDIT_LOG_ENV = "CORPUS_TEST_AUDIT_LOG"
SITECUSTOMIZE = f'''
import os, sys
_forbidden = os.environ.get("{AUDIT_ENV}")
_log = os.environ.get("{AUDIT_LOG_ENV}")
if _forbidden and _log:
    def _hook(event, args, _f=_forbidden, _l=_log):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if path.startswith(_f) or os.path.realpath(path).startswith(_f):
                with open(_l, "a") as fh:
                    fh.write(f"{{os.getpid()}} {{path}}\\n")
    sys.addaudithook(_hook)
'''


def audit_env(forbidden: Path, log: Path, site_dir: Path) -> dict[str, str]:
    """Environment under which every Python process (runs, Pipes workers) appends to ``log``
    each file it opens under ``forbidden`` (a ``sitecustomize`` with an audit hook)."""
    site_dir.mkdir(parents=True, exist_ok=True)
    (site_dir / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join(
        [str(site_dir), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    return {AUDIT_ENV: str(forbidden), AUDIT_LOG_ENV: str(log), "PYTHONPATH": path}


_OPENED: list[str] = []
_WATCH: list[str] = []


def _hook(event: str, args: tuple) -> None:
    if _WATCH and event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
        path = os.fsdecode(args[0])
        if any(path.startswith(w) or os.path.realpath(path).startswith(w) for w in _WATCH):
            _OPENED.append(path)


_installed = False


@contextlib.contextmanager
def opened_under(forbidden: Path) -> Iterator[list[str]]:
    """Every file opened in this process under ``forbidden`` while the block runs."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)  # cannot be removed: it does nothing while _WATCH is empty
        _installed = True
    _OPENED.clear()
    _WATCH[:] = [str(forbidden)]
    seen: list[str] = []
    try:
        yield seen
    finally:
        _WATCH.clear()
        seen.extend(_OPENED)
