"""The proxy's pass-through: a request that is not the interview's, forwarded to upstream
byte for byte and its response streamed back.

The request target goes as received (no dot segment removal, no re-encoding), headers in
order less the hop-by-hop ones and (unless ``forwarded_allow_ips`` trusts the peer) the
client's forwarding fields, with the proxy's own ``X-Forwarded-For``/``-Proto``
(:mod:`.headers`); the body as read whole by the front. The response is streamed back
unbuffered (Server-Sent Events included) until upstream ends it or the client leaves.

What one stream may cost is bounded whatever the client does (D-PROXY-40): upstream is
read no further ahead than :data:`~.connections.READ_AHEAD` bytes (:mod:`.connections`),
each chunk is handed on only once the client's transport is under its high-water mark
(uvicorn's ``send`` waits), and a client that takes nothing for the server's write
timeout is disconnected (``server/listen.py``), which ends the stream and closes its
upstream connection. One client holds at most its share of the upstream connections
(D-PROXY-41). Upstream's framing is normalized on the way (D-PROXY-42): a status outside
200-599 is a ``502``, and a ``Content-Length`` is passed on only where it frames the body
that follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections import Counter
from collections.abc import Iterator
from typing import Final

import httpx

from ..asgi import Receive, Scope, Send
from ..listen import CLOSE, client_of
from .headers import plain, request_headers, response_headers
from .upstream import Upstream

log = logging.getLogger("a2a_interview.proxy")

_BAD_GATEWAY: Final = (502, b"upstream unavailable\n")
_BAD_STATUS: Final = (502, b"upstream answered with an unusable status\n")
_GATEWAY_TIMEOUT: Final = (504, b"upstream timed out\n")
_UPSTREAM_BUSY: Final = (503, b"upstream busy\n")

# Upstream connections in use, by client (listen.client_of), for each Upstream.
_HELD: weakref.WeakKeyDictionary[Upstream, Counter[str]] = weakref.WeakKeyDictionary()


def client_share(source: Upstream) -> int | None:
    """Upstream connections one client may hold at once (``None``: no share)."""
    options = source.options
    if options.upstream_client_connections is None:
        return max(1, options.upstream_connections // 10)
    return options.upstream_client_connections or None


class _Share:
    """One upstream connection counted against a client's share, until :meth:`release`
    (when upstream's body has been read whole, the connection back in the pool, or when
    the exchange ends)."""

    __slots__ = ("client", "held")

    def __init__(self, held: Counter[str] | None, client: str) -> None:
        self.held, self.client = held, client
        if held is not None:
            held[client] += 1

    def release(self) -> None:
        held, self.held = self.held, None
        if held is not None:
            held[self.client] -= 1
            if held[self.client] <= 0:
                del held[self.client]


@contextlib.contextmanager
def _held(source: Upstream, scope: Scope) -> Iterator[_Share | None]:
    """Count one upstream connection against the client's share; yields ``None`` when
    the client already holds its share."""
    share = client_share(source)
    peer = scope.get("client")
    if share is None or not peer:
        yield _Share(None, "")
        return
    client = client_of(str(peer[0]))
    held = _HELD.setdefault(source, Counter())
    if held[client] >= share:
        yield None
        return
    counted = _Share(held, client)
    try:
        yield counted
    finally:
        counted.release()


async def forward(
    source: Upstream, scope: Scope, receive: Receive, send: Send, *, raw_path: bytes,
    body: bytes, trusted: bool,
) -> None:  # fmt: skip
    """Forward the request byte for byte: the target exactly as received (httpx
    would normalize a URL, so the raw target goes to httpcore as its ``target``);
    the client's forwarding fields only when the peer is ``trusted``."""
    with _held(source, scope) as share:
        if share is None:
            await plain(send, *_UPSTREAM_BUSY)
            return
        await _forward(source, scope, receive, send, raw_path=raw_path, body=body,
                       trusted=trusted, share=share)  # fmt: skip


async def _forward(
    source: Upstream, scope: Scope, receive: Receive, send: Send, *, raw_path: bytes,
    body: bytes, trusted: bool, share: _Share,
) -> None:  # fmt: skip
    query: bytes = scope.get("query_string", b"")
    target = raw_path + (b"?" + query if query else b"")
    request = httpx.Request(
        scope["method"], source.origin + "/",
        headers=request_headers(scope, trusted=trusted),
        content=body, extensions={"target": target},
    )  # fmt: skip
    try:
        response = await source.client().send(request, stream=True)
    except httpx.PoolTimeout:
        await plain(send, *_UPSTREAM_BUSY)
        return
    except httpx.TimeoutException:
        await plain(send, *_GATEWAY_TIMEOUT)
        return
    except httpx.HTTPError as exc:
        log.warning("upstream request failed: %s", type(exc).__name__)
        await plain(send, *_BAD_GATEWAY)
        return
    try:
        if not 200 <= response.status_code <= 599:
            # RFC 9110 §15: three digits, 100-599; a 1xx is never final here (the proxy
            # asks for no upgrade, so a 101 is upstream's error too).
            log.warning("upstream answered with status %d", response.status_code)
            await plain(send, *_BAD_STATUS)
            return
        await send({
            "type": "http.response.start",
            "status": response.status_code,
            "headers": framed_headers(response, scope["method"]),
        })  # fmt: skip
        await _stream_until_gone(response, receive, send, share)
    except httpx.HTTPError as exc:
        # Headers are out: end the exchange without completing the body, so the
        # client sees a truncated response rather than a silently short one.
        log.warning("upstream response broke off: %s", type(exc).__name__)
        cut = scope.get("extensions", {}).get(CLOSE)
        if cut is not None:
            cut()
    finally:
        share.release()  # before upstream hears the end: its place is free by then
        await response.aclose()


def framed_headers(response: httpx.Response, method: str) -> list[tuple[bytes, bytes]]:
    """Upstream's response header fields as passed on, framing normalized (RFC 9112
    §6.1-§6.3): ``Content-Length`` is dropped when upstream framed the body with
    ``Transfer-Encoding`` (the body goes on chunked), and from a ``204`` or ``304``,
    which have no body (the server in front would wait for the bytes it announces);
    a response to ``HEAD`` keeps it (the ``GET``'s length, no body follows)."""
    headers = response_headers(response)
    chunked = "transfer-encoding" in response.headers
    no_body = response.status_code in (204, 304)
    if chunked or (no_body and method != "HEAD"):
        headers = [(n, v) for n, v in headers if n != b"content-length"]
    return headers


async def _stream(response: httpx.Response, send: Send, share: _Share) -> None:
    async for chunk in response.aiter_raw():
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    # Read whole: the connection is back in the pool before the client hears the end.
    share.release()
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _stream_until_gone(
    response: httpx.Response, receive: Receive, send: Send, share: _Share
) -> None:
    # A server keeps `send` silent once the client has gone; watch `receive` so an
    # endless upstream stream (SSE) is closed as soon as nobody is listening.
    streaming = asyncio.ensure_future(_stream(response, send, share))

    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait({streaming, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (streaming, watcher):
            if not task.done():
                task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        try:
            if streaming.done() and not streaming.cancelled():
                streaming.result()  # re-raise an upstream failure
            else:
                with contextlib.suppress(asyncio.CancelledError):
                    await streaming
        finally:
            # A finished task keeps its exception, and the exception its frames (the last
            # chunk among them): let go of both now, not at the next full collection.
            del streaming, watcher
