"""The listening server's second round of bounds (server/listen.py; D-SERVE-20,
7 and 10, D-CLI-9), over real loopback sockets: trailer sections bounded and never
read as headers (PROFILE §3.9), one client's share of the connections, protocol upgrades
refused without a traceback, and a ``Date`` on the server's own refusals. Every loop is
bounded in count; nothing asserts a duration."""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from typing import Any

import pytest
import uvicorn

from a2a_interview.net import sockets
from a2a_interview.server import listen
from a2a_interview.spec import INTERVIEW_URI
from support.servers import in_thread
from support.sockets import bounded, connect, ordinary, read_all, send_until_refused

CHUNKED_HEAD = (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip


class Recording:
    """An app that reads the whole body, then records the request's headers as it sees
    them *after* the body (uvicorn appended trailer fields to that same list)."""

    def __init__(self) -> None:
        self.headers: list[list[tuple[bytes, bytes]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        self.headers.append(list(scope["headers"]))
        body = b"%d" % size
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"%d" % len(body))]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})


def exchange(address: tuple[str, int], request: bytes) -> bytes:
    conn = connect(address)
    try:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        return read_all(conn)
    finally:
        conn.close()


def connect_from(source: str, address: tuple[str, int]) -> socket.socket:
    """A connection from loopback address ``source`` (all of 127/8 is this machine)."""
    conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    conn.settimeout(10)
    conn.bind((source, 0))
    conn.connect(address)
    return conn


# --- trailers (finding 1) -------------------------------------------------------------------


@pytest.mark.parametrize("split", [False, True])
def test_trailer_fields_never_reach_the_app_as_headers(split: bool) -> None:
    # D-SERVE-20, PROFILE §3.9: uvicorn appended every trailer field to
    # scope["headers"], so an app reading headers after the body saw an A2A-Extensions
    # trailer as a header (it activated). In one read and split across reads.
    app = Recording()
    trailers = (b"A2A-Extensions: " + INTERVIEW_URI.encode() + b"\r\n"
                b"X-A2A-Extensions: " + INTERVIEW_URI.encode() + b"\r\nX-T: 1\r\n\r\n")  # fmt: skip
    body = b"5\r\nhello\r\n0\r\n" + trailers
    with bounded(listen.Bounds(), app) as address:
        if split:
            conn = connect(address)
            conn.sendall(CHUNKED_HEAD + b"5\r\nhello\r\n")
            for piece in (b"0\r\n", trailers[:20], trailers[20:]):
                conn.sendall(piece)
            conn.shutdown(socket.SHUT_WR)
            response = read_all(conn)
            conn.close()
        else:
            response = exchange(address, CHUNKED_HEAD + body)
    assert response.startswith(b"HTTP/1.1 200 ") and response.endswith(b"\r\n\r\n5")
    [headers] = app.headers
    names = [name for name, _ in headers]
    assert names == [b"host", b"content-type", b"transfer-encoding"]


@pytest.mark.parametrize(
    "flood",
    [
        pytest.param(b"X-T: " + b"a" * 1000 + b"\r\n", id="many-fields"),
        pytest.param(b"a" * 65536, id="one-endless-value"),
    ],
)
def test_a_trailer_flood_is_refused_with_431_after_the_bound(flood: bytes) -> None:
    # D-SERVE-20: 600 MiB of trailers were read whole (the head bound counted only
    # before the body). Now the trailer section counts like a head: 431 past 64 KiB.
    app = Recording()
    with bounded(listen.Bounds(), app) as address:
        conn = connect(address)
        start = CHUNKED_HEAD + b"5\r\nhello\r\n0\r\n" + (b"X-Big: " if len(flood) > 2000 else b"")
        sent = send_until_refused(conn, start, flood, 50_000)  # up to 50 MB or 3 GB
        response = read_all(conn)
        conn.close()
        assert response.startswith(b"HTTP/1.1 431 "), response[:100]
        assert sent < 50_000
        assert app.headers == []  # the request never reached the app whole
        assert ordinary(address) == 200


