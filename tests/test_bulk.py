"""arXiv's bulk data: layout, manifests, the tar index, reading by offset, failures, S3.

Bulk roots are generated in arXiv's exact layout (corpus.sample.bulk) from a synthetic
landing zone that holds both id styles, multi-version papers and e-prints of every kind
(gzipped tar, gzipped single .tex, PDF-only); the manifest format is also checked against
the example arXiv documents. The S3 tests run a loopback moto server behind a
requester-pays gate, so s3fs must send ``x-amz-request-payer`` as it would to s3://arxiv.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import shutil
import tarfile
import threading
from pathlib import Path

import polars as pl
import pytest

from corpus.ingest import arxiv_ids
from corpus.ingest.bulk import (
    BulkRoot,
    ManifestEntry,
    kaggle_pdf_path,
    manifest_xml,
    parse_manifest,
    parse_member_name,
)
from corpus.ingest.bulk_fetch import BulkReader
from corpus.ingest.bulk_index import INDEX_ASSET, TARS_ASSET, update_index
from corpus.ingest.days import FetchSettings, arxiv_pdfs_day, arxiv_sources_day
from corpus.ingest.eprint import UnpackLimits, load_eprint
from corpus.ingest.landing import LandingZone
from corpus.ingest.records import records_frame
from corpus.sample.bulk import write_bulk_root, write_manifest, write_tar
from corpus.sample.landing_zone import generate_landing
from corpus.store import BlobStore, Store

# The example manifest of https://info.arxiv.org/help/bulk_data_s3.html, as arXiv documents it.
DOC_MANIFEST = b"""<?xml version='1.0' standalone='yes'?>
<arXivPDF>
  <file>
    <content_md5sum>1852974c8570cdafd91522ee93719ee5</content_md5sum>
    <filename>pdf/arXiv_pdf_0001_001.tar</filename>
    <first_item>astro-ph0001001</first_item>
    <last_item>hep-th0001208</last_item>
    <md5sum>4b5eeb603fd68bb05b9dd3341e9067fb</md5sum>
    <num_items>1751</num_items>
    <seq_num>1</seq_num>
    <size>526080000</size>
    <timestamp>2009-12-23 14:41:24</timestamp>
    <yymm>0001</yymm>
  </file>
  <file>
    <content_md5sum>650da80f3bcd1f4cd3d994b572ecdbb9</content_md5sum>
    <filename>pdf/arXiv_pdf_0001_002.tar</filename>
    <first_item>hep-th0001209</first_item>
    <last_item>quant-ph0001119</last_item>
    <md5sum>eedc2d7c09cf11fda188d8600c966104</md5sum>
    <num_items>565</num_items>
    <seq_num>2</seq_num>
    <size>139560960</size>
    <timestamp>2009-12-23 14:42:52</timestamp>
    <yymm>0001</yymm>
  </file>
</arXivPDF>
"""


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """A landing zone (old- and new-style ids, revisions, every e-print kind) and its bulk root."""
    base = tmp_path_factory.mktemp("bulk")
    landing = base / "landing"
    versions: dict[str, int] = {}

    def remember(rec):
        versions[rec.id] = max(versions.get(rec.id, 0), rec.version or 1)

    generate_landing(landing, 160, 6, "2007-03-30", seed=11, also=[remember], full_text=True)
    bulk = base / "bulk"
    write_bulk_root(landing, bulk, versions, tar_bytes=40_000)  # several tars per month
    return landing, bulk, versions


def copy_root(bulk: Path, dest: Path) -> Path:
    shutil.copytree(bulk, dest)
    return dest


def metadata_home(landing: Path, home: Path) -> list[str]:
    """Write arxiv_metadata partitions from the landing zone's OAI pages; return the days."""
    zone = LandingZone(landing)
    days = list(zone.datestamps())
    store = Store(home)
    for day in days:
        found = zone.read_days([day])
        store.write_partition("arxiv_metadata", day, records_frame(found.records[day]))
    return days


