"""Which PDFs go to Grobid (CORPUS_GROBID, CORPUS_GROBID_SAMPLE): real PDFs, real TEI answered by
a loopback Grobid, real LaTeX parses; a day of ``grobid_tei`` built by its stage function."""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl
import pytest
from grobid_server import FakeGrobid, dead_url, recorded_pairs

from corpus.ingest.pdf import MAX_PAGES, probe_pdf
from corpus.parse.days import PARSE_SCHEMA, grobid_tei_day, parse_row, pdf_parses_day
from corpus.parse.grobid_policy import (
    MIN_BODY_CHARS_PER_PAGE,
    SKIP_REASON,
    GrobidPolicy,
    latex_shortfall,
    sampled,
    send_reason,
)
from corpus.parse.tei import parse_tei_dict
from corpus.provenance import stale_partitions
from corpus.store import BlobStore, Store
from corpus.versions import code_version

DAY = "2023-08-02"
GOOD, FAILED, NONE, SHORT = "2001.07966", "2007.03051", "2103.14030", "2111.09883"  # real PDFs with TEI
PDF_SCHEMA = {"id": pl.Utf8, "sha256": pl.Utf8, "pages": pl.Int64, "passed": pl.Boolean}


@pytest.fixture(scope="module")
def pairs(shared_data, shared_landing):
    return recorded_pairs(shared_data, shared_landing)


@pytest.fixture(scope="module")
def latex_rows(shared_landing) -> dict[str, dict]:
    """``latex_parses`` rows of the two real e-prints of the landing zone."""
    from corpus.parse.latex import parse_eprint

    out = {}
    for name in ("2004.14974", "2408.12714"):
        with tempfile.TemporaryDirectory() as scratch:
            result = parse_eprint(shared_landing / "src" / f"{name}.tar.gz", name, Path(scratch))
        assert result.doc is not None, result.failure
        out[name] = parse_row(name, "latex", result.doc.model_dump())
    return out


def test_real_papers_hold_far_more_text_per_page_than_the_threshold(pairs, latex_rows):
    """The short-body signal is a quarter of the sparsest real paper: every real PDF of ../shared
    with its Grobid TEI holds >= 4x the threshold per page, so no real parse near it is flagged."""
    per_page = []
    for pair in pairs:
        pages = probe_pdf(pair.pdf).pages
        doc = parse_tei_dict(pair.tei.read_bytes(), pair.name)
        body = sum(len(p["text"]) for p in doc["body_text"] if p["text"] != "EQUATION")
        per_page.append(body / pages)
    assert len(per_page) >= 20
    assert min(per_page) >= 4 * MIN_BODY_CHARS_PER_PAGE, sorted(per_page)[:3]
    # the real LaTeX parses serve at any page count a PDF that reaches Grobid can have
    for row in latex_rows.values():
        assert row["status"] == "ok" and latex_shortfall(row, MAX_PAGES) is None


def test_send_reasons():
    fallback, every = GrobidPolicy(), GrobidPolicy("all")
    good = {"status": "ok", "body_chars": 30_000, "n_bib_entries": 30}
    assert send_reason(fallback, "x", good, 12) is None
    assert send_reason(every, "x", good, 12) == "all"
    assert send_reason(fallback, "x", None, 12) == "no_latex"
    assert send_reason(fallback, "x", {"status": "skipped", "reason": "pdf_only"}, 12) == "no_latex"
    assert send_reason(fallback, "x", {"status": "failed", "reason": "parse_error"}, 12) == "latex_failed"
    assert send_reason(fallback, "x", {**good, "body_chars": 2_000}, 12) == "latex_short_body"
    assert send_reason(fallback, "x", {**good, "n_bib_entries": 0}, 12) == "latex_no_bib"
    assert send_reason(GrobidPolicy(sample=1.0), "x", good, 12) == "sample"
    with pytest.raises(ValueError, match="CORPUS_GROBID="):
        GrobidPolicy("some")
    with pytest.raises(ValueError, match="CORPUS_GROBID_SAMPLE="):
        GrobidPolicy(sample=1.5)


def test_the_sample_share_is_honoured():
    ids = [f"{2000 + i // 10_000}.{i % 10_000:05d}" for i in range(40_000)]
    tenth = {p for p in ids if sampled(p, 0.1)}
    assert 0.095 < len(tenth) / len(ids) < 0.105
    assert tenth == {p for p in ids if sampled(p, 0.1)}  # the same papers every time
    assert tenth <= {p for p in ids if sampled(p, 0.2)}  # a larger share keeps the smaller one's
    assert not any(sampled(p, 0.0) for p in ids[:1000]) and all(sampled(p, 1.0) for p in ids[:1000])


# --------------------------------------------------------------------------- a day of grobid_tei


