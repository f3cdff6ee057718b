"""``make ui``: ``dagster dev`` (the webserver, the daemon and the code server) as a service a
supervisor can stop with SIGTERM, or anyone with SIGINT.

A command started in the background of a shell without job control (a CI step, ``make ui &``
in a script, some supervisors) inherits SIGINT *ignored*, and Python leaves an ignored SIGINT
ignored. ``dagster dev`` gives SIGTERM the disposition SIGINT has (for Kubernetes), so SIGTERM was
ignored too, by it and by every process it starts: 60 s after both signals, six processes still
ran. Here both signals get their default disposition back, then this process becomes ``dagster
dev`` (exec: the pid a supervisor started stays the one it signals), so SIGTERM and SIGINT stop
it and the processes it started as Ctrl-C in a terminal does.

``python -m corpus_assets.ui [dagster dev options]``.
"""

from __future__ import annotations

import os
import signal
import sys

# A warning Dagster prints for its own `dev` command, about its own API.
QUIET_WARNING = "ignore:Function `dev_command` is superseded"


def dagster_dev_command(args: list[str]) -> list[str]:
    return [sys.executable, "-W", QUIET_WARNING, "-m", "dagster", "dev", *args]


def main(argv: list[str] | None = None) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM):  # an inherited SIG_IGN would survive the exec
        signal.signal(sig, signal.SIG_DFL)
    command = dagster_dev_command(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    os.execv(command[0], command)
    return 1  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
