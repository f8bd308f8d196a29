"""How the servers this package starts listen: ``demo``, ``demo serve`` and ``proxy``.

One set of bounds every accepted
connection keeps (:class:`Bounds`), applied by :func:`config` to a ``uvicorn.Config``:

- **request head size**: request line and header fields together at most
  ``max_header_bytes`` (64 KiB); beyond, ``431`` and the connection closed. The bytes are
  counted before they reach the parser, so a 176 MiB header costs 64 KiB, not 176 MiB;
- **trailer section** (PROFILE §3.9, D-SERVE-20): the bytes of a chunked body
  that are not body (chunk framing and trailer fields) count against the same bound, so
  600 MiB of trailers cost 64 KiB; trailer fields are dropped, never added to the
  request's headers (uvicorn appends them to ``scope["headers"]``, where an app would read
  a trailer as a header: an ``A2A-Extensions`` trailer would activate);
- **request head time**: a head must arrive within ``header_timeout`` (10 s) of the
  connection opening or of its own first byte; a client dripping header lines is sent
  ``408`` and dropped, and one that connects and sends nothing is closed;
- **request body time**: the body must arrive within ``body_timeout`` (30 s) of the head;
  a slow-drip body is dropped the same way (``408`` if no response began);
- **request body size** (optional, ``max_body``): over it, ``413`` and closed;
- **connections**: at most ``max_connections`` open at once; one more is answered ``503``
  and closed at once, so descriptors are never exhausted (the process's descriptor limit
  is raised to fit, or the bound lowered to fit it, with a warning);
- **a client's share** (D-SERVE-21): one client (an IPv4 address, or an IPv6
  /64) holds at most ``max_client_connections`` of them (default: a tenth of
  ``max_connections``; 0: no share); its next one is answered ``503``, so one address
  cannot take every connection from the others;
- **protocol upgrades** (D-SERVE-22): a request asking to switch protocols
  (``Connection: upgrade`` with ``Upgrade``: WebSocket, ``h2c``; or ``CONNECT``) is
  answered ``400`` and the connection closed, before any app sees it: these servers speak
  HTTP/1.1 only, and the parser stops at an upgrade (a body after it was dropped);
- **response write time** (D-SERVE-30): a client that leaves a response's bytes untaken
  for ``write_timeout`` (30 s) is disconnected: the server's write buffer for it stayed
  over its high-water mark (64 KiB) all that time, so the client took less than the
  48 KiB down to the low-water mark, a minimum rate of about 1.6 KB/s. The app sees
  ``http.disconnect`` (the proxy then closes the upstream stream), and what it had
  written is dropped, so a reader that takes a byte a second holds nothing for long;
- **send buffer** (D-SERVE-36): each accepted socket's kernel send buffer is fixed at
  ``send_buffer`` (256 KiB; 0 leaves the kernel's autotuning), so a client that reads
  slowly cannot make the server push megabytes per connection into the kernel on its
  behalf (up to 4 MiB each when autotuned: a wave of slow readers was a gigabyte copied
  through the event loop while ordinary requests waited);
- **keep-alive**: an idle connection is closed after ``keep_alive`` (5 s).

An app may end a response it cannot complete (the proxy, when upstream breaks off
mid-body) by calling ``scope["extensions"][CLOSE]()``: the connection is closed after
the bytes already written, so the client sees the response cut short, and uvicorn logs
no "returned without completing response" error for it.

uvicorn's ``httptools`` protocol has no head-size bound and no head or body timeout
(``h11_max_incomplete_event_size`` exists for the ``h11`` protocol only, which is slower);
:class:`BoundedHttpToolsProtocol` (put on it by :func:`protocol`) counts and times before
the parser sees a byte, so the fast parser stays. Requires the ``server`` extra. An app
served by uvicorn's own command line keeps the default bounds with
``--http a2a_interview.server.listen:BoundedHttpProtocol``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import socket
import time
import weakref
from collections import Counter
from dataclasses import dataclass, replace
from email.utils import formatdate
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._moved import moved_name

__all__ = [
    "CLOSE",
    "DEFAULT_BOUNDS",
    "Bounds",
    "add_arguments",
    "bounds_from_args",
    "client_of",
    "config",
    "count",
    "http_date",
    "protocol",
]

logger = logging.getLogger("a2a_interview.listen")

CLOSE: Final = "a2a_interview.close"  # the scope extension that ends a response cut short


@dataclass(frozen=True, slots=True)
class Bounds:
    """What one server lets a client hold (module docstring). Times are in seconds."""

    max_header_bytes: int = 64 * 1024
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keep_alive: float = 5.0
    write_timeout: float = 30.0
    max_connections: int = 1000
    max_body: int | None = None
    max_client_connections: int | None = None  # None: a tenth of max_connections; 0: none
    send_buffer: int = 256 * 1024  # bytes; 0: the kernel's autotuning (D-SERVE-36)

    def __post_init__(self) -> None:
        if self.max_header_bytes < 1024:
            raise ValueError("max_header_bytes must be at least 1024")
        for name in ("header_timeout", "body_timeout", "keep_alive", "write_timeout"):
            value = getattr(self, name)
            if not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a number of seconds > 0")
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if self.max_body is not None and self.max_body < 0:
            raise ValueError("max_body must be >= 0")
        if self.max_client_connections is not None and self.max_client_connections < 0:
            raise ValueError("max_client_connections must be >= 0")
        if not (self.send_buffer == 0 or 4096 <= self.send_buffer <= 64 * 1024 * 1024):
            raise ValueError("send_buffer must be 0 or between 4096 and 64 MiB")

    @property
    def client_share(self) -> int | None:
        """Connections one client may hold (``None``: no share of its own)."""
        if self.max_client_connections is None:
            return max(1, self.max_connections // 10)
        return self.max_client_connections or None


DEFAULT_BOUNDS: Final = Bounds()


_REASONS: Final = {
    400: b"Bad Request",
    408: b"Request Timeout",
    413: b"Content Too Large",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}
_BODIES: Final = {
    400: b"protocol upgrade not supported",
    408: b"request not received in time",
    413: b"request body too large",
    431: b"request header fields too large",
    503: b"too many connections",
}


def http_date() -> bytes:
    """The current time as an HTTP ``Date`` value (RFC 9110 §5.6.7), computed once a
    second."""
    now = int(time.time())
    if _DATE[0] != now:
        _DATE[:] = [now, formatdate(now, usegmt=True).encode("ascii")]
    return _DATE[1]  # type: ignore[return-value]


_DATE: list[int | bytes] = [0, b""]


def _refusal(status: int, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    body = _BODIES[status]
    lines = [b"HTTP/1.1 %d %s\r\n" % (status, _REASONS[status])]
    lines += [name + b": " + value + b"\r\n" for name, value in default_headers]
    if all(name.lower() != b"date" for name, _ in default_headers):
        # D-SERVE-22: every response a server makes carries Date (RFC 9110 §6.6.1),
        # also where uvicorn's own is off (the proxy passes upstream's on).
        lines.append(b"date: " + http_date() + b"\r\n")
    lines.append(b"content-type: text/plain; charset=utf-8\r\n")
    lines.append(b"content-length: %d\r\nconnection: close\r\n" % len(body))
    if status == 503:
        lines.append(b"retry-after: 1\r\n")
    return b"".join(lines) + b"\r\n" + body


def client_of(peer: str) -> str:
    """The client a peer address counts as, for its share of connections and for the
    interview's rate limit alike (``asgi.remote_address``; D-NET-15): an IPv4 address
    (also when mapped into IPv6), or an IPv6 /64 (one host's usual allocation, so a
    client cannot multiply its budget by the addresses of its own network)."""
    try:
        address = ipaddress.ip_address(peer.partition("%")[0])
    except ValueError:
        return peer  # a Unix socket's path, or nothing: one client
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


if TYPE_CHECKING:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _HttpTools
else:
    _HttpTools = object


class BoundedHttpToolsProtocol(_HttpTools):
    """Counts request-head and trailer bytes before the parser holds them, drops
    trailer fields, refuses upgrades, keeps each client to its share of connections
    and arms the head and body timers; everything else is uvicorn's.

    A mixin at run time, put before uvicorn's ``HttpToolsProtocol`` by :func:`protocol`
    with the server's ``bounds``, so importing this module needs no uvicorn."""

    bounds: ClassVar[Bounds] = DEFAULT_BOUNDS
    share: ClassVar[int | None] = None  # connections one client may hold (None: any)
    held: ClassVar[Counter[str]]  # open connections by client (client_of), per server

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head = 0  # bytes of the current request head so far
        self._in_body = False
        self._body = 0
        self._framing = 0  # body-section bytes fed since the last body byte
        self._progress = False  # a body byte, or the message's end, in this read
        self._too_large = False
        self._upgrade = False
        self._closing = False
        self._timer: asyncio.TimerHandle | None = None
        self._stall: asyncio.TimerHandle | None = None  # writing paused since
        self._exchange: Any = None  # the cycle of the request whose body is read
        self._counted: str | None = None  # the client whose share this connection is

    # -- timers: armed only while a head or a body is incomplete, so an ordinary
    # request that arrives in one read costs no timer at all.

    def _arm(self, seconds: float) -> None:
        if self._timer is None:
            self._timer = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self._in_body or self._head:
            self._refuse(408)
        elif not self.transport.is_closing():  # connected, and never said a word
            self._closing = True
            self.transport.close()

    def _refuse(self, status: int) -> None:
        """End the connection with ``status``, unless a response to the request in
        question already began (then the connection is just closed)."""
        self._closing = True
        self._disarm()
        # In a body: that request's own exchange (None when it was never started).
        # In a head: the previous exchange, which may still be sending.
        cycle = self._exchange if self._in_body else self.cycle
        busy = cycle is not None and not cycle.response_complete
        began = cycle is not None and cycle.response_started and (busy or self._in_body)
        if not began and not self.transport.is_closing():
            self.transport.write(_refusal(status, self.server_state.default_headers))
        if busy:
            # The app waiting on this request sees the client gone; what it sends
            # now is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    # -- writes: a client that takes nothing for write_timeout is dropped (D-SERVE-30)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(self.bounds.write_timeout, self._stalled)

    def resume_writing(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        super().resume_writing()

    def _stalled(self) -> None:
        self._stall = None
        self._closing = True
        self._disarm()
        # abort, not close: close would wait for the very bytes the client leaves
        # untaken. connection_lost follows: the app's receive() says http.disconnect.
        self.transport.abort()

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.bounds.max_connections:
            self._refuse(503)
            return
        if self.bounds.send_buffer:
            sock = transport.get_extra_info("socket")
            with contextlib.suppress(OSError, AttributeError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.bounds.send_buffer)
        if self.share is not None:
            client = client_of(self.client[0] if self.client else "")
            if self.held[client] >= self.share:
                self._refuse(503)
                return
            self.held[client] += 1
            self._counted = client
        self._arm(self.bounds.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        if self._counted is not None:
            self.held[self._counted] -= 1
            if self.held[self._counted] <= 0:
                del self.held[self._counted]
            self._counted = None
        super().connection_lost(exc)

    def _feed(self, data: bytes) -> bool:
        """Hand ``data`` to the parser; whether the connection is still served."""
        super().data_received(data)
        if self._upgrade and not self._closing:
            self._refuse(400)
        return not (self._closing or self.transport.is_closing())

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        limit = self.bounds.max_header_bytes
        while data:
            if self._in_body or self.parser is None:
                # Body bytes (the parser frames them; a head that starts later in
                # this same read is counted from the next read on). Bytes that
                # deliver no body byte are chunk framing or trailer fields, which
                # the parser holds: they count against the head's bound.
                self._progress = False
                if not self._feed(data):
                    return
                if not self._progress:
                    self._framing += len(data)
                if self._in_body and self._framing > limit:
                    self._refuse(431)
                    return
                break
            room = limit - self._head
            if len(data) <= room:
                self._head += len(data)
                if not self._feed(data):
                    return
                break
            piece, data = data[:room], data[room:]
            self._head += len(piece)
            if not self._feed(piece):
                return
            if not self._in_body and self._head:  # the head is still not over at the bound
                self._refuse(431)
                return
            # Else the head ended in `piece`: the rest is body, or (a request that
            # ended in `piece`, `_head` back at 0) pipelined requests, counted afresh.
        if self._closing or self.transport.is_closing():
            return
        if self._too_large:
            self._refuse(413)
        elif self._in_body:
            self._arm(self.bounds.body_timeout)
        elif self._head:
            self._arm(self.bounds.header_timeout)

    # -- upgrades: never performed (module docstring)

    def _should_upgrade(self) -> bool:
        return False

    def _unsupported_upgrade_warning(self) -> None:
        pass  # answered 400 by _feed, without a log line per request

    # -- parser callbacks

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._in_body:
            # A trailer field (RFC 9112 §7.1.2): counted, never a header. PROFILE
            # §3.9: a trailer never activates and is never forwarded as a header.
            self._framing += len(name) + len(value) + 4
            return
        # RFC 9110 §5.5: a field value excludes leading and trailing whitespace. The
        # parser leaves trailing blanks in; the app (and any upstream a proxy forwards
        # to, whose client refuses such a value) gets the value itself.
        super().on_header(name, value.strip(b" \t"))

    def on_headers_complete(self) -> None:
        self._disarm()
        self._in_body = True
        self._body = 0
        self._framing = 0
        self._exchange = None
        if self.parser.should_upgrade():
            self._upgrade = True  # refused once the parser stops (_feed)
            return
        if self.bounds.max_body is not None:
            for name, value in self.headers:
                length = value.strip()
                if (
                    name == b"content-length"
                    and length.isdigit()
                    and int(length) > self.bounds.max_body
                ):
                    self._too_large = True  # refused after this read
                    return
        super().on_headers_complete()
        self._exchange = self.cycle
        if self.cycle is not None:
            exchange = weakref.ref(self.cycle)  # no cycle scope -> closure -> cycle
            extensions: dict[str, Any] = self.cycle.scope.setdefault("extensions", {})
            extensions[CLOSE] = lambda: self._cut(exchange())

    def _cut(self, cycle: Any) -> None:
        """End ``cycle``'s response where it stands: closed after what was written."""
        if cycle is None or cycle.response_complete:
            return
        cycle.disconnected = True
        cycle.message_event.set()
        if cycle is self.cycle:
            self._closing = True
            self._disarm()
            self.transport.close()

    def on_body(self, body: bytes) -> None:
        self._progress = True
        self._framing = 0
        if self._too_large:
            return
        if self.bounds.max_body is not None:
            self._body += len(body)
            if self._body > self.bounds.max_body:
                self._too_large = True
                return
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_body = False
        self._head = 0
        self._progress = True
        if not (self._too_large or self._upgrade):
            super().on_message_complete()


def protocol(bounds: Bounds = DEFAULT_BOUNDS) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol keeping ``bounds`` (module docstring), for
    ``uvicorn.Config(http=...)``: :class:`BoundedHttpToolsProtocol` on uvicorn's own, with
    its own count of each client's connections. Raises ``ImportError`` naming the
    ``server`` extra."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "serving needs the 'server' extra: pip install 'a2a-interview[server]'"
        ) from exc
    namespace: dict[str, Any] = {"bounds": bounds, "share": bounds.client_share, "held": Counter()}
    bases = (BoundedHttpToolsProtocol, HttpToolsProtocol)
    return type("BoundedHttpToolsProtocol", bases, namespace)


def __getattr__(name: str) -> Any:
    """``BoundedHttpProtocol``: :func:`protocol` with the default bounds, for an app
    served by a stock uvicorn command line (the middleware's users):
    ``uvicorn app:app --http a2a_interview.server.listen:BoundedHttpProtocol``."""
    if name == "BoundedHttpProtocol":
        value = globals()[name] = protocol()
        return value
    return moved_name(__name__, name)


def _fit_descriptors(bounds: Bounds, per_connection: int) -> Bounds:
    """Raise the soft descriptor limit so ``max_connections`` fits, or lower the bound to
    what fits (with a warning): accepting past the limit fails every new connection."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return bounds
    spare = 64  # listening sockets, log files, the event loop's own, outgoing fetches
    needed = bounds.max_connections * per_connection + spare
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft != resource.RLIM_INFINITY and soft < needed:
        fits = max(1, (soft - spare) // per_connection)
        logger.warning(
            "at most %d connections fit the descriptor limit (%d); serving at most %d",
            bounds.max_connections, soft, fits,
        )  # fmt: skip
        return replace(bounds, max_connections=fits)
    return bounds


def config(
    app: Any, bounds: Bounds = DEFAULT_BOUNDS, *, per_connection: int = 1, **options: Any
) -> Any:
    """A ``uvicorn.Config`` for ``app`` keeping ``bounds``; ``options`` are passed on
    (``lifespan``, ``log_level``, ...). ``per_connection`` is how many descriptors one
    client connection may cost (2 for a proxy: the client's and upstream's)."""
    import uvicorn

    bounds = _fit_descriptors(bounds, per_connection)
    return uvicorn.Config(
        app,
        http=protocol(bounds),
        timeout_keep_alive=bounds.keep_alive,  # type: ignore[arg-type]
        **options,
    )


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds > 0")
    return value


def count(low: int) -> Any:
    """An argparse type: a whole number of at least ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{text!r} is less than {low}")
        return value

    return parse


def _send_buffer(text: str) -> int:
    value: int = count(0)(text)
    if 0 < value < 4096 or value > 64 * 1024 * 1024:
        raise argparse.ArgumentTypeError(f"{text!r} is neither 0 nor between 4096 and 64 MiB")
    return value


def add_arguments(
    parser: argparse.ArgumentParser, *, max_body: int | None = None, body: bool = True
) -> None:
    """The bounds as command-line options, defaults shown: ``--max-connections``,
    ``--max-client-connections``, ``--max-header-bytes``, ``--header-timeout``,
    ``--keep-alive``, ``--write-timeout``; with ``body``,
    ``--body-timeout`` too, and ``--max-body`` when ``max_body`` is given (a command
    that has body options of its own, as ``proxy`` does, passes ``body=False``)."""
    d = DEFAULT_BOUNDS
    group = parser.add_argument_group("connection bounds")
    group.add_argument("--max-connections", type=count(1), default=d.max_connections,
                       metavar="N", help=f"open connections at most (default {d.max_connections}"
                       "; one more is answered 503)")  # fmt: skip
    group.add_argument("--max-client-connections", type=count(0), default=None, metavar="N",
                       help="open connections one client address (an IPv6 /64) may hold "
                       "(default: a tenth of --max-connections; 0: no share; behind a "
                       "balancer every client has its address); one more is answered "
                       "503")  # fmt: skip
    group.add_argument("--max-header-bytes", type=count(1024), default=d.max_header_bytes,
                       metavar="BYTES", help="request line and headers at most (default "
                       f"{d.max_header_bytes}; more is answered 431)")  # fmt: skip
    group.add_argument("--header-timeout", type=_positive, default=d.header_timeout,
                       metavar="S", help="seconds to receive a request's headers (default "
                       f"{d.header_timeout:g}; then 408)")  # fmt: skip
    if body:
        group.add_argument("--body-timeout", type=_positive, default=d.body_timeout,
                           metavar="S", help="seconds to receive a request's body after "
                           f"its headers (default {d.body_timeout:g}; then 408)")  # fmt: skip
    group.add_argument("--keep-alive", type=_positive, default=d.keep_alive, metavar="S",
                       help="seconds an idle connection stays open (default "
                       f"{d.keep_alive:g})")  # fmt: skip
    group.add_argument("--write-timeout", type=_positive, default=d.write_timeout,
                       metavar="S", help="seconds a client may leave a response's bytes "
                       f"untaken before it is disconnected (default {d.write_timeout:g}; "
                       "about 48 KiB per S seconds at least)")  # fmt: skip
    group.add_argument("--send-buffer", type=_send_buffer, default=d.send_buffer,
                       metavar="BYTES", help="each connection's kernel send buffer (default "
                       f"{d.send_buffer}; 0: the kernel's autotuning, faster for large "
                       "responses over long paths, but a slow reader then holds up to "
                       "megabytes)")  # fmt: skip
    if body and max_body is not None:
        group.add_argument("--max-body", type=count(0), default=max_body, metavar="BYTES",
                           help=f"request body at most (default {max_body}; more is "
                           "answered 413)")  # fmt: skip


def bounds_from_args(args: argparse.Namespace, *, body: bool = True) -> Bounds:
    """The :class:`Bounds` the options of :func:`add_arguments` (called with the same
    ``body``) chose; without ``body`` the body bounds keep their defaults (no size
    bound), whatever body options the command has of its own."""
    return Bounds(
        max_header_bytes=args.max_header_bytes,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout if body else DEFAULT_BOUNDS.body_timeout,
        keep_alive=args.keep_alive,
        write_timeout=args.write_timeout,
        max_connections=args.max_connections,
        max_client_connections=args.max_client_connections,
        send_buffer=args.send_buffer,
        max_body=getattr(args, "max_body", None) if body else None,
    )
