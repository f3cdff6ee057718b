"""corpus.ingest.pdf: probes of the real PDFs in ../shared, checked against independent facts, and
the S2ORC App. B filters on bad PDFs made here (encrypted, truncated, not a PDF, landscape)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import DATA, LANDING
from hostile import minimal_pdf
from lxml import etree
from pypdf import PdfReader, PdfWriter

from corpus.ingest.pdf import (
    FILTER_ORDER,
    KEPT,
    LANDSCAPE,
    TOO_MANY_PAGES,
    UNREADABLE,
    PdfProbe,
    filter_table,
    pdf_filter,
    pdf_row,
    probe_pdf,
)

REAL_PDFS = sorted(
    [*DATA.glob("pdfs/**/*.pdf"), *DATA.glob("pdf_tei_pairs/**/*.pdf"), *LANDING.glob("pdf/*.pdf")]
)
TEI_NS = {"tei": "http://www.tei-c.org/ns/1.0"}

# Hand-checked facts (page count, first-page width x height in points).
KNOWN = {
    LANDING / "pdf/1706.03762.pdf": (15, 612.0, 792.0),  # "Attention is all you need", US letter
    LANDING / "pdf/2203.03605.pdf": (23, 413.858, 615.118),  # a small custom page size
    LANDING / "pdf/2502.12102.pdf": (76, 612.0, 792.0),
    DATA / "pdfs/papermage/1903.10676.pdf": (1, 595.0, 842.0),  # papermage's one-page fixture, A4
    DATA / "pdf_tei_pairs/andreigrozescu_open-science-ai-rse/2401.00775v2.pdf": (60, 612.0, 792.0),
    DATA / "pdf_tei_pairs/grobid_client_python/0046d83a-edd6-4631-b57c-755cdcce8b7f.pdf": (
        9,
        595.276,
        790.866,
    ),
}


def blank_pdf(*sizes: tuple[float, float], rotate: int = 0) -> bytes:
    writer = PdfWriter()
    for width, height in sizes:
        page = writer.add_blank_page(width=width, height=height)
        if rotate:
            page.rotate(rotate)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def hand_made_pdf(pages_extra: str, page_extra: str) -> bytes:
    """A one-page PDF written by hand, so attributes can sit on the /Pages node (inherited)."""
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [3 0 R] /Count 1 {pages_extra} >>",
        f"<< /Type /Page /Parent 2 0 R {page_extra} >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


# -- real PDFs -------------------------------------------------------------------------------------
def test_real_pdfs_are_there(shared_data, shared_landing):
    assert len(REAL_PDFS) >= 40
    assert len(list(shared_landing.glob("pdf/*.pdf"))) == 22


@pytest.mark.parametrize("path", REAL_PDFS, ids=lambda p: p.name)
def test_real_pdf_probe_matches_full_page_walk(path: Path):
    """The fast probe (/Count, first leaf) agrees with pypdf walking the whole page tree."""
    probe = probe_pdf(path)
    assert probe.readable, probe.error
    reader = PdfReader(path)
    assert probe.pages == len(reader.pages)
    first = reader.pages[0]
    width, height = float(first.mediabox.width), float(first.mediabox.height)
    if first.rotation % 180 == 90:
        width, height = height, width
    assert probe.first_page_width == pytest.approx(width, abs=0.01)
    assert probe.first_page_height == pytest.approx(height, abs=0.01)
    assert probe == probe_pdf(path.read_bytes())  # bytes and path give the same answer


@pytest.mark.parametrize("path", sorted(KNOWN), ids=lambda p: p.name)
def test_known_page_counts_and_sizes(path: Path):
    pages, width, height = KNOWN[path]
    probe = probe_pdf(path)
    assert (probe.pages, probe.first_page_width, probe.first_page_height) == (pages, width, height)


def tei_surfaces(tei: Path) -> list[tuple[float, float]]:
    root = etree.parse(str(tei)).getroot()
    return [
        (float(s.get("lrx")) - float(s.get("ulx")), float(s.get("lry")) - float(s.get("uly")))
        for s in root.iterfind(".//tei:facsimile/tei:surface", TEI_NS)
    ]


def tei_pdf_pairs() -> list[tuple[Path, Path]]:
    pairs = [
        (LANDING / "pdf" / f"{t.name[: -len('.tei.xml')]}.pdf", t) for t in LANDING.glob("tei/*.tei.xml")
    ]
    pairs.append(
        (
            DATA / "pdf_tei_pairs/grobid_client_python/0046d83a-edd6-4631-b57c-755cdcce8b7f.pdf",
            DATA / "pdf_tei_pairs/grobid_client_python/0046d83a-edd6-4631-b57c-755cdcce8b7f.tei.xml",
        )
    )
    return sorted((p, t) for p, t in pairs if p.exists() and tei_surfaces(t))


def test_probe_agrees_with_grobid_pdfalto_pages():
    """Independent check: Grobid's TEI (pdfalto, teiCoordinates) lists one <surface> per page."""
    pairs = tei_pdf_pairs()
    assert len(pairs) >= 9
    for pdf, tei in pairs:
        surfaces = tei_surfaces(tei)
        probe = probe_pdf(pdf)
        assert probe.pages == len(surfaces), pdf.name
        assert probe.first_page_width == pytest.approx(surfaces[0][0], abs=0.5), pdf.name
        assert probe.first_page_height == pytest.approx(surfaces[0][1], abs=0.5), pdf.name


