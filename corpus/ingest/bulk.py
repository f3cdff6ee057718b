"""arXiv's bulk data: layout, manifests, member names, and where the bytes are read from.

arXiv publishes its full text for bulk use in the requester-pays bucket ``s3://arxiv``
(https://info.arxiv.org/help/bulk_data_s3.html); a bulk root (``CORPUS_BULK``) is that
bucket, a local directory synced from it (``aws s3 sync --request-payer requester``), or
another ``s3://`` / ``gs://`` URL laid out the same way::

    pdf/arXiv_pdf_manifest.xml        <arXivPDF><file>...</file>...  one <file> per tar
    pdf/arXiv_pdf_<yymm>_<seq>.tar    ~500 MB each; members <yymm>/<name>[v<N>].pdf
    src/arXiv_src_manifest.xml        <arXivSRC> ... the same fields
    src/arXiv_src_<yymm>_<seq>.tar    members <yymm>/<name>.gz (a gzipped tar or a gzipped
                                      single file) or <yymm>/<name>.pdf (PDF-only submissions)

A ``<file>`` gives ``content_md5sum``, ``filename``, ``first_item``, ``last_item``,
``md5sum`` (of the tar), ``num_items``, ``seq_num``, ``size``, ``timestamp`` and ``yymm``.
A member's name is the paper id without its slash (``astro-ph0001001`` is
``astro-ph/0001001``, ``2101.00001`` stays), optionally with the version
(``2101.00001v2.pdf``), in a folder named by the id's month.

The Kaggle mirror of the PDFs (``gs://arxiv-dataset/arxiv``) has no tars: one file per
version, ``<archive>/pdf/<yymm>/<number>v<N>.pdf`` (new-style ids under archive
``arxiv``); :func:`kaggle_pdf_path` names them.

Nothing read here is trusted: manifest fields are validated (a tar file name must be
``pdf|src/arXiv_<pdf|src>_<yymm>_<seq>.tar``, so it can never point elsewhere), member
names are parsed into ids and never become paths, and sizes and counts are capped.
``s3://`` and ``gs://`` roots need the optional extra ``corpus[bulk]`` (fsspec, s3fs,
gcsfs), imported only when such a root is opened.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from lxml import etree
from pydantic import BaseModel, ConfigDict

from corpus.ingest import arxiv_ids

Kind = Literal["pdf", "eprint"]
TAR_DIRS: dict[str, Kind] = {"pdf": "pdf", "src": "eprint"}  # folder in the bucket -> file kind
INDEX_ASSET = "arxiv_bulk_index"  # the tars' member index (corpus.ingest.bulk_index)
TARS_ASSET = "arxiv_bulk_tars"
MANIFESTS = {"pdf": "pdf/arXiv_pdf_manifest.xml", "src": "src/arXiv_src_manifest.xml"}
MANIFEST_ROOTS = {"pdf": "arXivPDF", "src": "arXivSRC"}
MAX_MANIFEST_BYTES = 256 << 20  # the real ones are a few MB
MAX_MANIFEST_ENTRIES = 1_000_000
MAX_TAR_BYTES = 64 << 30  # arXiv's are ~500 MB
BULK_EXTRA = "pip install -e '.[bulk]'"

_TAR_NAME_RE = re.compile(r"(?P<dir>pdf|src)/arXiv_(?P<tag>pdf|src)_(?P<yymm>\d{4})_(?P<seq>\d{3,4})\.tar")
_MD5_RE = re.compile(r"[0-9a-f]{32}")
_MEMBER_RE = re.compile(
    r"(?P<yymm>\d{4})/(?:(?P<new>\d{4}\.\d{4,5})|(?P<archive>[a-z][a-z-]*)(?P<num>\d{7}))"
    r"(?:v(?P<v>[1-9]\d{0,3}))?(?P<ext>\.pdf|\.gz)"
)
_ITEM_RE = re.compile(
    r"(?:(?P<new>\d{4}\.\d{4,5})|(?P<archive>[a-z][a-z-]*)(?P<num>\d{7}))(?:v(?P<v>[1-9]\d{0,3}))?"
)


class ManifestEntry(BaseModel):
    """One ``<file>`` of a manifest, validated."""

    model_config = ConfigDict(frozen=True)

    filename: str  # pdf/arXiv_pdf_0001_001.tar (validated: never anything else)
    kind: Kind
    yymm: str
    seq_num: int
    md5sum: str
    size: int
    num_items: int
    first_item: str = ""
    last_item: str = ""
    content_md5sum: str = ""
    timestamp: str = ""

    @property
    def stem(self) -> str:
        return self.filename.rsplit("/", 1)[-1][: -len(".tar")]


class ManifestProblem(BaseModel):
    """A ``<file>`` that could not be used, and why."""

    model_config = ConfigDict(frozen=True)

    manifest: str
    index: int  # position of the <file> in the manifest
    filename: str
    reason: str


class MemberName(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str  # canonical arXiv id
    version: int | None
    ext: str  # .pdf | .gz


def parse_member_name(name: str) -> MemberName | None:
    """The paper a tar member holds (``2101/2101.00001v1.pdf``, ``0001/astro-ph0001001.gz``),
    or ``None`` for any other name (the name is only parsed, never used as a path)."""
    if len(name) > 64:
        return None
    m = _MEMBER_RE.fullmatch(name)
    if m is None:
        return None
    raw = m["new"] or f"{m['archive']}/{m['num']}"
    try:
        parsed = arxiv_ids.parse(raw)
    except arxiv_ids.InvalidArxivId:
        return None
    month = parsed.id.split("/")[-1][:4]
    if month != m["yymm"]:  # a member of 0001/ holds a paper of 0001
        return None
    return MemberName(id=parsed.id, version=int(m["v"]) if m["v"] else None, ext=m["ext"])


def parse_item(item: str) -> str | None:
    """A manifest's ``first_item`` / ``last_item`` as a canonical id (``None`` if it is not one)."""
    m = _ITEM_RE.fullmatch(item.strip())
    if m is None:
        return None
    return arxiv_ids.try_normalize(m["new"] or f"{m['archive']}/{m['num']}")


