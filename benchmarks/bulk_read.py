"""Bulk data: indexing MB/s, and papers/s + MB/s read out of tars (local and loopback S3).

    python benchmarks/bulk_read.py [BULK_ROOT] [--gb 2] [--out /tmp/bulk_bench] [--papers 1000]
                                   [--s3-tars 2] [--keep]

Without BULK_ROOT it generates a root of ``--gb`` GB in arXiv's layout under ``--out``
(~500 MB tars, PDFs of 50 KB - 4 MB and e-prints of 20 KB - 1 MB; deleted afterwards
unless ``--keep``), then measures

* indexing (:func:`corpus.ingest.bulk_index.update_index`): one pass over every tar, MD5 of the
  tar and of each member, with one worker and with one per core;
* reading papers from local tars into the blob store (:class:`corpus.ingest.bulk_fetch.BulkReader`:
  pread, MD5 check, sha256, atomic write): papers/s, MB/s, and a least-squares fit of the
  per-paper time ``t = fixed + bytes / rate`` (the target: fixed <= 2 ms, rate >= 200 MB/s);
* the same over a loopback moto S3 server (requester pays) holding ``--s3-tars`` tars:
  indexing by one streamed GET per tar, then one range GET per paper.

CPU seconds are of the whole process tree (index workers included); peak RSS is the
largest of this process and of any child.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import random
import resource
import shutil
import tarfile
import tempfile
import threading
import time
from pathlib import Path

from _common import result

from corpus.ingest.bulk import BulkRoot, ManifestEntry, member_name
from corpus.ingest.bulk_fetch import BulkReader
from corpus.ingest.bulk_index import update_index
from corpus.sample.bulk import write_manifest
from corpus.store import BlobStore

TAR_BYTES = 500 * 1000 * 1000


def cpu_s() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def peak_tree_mb() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return max(me.ru_maxrss, kids.ru_maxrss) / 1024


def _members(rng: random.Random, kind: str, yymm: str):
    """(name, size, header) of the next papers of a month until a tar is full."""
    total, n = 0, 0
    while total < TAR_BYTES:
        n += 1
        aid = f"{yymm}.{n:05d}"
        if kind == "pdf":
            size = int(min(4e6, max(5e4, rng.lognormvariate(13.3, 0.8))))  # median ~600 KB
            yield member_name(aid, 1, ".pdf"), size, f"%PDF-1.5\n% {aid}\n".encode()
        else:
            size = int(min(1e6, max(2e4, rng.lognormvariate(12.0, 0.9))))
            yield member_name(aid, None, ".gz"), size, b"\x1f\x8b\x08\x00" + aid.encode()
        total += size + 1024


def generate(out: Path, gb: float, seed: int = 5) -> Path:
    """A bulk root of ``gb`` GB: random member bytes (distinct per member), streamed to disk."""
    rng = random.Random(seed)
    pool = os.urandom(64 << 20)
    entries: dict[str, list[ManifestEntry]] = {"pdf": [], "src": []}
    written, month = 0, 0
    while written < gb * 1e9:
        month += 1
        yymm = f"{23 + month // 12:02d}{month % 12 + 1:02d}"
        for which, kind in (("pdf", "pdf"), ("src", "eprint")):
            if written >= gb * 1e9:
                break
            filename = f"{which}/arXiv_{which}_{yymm}_001.tar"
            path = out / filename
            path.parent.mkdir(parents=True, exist_ok=True)
            names = []
            with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
                for name, size, head in _members(rng, kind, yymm):
                    start = rng.randrange(0, len(pool) - size)
                    body = head + pool[start : start + size - len(head)]
                    info = tarfile.TarInfo(name)
                    info.size, info.mtime, info.mode = len(body), 1_700_000_000, 0o644
                    tar.addfile(info, io.BytesIO(body))
                    names.append(name)
            md5 = hashlib.md5(usedforsecurity=False)
            with open(path, "rb") as fh:
                while block := fh.read(8 << 20):
                    md5.update(block)
            size = path.stat().st_size
            written += size
            item = lambda n: n.split("/")[1].rsplit(".", 1)[0]  # noqa: E731
            entries[which].append(
                ManifestEntry(
                    filename=filename, kind=kind, yymm=yymm, seq_num=1, md5sum=md5.hexdigest(), size=size,
                    num_items=len(names), first_item=item(names[0]), last_item=item(names[-1]),
                )
            )  # fmt: skip
    for which in ("pdf", "src"):
        (out / which).mkdir(parents=True, exist_ok=True)
        write_manifest(out, which, entries[which])
    return out


def drop_cache(root: Path) -> None:
    """Ask the kernel to forget the tars' pages (best effort: needs root; else reads are warm)."""
    for path in root.rglob("*.tar"):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def measure_index(root: BulkRoot, home: Path, workers: int, options: dict | None = None) -> dict:
    shutil.rmtree(home, ignore_errors=True)
    c0, t0 = cpu_s(), time.perf_counter()
    summary = update_index(root, home, workers=workers, storage_options=options)
    wall, cpu = time.perf_counter() - t0, cpu_s() - c0
    mb = summary["bytes_read"] / 1e6
    return {
        "mb": mb,
        "wall_s": wall,
        "cpu_s": cpu,
        "mb_per_s": mb / wall,
        "mb_per_cpu_s": mb / cpu,
        **summary,
    }


