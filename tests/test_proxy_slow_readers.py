"""Slow readers through the proxy: what one stream may cost, and for how long.

D-PROXY-40: upstream is read no further ahead than the client takes (a bounded buffer
per upstream connection), and a departed client's buffers are freed at once, with no
reference cycle left for the garbage collector. D-SERVE-30: a client that takes nothing
for the write timeout is disconnected, and its upstream stream closed. D-PROXY-41: one
client holds at most its share of the upstream connections.

The proxy runs as ``proxy`` runs it: ``server_config`` on the event loop uvicorn picks
(uvloop when installed, where the read-ahead was megabytes a read). The upstream is a
raw socket on loopback (:class:`test_proxy_framing.Hostile`) that floods or drips and
records how its streams ended. Nothing here measures time: the waits are bounds.
"""

from __future__ import annotations

import contextlib
import gc
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn

from a2a_interview.server.listen import Bounds
from a2a_interview.server.proxy import build_proxy, server_config
from a2a_interview.server.proxy.connections import READ_AHEAD
from agents import raw_server
from support.ports import free_socket
from support.recorder import Hostile
from support.servers import in_thread

MiB = 1 << 20
BIG = 64 * MiB
PIECE = b"x" * 65536
SSE_PIECE = b"data: " + b"y" * 4000 + b"\n\n"


@dataclass
class Streams:
    """What the upstream sent on each pass-through stream, and how each ended."""

    sent: list[int] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)  # "proxy closed", "timed out", "done"
    lock: threading.Lock = field(default_factory=threading.Lock)
    changed: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)

    def total(self) -> int:
        with self.lock:
            return sum(self.sent)

    def wait_ended(self, count: int, timeout: float) -> list[str]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.ended) >= count, timeout)
            return list(self.ended)

    def wait_stalled(self, quiet: float = 1.0, timeout: float = 20.0) -> int:
        """The bytes sent once no stream has sent any for ``quiet`` seconds (at most
        ``timeout`` seconds of waiting)."""
        deadline = time.monotonic() + timeout
        last = -1
        while time.monotonic() < deadline:
            now = self.total()
            if now == last:
                return now
            last = now
            time.sleep(quiet)
        return self.total()


def flooding(streams: Streams, sse: bool) -> Callable[[socket.socket, bytes], None]:
    """64 MiB with a Content-Length, or an endless chunked event stream, sent as fast as
    the proxy takes it."""
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" if sse else
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % BIG)  # fmt: skip
    piece = b"%x\r\n%s\r\n" % (len(SSE_PIECE), SSE_PIECE) if sse else PIECE

    def other(conn: socket.socket, _head: bytes) -> None:
        conn.settimeout(60)  # longer than any wait here: only the proxy ends a stream
        with streams.lock:
            index = len(streams.sent)
            streams.sent.append(0)
        how = "done"
        try:
            conn.sendall(head)
            while sse or streams.sent[index] < BIG:
                conn.sendall(piece)
                with streams.lock:
                    streams.sent[index] += len(piece)
        except TimeoutError:
            how = "timed out"
        except OSError:
            how = "proxy closed"
        with streams.changed:
            streams.ended.append(how)
            streams.changed.notify_all()

    return other


@contextmanager
def proxy_on_its_loop(
    other: Callable[[socket.socket, bytes], None], bounds: Bounds | None = None, **options: Any
) -> Iterator[tuple[str, int]]:
    """A :class:`Hostile` upstream and the proxy in front of it, served with
    ``server_config`` on the loop ``run`` uses; yields the proxy's host and port."""
    handler = Hostile(other)
    with raw_server(handler) as origin:
        handler.origin = origin
        sock = free_socket()

        async def config() -> uvicorn.Config:
            app, _ = await build_proxy(origin, poll=0, **options)
            return server_config(app, bounds)

        factory = uvicorn.Config(app=None).get_loop_factory()  # type: ignore[arg-type]
        with in_thread(config, [sock], loop_factory=factory):
            yield sock.getsockname()[:2]


def slow_client(address: tuple[str, int], target: str = "/big") -> socket.socket:
    """A client with a 4 KiB receive buffer that asks and then reads nothing."""
    conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn.settimeout(20)
    conn.connect(address)
    conn.sendall(f"GET {target} HTTP/1.1\r\nHost: proxy\r\n\r\n".encode())
    return conn


@contextmanager
def no_collector() -> Iterator[None]:
    """Garbage left in reference cycles stays where tracemalloc sees it."""
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()
        gc.enable()


# What one stream may hold in the proxy: its read-ahead, httpcore's read of at most
# 64 KiB, the chunk being handed on, and the client's transport up to its high-water
# mark (64 KiB) plus that chunk. Twice that, for the allocator's slack.
PER_STREAM = 2 * (READ_AHEAD + 4 * 65536)
READERS = 8


@pytest.mark.parametrize("sse", [False, True], ids=["64 MiB body", "endless SSE"])
def test_slow_readers_hold_at_most_the_bound_and_free_it_when_they_leave(sse: bool) -> None:
    # Eight readers of a 4 KiB buffer each held 3.3 MiB of upstream bytes in the proxy
    # (uvloop read a socket until a task came for the bytes), and kept them after they
    # left, in reference cycles. The bound: PER_STREAM a stream, whatever the kernel holds.
    streams = Streams()
    with no_collector(), proxy_on_its_loop(flooding(streams, sse)) as proxy:
        idle = tracemalloc.get_traced_memory()[0]
        clients = [slow_client(proxy) for _ in range(READERS)]
        try:
            sent = streams.wait_stalled()
            held = tracemalloc.get_traced_memory()[0] - idle
        finally:
            for conn in clients:
                conn.close()
        ended = streams.wait_ended(READERS, 20)
        after = tracemalloc.get_traced_memory()[0] - idle
    assert sent > READERS * 4096  # they did stream (the kernel's buffers took the rest)
    assert held < READERS * PER_STREAM, (held, sent)
    assert ended == ["proxy closed"] * READERS  # a departed client's stream closed
    assert after < READERS * PER_STREAM // 4, after  # freed without a collection


