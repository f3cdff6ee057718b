"""arXiv e-prints: unpack without trusting them, find the main .tex, inline its inputs.

The main file is the one LaTeX would build for the paper (:func:`main_file`): arXiv's
``00README`` when it names one, else the document judged by what it reaches through its
inputs and bibliography (latexdiff output, templates, rebuttals and old drafts lose).

An e-print is whatever the submitter uploaded, served as a gzip'd tar, a gzip'd
single file (usually one .tex) or a bare PDF. Nothing in it is trusted:

* members are written by this module itself (never ``TarFile.extract``), only
  regular files and directories, at validated relative paths under ``scratch``;
  absolute names, ``..`` components and links that leave the tree fail the paper,
  links that stay inside are skipped and flagged;
* the decompressed stream, each file and the member count are capped, so a gzip
  bomb stops at the cap instead of filling the disk;
* every problem comes back as a :class:`Failure` (short code + message), never
  as an exception, so one bad paper cannot crash a partition.

:func:`assemble_source` then inlines ``\\input`` / ``\\include`` / ``\\subfile`` /
``\\import`` (comments stripped first, so commented-out inputs are not followed),
with a depth limit and loop detection, and gathers the ``.bbl`` and ``.bib`` texts.
An e-print whose document only wraps a PDF (``\\includepdf`` of the paper, a line of
its own at most) has no LaTeX text to parse: :func:`load_eprint` says ``pdf_wrapper``.
Files that are not UTF-8 are decoded as latin-1 (every byte maps to a character,
so nothing is lost) and named in ``LatexSource.non_utf8``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shutil
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# The version of arxiv_sources (corpus.versions): bump it whenever their rows change.
# 2: the main file LaTeX would build (issue 34, D); 3 (issue 44): latexdiff output told apart by
# its marks' count, header and name; the e-print's own .bst (its output.bibitem) kept with the
# packages, for natbib's citation mode
EPRINT_VERSION = "corpus.ingest.eprint/3"

EprintKind = Literal["tar", "gzip_tex", "tex", "pdf", "ps", "empty", "unknown"]

_BLOCK = 512
_CHUNK = 1 << 16
_JUNK_NAMES = {".DS_Store", "Thumbs.db"}


class UnpackLimits(BaseModel):
    """Caps on what one e-print may unpack to (arXiv itself caps uploads at 50 MB compressed)."""

    model_config = ConfigDict(frozen=True)

    max_total_bytes: int = 512 * 1024 * 1024  # all files together, decompressed
    max_file_bytes: int = 128 * 1024 * 1024  # one file
    max_files: int = 10_000  # members, directories included
    max_name_length: int = 1024


class Failure(BaseModel):
    """Why a paper could not be unpacked or parsed: a machine-friendly code and a message."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str


class EprintError(Exception):
    """A per-paper failure raised inside the LaTeX path; carries a :class:`Failure`-style code."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def failure(self) -> Failure:
        return Failure(code=self.code, message=self.message)


class UnpackResult(BaseModel):
    kind: EprintKind
    files: list[str] = Field(default_factory=list)  # relative POSIX paths written under scratch
    skipped: list[str] = Field(default_factory=list)  # "name: reason" for members not written
    bytes_written: int = 0
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


class LatexSource(BaseModel):
    """One paper's LaTeX, ready for :func:`corpus.parse.latex.parse_latex`."""

    main: str  # relative path of the main file
    text: str  # main file with inputs inlined and comments stripped
    bbl: str | None = None  # the .bbl matching the main file (comments stripped)
    bib: list[str] = Field(default_factory=list)  # .bib texts (used only when there is no .bbl)
    files: list[str] = Field(default_factory=list)  # every .tex file read, in order
    non_utf8: list[str] = Field(default_factory=list)  # files decoded as latin-1
    warnings: list[str] = Field(default_factory=list)  # missing inputs and the like
    # the e-print's own style and class files the paper loads ("macros.sty", "iclr2025_conference.sty",
    # "aastex631.cls"), comments stripped: their macros and the packages they load count as the paper's
    packages: dict[str, str] = Field(default_factory=dict)