def entries_of(bulk: Path, which: str) -> list[ManifestEntry]:
    return parse_manifest((bulk / which / f"arXiv_{which}_manifest.xml").read_bytes(), which)[0]


def reissue(bulk: Path, filename: str, members: list[tuple[str, bytes]]) -> None:
    """Rewrite one tar with new members and update its manifest entry (arXiv's monthly re-issue)."""
    which = filename.split("/")[0]
    old = entries_of(bulk, which)
    target = next(e for e in old if e.filename == filename)
    new = write_tar(bulk, which, target.yymm, target.seq_num, members)
    write_manifest(bulk, which, [new if e.filename == filename else e for e in old])


def tar_members(path: Path) -> list[tuple[str, bytes]]:
    with tarfile.open(path) as tar:
        return [(m.name, tar.extractfile(m).read()) for m in tar.getmembers() if m.isreg()]


# ---------------------------------------------------------------- layout and names


def test_member_names_both_id_styles_and_versions():
    assert parse_member_name("2101/2101.00001v1.pdf").model_dump() == {
        "id": "2101.00001",
        "version": 1,
        "ext": ".pdf",
    }
    assert parse_member_name("0001/astro-ph0001001.pdf").model_dump() == {
        "id": "astro-ph/0001001",
        "version": None,
        "ext": ".pdf",
    }
    assert parse_member_name("0704/0704.0001.gz").id == "0704.0001"
    assert parse_member_name("9901/hep-th9901001v3.gz").version == 3
    for hostile in (
        "../2101/2101.00001v1.pdf",
        "/2101/2101.00001v1.pdf",
        "2101/../2101.00001v1.pdf",
        "2102/2101.00001v1.pdf",  # the month folder must be the id's
        "2101/2101.00001v1.pdf/x",
        "2101/2101.00001v0.pdf",
        "2101/2101.00001.tex",
        "2101/notapaper.pdf",
        "0001/nosuch-archive0001001.pdf",
    ):
        assert parse_member_name(hostile) is None, hostile


def test_kaggle_mirror_paths():
    assert kaggle_pdf_path("2402.00001", 2) == "arxiv/pdf/2402/2402.00001v2.pdf"
    assert kaggle_pdf_path("cmp-lg/9404002", 1) == "cmp-lg/pdf/9404/9404002v1.pdf"


def test_documented_manifest_parses_and_round_trips():
    entries, problems = parse_manifest(DOC_MANIFEST, "pdf")
    assert not problems
    assert [(e.filename, e.kind, e.yymm, e.seq_num, e.num_items, e.size) for e in entries] == [
        ("pdf/arXiv_pdf_0001_001.tar", "pdf", "0001", 1, 1751, 526080000),
        ("pdf/arXiv_pdf_0001_002.tar", "pdf", "0001", 2, 565, 139560960),
    ]
    assert entries[0].md5sum == "4b5eeb603fd68bb05b9dd3341e9067fb"
    assert entries[0].first_item == "astro-ph0001001" and entries[1].last_item == "quant-ph0001119"
    again, _ = parse_manifest(manifest_xml("pdf", entries), "pdf")
    assert again == entries


def test_bad_manifest_entries_are_problems_not_paths():
    bad = DOC_MANIFEST.replace(b"pdf/arXiv_pdf_0001_002.tar", b"../../etc/passwd").replace(
        b"4b5eeb603fd68bb05b9dd3341e9067fb", b"not-an-md5"
    )
    entries, problems = parse_manifest(bad, "pdf")
    assert entries == []
    assert [p.reason for p in problems] == [
        "md5sum 'not-an-md5' is not an MD5",
        "file name is not pdf/arXiv_pdf_<yymm>_<seq>.tar",
    ]
    with pytest.raises(ValueError, match="root element"):
        parse_manifest(DOC_MANIFEST, "src")
    with pytest.raises(ValueError, match="not XML"):
        parse_manifest(b"<arXivPDF>", "pdf")


