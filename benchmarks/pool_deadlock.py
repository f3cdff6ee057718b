"""How often the per-paper pool hangs when a worker dies beside a large result (issue Q).

    python benchmarks/pool_deadlock.py [--rounds 50] [--timeout 30] [--repo PATH] [--hog]

Runs the scenario of ``tests/test_pool_deadlock.py`` (real LaTeX e-prints from ../shared, the
``latex_parses`` row function, one worker dying while another returns a 137 KB result, under
Dagster's deferring SIGTERM handler) once per round, each round in a fresh process that is
killed when it has not finished after ``--timeout`` seconds: a hang. ``--repo`` measures another
checkout's ``corpus`` (e.g. a worktree of the commit before the pool changed), with this
checkout's scenario. ``--hog`` keeps a core busy beside the rounds, as the slow test does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from _common import REPO, result

CHILD = """
import sys, tempfile
sys.path[:0] = [{repo!r}, {tests!r}]
import test_pool_deadlock as t
tasks = t._tasks()
alone = [t.parse_days._latex_row(x) for x in tasks]
with tempfile.TemporaryDirectory() as tmp:
    from pathlib import Path
    t._check(t.one_round(tasks, Path(tmp)), alone)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--hog", action="store_true")
    args = parser.parse_args()
    code = CHILD.format(repo=str(args.repo.resolve()), tests=str(REPO / "tests"))
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.hog else None
    hung = failed = 0
    times = []
    try:
        for n in range(args.rounds):
            start = time.perf_counter()
            child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
            try:
                rc = child.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                subprocess.run(["pkill", "-KILL", "-s", str(child.pid)], check=False)  # its workers too
                child.wait()
                hung += 1
                print(f"round {n}: hung (killed after {args.timeout:g} s)", flush=True)
                continue
            times.append(time.perf_counter() - start)
            failed += rc != 0
            print(
                f"round {n}: {'finished' if rc == 0 else f'failed (exit {rc})'} in {times[-1]:.1f} s",
                flush=True,
            )
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    mean = sum(times) / len(times) if times else 0.0
    print(
        f"{args.repo}: {hung} of {args.rounds} rounds hung, {failed} failed; mean finished round {mean:.1f} s"
    )
    result(rounds=args.rounds, hung=hung, failed=failed, mean_round_s=round(mean, 2))


if __name__ == "__main__":
    main()
