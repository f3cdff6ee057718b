"""Grobid client, TEI cache and GrobidResource against a loopback Grobid serving real TEI."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from grobid_server import FakeGrobid, dead_url, recorded_pairs

from corpus.parse.grobid import (
    TEI_COORDINATES,
    GrobidClient,
    GrobidOptions,
    GrobidUnavailable,
    PdfItem,
    TeiCache,
    TeiRunSummary,
    _parse_version,
    check_tei,
    collect_tei,
    tei_version,
)
from corpus.store import BlobStore
from resources.grobid import GrobidResource

FAST = {"backoff": 0.01, "backoff_max_s": 0.05}


@pytest.fixture(scope="module")
def pairs(shared_data, shared_landing):
    return recorded_pairs(shared_data, shared_landing)


@pytest.fixture(scope="module")
def tei_by_sha(pairs):
    return {p.sha256: p.tei.read_bytes() for p in pairs}


@pytest.fixture
def server(tei_by_sha):
    with FakeGrobid(tei_by_sha, slots=3, latency_s=0.02) as fake:
        yield fake


def client_for(server: FakeGrobid, **kwargs) -> GrobidClient:
    return GrobidClient(server.url, timeout_s=kwargs.pop("timeout_s", 5.0), **{**FAST, **kwargs})


def test_recorded_pairs_span_grobid_versions(pairs):
    assert len(pairs) >= 20
    versions = {tei_version(p.tei.read_bytes()) for p in pairs}
    assert {"0.5.5", "0.6.1", "0.8.0", "0.8.1-SNAPSHOT"} <= versions
    assert len({p.sha256 for p in pairs}) == len(pairs)
    # s2orc-doc2json names a PDF by the sha1 of its TEI minus 4 hex digits
    assert any(p.tei.name.startswith("24e6") and p.pdf.stem.startswith("b80e") for p in pairs)


def test_real_pdfs_get_their_recorded_tei(server, pairs):
    with client_for(server) as client:
        assert client.is_alive()
        assert client.version() == "0.8.1"
        assert client.pool_size() == 3 and client.concurrency == 3
        results = dict(client.process_many((p.name, p.pdf) for p in pairs))
    assert set(results) == {p.name for p in pairs}
    for p in pairs:
        result = results[p.name]
        assert result.status == "ok", (p.name, result)
        assert result.tei == p.tei.read_bytes()
        assert result.http_status == 200 and result.grobid_version == "0.8.1"
    # exactly the server's pool in flight, never more, so no 503 at all
    assert server.stats.max_in_flight == 3
    assert server.stats.answered == {200: len(pairs)}
    assert server.stats.forms[-1] == {
        "consolidateHeader": "0",
        "consolidateCitations": "0",
        "includeRawCitations": "1",
    }


def test_503_burst_is_retried(server, pairs):
    server.faults.busy_burst = 7
    with client_for(server, concurrency=2) as client:
        results = dict(client.process_many((p.name, p.pdf) for p in pairs[:4]))
    assert all(r.status == "ok" for r in results.values())
    assert server.stats.answered[503] == 7
    assert sum(r.attempts for r in results.values()) == 4 + 7


class Recorder:
    """Stands in for Dagster's context.log."""

    def __init__(self):
        self.lines: list[tuple[str, str]] = []

    def debug(self, msg, *args):
        self.lines.append(("debug", msg))

    def info(self, msg, *args):
        self.lines.append(("info", msg))

    def warning(self, msg, *args):
        self.lines.append(("warning", msg))


def test_endless_503_is_bounded_and_logged_to_the_given_logger(server, pairs):
    sha = pairs[0].sha256
    server.faults.flaky_for[sha] = 1000
    log = Recorder()
    root_handlers = list(logging.root.handlers)
    with client_for(server, max_retries=3, log=log) as client:
        result = client.process(pairs[0].pdf)
    assert (result.status, result.reason, result.http_status, result.attempts) == ("failed", "busy", 503, 4)
    assert server.stats.by_sha[sha] == 4
    assert [level for level, _ in log.lines] == ["debug"] * 3 + ["warning"]
    assert "busy" in log.lines[-1][1] and logging.root.handlers == root_handlers