def measure_reads(root: BulkRoot, home: Path, n: int, seed: int = 9) -> dict:
    """Read ``n`` random papers (PDFs and e-prints) into a fresh blob store."""
    import polars as pl

    members = pl.read_parquet(home / "arxiv_bulk_index" / "*.parquet").select("id", "kind", "size")
    sample = members.sample(min(n, members.height), seed=seed).rows()
    reader = BulkReader(root, home)
    blobs_dir = home / "blobs"
    shutil.rmtree(blobs_dir, ignore_errors=True)
    blobs = BlobStore(blobs_dir)
    times, sizes = [], []
    c0, t0 = cpu_s(), time.perf_counter()
    for aid, kind, size in sample:
        s = time.perf_counter()
        got, note = reader.fetch(aid, kind, blobs)
        times.append(time.perf_counter() - s)
        sizes.append(size)
        assert got is not None and got.status == "stored", (aid, got, note)
    wall, cpu = time.perf_counter() - t0, cpu_s() - c0
    # least squares t = a + b * bytes
    k = len(times)
    mx, my = sum(sizes) / k, sum(times) / k
    var = sum((x - mx) ** 2 for x in sizes) or 1.0
    slope = sum((x - mx) * (y - my) for x, y in zip(sizes, times, strict=True)) / var
    fixed = my - slope * mx
    mb = sum(sizes) / 1e6
    shutil.rmtree(blobs_dir, ignore_errors=True)
    return {
        "papers": k,
        "mb": mb,
        "wall_s": wall,
        "cpu_s": cpu,
        "papers_per_s": k / wall,
        "mb_per_s": mb / wall,
        "fixed_ms": fixed * 1000,
        "rate_mb_s": (1 / slope / 1e6) if slope > 0 else float("inf"),
    }