def id_yymm(arxiv_id: str) -> str:
    """The month folder of an id: ``2101.00001`` -> 2101, ``astro-ph/0001001`` -> 0001."""
    return arxiv_id.split("/")[-1][:4]


def member_name(arxiv_id: str, version: int | None, ext: str) -> str:
    """The tar member arXiv would name for this paper (``0001/astro-ph0001001v2.pdf``)."""
    stem = arxiv_id.replace("/", "")
    return f"{id_yymm(arxiv_id)}/{stem}{f'v{version}' if version else ''}{ext}"


def kaggle_pdf_path(arxiv_id: str, version: int) -> str:
    """Path of one PDF version under the Kaggle mirror ``gs://arxiv-dataset/arxiv``."""
    if "/" in arxiv_id:
        archive, number = arxiv_id.split("/")
        return f"{archive}/pdf/{number[:4]}/{number}v{version}.pdf"
    return f"arxiv/pdf/{arxiv_id[:4]}/{arxiv_id}v{version}.pdf"


# ---------------------------------------------------------------- manifests


def _text(el, tag: str) -> str:
    child = el.find(tag)
    return (child.text or "").strip() if child is not None else ""


def parse_manifest(data: bytes, which: str) -> tuple[list[ManifestEntry], list[ManifestProblem]]:
    """The ``<file>`` entries of ``pdf/arXiv_pdf_manifest.xml`` (``which="pdf"``) or the src one.

    Entries with a bad file name, MD5, size or count are problems (with a reason), not
    entries; a document that is not a manifest at all raises :class:`ValueError`."""
    name = MANIFESTS[which]
    if len(data) > MAX_MANIFEST_BYTES:
        raise ValueError(f"{name}: {len(data)} bytes is more than a manifest can be ({MAX_MANIFEST_BYTES})")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"{name}: not XML: {exc}") from exc
    if root.tag != MANIFEST_ROOTS[which]:
        raise ValueError(f"{name}: root element is <{root.tag}>, expected <{MANIFEST_ROOTS[which]}>")
    entries: list[ManifestEntry] = []
    problems: list[ManifestProblem] = []
    for i, el in enumerate(root.iterfind("file")):
        if i >= MAX_MANIFEST_ENTRIES:
            problems.append(ManifestProblem(manifest=name, index=i, filename="", reason="too many entries"))
            break
        filename = _text(el, "filename")
        reason = None
        m = _TAR_NAME_RE.fullmatch(filename)
        md5 = _text(el, "md5sum").lower()
        size, count, seq = _text(el, "size"), _text(el, "num_items"), _text(el, "seq_num")
        if m is None or m["dir"] != which or m["tag"] != which:
            reason = f"file name is not {which}/arXiv_{which}_<yymm>_<seq>.tar"
        elif _text(el, "yymm") and _text(el, "yymm") != m["yymm"]:
            reason = f"yymm {_text(el, 'yymm')!r} does not match the file name"
        elif not _MD5_RE.fullmatch(md5):
            reason = f"md5sum {md5[:40]!r} is not an MD5"
        elif not size.isdigit() or int(size) > MAX_TAR_BYTES:
            reason = f"size {size[:20]!r} is not a size up to {MAX_TAR_BYTES}"
        elif count and (not count.isdigit() or int(count) > 10_000_000):
            reason = f"num_items {count[:20]!r} is not a count"
        if reason is not None:
            problems.append(ManifestProblem(manifest=name, index=i, filename=filename[:200], reason=reason))
            continue
        entries.append(
            ManifestEntry(
                filename=filename,
                kind=TAR_DIRS[which],
                yymm=m["yymm"],
                seq_num=int(seq) if seq.isdigit() else int(m["seq"]),
                md5sum=md5,
                size=int(size),
                num_items=int(count) if count else 0,
                first_item=_text(el, "first_item")[:64],
                last_item=_text(el, "last_item")[:64],
                content_md5sum=_text(el, "content_md5sum").lower()[:32],
                timestamp=_text(el, "timestamp")[:32],
            )
        )
    return entries, problems


