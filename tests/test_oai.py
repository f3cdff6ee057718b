"""OAI-PMH parsing and harvesting on the real captures in ../shared/data/oai_pmh."""

from __future__ import annotations

import datetime as dt
import re
import time
from pathlib import Path

import pytest
from conftest import DATA
from http_server import Reply, ScriptedServer

from corpus.ingest.harvest import OaiHarvester
from corpus.ingest.http import PoliteClient, RetryPolicy
from corpus.ingest.landing import LandingZone
from corpus.ingest.oai import OaiError, OaiParseError, iter_page, read_page, scan_datestamps
from corpus.ingest.records import ArxivRecord, FailedRecord

OAI = DATA / "oai_pmh"
ARXIV_RAW = OAI / "mikesaelim_arXivOAIHarvester" / "ListRecordsResponse.xml"
OAI_DC = OAI / "cos_scrapi" / "arxiv_oai_dc_ListRecords_2014-12-24.xml"
HEPCRAWL = sorted((OAI / "inspirehep_hepcrawl").rglob("*.xml"))
ERRORS = {
    "badArgument": "ErrorResponseBadArgument.xml",
    "badResumptionToken": "ErrorResponseBadResumptionToken.xml",
    "badVerb": "ErrorResponseBadVerb.xml",
    "idDoesNotExist": "ErrorResponseIdDoesNotExist.xml",
}


def _record_count(path: Path) -> int:
    return len(re.findall(rb"<record>", path.read_bytes()))


@pytest.mark.parametrize("path", [ARXIV_RAW, OAI_DC, *HEPCRAWL], ids=lambda p: p.name)
def test_every_record_of_real_pages_is_read(shared_data, path):
    page, records, failed = read_page(path)
    assert failed == []
    assert len(records) == _record_count(path) > 0
    assert len({r.id for r in records}) == len(records)
    for r in records:
        assert r.title and r.datestamp and r.authors, r.id
        assert r.title == " ".join(r.title.split())  # whitespace normalised


def test_arxiv_raw_fields_and_resumption_token(shared_data):
    page, records, _ = read_page(ARXIV_RAW)
    assert page.resumption.token == "726959|1001"
    assert page.resumption.complete_list_size == 58011
    assert page.request["metadataPrefix"] == "arXivRaw"
    r = next(r for r in records if r.id == "0704.0471")
    assert r.source_format == "arXivRaw"
    assert r.submitter == "Dinesh Shetty"
    assert r.title.startswith("Density dependence of the symmetry energy and the nuclear equation of state")
    assert [(a.keyname, a.forenames) for a in r.authors] == [
        ("Shetty", "D. V."),
        ("Yennello", "S. J."),
        ("Souliotis", "G. A."),
    ]
    assert r.versions[0].version == 1 and r.created == dt.date(2007, 4, 3)
    assert r.categories == ["nucl-ex", "nucl-th"] and r.primary_category == "nucl-ex"
    assert r.datestamp == dt.date(2014, 11, 18)
    assert '"' in r.abstract  # &quot; decoded, nothing else expanded


def test_arxiv_format_fields(shared_data):
    _, records, _ = read_page(OAI / "inspirehep_hepcrawl" / "functional" / "arxiv-physics-hep-ex.xml")
    r = next(r for r in records if r.id == "1706.05371")
    assert r.created == dt.date(2017, 6, 16) and r.updated == dt.date(2017, 12, 12)
    assert r.authors[0].keyname == "Anderson" and r.authors[0].forenames == "Tyler"
    assert len(r.authors) == 13
    assert r.categories[:2] == ["physics.ins-det", "hep-ex"]
    assert r.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"


def test_oai_dc_record(shared_data):
    _, records, _ = read_page(OAI_DC)
    assert len(records) == 897
    r = next(r for r in records if r.id == "0709.2184")
    assert r.source_format == "oai_dc"
    assert [a.keyname for a in r.authors] == ["Burt", "Donow", "Miller", "Schiffman", "Wieland"]
    assert r.created == dt.date(2007, 9, 13) and r.updated == dt.date(2014, 12, 22)
    assert r.comments.startswith("Version 4.0")
    assert r.abstract.startswith("In this note we show")
    old = next(r for r in records if r.id == "math/0208210")  # an old-style id from the abs URL
    assert old.doi == "10.4236/jamp.2014.213134"


