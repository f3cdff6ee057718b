"""Bounded waits and process-group stops shared by the tests that start daemons and servers
(every loop in a test ends within its time limit)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], timeout_s: float, what: str, poll_s: float = 0.5,
    detail: Callable[[], str] = lambda: "",
) -> T:  # fmt: skip
    """``condition()``'s first truthy value, polled every ``poll_s``; an AssertionError naming
    ``what`` (and ``detail()``, e.g. a daemon's log tail) after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll_s)
    extra = detail()
    raise AssertionError(
        f"timed out after {timeout_s:.0f} s waiting for {what}" + (f"\n{extra}" if extra else "")
    )


def stop_group(proc: subprocess.Popen, term_wait_s: float = 30, kill_wait_s: float = 10) -> None:
    """End the process group ``proc`` leads (started with ``start_new_session=True``): SIGTERM,
    then SIGKILL if it has not ended within ``term_wait_s``."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=term_wait_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=kill_wait_s)
