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
sent only to the origin the user named and to the further origins the user names for them
(``ClientOptions.credential_origins``, PROFILE §7), never to the other origins a card
points at, redirects included (a redirect to another origin is refused anyway).

Failures are the exceptions of :mod:`.failures`, each with a stable ``code``; the
policies have their own modules: :mod:`.urls` (origins, the scheme policy),
:mod:`.addresses` (public addresses only), :mod:`.bodies` (bounded decoding).

Requires the ``client`` extra (``pip install 'a2a-interview[client]'``).
"""

from __future__ import annotations

import contextlib
import math
import socket
import ssl
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Final, NoReturn
from urllib.parse import urljoin

try:
    import anyio
    import httpcore
    import httptools  # noqa: F401 - the wire module's parser, named in the error below
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the interviewer needs httpx and httptools: pip install 'a2a-interview[client]'"
    ) from exc

from .._moved import moved_name
from ..codings import ACCEPT_ENCODING
from ..net.bodies import decode_whole, read_body
from ..net.failures import (
    AddressRefused,
    BodyTooLarge,
    BudgetSpent,
    ConnectFailed,
    InsecureURL,
    RateLimited,
    RedirectRefused,
    TimedOut,
    TransportFailure,
    Unavailable,
)
from ..net.urls import check_url, is_loopback, origin, origin_text
from ..spec import DEFAULT_TIMEOUT, MAX_DOCUMENT_BYTES
from .addresses import AddressPolicy, GuardedBackend, Resolver, system_resolver
from .wire import Pool, WireError, WireTooLarge, connect_cause

__all__ = [
    "ClientOptions",
    "Interviewer",
    "Response",
    "fetch_document",
    "http_client",
    "tls_context",
]


def __getattr__(name: str) -> object:  # what 0.6 passed on from here (D-CORE-23)
    return moved_name(__name__, name)


_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_MAX_429_PER_REQUEST: Final = 5
_DEFAULT_RETRY_AFTER: Final = 1.0


def _failure(kind: type[TransportFailure], cause: str) -> TransportFailure:
    failure = kind()
    failure.cause = cause
    return failure


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """Bounds and credentials for one interviewer.

    ``headers`` are the user's credentials (``Authorization`` and the like), sent only
    to the origin the user named and to ``credential_origins``, the further origins the
    user names for them (URLs or ``scheme://host[:port]``: an agent whose interfaces are
    on another origin than its card, PROFILE §7). ``retry_budget`` is the total time
    429s may be waited out; a single ``Retry-After`` longer than ``max_retry_after`` is
    cut to it.
    ``allow_private``: connect to non-public addresses too (:func:`address_kind`).
    ``resolver``: the name lookup (default: the system's, through anyio).
    """

    timeout: float = DEFAULT_TIMEOUT
    max_bytes: int = MAX_DOCUMENT_BYTES
    max_redirects: int = 3
    retry_budget: float = 120.0
    max_retry_after: float = 60.0
    headers: tuple[tuple[str, str], ...] = ()
    allow_private: bool = False
    resolver: Resolver | None = None
    credential_origins: tuple[str, ...] = ()


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


def _policy_for(options: ClientOptions, target: str | None) -> AddressPolicy:
    loopback = False
    if target:
        with contextlib.suppress(InsecureURL):
            loopback = is_loopback(origin(target)[1])
    return AddressPolicy(options.allow_private, loopback)


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
        network_backend=GuardedBackend(_policy_for(opts, target), opts.resolver),
    )
    return httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        timeout=opts.timeout,
        trust_env=False,
        headers={"Accept-Encoding": ACCEPT_ENCODING},
    )


_TLS: list[ssl.SSLContext] = []


def tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process (httpx's defaults: certifi, ``SSL_CERT_*``);
    building one costs tens of milliseconds (docs/benchmarks.md), and a context is
    safe to share."""
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
        # PROFILE §7: the credentials go to the origin the user named and to the further
        # origins named for them, never anywhere else.
        self._credentials_for: set[tuple[str, str, int]] = set()
        for named in (credential_origin, *self.options.credential_origins):
            if named:
                with contextlib.suppress(InsecureURL):  # such a URL is refused when fetched
                    self._credentials_for.add(origin(named))
        target = target or credential_origin
        self._policy = _policy_for(self.options, target)
        self._owned = http is None
        # The exchanges of ``wire`` (the verifier's own, fast) unless the caller chose
        # httpx: a shared client or a transport (tests, library users).
        self._wire: Pool | None = None
        self._http: httpx.AsyncClient | None = http
        if http is None and transport is None:
            self._wire = Pool(
                tls_context(), resolve=self.options.resolver or system_resolver,
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
        # refuses spoils the lookup (no picking around it), as in GuardedBackend.
        if not all(self._policy.allows(address) for address in addresses):
            raise AddressRefused

    def _headers(self, url: str, headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = [("Accept-Encoding", ACCEPT_ENCODING)]
        ours = [(n, v) for n, v in headers]
        names = {n.lower() for n, _ in ours} | {"accept-encoding"}  # read_body's codings
        if self.options.headers and self.sends_credentials(url):
            out += [(n, v) for n, v in self.options.headers if n.lower() not in names]
        return out + ours

    def sends_credentials(self, url: str) -> bool:
        """Whether the user's credentials go to ``url``'s origin (PROFILE §7)."""
        try:
            return origin(url) in self._credentials_for
        except InsecureURL:
            return False

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
        return Response(url, raw.status, raw.headers, decode_whole(raw.headers, raw.body, limit))

    def refuses(self, url: str) -> bool:
        """Whether ``url`` names a literal address (or ``localhost``) the address policy
        refuses: known before any connection. Raises ``InsecureURL`` for a URL that
        does not parse."""
        try:
            self._policy.check_host(origin(url)[1])
        except AddressRefused:
            self.refused_origins.add(origin_text(url))
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
        self.refused_origins.add(origin_text(url))
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
                self.loopback_origins.add(origin_text(url))
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
