"""A throwaway PostgreSQL server for tests, from Debian's ``postgresql`` package.

``PostgresServer`` runs ``initdb`` in a fresh directory and ``postgres`` on 127.0.0.1 at a
free port (password auth, one database), and removes everything on ``stop()``. As root
(CI, these machines) the server runs as the ``postgres`` user the package creates, since
PostgreSQL refuses to run as root. ``find_bin()`` is None where the binaries are absent.
Bounded: start waits at most ``start_timeout_s``; stop is a fast shutdown, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

USER, PASSWORD, DATABASE = "dagster", "dagster-test", "dagster"


def find_bin() -> Path | None:
    """The newest ``/usr/lib/postgresql/<major>/bin`` holding initdb and postgres, else PATH's."""
    found = [Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin") if (Path(p) / "initdb").exists()]
    if found:
        return max(found, key=lambda p: int(p.parent.name))
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("postgres") else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresServer:
    def __init__(self, bin_dir: Path, start_timeout_s: float = 60.0):
        self.bin_dir = bin_dir
        self.start_timeout_s = start_timeout_s
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="corpus-pg-"))
        self.data = self.root / "data"
        self.process: subprocess.Popen | None = None
        self.as_user = "postgres" if os.geteuid() == 0 else None

    def _demote(self):
        if self.as_user is None:
            return None
        entry = pwd.getpwnam(self.as_user)

        def demote() -> None:
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)

        return demote

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]], check=True, capture_output=True, timeout=120,
            preexec_fn=self._demote(), env={**os.environ, "LC_ALL": "C.UTF-8"},
        )  # fmt: skip

    def start(self) -> PostgresServer:
        if self.as_user is not None:
            entry = pwd.getpwnam(self.as_user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        password_file = self.root / "pw"
        password_file.write_text(PASSWORD + "\n")
        if self.as_user is not None:
            os.chown(password_file, pwd.getpwnam(self.as_user).pw_uid, -1)
        self._run(
            "initdb", "-D", str(self.data), "-U", USER, f"--pwfile={password_file}",
            "--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--no-sync",
        )  # fmt: skip
        password_file.unlink()
        self.process = subprocess.Popen(
            [
                str(self.bin_dir / "postgres"), "-D", str(self.data), "-h", "127.0.0.1",
                "-p", str(self.port), "-k", str(self.root), "-c", "fsync=off",
                "-c", "max_connections=50",
            ],
            stdout=subprocess.DEVNULL, stderr=(self.root / "server.log").open("wb"),
            preexec_fn=self._demote(), start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited: {(self.root / 'server.log').read_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                break
            time.sleep(0.2)
        else:
            self.stop()
            raise RuntimeError(f"postgres did not listen within {self.start_timeout_s} s")
        self._run("createdb", "-h", str(self.root), "-p", str(self.port), "-U", USER, DATABASE)
        return self

    def psql(self, sql: str) -> str:
        """One query through psql over TCP (what a user would type), tuples only."""
        done = subprocess.run(
            [str(self.bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", DATABASE,
             "-At", "-c", sql],
            capture_output=True, text=True, timeout=60, env={**os.environ, "PGPASSWORD": PASSWORD},
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return done.stdout.strip()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
