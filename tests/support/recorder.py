"""Upstreams for the proxy's wire tests: a bare ASGI app that serves a card and the
proposals and records every request as received (raw target, headers in order, body); a
raw-socket ``Hostile`` one that answers anything else as a test says; and the proxy served
as the ``proxy`` command serves it."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import uvicorn

from a2a_interview import reference
from a2a_interview.server.proxy import build_proxy, server_config
from a2a_interview.spec import INTERVIEW_URI
from agents import read_request, target_of
from support.ports import free_socket
from support.proxy import CARD
from support.servers import in_thread, serve

EXT = (("A2A-Extensions", INTERVIEW_URI),)
ACT = (*EXT, ("A2A-Version", "1.0"))  # PROFILE §3.10: a version the card's interfaces serve
Headers = list[tuple[bytes, bytes]]


@dataclass
class Recorder:
    """What the upstream was asked, and what it serves."""

    origin: str = ""
    started: list[bytes] = field(default_factory=list)  # raw targets, as headers arrive
    seen: list[tuple[str, bytes, Headers, bytes]] = field(default_factory=list)
    cards: dict[str, tuple[bytes, Headers]] = field(default_factory=dict)  # by A2A-Version
    documents: dict[str, bytes] = field(default_factory=dict)  # path -> body
    lock: threading.Lock = field(default_factory=threading.Lock)

    def forget(self) -> None:
        """Forget what the proxy fetched at start: tests look at what came after."""
        with self.lock:
            self.started.clear()
            self.seen.clear()

    def targets(self) -> list[bytes]:
        with self.lock:
            return [target for _, target, _, _ in self.seen]

    def set_card(self, card: dict[str, Any], headers: Headers = (), version: str = "") -> None:
        self.cards[version] = (json.dumps(card).encode(), list(headers))


def recorder_app(state: Recorder, card: Callable[[str], dict[str, Any]] | None) -> Any:
    def build(origin: str) -> Any:
        state.origin = origin
        if card is not None:
            state.set_card(card(origin))
        for url, body in reference.proposals(origin).items():
            state.documents[urlsplit(url).path] = body

        async def app(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            query = scope["query_string"]
            target = scope["raw_path"] + (b"?" + query if query else b"")
            with state.lock:
                state.started.append(target)
            chunks = []
            while True:
                message = await receive()
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    break
            body = b"".join(chunks)
            with state.lock:
                state.seen.append((scope["method"], target, list(scope["headers"]), body))
            path = scope["path"]
            status, headers, out = 200, [(b"content-type", b"application/json")], b""
            if path == CARD and scope["method"] in ("GET", "HEAD"):
                version = dict(scope["headers"]).get(b"a2a-version", b"").decode()
                out, extra = state.cards.get(version, state.cards[""])
                headers += extra
            elif path in state.documents:
                out = state.documents[path]
            elif path.startswith(("/terms/", "/missing")):
                status, out = 404, b'{"error":"not found"}'
            else:
                out = json.dumps({"target": target.decode("latin-1"), "length": len(body)}).encode()
            headers.append((b"content-length", str(len(out)).encode()))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body",
                        "body": b"" if scope["method"] == "HEAD" else out})  # fmt: skip

        return app

    return build


@contextmanager
def recorder(
    card: Callable[[str], dict[str, Any]] | None = reference.unsigned_card,
) -> Iterator[Recorder]:
    state = Recorder()
    with serve(recorder_app(state, card)):
        yield state


def request(
    origin: str,
    method: str,
    target: str,
    headers: Any = (),
    body: bytes | None = None,
) -> tuple[int, list[tuple[str, str]], bytes]:
    """One request with ``target`` sent exactly as written."""
    parts = urlsplit(origin)
    assert parts.hostname is not None and parts.port is not None
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    try:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", parts.netloc)
        for name, value in headers:
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        conn.close()


def undeclared(origin: str) -> dict[str, Any]:
    card = reference.unsigned_card(origin)
    exts = card["capabilities"]["extensions"]
    card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]
    return card


def signed_undeclared(origin: str) -> dict[str, Any]:
    card = reference.signed_card(origin, jku=False)
    exts = card["capabilities"]["extensions"]
    card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]
    return card


@contextmanager
def proxy_served(upstream: str, **options: Any) -> Iterator[str]:
    """``build_proxy`` served with :func:`server_config`, the listening server ``proxy``
    runs (server/listen.py: bounds, trailers, upgrades), on a background thread."""
    sock = free_socket()
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def config() -> uvicorn.Config:
        app, _ = await build_proxy(upstream, **options)
        built = server_config(app)
        built.loop = "asyncio"
        return built

    with in_thread(config, [sock]):
        yield origin


Handler = Callable[[socket.socket, bytes], None]


class Hostile:
    """Serves the card and its proposals, and hands every other request to ``other``."""

    def __init__(self, other: Handler) -> None:
        self.origin = ""
        self.other = other

    def __call__(self, conn: socket.socket, stop: Any) -> None:
        while True:  # keep-alive: the proxy pools its connections
            head = read_request(conn)
            if not head:
                return
            target = target_of(head)
            documents = {urlsplit(u).path: b for u, b in reference.proposals(self.origin).items()}
            if target == CARD:
                body = json.dumps(reference.unsigned_card(self.origin)).encode()
            elif target in documents:
                body = documents[target]
            else:
                self.other(conn, head)
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)  # fmt: skip
