"""HTTP/1.1 exchanges for the interviewer: asyncio transports and httptools' C parser.

Why not httpx here: the procedure is a few dozen small keep-alive exchanges per agent,
and on a fast network httpx's own Python (request and URL models, cookie extraction,
h11) is most of the verifier's CPU: a replay of one verify's requests through httpx
costs about three times the same exchanges through this module (``bench/verify.py``).
httptools is the parser uvicorn serves with; what this module adds is only the
client's half of HTTP/1.1 message framing, a keep-alive pool, and nothing else: no
redirects, retries, cookies or content decoding (the interviewer owns those policies,
and decodes bodies within its own bound). httpx remains the interviewer's client where
a caller hands it a client or a transport.

    pool = Pool(tls_context(), resolve=resolver, admit=policy)
    response = await pool.exchange("POST", url, headers, body, max_bytes=1 << 20)
    response.status, response.headers, response.body, response.peer
    await pool.aclose()

A host name is resolved once, by ``resolve``; ``admit`` judges every address it gave
(or the literal address) before any connection, and the connection goes to those very
addresses, in order, with the name kept for TLS and ``Host``: the address judged is the
address connected to, so a second lookup cannot rebind it. ``exchange`` raises
:class:`WireError` (no name, no connection, a malformed response, the peer closing
early), :class:`WireTooLarge` (the body on the wire exceeds ``max_bytes``), or whatever
``admit`` raises. Timeouts are the caller's (cancel the call: the connection is closed,
never pooled half-read).
"""

from __future__ import annotations

import asyncio
import base64
import errno
import ipaddress
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import httptools

from .. import __version__
from ..codings import ACCEPT_ENCODING

_USER_AGENT: Final = f"a2a-interview/{__version__}"
_MAX_HEADER_BYTES: Final = 64 * 1024
_MAX_IDLE_PER_ORIGIN: Final = 2
_UNREACHABLE: Final = frozenset(
    {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EHOSTDOWN, errno.ENETDOWN, errno.EADDRNOTAVAIL}
)


class WireError(Exception):
    """The exchange did not complete: no connection, or not HTTP/1.1 as it must be.

    ``cause`` names why, for the record (D-CLI-9): ``name`` (the name did not
    resolve), ``refused`` (connection refused), ``unreachable`` (no route to the host
    or network), ``timeout`` (the system's connect timeout), ``tls`` (the TLS handshake
    failed: a bad certificate, or TLS against plain HTTP), ``reset`` (the peer reset
    the connection), ``closed`` (it closed before the response ended), ``protocol``
    (the response is not HTTP/1.1 as it must be), ``connect`` (another socket error).
    """

    def __init__(self, message: str = "", cause: str = "protocol") -> None:
        super().__init__(message)
        self.cause = cause


class WireTooLarge(WireError):
    """The response body on the wire is larger than the caller's bound."""

    def __init__(self) -> None:
        super().__init__("too large", "too_large")


def connect_cause(exc: BaseException) -> str:
    """The ``cause`` of :class:`WireError` for an exception from connecting."""
    if isinstance(exc, ssl.SSLError | ssl.CertificateError):
        return "tls"
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return "reset"
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, OSError) and exc.errno in _UNREACHABLE:
        return "unreachable"
    return "connect"


