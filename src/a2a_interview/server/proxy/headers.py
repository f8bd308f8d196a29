"""Which header fields cross the proxy, each way, and the proxy's own plain answers.

Hop-by-hop fields (RFC 9110 §7.6.1) never cross; a client's forwarding fields cross only
from a peer in ``forwarded_allow_ips``; the proxy adds its own ``X-Forwarded-For`` and
``X-Forwarded-Proto``. Upstream's card response headers are served with the verified
card's bytes (:func:`served_headers`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Sequence
from typing import Final

import httpx

from ..asgi import Scope, Send

# RFC 9110 §7.6.1: connection-specific fields, never forwarded. `Host` is forwarded as
# the client sent it (the public name the card declares); `Expect` is answered by the
# server in front of us.
HOP_BY_HOP: Final = frozenset({
    b"connection", b"keep-alive", b"proxy-authenticate", b"proxy-authorization",
    b"proxy-connection", b"te", b"trailer", b"trailers", b"transfer-encoding", b"upgrade",
})  # fmt: skip
NOT_FORWARDED: Final = HOP_BY_HOP | {b"expect"}
# Asked of upstream for the card: the proxy reads the whole representation itself, and
# sends a GET without a body (a client's Content-Length would announce one).
CARD_REQUEST_DROPPED: Final = NOT_FORWARDED | {
    b"if-none-match", b"if-modified-since", b"if-match", b"if-unmodified-since",
    b"if-range", b"range", b"accept-encoding", b"content-length",
}  # fmt: skip


def listed(headers: Iterable[tuple[bytes, bytes]]) -> set[bytes]:
    """Field names a ``Connection`` header marks as hop-by-hop (RFC 9110 §7.6.1)."""
    named: set[bytes] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            named.update(v.strip().lower() for v in value.split(b",") if v.strip())
    return named


# Fields by which a client names another client address, scheme or host (RFC 7239 and
# its de facto predecessors): passed on only from a trusted peer (D-PROXY-12).
_FORWARDING: Final = frozenset({
    b"forwarded", b"x-real-ip", b"true-client-ip", b"x-client-ip", b"cf-connecting-ip",
    b"fastly-client-ip", b"x-cluster-client-ip", b"x-original-forwarded-for",
})  # fmt: skip


def _forwarding(name: bytes) -> bool:
    low = name.lower()
    return low in _FORWARDING or low.startswith(b"x-forwarded-")


def trusted_peers(allow: Sequence[str]) -> Callable[[str], bool]:
    """Whether a peer address is one of ``allow`` (addresses, networks, or ``*``).
    Raises ``ValueError`` naming an entry that is neither."""
    if "*" in allow:
        return lambda _peer: True
    networks = []
    for item in allow:
        try:
            networks.append(ipaddress.ip_network(item.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not an IP address or network") from None

    def trusted(peer: str) -> bool:
        try:
            address = ipaddress.ip_address(peer.partition("%")[0])
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in networks)

    return trusted


def request_headers(
    scope: Scope, dropped: frozenset[bytes] = NOT_FORWARDED, *, trusted: bool = False
) -> list[tuple[bytes, bytes]]:
    """The client's header fields as passed on: less ``dropped`` and what ``Connection``
    names; a client's forwarding fields only from a ``trusted`` peer; then the proxy's
    own ``X-Forwarded-For`` (the peer appended to a trusted chain) and
    ``X-Forwarded-Proto`` (kept when a trusted peer sent one)."""
    raw: list[tuple[bytes, bytes]] = scope["headers"]
    drop = dropped | listed(raw)
    out = [(n, v) for n, v in raw if n.lower() not in drop and (trusted or not _forwarding(n))]
    client = scope.get("client")
    if client:
        forwarded = [v for n, v in out if n.lower() == b"x-forwarded-for"]
        out = [(n, v) for n, v in out if n.lower() != b"x-forwarded-for"]
        chain = b", ".join([*forwarded, str(client[0]).encode("latin-1")])
        out.append((b"x-forwarded-for", chain))
    if all(n.lower() != b"x-forwarded-proto" for n, _ in out):
        out.append((b"x-forwarded-proto", str(scope.get("scheme", "http")).encode("latin-1")))
    return out


def response_headers(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    raw = response.headers.raw
    drop = HOP_BY_HOP | listed(raw)
    return [(n.lower(), v) for n, v in raw if n.lower() not in drop]


async def plain(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"),
               (b"content-length", str(len(body)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def served_headers(
    raw: Sequence[tuple[bytes, bytes]], body: bytes, etag: bytes | None, *, date: bool
) -> tuple[tuple[bytes, bytes], ...]:
    """Upstream's card response headers as the proxy serves them with ``body``, in
    upstream's order: hop-by-hop fields and ``Content-Encoding`` dropped (the proxy reads
    the card decoded), ``Content-Length`` set to ``body``'s, ``ETag`` replaced by ``etag``
    when given (a changed card), ``Date`` kept only with ``date``."""
    drop = HOP_BY_HOP | listed(raw) | {b"content-encoding"}
    if not date:
        drop = drop | {b"date"}
    length = str(len(body)).encode()
    out: list[tuple[bytes, bytes]] = []
    for name, value in raw:
        low = name.lower()
        if low in drop:
            continue
        replaced = {b"content-length": length, b"etag": etag}.get(low)
        out.append((low, value if replaced is None else replaced))
    if all(n != b"content-length" for n, _ in out):
        out.append((b"content-length", length))
    if etag is not None and all(n != b"etag" for n, _ in out):
        out.append((b"etag", etag))
    return tuple(out)
