"""The interviewer's HTTP/1.1 exchanges (verifier/wire.py) against raw loopback servers
that answer with exact bytes: framing (RFC 9112 §6), keep-alive, bounds, the address
policy hook, and the interviewer's bounded decoding on top (D-VERIFY-23; STYLE
"Every network read has a size bound")."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import anyio
import pytest

from a2a_interview.net.failures import BodyTooLarge, EncodingRefused
from a2a_interview.verifier.client import ClientOptions, Interviewer, tls_context
from a2a_interview.verifier.wire import Pool, WireError, WireTooLarge

Answer = Callable[[bytes], bytes | None]  # request head+body -> response bytes (None: close)


async def loopback(host: str, port: int) -> list[str]:
    """A resolver seam: every name is 127.0.0.1."""
    return ["127.0.0.1"]


class _Server:
    def __init__(self, answer: Answer, close_after: bool) -> None:
        self.answer, self.close_after = answer, close_after
        self.connections = 0
        self.requests: list[bytes] = []
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                reply = self.answer(request)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


@asynccontextmanager
async def raw_server(answer: Answer, *, close_after: bool = False) -> AsyncIterator[_Server]:
    state = _Server(answer, close_after)
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    state.port = server.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        server.close()


def ok(body: bytes = b'{"ok":true}', extra: bytes = b"") -> Answer:
    return lambda _request: (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra
        + b"Content-Length: %d\r\n\r\n" % len(body) + body
    )  # fmt: skip


def run(coro: Callable[[], object]) -> None:
    anyio.run(coro)  # type: ignore[arg-type]


def test_keep_alive_one_connection_for_many_exchanges() -> None:
    async def main() -> None:
        async with raw_server(ok()) as server:
            pool = Pool(tls_context(), resolve=loopback)
            url = f"http://127.0.0.1:{server.port}/a2a/jsonrpc"
            for _ in range(20):
                response = await pool.exchange("POST", url, [], b"{}", max_bytes=1024)
                assert (response.status, response.body) == (200, b'{"ok":true}')
                assert response.peer == "127.0.0.1"
            await pool.aclose()
            assert server.connections == 1

    run(main)


def test_request_bytes_are_what_was_asked() -> None:
    async def main() -> None:
        async with raw_server(ok()) as server:
            pool = Pool(tls_context(), resolve=loopback)
            url = f"http://user:p%40ss@127.0.0.1:{server.port}/a/%7Bb%7D/./c?x=1"
            await pool.exchange("POST", url, [("A2A-Extensions", "u")], b"[]", max_bytes=64)
            await pool.aclose()
        head = server.requests[0].decode("latin-1")
        assert head.startswith("POST /a/%7Bb%7D/./c?x=1 HTTP/1.1\r\n")  # the target as given
        assert f"\r\nHost: 127.0.0.1:{server.port}\r\n" in head  # no userinfo in Host
        assert "\r\nAuthorization: Basic dXNlcjpwQHNz\r\n" in head  # user:p@ss, as httpx does
        assert "\r\nA2A-Extensions: u\r\n" in head and head.endswith("Content-Length: 2\r\n\r\n[]")

    run(main)


@pytest.mark.parametrize(
    ("reply", "body"),
    [
        # RFC 9112 §7.1: chunked, with an extension and a trailer
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n", b"abcde"),
        # RFC 9112 §6.3 rule 8: no length, the body ends with the connection
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil-eof", b"until-eof"),
        # an interim 100 response, then the real one
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", b"hi"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", b""),
    ],
)  # fmt: skip
def test_framing(reply: bytes, body: bytes) -> None:
    async def main() -> None:
        close = b"until-eof" in reply
        async with raw_server(lambda _r: reply, close_after=close) as server:
            pool = Pool(tls_context(), resolve=loopback)
            url = f"http://127.0.0.1:{server.port}/"
            response = await pool.exchange("GET", url, [], None, max_bytes=1024)
            assert response.body == body
            if not close:  # the connection stays usable after each framing
                again = await pool.exchange("GET", url, [], None, max_bytes=1024)
                assert again.body == body
                assert server.connections == 1
            await pool.aclose()

    run(main)


def test_a_connection_closed_while_idle_is_replaced_transparently() -> None:
    async def main() -> None:
        async with raw_server(ok(), close_after=True) as server:
            pool = Pool(tls_context(), resolve=loopback)
            url = f"http://127.0.0.1:{server.port}/"
            for _ in range(3):
                response = await pool.exchange("GET", url, [], None, max_bytes=1024)
                assert response.status == 200
                await anyio.sleep(0.05)  # let the server's close arrive
            await pool.aclose()
            assert server.connections == 3

    run(main)


@pytest.mark.parametrize(
    ("reply", "failure"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b"x" * 5000, WireTooLarge),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"1000\r\n" + b"x" * 4096 + b"\r\n0\r\n\r\n", WireTooLarge),
        (b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70_000 + b"\r\n\r\n", WireError),
        (b"SMTP ready\r\n\r\n", WireError),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", WireError),  # then closed
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", WireError),
    ],
)  # fmt: skip
def test_hostile_responses_fail_cleanly(reply: bytes, failure: type[Exception]) -> None:
    async def main() -> None:
        async with raw_server(lambda _r: reply, close_after=True) as server:
            pool = Pool(tls_context(), resolve=loopback)
            with pytest.raises(failure):
                await pool.exchange(
                    "GET", f"http://127.0.0.1:{server.port}/", [], None, max_bytes=1024
                )
            await pool.aclose()

    run(main)


def test_a_header_that_never_ends_is_refused_within_the_head_bound() -> None:
    # STYLE "Every network read has a size bound": httptools holds a header's value
    # whole until it ends, so a peer streaming one endless header was buffered without
    # bound (until the caller's timeout) before the per-header check could run.
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nX: ")
        try:
            for _ in range(64):  # 4 MiB of one header value, never ended
                writer.write(b"y" * 65536)
                await writer.drain()
            await anyio.sleep(30)
        except ConnectionError:
            pass
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        pool = Pool(tls_context(), resolve=loopback)
        try:
            with anyio.fail_after(10), pytest.raises(WireError, match="headers too large"):
                await pool.exchange("GET", f"http://127.0.0.1:{port}/", [], None, max_bytes=1024)
        finally:
            await pool.aclose()
            server.close()

    run(main)


def test_trailer_fields_are_never_response_headers() -> None:
    # D-SERVE-20 (PROFILE §3.9 read from the verifier's side): httptools reports
    # trailer fields like header fields, and they were appended to the response's
    # headers: an A2A-Extensions echo sent only as a trailer counted as the echo.
    reply = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
             b"A2A-Extensions: https://agentsow.com/extensions/a2a-interview/v1\r\n"
             b"Content-Type: text/html\r\n\r\n")  # fmt: skip

    async def main() -> None:
        async with raw_server(lambda _r: reply) as server:
            pool = Pool(tls_context(), resolve=loopback)
            url = f"http://127.0.0.1:{server.port}/"
            response = await pool.exchange("GET", url, [], None, max_bytes=1024)
            await pool.aclose()
        assert response.body == b"{}"
        assert [name for name, _ in response.headers] == ["content-type", "transfer-encoding"]

    run(main)


@pytest.mark.parametrize(
    "piece",
    [
        pytest.param(b"X-T: " + b"a" * 1000 + b"\r\n", id="many-fields"),
        pytest.param(b"a" * 65536, id="one-endless-field"),
    ],
)
def test_a_trailer_section_that_never_ends_is_refused_within_the_head_bound(piece: bytes) -> None:
    # D-SERVE-20: the head bound stopped at the head; a peer streaming trailer
    # fields after a chunked body was read until the caller's timeout.
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
                     + (b"X-Big: " if len(piece) > 2000 else b""))  # fmt: skip
        try:
            for _ in range(4096):  # up to 4 MiB or 256 MiB, never ended
                writer.write(piece)
                await writer.drain()
            await anyio.sleep(30)
        except ConnectionError:
            pass
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        pool = Pool(tls_context(), resolve=loopback)
        try:
            with anyio.fail_after(20), pytest.raises(WireError, match="headers too large"):
                await pool.exchange("GET", f"http://127.0.0.1:{port}/", [], None, max_bytes=1024)
        finally:
            await pool.aclose()
            server.close()

    run(main)


def test_admit_judges_what_a_name_resolved_to_before_any_connection() -> None:
    # D-NET-5: the addresses judged are the addresses connected to, and a
    # refused one is never contacted (no open/closed port to tell apart).
    class Refused(Exception):
        pass

    seen: list[list[str]] = []

    def admit(addresses: Sequence[str]) -> None:
        seen.append(list(addresses))
        if "10.0.0.1" in addresses:
            raise Refused

    async def two(host: str, port: int) -> list[str]:
        return ["127.0.0.1", "10.0.0.1"]  # one bad answer spoils the lookup

    async def main() -> None:
        async with raw_server(ok()) as server:
            refusing = Pool(tls_context(), resolve=two, admit=admit)
            with pytest.raises(Refused):
                await refusing.exchange("GET", f"http://agent.example:{server.port}/", [],
                                        None, max_bytes=64)  # fmt: skip
            assert server.connections == 0  # nothing was contacted
            allowing = Pool(tls_context(), resolve=loopback, admit=admit)
            response = await allowing.exchange(
                "GET", f"http://agent.example:{server.port}/", [], None, max_bytes=64
            )
            assert response.peer == "127.0.0.1"
            assert f"Host: agent.example:{server.port}" in server.requests[0].decode()
            await allowing.aclose()

    run(main)
    assert seen == [["127.0.0.1", "10.0.0.1"], ["127.0.0.1"]]


def test_no_listener_is_a_wire_error() -> None:
    async def main() -> None:
        async with raw_server(ok()) as server:
            port = server.port
        pool = Pool(tls_context(), resolve=loopback)
        with pytest.raises(WireError):
            await pool.exchange("GET", f"http://127.0.0.1:{port}/", [], None, max_bytes=64)

    run(main)


# --- the interviewer's decoding of what wire returns ------------------------------------------


def _interview(reply: bytes, limit: int = 1 << 20) -> bytes | type[Exception]:
    result: list[bytes | type[Exception]] = []

    async def main() -> None:
        async with raw_server(lambda _r: reply) as server:
            options = ClientOptions(max_bytes=limit, timeout=5)
            url = f"http://127.0.0.1:{server.port}/"
            async with Interviewer(options, target=url) as client:
                try:
                    response = await client.get(url)
                    result.append(response.body)
                except (BodyTooLarge, EncodingRefused) as exc:
                    result.append(type(exc))

    anyio.run(main)
    return result[0]


def _encoded(body: bytes, encoding: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Encoding: " + encoding
            + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)  # fmt: skip


def test_gzip_and_deflate_are_decoded() -> None:
    document = b'{"name":"x"}' * 10
    assert _interview(_encoded(gzip.compress(document), b"gzip")) == document
    assert _interview(_encoded(zlib.compress(document), b"deflate")) == document
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    bare = raw.compress(document) + raw.flush()
    assert _interview(_encoded(bare, b"deflate")) == document  # deflate without zlib framing


def test_a_bomb_ends_too_large_within_the_bound() -> None:
    # D-NET-1: inflated with an output cap, so the bound holds before memory grows.
    import tracemalloc

    bomb = gzip.compress(b"\0" * (64 << 20), 9)
    tracemalloc.start()
    outcome = _interview(_encoded(bomb, b"gzip"), limit=1 << 20)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert outcome is BodyTooLarge
    assert peak < 16 << 20, peak  # the 64 MiB inside was never inflated whole


@pytest.mark.parametrize(
    ("body", "coding"),
    [
        (gzip.compress(gzip.compress(b"{}")), b"gzip, gzip"),  # stacked: refused unread
        (b"abc", b"br"),
        (b"not gzip", b"gzip"),
        (gzip.compress(b"{}")[:-4], b"gzip"),  # truncated
    ],
)
def test_stacked_unknown_or_broken_codings_are_refused(body: bytes, coding: bytes) -> None:
    assert _interview(_encoded(body, coding)) is EncodingRefused
