"""Reading files from the landing zone without trusting them.

The landing zone is written by other tools (mirrors, bulk downloads, people), so a
name in it is not trusted to be what it says. A file is read only when:

* its real path (every symlink resolved) lies inside the landing zone: the real
  path of the root or of one of its four folders (``oai``, ``pdf``, ``src``,
  ``tei``). **Symlinks that stay inside are allowed** (a mirror that links
  duplicates, ``pdf/x.pdf -> ../mirror/x.pdf``), and so is a folder that is itself a
  symlink (``landing/pdf -> /mnt/bulk/pdf``: the operator chose that folder once, for
  all its files); a file whose link leads anywhere else (``-> /etc/passwd``) is
  refused;
* it is a regular file: FIFOs, devices, sockets and directories are refused (a
  FIFO is opened non-blocking, so it cannot hang the run);
* its size is at most the cap of its kind, checked on the open file *before* a byte
  is read or copied (an 8 KB sparse file that reads as 1 GiB is refused, not copied).

The check is made on the opened descriptor (``O_NOFOLLOW`` on the resolved path,
then ``fstat``), so a link swapped in between cannot redirect the read. A refusal
is a :class:`LandingRefused` (an ``OSError``) whose message says why; callers turn
it into a row with that reason.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

MiB = 1024 * 1024
FOLDERS = ("oai", "pdf", "src", "tei")
# Per-kind caps: arXiv's own limits are far below these (OAI pages are a few MB,
# uploads 50 MB); larger files are refused before they are read or copied.
MAX_BYTES = {"oai": 256 * MiB, "pdf": 256 * MiB, "src": 256 * MiB, "tei": 64 * MiB}

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)
_KIND_NAMES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symlink"),
)


class LandingRefused(OSError):
    """A landing-zone file that is not read; the message is the reason (for the row)."""


def display(path: os.PathLike | str) -> str:
    """A path as text that is always valid UTF-8 (undecodable bytes of a file name
    shown as ``\\xNN``), so it can go into a Parquet row or a log line."""
    raw = os.fsencode(path)
    return raw.decode("utf-8", "backslashreplace")


def file_type(mode: int) -> str:
    return next((name for test, name in _KIND_NAMES if test(mode)), "not a regular file")


class CappedFile:
    """A read-only file that raises :class:`LandingRefused` once more than ``cap`` bytes
    came out of it (a file that grows after its size was checked)."""

    def __init__(self, fh, cap: int, name: str):
        self._fh, self.cap, self.name, self.count = fh, cap, name, 0

    def read(self, n: int = -1) -> bytes:
        try:
            data = self._fh.read(self.cap + 1 - self.count if n is None or n < 0 else n)
        except OSError as exc:
            raise LandingRefused(f"{self.name}: cannot read ({exc.strerror or exc})") from exc
        self.count += len(data)
        if self.count > self.cap:
            raise LandingRefused(f"{self.name}: grew past the size cap of {self.cap} bytes while read")
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        position = self._fh.seek(offset, whence)
        self.count = position
        return position

    def tell(self) -> int:
        return self._fh.tell()


class LandingReader:
    """Opens files of one landing zone under the rules of the module docstring."""

    def __init__(self, root: os.PathLike | str):
        self.root = Path(root)
        real = Path(os.path.realpath(self.root))
        self.allowed = tuple(dict.fromkeys([real, *(Path(os.path.realpath(real / f)) for f in FOLDERS)]))

    def inside(self, real: Path) -> bool:
        return any(real == root or root in real.parents for root in self.allowed)

    def present(self, path: Path) -> bool:
        """Whether a name exists at all (a dangling or hostile link counts: it gets a row)."""
        try:
            os.lstat(path)
        except FileNotFoundError:
            return False
        except OSError:
            return True  # e.g. a folder we may not search: reading it will say why
        return True

    @contextlib.contextmanager
    def open(self, path: os.PathLike | str, kind: str) -> Iterator[CappedFile]:
        """The file at ``path`` opened for reading, or :class:`LandingRefused` saying why not."""
        path = Path(path)
        name = display(path)
        cap = MAX_BYTES[kind]
        real = Path(os.path.realpath(path))
        if not self.inside(real):
            raise LandingRefused(
                f"{name}: refused, its real path {display(real)} is outside the landing zone"
            )
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except OSError as exc:
            raise LandingRefused(f"{name}: cannot open ({exc.strerror or exc})") from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise LandingRefused(f"{name}: refused, it is {file_type(st.st_mode)}, not a regular file")
            if st.st_size > cap:
                raise LandingRefused(f"{name}: refused, {st.st_size} bytes is over the {kind} cap of {cap}")
            fh = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        with fh:
            yield CappedFile(fh, cap, name)

    def read_bytes(self, path: os.PathLike | str, kind: str) -> bytes:
        with self.open(path, kind) as fh:
            return fh.read()

    def list(self, folder: str, suffix: str) -> list[Path]:
        """Entries of one folder ending in ``suffix`` (any type: each is judged when opened),
        hidden names skipped (temporary files of atomic writes). An unreadable folder
        raises :class:`LandingRefused` instead of looking empty."""
        directory = self.root / folder
        try:
            with os.scandir(directory) as entries:
                names = [e.name for e in entries if e.name.endswith(suffix) and not e.name.startswith(".")]
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise LandingRefused(f"{display(directory)}: cannot list ({exc.strerror or exc})") from exc
        return [directory / n for n in sorted(names)]