def test_filter_table_on_real_pdfs():
    rows = [pdf_row(probe_pdf(p)) for p in REAL_PDFS]
    too_long = sorted(
        p.name for p, r in zip(REAL_PDFS, rows, strict=True) if r["filter_reason"] == TOO_MANY_PAGES
    )
    assert too_long == ["2401.00775v2.pdf", "2502.12102.pdf", "2502.12102v1.pdf"]
    table = {r["reason"]: r for r in filter_table(rows)}
    assert [r for r in table] == [*FILTER_ORDER, KEPT]
    assert table[UNREADABLE]["count"] == 0 and table[LANDSCAPE]["count"] == 0
    assert table[TOO_MANY_PAGES]["count"] == 3
    assert table[KEPT]["count"] == len(REAL_PDFS) - 3
    assert table[TOO_MANY_PAGES]["share"] == round(3 / len(REAL_PDFS), 4)
    assert table[TOO_MANY_PAGES]["label"] == "Over 50 pages"


# -- bad PDFs made here -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_bytes() -> bytes:
    return (LANDING / "pdf/1706.03762.pdf").read_bytes()


@pytest.fixture(scope="module")
def small_bytes() -> bytes:
    return (LANDING / "pdf/0908.0054.pdf").read_bytes()  # 4 pages: pure-Python RC4 stays quick


def encrypt(data: bytes, user: str, owner: str, algorithm: str = "RC4-128") -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(data))
    writer.encrypt(user_password=user, owner_password=owner, algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-256"])
def test_encrypted_with_password_is_unreadable(small_bytes, tmp_path, algorithm):
    path = tmp_path / "locked.pdf"
    path.write_bytes(encrypt(small_bytes, user="secret", owner="owner", algorithm=algorithm))
    probe = probe_pdf(path)
    assert probe.encrypted and probe.pages is None
    assert "password" in probe.error
    assert pdf_filter(probe) == (False, UNREADABLE)


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_encrypted_with_empty_user_password_is_readable(small_bytes, algorithm):
    probe = probe_pdf(encrypt(small_bytes, user="", owner="owner", algorithm=algorithm))
    assert probe.encrypted and probe.error is None
    assert (probe.pages, probe.first_page_width, probe.first_page_height) == (4, 612.0, 792.0)
    assert pdf_filter(probe) == (True, None)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.99])
def test_truncated_pdf_is_unreadable(real_bytes, tmp_path, fraction):
    path = tmp_path / "cut.pdf"
    path.write_bytes(real_bytes[: int(len(real_bytes) * fraction)])
    probe = probe_pdf(path)
    assert probe.error is not None and probe.error.startswith("truncated"), probe.error
    assert pdf_filter(probe) == (False, UNREADABLE)


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", "not a PDF"),
        (b"<!DOCTYPE html><html><body>PDF unavailable</body></html>", "not a PDF"),
        (bytes(range(256)) * 8, "not a PDF"),
        (b"%PDF-1.7\n" + b"x" * 2000 + b"\n%%EOF\n", ""),
    ],
    ids=["empty", "html", "binary", "header-only"],
)
def test_not_a_pdf_is_unreadable(data, expected, tmp_path):
    path = tmp_path / "x.pdf"
    path.write_bytes(data)
    probe = probe_pdf(path)
    assert probe.error is not None and expected in probe.error
    assert pdf_filter(probe) == (False, UNREADABLE)


def test_missing_file_is_a_probe_error(tmp_path):
    probe = probe_pdf(tmp_path / "nope.pdf")
    assert probe.error.startswith("FileNotFoundError")