def test_500_is_final(server, pairs):
    sha = pairs[1].sha256
    server.faults.status_for[sha] = 500
    with client_for(server) as client:
        result = client.process(pairs[1].pdf.read_bytes(), "x.pdf")
    assert (result.status, result.reason, result.http_status, result.attempts) == (
        "failed",
        "http_500",
        500,
        1,
    )
    assert "BAD_INPUT_DATA" in result.detail and result.tei is None
    assert server.stats.by_sha[sha] == 1


def test_slow_answer_times_out_after_bounded_retries(server, pairs):
    sha = pairs[2].sha256
    server.faults.slow_for[sha] = 5.0
    with client_for(server, timeout_s=0.3, timeout_retries=1) as client:
        start = time.perf_counter()
        result = client.process(pairs[2].pdf)
    assert (result.status, result.reason, result.http_status, result.attempts) == (
        "failed",
        "timeout",
        None,
        2,
    )
    assert time.perf_counter() - start < 2.5
    assert server.stats.by_sha[sha] == 2


def test_malformed_tei_is_a_failure(server, pairs):
    server.faults.malformed_for.add(pairs[3].sha256)
    with client_for(server) as client:
        result = client.process(pairs[3].pdf)
    assert (result.status, result.reason, result.http_status) == ("failed", "malformed_tei", 200)
    assert "not XML" in result.detail


def test_check_tei_and_version(pairs):
    assert check_tei(pairs[0].tei.read_bytes()) is None
    assert check_tei(b"") == "empty body"
    assert check_tei(b"<html><body>Oops</body></html>").startswith("root is <html>")
    assert check_tei(b"%PDF-1.4 not xml").startswith("not XML")
    assert tei_version(b"<TEI><application version='x'/></TEI>") is None
    assert tei_version(b'<application version="0.7.3" ident="GROBID" when="x">') == "0.7.3"


def test_read_error_is_a_failure_row(server, tmp_path):
    with client_for(server) as client:
        result = client.process(tmp_path / "missing.pdf")
    assert (result.status, result.reason, result.attempts) == ("failed", "read_error", 0)


def test_dead_server_is_one_clear_error():
    url = dead_url()
    client = GrobidClient(url, timeout_s=2.0)
    assert not client.is_alive()
    sent = []
    with pytest.raises(GrobidUnavailable, match="not available") as info:
        list(client.process_many(((str(i), b"%PDF") for i in range(50)), on_result=lambda *a: sent.append(a)))
    assert url in str(info.value) and sent == []
    assert client.version() == "unknown"


def test_version_parsing():
    def resp(body: str) -> httpx.Response:
        return httpx.Response(200, text=body)

    assert _parse_version(resp('{"version": "0.8.1", "revision": "abc"}')) == "0.8.1"
    assert _parse_version(resp("0.5.5\n")) == "0.5.5"
    assert _parse_version(resp('{"version": "grobid-service 0.7.3"}')) == "0.7.3"


def test_pool_size_fallback_without_health(tei_by_sha):
    with FakeGrobid(tei_by_sha, slots=5, health=False) as fake:
        client = GrobidClient(fake.url, fallback_concurrency=2)
        assert client.pool_size() is None
        assert client.concurrency == 2


def _items(pairs, landing: Path) -> tuple[list[PdfItem], set[str]]:
    """The data pairs' PDFs (no TEI given) and every landing PDF with its landing TEI as a
    hint; also the sha256 of the PDFs a hint covers (some data PDFs are landing PDFs too)."""
    items = [PdfItem(p.name, p.pdf) for p in pairs if not p.name.startswith("landing/")]
    hinted = set()
    for pdf in sorted((landing / "pdf").glob("*.pdf")):
        hint = landing / "tei" / f"{pdf.stem}.tei.xml"
        items.append(PdfItem(f"landing/{pdf.stem}", pdf, tei_hint=hint))
        if hint.exists():
            hinted.add(hashlib.sha256(pdf.read_bytes()).hexdigest())
    return items, hinted


