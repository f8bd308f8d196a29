"""Real loopback HTTP for tests and benchmarks: uvicorn in a background thread.

``in_thread(config, sockets)`` is the one way a test runs a uvicorn server on a thread:
the config is given, or built by a coroutine on the server's own loop (the proxy builds
its app there); a build that raises raises in the caller; the block serves until it ends.
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
from collections.abc import Awaitable, Callable, Iterator, Sequence
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


Build = uvicorn.Config | Callable[[], Awaitable[uvicorn.Config]]


@contextlib.contextmanager
def in_thread(
    config: Build,
    sockets: Sequence[socket.socket],
    *,
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
    start: float = 20.0,
    stop: float = 20.0,
    must_stop: bool = False,
) -> Iterator[uvicorn.Server]:
    """Serve on ``sockets`` from a background thread until the block ends; yields the
    started server. ``config`` is a ``uvicorn.Config`` or a coroutine function building
    one on the server's loop (an error it raises is raised here). ``loop_factory`` picks
    the loop (default: asyncio's). Every wait is bounded: ``start`` seconds to start,
    ``stop`` to stop; ``must_stop`` fails a server still running after ``stop``."""
    box: dict[str, Any] = {}
    ready = threading.Event()

    async def main() -> None:
        try:
            built = config if isinstance(config, uvicorn.Config) else await config()
        except BaseException as exc:
            box["error"] = exc
            ready.set()
            return
        server = box["server"] = uvicorn.Server(built)
        serving = asyncio.ensure_future(server.serve(sockets=list(sockets)))
        while not server.started and not serving.done():
            await asyncio.sleep(0.005)
        ready.set()
        await serving

    def thread_main() -> None:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(main())

    thread = threading.Thread(target=thread_main, daemon=True)
    thread.start()
    try:
        if not ready.wait(start):
            raise RuntimeError("the test server did not start")
        if "error" in box:
            raise box["error"]
        if not box["server"].started:
            raise RuntimeError("the test server stopped before it started")
        yield box["server"]
    finally:
        if "server" in box:
            box["server"].should_exit = True
        thread.join(stop)
        for sock in sockets:
            sock.close()
    assert not (must_stop and thread.is_alive()), "the test server did not stop"


def _config(app: App) -> uvicorn.Config:
    return uvicorn.Config(
        app, log_level="error", access_log=False, lifespan="off", loop="asyncio",
        timeout_graceful_shutdown=1,
    )  # fmt: skip


@contextlib.contextmanager
def serve(factory: Factory) -> Iterator[str]:
    """Serve ``factory(origin)`` on a free loopback port; yields the origin."""
    sock, origin = _listen()
    with in_thread(_config(factory(origin)), [sock], stop=5):
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
    with in_thread(_config(_ByPort(apps)), [sock for sock, _ in bound], stop=5):
        yield [origin for _, origin in bound]


def closed_port_url() -> str:
    """An origin on which nothing listens (bound, then closed)."""
    sock, origin = _listen()
    sock.close()
    return origin