@dataclass(frozen=True, slots=True)
class RawResponse:
    """A response as received: status, headers (names lowercased, Latin-1 text, in
    order), the body after de-chunking but still content-encoded, and the IP address of
    the peer the request was sent to."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    peer: str


class _Exchange(asyncio.Protocol):
    """One connection: parses responses with httptools, one exchange at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._reset(0)

    def _reset(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.headers: list[tuple[str, str]] = []
        self.header_bytes = 0
        self.stalled = 0  # head bytes fed since a header last completed (httptools holds them)
        self.progressed = False
        self.body = bytearray()
        self.status = 0
        self.framed = False  # Content-Length or chunked: the end is known without EOF
        self.complete = False
        self.keep_alive = False
        self.failure: WireError | None = None

    # asyncio.Protocol
    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self._fail(WireError("unsolicited bytes"))  # nothing is being awaited
            return
        self.progressed = False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(WireError("protocol upgrade"))
        except httptools.HttpParserError:
            if self.failure is None:
                self._fail(WireError("malformed response"))
            else:
                self._fail(self.failure)
            return
        # httptools holds a header's name and value whole until the header ends, so
        # on_header alone bounds nothing while one never ends: bytes that complete no
        # header (nor head) nor deliver a body byte count against the bound as they
        # arrive; in the head, and in a trailer section after a chunked body.
        self.stalled = 0 if self.progressed else self.stalled + len(data)
        if self.stalled > _MAX_HEADER_BYTES:
            self._fail(WireError("response headers too large"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is not None and not self._waiter.done():
            if self.status and not self.framed and self.failure is None:
                self._done()  # a body delimited by the connection's end (RFC 9112 §6.3)
            elif exc is not None:
                self._fail(WireError("connection lost", connect_cause(exc)))
            else:
                self._fail(WireError("connection closed", "closed"))

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.progressed = True
        self.header_bytes += len(name) + len(value)
        if self.header_bytes > _MAX_HEADER_BYTES:
            self.failure = WireError("response headers too large")
            raise self.failure
        if self.status:
            return  # a trailer field (RFC 9112 §7.1.2): counted above, never a header
        key = name.decode("latin-1").lower()
        if key == "content-length" or (key == "transfer-encoding" and b"chunked" in value):
            self.framed = True
        self.headers.append((key, value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        self.progressed = True
        self.status = self.parser.get_status_code()
        if 100 <= self.status < 200:  # an interim response: the real one follows
            self.headers, self.header_bytes, self.status = [], 0, 0
        elif self.status in (204, 304):
            self.framed = True

    def on_body(self, chunk: bytes) -> None:
        self.progressed = True
        self.body += chunk
        if len(self.body) > self.max_bytes:
            self.failure = WireTooLarge()
            raise self.failure

    def on_message_complete(self) -> None:
        if self.status:
            self.framed = True
            # read here: the parser forgets the message once this callback returns
            self.keep_alive = self.parser.should_keep_alive()
            self._done()

    # the exchange
    def _done(self) -> None:
        self.complete = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _fail(self, failure: WireError) -> None:
        self.failure = failure
        if self.transport is not None:
            self.transport.abort()
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(failure)

    async def send(
        self, request: bytes, max_bytes: int
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        assert self.transport is not None
        self._reset(max_bytes)
        self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        try:
            await self._waiter
        finally:
            self._waiter = None
        return self.status, self.headers, bytes(self.body)

    def reusable(self) -> bool:
        return self.complete and self.keep_alive and not self.closed


def _target(url: str) -> tuple[str, str, int, str, str, str | None]:
    """(scheme, host, port, Host header, request target, userinfo) of ``url``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WireError("not a URL") from None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in ("http", "https") or not host:
        raise WireError("not an http(s) URL")
    netloc = parts.netloc.rpartition("@")[2]
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else None
    return scheme, host, port or (443 if scheme == "https" else 80), netloc, target, userinfo


def _request(
    method: str,
    netloc: str,
    target: str,
    headers: Sequence[tuple[str, str]],
    *,
    body: bytes | None,
    userinfo: str | None,
) -> bytes:
    names = {name.lower() for name, _ in headers}
    lines = [f"{method} {target} HTTP/1.1", f"Host: {netloc}"]
    defaults = (
        ("accept", "*/*"),
        ("accept-encoding", ACCEPT_ENCODING),
        ("user-agent", _USER_AGENT),
    )
    lines += [f"{name}: {value}" for name, value in defaults if name not in names]
    if userinfo is not None and "authorization" not in names:
        # as httpx does: a URL's user:password is sent as Basic credentials
        user, _, password = userinfo.partition(":")
        token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        lines.append(f"Authorization: Basic {token}")
    lines += [f"{name}: {value}" for name, value in headers]
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + (body or b"")


async def _send(
    connection: _Exchange, request: bytes, max_bytes: int
) -> tuple[int, list[tuple[str, str]], bytes]:
    try:
        return await connection.send(request, max_bytes)
    except BaseException:  # a failure, or the caller's timeout: never pooled half-read
        if connection.transport is not None:
            connection.transport.abort()
        raise


class Pool:
    """Keep-alive connections per origin, for one interviewer (not thread-safe).

    ``resolve(host, port)`` gives a name's addresses; ``admit(addresses)`` raises to
    refuse them (both see every connection this pool opens)."""

    def __init__(
        self,
        tls: ssl.SSLContext,
        *,
        resolve: Callable[[str, int], Awaitable[Sequence[str]]],
        admit: Callable[[Sequence[str]], None] | None = None,
    ) -> None:
        self.tls = tls
        self._resolve = resolve
        self._admit = admit
        self._idle: dict[tuple[str, str, int], list[tuple[_Exchange, str]]] = {}

    async def _connect(self, scheme: str, host: str, port: int) -> tuple[_Exchange, str]:
        name = host.strip("[]")
        try:
            ipaddress.ip_address(name.split("%", 1)[0])
            addresses: Sequence[str] = [name]  # an address: nothing to resolve
        except ValueError:
            try:
                addresses = list(dict.fromkeys(await self._resolve(name, port)))
            except (OSError, UnicodeError) as exc:
                raise WireError("name lookup failed", "name") from exc
        if not addresses:
            raise WireError("name lookup failed", "name")
        if self._admit is not None:
            self._admit(addresses)
        loop = asyncio.get_running_loop()
        tls = self.tls if scheme == "https" else None
        failure: BaseException | None = None
        for address in addresses:
            try:
                _transport, protocol = await loop.create_connection(
                    _Exchange, address, port, ssl=tls, server_hostname=name if tls else None
                )
            except (OSError, ssl.SSLError, ValueError, UnicodeError) as exc:
                failure = exc
                continue
            return protocol, address
        cause = connect_cause(failure) if failure is not None else "connect"
        raise WireError("connect failed", cause) from failure

    async def exchange(
        self,
        method: str,
        url: str,
        headers: Sequence[tuple[str, str]],
        body: bytes | None,
        *,
        max_bytes: int,
    ) -> RawResponse:
        """One request and its response; see the module docstring for what it raises."""
        scheme, host, port, netloc, target, userinfo = _target(url)
        try:
            request = _request(method, netloc, target, headers, body=body, userinfo=userinfo)
        except UnicodeEncodeError:
            raise WireError("header not Latin-1") from None
        key = (scheme, host.lower(), port)
        idle = self._idle.setdefault(key, [])
        while idle:
            connection, peer = idle.pop()
            if connection.closed:
                continue
            try:
                status, response_headers, response_body = await _send(
                    connection, request, max_bytes
                )
                break
            except WireError:
                # A kept-alive connection the server closed while idle fails before any
                # response arrives; the request was not processed: send it afresh.
                if connection.status:
                    raise
        else:
            connection, peer = await self._connect(scheme, host, port)
            status, response_headers, response_body = await _send(connection, request, max_bytes)
        if connection.reusable() and len(idle) < _MAX_IDLE_PER_ORIGIN:
            idle.append((connection, peer))
        elif connection.transport is not None:
            connection.transport.close()
        return RawResponse(status, tuple(response_headers), response_body, peer)

    async def aclose(self) -> None:
        for connections in self._idle.values():
            for connection, _peer in connections:
                if connection.transport is not None:
                    connection.transport.close()
        self._idle.clear()