@pytest.mark.parametrize("code", sorted(ERRORS))
def test_oai_error_replies_name_the_code(shared_data, code):
    with pytest.raises(OaiError) as err:
        read_page(OAI / "mikesaelim_arXivOAIHarvester" / ERRORS[code])
    assert err.value.code == code and code in str(err.value)


def test_no_records_match_is_an_empty_page(shared_data):
    page, records, failed = read_page(
        OAI / "mikesaelim_arXivOAIHarvester" / "ErrorResponseNoRecordsMatch.xml"
    )
    assert records == [] and failed == [] and page.error_code == "noRecordsMatch"


# ----------------------------------------------------------------------------- bad input

_ENVELOPE = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
    b"<responseDate>2020-01-01T00:00:00Z</responseDate><ListRecords>%s</ListRecords></OAI-PMH>"
)


def _record(arxiv_id: str = "2001.00001", title: str = "A title", datestamp: str = "2020-01-02") -> bytes:
    return (
        f"<record><header><identifier>oai:arXiv.org:{arxiv_id}</identifier><datestamp>{datestamp}</datestamp>"
        f'</header><metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/"><id>{arxiv_id}</id>'
        f"<created>2020-01-01</created><authors><author><keyname>Doe</keyname><forenames>J.</forenames>"
        f"</author></authors><title>{title}</title><categories>cs.CL</categories>"
        f"<abstract>Text.</abstract></arXiv></metadata></record>"
    ).encode()


def test_bad_records_become_failure_rows_and_the_page_goes_on():
    no_title = _record("2001.00002", title="")
    bad_id = _record("2001.0003")  # 4-digit id in 2020: invalid
    no_datestamp = _record("2001.00004", datestamp="")
    unknown_format = (
        b"<record><header><identifier>oai:arXiv.org:2001.00005</identifier><datestamp>2020-01-02</datestamp>"
        b"</header><metadata><mods><title>x</title></mods></metadata></record>"
    )
    data = _ENVELOPE % b"".join(
        [_record(), no_title, bad_id, no_datestamp, unknown_format, _record("2001.00006")]
    )
    _, records, failed = read_page(data, "page.xml")
    assert [r.id for r in records] == ["2001.00001", "2001.00006"]
    reasons = {f.identifier.rsplit(":", 1)[-1]: f.reason for f in failed}
    assert reasons["2001.00002"] == "missing <title>"
    assert "invalid arXiv id" in reasons["2001.0003"]
    assert "datestamp" in reasons["2001.00004"]
    assert reasons["2001.00005"] == "unknown metadata format <mods>"
    assert all(f.source == "page.xml" for f in failed)


