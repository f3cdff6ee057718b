"""Run output captured as Dagster's local compute logs, mirrored to the terminal by ``tail`` alone.

Dagster's ``LocalComputeLogManager`` writes a run worker's stdout and stderr to files (the
UI's "stdout/stderr" views) and mirrors each back to the terminal with a ``tail -F`` process,
plus a Python watcher process per ``tail`` that kills it if the worker dies without cleaning
up. That is four processes per run worker, two of them Python interpreters of about 10 MB each;
with every core running a run, the watchers are ~40 MB of the tree's peak RSS and ~0.2 CPU s
of every run's start-up.

On Linux the kernel can do the watcher's whole job: a ``tail`` started through util-linux
``setpriv --pdeathsig TERM`` is sent SIGTERM the moment the process that started it exits,
however it exits (``kill -9`` included, and before anyone reaps it, which a ``tail --pid``
poll would wait for). Where ``setpriv`` has ``--pdeathsig`` (util-linux 2.33+, any Debian or
Ubuntu image) this manager starts that ``tail`` only; elsewhere (macOS, Alpine without
util-linux) it is Dagster's manager unchanged. Files, keys and reading are Dagster's.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from corpus_assets.dagster_internals import (  # Dagster's manager and its capture (dagster_internals, 1)
    IO_TYPE_EXTENSION,
    CapturedLogContext,
    ComputeIOType,
    LocalComputeLogManager,
    redirect_to_file,
)
from corpus_assets.event_log import under_dagster_home


@functools.cache
def parent_death_signal() -> bool:
    """Whether ``setpriv --pdeathsig`` is here to tie a ``tail`` to the process that starts it."""
    try:
        out = subprocess.run(["setpriv", "--help"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and b"--pdeathsig" in out.stdout


def _fileno(stream: IO[str]) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream with no file behind it (pytest's capture)
        return None


def _stop(process: subprocess.Popen) -> None:
    """End the ``tail`` (it never ends by itself) and reap it."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def _tail_mirror(stream: IO[str], path: str) -> Iterator[None]:
    """``stream`` written to ``path`` while one ``tail`` copies ``path`` back to the stream's
    old target; the ``tail`` ends with this process even if it dies without cleaning up."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).open("a").close()  # there for tail to follow, its content kept
    out = stream if _fileno(stream) else None
    tail_cmd = ["setpriv", "--pdeathsig", "TERM", "--", "tail", "-F", "-c", "+0", path]
    tail = subprocess.Popen(tail_cmd, stdout=out)  # setpriv execs tail: one process
    try:
        with redirect_to_file(stream, path):
            yield
    finally:
        # Dagster's knob for tail's 1 s poll interval (dagster-io/dagster#23336), honoured alike.
        time.sleep(float(os.getenv("DAGSTER_COMPUTE_LOG_TAIL_WAIT_AFTER_FINISH", "0")))
        _stop(tail)


class TailComputeLogManager(LocalComputeLogManager):
    """``LocalComputeLogManager`` whose terminal mirror is a ``tail`` the kernel ends with its run.

    Configured in ``dagster.yaml`` as ``compute_logs``; a relative ``base_dir`` is under
    ``$DAGSTER_HOME`` (``storage`` is where Dagster's default manager keeps the same files).
    """

    def __init__(self, base_dir: str = "storage", **kwargs: Any):
        super().__init__(under_dagster_home(base_dir, "the compute log manager"), **kwargs)

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> TailComputeLogManager:
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def capture_logs(self, log_key: Sequence[str]) -> Generator[CapturedLogContext, None, None]:
        if not parent_death_signal():
            with super().capture_logs(log_key) as context:
                yield context
            return
        paths = {io: self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[io]) for io in ComputeIOType}
        with (
            _tail_mirror(sys.stdout, paths[ComputeIOType.STDOUT]),
            _tail_mirror(sys.stderr, paths[ComputeIOType.STDERR]),
        ):
            yield CapturedLogContext(log_key)
        Path(self.complete_artifact_path(log_key)).touch()  # Dagster's mark of a finished capture
