"""The interviewer's HTTP client: a driver on ``httpx`` (async).

Every read is bounded (docs/style.md, "Security code"):

- **size**: bodies over ``max_bytes`` (1 MiB, PROFILE §1.4) are abandoned mid-stream,
  the bound applied to the decoded bytes as they are decoded (:func:`read_body`: one
  layer of ``gzip`` or ``deflate`` at most, inflated a slice at a time, so a 2 KB body
  that would inflate to 1 GiB never takes more than the bound);
- **time**: each exchange, redirects and 429 waits aside, has one deadline
  (``timeout``), so a peer that drips bytes cannot hold a call open;
- **redirects**: followed for GET only, at most ``max_redirects``, and only to the same
  origin (scheme, host, port);
- **scheme**: HTTPS only, except HTTP to a loopback host, which is allowed and recorded
  (:attr:`Interviewer.loopback_origins`) so the result can say so;
- **address**: only public addresses are connected to (:func:`address_kind`), unless
  ``allow_private``; loopback is allowed when the target the user named is itself
  loopback. A literal address is judged before any connection; a host name is resolved
  once, every address it resolves to judged, and the connection made to the judged
  address (:func:`http_client`), so DNS rebinding cannot slip past. A refused address
  is never contacted, so the result cannot tell an open port from a closed one.

``429 Too Many Requests`` is waited out (``Retry-After``, PROFILE §3.7 and §7) within a
bounded total wait and never reaches the caller as a response; the time waited is kept
in :attr:`Interviewer.waited`. The user's credentials (``--header``, a bearer token) are
sent only to the origin the user named, never to the other origins a card points at.

Failures are exceptions of one small tree, each with a stable ``code``::

    TransportFailure        transport
    ├── InsecureURL         insecure_url       (not HTTPS, not loopback HTTP)
    ├── ConnectFailed       connect_failed     (DNS, refused, reset, protocol error)
    ├── TimedOut            timeout
    ├── BodyTooLarge        too_large
    ├── RedirectRefused     redirect_refused   (cross-origin, too many, on POST)
    ├── Unavailable         unavailable        (502, 503, 504)
    ├── RateLimited         rate_limited       (429 beyond the wait budget)
    ├── EncodingRefused     bad_encoding       (stacked, unknown or corrupt coding)
    ├── AddressRefused      address_refused    (not a public address)
    ├── BudgetSpent         request_budget     (the run's request budget is spent)
    └── DeadlineExceeded    deadline           (the caller's overall deadline)

Requires the ``client`` extra (``pip install 'a2a-interview[client]'``).
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import math
import re
import socket
import ssl
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any, Final, Literal, NoReturn
from urllib.parse import SplitResult, urljoin, urlsplit

try:
    import anyio
    import httpcore
    import httptools  # noqa: F401 - the wire module's parser, named in the error below
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the interviewer needs httpx and httptools: pip install 'a2a-interview[client]'"
    ) from exc

from ..errors import InterviewError
from ..spec import CARD_PATH, MAX_DOCUMENT_BYTES
from .wire import Pool, RawResponse, WireError, WireTooLarge, connect_cause

__all__ = [
    "ACCEPT_ENCODING",
    "CAUSES",
    "AddressRefused",
    "BodyTooLarge",
    "BudgetSpent",
    "ClientOptions",
    "ConnectFailed",
    "DeadlineExceeded",
    "EncodingRefused",
    "InsecureURL",
    "Interviewer",
    "RateLimited",
    "RedirectRefused",
    "Response",
    "TimedOut",
    "TransportFailure",
    "address_kind",
    "card_url_for",
    "check_url",
    "fetch_document",
    "http_client",
    "is_loopback",
    "origin",
    "read_body",
    "tls_context",
]

_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_MAX_429_PER_REQUEST: Final = 5
_DEFAULT_RETRY_AFTER: Final = 1.0
# What we accept: one layer of either, inflated under the bound (read_body). Not br or
# zstd: their decoders are optional packages, and one coding we bound is enough.
ACCEPT_ENCODING: Final = "gzip, deflate"
_INFLATE_SLICE: Final = 64 * 1024  # decoded bytes produced per zlib call


class TransportFailure(InterviewError):
    """The exchange could not be completed; nothing was learnt about the agent.

    ``url`` is the URL whose exchange failed (without credentials), set when it is
    known; ``cause`` refines ``connect_failed`` and ``timeout`` (issue 12 item 7): one
    of :data:`CAUSES`."""

    code = "transport"
    url: str | None = None
    cause: str | None = None

    def at(self, url: str) -> TransportFailure:
        """This failure, naming ``url`` unless it names one already."""
        if self.url is None:
            self.url = without_credentials(url)
        return self


CAUSES: Final[dict[str, str]] = {
    "name": "the host name did not resolve",
    "refused": "the connection was refused",
    "unreachable": "no route to the host",
    "timeout": "the host did not answer in time",
    "tls": "the TLS handshake failed (a bad certificate, or TLS to a plain HTTP port)",
    "reset": "the connection was reset",
    "closed": "the connection closed before the response ended",
    "protocol": "the response was not HTTP/1.1 as it must be",
    "connect": "the connection failed",
}
"""Why a connection failed: the ``cause`` of a ``connect_failed`` or ``timeout``."""


def _failure(kind: type[TransportFailure], cause: str) -> TransportFailure:
    failure = kind()
    failure.cause = cause
    return failure


class InsecureURL(TransportFailure):
    """The URL is neither HTTPS nor HTTP to a loopback host."""

    code = "insecure_url"


class ConnectFailed(TransportFailure):
    """The connection failed (name resolution, refused, reset, malformed HTTP)."""

    code = "connect_failed"


class TimedOut(TransportFailure):
    """The exchange did not complete within the time bound."""

    code = "timeout"


class BodyTooLarge(TransportFailure):
    """The body is larger than the size bound."""

    code = "too_large"


class RedirectRefused(TransportFailure):
    """A redirect to another origin, more redirects than allowed, or one on a POST."""

    code = "redirect_refused"


class Unavailable(TransportFailure):
    """The server answered 502, 503 or 504: it is there, but cannot answer now."""

    code = "unavailable"


class RateLimited(TransportFailure):
    """The agent kept answering 429 beyond the wait budget."""

    code = "rate_limited"


class EncodingRefused(TransportFailure):
    """The body's ``Content-Encoding`` is not one layer of gzip or deflate (stacked or
    unknown codings), or its compressed data is corrupt."""

    code = "bad_encoding"


class AddressRefused(TransportFailure):
    """The host is, or resolves to, an address that is not public (private, loopback
    for a target that is not, link-local, unique-local, shared, multicast, reserved);
    nothing was sent to it."""

    code = "address_refused"


class BudgetSpent(TransportFailure):
    """The run's request budget is spent (PROFILE §7)."""

    code = "request_budget"


