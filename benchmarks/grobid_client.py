"""How busy does corpus.parse.grobid.GrobidClient keep a Grobid server?

A loopback fake Grobid (tests/grobid_server.py, in its own process so it does not
share our GIL) has N engines and answers every PDF after a fixed latency L, so its
capacity is N / L requests/s. The client posts real PDFs (the given files, or the
shared PDF+TEI pairs and landing PDFs, cycled) with ``concurrency`` from
``/api/health`` and gets a real TEI back (one paper's, for every PDF), checked with lxml
as in production.
Target (DESIGN.md §6): achieved / capacity >= 0.95.

    python benchmarks/grobid_client.py [--slots 4] [--latency 1.0] [--headroom 0] [--requests R] [PDF ...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from _common import REPO, SHARED, peak_mb, result, timer

from corpus.parse.grobid import GrobidClient


def default_pdfs() -> list[Path]:
    pdfs = sorted((SHARED / "data" / "pdf_tei_pairs").glob("*/*.pdf"))
    return pdfs + sorted((SHARED / "landing" / "pdf").glob("*.pdf"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdfs", nargs="*", type=Path)
    parser.add_argument("--slots", type=int, default=4, help="server engines N")
    parser.add_argument("--latency", type=float, default=1.0, help="server seconds per PDF L")
    parser.add_argument("--requests", type=int, default=0, help="default: 12 s of server capacity")
    parser.add_argument("--concurrency", type=int, default=0, help="0 = ask /api/health")
    parser.add_argument("--headroom", type=int, default=0, help="requests beyond the pool size")
    parser.add_argument("--pool-wait", type=float, default=1.0, help="server's poolMaxWait (Grobid: 1 s)")
    args = parser.parse_args()

    args.requests = args.requests or max(8, round(12 * args.slots / args.latency))
    pdfs = args.pdfs or default_pdfs()
    if not pdfs:
        sys.exit("no PDFs given and none found under ../shared")
    tei = SHARED / "landing" / "tei" / "1706.03762.tei.xml"
    cmd = [sys.executable, str(REPO / "tests" / "grobid_server.py"), "--slots", str(args.slots)]
    cmd += ["--latency", str(args.latency), "--pool-wait", str(args.pool_wait), "--max-seconds", "900"]
    if tei.exists():
        cmd += ["--tei", str(tei)]
    server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        if not url.startswith("http://"):
            sys.exit(f"fake Grobid did not start: {url!r}")
        client = GrobidClient(url, timeout_s=60, concurrency=args.concurrency or None, headroom=args.headroom)
        client.version(), client.concurrency  # once per run, not per PDF: outside the timer
        items = ((str(i), pdf) for i, pdf in zip(range(args.requests), itertools.cycle(pdfs), strict=False))
        mb_sent = 0.0
        statuses: dict[str, int] = {}
        cpu0 = time.process_time()
        with client, timer() as t:
            for _key, res in client.process_many(items):
                statuses[res.status] = statuses.get(res.status, 0) + 1
                mb_sent += len(res.tei or b"") / 1e6
        cpu_ms = (time.process_time() - cpu0) * 1000 / args.requests
        with urllib.request.urlopen(f"{url}/fake/stats", timeout=10) as reply:
            stats = json.load(reply)
    finally:
        server.stdin.close()
        server.wait(timeout=30)

    capacity = args.slots / args.latency
    achieved = args.requests / t["s"]
    busy = stats["busy_seconds"] / (args.slots * t["s"])
    print(
        f"{args.requests} PDFs ({len(pdfs)} distinct) in {t['s']:.2f}s with concurrency {client.concurrency}+{args.headroom}: "
        f"{achieved:.2f} req/s of capacity {capacity:.2f} ({achieved / capacity:.1%}); "
        f"engines busy {busy:.1%}; server answers {stats['answered']}; results {statuses}; "
        f"TEI received {mb_sent:.1f} MB; client CPU {cpu_ms:.1f} ms/PDF; peak {peak_mb():.0f} MB"
    )
    result(
        utilisation=achieved / capacity,
        requests_per_s=achieved,
        capacity_per_s=capacity,
        engines_busy=busy,
        slots=args.slots,
        headroom=args.headroom,
        latency_s=args.latency,
        errors_503=stats["answered"].get("503", 0),
        ok=statuses.get("ok", 0),
        client_cpu_ms_per_pdf=cpu_ms,
        peak_mb=peak_mb(),
    )


if __name__ == "__main__":
    main()