def manifest_xml(which: str, entries: list[ManifestEntry]) -> bytes:
    """A manifest in arXiv's format (used by the demo generator and tests)."""
    root = etree.Element(MANIFEST_ROOTS[which])
    for e in entries:
        el = etree.SubElement(root, "file")
        fields = {
            "content_md5sum": e.content_md5sum,
            "filename": e.filename,
            "first_item": e.first_item,
            "last_item": e.last_item,
            "md5sum": e.md5sum,
            "num_items": str(e.num_items),
            "seq_num": str(e.seq_num),
            "size": str(e.size),
            "timestamp": e.timestamp,
            "yymm": e.yymm,
        }
        for tag, value in fields.items():
            etree.SubElement(el, tag).text = value
    body = etree.tostring(root, pretty_print=True, encoding="unicode")
    return ("<?xml version='1.0' standalone='yes'?>\n" + body).encode()


# ---------------------------------------------------------------- roots: local, s3://, gs://


class BulkRoot:
    """Read access to a bulk root: whole small files, sequential streams, byte ranges."""

    url: str

    @staticmethod
    def open(url: str, storage_options: dict | None = None) -> BulkRoot:
        """A local directory, or an ``s3://`` (requester pays) / ``gs://`` URL via fsspec."""
        url = str(url).strip()
        if not url:
            raise ValueError("no bulk root: set CORPUS_BULK to a directory, s3:// or gs:// URL")
        if "://" not in url or url.startswith("file://"):
            return LocalRoot(Path(url.removeprefix("file://")))
        return FsspecRoot(url, storage_options or {})

    def size(self, rel: str) -> int | None:
        """Bytes of ``rel``, or ``None`` when it is not there."""
        raise NotImplementedError

    def read_small(self, rel: str, limit: int) -> bytes:
        raise NotImplementedError

    def stream(self, rel: str):
        """A binary file object read from the start (for indexing)."""
        raise NotImplementedError

    def read_range(self, rel: str, start: int, length: int) -> bytes:
        """Exactly the bytes asked for, or fewer when the file ends first."""
        raise NotImplementedError

    def iter_range(self, rel: str, start: int, length: int, chunk: int = 8 << 20) -> Iterator[bytes]:
        """``length`` bytes from ``start`` in chunks; raises :class:`EOFError` if the file ends first."""
        done = 0
        while done < length:
            want = min(chunk, length - done)
            data = self.read_range(rel, start + done, want)
            if len(data) < want:
                raise EOFError(f"{rel} ends {length - done - len(data)} bytes before the member does")
            done += want
            yield data

    def close(self) -> None:
        pass


