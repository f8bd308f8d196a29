"""The proxy in front of an upstream that frames its responses wrongly (D-PROXY-42).

RFC 9112 §6.1 and §6.3: ``Transfer-Encoding`` overrides ``Content-Length``; a ``204``,
a ``304``, a response to ``HEAD`` and a ``1xx`` carry no body whatever their
``Content-Length`` says; a status is three digits from 100 to 599. The upstream here is
a raw socket on loopback (``agents.raw_server``) that serves the Stonework card and
proposals honestly and answers every other path with the bytes a test gives; the proxy
is served as ``proxy`` serves it (``server_config``). Every case must give the client a
well-framed response (or a ``502``) and the log no traceback and no error.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest

from agents import raw_server
from support.recorder import Handler, Hostile, proxy_served

CARD = "/.well-known/agent-card.json"


@contextmanager
def hostile_proxy(other: Handler, **options: Any) -> Iterator[tuple[str, int]]:
    """A proxy in front of a :class:`Hostile` upstream; yields its host and port."""
    handler = Hostile(other)
    with raw_server(handler) as origin:
        handler.origin = origin
        with proxy_served(origin, poll=0, **options) as proxy:
            parts = urlsplit(proxy)
            assert parts.hostname is not None and parts.port is not None
            yield parts.hostname, parts.port


def sends(wire: bytes) -> Handler:
    """Answer with ``wire`` as it is, then close."""

    def other(conn: socket.socket, head: bytes) -> None:
        conn.sendall(wire)

    return other


def exchange(address: tuple[str, int], method: str = "GET", target: str = "/thing") -> bytes:
    """One request on its own connection; everything the proxy sends until it closes."""
    with socket.create_connection(address, timeout=20) as conn:
        conn.sendall(f"{method} {target} HTTP/1.1\r\nHost: proxy\r\n"
                     "Connection: close\r\n\r\n".encode())  # fmt: skip
        out = b""
        while chunk := conn.recv(65536):
            out += chunk
        return out


def parsed(raw: bytes, method: str = "GET") -> tuple[int, dict[bytes, bytes], bytes]:
    """Status, header fields and the body as a client reads it (chunked decoded), with
    the framing checked: nothing after the message, no length that is not the body's."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    fields: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        assert name.lower() not in fields, f"{name!r} twice"
        fields[name.lower()] = value.strip()
    assert not (b"content-length" in fields and b"transfer-encoding" in fields), fields
    if method == "HEAD" or status in (204, 304):
        assert rest == b"", rest[:80]
        return status, fields, b""
    if fields.get(b"transfer-encoding") == b"chunked":
        body = b""
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                assert rest == b"\r\n", rest[:80]
                return status, fields, body
            body, rest = body + rest[:size], rest[size + 2 :]
    length = int(fields[b"content-length"])
    assert len(rest) == length, (len(rest), length)
    return status, fields, rest