class _Abort(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.failure = Failure(code=code, message=message)


class _CappedReader:
    """A read()-able stream that raises once more than ``cap`` bytes came out of it."""

    def __init__(self, raw, cap: int, prefix: bytes = b""):
        self.raw, self.cap, self.prefix, self.count = raw, cap, prefix, 0

    def read(self, n: int = -1) -> bytes:
        if self.prefix:
            if n is None or n < 0:
                data, self.prefix = self.prefix + self.raw.read(), b""
            else:
                data, self.prefix = self.prefix[:n], self.prefix[n:]
                if len(data) < n:
                    data += self.raw.read(n - len(data))
        else:
            data = self.raw.read(n if n is not None else -1)
        self.count += len(data)
        if self.count > self.cap:
            raise _Abort("too_large", f"decompressed stream exceeds {self.cap} bytes")
        return data


def _looks_like_tar(block: bytes) -> bool:
    if len(block) < _BLOCK:
        return False
    if block[257:262] == b"ustar":
        return True
    try:  # v7 tar: no magic, but the header checksum must match
        stored = int(block[148:156].split(b"\0", 1)[0].strip() or b"-1", 8)
    except ValueError:
        return False
    return stored == sum(block[:148]) + 8 * 32 + sum(block[156:_BLOCK])


def _is_texty(sample: bytes) -> bool:
    return b"\0" not in sample[:8192]


def _safe_relpath(name: str, limits: UnpackLimits) -> PurePosixPath | None:
    """The member's relative path, or None if it is the archive root ("./")."""
    if len(name) > limits.max_name_length or "\0" in name:
        raise _Abort("unsafe_path", f"member name too long or with NUL: {name[:80]!r}")
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise _Abort("unsafe_path", f"absolute member path: {name!r}")
    parts = [p for p in re.split(r"[/\\]", name) if p not in ("", ".")]
    if ".." in parts:
        raise _Abort("unsafe_path", f"member path leaves the archive: {name!r}")
    return PurePosixPath(*parts) if parts else None


def _is_junk(rel: PurePosixPath) -> bool:
    """macOS resource forks (``._x``, ``__MACOSX/``) and Finder files carry no LaTeX."""
    return rel.name.startswith("._") or rel.name in _JUNK_NAMES or "__MACOSX" in rel.parts


def _link_stays_inside(rel: PurePosixPath, target: str, hard: bool) -> bool:
    if not target or target.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", target):
        return False
    base = PurePosixPath() if hard else rel.parent
    depth = len(base.parts)
    for part in re.split(r"[/\\]", target):
        if part in ("", "."):
            continue
        depth = depth - 1 if part == ".." else depth + 1
        if depth < 0:
            return False
    return True


class _Writer:
    """Writes files under ``root`` only, counting bytes and files against the limits."""

    def __init__(self, root: Path, limits: UnpackLimits, dry: bool = False):
        self.root, self.limits, self.dry = root, limits, dry
        self.real_root = root.resolve()
        self.files: list[str] = []
        self.skipped: list[str] = []
        self.total = 0
        self.members = 0

    def count_member(self) -> None:
        self.members += 1
        if self.members > self.limits.max_files:
            raise _Abort("too_many_files", f"more than {self.limits.max_files} members")

    def _target(self, rel: PurePosixPath) -> Path:
        path = self.root.joinpath(*rel.parts)
        parent = path.parent.resolve()
        if parent != self.real_root and self.real_root not in parent.parents:
            raise _Abort("unsafe_path", f"member resolves outside the scratch dir: {rel}")
        return path

    def mkdir(self, rel: PurePosixPath) -> None:
        path = self._target(rel)
        if self.dry:
            return
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _Abort("bad_member", f"cannot create directory {rel}: {exc}") from exc

    def write(self, rel: PurePosixPath, stream, declared: int | None) -> None:
        cap = self.limits.max_file_bytes
        if declared is not None and declared > cap:
            raise _Abort("too_large", f"{rel} declares {declared} bytes (cap {cap})")
        if declared is not None and self.total + declared > self.limits.max_total_bytes:
            raise _Abort("too_large", f"archive exceeds {self.limits.max_total_bytes} bytes")
        if self.dry:  # validation pass: trust nothing but the declared size, write nothing
            self.total += declared or 0
            self.files.append(rel.as_posix())
            return
        if rel.parent.parts:
            self.mkdir(rel.parent)
        path = self._target(rel)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            raise _Abort("bad_member", f"cannot write {rel}: {exc}") from exc
        size = 0
        with os.fdopen(fd, "wb") as out:
            while block := stream.read(_CHUNK):
                size += len(block)
                if size > cap or self.total + size > self.limits.max_total_bytes:
                    raise _Abort("too_large", f"{rel} grows past the size cap")
                out.write(block)
        self.total += size
        key = rel.as_posix()
        if key not in self.files:
            self.files.append(key)


def _clear(scratch: Path) -> None:
    for child in scratch.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()


def _unpack_tar(stream, writer: _Writer) -> None:
    seen_any = False
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                seen_any = True
                _unpack_member(tar, member, writer)
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise _Abort("corrupt", f"damaged or unreadable tar: {exc}") from exc
    if not seen_any:
        raise _Abort("empty", "tar archive has no members")


def _unpack_member(tar: tarfile.TarFile, member: tarfile.TarInfo, writer: _Writer) -> None:
    writer.count_member()
    rel = _safe_relpath(member.name, writer.limits)
    if rel is None:
        return
    if member.issym() or member.islnk():
        if not _link_stays_inside(rel, member.linkname, member.islnk()):
            raise _Abort("unsafe_link", f"link {rel} -> {member.linkname!r} leaves the archive")
        writer.skipped.append(f"{rel}: link")
    elif _is_junk(rel):
        writer.skipped.append(f"{rel}: junk")
    elif member.isdir():
        writer.mkdir(rel)
    elif member.isreg():
        writer.write(rel, tar.extractfile(member), member.size)
    else:  # devices, fifos: nothing a paper needs
        raise _Abort("unsafe_member", f"special file {rel} (type {member.type!r})")


def _open_stream(raw, limits: UnpackLimits) -> tuple[EprintKind, _CappedReader | None]:
    """Sniff the e-print (gzip or not, then tar/PDF/text) and return a capped stream of it."""
    head = raw.read(_BLOCK)
    raw.seek(0)
    if not head:
        return "empty", None
    cap = limits.max_total_bytes + 64 * _CHUNK  # headers and padding on top of the content cap
    if head[:2] == b"\x1f\x8b":
        gz = gzip.GzipFile(fileobj=raw, mode="rb")
        try:
            first = gz.read(_BLOCK)
        except (OSError, EOFError, zlib.error) as exc:
            raise _Abort("corrupt", f"bad gzip stream: {exc}") from exc
        return _classify(first), _CappedReader(gz, cap, prefix=first)
    kind = _classify(head)
    return ("tex" if kind == "gzip_tex" else kind), _CappedReader(raw, cap)


def unpack_eprint(path: Path, scratch: Path, limits: UnpackLimits | None = None) -> UnpackResult:
    """Unpack one e-print into ``scratch`` (created; must be empty) and say what it was.

    A tar is read twice: a dry pass checks every header (paths, links, sizes, member
    count) without writing, so a hostile archive writes nothing at all; only then are
    files written. Never raises for a bad archive: the result carries ``failure``, and
    ``scratch`` is left empty.
    """
    limits = limits or UnpackLimits()
    scratch = Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    if any(scratch.iterdir()):
        raise ValueError(f"scratch directory is not empty: {scratch}")
    writer = _Writer(scratch, limits)
    kind: EprintKind = "unknown"
    try:
        with open(path, "rb") as raw:
            kind, stream = _open_stream(raw, limits)
            if kind == "tar" and stream is not None:
                dry = _Writer(scratch, limits, dry=True)
                try:
                    _unpack_stream(kind, stream, dry)
                finally:
                    writer.skipped = dry.skipped
                raw.seek(0)
                kind, stream = _open_stream(raw, limits)
                writer.skipped = []
            _unpack_stream(kind, stream, writer)
    except _Abort as abort:
        _clear(scratch)
        return UnpackResult(kind=kind, skipped=writer.skipped, failure=abort.failure)
    except (OSError, EOFError, zlib.error) as exc:
        _clear(scratch)
        return UnpackResult(kind=kind, failure=Failure(code="corrupt", message=f"unreadable e-print: {exc}"))
    return UnpackResult(kind=kind, files=writer.files, skipped=writer.skipped, bytes_written=writer.total)


def _classify(first: bytes) -> EprintKind:
    if not first:
        return "empty"
    if first.startswith(b"%PDF"):
        return "pdf"
    if first.startswith(b"%!PS"):
        return "ps"
    if _looks_like_tar(first) or (len(first) == _BLOCK and not first.strip(b"\0")):
        return "tar"
    return "gzip_tex" if _is_texty(first) else "unknown"


def _unpack_stream(kind: EprintKind, stream: _CappedReader | None, writer: _Writer) -> None:
    if kind == "empty" or stream is None:
        raise _Abort("empty", "e-print is empty or decompresses to nothing")
    if kind == "pdf":
        raise _Abort("pdf_only", "the e-print is a PDF: no LaTeX source")
    if kind == "ps":
        raise _Abort("ps_only", "the e-print is PostScript: no LaTeX source")
    if kind == "unknown":
        raise _Abort("not_tex", "the e-print is neither a tar, a PDF nor text")
    if kind == "tar":
        _unpack_tar(stream, writer)
        if not writer.files:
            raise _Abort("empty", "tar archive holds no regular files")
        return
    writer.count_member()
    writer.write(PurePosixPath("main.tex"), stream, None)


# --------------------------------------------------------------------------- LaTeX files

# From a ``%`` to its line end, the line end and the next line's indentation too unless a blank
# line follows. Whether the ``%`` is escaped is decided by the backslashes before it (an odd run).
_COMMENT_RE = re.compile(r"%[^\n]*(?:\n(?![ \t]*\n)[ \t]*)?")
_DOCCLASS_RE = re.compile(r"\\document(?:class|style)\s*[\[{]")
_BEGIN_DOC_RE = re.compile(r"\\begin\s*\{document\}")
_END_DOC_RE = re.compile(r"\\end\s*\{document\}")
_INPUT_RE = re.compile(
    r"\\(?P<cmd>input|include|subfile|subfileinclude|loadglsentries|@input)(?![A-Za-z@])\s*(?:\[[^\]]*\]\s*)?"
    r"(?:\{(?P<arg>[^{}]*)\}|(?P<bare>[^\s{}\\\[]+))"
    r"|\\(?P<icmd>import|subimport|includefrom|subincludefrom|inputfrom|subinputfrom)\*?\s*\{(?P<dir>[^{}]*)\}\s*\{(?P<file>[^{}]*)\}"
)
_ENDINPUT_RE = re.compile(r"\\endinput(?![A-Za-z])")
# \let\conditionalinput\@input: the new name inputs a file as the old one does (\@input, LaTeX's
# input-if-it-exists, prints nothing for a missing file)
_LET_INPUT_RE = re.compile(r"\\let\s*\\([A-Za-z@]+)\s*=?\s*\\(?:@input|input|include)(?![A-Za-z@])")
_BIBLIOGRAPHY_RE = re.compile(r"\\bibliography\s*\{([^{}]*)\}")
_ADDBIB_RE = re.compile(r"\\(?:addbibresource|addglobalbib|bibliography)\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}")
_MAIN_NAMES = ("main", "ms", "paper", "article", "manuscript", "arxiv")
_SIDE_WORDS = ("supp", "response", "rebuttal", "cover", "letter", "appendix", "reply")


def strip_comments(text: str) -> str:
    """Remove ``%`` comments as TeX does: a comment also eats its line end and the next
    line's indentation, except before a blank line (which must stay a paragraph break). What TeX
    reads verbatim keeps its ``%``: ``\\verb|50%|``, verbatim-like environments, ``\\url{..%20..}``."""
    if "%" not in text:
        return text
    verbatim = _VERBATIM_START_RE if ("\\verb" in text or "\\url" in text or "\\begin" in text) else None
    # A search that starts at each ``%`` instead of one regex with a look-behind tried at every
    # character: ~10x faster on real sources (a 100 kB paper 6 ms -> 0.5 ms), same text.
    out, pos, at = [], 0, text.find("%")
    skip_to = _verbatim_before(text, 0, at, verbatim) if verbatim else -1
    while at >= 0:
        if skip_to > at:  # the % is inside verbatim text
            at = text.find("%", skip_to)
            skip_to = _verbatim_before(text, skip_to, at, verbatim) if at >= 0 else -1
            continue
        run = at
        while run > 0 and text[run - 1] == "\\":
            run -= 1
        if (at - run) % 2:  # \% (or \\\%): a percent sign, not a comment
            after, at = at + 1, text.find("%", at + 1)
            skip_to = _verbatim_before(text, after, at, verbatim) if verbatim and at >= 0 else -1
            continue
        m = _COMMENT_RE.match(text, at)
        out.append(text[pos:at])
        pos = m.end()
        at = text.find("%", pos)
        skip_to = _verbatim_before(text, pos, at, verbatim) if verbatim and at >= 0 else -1
    out.append(text[pos:])
    return "".join(out)


_VERBATIM_START_RE = re.compile(
    r"\\verb\*?(?P<delim>[^A-Za-z\s*])"
    r"|\\begin\s*\{(?P<env>verbatim\*?|Verbatim\*?|BVerbatim|lstlisting|minted|alltt|spverbatim)\}"
    r"|\\(?:url|path|nolinkurl|href)\s*\{"
)


def _verbatim_before(text: str, start: int, at: int, pattern: re.Pattern | None) -> int:
    """Where verbatim text that begins in ``text[start:at]`` ends (a ``%`` before that is a
    character), else -1."""
    if pattern is None or at < 0:
        return -1
    m = pattern.search(text, start, at)
    while m is not None:
        if m.group("delim"):
            end = text.find(m.group("delim"), m.end())
            eol = text.find("\n", m.end())
            end = end + 1 if end >= 0 and (eol < 0 or end < eol) else m.end()
        elif m.group("env"):
            close = re.compile(r"\\end\s*\{" + re.escape(m.group("env")) + r"\}").search(text, m.end())
            end = close.end() if close else m.end()
        else:
            close = text.find("}", m.end())
            end = close + 1 if close >= 0 and "\n" not in text[m.end() : close] else m.end()
        if end > at:
            return end
        m = pattern.search(text, end, at)
    return -1


def read_text(path: Path) -> tuple[str, bool]:
    """Decode a source file: UTF-8 (BOM allowed), else latin-1; line ends made ``\\n``.

    Returns (text, fell_back)."""
    data = path.read_bytes()
    if b"\r" in data:  # CRLF / CR line ends: blank-line paragraph breaks must still be seen
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("latin-1"), True


def _tex_files(root: Path) -> list[Path]:
    out = []
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if p.is_symlink() or not p.is_file() or _is_junk(PurePosixPath(rel.as_posix())):
            continue
        if p.suffix.lower() in (".tex", ".ltx", ".latex") or (p.suffix == "" and p.name == "main"):
            out.append(p)
    return sorted(out)


def find_main_tex(root: Path) -> Path | None:
    """The file LaTeX would build for the paper (:func:`main_file`), or None."""
    return main_file(root)[0]


@dataclass
class _Facts:
    """What one .tex file holds that the choice of the main file looks at."""

    size: int
    docclass: bool
    begins: bool  # \\begin{document}
    latexdiff: int  # latexdiff's marks (\\DIFadd, \\DIFdelbegin ...), or 1 for its header alone
    letter: bool  # a letter class
    inline_bibliography: bool  # thebibliography, or no bibliography command at all needed
    printbibliography: bool
    bibliographies: list[str]  # what its \\bibliography / \\addbibresource name


def _facts(text: str, raw: str = "") -> _Facts:
    marks = len(_LATEXDIFF_RE.findall(text))
    return _Facts(
        size=len(text),
        docclass=_DOCCLASS_RE.search(text) is not None,
        begins=_BEGIN_DOC_RE.search(text) is not None,
        latexdiff=marks or int("%DIF " in raw),
        letter=_LETTER_CLASS_RE.search(text) is not None,
        inline_bibliography="thebibliography" in text,
        printbibliography=re.search(r"\\printbibliography(?![A-Za-z])", text) is not None,
        bibliographies=[n.strip() for m in _ADDBIB_RE.finditer(text) for n in m[1].split(",") if n.strip()],
    )


@dataclass
class _Candidate:
    """A file whose inputs reach a ``\\documentclass`` and a ``\\begin{document}``."""

    path: Path
    text: str  # the file itself
    files: set[Path]  # the files it reaches (itself included)
    facts: list[_Facts]  # of those files

    @property
    def size(self) -> int:
        return sum(f.size for f in self.facts)

    def any(self, name: str) -> bool:
        return any(getattr(f, name) for f in self.facts)

    @property
    def marks(self) -> int:
        """latexdiff's marks in the files it reaches: of two marked documents, the one with
        fewer is the paper (marks an author left in it), the other the difference file."""
        return sum(f.latexdiff for f in self.facts)


def main_file(root: Path) -> tuple[Path | None, str]:
    """The file LaTeX would build for the paper, and why it was chosen.

    A candidate is a .tex file whose inputs (transitively) reach a ``\\documentclass`` and a
    ``\\begin{document}`` (``main.tex`` = ``\\input{header}`` + the document counts, the header
    alone does not). arXiv's ``00README`` (``.XXX`` or ``.json``) decides when it names a
    top-level file or files to ignore. Otherwise candidates are judged by the document they
    reach, in this order: not latexdiff output (``\\DIFadd``/``\\DIFdel`` marks, its ``%DIF`` header, a
    ``diff`` name; of two marked documents the one with fewer marks) nor a pandoc template
    (``$body$``); not input by another candidate; not a side document (a response, rebuttal,
    cover letter, supplement or appendix: by name, or a ``letter`` class); a substantial
    document (a quarter of the largest at least: a standalone figure or an answer to the
    referees is not the paper); nearest the top directory (where arXiv compiles; an old
    draft in ``extras/`` is not built); a bibliography that resolves (its own .bbl, or the
    .bib/.bbl it names); the larger document; a conventional name (main, ms, paper).
    """
    root = Path(root).resolve()
    texts: dict[Path, str] = {}
    facts: dict[Path, _Facts] = {}
    for path in _tex_files(root):
        if path.stat().st_size <= 32 * 1024 * 1024:
            raw = read_text(path)[0]
            texts[path.resolve()] = strip_comments(raw)
            facts[path.resolve()] = _facts(texts[path.resolve()], raw)
    toplevel, ignored = _readme_directives(root)
    candidates: list[_Candidate] = []
    for path, text in texts.items():
        if path in ignored:
            continue
        files = _reached_files(root, path, texts)
        c = _Candidate(path, text, files, [facts[f] for f in files])
        if c.any("docclass") and c.any("begins"):
            candidates.append(c)
    for name in toplevel:
        for c in candidates:
            if c.path == (root / name).resolve():
                return c.path, "00README: toplevel"
    if not candidates:
        return None, "no file reaches \\documentclass and \\begin{document}"
    if len(candidates) == 1:
        return candidates[0].path, "the only document"
    largest = max(c.size for c in candidates)
    included = {f for o in candidates for f in o.files if f != o.path}

    def rank(c: _Candidate) -> tuple:
        stem = c.path.stem.lower()
        return (
            (c.any("latexdiff") or _DIFF_NAME_RE.search(c.path.stem) is not None, c.marks),
            bool(_PANDOC_TEMPLATE_RE.search(c.text)),
            c.path in included,
            any(w in stem for w in _SIDE_WORDS) or c.any("letter"),
            c.size * 4 < largest,
            len(c.path.relative_to(root).parts),
            not _bibliography_resolves(root, c),
            -c.size,
            stem not in _MAIN_NAMES,
            c.path.as_posix(),
        )

    ranked = sorted(candidates, key=rank)
    best, runner = ranked[0], ranked[1]
    a, b = rank(best), rank(runner)
    k = next(i for i in range(len(a)) if a[i] != b[i])
    return best.path, _RANK_REASONS[k].format(other=runner.path.relative_to(root).as_posix())


_RANK_REASONS = (  # why the best candidate beat the next one, by the first rank key that differs
    "{other} is latexdiff output",
    "{other} is a pandoc template",
    "{other} is input by another document",
    "{other} is a side document (response, rebuttal, letter, supplement, appendix)",
    "{other} is a small document beside this one",
    "{other} lies deeper in the tree",
    "the bibliography of {other} is missing",
    "a larger document than {other}",
    "a conventional name, unlike {other}",
    "first by name, before {other}",
)
_LATEXDIFF_RE = re.compile(r"\\DIF(?:add|del|mod)(?:begin|end|FL|beginFL|endFL|tex)?(?![A-Za-z])")
# latexdiff-vc and git-latexdiff name their output main-diff.tex, ms-diffHEAD~1.tex, diff.tex
_DIFF_NAME_RE = re.compile(r"(?:^|[^A-Za-z])diff(?![a-z])")
_PANDOC_TEMPLATE_RE = re.compile(r"\$(?:body|if\([\w.-]+\)|endif|for\([\w.-]+\)|endfor)\$")
_LETTER_CLASS_RE = re.compile(r"\\document(?:class|style)\s*(?:\[[^\]]*\])?\s*\{\s*\w*letter\w*\s*\}")
_README_NAMES = ("00README.json", "00README.XXX", "00README")


def _readme_directives(root: Path) -> tuple[list[str], set[Path]]:
    """arXiv's processing directives: the files named top level (in order) and those to ignore,
    from ``00README.json`` (``{"sources": [{"filename": ..., "usage": "toplevel"}]}``) or the
    older ``00README.XXX`` (one ``filename directive`` a line)."""
    toplevel: list[str] = []
    ignored: set[Path] = set()
    for name in _README_NAMES:
        path = root / name
        if not path.is_file() or path.stat().st_size > 1 << 20:
            continue
        text = read_text(path)[0]
        pairs: list[tuple[str, str]] = []
        if name.endswith(".json"):
            try:
                data = json.loads(text)
            except ValueError:
                continue
            sources = data.get("sources") if isinstance(data, dict) else None
            for s in sources if isinstance(sources, list) else []:
                if isinstance(s, dict) and isinstance(s.get("filename"), str):
                    pairs.append((s["filename"], str(s.get("usage", ""))))
        else:
            for line in text.splitlines():
                words = line.split()
                if len(words) == 2:
                    pairs.append((words[0], words[1]))
        for filename, usage in pairs:
            if ".." in filename:
                continue
            if usage.lower() == "toplevel":
                toplevel.append(filename)
            elif usage.lower() == "ignore":
                ignored.add((root / filename).resolve())
    return toplevel, ignored


def _reached_files(root: Path, main: Path, texts: dict[Path, str], max_files: int = 64) -> set[Path]:
    """``main`` and the .tex files it inputs, transitively (at most ``max_files``)."""
    seen, todo = {main}, [main]
    while todo and len(seen) <= max_files:
        path = todo.pop()
        for m in _INPUT_RE.finditer(texts.get(path, "")):
            target = _resolve_input(root, path.parent, _input_name(m))
            if target is not None and target in texts and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _bibliography_resolves(root: Path, c: _Candidate) -> bool:
    """Whether the document's bibliography is there: its own .bbl, an inline
    ``thebibliography``, or a .bib / .bbl its ``\\bibliography`` names (no bibliography at all
    counts as resolved: nothing is missing)."""
    if c.path.with_suffix(".bbl").is_file() or c.any("inline_bibliography"):
        return True
    names = [n for f in c.facts for n in f.bibliographies]
    if not names:
        return not c.any("printbibliography")
    for n in names:
        stem = n[:-4] if n.endswith(".bib") else n
        for base in (c.path.parent, root):
            if (base / (stem + ".bib")).is_file() or (base / (stem + ".bbl")).is_file():
                return True
    return False


def _resolve_input(root: Path, current_dir: Path, name: str) -> Path | None:
    name = name.strip().strip('"')
    if not name:
        return None
    for base in (current_dir, root):
        cands = (name,) if name.lower().endswith(".tex") else (name + ".tex", name)
        for cand in cands:
            path = (base / cand).resolve()
            if path.is_file() and (path == root or root in path.parents):
                return path
    return None


def _input_name(m: re.Match) -> str:
    """The file an ``_INPUT_RE`` match names (``\\import{dir/}{file}`` joined)."""
    if m["icmd"]:
        name = (m["dir"] or "").strip().rstrip("/") + "/" + (m["file"] or "").strip()
        return name.lstrip("/") if not (m["dir"] or "").strip() else name
    return (m["arg"] if m["arg"] is not None else m["bare"]) or ""


def _body_only(text: str) -> str:
    """A ``\\subfile`` target is a whole document: keep what is between begin/end document."""
    begin = _BEGIN_DOC_RE.search(text)
    if not begin:
        return text
    end = _END_DOC_RE.search(text, begin.end())
    return text[begin.end() : end.start() if end else len(text)]


def assemble_source(
    root: Path,
    main: Path,
    max_depth: int = 12,
    max_chars: int = 40_000_000,
) -> LatexSource:
    """Inline every input of ``main`` (relative to ``root``) and gather the bibliography files.

    Raises :class:`EprintError` with code ``input_loop`` (a file that inputs itself,
    directly or not), ``input_depth`` (nesting beyond ``max_depth``) or
    ``source_too_large`` (inlined text beyond ``max_chars``, e.g. one file input
    thousands of times). Missing inputs are warnings, as LaTeX would only warn too.
    """
    root = Path(root).resolve()
    main = Path(main).resolve()
    src = LatexSource(main=main.relative_to(root).as_posix(), text="")
    total = [0]
    aliases: set[str] = set()

    def load(path: Path, stack: tuple[Path, ...]) -> str:
        if path in stack:
            chain = " -> ".join(p.relative_to(root).as_posix() for p in (*stack, path))
            raise EprintError("input_loop", f"input loop: {chain}")
        if len(stack) > max_depth:
            raise EprintError("input_depth", f"inputs nested deeper than {max_depth}")
        raw, fell_back = read_text(path)
        rel = path.relative_to(root).as_posix()
        if fell_back and rel not in src.non_utf8:
            src.non_utf8.append(rel)
        if rel not in src.files:
            src.files.append(rel)
        text = strip_comments(raw)
        end = _ENDINPUT_RE.search(text)
        if end:
            text = text[: end.start()]
        if stack:  # an included file with its own preamble (subfiles, standalone)
            text = _body_only(text) if _DOCCLASS_RE.search(text) else text
        total[0] += len(text)
        if total[0] > max_chars:
            raise EprintError("source_too_large", f"inlined source exceeds {max_chars} characters")
        if "\\let" in text:  # \let\conditionalinput\@input: no text, and a name that inputs from now on
            aliases.update(_LET_INPUT_RE.findall(text))
            text = _LET_INPUT_RE.sub("", text)
        if aliases:
            text = _with_input_aliases(text, aliases)
        out, pos = [], 0
        for m in _INPUT_RE.finditer(text):
            name = _input_name(m)
            target = _resolve_input(root, path.parent, name)
            out.append(text[pos : m.start()])
            pos = m.end()
            if target is None:  # LaTeX reads nothing: a line that held only the command is no blank line
                src.warnings.append(f"missing_input: {name}")
                if text[m.start() - 1 : m.start()] in ("\n", "") and text[pos : pos + 1] == "\n":
                    pos += 1
                continue
            if target.suffix.lower() not in (".tex", ".bbl", ".ltx", ".sty", ".cls", ".def", ""):
                src.warnings.append(f"skipped_input: {name}")
                continue
            if target.suffix.lower() in (".sty", ".cls"):
                continue
            sep = "\n" if m["cmd"] in ("include", "subfile") else ""
            inlined = load(target, (*stack, path))
            if not sep and inlined.endswith("\n") and text[pos : pos + 1] == "\n":
                inlined = inlined[:-1]  # the file's last line end and the input line's make one space
            out.append(sep + inlined + sep)
        out.append(text[pos:])
        return "".join(out)

    src.text = load(main, ())
    _gather_packages(root, main, src)
    _gather_bibliography(root, main, src)
    return src


def _with_input_aliases(text: str, aliases: set[str]) -> str:
    """``text`` with the names ``\\let`` to an input command written as ``\\@input``."""
    names = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
    return re.sub(r"\\(?:" + names + r")(?![A-Za-z@])", lambda _: "\\@input", text)


_USEPACKAGE_RE = re.compile(
    r"\\(?:usepackage|RequirePackage|RequirePackageWithOptions|documentclass|documentstyle|LoadClass)"
    r"\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}"
)
_MAX_PACKAGE_BYTES = 2 * 1024 * 1024
# A class file (aastex631.cls, revtex4-2.cls: ~200 kB, shipped in many e-prints) is kept as the
# packages it loads; a style file whole (its macros are the paper's) up to this size.
_MAX_STY_CHARS = 256 * 1024
_MAX_PACKAGES = 32


def _gather_packages(root: Path, main: Path, src: LatexSource) -> None:
    """The .sty / .cls files of the e-print itself that the paper loads, and those they load."""
    todo = [src.text]
    while todo and len(src.packages) < _MAX_PACKAGES:
        text = todo.pop()
        for m in _USEPACKAGE_RE.finditer(text):
            ext = ".cls" if re.match(r"\\(?:document|LoadClass)", m.group()) else ".sty"
            for name in m[1].split(","):
                name = name.strip()
                if not name or name + ext in src.packages or ".." in name:
                    continue
                path = (main.parent / (name + ext)).resolve()
                if not path.is_file():
                    path = (root / (name + ext)).resolve()
                if not path.is_file() or root not in path.parents or path.stat().st_size > _MAX_PACKAGE_BYTES:
                    continue
                body, fell_back = read_text(path)
                rel = path.relative_to(root).as_posix()
                if fell_back and rel not in src.non_utf8:
                    src.non_utf8.append(rel)
                body = strip_comments(body)
                if ext == ".cls" or len(body) > _MAX_STY_CHARS:  # what it loads is all the parser reads
                    body = "\n".join(m.group() for m in _USEPACKAGE_RE.finditer(body))
                src.packages[name + ext] = body
                todo.append(body)


_BIBSTYLE_RE = re.compile(r"\\bibliographystyle\s*\{([^{}/]+)\}")
_BST_BIBITEM_RE = re.compile(r"FUNCTION\s*\{output\.bibitem\}\s*\{.*?\n\}", re.S)


def _gather_bst(root: Path, main: Path, src: LatexSource) -> None:
    """The e-print's own .bst, as the labels it writes (its ``output.bibitem``), under
    ``packages["<name>.bst"]``: how natbib prints citations when no .bbl was shipped."""
    m = _BIBSTYLE_RE.search(src.text)
    if not m:
        return
    name = m[1].strip() + ".bst"
    for path in ((main.parent / name).resolve(), (root / name).resolve()):
        if path.is_file() and root in path.parents and path.stat().st_size <= _MAX_PACKAGE_BYTES:
            function = _BST_BIBITEM_RE.search(read_text(path)[0])
            src.packages[name] = function.group() if function else ""
            return


def _gather_bibliography(root: Path, main: Path, src: LatexSource) -> None:
    _gather_bst(root, main, src)
    bbl_names = [main.with_suffix(".bbl")]
    for m in _BIBLIOGRAPHY_RE.finditer(src.text):
        bbl_names += [root / (n.strip() + ".bbl") for n in m[1].split(",") if n.strip()]
    bbls = sorted(p for p in root.rglob("*.bbl") if p.is_file() and not _is_junk(PurePosixPath(p.name)))
    if len(bbls) == 1:
        bbl_names.append(bbls[0])
    for cand in bbl_names:
        if cand.is_file():
            text, fell_back = read_text(cand)
            if fell_back:
                src.non_utf8.append(cand.relative_to(root).as_posix())
            src.bbl = strip_comments(text)
            break
    bib_paths: list[Path] = []
    for m in _ADDBIB_RE.finditer(src.text):
        for n in m[1].split(","):
            n = n.strip()
            if n:
                p = (root / (n if n.endswith(".bib") else n + ".bib")).resolve()
                if p.is_file() and root in p.parents and p not in bib_paths:
                    bib_paths.append(p)
    if not bib_paths:
        bib_paths = sorted(
            p for p in root.rglob("*.bib") if p.is_file() and not _is_junk(PurePosixPath(p.name))
        )
    for p in bib_paths:
        text, fell_back = read_text(p)
        if fell_back:
            src.non_utf8.append(p.relative_to(root).as_posix())
        src.bib.append(text)


def load_eprint(
    path: Path, scratch: Path, limits: UnpackLimits | None = None
) -> tuple[UnpackResult, LatexSource | None, Failure | None]:
    """Unpack, find the main file and assemble it: the whole e-print step, failures as data."""
    unpacked = unpack_eprint(path, scratch, limits)
    if unpacked.failure:
        return unpacked, None, unpacked.failure
    main = find_main_tex(scratch)
    if main is None:
        return (
            unpacked,
            None,
            Failure(code="no_main_tex", message="no file has \\documentclass and \\begin{document}"),
        )
    try:
        source = assemble_source(scratch, main)
    except EprintError as exc:
        return unpacked, None, exc.failure()
    except OSError as exc:
        return unpacked, None, Failure(code="read_error", message=str(exc))
    if is_pdf_wrapper(source.text):
        message = "the LaTeX only wraps a PDF (\\includepdf, no text of its own)"
        return unpacked, None, Failure(code="pdf_wrapper", message=message)
    return unpacked, source, None


_INCLUDEPDF_RE = re.compile(r"\\includepdf\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}")
_SECTIONING_RE = re.compile(r"\\(?:part|chapter|section|subsection)\*?\s*[\[{]")
_TEX_WORD_RE = re.compile(r"\\[A-Za-z@]+\*?|[^\W\d_]{2,}")
PDF_WRAPPER_MAX_WORDS = 200


def is_pdf_wrapper(text: str) -> bool:
    """Whether a document only wraps a PDF: it has an ``\\includepdf``, no sectioning
    command and fewer than :data:`PDF_WRAPPER_MAX_WORDS` words of its own (a title, a
    line like "This is a precompiled PDF"). Its text is not the paper's, so it is skipped."""
    if "\\includepdf" not in text:
        return False
    begin = _BEGIN_DOC_RE.search(text)
    body = text[begin.end() :] if begin else text
    end = _END_DOC_RE.search(body)
    body = _INCLUDEPDF_RE.sub(" ", body[: end.start()] if end else body)
    if _SECTIONING_RE.search(body):
        return False
    words = sum(1 for m in _TEX_WORD_RE.finditer(body) if m.group()[0] != "\\")
    return words < PDF_WRAPPER_MAX_WORDS