def test_truncated_page_keeps_records_before_the_fault_and_names_the_source(shared_data):
    data = OAI_DC.read_bytes()
    cut = data[: len(data) // 2]
    seen: list = []
    with pytest.raises(OaiParseError, match="truncated.xml"):
        for item in iter_page(cut, "truncated.xml"):
            seen.append(item)
    assert len(seen) > 300 and all(isinstance(r, ArxivRecord) for r in seen[:-1])
    assert isinstance(seen[-1], FailedRecord) and "cut off" in seen[-1].reason  # the record the cut fell in
    assert seen[-1].identifier.startswith("oai:arXiv.org:")


def test_garbage_is_a_clear_error():
    with pytest.raises(OaiParseError, match="garbage.xml"):
        read_page(b"<html><body>Service Unavailable", "garbage.xml")


def test_entity_expansion_bomb_is_refused_quickly():
    bomb = (
        b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
        + b"".join(
            f'<!ENTITY lol{i} "{("&lol%s;" % ("" if i == 1 else i - 1)) * 10}">'.encode()
            for i in range(1, 10)
        )
        + b"]>"
        + _ENVELOPE % _record(title="&lol9;")
    )
    start = time.perf_counter()
    with pytest.raises(OaiParseError, match="DOCTYPE"):
        read_page(bomb, "bomb.xml")
    assert time.perf_counter() - start < 1.0


def test_external_entity_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    xxe = f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'.encode()
    xxe += _ENVELOPE % _record(title="&x;")
    with pytest.raises(OaiParseError):
        read_page(xxe, "xxe.xml")


def test_non_utf8_bytes_are_replaced_with_a_warning_not_lost():
    latin1 = _record(title="Cafe society").replace(b"Cafe", b"Caf\xe9")  # a latin-1 byte in UTF-8
    data = _ENVELOPE % (latin1 + _record("2001.00007"))
    page, records, failed = read_page(data, "latin1.xml")
    assert [r.id for r in records] == ["2001.00001", "2001.00007"] and not failed
    assert "\ufffd" in records[0].title
    assert any("invalid UTF-8" in w for w in page.warnings)


def test_scan_datestamps_counts_without_parsing(shared_landing):
    counts = scan_datestamps((shared_landing / "oai" / "2007-04-01.xml").read_bytes())
    assert counts == {"2007-04-01": 4}


# ----------------------------------------------------------------------------- harvesting


def _harvester(server: ScriptedServer, sleeps: list[float], min_interval_s: float = 0.0) -> OaiHarvester:
    client = PoliteClient(
        min_interval_s=min_interval_s,
        timeout_s=5.0,
        retry=RetryPolicy(max_retries=4, backoff_base_s=0.01),
        sleep=lambda s: sleeps.append(s),
    )
    return OaiHarvester(client, base_url=server.url("/oai"), max_parse_retries=2)


def test_harvest_survives_faults_and_loses_nothing(shared_data):
    first, last = ARXIV_RAW.read_bytes(), OAI_DC.read_bytes()
    sleeps: list[float] = []
    with ScriptedServer() as server:
        server.script(
            "/oai",
            Reply(503, headers={"Retry-After": "7"}),
            Reply(200, first),
            Reply(500),
            Reply(drop=True),
            Reply(200, last, truncate_to=len(last) // 3),  # short body: a transport error, retried
            Reply(200, last[: len(last) // 2]),  # complete response, truncated XML: re-fetched
            Reply(200, last),
        )
        harvester = _harvester(server, sleeps)
        pages = list(harvester.list_records("arXivRaw", from_="2014-10-01"))
        requests = server.seen("/oai")
    ids = [r.id for p in pages for r in p.records]
    expected = [r.id for r in read_page(ARXIV_RAW)[1]] + [r.id for r in read_page(OAI_DC)[1]]
    assert ids == expected  # none lost, none twice, in order
    assert 7.0 in sleeps  # Retry-After honoured
    assert "resumptionToken=726959%7C1001" in requests[-1].query
    assert "metadataPrefix" not in requests[-1].query  # a resumption request carries only the token
    assert "from=2014-10-01" in requests[0].query
    assert all("corpus-pipeline" in r.headers.get("User-Agent", "") for r in requests)


def test_harvest_spacing_is_enforced(shared_data):
    sleeps: list[float] = []
    page = (OAI / "inspirehep_hepcrawl" / "functional" / "arxiv-single.xml").read_bytes()
    with ScriptedServer() as server:
        server.script("/oai", Reply(200, page))
        harvester = _harvester(server, sleeps, min_interval_s=3.0)
        for _ in range(3):
            list(harvester.list_records("arXiv", from_="2017-12-14", until="2017-12-14"))
    spacing = [s for s in sleeps if s > 2.5]
    assert len(spacing) == 2 and all(s <= 3.0 for s in spacing)


def test_harvest_errors(shared_data):
    sleeps: list[float] = []
    with ScriptedServer() as server:
        server.script(
            "/oai",
            Reply(200, (OAI / "mikesaelim_arXivOAIHarvester" / ERRORS["badResumptionToken"]).read_bytes()),
        )
        harvester = _harvester(server, sleeps)
        with pytest.raises(OaiError) as err:
            list(harvester.list_records("arXiv"))
        assert err.value.code == "badResumptionToken"
        with pytest.raises(ValueError, match="unknown metadataPrefix"):
            list(harvester.list_records("marc21"))
        server.script(
            "/oai",
            Reply(
                200, (OAI / "mikesaelim_arXivOAIHarvester" / "ErrorResponseNoRecordsMatch.xml").read_bytes()
            ),
        )
        pages = list(harvester.list_records("arXivRaw", set_="moo"))
        assert [len(p.records) for p in pages] == [0]


def test_harvest_gives_up_after_bounded_retries():
    sleeps: list[float] = []
    with ScriptedServer() as server:
        server.script("/oai", Reply(503, headers={"Retry-After": "1"}))
        harvester = _harvester(server, sleeps)
        with pytest.raises(Exception, match="503"):
            list(harvester.list_records("arXiv"))
        assert server.hits("/oai") == 5  # 1 + max_retries


IDENTIFY = b"""<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2025-01-01T00:00:00Z</responseDate>
<request verb="Identify">http://export.arxiv.org/oai2</request><Identify><repositoryName>arXiv</repositoryName>
<baseURL>http://export.arxiv.org/oai2</baseURL><protocolVersion>2.0</protocolVersion>
<adminEmail>help@arxiv.org</adminEmail><earliestDatestamp>2007-05-23</earliestDatestamp>
<deletedRecord>persistent</deletedRecord><granularity>YYYY-MM-DD</granularity></Identify></OAI-PMH>"""


def test_identify_reports_earliest_datestamp():
    with ScriptedServer() as server:
        server.script("/oai", Reply(200, IDENTIFY))
        info = _harvester(server, []).identify()
        assert "verb=Identify" in server.seen("/oai")[0].query
    assert info["earliestDatestamp"] == "2007-05-23" and info["granularity"] == "YYYY-MM-DD"


# ----------------------------------------------------------------------------- landing zone


def test_landing_zone_assigns_records_by_datestamp(shared_landing, tmp_path):
    zone = LandingZone(shared_landing)
    days = zone.datestamps(cache=tmp_path / "index.json")
    assert sum(days.values()) == 41 and len(days) == 30
    assert days["2007-03-31"] == days["2007-04-01"] == days["2007-04-02"] == 4
    found = zone.read_days(["2007-04-01", "2007-04-09"], cache=tmp_path / "index.json")
    assert len(found.records["2007-04-01"]) == 4 and len(found.records["2007-04-09"]) == 3
    assert found.files == {"2007-04-01": ["2007-04-01.xml"], "2007-04-09": ["2007-04-09.xml"]}  # only those
    assert not found.failures


def test_landing_zone_dedupes_and_reports_unreadable_pages(tmp_path):
    oai = tmp_path / "oai"
    oai.mkdir()
    (oai / "a.xml").write_bytes(_ENVELOPE % (_record("2001.00001") + _record("2001.00002")))
    (oai / "b.xml").write_bytes(_ENVELOPE % _record("2001.00001", title="Newer title"))
    (oai / "c.xml").write_bytes((_ENVELOPE % (_record("2001.00003") + _record("2001.00004")))[:-60])
    found = LandingZone(tmp_path).read_days(["2020-01-02"])
    rows = {r.id: r for r in found.records["2020-01-02"]}
    assert set(rows) == {"2001.00001", "2001.00002", "2001.00003"}  # 00004 was cut off
    assert rows["2001.00001"].title == "Newer title"  # the later file wins at equal version
    assert found.duplicates_dropped == {"2020-01-02": 1}
    (failure,) = [f for f in found.failures if f.position == -1]
    assert failure.source == "oai/c.xml" and failure.datestamp == "2020-01-02"  # relative to the zone
    assert failure.reason.startswith("unreadable page: not well-formed XML") and "c.xml" not in failure.reason
    assert isinstance(failure, FailedRecord)


# ----------------------------------------------------------------------------- fast paths = slow paths


def _dumped(data: bytes, source: str):
    page, records, failed = read_page(data, source)
    return (
        page.response_date,
        page.request,
        page.resumption,
        page.warnings,
        [(r.model_dump(), sorted(r.model_fields_set)) for r in records],
        [f.model_dump() for f in failed],
    )


def test_whole_page_parse_equals_streaming_on_real_pages(shared_data, shared_landing, monkeypatch):
    import corpus.ingest.oai as oai

    pages = [ARXIV_RAW, OAI_DC, *HEPCRAWL, *sorted((shared_landing / "oai").glob("*.xml"))]
    assert len(pages) > 20
    whole = {p: _dumped(p.read_bytes(), p.name) for p in pages}
    assert all(oai._whole_page(p.read_bytes()) is not None for p in pages)  # the fast path was taken
    monkeypatch.setattr(oai, "WHOLE_PAGE_MAX_BYTES", 0)  # force the streaming path
    for p in pages:
        assert _dumped(p.read_bytes(), p.name) == whole[p], p.name


def test_pages_the_whole_page_path_must_leave_to_streaming():
    import corpus.ingest.oai as oai

    ok = _ENVELOPE % _record()
    assert oai._whole_page(ok) is not None
    nested = _ENVELOPE % _record().replace(b"</metadata>", b"</metadata><error code='x'>x</error>")
    latin1 = ok.replace(b'encoding="UTF-8"', b'encoding="ISO-8859-1"')
    bom = b"\xef\xbb\xbf" + ok
    for data in (nested, latin1, bom, ok[:-40]):
        assert oai._whole_page(data) is None
    with pytest.raises(OaiError, match="x"):  # the streaming path still sees the nested error
        read_page(nested, "nested.xml")


@pytest.mark.parametrize(
    "bad",
    [
        b"\xc0\x80",
        b"\xe0\x80\x80",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
        b"\xff",
        b"\x80",
        b"\xe2\x82",
        b"\xe9",
    ],
)
def test_libxml2_rejects_invalid_utf8_so_the_whole_page_path_never_reads_it(bad):
    import corpus.ingest.oai as oai

    for title in (b"Caf" + bad, b"x<!--" + bad + b"-->y", b"<![CDATA[" + bad + b"]]>"):
        data = _ENVELOPE % _record().replace(b"A title", title)
        assert oai._whole_page(data) is None
        page, records, _ = read_page(data, "bad.xml")
        assert any("invalid UTF-8" in w for w in page.warnings)
        assert [r.id for r in records] == ["2001.00001"]
        assert ("\ufffd" in records[0].title) == (b"<!--" not in title)  # comments are dropped


def test_normalize_ws_equals_split_join_for_every_whitespace_character():
    import sys

    from corpus.ingest.records import normalize_ws

    spaces = [chr(i) for i in range(sys.maxunicode + 1) if chr(i).isspace()]
    assert all(not c.isprintable() for c in spaces if c != " ")  # what the fast path relies on
    samples = [
        "",
        " ",
        "a",
        " a b ",
        "a  b",
        "a\nb",
        "a \nb",
        "\n a\n",
        "x\u00a0y",
        "x\u2028y",
        "caf\u00e9 \u00e9t\u00e9",
    ]
    samples += [f"a{c}b" for c in spaces] + [f"{c}a b{c}" for c in spaces] + [f"a {c}b" for c in spaces]
    for text in samples:
        assert normalize_ws(text) == " ".join(text.split()), repr(text)
    assert normalize_ws(None) == ""


def test_a_record_left_unclosed_is_one_failure_row_at_its_place_in_the_page(shared_landing):
    """A real page whose first record lost its </record>: the record swallows the next one as
    its child, yet every other record is read, and the failure row names the broken record by
    its identifier and its place among the page's records (what the UI's preview shows)."""
    data = (shared_landing / "oai" / "2007-04-01.xml").read_bytes()
    whole = [r for r in iter_page(data, source="2007-04-01.xml") if isinstance(r, ArxivRecord)]
    broken = data.replace(b"</record>", b"", 1)
    items = list(iter_page(broken, source="broken.xml"))  # recovered record by record: no error
    failures = [i for i in items if isinstance(i, FailedRecord)]
    assert len(failures) == 1
    assert failures[0].position == 0 and failures[0].identifier == f"oai:arXiv.org:{whole[0].id}"
    assert "no </record> before the next record" in failures[0].reason
    assert sorted(r.id for r in items if isinstance(r, ArxivRecord)) == sorted(r.id for r in whole[1:])
