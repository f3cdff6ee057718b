"""corpus.ingest.http.PoliteClient against the scripted loopback server (tests/http_server.py)."""

from __future__ import annotations

import email.utils
import time

import pytest
from http_server import Reply, ScriptedServer

from corpus.ingest.http import USER_AGENT, HttpError, PoliteClient, RetryPolicy, parse_retry_after

BODY = b"%PDF-1.4\n" + bytes(range(256)) * 64 + b"\n%%EOF\n"


class FakeTime:
    """Injected clock/sleep: sleeping advances the clock, nothing really waits."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


@pytest.fixture
def server():
    with ScriptedServer(max_lifetime_s=60) as srv:
        yield srv
        assert not [e for e in srv.errors if "budget" in e], srv.errors


def make_client(fake: FakeTime, min_interval_s: float = 0.0, retries: int = 3, **kw) -> PoliteClient:
    return PoliteClient(
        min_interval_s=min_interval_s,
        timeout_s=kw.pop("timeout_s", 5.0),
        retry=RetryPolicy(max_retries=retries, backoff_base_s=1.0, backoff_max_s=8.0),
        sleep=fake.sleep,
        clock=fake.clock,
        **kw,
    )


def test_spacing_with_injected_clock(server):
    server.serve("/a", b"ok")
    fake = FakeTime()
    with make_client(fake, min_interval_s=3.0) as client:
        for _ in range(3):
            assert client.get(server.url("/a")).content == b"ok"
    # no wall time passes on the fake clock, so each later request waits the full interval
    assert fake.sleeps == [3.0, 3.0]
    assert server.hits("/a") == 3


def test_spacing_in_real_time_seen_by_server(server):
    server.serve("/a", b"ok")
    with PoliteClient(min_interval_s=0.3, timeout_s=5.0) as client:
        for _ in range(3):
            client.get(server.url("/a"))
    arrivals = [s.at for s in server.seen("/a")]
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    # the client spaces request starts by 0.3 s; arrival jitter on a busy machine is allowed for
    assert len(gaps) == 2 and min(gaps) >= 0.2 and sum(gaps) >= 0.55, gaps


def test_one_connection_and_user_agent(server):
    server.serve("/a", b"ok")
    fake = FakeTime()
    with make_client(fake) as client:
        for _ in range(4):
            client.get(server.url("/a"))
    assert server.connections == 1  # keep-alive, max_connections=1
    agents = {s.headers.get("User-Agent") for s in server.seen()}
    assert agents == {USER_AGENT}
    assert "corpus-pipeline" in USER_AGENT


def test_503_retry_after_seconds(server):
    server.script("/a", Reply(503, b"busy", {"Retry-After": "7"}), Reply(200, b"ok"))
    fake = FakeTime()
    with make_client(fake, min_interval_s=3.0) as client:
        assert client.get(server.url("/a")).content == b"ok"
    assert fake.sleeps == [7.0]  # 7 s >= the 3 s interval, so no extra spacing sleep
    assert server.hits("/a") == 2


def test_503_retry_after_http_date(server):
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.script("/a", Reply(503, b"busy", {"Retry-After": when}), Reply(200, b"ok"))
    fake = FakeTime()
    with make_client(fake) as client:
        assert client.get(server.url("/a")).content == b"ok"
    assert len(fake.sleeps) == 1 and 28.0 <= fake.sleeps[0] <= 30.5, fake.sleeps


def test_retry_after_capped(server):
    server.script("/a", Reply(503, b"", {"Retry-After": "86400"}), Reply(200, b"ok"))
    fake = FakeTime()
    client = PoliteClient(
        min_interval_s=0,
        retry=RetryPolicy(max_retries=2, max_retry_after_s=60),
        sleep=fake.sleep,
        clock=fake.clock,
    )
    with client:
        client.get(server.url("/a"))
    assert fake.sleeps == [60.0]


def test_500s_retried_with_backoff_then_success(server):
    server.script("/a", Reply(500), Reply(502), Reply(200, b"ok"))
    fake = FakeTime()
    with make_client(fake) as client:
        assert client.get(server.url("/a")).content == b"ok"
    assert fake.sleeps == [1.0, 2.0]  # backoff_base * 2**attempt
    assert server.hits("/a") == 3


def test_retries_bounded_then_http_error(server):
    server.script("/a", Reply(503, b"down"))
    fake = FakeTime()
    with make_client(fake, retries=3) as client, pytest.raises(HttpError) as info:
        client.get(server.url("/a"))
    assert info.value.status == 503
    assert server.hits("/a") == 4  # the first attempt + 3 retries, no more
    assert fake.sleeps == [1.0, 2.0, 4.0]


def test_404_not_retried(server):
    fake = FakeTime()
    with make_client(fake) as client, pytest.raises(HttpError) as info:
        client.get(server.url("/nothing"))
    assert info.value.status == 404
    assert server.hits("/nothing") == 1 and fake.sleeps == []


def test_dropped_connection_retried(server):
    server.script("/a", Reply(drop=True), Reply(200, b"ok"))
    fake = FakeTime()
    with make_client(fake) as client:
        assert client.get(server.url("/a")).content == b"ok"
    assert server.hits("/a") == 2 and fake.sleeps == [1.0]


def test_dropped_connection_forever_is_bounded(server):
    server.script("/a", Reply(drop=True))
    fake = FakeTime()
    with make_client(fake, retries=2) as client, pytest.raises(HttpError) as info:
        client.get(server.url("/a"))
    assert info.value.status is None
    assert server.hits("/a") == 3


def test_read_timeout_retried(server):
    server.script("/a", Reply(200, b"late", delay_s=1.0), Reply(200, b"ok"))
    fake = FakeTime()
    with make_client(fake, timeout_s=0.3) as client:
        assert client.get(server.url("/a")).content == b"ok"
    assert server.hits("/a") == 2


def test_download_writes_whole_file(server, tmp_path):
    server.script("/f", Reply(503, headers={"Retry-After": "0"}), Reply(200, BODY))
    dest = tmp_path / "out" / "f.pdf"
    fake = FakeTime()
    with make_client(fake) as client:
        assert client.download(server.url("/f"), dest) == len(BODY)
    assert dest.read_bytes() == BODY
    assert sorted(p.name for p in dest.parent.iterdir()) == ["f.pdf"]


def test_download_truncated_once_then_whole(server, tmp_path):
    server.script("/f", Reply(200, BODY, truncate_to=1000), Reply(200, BODY))
    dest = tmp_path / "f.pdf"
    fake = FakeTime()
    with make_client(fake) as client:
        assert client.download(server.url("/f"), dest) == len(BODY)
    assert dest.read_bytes() == BODY and server.hits("/f") == 2


def test_download_truncated_always_leaves_no_file(server, tmp_path):
    server.script("/f", Reply(200, BODY, truncate_to=len(BODY) // 2))
    dest = tmp_path / "f.pdf"
    fake = FakeTime()
    with make_client(fake, retries=2) as client, pytest.raises(HttpError):
        client.download(server.url("/f"), dest)
    assert list(tmp_path.iterdir()) == []  # neither dest nor a .part file
    assert server.hits("/f") == 3


def test_download_truncated_keeps_old_file(server, tmp_path):
    server.script("/f", Reply(200, BODY, truncate_to=10))
    dest = tmp_path / "f.pdf"
    dest.write_bytes(b"old")
    fake = FakeTime()
    with make_client(fake, retries=1) as client, pytest.raises(HttpError):
        client.download(server.url("/f"), dest)
    assert dest.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.pdf"]


def test_download_404_raises_without_file(server, tmp_path):
    dest = tmp_path / "f.pdf"
    fake = FakeTime()
    with make_client(fake) as client, pytest.raises(HttpError) as info:
        client.download(server.url("/missing"), dest)
    assert info.value.status == 404
    assert list(tmp_path.iterdir()) == []


def test_parse_retry_after():
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(" 5 ") == 5.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    now = 1_700_000_000.0
    assert parse_retry_after(email.utils.formatdate(now + 90, usegmt=True), now=now) == pytest.approx(
        90, abs=1
    )
    assert parse_retry_after(email.utils.formatdate(now - 90, usegmt=True), now=now) == 0.0


def test_server_is_bounded():
    with ScriptedServer(max_requests=2) as srv:
        srv.serve("/a", b"ok")
        fake = FakeTime()
        with make_client(fake, retries=1) as client:
            client.get(srv.url("/a"))
            client.get(srv.url("/a"))
            with pytest.raises(HttpError):
                client.get(srv.url("/a"))
        assert any("budget" in e for e in srv.errors)


# -- redirects: followed by PoliteClient itself, each hop spaced, loops bounded -------------------
def test_redirect_loop_becomes_http_error(server):
    server.script("/a", Reply(302, headers={"Location": "/a"}))
    fake = FakeTime()
    with make_client(fake) as client, pytest.raises(HttpError):
        client.get(server.url("/a"))


def test_redirect_hops_are_spaced(server):
    server.script("/a", Reply(302, headers={"Location": "/b"}))
    server.serve("/b", b"ok")
    fake = FakeTime()
    with make_client(fake, min_interval_s=3.0) as client:
        assert client.get(server.url("/a")).content == b"ok"
    assert server.hits("/a") == 1 and server.hits("/b") == 1
    assert fake.sleeps == [3.0]
