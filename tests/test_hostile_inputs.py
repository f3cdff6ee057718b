"""The hostile-input suite: one landing zone holding 70 hostile inputs, one Dagster run per day.

Families: OAI pages, landing names and special files, permissions, PDFs, Grobid TEI,
e-prints. The daily assets are materialised for two days in a subprocess -- under
``setpriv`` without the read-override capabilities when the tests run as root, so
mode-000 files really are unreadable -- with an audit hook (``sitecustomize``) in every
Python process of the run (the run and its Pipes workers) recording each file opened
under a directory next to the landing zone that symlinks and entities point into.

Each case asserts what its input now yields; every case also gets the suite-wide
assertions: the runs complete, every record is a row or a failure row with a reason,
every paper has a row in every file and parse table, and nothing outside the landing
zone was opened or reached the data.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pytest
from grobid_server import dead_url
from hostile import (
    audit_env,
    gz,
    member,
    minimal_pdf,
    page,
    record,
    sparse,
    tar_gz,
    tex,
    unprivileged_prefix,
    utf16,
)

D, D2 = "2025-01-15", "2025-01-16"
REPO = Path(__file__).resolve().parents[1]
CANARY = f"CANARY-{uuid.uuid4().hex}"
GIB = 1 << 30

DRIVER = """
import json, sys
import dagster as dg
from corpus_assets.definitions import defs
from resources.arxiv import ArxivResource
from resources.grobid import GrobidResource
from resources.store import CorpusStore

home, landing, grobid_url, out, *days = sys.argv[1:]
resources = {**defs.resources, "corpus": CorpusStore(home=home, landing=landing),
             "arxiv": ArxivResource(source="landing"), "grobid": GrobidResource(base_url=grobid_url)}
daily = [a for a in defs.assets if a.partitions_def is not None]
results = {}
quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
with dg.instance_for_test() as instance:
    for day in days:
        r = dg.materialize(daily, partition_key=day, resources=resources, instance=instance,
                           run_config=quiet, raise_on_error=False)
        checks = {c.check_name: c.passed for c in r.get_asset_check_evaluations()}
        failed = [e.step_key for e in r.all_events if e.is_step_failure]
        errors = [str(e.event_specific_data.error.cause.message if e.event_specific_data.error.cause else e.event_specific_data.error.message)[-2000:] for e in r.all_events if e.is_step_failure]
        results[day] = {"success": r.success, "checks": checks, "failed_steps": failed, "errors": errors}
