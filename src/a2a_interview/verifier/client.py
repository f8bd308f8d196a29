"""The interviewer's HTTP client: a driver on ``httpx`` (async).

Every read is bounded (STYLE.md, "Security code"):

- **size**: bodies over ``max_bytes`` (1 MiB, PROFILE §1.4) are abandoned mid-stream;
- **time**: each exchange, redirects and 429 waits aside, has one deadline
  (``timeout``), so a peer that drips bytes cannot hold a call open;
- **redirects**: followed for GET only, at most ``max_redirects``, and only to the same
  origin (scheme, host, port);
- **scheme**: HTTPS only, except HTTP to a loopback host, which is allowed and recorded
  (:attr:`Interviewer.loopback_origins`) so the result can say so.

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
    └── RateLimited         rate_limited       (429 beyond the wait budget)

Requires the ``client`` extra (``pip install 'a2a-interview[client]'``).
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import math
import ssl
import urllib.request
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Final
from urllib.parse import SplitResult, urljoin, urlsplit

try:
    import anyio
    import httptools  # noqa: F401 - the wire module's parser, named in the error below
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the interviewer needs httpx and httptools: pip install 'a2a-interview[client]'"
    ) from exc

from ..errors import InterviewError
from ..spec import CARD_PATH, MAX_DOCUMENT_BYTES
from .wire import Pool, WireError, WireTooLarge

__all__ = [
    "BodyTooLarge",
    "ClientOptions",
    "ConnectFailed",
    "InsecureURL",
    "Interviewer",
    "RateLimited",
    "RedirectRefused",
    "Response",
    "TimedOut",
    "TransportFailure",
    "card_url_for",
    "check_url",
    "fetch_document",
    "is_loopback",
    "origin",
    "tls_context",
]

_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_MAX_429_PER_REQUEST: Final = 5
_DEFAULT_RETRY_AFTER: Final = 1.0


class TransportFailure(InterviewError):
    """The exchange could not be completed; nothing was learnt about the agent."""

    code = "transport"


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


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """Bounds and credentials for one interviewer.

    ``headers`` are the user's credentials (``Authorization`` and the like), sent only
    to the origin the user named. ``retry_budget`` is the total time 429s may be waited
    out; a single ``Retry-After`` longer than ``max_retry_after`` is cut to it.
    """

    timeout: float = 10.0
    max_bytes: int = MAX_DOCUMENT_BYTES
    max_redirects: int = 3
    retry_budget: float = 30.0
    max_retry_after: float = 10.0
    headers: tuple[tuple[str, str], ...] = ()


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


def without_credentials(url: str) -> str:
    """``url`` without a ``user:password@`` part: what a record may keep of it."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _retry_after(value: str | None, now: datetime) -> float:
    if value is None:
        return _DEFAULT_RETRY_AFTER
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(int(text[:6]))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return _DEFAULT_RETRY_AFTER
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


_TLS: list[ssl.SSLContext] = []


def tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process (httpx's defaults: certifi, ``SSL_CERT_*``);
    building one costs ~30 ms, and a context is safe to share."""
    if not _TLS:
        _TLS.append(httpx.create_ssl_context())
    return _TLS[0]


class Interviewer:
    """An async HTTP client with the bounds of this module.

    Use as ``async with Interviewer(options, credential_origin=url) as client``. Pass
    ``http`` to share one ``httpx.AsyncClient`` (its pool) between interviewers; it is
    then not closed here. ``transport`` is handed to a client created here (tests).
    """

    def __init__(
        self,
        options: ClientOptions | None = None,
        *,
        credential_origin: str | None = None,
        http: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.options = options or ClientOptions()
        self._credentials_for: tuple[str, str, int] | None = None
        if credential_origin:
            with contextlib.suppress(InsecureURL):  # such a URL is refused when fetched
                self._credentials_for = origin(credential_origin)
        self._owned = http is None
        # The fast exchanges of ``wire`` unless the caller chose httpx (a shared client
        # or a transport) or the environment names a proxy, which only httpx honours.
        self._wire = (
            Pool(tls_context()) if http is None and transport is None and not _proxied() else None
        )
        self._http = http or httpx.AsyncClient(
            transport=transport,
            follow_redirects=False,
            timeout=self.options.timeout,
            verify=tls_context(),
        )
        self.loopback_origins: set[str] = set()
        self.waited = 0.0
        self.rate_limited = 0

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
        if self._owned:
            await self._http.aclose()

    def _headers(self, url: str, headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        ours = [(n, v) for n, v in headers]
        names = {n.lower() for n, _ in ours}
        if self._credentials_for is not None and origin(url) == self._credentials_for:
            out += [(n, v) for n, v in self.options.headers if n.lower() not in names]
        return out + ours

    async def _once(
        self, method: str, url: str, headers: Sequence[tuple[str, str]], content: bytes | None
    ) -> Response:
        limit = self.options.max_bytes
        if self._wire is not None:
            return await self._exchange(self._wire, method, url, headers, content)
        try:
            with anyio.fail_after(self.options.timeout):
                async with self._http.stream(
                    method, url, headers=headers, content=content, timeout=self.options.timeout
                ) as reply:
                    length = reply.headers.get("content-length", "")
                    if length.isascii() and length.isdigit() and int(length) > limit:
                        raise BodyTooLarge
                    body = bytearray()
                    async for chunk in reply.aiter_bytes():
                        body += chunk
                        if len(body) > limit:
                            raise BodyTooLarge
                    return Response(
                        url,
                        reply.status_code,
                        tuple((n.lower(), v) for n, v in reply.headers.multi_items()),
                        bytes(body),
                    )
        except TimeoutError:
            raise TimedOut from None
        except httpx.TimeoutException:
            raise TimedOut from None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, UnicodeError):
            raise ConnectFailed from None

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
                raw = await wire.exchange(method, url, headers, content, max_bytes=limit)
        except TimeoutError:
            raise TimedOut from None
        except WireTooLarge:
            raise BodyTooLarge from None
        except WireError:
            raise ConnectFailed from None
        encodings = [
            token.strip().lower()
            for name, value in raw.headers
            if name == "content-encoding"
            for token in value.split(",")
            if token.strip() and token.strip().lower() != "identity"
        ]
        body = _decode(raw.body, encodings, limit) if encodings else raw.body
        return Response(url, raw.status, raw.headers, body)

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
                self.loopback_origins.add("{}://{}:{}".format(*origin(url)))
            response = await self._patient(method, url, self._headers(url, headers), content)
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
        except (RateLimited, ConnectFailed, TimedOut):
            if verifying:
                raise
            return None
        except TransportFailure:
            return None
        if verifying and response.status in (502, 503, 504):
            raise Unavailable
        return response.body if 200 <= response.status < 300 else None


def _proxied() -> bool:
    return any(name in ("http", "https", "all") for name in urllib.request.getproxies())


_WBITS: Final = {
    "gzip": 16 + zlib.MAX_WBITS,
    "x-gzip": 16 + zlib.MAX_WBITS,
    "deflate": zlib.MAX_WBITS,
}


def _decode(body: bytes, encodings: Sequence[str], limit: int) -> bytes:
    """Undo ``Content-Encoding`` within ``limit`` bytes of output at every layer, as it
    streams: a small body that inflates past the bound is abandoned, never inflated
    whole. Raises ``BodyTooLarge``, or ``ConnectFailed`` for an encoding not offered or
    data that does not decode."""
    for encoding in reversed(encodings):
        wbits = _WBITS.get(encoding)
        if wbits is None:
            raise ConnectFailed
        inflater = zlib.decompressobj(wbits)
        try:
            out = inflater.decompress(body, limit + 1)
            if len(out) > limit or inflater.unconsumed_tail:
                raise BodyTooLarge
            out += inflater.flush()
        except zlib.error:
            if encoding != "deflate":
                raise ConnectFailed from None
            out = _raw_deflate(body, limit)  # servers that send deflate without zlib framing
        if len(out) > limit:
            raise BodyTooLarge
        body = out
    return body


def _raw_deflate(body: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error:
        raise ConnectFailed from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise BodyTooLarge
    return out


def fetch_document(url: str, options: ClientOptions | None = None) -> bytes | None:
    """Blocking: the body of a bounded 2xx GET of ``url``, else ``None``
    (:meth:`Interviewer.fetch_document`, for synchronous callers such as the CLI).
    Must not be called from a running event loop."""

    async def fetch() -> bytes | None:
        async with Interviewer(options) as session:
            return await session.fetch_document(url)

    return anyio.run(fetch)