def _day(home: Path, pairs, latex: dict[str, dict | None]) -> dict[str, str]:
    """A day of ``arxiv_pdfs`` (the real PDFs of ``latex``'s papers, passed) and ``latex_parses``
    (the given rows; None: no row). Returns {paper: PDF sha256}."""
    store, blobs = Store(home), BlobStore(home / "blobs")
    by_name = {p.name.removeprefix("landing/"): p for p in pairs}
    rows, shas = [], {}
    for paper in latex:
        pdf = by_name[paper].pdf
        ref = blobs.put_file("pdf", pdf)
        shas[paper] = ref.sha256
        rows.append({"id": paper, "sha256": ref.sha256, "pages": probe_pdf(pdf).pages, "passed": True})
    store.write_partition("arxiv_pdfs", DAY, pl.DataFrame(rows, schema=PDF_SCHEMA))
    write_latex(store, latex)
    return shas


def write_latex(store: Store, latex: dict[str, dict | None]) -> None:
    rows = [{**row, "id": paper} for paper, row in latex.items() if row is not None]
    frame = pl.DataFrame([{k: r.get(k) for k in PARSE_SCHEMA} for r in rows], schema=PARSE_SCHEMA)
    store.write_partition("latex_parses", DAY, frame)


def _tei(home: Path) -> dict[str, dict]:
    return {r["id"]: r for r in Store(home).read_partition("grobid_tei", DAY).iter_rows(named=True)}


def _run(home: Path, landing: Path, url: str, policy: GrobidPolicy) -> dict:
    grobid = {"base_url": url, "concurrency": 2, "backoff": 0.01, "timeout_s": 10}
    return grobid_tei_day(home, landing, DAY, grobid, policy={"mode": policy.mode, "sample": policy.sample})


@pytest.fixture
def day(tmp_path, pairs, latex_rows):
    """Four real PDFs (no TEI in the landing zone or the cache): a good real LaTeX parse, a
    failed one, none, and one whose body is far too short for its PDF's pages."""
    home, landing = tmp_path / "data", tmp_path / "landing"
    (landing / "tei").mkdir(parents=True)
    short = parse_row(SHORT, "latex", None, status="ok") | {"body_chars": 900, "n_bib_entries": 12}
    latex = {
        GOOD: latex_rows["2004.14974"],
        FAILED: parse_row(FAILED, "latex", status="failed", reason="parse_error: RecursionError"),
        NONE: None,
        SHORT: short,
    }
    shas = _day(home, pairs, latex)
    return home, landing, shas, latex


def test_a_good_latex_parse_is_not_sent_and_the_others_are(day, pairs):
    home, landing, shas, _ = day
    with FakeGrobid.from_pairs(pairs, slots=2) as server:
        summary = _run(home, landing, server.url, GrobidPolicy())
        assert set(server.stats.by_sha) == {shas[FAILED], shas[NONE], shas[SHORT]}
    rows = _tei(home)
    assert (rows[GOOD]["status"], rows[GOOD]["reason"], rows[GOOD]["pdf_sha256"]) == (
        "skipped",
        SKIP_REASON,
        shas[GOOD],
    )
    assert all(rows[p]["status"] == "ok" for p in (FAILED, NONE, SHORT))
    assert summary["wanted"] == {SKIP_REASON: 1, "latex_failed": 1, "no_latex": 1, "latex_short_body": 1}
    assert summary["status"] == {"skipped": 1, "ok": 3} and summary["sent"] == summary["needs_grobid"] == 3
    pdf_parses_day(home, DAY)
    parses = {r["id"]: r for r in Store(home).read_partition("pdf_parses", DAY).iter_rows(named=True)}
    assert (parses[GOOD]["status"], parses[GOOD]["reason"]) == ("skipped", SKIP_REASON)
    assert all(parses[p]["status"] == "ok" for p in (FAILED, NONE, SHORT))


def test_pending_and_skipped_each_have_their_status(day):
    home, landing, _, _ = day
    summary = _run(home, landing, dead_url(), GrobidPolicy())
    rows = _tei(home)
    assert {p: (r["status"], r["reason"]) for p, r in rows.items()} == {
        GOOD: ("skipped", SKIP_REASON),
        FAILED: ("pending", "grobid_unavailable"),
        NONE: ("pending", "grobid_unavailable"),
        SHORT: ("pending", "grobid_unavailable"),
    }
    assert summary["status"] == {"skipped": 1, "pending": 3} and summary["needs_grobid"] == 3