json.dump(results, open(out, "w"))
"""


# ------------------------------------------------------------------------- building the landing zone


@dataclass
class Zone:
    """The landing zone under construction, and what lies outside it."""

    root: Path
    outside: Path
    normal: list[str] = field(default_factory=list)  # records for the plain page of day D
    _next: int = 1

    def new_id(self) -> str:
        pid = f"2501.{self._next:05d}"
        self._next += 1
        return pid

    def paper(self) -> str:
        """A paper with a normal metadata record (its files are the case)."""
        pid = self.new_id()
        self.normal.append(record(pid))
        return pid

    def file(self, folder: str, name: str | bytes, data: bytes | str | None = None) -> Path:
        base = os.fsencode(self.root / folder)
        path = Path(os.fsdecode(base + b"/" + (name if isinstance(name, bytes) else name.encode())))
        if data is not None:
            path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def secret(self, name: str, data: bytes | None = None) -> Path:
        """A file outside the landing zone that must never be opened."""
        path = self.outside / name
        path.write_bytes(data if data is not None else f"%PDF-1.4\n{CANARY}\n".encode())
        return path


@dataclass
class Tables:
    home: Path
    results: dict
    audit: list[str]

    def read(self, asset: str, day: str = D) -> pl.DataFrame:
        return pl.read_parquet(self.home / asset / f"date={day}" / "part-0.parquet")

    def ids(self, asset: str, day: str = D) -> set[str]:
        return set(self.read(asset, day)["id"])

    def row(self, asset: str, pid: str, day: str = D) -> dict:
        rows = self.read(asset, day).filter(pl.col("id") == pid)
        assert rows.height == 1, f"{asset} has {rows.height} rows for {pid}"
        return rows.row(0, named=True)

    def failures(self, day: str = D) -> pl.DataFrame:
        return self.read("arxiv_metadata_failures", day)

    def is_row(self, pid: str, day: str = D) -> dict:
        return self.row("arxiv_metadata", pid, day)

    def failed(self, pid: str, reason: str, day: str = D) -> dict:
        rows = self.failures(day).filter(pl.col("identifier").str.ends_with(pid))
        assert rows.height >= 1, f"no failure row for {pid} on {day}"
        row = rows.row(0, named=True)
        assert reason in row["reason"], (pid, row["reason"])
        assert pid not in self.ids("arxiv_metadata", day)
        return row

    def page_failed(self, name: str, reason: str, day: str = D) -> dict:
        rows = self.failures(day).filter(
            (pl.col("position") == -1) & pl.col("source").str.contains(name, literal=True)
        )
        assert rows.height == 1, f"{rows.height} page failure rows for {name} on {day}"
        row = rows.row(0, named=True)
        assert reason in row["reason"], (name, row["reason"])
        return row

    def absent(self, pid: str) -> None:
        for day in (D, D2):
            assert pid not in self.ids("arxiv_metadata", day)


Check = Callable[[Tables], object]
CASES: dict[str, tuple[str, Callable[[Zone], Check]]] = {}


def case(family: str):
    def register(build: Callable[[Zone], Check]):
        CASES[build.__name__] = (family, build)
        return build

    return register


# ------------------------------------------------------------------------- OAI pages


@case("oai")
def oai_utf16_with_bom(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "u16.xml", utf16(page([record(pid, title="Ünïcödé")])))
    return lambda t: t.is_row(pid)["title"] == "Ünïcödé" or pytest.fail("title")


@case("oai")
def oai_utf16_big_endian_without_bom(z: Zone) -> Check:
    pid = z.new_id()
    z.file(
        "oai",
        "u16be.xml",
        page([record(pid)]).replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16-be"),
    )
    return lambda t: t.is_row(pid)


@case("oai")
def oai_declared_latin1(z: Zone) -> Check:
    pid = z.new_id()
    z.file(
        "oai", "latin1.xml", page([record(pid, title="Café")], decl='encoding="ISO-8859-1"').encode("latin-1")
    )
    return lambda t: t.is_row(pid)["title"] == "Café" or pytest.fail("title")


@case("oai")
def oai_gzip_saved_as_xml(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "gzipped.xml", gz(page([record(pid)]).encode()))
    return lambda t: t.is_row(pid)


@case("oai")
def oai_gzip_truncated(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", f"{D}_gzcut.xml", gz(page([record(pid)]).encode())[:60])
    return lambda t: (t.page_failed("gzcut.xml", "does not decompress"), t.absent(pid))


@case("oai")
def oai_record_without_datestamp(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "nostamp.xml", page([record(pid, datestamp=None)]))
    return lambda t: t.failed(pid, "missing <datestamp>")


@case("oai")
def oai_datestamp_in_2099(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "future.xml", page([record(pid, datestamp="2099-01-01")]))
    return lambda t: t.failed(pid, "in the future")


@case("oai")
def oai_datestamp_day_zero(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "dayzero.xml", page([record(pid, datestamp="2025-01-00")]))
    return lambda t: t.failed(pid, "invalid <datestamp>")


@case("oai")
def oai_control_character_in_record_2(z: Zone) -> Check:
    a, b, c = z.new_id(), z.new_id(), z.new_id()
    z.file("oai", "control.xml", page([record(a), record(b, title="x \x01 y"), record(c)]))
    return lambda t: (t.is_row(a), t.failed(b, "not well-formed"), t.is_row(c))


@case("oai")
def oai_unclosed_record_in_the_middle(z: Zone) -> Check:
    a, b, c = z.new_id(), z.new_id(), z.new_id()
    z.file("oai", "unclosed.xml", page([record(a), record(b).replace("</record>", ""), record(c)]))
    return lambda t: (t.is_row(a), t.failed(b, "cut off"), t.is_row(c))


@case("oai")
def oai_truncated_page(z: Zone) -> Check:
    a, b = z.new_id(), z.new_id()
    text = page([record(a), record(b)])
    z.file("oai", "truncated.xml", text[: text.index(b) + 40])
    return lambda t: (t.is_row(a), t.failed(b, "cut off"), t.page_failed("truncated.xml", "not well-formed"))


@case("oai")
def oai_entity_bomb(z: Zone) -> Check:
    pid = z.new_id()
    bomb = '<!DOCTYPE lolz [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    text = page([record(pid, title="&b;")]).replace("?>\n", "?>\n" + bomb, 1)
    z.file("oai", f"{D}_bomb.xml", text)
    return lambda t: (t.page_failed("bomb.xml", "DOCTYPE"), t.absent(pid))


@case("oai")
def oai_external_entity_to_outside(z: Zone) -> Check:
    pid = z.new_id()
    secret = z.secret("xxe.txt", CANARY.encode())
    xxe = f'<!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'
    z.file("oai", f"{D}_xxe.xml", page([record(pid, title="&x;")]).replace("?>\n", "?>\n" + xxe, 1))
    return lambda t: (t.page_failed("xxe.xml", "DOCTYPE"), t.absent(pid))


@case("oai")
def oai_tei_file_in_oai(z: Zone) -> Check:
    z.file(
        "oai", f"{D}_tei.xml", b'<?xml version="1.0"?><TEI xmlns="http://www.tei-c.org/ns/1.0"><text/></TEI>'
    )
    return lambda t: t.page_failed("_tei.xml", "root element is <TEI>")


@case("oai")
def oai_xhtml_error_page(z: Zone) -> Check:
    z.file(
        "oai",
        f"{D}_503.xml",
        b'<html xmlns="http://www.w3.org/1999/xhtml"><body>503 Service Unavailable</body></html>',
    )
    return lambda t: t.page_failed("_503.xml", "root element is <html>")


@case("oai")
def oai_empty_file(z: Zone) -> Check:
    z.file("oai", f"{D}_empty.xml", b"")
    return lambda t: t.page_failed("_empty.xml", "not an OAI-PMH reply")


@case("oai")
def oai_binary_garbage(z: Zone) -> Check:
    z.file("oai", f"{D}_garbage.xml", bytes(range(256)) * 8)
    return lambda t: t.page_failed("_garbage.xml", "not an OAI-PMH reply")


@case("oai")
def oai_error_reply(z: Zone) -> Check:
    text = page([]).replace("<ListRecords></ListRecords>", '<error code="badArgument">bad from</error>')
    z.file("oai", "error.xml", text)
    return lambda t: t.page_failed("error.xml", "badArgument")


@case("oai")
def oai_id_with_arabic_indic_digits(z: Zone) -> Check:
    bad = "2501.9\u0661\u0662\u0663\u0664"
    z.file("oai", "digits.xml", page([record(bad)]))
    return lambda t: t.failed(bad, "invalid arXiv id")


@case("oai")
def oai_unknown_metadata_format(z: Zone) -> Check:
    pid = z.new_id()
    text = page([record(pid)])
    start, end = text.index("<arXiv "), text.index("</arXiv>") + len("</arXiv>")
    z.file("oai", "mods.xml", text[:start] + "<mods><title>x</title></mods>" + text[end:])
    return lambda t: t.failed(pid, "unknown metadata format")


@case("oai")
def oai_record_without_title(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "notitle.xml", page([record(pid, title="")]))
    return lambda t: t.failed(pid, "missing <title>")


@case("oai")
def oai_same_id_twice(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "dup-a.xml", page([record(pid, title="Old")]))
    z.file("oai", "dup-b.xml", page([record(pid, title="New")]))
    return lambda t: t.is_row(pid)["title"] == "New" or pytest.fail("the later file wins")


@case("oai")
def oai_deleted_record(z: Zone) -> Check:
    pid = z.new_id()
    deleted = f'<record><header status="deleted"><identifier>oai:arXiv.org:{pid}</identifier><datestamp>{D}</datestamp></header></record>'
    z.file("oai", "deleted.xml", page([deleted]))
    return lambda t: t.is_row(pid)["deleted"] or pytest.fail("deleted")


# ------------------------------------------------------------------------- landing names, special files


@case("names")
def name_not_utf8(z: Zone) -> Check:
    a, b = z.new_id(), z.new_id()
    z.file("oai", b"\xff\xfe-page.xml", page([record(a), record(b, title="")]).encode())
    return lambda t: (t.is_row(a), t.failed(b, "missing <title>")["source"].endswith("\\xff\\xfe-page.xml"))


@case("names")
def name_with_spaces_and_accents(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "pàge one (copy).xml", page([record(pid)]))
    return lambda t: t.is_row(pid)


@case("names")
def name_oai_symlink_out(z: Zone) -> Check:
    pid = z.new_id()
    target = z.secret("page.xml", page([record(pid, title=CANARY)]).encode())
    z.file("oai", "linked-out.xml").symlink_to(target)
    return lambda t: (
        t.page_failed("linked-out.xml", "outside the landing zone"),
        t.page_failed("linked-out.xml", "outside the landing zone", D2),  # nothing places it: every day
        t.absent(pid),
    )


@case("names")
def name_oai_symlink_inside(z: Zone) -> Check:
    pid = z.new_id()
    (z.root / "mirror").mkdir(exist_ok=True)
    (z.root / "mirror" / "p.xml").write_text(page([record(pid)]))
    z.file("oai", "linked-in.xml").symlink_to(Path("..") / "mirror" / "p.xml")
    return lambda t: t.is_row(pid)


@case("names")
def name_oai_fifo(z: Zone) -> Check:
    os.mkfifo(z.file("oai", f"{D}_fifo.xml"))
    return lambda t: t.page_failed("_fifo.xml", "a FIFO")


@case("names")
def name_oai_directory(z: Zone) -> Check:
    z.file("oai", f"{D}_dir.xml").mkdir()
    return lambda t: t.page_failed("_dir.xml", "a directory")


@case("names")
def name_oai_dangling_symlink(z: Zone) -> Check:
    z.file("oai", f"{D}_dangling.xml").symlink_to(z.root / "oai" / "nowhere")
    return lambda t: t.page_failed("_dangling.xml", "No such file")


@case("names")
def name_oai_sparse_1gib(z: Zone) -> Check:
    sparse(z.file("oai", f"{D}_sparse.xml"), GIB)
    return lambda t: t.page_failed("_sparse.xml", "over the oai cap")


@case("names")
def name_pdf_symlink_to_outside(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf").symlink_to(z.secret("passwd"))
    return lambda t: _pdf(t, pid, "failed", "failed", "outside the landing zone")


@case("names")
def name_pdf_with_version_suffix(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}v2.pdf", minimal_pdf(note=pid))
    return lambda t: _pdf(t, pid, "missing", "missing", "not in the landing zone")


# ------------------------------------------------------------------------- permissions


@case("permissions")
def perm_oai_page_of_another_day(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", f"{D2}.xml", page([record(pid, datestamp=D2)], day=D2)).chmod(0)
    return lambda t: (t.page_failed(f"{D2}.xml", "Permission denied", D2), t.absent(pid))


@case("permissions")
def perm_oai_page_without_a_day(z: Zone) -> Check:
    pid = z.new_id()
    z.file("oai", "undated.xml", page([record(pid)], day=None)).chmod(0)
    return lambda t: (
        t.page_failed("undated.xml", "Permission denied"),
        t.page_failed("undated.xml", "Permission denied", D2),
    )


@case("permissions")
def perm_pdf(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", minimal_pdf(note=pid)).chmod(0)
    return lambda t: _pdf(t, pid, "failed", "failed", "Permission denied")


@case("permissions")
def perm_tei(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", minimal_pdf(note=pid))
    z.file("tei", f"{pid}.tei.xml", b"<TEI/>").chmod(0)
    return lambda t: _tei_rejected(t, pid, "Permission denied")


@case("permissions")
def perm_eprint(z: Zone) -> Check:
    pid = z.paper()
    z.file("src", f"{pid}.tar.gz", tar_gz([(member("main.tex"), tex())])).chmod(0)
    return lambda t: _src(t, pid, "failed", "Permission denied")


# ------------------------------------------------------------------------- PDFs


def _pdf(t: Tables, pid: str, status: str, filter_reason: str | None, why: str = "") -> dict:
    row = t.row("arxiv_pdfs", pid)
    assert (row["status"], row["filter_reason"]) == (status, filter_reason), row
    said = f"{row['fetch_reason']} {row['probe_error']}"
    assert why in said, (why, said)
    if status != "stored":
        assert row["sha256"] is None
    return row


@case("pdf")
def pdf_page_count_10e20(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", minimal_pdf(10**20, note=pid))
    return lambda t: _pdf(t, pid, "stored", "unreadable", "/Count")


@case("pdf")
def pdf_html_error_page(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", b"<html><body>404 Not Found</body></html>")
    return lambda t: _pdf(t, pid, "stored", "unreadable", "not a PDF")


@case("pdf")
def pdf_truncated(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", minimal_pdf(note=pid)[:200])
    return lambda t: _pdf(t, pid, "stored", "unreadable", "truncated")


@case("pdf")
def pdf_empty(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", b"")
    return lambda t: _pdf(t, pid, "stored", "unreadable", "not a PDF")


@case("pdf")
def pdf_encrypted_with_a_password(z: Zone) -> Check:
    from pypdf import PdfWriter

    pid = z.paper()
    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="AES-128")
    buf = io.BytesIO()
    writer.write(buf)
    z.file("pdf", f"{pid}.pdf", buf.getvalue())
    return lambda t: _pdf(t, pid, "stored", "unreadable", "encrypted")


@case("pdf")
def pdf_landscape(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", minimal_pdf(width=842, height=595, note=pid))
    return lambda t: _pdf(t, pid, "stored", "landscape")


@case("pdf")
def pdf_sparse_1gib(z: Zone) -> Check:
    pid = z.paper()
    sparse(z.file("pdf", f"{pid}.pdf"), GIB)
    return lambda t: _pdf(t, pid, "failed", "failed", "over the pdf cap")


@case("pdf")
def pdf_fifo(z: Zone) -> Check:
    pid = z.paper()
    os.mkfifo(z.file("pdf", f"{pid}.pdf"))
    return lambda t: _pdf(t, pid, "failed", "failed", "a FIFO")


@case("pdf")
def pdf_directory(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf").mkdir()
    return lambda t: _pdf(t, pid, "failed", "failed", "a directory")


@case("pdf")
def pdf_without_mediabox(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", minimal_pdf(note=pid).replace(b"/MediaBox [0 0 612 792] ", b" " * 24))
    return lambda t: _pdf(t, pid, "stored", "unreadable", "MediaBox")


@case("pdf")
def pdf_fine_but_no_grobid(z: Zone) -> Check:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", minimal_pdf(note=pid))

    def check(t: Tables) -> None:
        _pdf(t, pid, "stored", None)
        tei = t.row("grobid_tei", pid)
        assert (tei["status"], tei["reason"]) == ("pending", "grobid_unavailable")
        assert t.row("pdf_parses", pid)["reason"] == "grobid_unavailable"

    return check


# ------------------------------------------------------------------------- landing TEI (Grobid down)


def _tei_rejected(t: Tables, pid: str, why: str) -> None:
    tei = t.row("grobid_tei", pid)
    assert (tei["status"], tei["reason"]) == ("pending", "tei_rejected"), tei
    assert "rejected" in tei["detail"] and why in tei["detail"], tei["detail"]
    parse = t.row("pdf_parses", pid)
    assert (parse["status"], parse["reason"]) == ("skipped", "tei_rejected")


def _tei_case(z: Zone, data: bytes | None = None) -> tuple[str, Path]:
    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", minimal_pdf(note=pid))
    return pid, z.file("tei", f"{pid}.tei.xml", data)


TEI_NS = b'<TEI xmlns="http://www.tei-c.org/ns/1.0">'


@case("tei")
def tei_malformed(z: Zone) -> Check:
    pid, _ = _tei_case(z, TEI_NS + b"<teiHeader><fileDesc>")
    return lambda t: _tei_rejected(t, pid, "not XML")


@case("tei")
def tei_entity_bomb(z: Zone) -> Check:
    bomb = b'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
    pid, _ = _tei_case(z, bomb + TEI_NS + b"<text>&b;</text></TEI>")
    return lambda t: _tei_rejected(t, pid, "DOCTYPE")


@case("tei")
def tei_ten_thousand_nested_divs(z: Zone) -> Check:
    pid, _ = _tei_case(
        z, TEI_NS + b"<text><body>" + b"<div>" * 10000 + b"</div>" * 10000 + b"</body></text></TEI>"
    )
    return lambda t: _tei_rejected(t, pid, "not XML")


@case("tei")
def tei_html_root(z: Zone) -> Check:
    pid, _ = _tei_case(z, b"<html><body>Grobid error</body></html>")
    return lambda t: _tei_rejected(t, pid, "root is <html>")


@case("tei")
def tei_duplicate_xml_id(z: Zone) -> Check:
    pid, _ = _tei_case(z, TEI_NS + b'<text><body><p xml:id="a">x</p><p xml:id="a">y</p></body></text></TEI>')
    return lambda t: _tei_rejected(t, pid, "not XML")


@case("tei")
def tei_empty(z: Zone) -> Check:
    pid, _ = _tei_case(z, b"")
    return lambda t: _tei_rejected(t, pid, "empty body")


@case("tei")
def tei_symlink_to_outside(z: Zone) -> Check:
    pid, hint = _tei_case(z)
    hint.symlink_to(z.secret("secret.tei.xml", TEI_NS + CANARY.encode() + b"</TEI>"))
    return lambda t: _tei_rejected(t, pid, "outside the landing zone")


@case("tei")
def tei_directory(z: Zone) -> Check:
    pid, hint = _tei_case(z)
    hint.mkdir()
    return lambda t: _tei_rejected(t, pid, "a directory")


@case("tei")
def tei_fifo(z: Zone) -> Check:
    pid, hint = _tei_case(z)
    os.mkfifo(hint)
    return lambda t: _tei_rejected(t, pid, "a FIFO")


@case("tei")
def tei_sparse(z: Zone) -> Check:
    pid, hint = _tei_case(z)
    sparse(hint, GIB)
    return lambda t: _tei_rejected(t, pid, "over the tei cap")


@case("tei")
def tei_real_one_is_used(z: Zone) -> Check:
    from conftest import LANDING

    pid = z.paper()
    z.file("pdf", f"{pid}.pdf", (LANDING / "pdf" / "1706.03762.pdf").read_bytes())
    z.file("tei", f"{pid}.tei.xml", (LANDING / "tei" / "1706.03762.tei.xml").read_bytes())

    def check(t: Tables) -> None:
        tei = t.row("grobid_tei", pid)
        assert (tei["status"], tei["source"]) == ("cached", "landing")
        parse = t.row("pdf_parses", pid)
        assert parse["status"] == "ok" and parse["n_bib_entries"] == 40

    return check


# ------------------------------------------------------------------------- e-prints


def _src(t: Tables, pid: str, failure: str | None, why: str = "") -> dict:
    row = t.row("arxiv_sources", pid)
    assert row["failure"] == failure, row
    assert why in f"{row['failure_message']}", (why, row["failure_message"])
    parse = t.row("latex_parses", pid)
    if failure is not None:
        assert (parse["status"], parse["reason"]) == ("skipped", failure)
    return row


def _eprint(z: Zone, data: bytes, suffix: str = ".tar.gz") -> str:
    pid = z.paper()
    z.file("src", f"{pid}{suffix}", data)
    return pid


@case("eprint")
def eprint_real_source_parses(z: Zone) -> Check:
    from conftest import LANDING

    pid = _eprint(z, (LANDING / "src" / "2004.14974.tar.gz").read_bytes())

    def check(t: Tables) -> None:
        _src(t, pid, None)
        assert t.row("latex_parses", pid)["status"] == "ok"

    return check


@case("eprint")
def eprint_absolute_member_path(z: Zone) -> Check:
    pid = _eprint(z, tar_gz([(member("/etc/cron.d/x"), b"x"), (member("main.tex"), tex())]))
    return lambda t: _src(t, pid, "unsafe_path", "absolute")


@case("eprint")
def eprint_dotdot_member_path(z: Zone) -> Check:
    pid = _eprint(z, tar_gz([(member("../../escape.tex"), tex())]))
    return lambda t: _src(t, pid, "unsafe_path", "leaves the archive")


@case("eprint")
def eprint_symlink_member_out(z: Zone) -> Check:
    link = member("main.tex", tarfile.SYMTYPE, "/etc/passwd")
    pid = _eprint(z, tar_gz([(link, None)]))
    return lambda t: _src(t, pid, "unsafe_link", "leaves the archive")


@case("eprint")
def eprint_fifo_member(z: Zone) -> Check:
    pid = _eprint(z, tar_gz([(member("pipe", tarfile.FIFOTYPE), None), (member("main.tex"), tex())]))
    return lambda t: _src(t, pid, "unsafe_member", "special file")


@case("eprint")
def eprint_gzip_bomb(z: Zone) -> Check:
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    text = b"%" * (1 << 20)
    body = b"".join(compressor.compress(text) for _ in range(200)) + compressor.flush()  # 200 MiB of TeX
    pid = _eprint(z, body, ".gz")
    return lambda t: _src(t, pid, "too_large", "size cap")


@case("eprint")
def eprint_input_loop(z: Zone) -> Check:
    main = tex("\\input{a}")
    pid = _eprint(z, tar_gz([(member("main.tex"), main), (member("a.tex"), b"\\input{main}")]))
    return lambda t: _src(t, pid, "input_loop", "input loop")


@case("eprint")
def eprint_is_a_pdf(z: Zone) -> Check:
    pid = _eprint(z, minimal_pdf(note="eprint"), ".pdf")
    return lambda t: _src(t, pid, "pdf_only")


@case("eprint")
def eprint_corrupt_gzip(z: Zone) -> Check:
    pid = _eprint(z, b"\x1f\x8b\x08\x00" + os.urandom(64))
    return lambda t: _src(t, pid, "corrupt")


@case("eprint")
def eprint_html_saved_as_gz(z: Zone) -> Check:
    pid = _eprint(z, b"<html><body>e-print not available</body></html>", ".gz")
    return lambda t: _src(t, pid, "no_main_tex")


@case("eprint")
def eprint_symlink_to_outside(z: Zone) -> Check:
    pid = z.paper()
    z.file("src", f"{pid}.tar.gz").symlink_to(z.secret("source.tar.gz", gz(CANARY.encode())))
    return lambda t: _src(t, pid, "failed", "outside the landing zone")


@case("eprint")
def eprint_directory(z: Zone) -> Check:
    pid = z.paper()
    z.file("src", f"{pid}.tar.gz").mkdir()
    return lambda t: _src(t, pid, "failed", "a directory")


@case("eprint")
def eprint_sparse_1gib(z: Zone) -> Check:
    pid = z.paper()
    sparse(z.file("src", f"{pid}.tar.gz"), GIB)
    return lambda t: _src(t, pid, "failed", "over the src cap")


# ------------------------------------------------------------------------- the run


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Tables, dict[str, Check]]:
    base = tmp_path_factory.mktemp("hostile")
    root, outside, home = base / "landing", base / "outside", base / "data"
    for folder in ("oai", "pdf", "src", "tei"):
        (root / folder).mkdir(parents=True)
    outside.mkdir()
    zone = Zone(root, outside)
    checks = {name: build(zone) for name, (_family, build) in CASES.items()}
    (root / "oai" / f"{D}.xml").write_text(page(zone.normal))  # the papers whose files are the cases
    audit_log = base / "audit.log"
    env = {**os.environ, **audit_env(outside, audit_log, base / "site")}
    out = base / "results.json"
    command = [
        *unprivileged_prefix(),
        sys.executable,
        "-c",
        DRIVER,
        str(home),
        str(root),
        dead_url(),
        str(out),
        D,
        D2,
    ]
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text())
    audit = audit_log.read_text().splitlines() if audit_log.exists() else []
    return Tables(home, results, audit), checks


def test_at_least_40_cases_in_every_family():
    families = [family for family, _ in CASES.values()]
    assert len(families) >= 40
    assert {"oai", "names", "permissions", "pdf", "tei", "eprint"} == set(families)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_case(hostile, name):
    tables, checks = hostile
    for day in (D, D2):  # the run completes
        assert tables.results[day]["success"], tables.results[day]
    assert not tables.audit, tables.audit  # nothing outside the landing zone was opened
    checks[name](tables)


@pytest.mark.slow
def test_every_record_and_every_paper_has_a_row_with_a_reason(hostile):
    tables, _ = hostile
    for day in (D, D2):
        failures = tables.failures(day)
        assert failures["reason"].str.len_chars().min() or failures.height == 0
        assert tables.results[day]["checks"]["no_unreadable_records"] is False  # the check sees them
        assert tables.results[day]["checks"]["ids_valid"] is True
    meta = tables.read("arxiv_metadata").filter(~pl.col("deleted"))
    papers = set(meta["id"])
    for asset in ("arxiv_pdfs", "arxiv_sources", "latex_parses", "papers"):
        assert tables.ids(asset) == papers, asset
    pdfs = tables.read("arxiv_pdfs")
    assert pdfs.filter(~pl.col("passed") & pl.col("filter_reason").is_null()).height == 0
    assert tables.ids("grobid_tei") == set(pdfs.filter(pl.col("passed"))["id"])
    assert tables.ids("pdf_parses") == tables.ids("grobid_tei")
    for asset in ("grobid_tei", "pdf_parses", "latex_parses"):
        rows = tables.read(asset)
        unexplained = rows.filter(~pl.col("status").is_in(["ok", "cached"]) & pl.col("reason").is_null())
        assert unexplained.height == 0, (asset, unexplained)


@pytest.mark.slow
def test_nothing_from_outside_reached_the_data(hostile):
    tables, _ = hostile
    assert not tables.audit
    for path in (tables.home / "blobs").rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path
    for path in tables.home.glob("*/date=*/part-0.parquet"):
        frame = pl.read_parquet(path)
        for column, dtype in frame.schema.items():
            if dtype == pl.Utf8:
                assert not frame[column].str.contains(CANARY, literal=True).any(), (path, column)
    assert sum(p.stat().st_blocks * 512 for p in tables.home.rglob("*") if p.is_file()) < 200 * (1 << 20)


def test_the_audit_hook_sees_a_read_outside(tmp_path):
    """The suite's 'nothing outside was opened' can fail: a process that opens a file there is seen."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x").write_text("secret")
    log = tmp_path / "audit.log"
    env = {**os.environ, **audit_env(outside, log, tmp_path / "site")}
    code = f"open({str(outside / 'x')!r}).read(); open({str(tmp_path / 'fine')!r}, 'w')"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert log.read_text().split()[1:] == [str(outside / "x")]
