"""The connection bounds of every server this package starts (server/listen.py;
D-SERVE-13, D-SERVE-14), over real loopback sockets: a huge request head is
refused without being buffered, dripping heads and bodies are cut, connections past the
bound are refused at once, and ordinary requests are served while slow clients attack.
Every loop here is bounded in count; nothing asserts a duration."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_interview.server import listen
from a2a_interview.spec import INTERVIEW_URI
from needs import need
from support.sockets import (
    COMMAND,
    answered,
    bounded,
    connect,
    demo_serve,
    ordinary,
    read_all,
    send_until_refused,
)

LINUX = Path("/proc/self/status").exists()


# --- request head size --------------------------------------------------------------------


def test_a_huge_header_is_refused_with_431_after_the_bound() -> None:
    # D-SERVE-14: one 176 MiB header was read whole. Now at most 64 KiB is.
    with bounded(listen.Bounds()) as address:
        conn = connect(address)
        sent = send_until_refused(conn, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ",
                                  b"a" * 65536, 2816)  # up to 176 MiB  # fmt: skip
        response = read_all(conn)
        conn.close()
        assert response.startswith(b"HTTP/1.1 431 "), response[:100]
        assert sent < 2816  # the server stopped reading long before the end
        assert ordinary(address) == 200


def test_a_head_just_under_the_bound_is_served() -> None:
    # The bound counts the request line and every field; 60 KiB of headers pass.
    with bounded(listen.Bounds()) as (host, port):
        headers = {f"x-h{i}": "v" * 1000 for i in range(60)}
        response = httpx.get(f"http://{host}:{port}/", headers=headers, timeout=10)
        assert response.status_code == 200


def test_many_small_header_lines_count_together() -> None:
    with bounded(listen.Bounds()) as address:
        conn = connect(address)
        send_until_refused(conn, b"GET / HTTP/1.1\r\nHost: x\r\n", b"X-A: b\r\n" * 512,
                           64)  # 256 KiB of lines  # fmt: skip
        assert read_all(conn).startswith(b"HTTP/1.1 431 ")
        conn.close()


def test_pipelined_requests_past_the_head_bound_in_one_read_are_served() -> None:
    # D-SERVE-14 bounds one request's head, not a read: many small pipelined
    # requests (RFC 9112 §9.3.2) arriving together were refused with 431 once the read
    # crossed max_header_bytes, although no head came near it.
    with bounded(listen.Bounds(max_header_bytes=1024)) as address:
        conn = connect(address)
        request = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
        last = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        conn.sendall(request * 60 + last)  # about 3 KiB, one write
        response = read_all(conn)
        conn.close()
        assert response.count(b"HTTP/1.1 200 ") == 61, response[:200]
        assert b" 431 " not in response


# --- time to send a head, a body; idle connections ------------------------------------------


def test_a_client_dripping_header_lines_is_dropped() -> None:
    # D-SERVE-14: 300 connections dripping header lines stayed open.
    with bounded(listen.Bounds(header_timeout=1)) as address:
        conn = connect(address)
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        dropped = False
        for _ in range(100):  # at most 100 lines, 0.1 s apart
            try:
                conn.sendall(b"X-Drip: 1\r\n")
            except (BrokenPipeError, ConnectionResetError):
                dropped = True
                break
            time.sleep(0.1)
            if answered(conn):
                dropped = True
                break
        assert dropped
        assert read_all(conn).startswith(b"HTTP/1.1 408 ")
        conn.close()


def test_a_connection_that_sends_nothing_is_closed() -> None:
    with bounded(listen.Bounds(header_timeout=0.5)) as address:
        conn = connect(address, timeout=20)
        assert read_all(conn) == b""  # closed without a word, as an idle keep-alive
        conn.close()


def test_a_slow_drip_body_is_dropped() -> None:
    # D-PROXY-29: a body one byte every 5 s held the server's request open.
    with bounded(listen.Bounds(body_timeout=1)) as address:
        conn = connect(address)
        conn.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        for _ in range(100):  # at most 100 bytes, 0.1 s apart
            try:
                conn.sendall(b"x")
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.1)
            if answered(conn):
                break
        assert read_all(conn).startswith(b"HTTP/1.1 408 ")
        conn.close()


async def early_app(scope: Any, receive: Any, send: Any) -> None:
    """Answers at once, never reading the body."""
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"5")]})  # fmt: skip
        await send({"type": "http.response.body", "body": b"early"})


def test_a_body_cut_after_its_answer_gets_no_second_response() -> None:
    # server/listen.py: a body still dripping after the app answered is cut by closing
    # the connection, not by a 408 the client would read as the next response.
    with bounded(listen.Bounds(body_timeout=0.5, keep_alive=30), early_app) as address:
        conn = connect(address, timeout=20)
        conn.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc")
        response = read_all(conn)
        conn.close()
        assert response.startswith(b"HTTP/1.1 200 ") and response.endswith(b"early")
        assert response.count(b"HTTP/1.1") == 1, response


def test_an_idle_keep_alive_connection_is_closed() -> None:
    with bounded(listen.Bounds(keep_alive=0.5)) as address:
        conn = connect(address, timeout=20)
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        response = read_all(conn)
        assert response.startswith(b"HTTP/1.1 200 ") and response.endswith(b"\r\n\r\n0")
        conn.close()


def test_a_body_over_max_body_is_refused_with_413() -> None:
    with bounded(listen.Bounds(max_body=1024)) as address:
        conn = connect(address)
        conn.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n")
        assert read_all(conn).startswith(b"HTTP/1.1 413 ")
        conn.close()
        conn = connect(address)  # chunked: counted as it comes
        sent = send_until_refused(
            conn, b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"400\r\n" + b"x" * 1024 + b"\r\n", 10000,
        )  # fmt: skip
        assert read_all(conn).startswith(b"HTTP/1.1 413 ")
        conn.close()
        assert sent < 10000
        host, port = address
        small = httpx.post(f"http://{host}:{port}/", content=b"x" * 1024, timeout=10)
        assert (small.status_code, small.content) == (200, b"1024")


def _posted(address: tuple[str, int], head: bytes, body: bytes) -> bytes:
    conn = connect(address)
    conn.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + head + b"\r\n" + body)
    response = read_all(conn)
    conn.close()
    return response


def _chunked(body: bytes, size: int) -> bytes:
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


@pytest.mark.parametrize("chunk", [1, 100, 1024, 4096])
def test_a_body_of_max_body_is_served_and_one_byte_more_is_refused(chunk: int) -> None:
    """server/listen.py: ``max_body`` bytes pass and ``max_body + 1`` get 413, whether
    announced (Content-Length) or counted as they stream (chunked, in pieces of any size).
    The other tests send far more, so they miss a bound off by one."""
    with bounded(listen.Bounds(max_body=1024)) as address:
        chunked = b"Transfer-Encoding: chunked\r\n"
        at = _posted(address, chunked, _chunked(b"x" * 1024, chunk))
        assert at.startswith(b"HTTP/1.1 200 ") and at.endswith(b"\r\n\r\n1024"), at[:100]
        over = _posted(address, chunked, _chunked(b"x" * 1025, chunk))
        assert over.startswith(b"HTTP/1.1 413 "), over[:100]
        at = _posted(address, b"Content-Length: 1024\r\n", b"x" * 1024)
        assert at.startswith(b"HTTP/1.1 200 ") and at.endswith(b"\r\n\r\n1024"), at[:100]
        over = _posted(address, b"Content-Length: 1025\r\n", b"x" * 1025)
        assert over.startswith(b"HTTP/1.1 413 "), over[:100]


# --- connections ------------------------------------------------------------------------------


def test_connections_past_the_bound_are_refused_at_once() -> None:
    # D-PROXY-29: ~20k connections exhausted the descriptors. Past the bound each
    # is answered 503 and closed, so the server holds at most the bound.
    # The total bound alone: no per-client share (every connection here is 127.0.0.1).
    bounds = listen.Bounds(max_connections=20, max_client_connections=0, header_timeout=30)
    with bounded(bounds) as address:
        held = [connect(address) for _ in range(20)]
        extra = [connect(address) for _ in range(100)]
        refused = [read_all(conn) for conn in extra]
        assert all(r.startswith(b"HTTP/1.1 503 ") for r in refused)
        for conn in extra:
            conn.close()
        for conn in held:
            conn.close()
        for _ in range(100):  # the server sees the closes shortly
            with contextlib.suppress(httpx.HTTPError):
                if ordinary(address) == 200:
                    break
            time.sleep(0.05)
        assert ordinary(address) == 200


def test_ordinary_requests_are_served_while_slow_clients_attack() -> None:
    # D-SERVE-14: 120 clients dripping heads; ordinary requests still get
    # through, every one of them.
    with bounded(listen.Bounds(header_timeout=2)) as address:
        attackers = []
        for i in range(120):
            # 120 attackers, each its own client: 127.0.1.i (all of 127/8 is loopback).
            conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            conn.settimeout(10)
            conn.bind((f"127.0.1.{i + 1}", 0))
            conn.connect(address)
            conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            attackers.append(conn)
        statuses = []
        for _ in range(30):
            statuses.append(ordinary(address))
            for conn in attackers:
                with contextlib.suppress(OSError):
                    conn.send(b"a")
        for conn in attackers:
            conn.close()
        assert statuses == [200] * 30


def test_bounds_refuse_nonsense() -> None:
    bad_bounds: list[dict[str, Any]] = [
        {"max_header_bytes": 10}, {"header_timeout": 0}, {"body_timeout": float("inf")},
        {"max_connections": 0}, {"max_body": -1}, {"keep_alive": float("nan")},
    ]  # fmt: skip
    for bad in bad_bounds:
        with pytest.raises(ValueError):
            listen.Bounds(**bad)  # type: ignore[arg-type]


# --- the demo server, as a user starts it ------------------------------------------------------


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_demo_serve_memory_does_not_grow_with_a_huge_header_or_body() -> None:
    need(LINUX, "Linux's /proc (the server's peak memory is read there)", "run it on Linux")
    # D-PROXY-29: a 176 MiB header and a 100 MiB activated body took the
    # demo from 72 to 209 and 309 MiB. Each is now refused; the peak barely moves.
    with demo_serve() as (proc, address):
        host, port = address
        card = httpx.get(f"http://{host}:{port}/.well-known/agent-card.json", timeout=10)
        assert card.status_code == 200
        before = _peak_rss_kib(proc.pid)
        conn = connect(address)
        send_until_refused(conn, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ", b"a" * 65536, 1024)
        assert read_all(conn).startswith(b"HTTP/1.1 431 ")
        conn.close()
        head = (b"POST /a2a/jsonrpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"A2A-Extensions: " + INTERVIEW_URI.encode() + b"\r\n")  # fmt: skip
        conn = connect(address)
        conn.sendall(head + b"Content-Length: 104857600\r\n\r\n")
        send_until_refused(conn, b'{"jsonrpc":"2.0","id":1,"method":"interview/identity",'
                           b'"params":{"skill":"', b"a" * 65536, 1600)  # fmt: skip
        assert read_all(conn).startswith(b"HTTP/1.1 413 ")
        conn.close()
        conn = connect(address)
        chunk = b"10000\r\n" + b"a" * 65536 + b"\r\n"
        send_until_refused(conn, head + b"Transfer-Encoding: chunked\r\n\r\n", chunk, 1600)
        assert read_all(conn).startswith(b"HTTP/1.1 413 ")
        conn.close()
        after = _peak_rss_kib(proc.pid)
        assert after - before < 24 * 1024, (before, after)
        ask = httpx.post(f"http://{host}:{port}/a2a/jsonrpc", timeout=10,
                         content=b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}',
                         headers={"A2A-Extensions": INTERVIEW_URI,
                                  "A2A-Version": "1.0"})  # fmt: skip
        assert ask.status_code == 200 and b'"result"' in ask.content


def test_demo_serve_rejects_nonsense_bounds() -> None:
    nonsense = [
        ["--max-connections", "0"], ["--header-timeout", "-1"], ["--max-header-bytes", "many"],
        ["--max-body", "-5"], ["--redis", "http://cache:6379"],
        ["--redis", "redis://x", "--rate-limit", "off"],
    ]  # fmt: skip
    for args in nonsense:
        done = subprocess.run(
            [*COMMAND, "demo", "serve", *args],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr and "--" in done.stderr


# --- the a2a-sdk integration's own read ---------------------------------------------------------


@pytest.mark.parametrize("framework", ["starlette", "fastapi"])
def test_the_sdk_integration_reads_at_most_64_kib_of_an_activated_body(framework: str) -> None:
    # docs/decisions.md D-SERVE-12: an activated body is read to the
    # route's max_body at most (here 64 KiB); past it the request cannot be judged and is
    # refused (D-SERVE-12, PROFILE §3.9), the rest unread, never handed over.
    from stacks import RPC, Spies, sdk_app

    spies = Spies()
    app = sdk_app(framework, spies, max_body=64 * 1024)
    chunk = b"a" * 8192
    head = b'{"jsonrpc":"2.0","id":1,"method":"interview/terms","params":{"skill":"'
    chunks = [head] + [chunk] * 1024  # 8 MiB, never a whole body in memory here
    consumed = 0
    at_handover: list[int] = []
    spies_routes = spies.routes

    async def receive() -> Any:
        nonlocal consumed
        if not chunks:
            return {"type": "http.request", "body": b'"}}', "more_body": False}
        piece = chunks.pop(0)
        consumed += len(piece)
        return {"type": "http.request", "body": piece, "more_body": True}

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": RPC, "raw_path": RPC.encode(), "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 1), "server": ("agent.test", 80),
        "headers": [(b"content-type", b"application/json"), (b"a2a-version", b"1.0"),
                    (b"a2a-extensions", INTERVIEW_URI.encode())],
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    assert spies_routes == [] and not spies.executor and not at_handover
    assert consumed <= 64 * 1024 + 2 * len(chunk), consumed
    assert sent[0]["status"] == 413


def test_the_bound_options_fit_a_command_with_body_options_of_its_own() -> None:
    # server/listen.py add_arguments(body=False): the proxy has --max-body and
    # --body-timeout for its own body read; the listening bounds add none that clash.
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--max-body", type=int, default=7)
    parser.add_argument("--body-timeout", type=float, default=3.0)
    listen.add_arguments(parser, body=False)
    args = parser.parse_args(["--max-connections", "5", "--header-timeout", "2"])
    bounds = listen.bounds_from_args(args, body=False)
    assert bounds == listen.Bounds(max_connections=5, header_timeout=2)


async def header_app(scope: Any, receive: Any, send: Any) -> None:
    """Answers with the value of the request's ``x-a`` header."""
    if scope["type"] == "http":
        value = next((v for n, v in scope["headers"] if n == b"x-a"), b"-")
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"%d" % len(value))]})  # fmt: skip
        await send({"type": "http.response.body", "body": value})


def test_field_values_reach_the_app_without_surrounding_blanks() -> None:
    # RFC 9110 §5.5: the parser left a trailing blank in; the proxy's upstream client
    # then refused the value and the client got a 502 (found by the fuzz suite).
    with bounded(listen.Bounds(), header_app) as address:
        conn = connect(address)
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-A:  b c \t\r\nConnection: close\r\n\r\n")
        response = read_all(conn)
        conn.close()
        assert response.endswith(b"\r\n\r\nb c"), response