def test_a_chunked_body_with_small_trailers_and_extensions_is_served() -> None:
    # The bound is on what is not body: an ordinary chunked body, however long, is not.
    app = Recording()
    chunk = b"4000;ext=1\r\n" + b"a" * 0x4000 + b"\r\n"
    with bounded(listen.Bounds(), app) as address:
        response = exchange(address, CHUNKED_HEAD + chunk * 64 + b"0\r\nX-T: 1\r\n\r\n")
    assert response.endswith(b"\r\n\r\n%d" % (0x4000 * 64)), response[:200]


# --- a client's share of the connections (finding 7) --------------------------------------------


def test_one_client_cannot_take_every_connection() -> None:
    # D-SERVE-21: 1,001 sockets from one address sending partial heads left every
    # other client a 503. Now one client holds its share; the others are served.
    bounds = listen.Bounds(max_connections=40, max_client_connections=10, header_timeout=30)
    with bounded(bounds, Recording()) as address:
        hog = []
        for _ in range(60):
            conn = connect_from("127.0.0.2", address)
            conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Partial: ")
            hog.append(conn)
        refused = 0
        for conn in hog[10:]:
            with contextlib.suppress(TimeoutError):
                refused += read_all(conn).startswith(b"HTTP/1.1 503 ")
        assert refused == 50
        others = [connect_from("127.0.0.3", address) for _ in range(10)]
        statuses = [ordinary(address) for _ in range(20)]  # from 127.0.0.1
        assert statuses == [200] * 20
        for conn in hog + others:
            conn.close()


def test_the_default_share_is_a_tenth_and_0_means_none() -> None:
    assert listen.Bounds().client_share == 100
    assert listen.Bounds(max_connections=5).client_share == 1
    assert listen.Bounds(max_client_connections=0).client_share is None
    assert listen.Bounds(max_client_connections=7).client_share == 7
    with pytest.raises(ValueError, match="max_client_connections"):
        listen.Bounds(max_client_connections=-1)


def test_a_client_is_an_ipv4_address_or_an_ipv6_64() -> None:
    assert listen.client_of("192.0.2.7") == "192.0.2.7"
    assert listen.client_of("::ffff:192.0.2.7") == "192.0.2.7"
    assert listen.client_of("2001:db8:1:2::5") == listen.client_of("2001:db8:1:2:ffff::9")
    assert listen.client_of("2001:db8:1:2::5") != listen.client_of("2001:db8:1:3::5")
    assert listen.client_of("fe80::1%eth0") == "fe80::/64"
    assert listen.client_of("") == ""


# --- protocol upgrades (finding 10) -------------------------------------------------------------


UPGRADES = {
    "h2c-with-body": b"POST / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
    b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nContent-Length: 5\r\n\r\nhello",
    "h2c": b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
    b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
    "websocket": b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    "websocket-chunked": b"POST / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, upgrade\r\n"
    b"Upgrade: WebSocket\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "connect": b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
}


@pytest.mark.parametrize("name", sorted(UPGRADES))
def test_every_protocol_upgrade_is_refused_cleanly(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    # D-SERVE-22: `Upgrade: h2c` with a body ended in a 500 and a logged
    # traceback (the parser stops at the upgrade, the body was dropped); a WebSocket
    # upgrade reached the app as a plain GET. Now 400, before any app sees it.
    app = Recording()
    with caplog.at_level(logging.DEBUG), bounded(listen.Bounds(), app) as address:
        response = exchange(address, UPGRADES[name])
        assert ordinary(address) == 200
    assert response.startswith(b"HTTP/1.1 400 "), response[:200]
    assert response.endswith(b"protocol upgrade not supported")
    assert b"\r\nconnection: close\r\n" in response
    assert len(app.headers) == 1  # only the ordinary request that followed reached the app
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]


