"""The landing zone read without trusting it: every record a row or a failure row, nothing outside read.

One test per defect class of issue 17 on the metadata side (landing reads, whole-day
crashes, vanishing records); the hostile suite (test_hostile_inputs.py) runs them all
through Dagster at once. Real pages from ../shared are used where a real file shows it.
"""

from __future__ import annotations

import gzip
import os
import signal
import time
from pathlib import Path

import polars as pl
import pytest
from hostile import opened_under, page, record, sparse, utf16, without_read_override

from corpus.ingest.landing import EVERY_DAY, LandingZone
from corpus.ingest.landing_files import LandingReader, LandingRefused
from corpus.ingest.oai import NotOaiReply, read_page, scan_datestamps
from corpus.ingest.records import failures_frame

DAY = "2025-01-15"


@pytest.fixture
def zone(tmp_path) -> Path:
    (tmp_path / "landing" / "oai").mkdir(parents=True)
    return tmp_path / "landing"


@pytest.fixture
def outside(tmp_path) -> Path:
    """A directory next to the landing zone holding a page of its own (what must never be read)."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.xml").write_text(page([record("2501.99999", title="SECRET")]))
    return out


@pytest.fixture(autouse=True)
def _no_hang():
    """Every test here ends within 60 s even if a FIFO were opened blocking."""

    def _raise(*_):
        raise TimeoutError("test took more than 60 s (a blocking open?)")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _read(zone: Path, *days: str, cache: Path | None = None):
    return LandingZone(zone).read_days(list(days or [DAY]), cache=cache)


def _ids(found, day: str = DAY) -> list[str]:
    return [r.id for r in found.records[day]]


def _reasons(found) -> list[str]:
    return [f"{f.identifier} {f.reason}" for f in found.failures]


# ------------------------------------------------------------------------- landing reads


def test_symlink_out_of_the_landing_zone_is_refused_and_not_read(zone, outside):
    (zone / "oai" / "a.xml").write_text(page([record("2501.00001")]))
    (zone / "oai" / "b.xml").symlink_to(outside / "secret.xml")
    with opened_under(outside) as opened:
        found = _read(zone)
    assert not opened, opened
    assert _ids(found) == ["2501.00001"]  # the outside page's record is not in
    (failure,) = found.failures
    assert "b.xml" in failure.source and "outside the landing zone" in failure.reason
    assert failure.datestamp == DAY  # nothing to place it by: every day read says so


def test_symlink_inside_the_landing_zone_is_allowed(zone):
    mirror = zone / "mirror"
    mirror.mkdir()
    (mirror / "p.xml").write_text(page([record("2501.00002")]))
    (zone / "oai" / "p.xml").symlink_to(Path("..") / "mirror" / "p.xml")
    found = _read(zone)
    assert _ids(found) == ["2501.00002"] and not found.failures


def test_folder_symlinked_by_the_operator_is_allowed(tmp_path):
    """``landing/oai -> /mnt/bulk/oai``: the folder is the operator's choice, its files are read."""
    bulk = tmp_path / "bulk_oai"
    bulk.mkdir()
    (bulk / "p.xml").write_text(page([record("2501.00003")]))
    (tmp_path / "landing").mkdir()
    (tmp_path / "landing" / "oai").symlink_to(bulk)
    assert _ids(_read(tmp_path / "landing")) == ["2501.00003"]


@pytest.mark.parametrize("kind", ["fifo", "directory", "dangling", "device"])
def test_special_files_are_refused_with_a_reason(zone, kind):
    import stat

    target = zone / "oai" / f"{DAY}_{kind}.xml"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    elif kind == "device":
        try:  # a copy of /dev/zero: endless bytes if it were read
            os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(1, 5))
        except PermissionError:
            pytest.skip("creating a device node needs CAP_MKNOD")
    else:
        target.symlink_to(zone / "nowhere.xml")
    start = time.monotonic()
    found = _read(zone)
    assert time.monotonic() - start < 10
    (failure,) = found.failures
    expected = {"fifo": "a FIFO", "directory": "a directory", "dangling": "No such file", "device": "device"}[
        kind
    ]
    assert expected in failure.reason and failure.datestamp == DAY  # placed by its file name


def test_size_cap_applies_before_reading(zone):
    sparse(zone / "oai" / f"{DAY}.xml", 1 << 30)  # 8 KB on disk, 1 GiB to read
    start = time.monotonic()
    found = _read(zone)
    assert time.monotonic() - start < 5
    (failure,) = found.failures
    assert "1073741824 bytes is over the oai cap" in failure.reason