def test_a_client_that_takes_nothing_is_cut_after_the_write_timeout() -> None:
    # D-SERVE-30: nothing read for the write timeout (1 s here): the proxy drops the
    # client and closes the upstream stream, which would otherwise run until upstream
    # gave up (never, for an event stream).
    streams = Streams()
    with proxy_on_its_loop(flooding(streams, sse=True), Bounds(write_timeout=1)) as proxy:
        conn = slow_client(proxy, "/events")
        try:
            assert streams.wait_ended(1, 30) == ["proxy closed"]
            got = 0
            with contextlib.suppress(ConnectionResetError):
                while chunk := conn.recv(65536):  # what was in flight, then the end
                    got += len(chunk)
        finally:
            conn.close()
    assert got < streams.total()  # cut, not completed


def test_a_client_that_keeps_reading_is_not_cut() -> None:
    # The write timeout is about a client taking nothing, not about a long response.
    streams = Streams()
    with proxy_on_its_loop(flooding(streams, sse=False), Bounds(write_timeout=3)) as proxy:
        conn = slow_client(proxy)
        try:
            got = 0
            while got < 8 * MiB:  # the proxy's writes pause and resume all along
                chunk = conn.recv(65536)
                assert chunk, "the proxy cut a client that reads"
                got += len(chunk)
                time.sleep(0.0005)
        finally:
            conn.close()


def drip(streams: Streams) -> Callable[[socket.socket, bytes], None]:
    """An endless event stream, one event a second (a task that runs for a while)."""

    def other(conn: socket.socket, _head: bytes) -> None:
        with streams.lock:
            streams.sent.append(0)
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
            while True:
                conn.sendall(b"7\r\ndata: x\r\n")
                time.sleep(1)
        except OSError:
            pass
        with streams.changed:
            streams.ended.append("proxy closed")
            streams.changed.notify_all()

    return other


def status_from(address: tuple[str, int], source: str, target: str) -> tuple[int, socket.socket]:
    conn = socket.create_connection(address, timeout=20, source_address=(source, 0))
    conn.sendall(f"GET {target} HTTP/1.1\r\nHost: proxy\r\n\r\n".encode())
    head = b""
    while b"\r\n" not in head:
        chunk = conn.recv(4096)
        assert chunk, head
        head += chunk
    return int(head.split(b" ")[1]), conn


def test_one_client_holds_at_most_its_share_of_upstream_connections() -> None:
    # D-PROXY-41: 270 slow readers of an endless stream from 9 addresses held all 256
    # upstream connections, and every other request got 503. Here: 4 connections, a
    # share of 2; the third stream from one address is 503 at once, another address
    # is served, and a stream that leaves gives its place back.
    streams = Streams()
    with proxy_on_its_loop(drip(streams), upstream_connections=4,
                           upstream_client_connections=2) as proxy:  # fmt: skip
        held: list[socket.socket] = []
        try:
            for _ in range(2):
                status, conn = status_from(proxy, "127.0.0.1", "/events")
                held.append(conn)
                assert status == 200
            status, conn = status_from(proxy, "127.0.0.1", "/events")
            held.append(conn)
            assert status == 503
            status, conn = status_from(proxy, "127.0.0.2", "/events")
            held.append(conn)
            assert status == 200
            held.pop(0).close()  # one of the first address's streams leaves
            assert streams.wait_ended(1, 20) == ["proxy closed"]
            status, conn = status_from(proxy, "127.0.0.1", "/events")
            held.append(conn)
            assert status == 200
        finally:
            for conn in held:
                conn.close()


def test_the_slow_reader_flags_refuse_nonsense_in_one_line() -> None:
    # D-PROXY-41, D-SERVE-30: the flags that bound slow readers, as a user mistypes them.
    from support.proxy import proxy_command

    base = ("--upstream", "http://127.0.0.1:9/", "--port", "9")
    cases = [
        (("--write-timeout", "0"), "not a number of seconds > 0"),
        (("--write-timeout", "inf"), "not a number of seconds > 0"),
        (("--upstream-connections", "0"), "less than 1"),
        (("--upstream-client-connections", "-1"), "less than 0"),
        (("--upstream-client-connections", "a tenth"), "not a whole number"),
    ]
    for extra, message in cases:
        process = proxy_command(*base, *extra)
        _, err = process.communicate(timeout=30)
        assert (process.returncode, "Traceback" in err) == (2, False), (extra, err)
        assert message in err, (extra, err)


def test_the_flags_reach_the_proxy() -> None:
    # What the command line chose is what the proxy keeps.
    import argparse

    from a2a_interview.cli import proxy as command
    from a2a_interview.server import listen

    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(["proxy", "--upstream", "http://127.0.0.1:9/", "--port", "9",
                              "--write-timeout", "7", "--upstream-connections", "40",
                              "--upstream-client-connections", "3"])  # fmt: skip
    options = command._options(args)
    assert (options["upstream_connections"], options["upstream_client_connections"]) == (40, 3)
    assert listen.bounds_from_args(args, body=False).write_timeout == 7
