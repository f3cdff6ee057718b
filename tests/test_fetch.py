"""corpus.ingest.fetch: landing mode on the real landing zone (hashes checked against its MANIFEST),
arxiv mode against the loopback server serving real PDFs / e-prints with injected 503, 500,
truncation, 404 and HTML, and re-runs that fetch nothing."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import tarfile
from pathlib import Path

import httpx
import pytest
from conftest import LANDING
from http_server import Reply, ScriptedServer

from corpus.ingest.fetch import CACHED, FAILED, MISSING, STORED, Fetcher, FetchResult, sniff_eprint
from corpus.ingest.http import USER_AGENT, PoliteClient, RetryPolicy
from corpus.store import BlobStore


def manifest() -> dict[str, dict[str, str]]:
    with open(LANDING / "MANIFEST.tsv", newline="", encoding="utf-8") as fh:
        return {row["id"]: row for row in csv.DictReader(fh, delimiter="\t")}


def no_network_client(calls: list[str]) -> PoliteClient:
    def refuse(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        raise httpx.ConnectError("network is off in this test")

    return PoliteClient(min_interval_s=0, transport=httpx.MockTransport(refuse), sleep=lambda _s: None)


def fast_client(max_retries: int = 3) -> PoliteClient:
    """Real HTTP to the loopback server; waits go to a no-op sleep."""
    return PoliteClient(
        min_interval_s=0,
        timeout_s=5,
        retry=RetryPolicy(max_retries=max_retries, backoff_base_s=0.01),
        sleep=lambda _s: None,
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- landing mode ---------------------------------------------------------------------------------
def test_landing_mode_on_real_landing_zone(shared_landing, tmp_path):
    rows = manifest()
    assert len(rows) == 41
    blobs = BlobStore(tmp_path / "blobs")
    calls: list[str] = []
    fetcher = Fetcher(blobs, shared_landing, mode="landing", client=no_network_client(calls))
    pdfs = {r.id: r for r in fetcher.fetch_many(sorted(rows), "pdf")}
    eprints = {r.id: r for r in fetcher.fetch_many(sorted(rows), "eprint")}
    assert calls == [] and fetcher.downloads == 0

    for arxiv_id, row in rows.items():
        pdf, src = pdfs[arxiv_id], eprints[arxiv_id]
        if row["has_pdf"] == "yes":
            assert (pdf.status, pdf.source) == (STORED, "landing"), arxiv_id
            assert pdf.sha256 == row["pdf_sha256"]  # MANIFEST: hash of the file as copied
            blob = blobs.path("pdf", pdf.sha256)
            assert (
                pdf.bytes
                == blob.stat().st_size
                == (shared_landing / "pdf" / f"{arxiv_id}.pdf").stat().st_size
            )
            assert pdf.md5 == hashlib.md5(blob.read_bytes()).hexdigest()
        else:
            assert (pdf.status, pdf.sha256, pdf.reason) == (MISSING, None, "not in the landing zone")
        if row["has_src"] == "yes":
            assert src.status == STORED and src.sha256 == row["src_sha256"], arxiv_id
        else:
            assert src.status == MISSING
    assert sum(r.status == STORED for r in pdfs.values()) == 22
    assert sum(r.status == STORED for r in eprints.values()) == 2

    # second run, nothing known: the landing files are hashed again but nothing is copied
    again = list(fetcher.fetch_many(sorted(rows), "pdf"))
    assert {r.status for r in again} == {CACHED, MISSING}
    assert [(r.id, r.sha256) for r in again] == [(r.id, r.sha256) for r in pdfs.values()]
    assert (
        len(list((tmp_path / "blobs" / "pdf").rglob("*"))) - len(list((tmp_path / "blobs" / "pdf").glob("*")))
        == 22
    )


def test_known_blob_skips_landing_and_network(tmp_path):
    src = LANDING / "pdf" / "0908.0054.pdf"
    landing = tmp_path / "landing"
    (landing / "pdf").mkdir(parents=True)
    (landing / "pdf" / "0908.0054.pdf").write_bytes(src.read_bytes())
    blobs = BlobStore(tmp_path / "blobs")
    first = Fetcher(blobs, landing).fetch("arXiv:0908.0054v2", "pdf")
    assert first.status == STORED and first.id == "0908.0054"

    (landing / "pdf" / "0908.0054.pdf").unlink()  # landing file gone: the known blob still answers
    calls: list[str] = []
    for known in ({"0908.0054": first.sha256}, {"0908.0054v1": (first.sha256, first.md5)}):
        fetcher = Fetcher(blobs, landing, mode="arxiv", client=no_network_client(calls), known=known)
        hit = fetcher.fetch("0908.0054", "pdf")
        assert (hit.status, hit.source, hit.sha256, hit.md5, hit.bytes) == (
            CACHED,
            "known",
            first.sha256,
            first.md5,
            first.bytes,
        )
    assert calls == []

    # a corrupt blob is not trusted: it is dropped and the paper is looked for again
    blobs.path("pdf", first.sha256).write_bytes(b"garbage")
    fetcher = Fetcher(blobs, landing, mode="landing", known={"0908.0054": first.sha256})
    assert fetcher.fetch("0908.0054", "pdf").status == MISSING
    assert not blobs.has("pdf", first.sha256)


def test_bad_ids_and_old_style_ids(tmp_path):
    landing = tmp_path / "landing"
    (landing / "pdf").mkdir(parents=True)
    (landing / "pdf" / "hep-th_9901001.pdf").write_bytes((LANDING / "pdf" / "0908.0054.pdf").read_bytes())
    fetcher = Fetcher(BlobStore(tmp_path / "blobs"), landing)
    bad = fetcher.fetch("not-an-id", "pdf")
    assert (bad.status, bad.reason, bad.id) == (FAILED, "invalid arXiv id", "not-an-id")
    old = fetcher.fetch("hep-th/9901001v3", "pdf")
    assert (old.id, old.status) == ("hep-th/9901001", STORED)
    assert fetcher.url("hep-th/9901001", "eprint") == "https://arxiv.org/e-print/hep-th/9901001"
    with pytest.raises(ValueError):
        fetcher.fetch("0908.0054", "tei")
    with pytest.raises(ValueError):
        Fetcher(BlobStore(tmp_path), landing, mode="s3")


def test_default_client_is_polite(tmp_path):
    with Fetcher(BlobStore(tmp_path), tmp_path, mode="arxiv") as fetcher:
        client = fetcher.client
        assert client.min_interval_s >= 3.0
        assert client._client.headers["User-Agent"] == USER_AGENT
        assert fetcher.url("2004.14974", "pdf") == "https://arxiv.org/pdf/2004.14974"


# -- arxiv mode against the loopback server --------------------------------------------------------
def gz_tex() -> bytes:
    return gzip.compress(b"\\documentclass{article}\\begin{document}Hi\\end{document}\n")


def test_arxiv_mode_with_injected_failures(tmp_path):
    pdf_a = (LANDING / "pdf" / "1706.03762.pdf").read_bytes()
    pdf_b = (LANDING / "pdf" / "2203.03605.pdf").read_bytes()
    pdf_c = (LANDING / "pdf" / "2004.07180.pdf").read_bytes()
    tar_gz = (LANDING / "src" / "2004.14974.tar.gz").read_bytes()
    html = b"<!DOCTYPE html><html><body>PDF unavailable</body></html>"
    landing, blobs = tmp_path / "landing", BlobStore(tmp_path / "blobs")

    with ScriptedServer(max_lifetime_s=60) as srv:
        srv.script("/pdf/1706.03762", Reply(503, b"busy", {"Retry-After": "1"}), Reply(200, pdf_a))
        srv.script("/pdf/2203.03605", Reply(500), Reply(200, pdf_b, truncate_to=5000), Reply(200, pdf_b))
        srv.script("/pdf/2004.07180", Reply(200, pdf_c, truncate_to=len(pdf_c) // 3))
        srv.script("/pdf/1709.01907", Reply(200, html, {"Content-Type": "text/html"}))
        srv.script("/pdf/hep-th/9901001", Reply(301, headers={"Location": "/pdf/hep-th/9901001v2"}))
        srv.serve("/pdf/hep-th/9901001v2", pdf_c)
        srv.serve("/e-print/2004.14974", tar_gz)
        srv.serve("/e-print/2408.12714", gz_tex())
        srv.serve("/e-print/1706.03762", pdf_a)
        srv.serve("/e-print/1709.01907", html)
        srv.script("/pdf/1906.11632", Reply(302, headers={"Location": "/pdf/1906.11632"}))  # a redirect loop
        good_pdfs = ["1706.03762", "2203.03605", "hep-th/9901001"]
        bad_pdfs = ["2004.07180", "1709.01907", "0704.0001", "1906.11632"]
        good_src = ["2004.14974", "2408.12714", "1706.03762"]

        with Fetcher(blobs, landing, mode="arxiv", client=fast_client(), base_url=srv.url()) as fetcher:
            pdfs = {r.id: r for r in fetcher.fetch_many(good_pdfs + bad_pdfs, "pdf")}
            srcs = {r.id: r for r in fetcher.fetch_many([*good_src, "1709.01907"], "eprint")}

        for arxiv_id, body in zip(good_pdfs, [pdf_a, pdf_b, pdf_c], strict=True):
            row = pdfs[arxiv_id]
            assert (row.status, row.source, row.http_status) == (STORED, "arxiv", 200), row
            assert row.sha256 == hashlib.sha256(body).hexdigest() and row.bytes == len(body)
            assert blobs.read("pdf", row.sha256) == body
            name = arxiv_id.replace("/", "_")
            assert (landing / "pdf" / f"{name}.pdf").read_bytes() == body  # saved to the landing zone first
        assert pdfs["1706.03762"].sha256 == manifest()["1706.03762"]["pdf_sha256"]
        assert srv.hits("/pdf/1706.03762") == 2 and srv.hits("/pdf/2203.03605") == 3

        truncated, not_pdf, absent = pdfs["2004.07180"], pdfs["1709.01907"], pdfs["0704.0001"]
        assert truncated.status == FAILED and truncated.http_status is None
        assert "peer closed connection without sending complete message body" in truncated.reason
        assert srv.hits("/pdf/2004.07180") == 3  # bounded: 1 + BODY_RETRIES re-downloads
        assert (not_pdf.status, not_pdf.http_status) == (
            FAILED,
            200,
        ) and "did not return a PDF" in not_pdf.reason
        assert (absent.status, absent.http_status) == (MISSING, 404)
        loop = pdfs["1906.11632"]
        assert loop.status == FAILED and "redirects" in loop.reason
        # nothing partial or wrong became a landing file or a blob
        assert sorted(p.name for p in (landing / "pdf").iterdir() if p.is_file()) == [
            "1706.03762.pdf",
            "2203.03605.pdf",
            "hep-th_9901001.pdf",
        ]
        assert not list((tmp_path / "scratch").rglob("*.part"))  # downloads land in scratch first
        assert len([p for p in (tmp_path / "blobs" / "pdf").rglob("*") if p.is_file()]) == 3

        assert [srcs[i].status for i in good_src] == [STORED] * 3
        assert sorted(p.name for p in (landing / "src").iterdir() if p.is_file()) == [
            "1706.03762.pdf",
            "2004.14974.tar.gz",
            "2408.12714.gz",
        ]
        assert srcs["2004.14974"].sha256 == manifest()["2004.14974"]["src_sha256"]
        assert srcs["1709.01907"].status == FAILED and "e-print" in srcs["1709.01907"].reason

        # second run with what the first stored: no request for anything already stored
        before = len(srv.seen())
        known = {r.id: (r.sha256, r.md5) for r in pdfs.values() if r.sha256}
        with Fetcher(
            blobs, landing, mode="arxiv", client=fast_client(), base_url=srv.url(), known=known
        ) as again:
            rerun = {r.id: r for r in again.fetch_many(good_pdfs, "pdf")}
            assert again.downloads == 0
        assert len(srv.seen()) == before
        assert all(r.status == CACHED and r.source == "known" for r in rerun.values())
        # ... and without `known` the landing zone answers, still without the network
        with Fetcher(blobs, landing, mode="arxiv", client=fast_client(), base_url=srv.url()) as again:
            rerun = [again.fetch(i, "eprint") for i in good_src]
        assert len(srv.seen()) == before
        assert [(r.status, r.source) for r in rerun] == [(CACHED, "landing")] * 3


def test_fetch_result_row_shape():
    row = FetchResult(id="2004.14974", kind="pdf", status=MISSING, reason="not in the landing zone")
    assert list(row.model_dump()) == [
        "id",
        "kind",
        "status",
        "sha256",
        "md5",
        "bytes",
        "source",
        "reason",
        "http_status",
    ]
    with pytest.raises(ValueError):
        FetchResult(id="x", kind="pdf", status="done")


def test_sniff_eprint():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("main.tex")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    plain_tar = buf.getvalue()
    assert sniff_eprint(gzip.compress(plain_tar)) == ".tar.gz"
    assert sniff_eprint(gzip.compress(b"\\documentclass{article}")) == ".gz"
    assert sniff_eprint(plain_tar) == ".tar"
    assert sniff_eprint(b"%PDF-1.5\n...") == ".pdf"
    assert sniff_eprint(b"%!PS-Adobe-2.0\n") == ".ps"
    assert sniff_eprint(b"%auto-ignore\n\\documentclass{article}") == ".tex"
    assert sniff_eprint(b"<html>") is None and sniff_eprint(b"  <!DOCTYPE html>") is None
    assert sniff_eprint(b"") is None and sniff_eprint(b"\x00\x01binary") is None
    assert sniff_eprint((LANDING / "src" / "2408.12714.tar.gz").read_bytes()[: 1 << 16]) == ".tar.gz"