def test_generated_root_has_arxiv_layout(sample):
    landing, bulk, versions = sample
    pdf_entries, src_entries = entries_of(bulk, "pdf"), entries_of(bulk, "src")
    for e in pdf_entries + src_entries:
        data = (bulk / e.filename).read_bytes()
        assert len(data) == e.size and hashlib.md5(data).hexdigest() == e.md5sum
        members = tar_members(bulk / e.filename)
        assert len(members) == e.num_items
        assert members[0][0].split("/")[1].startswith(e.first_item)
        assert all(name.startswith(f"{e.yymm}/") for name, _ in members)
        assert hashlib.md5(b"".join(d for _, d in members)).hexdigest() == e.content_md5sum
    names = [n for e in pdf_entries for n, _ in tar_members(bulk / e.filename)]
    assert any(parse_member_name(n).version is None and "/" in parse_member_name(n).id for n in names)
    assert any(parse_member_name(n).version == 2 for n in names)  # a revised paper: v1 and v2
    assert len({e.yymm for e in pdf_entries if e.seq_num > 1}) >= 1  # a month split over tars
    srcs = [d for e in src_entries for _, d in tar_members(bulk / e.filename)]
    inner = [gzip.decompress(d)[:512] for d in srcs if d[:2] == b"\x1f\x8b"]
    assert any(i[257:262] == b"ustar" for i in inner)  # gzipped tar
    assert any(b"\\documentclass" in i for i in inner)  # gzipped single .tex
    assert any(d[:5] == b"%PDF-" for d in srcs)  # PDF-only submission


# ---------------------------------------------------------------- the index


def test_index_is_incremental_and_follows_reissued_tars(sample, tmp_path):
    _, bulk, _ = sample
    bulk = copy_root(bulk, tmp_path / "bulk")
    root = BulkRoot.open(str(bulk))
    home = tmp_path / "home"
    first = update_index(root, home, workers=2)
    assert first["status"] == {"ok": first["tars"]} and first["indexed"] == first["tars"]
    members = pl.read_parquet(home / INDEX_ASSET / "*.parquet")
    assert members.height == first["members"]
    row = members.filter(pl.col("version") > 1).row(0, named=True)  # a revised paper's latest PDF
    data = (bulk / row["tar"]).read_bytes()[row["offset"] : row["offset"] + row["size"]]
    assert hashlib.md5(data).hexdigest() == row["md5"] and data[:5] == b"%PDF-"

    again = update_index(root, home, workers=2)
    assert again["indexed"] == 0 and again["unchanged"] == first["tars"]

    target = next(e for e in entries_of(bulk, "pdf") if e.yymm == "0704" and e.seq_num == 1)
    old = tar_members(bulk / target.filename)
    renewed = [(n, d + b"\n% re-issued\n") if i == 0 else (n, d) for i, (n, d) in enumerate(old)]
    reissue(bulk, target.filename, renewed)
    third = update_index(root, home)
    assert third["indexed"] == 1 and third["unchanged"] == first["tars"] - 1
    md5 = pl.read_parquet(home / INDEX_ASSET / f"{target.stem}.parquet").row(0, named=True)["md5"]
    assert md5 == hashlib.md5(renewed[0][1]).hexdigest()


