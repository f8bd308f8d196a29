"""Real loopback HTTP for tests and benchmarks: uvicorn in a background thread.

``serve(factory)`` binds a socket on 127.0.0.1 port 0 first, so the app can be built
knowing its own origin (a card names its own URLs), then serves it until the block
ends. ``serve_many(factories)`` serves several apps, each on its own port (its own
origin), from one server thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import uvicorn

App = Callable[..., Any]
Factory = Callable[[str], App]


def _listen(host: str = "127.0.0.1") -> tuple[socket.socket, str]:
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when the
    # listening socket says TCP; with proto 0, Nagle + delayed ACK cost ~40 ms a request.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    sock.listen(512)
    sock.setblocking(False)
    return sock, f"http://{host}:{sock.getsockname()[1]}"


class _ByPort:
    """One ASGI app per local port: the dispatcher of serve_many."""

    def __init__(self, apps: dict[int, App]) -> None:
        self.apps = apps

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.apps[scope["server"][1]](scope, receive, send)


@contextlib.contextmanager
def _run(app: App, sockets: list[socket.socket]) -> Iterator[None]:
    config = uvicorn.Config(
        app, log_level="error", access_log=False, lifespan="off", loop="asyncio",
        timeout_graceful_shutdown=1,
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=sockets)), daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.005)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(5)
        for sock in sockets:
            sock.close()


@contextlib.contextmanager
def serve(factory: Factory) -> Iterator[str]:
    """Serve ``factory(origin)`` on a free loopback port; yields the origin."""
    sock, origin = _listen()
    with _run(factory(origin), [sock]):
        yield origin


@contextlib.contextmanager
def serve_many(factories: Sequence[Factory]) -> Iterator[list[str]]:
    """Serve each ``factory(origin)`` on its own free loopback port, from one server;
    yields the origins in order."""
    bound = [_listen() for _ in factories]
    apps = {
        sock.getsockname()[1]: factory(origin)
        for (sock, origin), factory in zip(bound, factories, strict=True)
    }
    with _run(_ByPort(apps), [sock for sock, _ in bound]):
        yield [origin for _, origin in bound]


def closed_port_url() -> str:
    """An origin on which nothing listens (bound, then closed)."""
    sock, origin = _listen()
    sock.close()
    return origin


# The name test_http_rules.py uses: the same contract (factory(origin) -> app; yields origin).
running = serve
