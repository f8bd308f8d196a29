"""The proxy's pass-through: a request that is not the interview's, forwarded to upstream
byte for byte and its response streamed back.

The request target goes as received (no dot segment removal, no re-encoding), headers in
order less the hop-by-hop ones and (unless ``forwarded_allow_ips`` trusts the peer) the
client's forwarding fields, with the proxy's own ``X-Forwarded-For``/``-Proto``
(:mod:`.headers`); the body as read whole by the front. The response is streamed back
unbuffered (Server-Sent Events included) until upstream ends it or the client leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Final

import httpx

from ..asgi import Receive, Scope, Send
from .headers import plain, request_headers, response_headers
from .upstream import Upstream

log = logging.getLogger("a2a_interview.proxy")

_BAD_GATEWAY: Final = (502, b"upstream unavailable\n")
_GATEWAY_TIMEOUT: Final = (504, b"upstream timed out\n")
_UPSTREAM_BUSY: Final = (503, b"upstream busy\n")


async def forward(
    source: Upstream, scope: Scope, receive: Receive, send: Send, *, raw_path: bytes,
    body: bytes, trusted: bool,
) -> None:  # fmt: skip
    """Forward the request byte for byte: the target exactly as received (httpx
    would normalize a URL, so the raw target goes to httpcore as its ``target``);
    the client's forwarding fields only when the peer is ``trusted``."""
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
        await send({
            "type": "http.response.start",
            "status": response.status_code,
            "headers": response_headers(response),
        })  # fmt: skip
        await _stream_until_gone(response, receive, send)
    except httpx.HTTPError as exc:
        # Headers are out: end the exchange without completing the body, so the
        # client sees a truncated response rather than a silently short one.
        log.warning("upstream response broke off: %s", type(exc).__name__)
    finally:
        await response.aclose()


async def _stream(response: httpx.Response, send: Send) -> None:
    async for chunk in response.aiter_raw():
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _stream_until_gone(response: httpx.Response, receive: Receive, send: Send) -> None:
    # A server keeps `send` silent once the client has gone; watch `receive` so an
    # endless upstream stream (SSE) is closed as soon as nobody is listening.
    streaming = asyncio.ensure_future(_stream(response, send))

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
        if streaming.done() and not streaming.cancelled():
            streaming.result()  # re-raise an upstream failure
        else:
            with contextlib.suppress(asyncio.CancelledError):
                await streaming