@pytest.fixture
def quiet(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    """The test's log holds no traceback and no error (a warning per upstream fault is
    fine: it says what upstream did). uvicorn's own log does not propagate to the root
    logger: it is read where its handler writes, stderr."""
    caplog.set_level(logging.INFO)
    yield
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, [r.getMessage() for r in bad]
    err = capsys.readouterr().err
    assert "Traceback" not in err and "ERROR" not in err, err[-2000:]


# RFC 9112 §6.3 (3): Transfer-Encoding wins; the length goes, the body goes on chunked.
CHUNKED = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"


@pytest.mark.parametrize("length", [b"11", b"3", b"1000", b"0"])
def test_transfer_encoding_with_a_content_length_goes_on_chunked_without_it(
    length: bytes, quiet: None
) -> None:
    wire = (b"HTTP/1.1 200 OK\r\nContent-Length: " + length
            + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKED)  # fmt: skip
    with hostile_proxy(sends(wire)) as proxy:
        status, fields, body = parsed(exchange(proxy))
    assert (status, body) == (200, b"hello world")
    assert b"content-length" not in fields


@pytest.mark.parametrize("status", [204, 304])
@pytest.mark.parametrize("length", [b"0", b"10", b"100000"])
def test_a_204_or_304_with_a_content_length_is_passed_on_without_a_body(
    status: int, length: bytes, quiet: None
) -> None:
    # The proxy used to pass the length on and send no body: the server in front raised
    # "Response content shorter than Content-Length", a traceback a request.
    wire = b'HTTP/1.1 %d X\r\nContent-Length: %s\r\nETag: "e"\r\n\r\n' % (status, length)
    with hostile_proxy(sends(wire)) as proxy:
        for _ in range(5):
            got, fields, _ = parsed(exchange(proxy))
            assert got == status
            assert b"content-length" not in fields and b"transfer-encoding" not in fields
            assert fields[b"etag"] == b'"e"'


def test_a_204_that_sends_bytes_anyway_is_passed_on_without_them(quiet: None) -> None:
    wire = b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello"
    with hostile_proxy(sends(wire)) as proxy:
        status, _, _ = parsed(exchange(proxy))
    assert status == 204


def test_a_head_response_keeps_its_length_and_has_no_body(quiet: None) -> None:
    # RFC 9110 §9.3.2: the GET's Content-Length, no content.
    wire = b"HTTP/1.1 200 OK\r\nContent-Length: 12345\r\n\r\n"
    with hostile_proxy(sends(wire)) as proxy:
        status, fields, _ = parsed(exchange(proxy, "HEAD"), "HEAD")
    assert (status, fields[b"content-length"]) == (200, b"12345")


def test_a_head_response_with_chunked_framing_has_no_body(quiet: None) -> None:
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n"
    with hostile_proxy(sends(wire)) as proxy:
        status, fields, _ = parsed(exchange(proxy, "HEAD"), "HEAD")
    assert status == 200 and b"content-length" not in fields


@pytest.mark.parametrize(
    "interim", [b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
                b"HTTP/1.1 100 Continue\r\nContent-Length: 50\r\n\r\n"],
)  # fmt: skip
def test_interim_responses_carry_no_body_and_the_final_one_is_passed_on(
    interim: bytes, quiet: None
) -> None:
    wire = interim + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    with hostile_proxy(sends(wire)) as proxy:
        status, _, body = parsed(exchange(proxy))
    assert (status, body) == (200, b"ok")


@pytest.mark.parametrize(
    "wire",
    [
        b"HTTP/1.1 600 Beyond\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 999 Nine\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 700 X\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKED,
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",  # and then nothing: no final response
        b"HTTP/1.1 099 Low\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 20 Two\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 2000 Four\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok",
        b"nonsense\r\n\r\n",
        b"",
    ],
)
def test_an_unusable_status_or_framing_is_a_502(wire: bytes, quiet: None) -> None:
    # A status outside 100-599 was a KeyError in the server in front: the client got
    # no byte at all and the log a traceback.
    with hostile_proxy(sends(wire)) as proxy:
        for _ in range(3):
            status, _, _ = parsed(exchange(proxy))
            assert status == 502


@pytest.mark.parametrize(
    "wire",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",  # then closed
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",  # no last chunk
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n",
    ],
)
def test_a_body_cut_short_ends_the_response_short_without_a_traceback(
    wire: bytes, quiet: None
) -> None:
    with hostile_proxy(sends(wire)) as proxy:
        raw = exchange(proxy)
    assert raw.startswith(b"HTTP/1.1 200 ")
    head, _, rest = raw.partition(b"\r\n\r\n")
    if b"content-length: 100" in head.lower():
        assert len(rest) < 100  # short, as upstream's: never padded, never "complete"
    else:
        assert not rest.endswith(b"0\r\n\r\n")  # no last chunk: the client sees the cut


def test_a_body_longer_than_its_length_is_cut_at_the_length(quiet: None) -> None:
    wire = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokAND-MORE"
    with hostile_proxy(sends(wire)) as proxy:
        status, _, body = parsed(exchange(proxy))
    assert (status, body) == (200, b"ok")


@pytest.mark.parametrize(
    "wire",
    [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"z" * 200_000,
        b"HTTP/1.0 200 OK\r\n\r\n" + b"z" * 200_000,
    ],
)
def test_a_body_delimited_by_the_close_is_passed_on_whole(wire: bytes, quiet: None) -> None:
    # RFC 9112 §6.3 (8): no length and no chunking: the body ends where upstream closes;
    # the proxy reads it to the end (its reader sees the end after the last byte).
    with hostile_proxy(sends(wire)) as proxy:
        status, _, body = parsed(exchange(proxy))
    assert (status, body) == (200, b"z" * 200_000)
