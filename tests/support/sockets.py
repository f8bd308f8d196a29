"""Raw connections to a bounded server (server/listen.py) on a loopback port, and
``demo serve`` as a user starts it: what the bounds' tests attack with."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx

from a2a_interview.net import sockets
from a2a_interview.server import listen
from support.cli import COMMAND
from support.servers import in_thread


async def echo_app(scope: Any, receive: Any, send: Any) -> None:
    """Reads the whole body, answers 200 with its length."""
    if scope["type"] != "http":
        return
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        size += len(message.get("body", b""))
        more = message.get("more_body", False)
    body = b"%d" % size
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", b"%d" % len(body))]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


@contextlib.contextmanager
def bounded(
    bounds: listen.Bounds, app: Any = echo_app, **options: Any
) -> Iterator[tuple[str, int]]:
    """``app`` served with ``bounds`` (and uvicorn ``options``) on a free loopback port,
    in a thread."""
    sock = sockets.bind("127.0.0.1", 0)
    sock.setblocking(False)
    config = listen.config(app, bounds, log_level="error", access_log=False, lifespan="off",
                           loop="asyncio", timeout_graceful_shutdown=1, **options)  # fmt: skip
    with in_thread(config, [sock], start=10, stop=5):
        yield sock.getsockname()[:2]


def connect(address: tuple[str, int], timeout: float = 10.0) -> socket.socket:
    conn = socket.create_connection(address, timeout=timeout)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def read_all(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes (or resets) the connection; raises
    ``TimeoutError`` when it keeps the connection open past the socket's timeout."""
    out = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := conn.recv(65536):
            out += chunk
    return out


def answered(conn: socket.socket) -> bool:
    """Whether the server has sent something (or closed), without waiting and without
    taking it. The socket keeps its timeout: ``setblocking(True)`` would clear it, and a
    server that never answers would then hold the next read forever (D-TEST-30)."""
    timeout = conn.gettimeout()
    conn.setblocking(False)
    try:
        conn.recv(1, socket.MSG_PEEK)  # a byte, or b"" when it closed
        return True
    except BlockingIOError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    finally:
        conn.settimeout(timeout)


def send_until_refused(conn: socket.socket, head: bytes, chunk: bytes, chunks: int) -> int:
    """Send ``head`` then up to ``chunks`` times ``chunk``; the count sent before the
    server stopped taking them."""
    conn.sendall(head)
    for sent in range(chunks):
        try:
            conn.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            return sent
    return chunks


def ordinary(address: tuple[str, int]) -> int:
    host, port = address
    return httpx.post(f"http://{host}:{port}/", content=b"hello", timeout=10).status_code


@contextlib.contextmanager
def demo_serve(*args: str) -> Iterator[tuple[subprocess.Popen[str], tuple[str, int]]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [*COMMAND, "demo", "serve", "--port", str(port),
         "--rate-limit", "off", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "serving at" in line, (line, proc.stderr.read() if proc.poll() else "")
        yield proc, ("127.0.0.1", port)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