class DeadlineExceeded(TransportFailure):
    """The caller's overall deadline passed before the work was done."""

    code = "deadline"


Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``resolve(host, port) -> addresses``: the name lookup seam (tests map names)."""


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """Bounds and credentials for one interviewer.

    ``headers`` are the user's credentials (``Authorization`` and the like), sent only
    to the origin the user named. ``retry_budget`` is the total time 429s may be waited
    out; a single ``Retry-After`` longer than ``max_retry_after`` is cut to it.
    ``allow_private``: connect to non-public addresses too (:func:`address_kind`).
    ``resolver``: the name lookup (default: the system's, through anyio).
    """

    timeout: float = 10.0
    max_bytes: int = MAX_DOCUMENT_BYTES
    max_redirects: int = 3
    retry_budget: float = 120.0
    max_retry_after: float = 60.0
    headers: tuple[tuple[str, str], ...] = ()
    allow_private: bool = False
    resolver: Resolver | None = None


@dataclass(frozen=True, slots=True)
class Response:
    """A complete response: final url, status, headers (names lowercased), body."""

    url: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        lname = name.lower()
        return next((v for n, v in self.headers if n == lname), None)


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _httpx_cause(exc: BaseException) -> str:
    """The cause of an httpx failure, read from the OS or TLS error beneath it."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return "name"
        if isinstance(seen, OSError | ssl.SSLError):
            cause = connect_cause(seen)
            if cause != "connect":
                return cause
        seen = seen.__cause__ or seen.__context__
    return "connect"


def _split(url: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        raise InsecureURL from None


@functools.lru_cache(maxsize=512)
def origin(url: str) -> tuple[str, str, int]:
    """RFC 6454 origin: (scheme, host lowercased, port with the scheme's default).
    Raises ``InsecureURL`` for a string that does not parse as a URL."""
    parts = _split(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or (443 if scheme == "https" else 80)


@functools.lru_cache(maxsize=512)
def check_url(url: str) -> bool:
    """Raise ``InsecureURL`` unless ``url`` is HTTPS or HTTP to a loopback host, with a
    valid port; return whether it is loopback HTTP (which the result records)."""
    parts = _split(url)
    host = parts.hostname
    try:
        parts.port  # noqa: B018 - a port out of range or not a number raises ValueError
    except ValueError:
        raise InsecureURL from None  # else it escapes the socket layer as OverflowError
    if not host:
        raise InsecureURL
    if parts.scheme == "https":
        return False
    if parts.scheme == "http" and is_loopback(host):
        return True
    raise InsecureURL


def _origin_text(url: str) -> str:
    """``scheme://host:port`` of ``url``, an IPv6 host in brackets."""
    scheme, host, port = origin(url)
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def card_url_for(url: str) -> str:
    """The card URL for what the user gave: a URL whose path ends in ``.json`` is the
    card itself; anything else is a base URL, and the card is at its path +
    ``/.well-known/agent-card.json`` (as the A2A SDKs join it). Query and fragment are
    dropped. Raises ``InsecureURL`` as :func:`check_url`."""
    check_url(url)
    parts = _split(url)
    path = parts.path
    if not path.endswith(".json"):
        path = path.rstrip("/") + CARD_PATH
    return parts._replace(path=path, query="", fragment="").geturl()


_AUTHORITY: Final = re.compile(r"([^:/?#]+://)([^/?#]*)(.*)", re.S)


def without_credentials(url: str) -> str:
    """``url`` without a ``user:password@`` part: what a record may keep of it. Never
    raises: a URL that does not parse (an unclosed IPv6 bracket) is cut by hand."""
    try:
        parts = urlsplit(url)
    except ValueError:
        match = _AUTHORITY.match(url)
        if match is None:
            return url
        return match[1] + match[2].rpartition("@")[2] + match[3]
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _retry_after(value: str | None, now: datetime) -> float:
    """Seconds to wait for a ``Retry-After`` (delta-seconds or HTTP-date, RFC 9110
    §10.2.3): absent, unreadable or out of any date range (a day number of 30 digits
    overflows the C long of ``datetime``) is the default wait; the caller clamps."""
    if value is None:
        return _DEFAULT_RETRY_AFTER
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(int(text[:6]))
    try:
        when = parsedate_to_datetime(text)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        wait = (when - now).total_seconds()
    except (TypeError, ValueError, IndexError, OverflowError):
        return _DEFAULT_RETRY_AFTER
    return max(0.0, wait) if math.isfinite(wait) else _DEFAULT_RETRY_AFTER


# ---------------------------------------------------------------------------------------
# Addresses

AddressKind = Literal["public", "loopback", "private"]

# Not public: IANA's special-purpose registries (RFC 6890 and successors), the ranges a
# card could use to reach a platform's own network or its cloud's metadata service.
_NOT_PUBLIC_V4: Final = tuple(ipaddress.IPv4Network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
))  # fmt: skip
_NOT_PUBLIC_V6: Final = tuple(ipaddress.IPv6Network(n) for n in (
    "::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20",
    "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
))  # fmt: skip
# The IPv6 forms that carry an IPv4 address in their last 32 bits (issue 14 finding 10):
# IPv4-mapped and IPv4-translated (RFC 4291, RFC 2765), NAT64 (RFC 6052), the deprecated
# IPv4-compatible ::a.b.c.d. 6to4 (2002::/16) carries it in bits 16-47, ISATAP in the
# interface identifier ::5efe:a.b.c.d (RFC 5214) under any prefix; Teredo (2001::/32)
# is refused whole by 2001::/23 above.
_EMBEDDING_V6: Final = tuple(ipaddress.IPv6Network(n) for n in (
    "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96", "::/96",
))  # fmt: skip
_ISATAP_IDS: Final = frozenset({0x00005EFE, 0x02005EFE})
_STRICTNESS: Final[dict[AddressKind, int]] = {"public": 0, "loopback": 1, "private": 2}


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address ``ip`` carries, if it is one of the embedding forms."""
    if ip.sixtofour is not None:
        return ip.sixtofour
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if any(ip in net for net in _EMBEDDING_V6) or (int(ip) >> 32) & 0xFFFFFFFF in _ISATAP_IDS:
        return low
    return None


def address_kind(address: str) -> AddressKind:
    """``loopback`` (127.0.0.0/8, ``::1``), ``public``, or ``private`` for every other
    special-purpose address: RFC 1918, CGNAT 100.64/10, link-local (169.254.169.254,
    the metadata service, among them), unique-local fd00::/8, multicast, unspecified,
    documentation, reserved. An IPv6 address that embeds an IPv4 one (IPv4-mapped
    ``::ffff:a.b.c.d``, IPv4-translated ``::ffff:0:a.b.c.d``, IPv4-compatible,
    NAT64, 6to4, ISATAP) is judged by it too, the stricter judgement winning. Anything
    that does not parse as an IP address is ``private`` (refused)."""
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return "private"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip == ipaddress.IPv6Address("::1"):
            return "loopback"
        own: AddressKind = "private" if any(ip in net for net in _NOT_PUBLIC_V6) else "public"
        embedded = _embedded_v4(ip)
        if embedded is None:
            return own
        inner = _v4_kind(embedded)
        return max(own, inner, key=_STRICTNESS.__getitem__)
    return _v4_kind(ip)


def _v4_kind(ip: ipaddress.IPv4Address) -> AddressKind:
    if ip.is_loopback:
        return "loopback"
    if ip == ipaddress.IPv4Address("255.255.255.255"):
        return "private"
    return "private" if any(ip in net for net in _NOT_PUBLIC_V4) else "public"


@dataclass(frozen=True, slots=True)
class _AddressPolicy:
    allow_private: bool
    allow_loopback: bool

    def allows(self, address: str) -> bool:
        kind = address_kind(address)
        if kind == "public" or self.allow_private:
            return True
        return kind == "loopback" and self.allow_loopback

    def check_host(self, host: str) -> None:
        """Refuse a literal address (or ``localhost``) before any connection; a name is
        judged when it is resolved (:class:`_GuardedBackend`)."""
        name = host.strip("[]").lower()
        if name == "localhost" or name.endswith(".localhost"):
            name = "127.0.0.1"
        try:
            ipaddress.ip_address(name.split("%", 1)[0])
        except ValueError:
            return
        if not self.allows(name):
            raise AddressRefused


async def _system_resolver(host: str, port: int) -> Sequence[str]:
    found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(sockaddr[0]) for *_, sockaddr in found]


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the address policy: resolve the host once,
    refuse if any address it resolves to is not allowed, then connect to those
    addresses in order until one answers (so the address judged is the address
    connected to: no second lookup a rebinding DNS server could answer differently)."""

    def __init__(self, policy: _AddressPolicy, resolver: Resolver | None) -> None:
        self._policy = policy
        self._resolve = resolver or _system_resolver
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self._policy.check_host(host)
        try:
            ipaddress.ip_address(host)
            literal = [host]  # an address: nothing to resolve
        except ValueError:
            literal = []
        try:
            with anyio.fail_after(timeout):
                addresses = literal or list(dict.fromkeys(await self._resolve(host, port)))
        except TimeoutError:
            raise httpcore.ConnectTimeout from None
        except OSError:
            raise httpcore.ConnectError from None
        if not addresses:
            raise httpcore.ConnectError
        if not all(self._policy.allows(a) for a in addresses):
            raise AddressRefused  # one bad answer spoils the lookup: no picking around it
        failure: Exception = httpcore.ConnectError()
        for address in addresses:  # in the resolver's order, each one judged above
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:  # pragma: no cover - never configured
        raise AddressRefused

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _policy_for(options: ClientOptions, target: str | None) -> _AddressPolicy:
    loopback = False
    if target:
        with contextlib.suppress(InsecureURL):
            loopback = is_loopback(origin(target)[1])
    return _AddressPolicy(options.allow_private, loopback)


def http_client(
    options: ClientOptions | None = None,
    *,
    target: str | None = None,
    limits: httpx.Limits | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` that connects only where the address policy allows:
    public addresses, loopback too when ``target`` (the URL the user named) is
    loopback, anything with ``options.allow_private``. Environment proxies are not
    used: the address connected to must be the one judged. Share it between
    interviewers of the same target (``Interviewer(http=...)``)."""
    opts = options or ClientOptions()
    limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
    transport = httpx.AsyncHTTPTransport(verify=tls_context(), limits=limits, trust_env=False)
    # httpx takes no network backend; its pool is rebuilt with ours, same settings.
    pool = transport._pool
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=tls_context(),
        max_connections=pool._max_connections,
        max_keepalive_connections=pool._max_keepalive_connections,
        keepalive_expiry=pool._keepalive_expiry,
        network_backend=_GuardedBackend(_policy_for(opts, target), opts.resolver),
    )
    return httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        timeout=opts.timeout,
        trust_env=False,
        headers={"Accept-Encoding": ACCEPT_ENCODING},
    )


# ---------------------------------------------------------------------------------------
# Bodies


class _Inflater:
    """One content coding, decoded a slice at a time under a running bound."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        # deflate: RFC 9110 says zlib-wrapped; some servers send it raw (tried on failure).
        bits = zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS
        self._z = zlib.decompressobj(bits)
        self._first = True

    def feed(self, data: bytes, room: int) -> Iterable[bytes]:
        """Decoded pieces of ``data``; raises ``BodyTooLarge`` as soon as more than
        ``room`` bytes in all would come out, never holding more than a slice."""
        while data:
            if self._z.eof:  # another gzip member (RFC 1952 §2.2); deflate has one
                if self.coding != "gzip":
                    raise EncodingRefused
                self._z = zlib.decompressobj(zlib.MAX_WBITS | 16)
            try:
                out = self._z.decompress(data, min(_INFLATE_SLICE, room + 1))
            except zlib.error:
                if self._first and self.coding == "deflate":
                    self._z, self._first = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise EncodingRefused from None
            self._first = False
            room -= len(out)
            if room < 0:
                raise BodyTooLarge
            if out:
                yield out
            data = self._z.unused_data if self._z.eof else self._z.unconsumed_tail

    def finish(self) -> None:
        if not self._z.eof:
            raise EncodingRefused  # truncated compressed data


def _codings(header: str | None) -> list[str]:
    codings = [c.strip().lower() for c in (header or "").split(",")]
    return [c for c in codings if c and c != "identity"]


def _inflater(header: str | None) -> _Inflater | None:
    """The decoder for a ``Content-Encoding`` (``None``: identity). Raises
    ``EncodingRefused`` for more than one layer or a coding other than gzip/deflate."""
    codings = _codings(header)
    if len(codings) > 1 or any(c not in ("gzip", "x-gzip", "deflate") for c in codings):
        raise EncodingRefused
    if not codings:
        return None
    return _Inflater("gzip" if codings[0] != "deflate" else "deflate")


def _decoded(chunks: Iterable[bytes], inflater: _Inflater | None, max_bytes: int) -> bytes:
    """Raw body chunks decoded under the bounds of :func:`read_body`."""
    body = bytearray()
    wire_limit = 2 * max_bytes if inflater else max_bytes
    wire = 0
    for chunk in chunks:
        wire += len(chunk)
        if wire > wire_limit:
            raise BodyTooLarge
        if inflater is None:
            body += chunk
            if len(body) > max_bytes:
                raise BodyTooLarge
            continue
        for piece in inflater.feed(chunk, max_bytes - len(body)):
            body += piece
    if inflater is not None and wire:
        inflater.finish()
    return bytes(body)


async def read_body(reply: httpx.Response, max_bytes: int) -> bytes:
    """The decoded body of a streamed ``reply``, read under ``max_bytes`` as it arrives.

    The raw bytes are read (never httpx's decoders, which inflate a whole network chunk
    at once) and decoded here: at most one ``Content-Encoding`` layer, ``gzip`` (several
    members allowed) or ``deflate``, inflated a slice at a time, so memory stays near
    the bound whatever the compression ratio. Raises ``BodyTooLarge`` (decoded bytes over
    ``max_bytes``, or raw bytes over twice that) and ``EncodingRefused`` (more than one
    layer, an unknown coding, corrupt or truncated data); httpx errors pass through.
    """
    inflater = _inflater(reply.headers.get("content-encoding"))
    wire_limit = 2 * max_bytes if inflater else max_bytes
    length = reply.headers.get("content-length", "")
    if length.isascii() and length.isdigit() and int(length) > wire_limit:
        raise BodyTooLarge
    raw: AsyncIterator[bytes] = reply.aiter_raw()
    chunks = [chunk async for chunk in _bounded(raw, wire_limit)]
    return _decoded(chunks, inflater, max_bytes)


async def _bounded(raw: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes]:
    seen = 0
    async for chunk in raw:
        seen += len(chunk)
        if seen > limit:
            raise BodyTooLarge
        yield chunk


def decode_raw(raw: RawResponse, max_bytes: int) -> bytes:
    """The decoded body of a response from :mod:`.wire` (whose body arrives whole, its
    size on the wire already bounded by twice ``max_bytes``), under the bounds and
    codings of :func:`read_body`."""
    header = ", ".join(v for n, v in raw.headers if n == "content-encoding") or None
    return _decoded((raw.body,), _inflater(header), max_bytes)


_TLS: list[ssl.SSLContext] = []


def tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process (httpx's defaults: certifi, ``SSL_CERT_*``);
    building one costs ~30 ms, and a context is safe to share."""
    if not _TLS:
        _TLS.append(httpx.create_ssl_context())
    return _TLS[0]


class Interviewer:
    """An async HTTP client with the bounds of this module.

    Use as ``async with Interviewer(options, credential_origin=url) as client``.
    ``target`` is the URL the user named (default ``credential_origin``): loopback
    addresses are allowed when it is loopback. Pass ``http`` to share one
    ``httpx.AsyncClient`` (its pool) between interviewers; it is then not closed here,
    and should come from :func:`http_client` (else only literal addresses and the
    address of each response are judged, after the fact for names). ``transport`` is
    handed to a client created here (tests).
    """

    def __init__(
        self,
        options: ClientOptions | None = None,
        *,
        credential_origin: str | None = None,
        target: str | None = None,
        http: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.options = options or ClientOptions()
        self._credentials_for: tuple[str, str, int] | None = None
        if credential_origin:
            with contextlib.suppress(InsecureURL):  # such a URL is refused when fetched
                self._credentials_for = origin(credential_origin)
        target = target or credential_origin
        self._policy = _policy_for(self.options, target)
        self._owned = http is None
        # The exchanges of ``wire`` (the verifier's own, fast) unless the caller chose
        # httpx: a shared client or a transport (tests, library users).
        self._wire: Pool | None = None
        self._http: httpx.AsyncClient | None = http
        if http is None and transport is None:
            self._wire = Pool(
                tls_context(), resolve=self.options.resolver or _system_resolver,
                admit=self._admit,
            )  # fmt: skip
        elif http is None:
            self._http = httpx.AsyncClient(
                transport=transport,
                follow_redirects=False,
                timeout=self.options.timeout,
                verify=tls_context(),
                trust_env=False,
            )
        self.loopback_origins: set[str] = set()
        self.refused_origins: set[str] = set()
        self.waited = 0.0
        self.rate_limited = 0
        # PROFILE §7: requests sent, the budget they may reach (``None``: none), and the
        # caller's deadline (``anyio.current_time()`` based): a 429 is waited out only
        # when the wait ends within it.
        self.sent = 0
        self.budget: int | None = None
        self.deadline: float | None = None

    async def __aenter__(self) -> Interviewer:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._wire is not None:
            await self._wire.aclose()
        if self._owned and self._http is not None:
            await self._http.aclose()

    def _admit(self, addresses: Sequence[str]) -> None:
        # What a name resolved to, judged before any connection: one address the policy
        # refuses spoils the lookup (no picking around it), as in _GuardedBackend.
        if not all(self._policy.allows(address) for address in addresses):
            raise AddressRefused

    def _headers(self, url: str, headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = [("Accept-Encoding", ACCEPT_ENCODING)]
        ours = [(n, v) for n, v in headers]
        names = {n.lower() for n, _ in ours} | {"accept-encoding"}  # read_body's codings
        if self._credentials_for is not None and origin(url) == self._credentials_for:
            out += [(n, v) for n, v in self.options.headers if n.lower() not in names]
        return out + ours

    async def _once(
        self, method: str, url: str, headers: Sequence[tuple[str, str]], content: bytes | None
    ) -> Response:
        limit = self.options.max_bytes
        if self.budget is not None and self.sent >= self.budget:
            raise BudgetSpent
        self.sent += 1
        if self._wire is not None:
            return await self._exchange(self._wire, method, url, headers, content)
        assert self._http is not None
        try:
            with anyio.fail_after(self.options.timeout):
                async with self._http.stream(
                    method, url, headers=headers, content=content, timeout=self.options.timeout,
                    follow_redirects=False,  # a shared client's setting: redirects are ours
                ) as reply:  # fmt: skip
                    self._check_peer(reply, url)
                    body = await read_body(reply, limit)
                    return Response(
                        url,
                        reply.status_code,
                        tuple((n.lower(), v) for n, v in reply.headers.multi_items()),
                        body,
                    )
        except TimeoutError:
            raise _failure(TimedOut, "timeout") from None
        except httpx.TimeoutException:
            raise _failure(TimedOut, "timeout") from None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, UnicodeError) as exc:
            raise _failure(ConnectFailed, _httpx_cause(exc)) from None

    async def _exchange(
        self,
        wire: Pool,
        method: str,
        url: str,
        headers: Sequence[tuple[str, str]],
        content: bytes | None,
    ) -> Response:
        limit = self.options.max_bytes
        try:
            with anyio.fail_after(self.options.timeout):
                raw = await wire.exchange(method, url, headers, content, max_bytes=2 * limit)
        except TimeoutError:
            raise _failure(TimedOut, "timeout") from None
        except WireTooLarge:
            raise BodyTooLarge from None
        except WireError as exc:
            raise _failure(ConnectFailed, exc.cause) from None
        return Response(url, raw.status, raw.headers, decode_raw(raw, limit))

    def refuses(self, url: str) -> bool:
        """Whether ``url`` names a literal address (or ``localhost``) the address policy
        refuses: known before any connection. Raises ``InsecureURL`` for a URL that
        does not parse."""
        try:
            self._policy.check_host(origin(url)[1])
        except AddressRefused:
            self.refused_origins.add(_origin_text(url))
            return True
        return False

    def _check_peer(self, reply: httpx.Response, url: str) -> None:
        # Belt to http_client's braces: the address this response came from, when the
        # transport tells it (a shared client not made by http_client).
        stream = reply.extensions.get("network_stream")
        peer = stream.get_extra_info("server_addr") if stream is not None else None
        if isinstance(peer, tuple) and peer and not self._policy.allows(str(peer[0])):
            self._refuse(url)

    def _refuse(self, url: str) -> NoReturn:
        self.refused_origins.add(_origin_text(url))
        raise AddressRefused().at(url)

    async def _patient(
        self, method: str, url: str, headers: Sequence[tuple[str, str]], content: bytes | None
    ) -> Response:
        # PROFILE §7: a 429 is waited out, never counted against the agent.
        for _ in range(_MAX_429_PER_REQUEST + 1):
            response = await self._once(method, url, headers, content)
            if response.status != 429:
                return response
            wait = min(
                _retry_after(response.header("retry-after"), datetime.now(UTC)),
                self.options.max_retry_after,
            )
            if not math.isfinite(wait) or self.waited + wait > self.options.retry_budget:
                break
            if self.deadline is not None and anyio.current_time() + wait > self.deadline:
                break  # a wait that outlasts the deadline: end now, saying so
            self.waited += wait
            self.rate_limited += 1
            await anyio.sleep(wait)
        raise RateLimited

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Iterable[tuple[str, str]] = (),
        content: bytes | None = None,
    ) -> Response:
        """One bounded exchange; redirects followed for GET as the module says.

        Returns the final :class:`Response` (any status but 429). Raises a
        ``TransportFailure`` subclass.
        """
        for _ in range(self.options.max_redirects + 1):
            if check_url(url):
                self.loopback_origins.add(_origin_text(url))
            try:
                self._policy.check_host(origin(url)[1])  # a literal: before any connection
                response = await self._patient(method, url, self._headers(url, headers), content)
            except AddressRefused:
                self._refuse(url)  # raises, having noted the origin for the record
            except TransportFailure as exc:
                raise exc.at(url) from None
            location = response.header("location")
            if response.status not in _REDIRECTS or location is None:
                return response
            if method != "GET":
                raise RedirectRefused
            try:
                target = urljoin(url, location)
            except ValueError:
                raise RedirectRefused from None
            if origin(target) != origin(url):
                raise RedirectRefused
            url = target
        raise RedirectRefused

    async def get(self, url: str, headers: Iterable[tuple[str, str]] = ()) -> Response:
        """A bounded GET. Raises a ``TransportFailure`` subclass."""
        return await self.request("GET", url, headers=headers)

    async def post(
        self, url: str, body: bytes, headers: Iterable[tuple[str, str]] = ()
    ) -> Response:
        """A bounded POST (never redirected). Raises a ``TransportFailure`` subclass."""
        return await self.request("POST", url, headers=headers, content=body)

    async def fetch_document(self, url: str, *, verifying: bool = False) -> bytes | None:
        """The body of a 2xx GET of ``url``, else ``None`` (terms §3 step 1: transport
        error, non-2xx, over the size bound, a scheme refused). Never raises
        ``TransportFailure``, except with ``verifying``: then a failure that says nothing
        about the document (a 429 beyond the wait budget, no connection, a timeout, a
        502/503/504) raises, so a verifier ends the run ``unreachable`` instead of
        counting it against the agent (PROFILE §7)."""
        try:
            response = await self.get(url)
        except BudgetSpent:
            raise  # the run's bound, not the document's failure
        except (RateLimited, ConnectFailed, TimedOut):
            if verifying:
                raise
            return None
        except TransportFailure:
            return None
        if verifying and response.status in (502, 503, 504):
            raise Unavailable
        return response.body if 200 <= response.status < 300 else None


def fetch_document(url: str, options: ClientOptions | None = None) -> bytes | None:
    """Blocking: the body of a bounded 2xx GET of ``url``, else ``None``
    (:meth:`Interviewer.fetch_document`, for synchronous callers such as the CLI).
    Must not be called from a running event loop."""

    async def fetch() -> bytes | None:
        async with Interviewer(options, target=url) as session:
            return await session.fetch_document(url)

    return anyio.run(fetch)