def test_reader_rules_directly(zone, outside):
    reader = LandingReader(zone)
    (zone / "pdf").mkdir()
    (zone / "pdf" / "x.pdf").symlink_to(outside / "secret.xml")
    with pytest.raises(LandingRefused, match="outside the landing zone"), opened_under(outside) as opened:
        reader.read_bytes(zone / "pdf" / "x.pdf", "pdf")
    assert not opened
    (zone / "pdf" / "y.pdf").write_bytes(b"%PDF-1.4 ok")
    assert reader.read_bytes(zone / "pdf" / "y.pdf", "pdf") == b"%PDF-1.4 ok"


# ------------------------------------------------------------------------- whole-day crashes


def test_unreadable_page_of_another_day_does_not_crash_the_day(zone):
    (zone / "oai" / f"{DAY}.xml").write_text(page([record("2501.00004")]))
    other = zone / "oai" / "2025-01-16.xml"
    other.write_text(page([record("2501.00005", datestamp="2025-01-16")], day="2025-01-16"))
    other.chmod(0)
    with without_read_override():
        found = _read(zone)
        other_day = _read(zone, "2025-01-16")
    assert _ids(found) == ["2501.00004"] and not found.failures
    (failure,) = other_day.failures  # said on its own day, by its file name
    assert "2025-01-16.xml" in failure.source and "Permission denied" in failure.reason


def test_unreadable_oai_folder_is_a_failure_row_on_every_day(zone):
    (zone / "oai" / f"{DAY}.xml").write_text(page([record("2501.00006")]))
    (zone / "oai").chmod(0)
    try:
        with without_read_override():
            found = _read(zone, DAY, "2025-01-16")
    finally:
        (zone / "oai").chmod(0o755)
    assert {f.datestamp for f in found.failures} == {DAY, "2025-01-16"}
    assert all("cannot list" in f.reason for f in found.failures)


def test_non_utf8_file_name_does_not_crash_the_failure_table(zone):
    name = os.fsencode(zone / "oai") + b"/p\xff\xfe.xml"
    with open(name, "wb") as fh:
        fh.write(page([record("2501.00007"), record("2501.00008", title="")]).encode())
    found = _read(zone)
    assert _ids(found) == ["2501.00007"]
    (failure,) = found.failures
    assert failure.source.endswith("p\\xff\\xfe.xml") and failure.reason == "missing <title>"
    assert failures_frame(found.failures).height == 1  # was a UnicodeEncodeError


# ------------------------------------------------------------------------- records that vanished


def test_utf16_page_is_read(zone):
    (zone / "oai" / "u.xml").write_bytes(utf16(page([record("2501.00009", title="Ünïcode title")])))
    found = _read(zone)
    assert [(r.id, r.title) for r in found.records[DAY]] == [("2501.00009", "Ünïcode title")]
    assert not found.failures


def test_declared_latin1_page_is_transcoded_not_mangled(zone):
    text = page([record("2501.00010", title="Café")], decl='encoding="ISO-8859-1"')
    (zone / "oai" / "l.xml").write_bytes(text.encode("latin-1"))
    assert [r.title for r in _read(zone).records[DAY]] == ["Café"]


def test_gzip_page_saved_as_xml_is_read(shared_landing, zone):
    real = (shared_landing / "oai" / "2007-04-01.xml").read_bytes()
    (zone / "oai" / "2007-04-01.xml").write_bytes(gzip.compress(real))
    found = _read(zone, "2007-04-01")
    assert len(found.records["2007-04-01"]) == 4 and not found.failures


def test_gzip_bomb_page_is_refused(zone, monkeypatch):
    import corpus.ingest.oai as oai

    monkeypatch.setattr(oai, "MAX_PAGE_BYTES", 1 << 20)
    (zone / "oai" / f"{DAY}.xml").write_bytes(gzip.compress(b"<" + b" " * (2 << 20)))
    (failure,) = _read(zone).failures
    assert "larger than" in failure.reason


def test_record_without_datestamp_is_a_failure_row_on_the_harvest_day(zone):
    (zone / "oai" / "h.xml").write_text(page([record("2501.00011", datestamp=None)]))
    found = _read(zone)
    (failure,) = found.failures
    assert failure.identifier.endswith("2501.00011") and failure.reason == "missing <datestamp>"
    assert failure.datestamp == DAY  # the one-day harvest's from= / until=


@pytest.mark.parametrize(
    ("stamp", "reason"),
    [("2099-01-01", "in the future"), ("2025-01-00", "invalid <datestamp>"), ("1900-01-01", "before arXiv")],
)
def test_impossible_datestamps_are_failure_rows(zone, stamp, reason):
    (zone / "oai" / "f.xml").write_text(page([record("2501.00012", datestamp=stamp), record("2501.00013")]))
    found = _read(zone)
    assert _ids(found) == ["2501.00013"]
    (failure,) = found.failures
    assert failure.identifier.endswith("2501.00012") and reason in failure.reason
    assert failure.datestamp == DAY