def test_an_upgrade_header_not_named_by_connection_is_ignored() -> None:
    # RFC 9110 §7.8: without `Connection: upgrade` no switch is asked for; the request
    # is served as HTTP/1.1, body included.
    app = Recording()
    with bounded(listen.Bounds(), app) as address:
        response = exchange(address, b"POST / HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\n"
                            b"Content-Length: 5\r\nConnection: close\r\n\r\nhello")  # fmt: skip
    assert response.startswith(b"HTTP/1.1 200 ") and response.endswith(b"\r\n\r\n5")


# --- Date on the server's own refusals (D-SERVE-22) ------------------------------------


def test_the_servers_own_refusals_carry_a_date_even_with_uvicorns_off() -> None:
    # RFC 9110 §6.6.1: an origin server with a clock sends Date. The proxy turns
    # uvicorn's Date off (upstream's passes through); the refusals listen.py writes
    # itself then carried none.
    options = {"date_header": False, "server_header": False}
    with bounded(listen.Bounds(max_connections=2), Recording(), **options) as address:
        big = exchange(address, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000)
        upgrade = exchange(address, UPGRADES["websocket"])
        held = [connect(address) for _ in range(2)]
        extra = connect(address)
        busy = read_all(extra)
        for conn in [*held, extra]:
            conn.close()
    for response in (big, upgrade, busy):
        head = response.partition(b"\r\n\r\n")[0].lower()
        assert b"\r\ndate: " in head, response[:200]
        value = head.split(b"\r\ndate: ")[1].split(b"\r\n")[0]
        assert value.endswith(b" gmt") and len(value) == 29


# --- demo serve, as users run it ----------------------------------------------------------------


def test_demo_serve_is_not_activated_by_a_trailer_and_dates_its_answers() -> None:
    # D-SERVE-20 (PROFILE §3.9) and D-CLI-9, in `demo serve` itself: an
    # A2A-Extensions trailer alone reached the interview as activation.
    from support.sockets import demo_serve

    call = b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}'
    act = b"A2A-Extensions: " + INTERVIEW_URI.encode() + b"\r\n"

    def ask(head: bytes, trailers: bytes) -> bytes:
        return (b"POST /a2a/jsonrpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Connection: close\r\n" + head + b"Transfer-Encoding: chunked\r\n\r\n"
                + b"%x\r\n" % len(call) + call + b"\r\n0\r\n" + trailers + b"\r\n")  # fmt: skip

    version = b"A2A-Version: 1.0\r\n"  # in the head either way (PROFILE §3.10)
    with demo_serve() as (_proc, address):
        by_trailer = exchange(address, ask(version, act))
        by_header = exchange(address, ask(act + version, b""))
    head, _, body = by_trailer.partition(b"\r\n\r\n")
    assert b"-32601" in body and b'"result"' not in body, by_trailer[:400]
    assert b"a2a-extensions" not in head.lower()
    assert b'"result"' in by_header and b"a2a-extensions" in by_header.lower()
    for response in (by_trailer, by_header):
        assert b"\r\ndate: " in response.partition(b"\r\n\r\n")[0].lower()


@pytest.mark.parametrize("stack", ["middleware", "sdk-starlette"])
def test_the_in_process_layers_are_not_activated_by_a_trailer(stack: str) -> None:
    # D-SERVE-20, PROFILE §3.9: served by the listening server, InterviewMiddleware
    # and the a2a-sdk route never see a trailer among the headers they read activation
    # from (stock uvicorn appends it there).
    from stacks import RPC, Spies, middleware_app, sdk_app

    spies = Spies()
    app = middleware_app(spies) if stack == "middleware" else sdk_app("starlette", spies)
    call = b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}'
    act = b"A2A-Extensions: " + INTERVIEW_URI.encode() + b"\r\n"

    def ask(head: bytes, trailers: bytes) -> bytes:
        return (b"POST " + RPC.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                b"Content-Type: application/json\r\n" + head
                + b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(call) + call
                + b"\r\n0\r\n" + trailers + b"\r\n")  # fmt: skip

    version = b"A2A-Version: 1.0\r\n"  # in the head either way (PROFILE §3.10)
    with bounded(listen.Bounds(), app) as address:
        by_trailer = exchange(address, ask(version, act))
        by_header = exchange(address, ask(act + version, b""))
    assert b'"result"' not in by_trailer and b"a2a-extensions" not in by_trailer.lower()
    assert b'"result"' in by_header and b"a2a-extensions" in by_header.lower()
    assert not spies.executor