def _safe_rel(rel: str) -> str:
    """Only validated names reach the root (tar names, manifests); refuse anything else."""
    if rel not in MANIFESTS.values() and not _TAR_NAME_RE.fullmatch(rel) and not rel.endswith(".pdf"):
        raise ValueError(f"not a bulk-root file name: {rel!r}")
    if rel.startswith("/") or ".." in rel.split("/"):
        raise ValueError(f"not a bulk-root file name: {rel!r}")
    return rel


class LocalRoot(BulkRoot):
    """A directory; reads use ``pread`` on a small cache of open files (no seeks shared)."""

    MAX_OPEN = 16

    def __init__(self, path: Path):
        self.path = Path(path)
        self.url = str(self.path)
        self._fds: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def _file(self, rel: str) -> Path:
        return self.path / _safe_rel(rel)

    def size(self, rel: str) -> int | None:
        try:
            return self._file(rel).stat().st_size
        except FileNotFoundError:
            return None

    def read_small(self, rel: str, limit: int) -> bytes:
        with open(self._file(rel), "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise ValueError(f"{rel} is larger than {limit} bytes")
        return data

    def stream(self, rel: str):
        return open(self._file(rel), "rb", buffering=1 << 20)  # noqa: SIM115 - the caller closes it

    def _fd(self, rel: str) -> int:
        with self._lock:
            fd = self._fds.pop(rel, None)
            if fd is None:
                fd = os.open(self._file(rel), os.O_RDONLY)
                while len(self._fds) >= self.MAX_OPEN:
                    os.close(self._fds.popitem(last=False)[1])
            self._fds[rel] = fd
            return fd

    def read_range(self, rel: str, start: int, length: int) -> bytes:
        fd = self._fd(rel)
        parts, got = [], 0
        while got < length:
            block = os.pread(fd, length - got, start + got)
            if not block:
                break
            parts.append(block)
            got += len(block)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()


def _filesystem(protocol: str, options: dict):
    """The fsspec filesystem for a remote root, or a clear error naming the extra to install."""
    try:
        import fsspec

        if protocol == "s3":
            import s3fs  # noqa: F401 - fsspec's s3 implementation
        elif protocol in ("gs", "gcs"):
            import gcsfs  # noqa: F401 - fsspec's gs implementation
    except ImportError as exc:
        raise ImportError(
            f"reading a {protocol}:// bulk root needs the optional extra: {BULK_EXTRA}"
        ) from exc
    opts = dict(options)
    if protocol == "s3":
        opts.setdefault("requester_pays", True)  # s3://arxiv bills the reader
    return fsspec.filesystem(protocol, **opts)


class FsspecRoot(BulkRoot):
    """An ``s3://`` or ``gs://`` root: range GETs for members, one streamed GET per tar to index."""

    def __init__(self, url: str, options: dict):
        self.url = url.rstrip("/")
        protocol, _, rest = self.url.partition("://")
        self.base = rest.strip("/")
        self.fs = _filesystem(protocol, options)

    def _key(self, rel: str) -> str:
        return f"{self.base}/{_safe_rel(rel)}"

    def size(self, rel: str) -> int | None:
        try:
            return int(self.fs.info(self._key(rel))["size"])
        except FileNotFoundError:
            return None

    def read_small(self, rel: str, limit: int) -> bytes:
        size = self.size(rel)
        if size is None:
            raise FileNotFoundError(f"{self.url}/{rel}")
        if size > limit:
            raise ValueError(f"{rel} is larger than {limit} bytes")
        return self.fs.cat_file(self._key(rel))

    def stream(self, rel: str):
        return self.fs.open(self._key(rel), "rb", block_size=8 << 20, cache_type="readahead")

    def read_range(self, rel: str, start: int, length: int) -> bytes:
        if length <= 0:
            return b""
        return self.fs.cat_file(self._key(rel), start=start, end=start + length)