def test_unplaceable_record_goes_to_every_day_read(zone):
    """No request dates, no day in the name, no other datestamp: said on every day read."""
    (zone / "oai" / "x.xml").write_text(page([record("2501.00014", datestamp="2099-01-01")], day=None))
    assert LandingZone(zone).datestamp_index() == {"x.xml": {EVERY_DAY: 1}}
    found = _read(zone, DAY, "2025-01-16")
    assert sorted(f.datestamp for f in found.failures) == [DAY, "2025-01-16"]


def test_control_character_loses_only_its_record(zone):
    bad = record("2501.00016", title="Bad \x01 title")
    (zone / "oai" / "c.xml").write_text(page([record("2501.00015"), bad, record("2501.00017")]))
    found = _read(zone)
    assert _ids(found) == ["2501.00015", "2501.00017"]  # record 3 used to vanish with record 2
    (failure,) = found.failures
    assert failure.identifier.endswith("2501.00016") and "not well-formed" in failure.reason
    assert failure.datestamp == DAY


def test_unclosed_record_in_the_middle_loses_only_itself(zone):
    cut = record("2501.00019").replace("</record>", "")
    (zone / "oai" / "m.xml").write_text(page([record("2501.00018"), cut, record("2501.00020")]))
    found = _read(zone)
    assert _ids(found) == ["2501.00018", "2501.00020"]
    (failure,) = found.failures
    assert failure.identifier.endswith("2501.00019")


def test_non_ascii_digit_id_is_a_failure_row(zone):
    (zone / "oai" / "d.xml").write_text(
        page([record("2501.9\u0661\u0662\u0663\u0664"), record("2501.00021")])
    )
    found = _read(zone)
    assert _ids(found) == ["2501.00021"]
    (failure,) = found.failures
    assert "invalid arXiv id" in failure.reason


# ------------------------------------------------------------------------- not OAI-PMH (issue 16, item 9)


def test_tei_file_in_oai_is_an_error_naming_the_file(shared_landing, zone):
    tei = (shared_landing / "tei" / "1706.03762.tei.xml").read_bytes()
    with pytest.raises(NotOaiReply, match=r"1706\.03762\.tei\.xml.*root element is <TEI>"):
        read_page(tei, "1706.03762.tei.xml")
    (zone / "oai" / f"{DAY}.xml").write_bytes(tei)
    (failure,) = _read(zone).failures
    assert "not an OAI-PMH reply" in failure.reason and failure.source == f"oai/{DAY}.xml"


def test_xhtml_error_page_is_an_error_naming_the_file(zone):
    xhtml = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        b"<head><title>503 Service Unavailable</title></head><body>Try later</body></html>"
    )
    with pytest.raises(NotOaiReply, match="err.xml.*<html>"):
        read_page(xhtml, "err.xml")
    (zone / "oai" / "err.xml").write_bytes(xhtml)
    found = _read(zone)
    assert len(found.failures) == 1 and found.failures[0].source == "oai/err.xml"


def test_index_is_cached_and_sees_changes(zone, tmp_path):
    cache = tmp_path / "index.json"
    path = zone / "oai" / "a.xml"
    path.write_text(page([record("2501.00022")]))
    assert LandingZone(zone).datestamps(cache=cache) == {DAY: 1}
    path.write_text(page([record("2501.00022"), record("2501.00023", datestamp="2025-01-16")]))
    assert LandingZone(zone).datestamps(cache=cache) == {DAY: 1, "2025-01-16": 1}
    assert scan_datestamps(path.read_bytes()) == {DAY: 1, "2025-01-16": 1}


def test_failures_frame_is_plain_utf8(zone):
    frame = failures_frame(_read(zone).failures)
    assert frame.schema["source"] == pl.Utf8


# ------------------------------------------------------------------------- PDFs and e-prints


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("symlink_out", "outside the landing zone"),
        ("fifo", "a FIFO"),
        ("directory", "a directory"),
        ("sparse", "over the pdf cap"),
        ("unreadable", "Permission denied"),
    ],
)
def test_refused_pdf_is_a_failed_row_and_nothing_is_copied(tmp_path, outside, kind, why):
    from corpus.ingest.fetch import FAILED, Fetcher
    from corpus.store import BlobStore

    landing = tmp_path / "landing"
    (landing / "pdf").mkdir(parents=True)
    target = landing / "pdf" / "2501.00030.pdf"
    secret = outside / "passwd"
    secret.write_bytes(b"%PDF-1.4 root:x:0:0:SECRET")
    if kind == "symlink_out":
        target.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    elif kind == "sparse":
        sparse(target, 1 << 30)
    else:
        target.write_bytes(b"%PDF-1.4 fine")
        target.chmod(0)
    blobs = BlobStore(tmp_path / "data" / "blobs")
    with opened_under(outside) as opened, without_read_override(), Fetcher(blobs, landing) as fetcher:
        result = fetcher.fetch("2501.00030", "pdf")
    assert not opened
    assert result.status == FAILED and why in result.reason and result.sha256 is None
    assert not [p for p in (tmp_path / "data").rglob("*") if p.is_file() and p.name != ".lock"]