class _S3:
    """moto's S3 on 127.0.0.1 (free port), stopped by :meth:`close` or after 30 minutes."""

    def __init__(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        for key, value in {
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_DEFAULT_REGION": "us-east-1",
        }.items():
            os.environ.setdefault(key, value)
        self.server = make_server(
            "127.0.0.1", 0, DomainDispatcherApplication(create_backend_app), threaded=True
        )
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.timer = threading.Timer(1800, self.server.shutdown)
        self.timer.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def upload(self, local: Path, bucket: str, tars: int) -> int:
        import boto3

        from corpus.ingest.bulk import parse_manifest

        client = boto3.client("s3", endpoint_url=self.url)
        client.create_bucket(Bucket=bucket)
        sent = 0
        for which in ("pdf", "src"):
            entries, _ = parse_manifest((local / which / f"arXiv_{which}_manifest.xml").read_bytes(), which)
            chosen = entries[: max(1, tars // 2)]
            for e in chosen:
                client.upload_file(str(local / e.filename), bucket, e.filename)
                sent += e.size
            xml_dir = Path(tempfile.mkdtemp())
            write_manifest(xml_dir, which, chosen)
            client.upload_file(
                str(xml_dir / which / f"arXiv_{which}_manifest.xml"),
                bucket,
                f"{which}/arXiv_{which}_manifest.xml",
            )
            shutil.rmtree(xml_dir)
        return sent

    def close(self) -> None:
        self.timer.cancel()
        self.server.shutdown()
        self.thread.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path)
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "bulk_bench")
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--s3-tars", type=int, default=2, help="tars served by the loopback S3 (0: skip S3)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    made = args.root is None
    root_dir = args.root or args.out / "root"
    work = args.out / "work"
    try:
        if made and not (root_dir / "pdf/arXiv_pdf_manifest.xml").exists():
            t0 = time.perf_counter()
            generate(root_dir, args.gb)
            print(f"generated {args.gb} GB in {time.perf_counter() - t0:.0f}s under {root_dir}", flush=True)
        total = sum(p.stat().st_size for p in root_dir.rglob("*.tar"))
        root = BulkRoot.open(str(root_dir))
        cores = os.cpu_count() or 1
        drop_cache(root_dir)
        one = measure_index(root, work / "home1", 1)
        print(f"index 1 worker : {one['mb']:.0f} MB, {one['mb_per_s']:.0f} MB/s wall, "
              f"{one['mb_per_cpu_s']:.0f} MB per CPU s, {one['members']} members", flush=True)  # fmt: skip
        drop_cache(root_dir)
        many = measure_index(root, work / "home", cores)
        print(
            f"index {cores} workers: {many['mb_per_s']:.0f} MB/s wall, {many['cpu_s']:.1f} CPU s", flush=True
        )
        c0, t0 = cpu_s(), time.perf_counter()
        incremental = update_index(root, work / "home", workers=cores)
        print(f"re-index (nothing changed): {time.perf_counter() - t0:.2f}s, {cpu_s() - c0:.2f} CPU s, "
              f"{incremental['indexed']} tars read", flush=True)  # fmt: skip
        reads = measure_reads(root, work / "home", args.papers)
        print(f"local reads: {reads['papers_per_s']:.0f} papers/s, {reads['mb_per_s']:.0f} MB/s, "
              f"t = {reads['fixed_ms']:.2f} ms + bytes / {reads['rate_mb_s']:.0f} MB/s", flush=True)  # fmt: skip
        s3 = {}
        if args.s3_tars:
            server = _S3()
            try:
                sent = server.upload(root_dir, "arxiv-bench", args.s3_tars)
                options = {"endpoint_url": server.url, "skip_instance_cache": True}
                remote = BulkRoot.open("s3://arxiv-bench", options)
                s3_index = measure_index(remote, work / "home_s3", cores, options)
                s3 = measure_reads(remote, work / "home_s3", min(args.papers, 300))
                print(f"S3 ({sent / 1e6:.0f} MB): index {s3_index['mb_per_s']:.0f} MB/s; reads "
                      f"{s3['papers_per_s']:.0f} papers/s, {s3['mb_per_s']:.0f} MB/s, "
                      f"t = {s3['fixed_ms']:.2f} ms + bytes / {s3['rate_mb_s']:.0f} MB/s", flush=True)  # fmt: skip
                s3["index_mb_per_s"] = s3_index["mb_per_s"]
            finally:
                server.close()
        result(
            root_gb=round(total / 1e9, 2),
            index_mb_per_s_1worker=round(one["mb_per_s"]),
            index_mb_per_cpu_s=round(one["mb_per_cpu_s"]),
            index_mb_per_s=round(many["mb_per_s"]),
            read_papers_per_s=round(reads["papers_per_s"]),
            read_mb_per_s=round(reads["mb_per_s"]),
            read_fixed_ms=round(reads["fixed_ms"], 2),
            read_rate_mb_s=round(reads["rate_mb_s"]),
            s3_index_mb_per_s=round(s3.get("index_mb_per_s", 0)),
            s3_papers_per_s=round(s3.get("papers_per_s", 0)),
            s3_mb_per_s=round(s3.get("mb_per_s", 0)),
            s3_fixed_ms=round(s3.get("fixed_ms", 0), 2),
            cpu_s=round(cpu_s(), 1),
            peak_mb=round(peak_tree_mb()),
        )
    finally:
        if not args.keep:
            shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