def test_md5_mismatch_truncation_missing_member_and_absent_tar(sample, tmp_path):
    _, bulk, _ = sample
    bulk = copy_root(bulk, tmp_path / "bulk")
    pdfs = {e.filename: e for e in entries_of(bulk, "pdf")}
    srcs = {e.filename: e for e in entries_of(bulk, "src")}
    month = sorted(f for f in pdfs if "_0704_" in f)
    flipped, cut = month[0], month[1]
    data = bytearray((bulk / flipped).read_bytes())
    data[700] ^= 0xFF  # inside the first member's data: same size, other MD5
    (bulk / flipped).write_bytes(bytes(data))
    whole = (bulk / cut).read_bytes()
    (bulk / cut).write_bytes(whole[: len(whole) // 2 + 100])
    gone = sorted(srcs)[0]
    (bulk / gone).unlink()
    # a manifest that promises one item more than the tar holds
    short = sorted(f for f in srcs if "_0704_" in f)[0]
    entries = [
        e.model_copy(update={"num_items": e.num_items + 1}) if e.filename == short else e
        for e in srcs.values()
    ]
    write_manifest(bulk, "src", entries)

    home = tmp_path / "home"
    summary = update_index(BulkRoot.open(str(bulk)), home, workers=1)
    tars = {r["tar"]: r for r in pl.read_parquet(home / TARS_ASSET / "part-0.parquet").iter_rows(named=True)}
    assert tars[flipped]["status"] == "md5_mismatch" and not tars[flipped]["usable"]
    assert tars[cut]["status"] == "truncated" and not tars[cut]["usable"]
    assert tars[cut]["reason"].startswith("the tar ends")
    assert tars[gone]["status"] == "absent" and "not under" in tars[gone]["reason"]
    assert tars[short]["status"] == "count_mismatch" and tars[short]["usable"]
    assert f"promises {srcs[short].num_items + 1} items" in tars[short]["reason"]
    assert {u["tar"] for u in summary["unusable"]} == {flipped, cut, gone}

    reader = BulkReader(BulkRoot.open(str(bulk)), home)
    blobs = BlobStore(home / "blobs")
    in_flipped = parse_member_name(tar_members(tmp_path / "bulk" / flipped)[0][0]).id
    got, note = reader.fetch(in_flipped, "pdf", blobs)
    assert got.status == "failed" and "md5_mismatch" in got.reason and note is None
    got, note = reader.fetch(in_flipped, "pdf", blobs, fallback=True)  # the fetcher may try arXiv
    assert got is None and "not usable" in note
    first_cut = parse_member_name(tar_members_prefix(whole)[0]).id
    got, _ = reader.fetch(first_cut, "pdf", blobs)
    assert got.status == "failed" and "truncated" in got.reason
    assert reader.fetch("0704.9999", "pdf", blobs) == (None, "not in the bulk data (pdf)")


def tar_members_prefix(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return [m.name for m in tar.getmembers()]


def test_hostile_members_are_skipped_and_caps_hold(tmp_path):
    bulk = tmp_path / "bulk"
    pdf = b"%PDF-1.4\n%%EOF\n"
    members = [
        ("../2101/2101.00001v1.pdf", pdf),
        ("/abs/2101.00002v1.pdf", pdf),
        ("2101/2101.00003v1.pdf", pdf),
    ]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("2101/2101.00004v1.pdf")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
        long = tarfile.TarInfo("2101/" + "x" * 150 + ".pdf")  # a GNU long name, not a paper
        long.size = len(pdf)
        tar.addfile(long, io.BytesIO(pdf))
    data = buf.getvalue()
    (bulk / "pdf").mkdir(parents=True)
    (bulk / "pdf/arXiv_pdf_2101_001.tar").write_bytes(data)
    entry = ManifestEntry(
        filename="pdf/arXiv_pdf_2101_001.tar", kind="pdf", yymm="2101", seq_num=1,
        md5sum=hashlib.md5(data).hexdigest(), size=len(data), num_items=1,
    )  # fmt: skip
    write_manifest(bulk, "pdf", [entry])
    write_manifest(bulk, "src", [])
    home = tmp_path / "home"
    summary = update_index(BulkRoot.open(str(bulk)), home)
    assert summary["status"] == {"ok": 1}
    rows = pl.read_parquet(home / INDEX_ASSET / "arXiv_pdf_2101_001.parquet")
    assert rows["member"].to_list() == ["2101/2101.00003v1.pdf"]
    tars = pl.read_parquet(home / TARS_ASSET / "part-0.parquet")
    assert tars["skipped"].to_list() == [4]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bulk", "home"]  # nothing written elsewhere
    reader = BulkReader(BulkRoot.open(str(bulk)), home, limits=UnpackLimits(max_total_bytes=4))
    got, _ = reader.fetch("2101.00003", "pdf", BlobStore(home / "blobs"))
    assert got.status == "failed" and got.reason.startswith("too_large")


def test_gzip_bomb_from_a_tar_is_refused_by_the_eprint_caps(tmp_path):
    bomb = gzip.compress(b"\\documentclass{article}\n" + b"%" * (8 << 20), compresslevel=9)
    bulk = tmp_path / "bulk"
    entry = write_tar(bulk, "src", "2101", 1, [("2101/2101.00005.gz", bomb)])
    write_manifest(bulk, "src", [entry])
    write_manifest(bulk, "pdf", [])
    home = tmp_path / "home"
    update_index(BulkRoot.open(str(bulk)), home)
    blobs = BlobStore(home / "blobs")
    got, _ = BulkReader(BulkRoot.open(str(bulk)), home).fetch("2101.00005", "eprint", blobs)
    assert got.status == "stored" and got.bytes == len(bomb)  # stored as served: small
    unpacked, source, failure = load_eprint(
        blobs.path("eprint", got.sha256), tmp_path / "scratch", UnpackLimits(max_total_bytes=1 << 20)
    )
    assert failure.code == "too_large" and source is None and not any((tmp_path / "scratch").iterdir())


def test_stale_bulk_version_is_noted_or_left_to_the_fallback(sample, tmp_path):
    _, bulk, versions = sample
    home = tmp_path / "home"
    update_index(BulkRoot.open(str(bulk)), home)
    reader = BulkReader(BulkRoot.open(str(bulk)), home)
    blobs = BlobStore(home / "blobs")
    aid = next(i for i, v in sorted(versions.items()) if "/" not in i and v == 1)
    got, _ = reader.fetch(aid, "pdf", blobs, version=3)
    assert got.status == "stored" and got.reason == "bulk holds v1, the latest is v3"
    assert reader.fetch(aid, "pdf", blobs, version=3, fallback=True) == (
        None,
        "bulk holds v1, the latest is v3",
    )


def test_reading_before_indexing_is_a_clear_error(sample, tmp_path):
    _, bulk, _ = sample
    with pytest.raises(FileNotFoundError, match="arxiv_bulk_index has not been materialised"):
        BulkReader(BulkRoot.open(str(bulk)), tmp_path).fetch("0704.0001", "pdf", BlobStore(tmp_path))


def test_corruption_after_indexing_fails_the_paper_not_the_day(sample, tmp_path):
    landing, bulk, _ = sample
    bulk = copy_root(bulk, tmp_path / "bulk")
    home = tmp_path / "home"
    days = metadata_home(landing, home)
    update_index(BulkRoot.open(str(bulk)), home)
    day = days[-1]
    ids = set(Store(home).read_partition("arxiv_metadata", day)["id"].to_list())
    rows = pl.read_parquet(home / INDEX_ASSET / "arXiv_pdf_*.parquet").filter(pl.col("id").is_in(ids))
    victim = rows.row(0, named=True)
    data = bytearray((bulk / victim["tar"]).read_bytes())
    data[victim["offset"] + 10] ^= 0xFF
    (bulk / victim["tar"]).write_bytes(bytes(data))
    only_oai = tmp_path / "landing"
    shutil.copytree(landing / "oai", only_oai / "oai")
    settings = FetchSettings(mode="bulk", bulk=str(bulk), bulk_fallback="none")
    summary = arxiv_pdfs_day(home, only_oai, day, settings)
    frame = Store(home).read_partition("arxiv_pdfs", day)
    bad = frame.filter(pl.col("id") == victim["id"]).row(0, named=True)
    assert bad["status"] == "failed" and "does not match its indexed MD5" in bad["fetch_reason"]
    assert summary["status"].get("stored", 0) >= 1


# ---------------------------------------------------------------- the day's rows


def _day_rows(landing: Path, home: Path, fetch: FetchSettings) -> dict[str, pl.DataFrame]:
    out = {}
    for day in LandingZone(landing).datestamps():
        arxiv_pdfs_day(home, landing, day, fetch)
        arxiv_sources_day(home, landing, day, fetch)
        for asset in ("arxiv_pdfs", "arxiv_sources"):
            frame = Store(home).read_partition(asset, day).drop("source", "fetch_reason").sort("id")
            if "failure_message" in frame.columns:  # a missing e-print's message also names the bulk data
                frame = frame.with_columns(pl.col("failure_message").str.split("; ").list.first())
            out[f"{asset}/{day}"] = frame
    return out


def test_day_rows_equal_from_bulk_root_and_landing_zone(sample, tmp_path):
    landing, bulk, _ = sample
    home_l, home_b = tmp_path / "landing_home", tmp_path / "bulk_home"
    metadata_home(landing, home_l)
    metadata_home(landing, home_b)
    from_landing = _day_rows(landing, home_l, FetchSettings(mode="landing"))
    only_oai = tmp_path / "landing"
    shutil.copytree(landing / "oai", only_oai / "oai")
    update_index(BulkRoot.open(str(bulk)), home_b)
    settings = FetchSettings(mode="bulk", bulk=str(bulk), bulk_fallback="none")
    from_bulk = _day_rows(only_oai, home_b, settings)
    assert from_landing.keys() == from_bulk.keys()
    for key, frame in from_landing.items():
        assert frame.equals(from_bulk[key]), key
    sources = pl.concat(
        [Store(home_b).read_partition("arxiv_pdfs", d) for d in LandingZone(landing).datestamps()]
    )
    assert set(sources["source"].drop_nulls()) == {"bulk"}
    stored = pl.concat(from_bulk[k] for k in from_bulk if k.startswith("arxiv_sources"))
    assert {"tar", "gzip_tex", "pdf"} <= set(stored["kind"].drop_nulls())


# ---------------------------------------------------------------- S3 through the real protocol


class _RequesterPaysGate:
    """WSGI middleware: like s3://arxiv, refuse reads (GET, HEAD) of the bucket without
    ``x-amz-request-payer: requester``; bounded in requests served."""

    def __init__(self, app, bucket: str, max_requests: int = 20_000):
        self.app, self.prefix, self.max_requests = app, f"/{bucket}", max_requests
        self.requests = self.refused = 0
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self.lock:
            self.requests += 1
            over = self.requests > self.max_requests
        path = environ.get("PATH_INFO", "")
        if over:
            start_response("503 Service Unavailable", [("Content-Length", "0")])
            return [b""]
        reading = environ.get("REQUEST_METHOD") in ("GET", "HEAD")  # the owner's set-up goes through
        if (
            reading
            and path.startswith(self.prefix)
            and environ.get("HTTP_X_AMZ_REQUEST_PAYER") != "requester"
        ):
            with self.lock:
                self.refused += 1
            body = b"<Error><Code>AccessDenied</Code><Message>requester pays</Message></Error>"
            start_response(
                "403 Forbidden", [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))]
            )
            # A HEAD answer has no body: bytes after it reach the client's next read on the socket
            # (aiohttp then fails with "Data after Connection: close" instead of the 403).
            return [b""] if environ.get("REQUEST_METHOD") == "HEAD" else [body]
        return self.app(environ, start_response)


@pytest.fixture(scope="module")
def s3(sample):
    """A moto S3 server on 127.0.0.1 (free port, stops itself after 10 minutes) with the
    sample bulk root uploaded to a requester-pays bucket."""
    pytest.importorskip("s3fs")
    boto3 = pytest.importorskip("boto3")
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    _, bulk, _ = sample
    mp = pytest.MonkeyPatch()
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        mp.setenv(key, value)
    gate = _RequesterPaysGate(DomainDispatcherApplication(create_backend_app), "arxiv-test")
    server = make_server("127.0.0.1", 0, gate, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    timer = threading.Timer(600, server.shutdown)
    timer.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    client = boto3.client("s3", endpoint_url=url)
    client.create_bucket(Bucket="arxiv-test")
    client.put_bucket_request_payment(Bucket="arxiv-test", RequestPaymentConfiguration={"Payer": "Requester"})
    for path in sorted(bulk.rglob("*")):
        if path.is_file():
            key = path.relative_to(bulk).as_posix()
            client.put_object(Bucket="arxiv-test", Key=key, Body=path.read_bytes(), RequestPayer="requester")
    try:
        yield url, gate
    finally:
        timer.cancel()
        server.shutdown()
        thread.join(timeout=10)
        mp.undo()


def test_s3_gate_refuses_readers_that_do_not_pay(s3):
    import s3fs

    url, gate = s3
    before = gate.refused
    fs = s3fs.S3FileSystem(endpoint_url=url, requester_pays=False, skip_instance_cache=True)
    with pytest.raises(PermissionError):
        fs.cat_file("arxiv-test/pdf/arXiv_pdf_manifest.xml")
    assert gate.refused > before


def test_s3_root_indexes_and_reads_the_same_as_local(sample, s3, tmp_path, monkeypatch):
    landing, bulk, _ = sample
    url, gate = s3
    options = {"endpoint_url": url, "skip_instance_cache": True}
    home_s3, home_local = tmp_path / "s3", tmp_path / "local"
    remote = BulkRoot.open("s3://arxiv-test", options)
    summary = update_index(remote, home_s3, storage_options=options, workers=2)
    assert summary["status"] == {"ok": summary["tars"]}
    update_index(BulkRoot.open(str(bulk)), home_local)
    for name in ("arXiv_pdf_0704_001", "arXiv_src_0703_001"):
        a = pl.read_parquet(home_s3 / INDEX_ASSET / f"{name}.parquet")
        assert a.equals(pl.read_parquet(home_local / INDEX_ASSET / f"{name}.parquet"))
    # the daily stage through the environment, as a deployment would configure it
    monkeypatch.setenv("AWS_ENDPOINT_URL", url)
    days = metadata_home(landing, home_s3)
    metadata_home(landing, home_local)
    only_oai = tmp_path / "landing"
    shutil.copytree(landing / "oai", only_oai / "oai")
    refused = gate.refused
    for home, root in ((home_s3, "s3://arxiv-test"), (home_local, str(bulk))):
        arxiv_pdfs_day(home, only_oai, days[-1], FetchSettings(mode="bulk", bulk=root, bulk_fallback="none"))
    a, b = (Store(h).read_partition("arxiv_pdfs", days[-1]) for h in (home_s3, home_local))
    assert a.equals(b) and (a["source"] == "bulk").sum() > 0
    assert gate.refused == refused  # every request paid


def test_kaggle_layout_reads_one_pdf_per_version(sample, tmp_path):
    landing, _, versions = sample
    mirror = tmp_path / "mirror"
    ids = []
    for path in sorted((landing / "pdf").glob("*.pdf"))[:6]:
        aid = arxiv_ids.from_file_name(path.name)
        dest = mirror / kaggle_pdf_path(aid, versions.get(aid, 1))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, dest)
        ids.append((aid, versions.get(aid, 1), hashlib.sha256(path.read_bytes()).hexdigest()))
    reader = BulkReader(BulkRoot.open(str(mirror)), tmp_path / "home", layout="kaggle")
    blobs = BlobStore(tmp_path / "home" / "blobs")
    for aid, version, sha in ids:
        got, _ = reader.fetch(aid, "pdf", blobs, version=version + 1)
        assert got.sha256 == sha and got.source == "bulk"
        assert got.reason == f"mirror holds v{version}, the latest is v{version + 1}"
    assert reader.fetch(ids[0][0], "eprint", blobs) == (None, "the Kaggle mirror holds PDFs only")


# ---------------------------------------------------------------- real files, Dagster, fallback


def test_real_landing_zone_files_read_the_same_from_a_bulk_root(shared_landing, shared_data, tmp_path):
    """The real PDFs and e-prints of ../shared/landing (and the real gzipped-tar e-print of
    arXiv:1911.02782) packed in arXiv's layout: every day's rows as from the landing zone."""
    landing = tmp_path / "landing"
    for sub in ("oai", "pdf", "src", "tei"):
        shutil.copytree(shared_landing / sub, landing / sub)
    shutil.copy(shared_data / "latex_sources/s2orc-doc2json/1911.02782.gz", landing / "src/1911.02782.gz")
    bulk = tmp_path / "bulk"
    summary = write_bulk_root(landing, bulk)
    assert summary["members"] == len(list((landing / "pdf").glob("*.pdf"))) + 3
    home_l, home_b = tmp_path / "home_l", tmp_path / "home_b"
    metadata_home(landing, home_l)
    metadata_home(landing, home_b)
    from_landing = _day_rows(landing, home_l, FetchSettings(mode="landing"))
    only_oai = tmp_path / "only_oai"
    shutil.copytree(landing / "oai", only_oai / "oai")
    assert update_index(BulkRoot.open(str(bulk)), home_b, workers=1)["status"] == {"ok": summary["tars"]}
    from_bulk = _day_rows(only_oai, home_b, FetchSettings(mode="bulk", bulk=str(bulk), bulk_fallback="none"))
    for key, frame in from_landing.items():
        assert frame.equals(from_bulk[key]), key
    sources = pl.concat(f for k, f in from_bulk.items() if k.startswith("arxiv_sources"))
    assert sources.filter(pl.col("main").is_not_null()).height >= 2  # real LaTeX assembled from the tars


def test_bulk_index_asset_materialises_incrementally(sample, tmp_path):
    import dagster as dg

    from corpus_assets.bulk import arxiv_bulk_index
    from corpus_assets.definitions import defs
    from resources.arxiv import ArxivResource
    from resources.store import CorpusStore

    assert "arxiv_bulk_index" not in {
        k.path[-1] for k in defs.resolve_job_def("corpus_daily").asset_layer.executable_asset_keys
    }
    assert defs.resolve_job_def("corpus_bulk_index") is not None
    landing, bulk, _ = sample
    resources = {
        "corpus": CorpusStore(home=str(tmp_path / "data"), landing=str(landing)),
        "arxiv": ArxivResource(source="bulk", bulk=str(bulk)),
    }
    quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    with dg.instance_for_test() as instance:
        first = dg.materialize([arxiv_bulk_index], resources=resources, instance=instance, run_config=quiet)
        meta = first.asset_materializations_for_node("arxiv_bulk_index")[0].metadata
        assert meta["indexed_now"].value == meta["tars"].value > 0
        assert all(c.passed for c in first.get_asset_check_evaluations())
        again = dg.materialize([arxiv_bulk_index], resources=resources, instance=instance, run_config=quiet)
        assert again.asset_materializations_for_node("arxiv_bulk_index")[0].metadata["indexed_now"].value == 0
        unset = {**resources, "arxiv": ArxivResource(source="bulk")}
        failed = dg.materialize(
            [arxiv_bulk_index], resources=unset, instance=instance, run_config=quiet, raise_on_error=False
        )
        assert not failed.success


def test_what_the_bulk_data_lacks_is_fetched_politely(sample, tmp_path):
    from http_server import Reply, ScriptedServer

    from corpus.ingest.fetch import Fetcher
    from corpus.ingest.http import PoliteClient, RetryPolicy

    _, bulk, _ = sample
    home = tmp_path / "home"
    update_index(BulkRoot.open(str(bulk)), home, workers=1)
    reader = BulkReader(BulkRoot.open(str(bulk)), home)
    pdf = b"%PDF-1.4\n% fetched from arXiv\n%%EOF\n"
    with ScriptedServer() as srv:
        srv.script("/pdf/0704.9990", Reply(200, body=pdf, headers={"Content-Type": "application/pdf"}))
        client = PoliteClient(
            min_interval_s=0,
            timeout_s=5,
            retry=RetryPolicy(max_retries=1, backoff_base_s=0.01),
            sleep=lambda _s: None,
        )
        with Fetcher(
            BlobStore(home / "blobs"), tmp_path / "landing", mode="bulk", bulk=reader, client=client,
            base_url=srv.url(""),
        ) as fetcher:  # fmt: skip
            got = fetcher.fetch("0704.9990", "pdf")
        assert srv.hits("/pdf/0704.9990") == 1
    assert got.status == "stored" and got.source == "arxiv" and got.reason == "not in the bulk data (pdf)"
    assert (tmp_path / "landing/pdf/0704.9990.pdf").read_bytes() == pdf  # saved first, as in arxiv mode
