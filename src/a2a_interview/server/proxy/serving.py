"""Serving the proxy: the ASGI application, following the upstream card, and the
listening server.

:func:`build_proxy` fetches and verifies (:mod:`.upstream`) and returns a
:class:`ProxyApp` around the front (:mod:`.front`); :func:`serve` and :func:`run` listen
with :func:`server_config`, which bounds every header section, trailers included, drops
trailer fields and refuses protocol upgrades (``server/listen.py``, PROFILE §3.9). Every
response carries a ``Date`` (upstream's own, else the proxy's).

Changes to the upstream card are followed by polling (``If-None-Match``) and on every
card request; a changed card that fails keeps the last good set serving and is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import httpx

from ...errors import InterviewError
from ...net.sockets import bind
from ...net.urls import http_origin
from ...spec import MAX_DOCUMENT_BYTES
from ..asgi import ClientKey, Message, Receive, Scope, Send, interface_paths, remote_address
from ..lifecycle import LiveDeclarations
from ..listen import http_date
from .fetch import DEFAULT_TIMEOUT, ProxyError, printable
from .front import Front
from .headers import trusted_peers
from .upstream import STREAM_IDLE_TIMEOUT, ProxyOptions, Upstream

log = logging.getLogger("a2a_interview.proxy")

DEFAULT_POLL: Final = 30.0


def _dated(send: Send) -> Send:
    """``send`` giving every response a ``Date`` (D-SERVE-22): the proxy's own
    answers, refusals and errors, and upstream's responses that came without one
    (RFC 9110 §6.6.1: a recipient with a clock adds it when forwarding). Upstream's own
    ``Date`` passes through unchanged."""

    async def dated(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = message.get("headers", ())
            # A plain loop, names of four bytes only lowered (D-PROXY-49).
            for name, _ in headers:
                if len(name) == 4 and name.lower() == b"date":
                    break
            else:
                message = {**message, "headers": [*headers, (b"date", http_date())]}
        await send(message)

    return dated


class ProxyApp:
    """The proxy as an ASGI application.

    Handles ``lifespan``: startup begins following the upstream card (every ``poll``
    seconds; ``0`` never), shutdown stops it and closes the upstream connections. A host
    without lifespan support may call :meth:`start_polling` and :meth:`aclose` itself.
    """

    def __init__(
        self,
        app: Any,
        live: LiveDeclarations,
        upstream: Upstream,
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
        if scope["type"] == "http":
            send = _dated(send)
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
            for key, live in list(self.upstream.variants.items()):
                try:
                    failing = live.last_error is not None
                    # Failures are reported by on_error and keep the last good set.
                    async with self.upstream.lock(key):
                        ok = await live.reload()
                    if ok and failing:
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


def bypassing(card: Any, public_url: str) -> list[str]:
    """The card's interface URLs that do not point at ``public_url``'s origin: a client
    that follows the card there bypasses the proxy and its interview."""
    public = http_origin(public_url)
    out: list[str] = []
    from ...declarations import interfaces

    for item in interfaces(card):
        if http_origin(item.url) != public and item.url not in out:
            out.append(item.url)
    return out


def _warn_bypassing(card: Any, public_url: str, *, declare: bool) -> None:
    """One warning per interface that does not point at the proxy, with advice that fits
    what the proxy was told: a gRPC interface is never the proxy's to carry (PROFILE §3b),
    and ``--declare`` already moves every interface it can (docs/decisions.md D-PROXY-34)."""
    from ...declarations import interfaces

    grpc = {i.url for i in interfaces(card) if i.binding == "GRPC"}
    for url in bypassing(card, public_url):
        if url in grpc:
            log.info(
                "the card's gRPC interface %s is not proxied: gRPC clients reach the agent "
                "there, and the interview is never offered on gRPC", printable(url),
            )  # fmt: skip
            continue
        if declare:
            advice = "its URL names no origin --declare can move: fix the card"
        else:
            advice = "run with --declare, or fix the card"
        log.warning(
            "the card's interface %s does not point at this proxy (%s): clients that "
            "follow the card bypass the interview; %s",
            printable(url), printable(public_url), advice,
        )  # fmt: skip


async def build_proxy(
    upstream: str,
    *,
    poll: float = DEFAULT_POLL,
    limiter: Any = None,
    client_key: ClientKey = remote_address,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    idle_timeout: float = STREAM_IDLE_TIMEOUT,
    options: ProxyOptions | None = None,
    on_error: Callable[[InterviewError], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    **option_values: Any,
) -> tuple[ProxyApp, LiveDeclarations]:
    """Fetch and verify the upstream's declarations; return the proxy app and its live set.

    ``upstream`` is the agent's base URL, or its card URL when the path ends in ``.json``.
    ``limiter`` (a :class:`~a2a_interview.server.ratelimit.RateLimiter`) counts interview
    calls per ``client_key``; ``on_error`` hears each failed follow-up (default: logged
    once per distinct failure). ``options`` (or its fields as keywords: ``public_url``,
    ``declare``, ``card_key``, ``card_kid``, ``card_alg``, ``card_jku``, ``proposals``,
    ``card_cache_control``, ``max_body``, ``body_timeout``, ``upstream_connections``,
    ``upstream_wait``, ``upstream_client_connections``, ``forwarded_allow_ips``) shape the
    card, the bounds and what is forwarded.
    ``transport`` replaces the network (tests).

    Returns ``(app, live)``, ``live`` being the default card variant's (no
    ``A2A-Version``). Raises, before anything is served:

    - ``DeclarationError`` when the card does not declare the interview (without
      ``declare``), declares it ``required: true``, is not strict I-JSON, or a committed
      proposal cannot be fetched or fails verification (the message names the entry's
      pointer, its URL and the cause);
    - :class:`ProxyError` when the card cannot be fetched (transport error, non-2xx,
      over ``max_bytes``, past ``timeout``, a cross-origin redirect), declares no
      JSONRPC or HTTP+JSON interface, or is signed and would be changed by ``declare``
      without ``card_key`` and ``card_kid``; and when ``forwarded_allow_ips`` names
      something that is not an address or network.
    """
    options = options or ProxyOptions(**option_values)
    try:
        trusted_peers(options.forwarded_allow_ips)
    except ValueError as exc:
        raise ProxyError(f"forwarded_allow_ips: {exc}") from None
    reporter = _Reporter()
    source = Upstream(upstream, timeout=timeout, max_bytes=max_bytes,
                       idle_timeout=idle_timeout, transport=transport, options=options,
                       on_error=on_error or reporter)  # fmt: skip
    try:
        live = await source.start()
    finally:
        await source.aclose()  # the serving loop opens its own connections
    if options.public_url is not None:
        _warn_bypassing(live.declarations.card, options.public_url, declare=options.declare)
    front = Front(source, limiter, client_key)
    return ProxyApp(front, live, source, poll, recovered=reporter.clear), live


@dataclass(frozen=True, slots=True)
class ProxyInfo:
    """What a started proxy serves, for a start-up line."""

    listen: str
    card_url: str
    card_digest: str
    proposals: int
    rpc_paths: tuple[str, ...]
    rest_paths: tuple[str, ...]
    public_url: str | None = None


def describe(app: ProxyApp, listen: str) -> ProxyInfo:
    """The paths and declarations ``app`` currently serves."""
    declarations = app.live.declarations
    card = declarations.card
    return ProxyInfo(
        listen, app.card_url, declarations.interview.card_digest, len(declarations.verdicts),
        tuple(interface_paths(card, "JSONRPC")), tuple(interface_paths(card, "HTTP+JSON")),
        app.upstream.options.public_url,
    )  # fmt: skip


def _bind(host: str, port: int) -> socket.socket:
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise ProxyError(f"cannot listen on {host}:{port} ({exc.strerror})") from None
    sock.setblocking(False)
    return sock


def server_config(app: ProxyApp, bounds: Any = None, *, access_log: bool = False) -> Any:
    """The ``uvicorn.Config`` the proxy is served with: ``bounds`` (default
    ``listen.DEFAULT_BOUNDS``) kept by :func:`~a2a_interview.server.listen.protocol`,
    which also drops trailer fields and refuses upgrades (PROFILE §3.9), and
    none of uvicorn's own response headers (upstream's ``Date`` and ``Server`` pass
    through; :class:`ProxyApp` dates the rest)."""
    from .. import listen  # the bounds every server of this package keeps

    # Two descriptors a client may cost: its own connection and one upstream.
    return listen.config(
        app,
        bounds or listen.DEFAULT_BOUNDS,
        per_connection=2,
        lifespan="on",
        access_log=access_log,
        log_level="info" if access_log else "warning",
        server_header=False,
        date_header=False,
        # The client is the socket's peer: it keys the rate limit and is what
        # X-Forwarded-For gets appended (a forwarded chain is passed on from a peer in
        # forwarded_allow_ips only, never trusted for the key).
        proxy_headers=False,
        timeout_graceful_shutdown=5,
    )


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
    options: ProxyOptions | None = None,
    bounds: Any = None,
    **option_values: Any,
) -> None:
    """Build the proxy, check the rate-limit store, bind, and serve until shut down.

    ``rate_limit`` is in the ``limits`` notation (``None``: no limit); ``storage`` is
    ``memory://`` or a Redis URL shared by several replicas. ``started`` is called once
    the socket listens. ``options`` (or its fields as keywords) as for
    :func:`build_proxy`; ``public_url`` defaults to ``http://{host}:{port}`` when that
    names one address. ``bounds``: the connection bounds of the listening server
    (:class:`~a2a_interview.server.listen.Bounds`; default ``listen.DEFAULT_BOUNDS``).
    Raises what :func:`build_proxy` raises, and :class:`ProxyError`
    when the port cannot be bound or the Redis store does not answer; nothing is left
    listening when it raises.
    """
    import uvicorn

    limiter = None
    if rate_limit is not None:
        from ..ratelimit import RateLimiter

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
    if options is None:
        options = ProxyOptions(**option_values)
    if options.public_url is None and port != 0 and host not in ("0.0.0.0", "::"):
        netloc = f"[{host}]" if ":" in host else host
        options.public_url = f"http://{netloc}:{port}"
    app, _ = await build_proxy(
        upstream, poll=poll, limiter=limiter, timeout=timeout, options=options
    )
    try:
        sock = _bind(host, port)
    except ProxyError:
        await app.aclose()
        raise
    config = server_config(app, bounds, access_log=access_log)
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