def test_size_and_time_caps(real_bytes):
    assert probe_pdf(real_bytes, max_bytes=1000).error.startswith("too large")
    slow = (LANDING / "pdf/2301.13298.pdf").read_bytes()  # object streams: ~50 ms to probe
    probe = probe_pdf(slow, timeout_s=0.0005)
    assert probe.error is not None and probe.error.startswith("ProbeTimeout")
    assert probe_pdf(slow).readable  # the cap was restored: a normal probe still works


def test_landscape_and_rotation():
    landscape = probe_pdf(blank_pdf((842, 595)))
    assert (landscape.first_page_width, landscape.first_page_height) == (842, 595)
    assert pdf_filter(landscape) == (False, LANDSCAPE)
    rotated = probe_pdf(blank_pdf((595, 842), rotate=90))  # portrait box shown sideways
    assert rotated.rotate == 90 and rotated.first_page_width == 842
    assert pdf_filter(rotated) == (False, LANDSCAPE)
    upside_down = probe_pdf(blank_pdf((595, 842), rotate=180))
    assert pdf_filter(upside_down) == (True, None)
    # only the first page counts (S2ORC App. B: "page width greater than height")
    assert pdf_filter(probe_pdf(blank_pdf((595, 842), (842, 595)))) == (True, None)


def test_inherited_mediabox_rotate_and_user_unit():
    probe = probe_pdf(hand_made_pdf("/MediaBox [0 0 600 400] /Rotate 270", ""))
    assert (probe.pages, probe.first_page_width, probe.first_page_height, probe.rotate) == (1, 400, 600, 270)
    probe = probe_pdf(hand_made_pdf("/MediaBox [0 0 600 400]", "/MediaBox [10 10 310 510] /UserUnit 2"))
    assert (probe.first_page_width, probe.first_page_height) == (600, 1000)
    assert probe_pdf(hand_made_pdf("", "")).error is not None  # no MediaBox anywhere


def test_page_limit_boundary():
    fifty = probe_pdf(blank_pdf(*[(612, 792)] * 50))
    assert fifty.pages == 50 and pdf_filter(fifty) == (True, None)
    fifty_one = probe_pdf(blank_pdf(*[(612, 792)] * 51))
    assert pdf_filter(fifty_one) == (False, TOO_MANY_PAGES)
    assert pdf_filter(fifty_one, max_pages=60) == (True, None)


def test_filter_order_first_failing_reason():
    assert pdf_filter(PdfProbe(pages=99, first_page_width=900, first_page_height=600, error="x")) == (
        False,
        UNREADABLE,
    )
    assert pdf_filter(PdfProbe(pages=99, first_page_width=900, first_page_height=600)) == (
        False,
        TOO_MANY_PAGES,
    )
    assert pdf_filter(PdfProbe(pages=9, first_page_width=900, first_page_height=600)) == (False, LANDSCAPE)
    assert pdf_filter(PdfProbe(pages=9, first_page_width=600, first_page_height=600)) == (
        True,
        None,
    )  # square
    assert pdf_filter(PdfProbe(pages=0, first_page_width=600, first_page_height=800)) == (False, UNREADABLE)


def test_filter_table_shapes():
    table = filter_table([None, None, UNREADABLE, {"filter_reason": LANDSCAPE}, {"reason": "missing"}, None])
    assert [(r["reason"], r["count"]) for r in table] == [
        (UNREADABLE, 1),
        (TOO_MANY_PAGES, 0),
        (LANDSCAPE, 1),
        ("missing", 1),
        (KEPT, 3),
    ]
    assert sum(r["count"] for r in table) == 6 and table[-1]["share"] == 0.5
    assert [r["count"] for r in filter_table([])] == [0, 0, 0, 0]


@pytest.mark.parametrize("count", [10**20, 2**63, 5000])
def test_impossible_page_count_is_unreadable_not_a_crash(count):
    """A page tree claiming more pages than the file has objects: the /Count is a lie
    (10^20 used to reach the arxiv_pdfs frame and crash the day with a polars ComputeError)."""
    import polars as pl

    from corpus.ingest.days import PDF_SCHEMA

    probe = probe_pdf(minimal_pdf(count))
    assert probe.error is not None and "/Count" in probe.error and probe.pages is None
    row = pdf_row(probe)
    assert (row["passed"], row["filter_reason"]) == (False, "unreadable")
    frame = pl.DataFrame([{k: row.get(k) for k in PDF_SCHEMA}], schema=PDF_SCHEMA)
    assert frame.height == 1