def test_collect_tei_faults_then_rerun_sends_only_what_is_missing(server, pairs, shared_landing, tmp_path):
    cache = TeiCache(BlobStore(tmp_path / "blobs"))
    items, hinted = _items(pairs, shared_landing)
    sha_of = {i.key: hashlib.sha256(Path(i.pdf).read_bytes()).hexdigest() for i in items}
    data_pairs = [p for p in pairs if not p.name.startswith("landing/") and p.sha256 not in hinted]
    bad500, malformed, slow = data_pairs[0], data_pairs[1], data_pairs[2]
    server.faults.status_for[bad500.sha256] = 500
    server.faults.malformed_for.add(malformed.sha256)
    server.faults.slow_for[slow.sha256] = 5.0
    server.faults.busy_burst = 4
    summary = TeiRunSummary()
    with client_for(server, timeout_s=0.5, timeout_retries=0) as client:
        rows = {r.key: r for r in collect_tei(items, cache, client, summary)}
    assert set(rows) == {i.key for i in items}  # one row per PDF, none lost
    expected_fail = {
        bad500.name: ("http_500", 500),
        malformed.name: ("malformed_tei", 200),
        slow.name: ("timeout", None),
    }
    # landing PDFs without TEI are unknown to the fake: Grobid fails on them (500)
    expected_fail |= {
        i.key: ("http_500", 500)
        for i in items
        if i.key.startswith("landing/") and sha_of[i.key] not in hinted
    }
    for key, row in rows.items():
        assert row.pdf_sha256 == sha_of[key]
        if row.pdf_sha256 in hinted:
            assert row.status == "cached" and row.source in ("landing", "cache"), row
            assert row.grobid_version and Path(row.tei_path).exists()
        elif key in expected_fail:
            assert (row.status, row.reason, row.http_status) == ("failed", *expected_fail[key]), row
        else:
            assert row.status == "ok" and row.source == "grobid" and row.grobid_version == "0.8.1", row
            assert Path(row.tei_path).read_bytes() == server.tei_by_sha[row.pdf_sha256]
    assert summary.counts["failed"] == len(expected_fail) >= 4
    assert summary.counts["ok"] >= 5 and summary.counts["cached"] >= 10
    assert summary.unavailable is None

    # second run, faults gone: only the failed PDFs are sent again
    server.faults.status_for.clear()
    server.faults.malformed_for.clear()
    server.faults.slow_for.clear()
    before = dict(server.stats.by_sha)
    with client_for(server) as client:
        rerun = {r.key: r for r in collect_tei(items, cache, client)}
    sent = {sha for sha, n in server.stats.by_sha.items() if n > before.get(sha, 0)}
    assert sent == {rows[k].pdf_sha256 for k in expected_fail}
    for key, row in rerun.items():
        if key in (bad500.name, malformed.name, slow.name):
            assert row.status == "ok"
        elif key in expected_fail:
            assert row.status == "failed"
        else:
            assert row.status == "cached" and row.grobid_version, row


def test_collect_tei_without_grobid_materialises_the_cache(pairs, shared_landing, tmp_path):
    cache = TeiCache(BlobStore(tmp_path / "blobs"))
    items, hinted = _items(pairs, shared_landing)
    summary = TeiRunSummary()
    rows = list(collect_tei(items, cache, GrobidClient(dead_url()), summary))
    assert len(rows) == len(items)
    cached = [r for r in rows if r.status == "cached"]
    pending = [r for r in rows if r.status == "pending"]
    assert {r.pdf_sha256 for r in cached} == hinted and len(hinted) >= 10
    assert len(cached) + len(pending) == len(items) and pending
    assert all(r.reason == "grobid_unavailable" for r in pending)
    assert "not available" in summary.unavailable
    pending_item = next(i for i in items if i.key == pending[0].key)
    assert [r.status for r in collect_tei([pending_item], cache, None)] == ["pending"]


