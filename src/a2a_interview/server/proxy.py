"""The interview in front of any A2A agent whose card declares it (PROFILE §9).

    app, live = await build_proxy("http://10.0.0.5:8080")   # fetch, verify, or refuse
    run("http://10.0.0.5:8080", port=9000)                 # the same, served by uvicorn

On start the proxy fetches the upstream card (``{upstream}/.well-known/agent-card.json``,
or the URL itself when it names a ``.json`` document) and every proposal its terms entries
commit to, and runs the self-check of PROFILE §2.4. It refuses to start, raising
``DeclarationError`` (or :class:`ProxyError` when the upstream cannot be read), when the
card does not declare the interview, declares it ``required: true``, or a committed
proposal fails verification (the message names the entry's pointer and the reason code of
terms §3).

Then it serves, on the paths of the card's own interfaces:

- the five methods, through :class:`~a2a_interview.server.asgi.InterviewMiddleware`,
  answered from the card *exactly as upstream serves it*;
- the card itself, at the card URL's path, as the very bytes the answers were projected
  from (not re-serialized: a signed card stays verifiable, and a verifier that fetches
  the card from the proxy diffs against the same document the answers came from);
- everything else, passed through to upstream: method, path, query, headers (less the
  hop-by-hop ones), body streamed both ways, Server-Sent Events unbuffered, status and
  headers back.

The card's interface URLs are not rewritten: a deployment puts the proxy at the public
address the card declares, with the agent itself behind it. Upstream paths map to the same
paths on the proxy.

Changes to the upstream card are followed by polling (``If-None-Match`` with the last
ETag); a changed card is verified like the first one and swapped in whole through
:class:`~a2a_interview.server.lifecycle.LiveDeclarations`, and a changed card that fails
keeps the last good set serving and is logged.

Every upstream read is bounded: declared documents by size (1 MiB), a total deadline and a
redirect policy (same origin only, at most three hops); pass-through traffic by connect and
inactivity timeouts (it is streamed, never buffered, so it needs no size bound here).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import socket
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the proxy needs the 'server' and 'client' extras: "
        "pip install 'a2a-interview[server,client]'"
    ) from exc

from ..declarations import Declarations, build, read_card
from ..errors import DeclarationError, IngressError, InterviewError
from ..spec import CARD_PATH, MAX_DOCUMENT_BYTES
from ..terms import read_terms_entries
from ..verifier.client import InsecureURL, check_url, origin
from .asgi import (
    ASGIApp,
    ClientKey,
    InterviewMiddleware,
    Receive,
    Scope,
    Send,
    interface_paths,
    remote_address,
    send_document,
)
from .lifecycle import LiveDeclarations
from .listen import bind

log = logging.getLogger("a2a_interview.proxy")

DEFAULT_POLL: Final = 30.0
DEFAULT_TIMEOUT: Final = 10.0  # the whole fetch of one declared document
CONNECT_TIMEOUT: Final = 5.0
STREAM_IDLE_TIMEOUT: Final = 300.0  # pass-through: longest silence between two reads
MAX_REDIRECTS: Final = 3
DEFAULT_CACHE_CONTROL: Final = "public, max-age=60"

# RFC 9110 §7.6.1: connection-specific fields, never forwarded. `Host` is forwarded as
# the client sent it (the public name the card declares); `Expect` is answered by the
# server in front of us.
_HOP_BY_HOP: Final = frozenset({
    b"connection", b"keep-alive", b"proxy-authenticate", b"proxy-authorization",
    b"proxy-connection", b"te", b"trailer", b"trailers", b"transfer-encoding", b"upgrade",
})  # fmt: skip
_NOT_FORWARDED: Final = _HOP_BY_HOP | {b"expect"}
_BAD_GATEWAY: Final = (502, b"upstream unavailable\n")
_GATEWAY_TIMEOUT: Final = (504, b"upstream timed out\n")
_BAD_TARGET: Final = (400, b"request target not forwarded\n")


class ProxyError(InterviewError):
    """The proxy cannot start or cannot read its upstream: unreachable, a non-2xx or
    oversized card, a refused redirect, no interface to serve the interview on, or an
    unusable rate-limit store."""

    code = "proxy"


# ---------------------------------------------------------------------------- fetching


@dataclass(frozen=True, slots=True)
class _Fetched:
    status: int
    body: bytes
    headers: httpx.Headers


async def _fetch(
    client: httpx.AsyncClient,
    url: str,
    *,
    max_bytes: int,
    timeout: float,
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> _Fetched:
    """GET ``url`` with a total deadline, a size bound and same-origin redirects only.

    Returns the final response (any status, 304 included) with its whole body. Raises
    :class:`ProxyError` on a transport error, the deadline, a body over ``max_bytes``,
    a cross-origin redirect, or more than ``MAX_REDIRECTS`` hops.
    """
    start = origin(url)
    try:
        async with asyncio.timeout(timeout):
            for _ in range(MAX_REDIRECTS + 1):
                request = httpx.Request("GET", url, headers=headers)
                response = await client.send(request, stream=True)
                try:
                    location = response.headers.get("location")
                    if response.is_redirect and location is not None:
                        url = urljoin(url, location)
                        try:
                            same = origin(url) == start
                        except InsecureURL:
                            same = False
                        if not same:
                            raise ProxyError("a cross-origin redirect was refused")
                        continue
                    length = response.headers.get("content-length", "")
                    if length.isdigit() and int(length) > max_bytes:
                        raise ProxyError(f"the document is larger than {max_bytes} bytes")
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in response.aiter_bytes():
                        size += len(chunk)
                        if size > max_bytes:
                            raise ProxyError(f"the document is larger than {max_bytes} bytes")
                        chunks.append(chunk)
                    return _Fetched(response.status_code, b"".join(chunks), response.headers)
                finally:
                    await response.aclose()
            raise ProxyError(f"more than {MAX_REDIRECTS} redirects")
    except TimeoutError:
        raise ProxyError(f"no complete answer within {timeout:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise ProxyError(f"transport error ({type(exc).__name__})") from None


# ---------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class UpstreamDeclarations(Declarations):
    """Declarations read from upstream, with the card's bytes exactly as served.

    ``card_bytes`` is what the proxy serves as the card; ``validator`` is upstream's
    ``ETag`` (for ``If-None-Match`` when polling); ``etag`` is the proxy's own strong
    tag over ``card_bytes``.
    """

    card_bytes: bytes
    content_type: bytes
    validator: bytes | None
    etag: bytes


def _card_url(upstream: str) -> str:
    try:
        parts = urlsplit(upstream)  # raises ValueError for a malformed IPv6 host
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ProxyError("the upstream URL has an unusable port or host") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProxyError("the upstream must be an http:// or https:// URL")
    if parts.path.endswith(".json"):
        return upstream
    return parts._replace(path=parts.path.rstrip("/") + CARD_PATH).geturl()


class _Upstream:
    """The upstream agent: where its card is, and how the proxy talks to it.

    The HTTP client is created lazily in the event loop that uses it (pooled
    connections belong to one loop), so an app built in one loop can be served in
    another.
    """

    def __init__(
        self,
        upstream: str,
        *,
        timeout: float,
        max_bytes: int,
        idle_timeout: float,
        transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        self.card_url = _card_url(upstream)
        scheme, host, port = origin(self.card_url)
        netloc = f"[{host}]" if ":" in host else host
        self.origin = f"{scheme}://{netloc}:{port}"
        self.card_path = urlsplit(self.card_url).path
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.idle_timeout = idle_timeout
        self.transport = transport
        self.live: LiveDeclarations | None = None
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self.transport,
                follow_redirects=False,  # redirects are the caller's, by policy
                timeout=httpx.Timeout(self.idle_timeout, connect=CONNECT_TIMEOUT),
                limits=httpx.Limits(max_connections=256, max_keepalive_connections=64),
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _proposal(self, url: str) -> bytes | None:
        # terms §3 step 1: HTTPS, or HTTP on loopback for local tests.
        try:
            check_url(url)
        except InsecureURL:
            return None
        try:
            fetched = await _fetch(
                self.client(), url, max_bytes=self.max_bytes, timeout=self.timeout
            )
        except ProxyError:
            return None
        return fetched.body if 200 <= fetched.status < 300 else None

    async def load(self) -> UpstreamDeclarations:
        """Fetch the card, verify it and its proposals, and build the answers.

        Returns the current set unchanged when upstream answers ``304`` or the same
        bytes. Raises :class:`ProxyError` when the card cannot be read or offers no
        interface to serve on, and ``DeclarationError`` when the self-check fails.
        """
        current = self.live.declarations if self.live is not None else None
        previous = current if isinstance(current, UpstreamDeclarations) else None
        headers = [(b"accept", b"application/json")]
        if previous is not None and previous.validator is not None:
            headers.append((b"if-none-match", previous.validator))
        try:
            fetched = await _fetch(
                self.client(), self.card_url, max_bytes=self.max_bytes,
                timeout=self.timeout, headers=headers,
            )  # fmt: skip
        except ProxyError as exc:
            raise ProxyError(f"cannot read the upstream card at {self.card_url}: {exc}") from None
        if previous is not None and (
            fetched.status == 304 or (fetched.status == 200 and fetched.body == previous.card_bytes)
        ):
            return previous
        if fetched.status != 200:
            raise ProxyError(
                f"cannot read the upstream card at {self.card_url}: HTTP {fetched.status}"
            )
        try:
            card = read_card(fetched.body, max_bytes=self.max_bytes)
        except IngressError as exc:
            raise DeclarationError(f"the upstream card is not strict I-JSON ({exc.code})") from None
        urls = sorted({e.url for e in read_terms_entries(card) if e.url is not None})
        bodies = await asyncio.gather(*(self._proposal(u) for u in urls))
        fetched_proposals = {u: b for u, b in zip(urls, bodies, strict=True) if b is not None}
        declarations = build(card, fetched_proposals, max_bytes=self.max_bytes)
        if not (interface_paths(card, "JSONRPC") or interface_paths(card, "HTTP+JSON")):
            raise ProxyError(
                "the upstream card declares no JSONRPC or HTTP+JSON interface to serve on"
            )
        body = fetched.body
        result = UpstreamDeclarations(
            declarations.card,
            declarations.verdicts,
            declarations.interview,
            card_bytes=body,
            content_type=next(
                (v for k, v in fetched.headers.raw if k.lower() == b"content-type"),
                b"application/json",
            ),
            # Raw bytes: an ETag may carry obs-text (RFC 9110 §8.8.3), which httpx
            # would decode and then fail to encode again as a request header.
            validator=next((v for k, v in fetched.headers.raw if k.lower() == b"etag"), None),
            etag=b'"' + hashlib.sha256(body).hexdigest()[:32].encode() + b'"',
        )
        if previous is not None and previous.interview.card_digest != result.interview.card_digest:
            log.info(
                "the upstream card changed; now serving %s with %d verified proposal(s)",
                declarations.interview.card_digest, len(declarations.verdicts),
            )  # fmt: skip
        return result


# ---------------------------------------------------------------------------- serving


class _CardServer:
    """Serves the card at its path from the bytes the current answers came from."""

    def __init__(self, app: ASGIApp, live: LiveDeclarations, path: str, cache: str) -> None:
        self.app = app
        self.live = live
        self.path = path
        self.cache_control = cache.encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        snapshot = self.live.declarations
        if (
            scope["type"] != "http"
            or scope["method"] not in ("GET", "HEAD")
            or scope["path"] != self.path
            or not isinstance(snapshot, UpstreamDeclarations)
        ):
            await self.app(scope, receive, send)
            return
        await send_document(
            scope, send, snapshot.card_bytes, snapshot.etag, self.cache_control,
            content_type=snapshot.content_type,
        )  # fmt: skip


def _listed(headers: Iterable[tuple[bytes, bytes]]) -> set[bytes]:
    """Field names a ``Connection`` header marks as hop-by-hop (RFC 9110 §7.6.1)."""
    named: set[bytes] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            named.update(v.strip().lower() for v in value.split(b",") if v.strip())
    return named


def _request_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    raw: list[tuple[bytes, bytes]] = scope["headers"]
    drop = _NOT_FORWARDED | _listed(raw)
    out = [(n, v) for n, v in raw if n.lower() not in drop]
    client = scope.get("client")
    if client:
        forwarded = [v for n, v in out if n.lower() == b"x-forwarded-for"]
        out = [(n, v) for n, v in out if n.lower() != b"x-forwarded-for"]
        chain = b", ".join([*forwarded, str(client[0]).encode("latin-1")])
        out.append((b"x-forwarded-for", chain))
    if all(n.lower() != b"x-forwarded-proto" for n, _ in out):
        out.append((b"x-forwarded-proto", str(scope.get("scheme", "http")).encode("latin-1")))
    return out


def _response_headers(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    raw = response.headers.raw
    drop = _HOP_BY_HOP | _listed(raw)
    return [(n.lower(), v) for n, v in raw if n.lower() not in drop]


async def _plain(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"),
               (b"content-length", str(len(body)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _ClientLeft(Exception):
    """The downstream client disconnected while its request body was being forwarded."""


class _PassThrough:
    """Forwards a request to upstream and streams the response back, unbuffered."""

    def __init__(self, upstream: _Upstream) -> None:
        self.upstream = upstream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1000})
            return
        if scope["type"] != "http":
            return
        path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
        if not path.startswith(b"/"):
            # Only origin-form targets are forwarded: `OPTIONS *` has no URL of its own
            # upstream, and a target such as `@host/x` would name another host once
            # appended to the upstream's origin.
            await _plain(send, *_BAD_TARGET)
            return
        query: bytes = scope.get("query_string", b"")
        url = self.upstream.origin + path.decode("latin-1")
        if query:
            url += "?" + query.decode("latin-1")
        headers = _request_headers(scope)
        has_body = any(
            (n == b"content-length" and v.strip() not in (b"", b"0")) or (n == b"transfer-encoding")
            for n, v in scope["headers"]
        )
        body_done = not has_body

        async def body() -> AsyncIterator[bytes]:
            nonlocal body_done
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _ClientLeft
                chunk = message.get("body", b"")
                if chunk:
                    yield chunk
                if not message.get("more_body", False):
                    body_done = True
                    return

        request = httpx.Request(
            scope["method"], url, headers=headers, content=body() if has_body else None
        )
        try:
            response = await self.upstream.client().send(request, stream=True)
        except _ClientLeft:
            return
        except httpx.TimeoutException:
            await _plain(send, *_GATEWAY_TIMEOUT)
            return
        except httpx.HTTPError as exc:
            log.warning("upstream request failed: %s", type(exc).__name__)
            await _plain(send, *_BAD_GATEWAY)
            return
        try:
            await send({
                "type": "http.response.start",
                "status": response.status_code,
                "headers": _response_headers(response),
            })  # fmt: skip
            if body_done:
                await self._stream_until_gone(response, receive, send)
            else:  # upstream answered before reading the whole request body
                await self._stream(response, send)
        except httpx.HTTPError as exc:
            # Headers are out: end the exchange without completing the body, so the
            # client sees a truncated response rather than a silently short one.
            log.warning("upstream response broke off: %s", type(exc).__name__)
        finally:
            await response.aclose()

    @staticmethod
    async def _stream(response: httpx.Response, send: Send) -> None:
        async for chunk in response.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _stream_until_gone(
        self, response: httpx.Response, receive: Receive, send: Send
    ) -> None:
        # A server keeps `send` silent once the client has gone; watch `receive` so an
        # endless upstream stream (SSE) is closed as soon as nobody is listening.
        streaming = asyncio.ensure_future(self._stream(response, send))

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


class ProxyApp:
    """The proxy as an ASGI application.

    Handles ``lifespan``: startup begins following the upstream card (every ``poll``
    seconds; ``0`` never), shutdown stops it and closes the upstream connections. A host
    without lifespan support may call :meth:`start_polling` and :meth:`aclose` itself.
    """

    def __init__(
        self,
        app: ASGIApp,
        live: LiveDeclarations,
        upstream: _Upstream,
        poll: float,
        *,
        recovered: Callable[[], None] = lambda: None,
    ) -> None:
        self.app = app
        self.live = live
        self.upstream = upstream
        self.poll = poll
        self._recovered = recovered
        self._poller: asyncio.Task[None] | None = None

    @property
    def card_url(self) -> str:
        return self.upstream.card_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        await self.app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.start_polling()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def start_polling(self) -> None:
        """Begin following the upstream card (idempotent; a no-op when ``poll`` is 0)."""
        if self.poll > 0 and self._poller is None:
            self._poller = asyncio.ensure_future(self._follow())

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(self.poll)
            try:
                failing = self.live.last_error is not None
                # Failures are reported by on_error and keep the last good set.
                if await self.live.reload() and failing:
                    log.info("following the upstream card again")
                    self._recovered()
            except Exception:  # a defect, not upstream's: keep following regardless
                log.exception("unexpected failure while following the upstream card")

    async def aclose(self) -> None:
        """Stop following the upstream card and close upstream connections."""
        poller, self._poller = self._poller, None
        if poller is not None:
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller
        await self.upstream.aclose()


class _Reporter:
    """The default ``on_error``: each distinct failure logged once as a warning, its
    repeats on later polls at debug level, until a reload succeeds again."""

    def __init__(self) -> None:
        self.last: str | None = None

    def __call__(self, exc: InterviewError) -> None:
        message = f"{exc} [{exc.code}]"
        level = logging.DEBUG if message == self.last else logging.WARNING
        self.last = message
        log.log(level, "could not follow the upstream card, serving the last good set: %s",
                message)  # fmt: skip

    def clear(self) -> None:
        self.last = None


async def build_proxy(
    upstream: str,
    *,
    poll: float = DEFAULT_POLL,
    limiter: Any = None,
    client_key: ClientKey = remote_address,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    idle_timeout: float = STREAM_IDLE_TIMEOUT,
    cache_control: str = DEFAULT_CACHE_CONTROL,
    on_error: Callable[[InterviewError], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> tuple[ProxyApp, LiveDeclarations]:
    """Fetch and verify the upstream's declarations; return the proxy app and its live set.

    ``upstream`` is the agent's base URL, or its card URL when the path ends in ``.json``.
    ``limiter`` (a :class:`~a2a_interview.server.ratelimit.RateLimiter`) counts interview
    calls per ``client_key``; ``on_error`` hears each failed follow-up (default: logged
    once per distinct failure). ``transport`` replaces the network (tests).

    Returns ``(app, live)``. Raises, before anything is served:

    - ``DeclarationError`` when the card does not declare the interview, declares it
      ``required: true``, is not strict I-JSON, or a committed proposal fails
      verification (the message names the entry's pointer and the terms §3 reason);
    - :class:`ProxyError` when the card cannot be fetched (transport error, non-2xx,
      over ``max_bytes``, past ``timeout``, a cross-origin redirect) or declares no
      JSONRPC or HTTP+JSON interface.
    """
    source = _Upstream(upstream, timeout=timeout, max_bytes=max_bytes,
                       idle_timeout=idle_timeout, transport=transport)  # fmt: skip
    reporter = _Reporter()
    try:
        live = await LiveDeclarations.start(source.load, on_error=on_error or reporter)
    finally:
        await source.aclose()  # the serving loop opens its own connections
    source.live = live
    passthrough = _PassThrough(source)
    card = _CardServer(passthrough, live, source.card_path, cache_control)
    layer = InterviewMiddleware(card, live, limiter=limiter, client_key=client_key,
                                serve_card=False)  # fmt: skip
    return ProxyApp(layer, live, source, poll, recovered=reporter.clear), live


# ---------------------------------------------------------------------------- running


@dataclass(frozen=True, slots=True)
class ProxyInfo:
    """What a started proxy serves, for a start-up line."""

    listen: str
    card_url: str
    card_digest: str
    proposals: int
    rpc_paths: tuple[str, ...]
    rest_paths: tuple[str, ...]


def describe(app: ProxyApp, listen: str) -> ProxyInfo:
    """The paths and declarations ``app`` currently serves."""
    declarations = app.live.declarations
    card = declarations.card
    return ProxyInfo(
        listen, app.card_url, declarations.interview.card_digest, len(declarations.verdicts),
        tuple(interface_paths(card, "JSONRPC")), tuple(interface_paths(card, "HTTP+JSON")),
    )  # fmt: skip


def _bind(host: str, port: int) -> socket.socket:
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise ProxyError(f"cannot listen on {host}:{port} ({exc.strerror})") from None
    sock.setblocking(False)
    return sock


async def serve(
    upstream: str,
    *,
    port: int,
    host: str = "127.0.0.1",
    rate_limit: str | None = None,
    storage: str = "memory://",
    poll: float = DEFAULT_POLL,
    timeout: float = DEFAULT_TIMEOUT,
    access_log: bool = False,
    started: Callable[[ProxyInfo], None] | None = None,
) -> None:
    """Build the proxy, check the rate-limit store, bind, and serve until shut down.

    ``rate_limit`` is in the ``limits`` notation (``None``: no limit); ``storage`` is
    ``memory://`` or a Redis URL shared by several replicas. ``started`` is called once
    the socket listens. Raises what :func:`build_proxy` raises, and :class:`ProxyError`
    when the port cannot be bound or the Redis store does not answer; nothing is left
    listening when it raises.
    """
    import uvicorn

    limiter = None
    if rate_limit is not None:
        from .ratelimit import RateLimiter

        try:
            limiter = RateLimiter(rate_limit, storage)
        except Exception as exc:  # the limits library's configuration errors
            raise ProxyError(f"unusable rate limit store ({type(exc).__name__})") from None
        try:
            healthy = bool(await limiter.storage.check())
        except Exception:
            healthy = False
        if not healthy:
            raise ProxyError("the rate limit store does not answer")
    app, _ = await build_proxy(upstream, poll=poll, limiter=limiter, timeout=timeout)
    try:
        sock = _bind(host, port)
    except ProxyError:
        await app.aclose()
        raise
    from . import listen  # the bounds every server of this package keeps

    # Two descriptors a client may cost: its own connection and one upstream.
    config = listen.config(
        app,
        listen.DEFAULT_BOUNDS,
        per_connection=2,
        lifespan="on",
        access_log=access_log,
        log_level="info" if access_log else "warning",
        # The upstream's own Date and Server headers pass through; add none of ours.
        server_header=False,
        date_header=False,
        # The client is the socket's peer: it keys the rate limit and is what
        # X-Forwarded-For gets appended (a forwarded chain is passed on, not trusted).
        proxy_headers=False,
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    if started is not None:
        bound = sock.getsockname()
        netloc = f"[{host}]" if ":" in host else host
        started(describe(app, f"http://{netloc}:{bound[1]}"))
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
        await app.aclose()


def run(upstream: str, *, port: int, **options: Any) -> None:
    """:func:`serve` on a fresh event loop (uvloop when installed); blocks until stopped."""
    import uvicorn

    loop_factory = uvicorn.Config(app=None).get_loop_factory()  # type: ignore[arg-type]
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve(upstream, port=port, **options))