def test_a_stock_uvicorn_command_line_can_serve_with_the_bounded_protocol() -> None:
    # Decisions D-SERVE-20: under stock uvicorn a trailer lands in scope["headers"];
    # `--http a2a_interview.server.listen:BoundedHttpProtocol` keeps the rule there too.
    app = Recording()
    config = uvicorn.Config(app, http="a2a_interview.server.listen:BoundedHttpProtocol",
                            log_level="error", lifespan="off", loop="asyncio")  # fmt: skip
    sock = sockets.bind("127.0.0.1", 0)
    sock.setblocking(False)
    with in_thread(config, [sock], start=10, stop=5):
        response = exchange(sock.getsockname()[:2], CHUNKED_HEAD + b"5\r\nhello\r\n0\r\n"
                            b"A2A-Extensions: " + INTERVIEW_URI.encode() + b"\r\n\r\n")  # fmt: skip
    assert response.startswith(b"HTTP/1.1 200 ")
    assert [name for name, _ in app.headers[0]] == [b"host", b"content-type",
                                                    b"transfer-encoding"]  # fmt: skip


def _held_for_a_reader_that_takes_nothing(bounds: listen.Bounds) -> int:
    """Bytes a streaming app gets handed on to the server for a client that never reads
    (4 KiB receive buffer), once the server stops taking more: what one slow reader
    costs the server in copies (D-SERVE-36)."""
    sent = [0]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        chunk = b"x" * 65536
        while sent[0] < 64 * 1024 * 1024:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            sent[0] += len(chunk)

    with bounded(bounds, app) as address:
        conn = socket.socket()
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.settimeout(10)
        conn.connect(address)
        try:
            conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            last, still = -1, 0
            for _ in range(100):  # at most 10 s: until the count holds for 1 s
                time.sleep(0.1)
                still = still + 1 if sent[0] == last else 0
                last = sent[0]
                if still >= 10:
                    break
            return last
        finally:
            conn.close()


def test_a_reader_that_takes_nothing_holds_no_more_than_the_send_buffer() -> None:
    # D-SERVE-36: each accepted socket's send buffer is fixed (256 KiB, which Linux
    # doubles for its bookkeeping), so a client that reads nothing costs the server that
    # plus the transport's 64 KiB high-water mark and a chunk, never the megabytes an
    # autotuned buffer grows to (2.8 MB measured here with --send-buffer 0); the bound
    # is given as 1 MiB to leave the kernel room.
    held = _held_for_a_reader_that_takes_nothing(listen.Bounds())
    assert 0 < held <= 1024 * 1024, held


def test_the_send_buffer_option_is_0_or_a_sane_size() -> None:
    # D-SERVE-36: 0 leaves the kernel's autotuning; anything else is 4 KiB..64 MiB.
    import argparse

    parser = argparse.ArgumentParser()
    listen.add_arguments(parser)
    assert listen.bounds_from_args(parser.parse_args([])).send_buffer == 256 * 1024
    assert listen.bounds_from_args(parser.parse_args(["--send-buffer", "0"])).send_buffer == 0
    for bad in ("100", "-1", str(65 * 1024 * 1024), "lots"):
        with pytest.raises(SystemExit):
            parser.parse_args(["--send-buffer", bad])
    with pytest.raises(ValueError):
        listen.Bounds(send_buffer=100)