def test_a_cached_tei_is_parsed_whatever_the_policy(day, pairs, shared_landing):
    home, landing, shas, _ = day
    by_name = {p.name.removeprefix("landing/"): p for p in pairs}
    (landing / "tei" / f"{GOOD}.tei.xml").write_bytes(by_name[GOOD].tei.read_bytes())
    summary = _run(home, landing, dead_url(), GrobidPolicy())
    row = _tei(home)[GOOD]
    assert (row["status"], row["source"]) == ("cached", "landing") and summary["wanted"][SKIP_REASON] == 1
    pdf_parses_day(home, DAY)
    parse = Store(home).read_partition("pdf_parses", DAY).filter(pl.col("id") == GOOD).row(0, named=True)
    assert parse["status"] == "ok" and parse["n_bib_entries"] > 10


def test_the_sample_sends_a_good_parse_too(day, pairs):
    home, landing, shas, _ = day
    with FakeGrobid.from_pairs(pairs, slots=2) as server:
        summary = _run(home, landing, server.url, GrobidPolicy(sample=1.0))
        assert shas[GOOD] in server.stats.by_sha
    assert _tei(home)[GOOD]["status"] == "ok" and summary["wanted"]["sample"] == 1


def _versions() -> dict[str, str]:
    return {a: code_version(a) for a in ("grobid_tei", "pdf_parses")}


def test_switching_policy_rederives_nothing_already_right(day, pairs):
    home, landing, shas, _ = day
    store = Store(home)
    with FakeGrobid.from_pairs(pairs, slots=2) as server:
        _run(home, landing, server.url, GrobidPolicy("all"))  # every PDF sent
        pdf_parses_day(home, DAY)
        first, fingerprint = _tei(home), store.fingerprint("grobid_tei", DAY)
        sent = server.stats.fulltext
        _run(home, landing, server.url, GrobidPolicy())  # fallback: their TEI is cached now
        assert server.stats.fulltext == sent
    assert _tei(home) == first and store.fingerprint("grobid_tei", DAY) == fingerprint
    assert stale_partitions(Store(home), _versions()) == []  # pdf_parses & co. stay as they are


def test_switching_to_all_sends_only_what_fallback_skipped(day, pairs):
    home, landing, shas, _ = day
    with FakeGrobid.from_pairs(pairs, slots=2) as server:
        _run(home, landing, server.url, GrobidPolicy())
        before = _tei(home)
        _run(home, landing, server.url, GrobidPolicy("all"))
        assert server.stats.by_sha[shas[GOOD]] == 1 and all(n == 1 for n in server.stats.by_sha.values())
    after = _tei(home)
    assert after[GOOD]["status"] == "ok"
    assert all(after[p] == before[p] for p in (FAILED, NONE, SHORT))  # the rows already right stay


def test_a_rederived_latex_parse_that_fails_sends_the_pdf_on_the_next_run(day, pairs):
    home, landing, shas, latex = day
    with FakeGrobid.from_pairs(pairs, slots=2) as server:
        _run(home, landing, server.url, GrobidPolicy())
        assert _tei(home)[GOOD]["status"] == "skipped"
        write_latex(Store(home), latex)  # re-derived to the same rows: nothing is stale
        assert stale_partitions(Store(home), _versions()) == []
        failed = parse_row(GOOD, "latex", status="failed", reason="parse_error: RecursionError")
        write_latex(Store(home), {**latex, GOOD: failed})  # a new parser version fails on it
        stale = stale_partitions(Store(home), _versions())
        assert [(s.asset, s.day, s.detail) for s in stale] == [("grobid_tei", DAY, "latex_parses changed")]
        _run(home, landing, server.url, GrobidPolicy())  # what `make rederive` runs next
        assert server.stats.by_sha[shas[GOOD]] == 1
    assert _tei(home)[GOOD]["status"] == "ok"


def test_fallback_needs_the_days_latex_parses(tmp_path, pairs):
    home = tmp_path / "data"
    _day(home, pairs, {GOOD: None})
    (Store(home).partition_dir("latex_parses", DAY) / "part-0.parquet").unlink()
    with pytest.raises(FileNotFoundError, match="latex_parses has no partition"):
        _run(home, tmp_path, dead_url(), GrobidPolicy())
    assert _run(home, tmp_path, dead_url(), GrobidPolicy("all"))["status"] == {"pending": 1}


def test_the_resource_reads_the_policy_from_the_environment(monkeypatch):
    from resources.grobid import GrobidResource

    monkeypatch.delenv("CORPUS_GROBID", raising=False)
    monkeypatch.delenv("CORPUS_GROBID_SAMPLE", raising=False)
    assert GrobidResource().grobid_policy() == GrobidPolicy("fallback", 0.0)
    monkeypatch.setenv("CORPUS_GROBID", "all")
    monkeypatch.setenv("CORPUS_GROBID_SAMPLE", "0.05")
    assert GrobidResource().grobid_policy() == GrobidPolicy("all", 0.05)
    monkeypatch.setenv("CORPUS_GROBID", "most")
    with pytest.raises(Exception, match="CORPUS_GROBID='most'"):
        GrobidResource()