def test_refused_eprint_is_a_failed_row(tmp_path, outside):
    from corpus.ingest.fetch import FAILED, Fetcher
    from corpus.store import BlobStore

    landing = tmp_path / "landing"
    (landing / "src").mkdir(parents=True)
    (outside / "x.tar.gz").write_bytes(b"\x1f\x8b secret")
    (landing / "src" / "2501.00031.tar.gz").symlink_to(outside / "x.tar.gz")
    with opened_under(outside) as opened, Fetcher(BlobStore(tmp_path / "blobs"), landing) as fetcher:
        result = fetcher.fetch("2501.00031", "eprint")
    assert not opened and result.status == FAILED and "outside the landing zone" in result.reason


# ------------------------------------------------------------------------- landing TEI


def _bad_teis(real_tei: bytes) -> dict[str, tuple[bytes | None, str]]:
    """name -> (TEI bytes or None for a special file, what the rejection must say)."""
    tei_ns = b'<TEI xmlns="http://www.tei-c.org/ns/1.0">'
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY a "aaaaaaaaaa">'
        + b"".join(
            b'<!ENTITY a%d "%s">' % (i, b"&a;" * 10 if i == 1 else b"&a%d;" % (i - 1) * 10)
            for i in range(1, 9)
        )
        + b"]>"
        + tei_ns
        + b"<text><body><p>&a8;</p></body></text></TEI>"
    )
    return {
        "malformed": (real_tei[: len(real_tei) // 2], "not XML"),
        "entity_bomb": (bomb, "DOCTYPE"),
        "deep_nesting": (
            tei_ns + b"<text><body>" + b"<div>" * 10000 + b"</div>" * 10000 + b"</body></text></TEI>",
            "not XML",
        ),
        "html_root": (b"<html><body><p>Not TEI</p></body></html>", "root is <html>"),
        "duplicate_xml_id": (
            tei_ns + b'<text><body><p xml:id="x">a</p><p xml:id="x">b</p></body></text></TEI>',
            "not XML",
        ),
        "empty": (b"", "empty body"),
        "directory": (None, "a directory"),
        "fifo": (None, "a FIFO"),
    }


def test_bad_landing_tei_is_said_on_the_row_and_sent_to_grobid(tmp_path, shared_data, shared_landing):
    from grobid_server import FakeGrobid, recorded_pairs

    from corpus.parse.grobid import GrobidClient, PdfItem, TeiCache, collect_tei
    from corpus.store import BlobStore

    real_pdf = shared_landing / "pdf" / "1706.03762.pdf"
    bad = _bad_teis((shared_landing / "tei" / "1706.03762.tei.xml").read_bytes())
    landing = tmp_path / "landing"
    (landing / "tei").mkdir(parents=True)
    items = []
    for name, (data, _) in bad.items():
        hint = landing / "tei" / f"{name}.tei.xml"
        if name == "directory":
            hint.mkdir()
        elif name == "fifo":
            os.mkfifo(hint)
        else:
            hint.write_bytes(data)
        items.append(PdfItem(key=name, pdf=real_pdf, tei_hint=hint))

    def rows(client) -> dict:
        cache = TeiCache(BlobStore(tmp_path / f"blobs-{client is None}"))
        return {r.key: r for r in collect_tei(items, cache, client)}

    down = rows(None)  # no Grobid: pending, and the row says the landing TEI was rejected and why
    for name, (_, why) in bad.items():
        row = down[name]
        assert (row.status, row.reason) == ("pending", "tei_rejected"), name
        assert "rejected" in row.detail and why in row.detail, (name, row.detail)
    pairs = recorded_pairs(shared_data, shared_landing)
    with FakeGrobid.from_pairs(pairs, slots=2) as server, GrobidClient(server.url, concurrency=2) as client:
        up = rows(client)  # Grobid up: it parses the PDF instead (once: one PDF for all items)
        assert server.stats.fulltext == 1
    for name in bad:
        assert (up[name].status, up[name].source) == ("ok", "grobid"), name
        assert "rejected" in up[name].detail


def test_failure_rows_from_any_reader_are_valid_utf8():
    """A source name with undecodable bytes (os.fsdecode surrogates) never breaks the table."""
    from corpus.ingest.records import FailedRecord

    name = os.fsdecode(b"/abs/hep-th/99\xff01001.abs")
    row = FailedRecord(source=name, position=0, reason=f"bad {name}")
    assert row.source == "/abs/hep-th/99\\xff01001.abs" and failures_frame([row]).height == 1