def test_server_dying_midway_leaves_pending_rows(tei_by_sha, pairs, tmp_path):
    cache = TeiCache(BlobStore(tmp_path / "blobs"))
    items = [PdfItem(p.name, p.pdf) for p in pairs]
    fake = FakeGrobid(tei_by_sha, slots=2, latency_s=0.1).start()
    rows = []
    try:
        with client_for(fake, transport_retries=1) as client:
            for row in collect_tei(items, cache, client):
                rows.append(row)
                if len(rows) == 3:
                    fake.stop()
    finally:
        fake.stop()
    assert sorted(r.key for r in rows) == sorted(i.key for i in items)
    statuses = {r.status for r in rows}
    assert "ok" in statuses and "pending" in statuses
    assert all(r.reason == "grobid_unavailable" for r in rows if r.status == "pending")


def test_duplicate_pdfs_are_sent_once(server, pairs, tmp_path):
    cache = TeiCache(BlobStore(tmp_path / "blobs"))
    items = [PdfItem("a", pairs[0].pdf), PdfItem("b", pairs[0].pdf), PdfItem("c", tmp_path / "gone.pdf")]
    with client_for(server) as client:
        rows = {r.key: r for r in collect_tei(items, cache, client)}
    assert rows["a"].status == rows["b"].status == "ok"
    assert rows["c"].status == "failed" and rows["c"].reason == "read_error"
    assert server.stats.by_sha[pairs[0].sha256] == 1


def test_options_match_grobid_client_python():
    form = GrobidOptions(tei_coordinates=True, segment_sentences=True).form()
    assert form["teiCoordinates"] == list(TEI_COORDINATES) and form["segmentSentences"] == "1"
    code = (
        "import json, logging; before = len(logging.root.handlers)\n"
        "from grobid_client.grobid_client import GrobidClient as G\n"
        "print(json.dumps([G.DEFAULT_CONFIG['coordinates'], before, len(logging.root.handlers)]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    coordinates, before, after = json.loads(out.stdout)
    assert coordinates == list(TEI_COORDINATES)
    assert after > before  # the trap: importing it configures the root logger


def test_resource_validates_and_builds_a_client(server, monkeypatch):
    monkeypatch.setenv("GROBID_URL", server.url + "/")
    resource = GrobidResource()
    assert resource.base_url == server.url
    client = resource.client()
    assert client.base_url == server.url and client.concurrency == 3  # 0 -> /api/health
    assert client.options == GrobidOptions()
    assert client.options.form()["consolidateHeader"] == "0"
    fixed = GrobidResource(base_url="http://grobid:8070", concurrency=6, consolidate_citations=True)
    assert fixed.client().concurrency == 6
    assert fixed.client().options.form()["consolidateCitations"] == "1"
    for bad in ({"timeout_s": 0}, {"concurrency": -1}, {"base_url": "grobid:8070"}, {"max_retries": -2}):
        with pytest.raises(Exception, match="validation error"):
            GrobidResource(**bad)
    monkeypatch.delenv("GROBID_URL")
    assert GrobidResource().base_url == "http://localhost:8070"
    assert os.environ.get("GROBID_URL") is None


def test_headroom_waits_in_the_server_pool_not_on_503(tei_by_sha, pairs):
    with FakeGrobid(tei_by_sha, slots=2, latency_s=0.05, pool_wait_s=1.0) as fake:
        with client_for(fake, headroom=1) as client:
            results = dict(client.process_many((p.name, p.pdf) for p in pairs[:9]))
        assert all(r.status == "ok" for r in results.values())
        assert fake.stats.max_in_flight == 2 and fake.stats.answered == {200: 9}
