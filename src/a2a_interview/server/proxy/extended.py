"""The extended card behind ``--declare`` (PROFILE §7, docs/decisions.md D-PROXY-32): shaped
as the public card is.

An A2A agent may serve an extended card to authenticated clients: JSON-RPC
``GetExtendedAgentCard`` (A2A 1.0) or ``agent/getAuthenticatedExtendedCard`` (0.3) on its
JSON-RPC interfaces, ``GET {base}/extendedAgentCard`` (1.0, also under a tenant segment)
or ``GET {base}/v1/card`` (0.3) under its HTTP+JSON interfaces. With ``declare`` the
proxy asks upstream for it as the client asked (credentials included, as any request is
passed on), then serves it as it serves the public card: the interview declared, the
interfaces and proposal URLs moved to the public origin, re-signed when it was signed.
Anything but a card (an error, a status other than 200, a body that is not JSON) is
passed back as upstream gave it. Without ``declare`` nothing here applies: such requests
pass through like any other.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import httpx

from ... import rpc
from ...card import is_signed
from ...errors import IngressError, InterviewError
from ...jcs import canonicalize
from ...net.bodies import read_body
from ...net.failures import BodyTooLarge, EncodingRefused
from ...strictjson import loads
from ..asgi import Scope, Send
from .headers import HOP_BY_HOP, NOT_FORWARDED, listed, plain, request_headers
from .upstream import Upstream

log = logging.getLogger("a2a_interview.proxy")

# A2A 1.0 §5.3 (JSON-RPC) and 0.3 §3.5.6: the method that returns the extended card.
METHODS: Final = frozenset({"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"})
_REST_1_0: Final = "extendedagentcard"  # GET {base}/extendedAgentCard, path compared caseless
_REST_0_3: Final = ("v1", "card")  # GET {base}/v1/card
NOT_ONE: Final = object()  # no JSON-RPC id: the HTTP+JSON binding, or no such call
_DROPPED: Final = NOT_FORWARDED | {b"accept-encoding"}
# What the proxy says when it cannot serve the extended card as PROFILE §7 asks.
_BAD_GATEWAY: Final = (502, b"upstream extended card unavailable\n")
_UNSIGNABLE: Final = (502, b"upstream extended card is signed and cannot be re-signed\n")


def rest_request(bases: list[tuple[str, ...]], key: tuple[str, ...]) -> bool:
    """Whether the path ``key`` (:func:`a2a_interview.rpc.path_key`) asks an HTTP+JSON
    interface at one of ``bases`` for its extended card."""
    for base in bases:
        size = len(base)
        if key[:size] != base:
            continue
        rest = key[size:]
        if rest in ((_REST_1_0,), _REST_0_3):
            return True
        if len(rest) == 2 and rest[1] == _REST_1_0:  # /{tenant}/extendedAgentCard
            return True
    return False


def rpc_request(headers: list[tuple[bytes, bytes]], body: bytes, max_body: int) -> Any:
    """The JSON-RPC id of a call asking for the extended card (a single call, its body
    decoded as the host would read it), else :data:`NOT_ONE`."""
    decoded = rpc.decoded_body(headers, body, rpc.NOT_ACTIVATED, max_body)
    if isinstance(decoded, rpc.Reply):
        return NOT_ONE
    if b"xtended" not in decoded and b"\\u" not in decoded:  # ordinary traffic: not parsed
        return NOT_ONE
    try:
        value = loads(decoded, max_bytes=max_body)
    except IngressError:
        return NOT_ONE
    if isinstance(value, dict) and value.get("method") in METHODS:
        return value.get("id")
    return NOT_ONE


async def serve(
    source: Upstream, scope: Scope, send: Send, *, raw_path: bytes, body: bytes,
    trusted: bool, request_id: Any = NOT_ONE,
) -> None:  # fmt: skip
    """Ask upstream for the extended card as the client asked, and send it back shaped
    by ``declare`` (``request_id``: the JSON-RPC id, or :data:`NOT_ONE` for HTTP+JSON)."""
    query: bytes = scope.get("query_string", b"")
    target = raw_path + (b"?" + query if query else b"")
    sent = [*request_headers(scope, _DROPPED, trusted=trusted), (b"accept-encoding", b"identity")]
    request = httpx.Request(scope["method"], source.origin + "/", headers=sent, content=body,
                            extensions={"target": target})  # fmt: skip
    try:
        response = await source.client().send(request, stream=True)
        try:
            data = await read_body(response, source.max_bytes)
        finally:
            await response.aclose()
    except (httpx.HTTPError, BodyTooLarge, EncodingRefused) as exc:
        log.warning("upstream extended card request failed: %s", type(exc).__name__)
        await plain(send, *_BAD_GATEWAY)
        return
    out = data
    if response.status_code == 200:
        try:
            out = await _shaped(source, data, request_id)
        except InterviewError as exc:
            log.warning("cannot serve the upstream extended card: %s [%s]", exc, exc.code)
            await plain(send, *_UNSIGNABLE)
            return
    raw = response.headers.raw
    drop = HOP_BY_HOP | listed(raw) | {b"content-length", b"content-encoding", b"etag"}
    headers = [(n.lower(), v) for n, v in raw if n.lower() not in drop]
    headers.append((b"content-length", str(len(out)).encode()))
    await send({"type": "http.response.start", "status": response.status_code,
                "headers": headers})  # fmt: skip
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else out})


async def _shaped(source: Upstream, data: bytes, request_id: Any) -> bytes:
    """``data`` with its card shaped as the public card is; ``data`` itself when it holds
    no card (a JSON-RPC error, something that is not JSON)."""
    try:
        value = loads(data, max_bytes=source.max_bytes)
    except IngressError:
        return data
    if request_id is NOT_ONE:
        card = value
    else:
        card = value.get("result") if isinstance(value, dict) else None
    if not isinstance(card, dict):
        return data
    if source.shape(card) and is_signed(card):
        card = await source.resign(card)
    if request_id is NOT_ONE:
        return canonicalize(card)
    return canonicalize({**value, "result": card})
