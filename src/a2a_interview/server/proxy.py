"""The interview in front of any A2A agent (PROFILE §9, §3.9).

    app, live = await build_proxy("http://10.0.0.5:8080")   # fetch, verify, or refuse
    run("http://10.0.0.5:8080", port=9000)                 # the same, served by uvicorn

On start the proxy fetches the upstream card (``{upstream}/.well-known/agent-card.json``,
or the URL itself when it names a ``.json`` document) and every proposal its terms entries
commit to, and runs the self-check of PROFILE §2.4. It refuses to start, raising
``DeclarationError`` or :class:`ProxyError`, when the card cannot be read, does not
declare the interview (unless ``declare``), declares it ``required: true``, or a committed
proposal cannot be fetched or fails verification (the message names the entry's pointer,
its URL and the cause).

``public_url`` names the proxy's own public address. A proposal whose URL is on that
origin is read from upstream at the same path (what a client gets through the proxy);
``proposals`` gives local copies instead, served at their paths. With ``declare`` a card
that does not declare the interview, or whose interfaces or proposals name another origin,
is served with the declaration added (``{"uri": ...}``, ``required`` left at its default,
false) and those URLs moved to the public origin; a signed card so changed is re-signed
with ``card_key`` (as ``card sign`` signs, PROFILE §6.3) or refused.

Then it serves:

- every request, first read whole (at most ``max_body`` bytes within ``body_timeout``
  seconds) before an upstream connection is taken, so a slow client holds none;
- interview calls in every spelling of their paths (PROFILE §3.9: dot segments, ``//``,
  percent-encoding) and batches naming the namespace: answered or refused here, never
  passed on;
- the card, at the card's path in any spelling, checked against the verified bytes on
  every request: upstream's live response (headers and all) when its body is the one that
  verified, else the last verified bytes. Variants negotiated by ``A2A-Version`` are
  fetched, verified and answered from separately;
- everything else, passed on byte for byte: the request target as received (no dot
  segment removal, no re-encoding), headers in order less the hop-by-hop ones and (unless
  ``forwarded_allow_ips`` trusts the peer) the client's forwarding fields, with the
  proxy's own ``X-Forwarded-For``/``-Proto``; the body; the response streamed back
  unbuffered (Server-Sent Events included);
- every response with a ``Date`` (upstream's own, else the proxy's).

Served by :func:`server_config` (what :func:`serve` uses), the listening server also
bounds every header section, trailers included, drops trailer fields and refuses
protocol upgrades (``server/listen.py``, PROFILE §3.9).

Changes to the upstream card are followed by polling (``If-None-Match``) and on every
card request; a changed card is verified like the first one and swapped in whole, and a
changed card that fails keeps the last good set serving and is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ipaddress
import logging
import re
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the proxy needs the 'server' and 'client' extras: "
        "pip install 'a2a-interview[server,client]'"
    ) from exc

from .. import rpc
from ..declarations import Declarations, build, interview_entry, read_card
from ..errors import DeclarationError, IngressError, InterviewError
from ..jcs import canonicalize
from ..spec import CARD_PATH, INTERVIEW_URI, MAX_DOCUMENT_BYTES
from ..terms import read_terms_entries, verify_proposal
from ..verifier.client import (
    BodyTooLarge,
    EncodingRefused,
    InsecureURL,
    check_url,
    origin,
    read_body,
)
from .asgi import (
    ClientKey,
    Message,
    Receive,
    Scope,
    Send,
    if_none_match,
    interface_paths,
    remote_address,
    rest_prefixes,
    rest_question,
    scan,
    send_reply,
)
from .lifecycle import LiveDeclarations
from .listen import bind, http_date

log = logging.getLogger("a2a_interview.proxy")

DEFAULT_POLL: Final = 30.0
DEFAULT_TIMEOUT: Final = 10.0  # the whole fetch of one declared document
CONNECT_TIMEOUT: Final = 5.0
STREAM_IDLE_TIMEOUT: Final = 300.0  # pass-through: longest silence between two reads
MAX_REDIRECTS: Final = 3
DEFAULT_MAX_BODY: Final = 10 * 1024 * 1024  # a request body, read whole before forwarding
DEFAULT_BODY_TIMEOUT: Final = 30.0  # the whole request body, from the first read
UPSTREAM_CONNECTIONS: Final = 256
POOL_TIMEOUT: Final = 10.0  # the longest wait for a free upstream connection
MAX_VARIANTS: Final = 8  # card variants by A2A-Version, the default one included
UNVERIFIED_RETRY: Final = 30.0  # a variant that did not verify is not fetched again sooner

# RFC 9110 §7.6.1: connection-specific fields, never forwarded. `Host` is forwarded as
# the client sent it (the public name the card declares); `Expect` is answered by the
# server in front of us.
_HOP_BY_HOP: Final = frozenset({
    b"connection", b"keep-alive", b"proxy-authenticate", b"proxy-authorization",
    b"proxy-connection", b"te", b"trailer", b"trailers", b"transfer-encoding", b"upgrade",
})  # fmt: skip
_NOT_FORWARDED: Final = _HOP_BY_HOP | {b"expect"}
# Asked of upstream for the card: the proxy reads the whole representation itself, and
# sends a GET without a body (a client's Content-Length would announce one).
_CARD_REQUEST_DROPPED: Final = _NOT_FORWARDED | {
    b"if-none-match", b"if-modified-since", b"if-match", b"if-unmodified-since",
    b"if-range", b"range", b"accept-encoding", b"content-length",
}  # fmt: skip
# RFC 9110 §15.4.5: a 304 carries the validators and caching fields, not the content's.
_NOT_IN_304: Final = frozenset({b"content-type", b"content-length"})
_BAD_GATEWAY: Final = (502, b"upstream unavailable\n")
_GATEWAY_TIMEOUT: Final = (504, b"upstream timed out\n")
_UPSTREAM_BUSY: Final = (503, b"upstream busy\n")
_UNVERIFIED: Final = (502, b"upstream card did not verify\n")
_BAD_TARGET: Final = (400, b"request target not forwarded\n")
_TOO_LARGE: Final = (413, b"request body too large\n")
_TOO_SLOW: Final = (408, b"request body not received in time\n")
_VERSION: Final = re.compile(r"[0-9]{1,4}(?:\.[0-9]{1,4}){0,2}")
_VERSION_HEADER: Final = b"a2a-version"


class ProxyError(InterviewError):
    """The proxy cannot start or cannot read its upstream: unreachable, a non-2xx or
    oversized card, a refused redirect, no interface to serve the interview on, a signed
    card ``declare`` would change without a key, or an unusable rate-limit store."""

    code = "proxy"


def _printable(text: str, limit: int = 200) -> str:
    """A URL from a card, safe in a one-line message: escaped, and cut at ``limit``."""
    escaped = text.encode("unicode_escape").decode("ascii")
    return escaped if len(escaped) <= limit else escaped[:limit] + "..."


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

    Asks for ``identity`` and undoes at most one gzip or deflate coding, bounded as it
    streams. Returns the final response (any status, 304 included) with its whole body.
    Raises :class:`ProxyError` on a transport error, the deadline, a body over
    ``max_bytes`` (before or after decoding), a refused content coding, a cross-origin
    redirect, or more than ``MAX_REDIRECTS`` hops.
    """
    start = origin(url)
    sent = [*headers, (b"accept-encoding", b"identity")]
    try:
        async with asyncio.timeout(timeout):
            for _ in range(MAX_REDIRECTS + 1):
                request = httpx.Request("GET", url, headers=sent)
                response = await client.send(request, stream=True)
                try:
                    location = response.headers.get("location")
                    if response.is_redirect and location is not None:
                        try:
                            url = urljoin(url, location)  # ValueError: a bad IPv6 host
                            same = origin(url) == start
                        except (InsecureURL, ValueError):
                            same = False
                        if not same:
                            raise ProxyError("a cross-origin redirect was refused")
                        continue
                    # The verifier's reader: decoded under the bound as it streams.
                    try:
                        body = await read_body(response, max_bytes)
                    except BodyTooLarge:
                        raise ProxyError(f"the document is larger than {max_bytes} bytes") from None
                    except EncodingRefused:
                        raise ProxyError(
                            "the document's Content-Encoding is stacked, unknown or corrupt"
                        ) from None
                    return _Fetched(response.status_code, body, response.headers)
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
    """Declarations read from upstream, with the card's bytes as served.

    ``raw`` is the body upstream sent; ``card_bytes`` what the proxy serves (``raw``
    itself unless ``declare`` changed the card, then its JCS form). ``headers`` are
    upstream's response headers as the proxy serves them with the last verified card
    (hop-by-hop fields, ``Date``, ``Content-Length`` and ``Content-Encoding`` left out;
    upstream's ``ETag`` replaced by ours when the card was changed). ``validator`` is
    upstream's ``ETag`` (for ``If-None-Match`` when polling).
    """

    card_bytes: bytes
    content_type: bytes
    validator: bytes | None
    etag: bytes
    raw: bytes = b""
    headers: tuple[tuple[bytes, bytes], ...] = ()
    changed: bool = False


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


def _origin_of(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) URL, or ``None`` when it has none."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80)


def _rebase(url: str, public: str) -> str:
    """``url`` with its scheme and authority replaced by ``public``'s; path and query
    kept."""
    base = urlsplit(public)
    return urlsplit(url)._replace(scheme=base.scheme, netloc=base.netloc).geturl()


def _served_headers(
    raw: Sequence[tuple[bytes, bytes]], body: bytes, etag: bytes | None, *, date: bool
) -> tuple[tuple[bytes, bytes], ...]:
    """Upstream's card response headers as the proxy serves them with ``body``, in
    upstream's order: hop-by-hop fields and ``Content-Encoding`` dropped (the proxy reads
    the card decoded), ``Content-Length`` set to ``body``'s, ``ETag`` replaced by ``etag``
    when given (a changed card), ``Date`` kept only with ``date``."""
    drop = _HOP_BY_HOP | _listed(raw) | {b"content-encoding"}
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


@dataclass
class ProxyOptions:
    """What shapes the served card and where proposals come from (see the module doc)."""

    public_url: str | None = None
    declare: bool = False
    card_key: Any = None
    card_kid: str | None = None
    proposals: Mapping[str, bytes] = field(default_factory=dict)
    card_cache_control: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    upstream_connections: int = UPSTREAM_CONNECTIONS
    upstream_wait: float = POOL_TIMEOUT
    # Peers whose forwarding headers are passed on (issue 14 finding 10): addresses or
    # networks ("10.0.0.0/8"), or "*" for every peer. Default: none.
    forwarded_allow_ips: Sequence[str] = ()


class _Upstream:
    """The upstream agent: where its card is, its verified card variants, and how the
    proxy talks to it.

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
        options: ProxyOptions,
        on_error: Callable[[InterviewError], None],
    ) -> None:
        self.card_url = _card_url(upstream)
        scheme, host, port = origin(self.card_url)
        netloc = f"[{host}]" if ":" in host else host
        self.origin = f"{scheme}://{netloc}:{port}"
        self.upstream_origin = (scheme, host, port)
        self.card_path = urlsplit(self.card_url).path
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.idle_timeout = idle_timeout
        self.transport = transport
        self.options = options
        self.public = _origin_of(options.public_url) if options.public_url else None
        self.on_error = on_error
        self.variants: dict[str, LiveDeclarations] = {}
        self._loading: dict[str, asyncio.Future[LiveDeclarations | None]] = {}
        self._unverified: dict[str, float] = {}  # key -> when its first load failed
        self._locks: dict[str, asyncio.Lock] = {}
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            limit = self.options.upstream_connections
            self._client = httpx.AsyncClient(
                transport=self.transport,
                follow_redirects=False,  # redirects are the caller's, by policy
                timeout=httpx.Timeout(
                    self.idle_timeout, connect=CONNECT_TIMEOUT, pool=self.options.upstream_wait
                ),
                limits=httpx.Limits(
                    max_connections=limit, max_keepalive_connections=min(64, limit)
                ),
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def on_public_origin(self, url: str) -> bool:
        return self.public is not None and _origin_of(url) == self.public

    async def _proposal(self, url: str) -> bytes | str:
        """The proposal's bytes, or why they could not be had."""
        local = self.options.proposals.get(url)
        if local is not None:
            return local
        where = url
        if self.on_public_origin(url):
            # What a client gets through the proxy: upstream, at the same path.
            parts = urlsplit(url)
            where = self.origin + (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        else:
            try:
                check_url(url)  # terms §3 step 1: HTTPS, or HTTP on loopback
            except InsecureURL:
                return "not an https:// URL (terms §3 step 1)"
        try:
            fetched = await _fetch(self.client(), where, max_bytes=self.max_bytes,
                                   timeout=self.timeout)  # fmt: skip
        except ProxyError as exc:
            return str(exc)
        if fetched.status != 200:
            who = "upstream" if where != url else "the server"
            return f"{who} answered {fetched.status}"
        return fetched.body

    def _shape(self, card: dict[str, Any]) -> bool:
        """Apply ``declare`` to ``card`` in place; whether anything changed."""
        public = self.options.public_url
        changed = False
        if interview_entry(card) is None:
            capabilities = card.setdefault("capabilities", {})
            if not isinstance(capabilities, dict):
                raise DeclarationError("the upstream card's capabilities is not an object")
            extensions = capabilities.setdefault("extensions", [])
            if not isinstance(extensions, list):
                raise DeclarationError("the upstream card's extensions is not a list")
            # docs/decisions.md D-VERIFY-37: the declaration omits required (false by default).
            extensions.append({"uri": INTERVIEW_URI})
            changed = True
        if public is None:
            return changed
        holders: list[dict[str, Any]] = []
        for member in ("supportedInterfaces", "additionalInterfaces"):
            items = card.get(member)
            if isinstance(items, list):
                holders += [i for i in items if isinstance(i, dict)]
        if isinstance(card.get("url"), str):
            holders.append(card)
        for holder in holders:
            url = holder.get("url")
            if (
                isinstance(url, str)
                and _origin_of(url) is not None
                and not self.on_public_origin(url)
            ):
                holder["url"] = _rebase(url, public)
                changed = True
        for _, items in _terms_extension_objects(card):
            for item in items:
                url = item.get("url")
                if isinstance(url, str) and _origin_of(url) == self.upstream_origin:
                    item["url"] = _rebase(url, public)
                    changed = True
        return changed

    async def load(self, key: str = "") -> UpstreamDeclarations:
        """Fetch the card variant ``key`` (the ``A2A-Version`` sent; ``""``: none), verify
        it and its proposals, and build the answers.

        Returns the current set unchanged when upstream answers ``304`` or the same
        bytes. Raises :class:`ProxyError` when the card cannot be read or offers no
        interface to serve on, and ``DeclarationError`` when the self-check fails.
        """
        live = self.variants.get(key)
        current = live.declarations if live is not None else None
        previous = current if isinstance(current, UpstreamDeclarations) else None
        headers = [(b"accept", b"application/json")]
        if key:
            headers.append((b"a2a-version", key.encode("ascii")))
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
            fetched.status == 304 or (fetched.status == 200 and fetched.body == previous.raw)
        ):
            return previous
        if fetched.status != 200:
            raise ProxyError(
                f"cannot read the upstream card at {self.card_url}: HTTP {fetched.status}"
            )
        result = await self.verify(fetched.body, fetched.headers.raw)
        if previous is not None and previous.interview.card_digest != result.interview.card_digest:
            log.info(
                "the upstream card changed; now serving %s with %d verified proposal(s)",
                result.interview.card_digest, len(result.verdicts),
            )  # fmt: skip
        return result

    async def verify(
        self, body: bytes, response_headers: Sequence[tuple[bytes, bytes]]
    ) -> UpstreamDeclarations:
        """Build the declarations of a card upstream served as ``body``."""
        for other in self.variants.values():  # the same bytes as another variant
            known = other.declarations
            if isinstance(known, UpstreamDeclarations) and known.raw == body:
                return known
        try:
            card = read_card(body, max_bytes=self.max_bytes)
        except IngressError as exc:
            raise DeclarationError(f"the upstream card is not strict I-JSON ({exc.code})") from None
        changed = False
        if self.options.declare:
            changed = self._shape(card)
        elif interview_entry(card) is None:
            raise DeclarationError(
                "the upstream card does not declare the interview extension "
                "(--declare serves it with the declaration added)"
            )
        if changed and "signatures" in card:
            card = await self._resign(card)
        entries = [e for e in read_terms_entries(card) if e.url is not None]
        urls = sorted({e.url for e in entries if e.url is not None})
        bodies = await asyncio.gather(*(self._proposal(u) for u in urls))
        got = dict(zip(urls, bodies, strict=True))
        for entry in entries:
            assert entry.url is not None
            where = _printable(entry.url)
            outcome = got[entry.url]
            if isinstance(outcome, str):
                raise DeclarationError(
                    f"terms entry {entry.member} ({where}): fetch failed: {outcome}"
                )
            verdict = verify_proposal(entry.digest, outcome, max_bytes=self.max_bytes)
            if not verdict.ok:
                raise DeclarationError(
                    f"terms entry {entry.member} ({where}): failed verification: {verdict.result}"
                )
        fetched = {u: b for u, b in got.items() if isinstance(b, bytes)}
        declarations = build(card, fetched, max_bytes=self.max_bytes)
        if not (interface_paths(card, "JSONRPC") or interface_paths(card, "HTTP+JSON")):
            raise ProxyError(
                "the upstream card declares no JSONRPC or HTTP+JSON interface to serve on"
            )
        served = canonicalize(card) if changed else body
        etag = b'"' + hashlib.sha256(served).hexdigest()[:32].encode() + b'"'
        return UpstreamDeclarations(
            declarations.card,
            declarations.verdicts,
            declarations.interview,
            card_bytes=served,
            content_type=next(
                (v for k, v in response_headers if k.lower() == b"content-type"),
                b"application/json",
            ),
            # Raw bytes: an ETag may carry obs-text (RFC 9110 §8.8.3), which httpx
            # would decode and then fail to encode again as a request header.
            validator=next((v for k, v in response_headers if k.lower() == b"etag"), None),
            etag=etag,
            raw=body,
            headers=_served_headers(
                response_headers, served, etag if changed else None, date=False
            ),
            changed=changed,
        )

    async def _resign(self, card: dict[str, Any]) -> dict[str, Any]:
        key, kid = self.options.card_key, self.options.card_kid
        if key is None or kid is None:
            raise ProxyError(
                "the upstream card is signed and --declare changes it, which breaks its "
                "signature: give --card-key KEY --kid KID to re-sign it"
            )
        from ..cardsig import sign_card
        from ..errors import SignatureError

        unsigned = {k: v for k, v in card.items() if k != "signatures"}
        # PROFILE §6.3: as `card sign` signs, so both SDKs' verifiers accept it (proto,
        # then served when the card as served carries more).
        try:
            signed: dict[str, Any] = sign_card(unsigned, key, kid=kid)
        except SignatureError as exc:
            raise SignatureError(f"cannot re-sign the upstream card: {exc}") from None
        return signed

    def versions(self) -> frozenset[rpc.Version]:
        """The protocol versions the default card's interfaces declare, any binding."""
        card = self.variants[""].declarations.card
        return rpc.declared_versions(card) | rpc.declared_versions(card, "HTTP+JSON")

    def variant_key(self, headers: Iterable[tuple[bytes, bytes]]) -> str:
        """The card variant a request asks for: its ``A2A-Version`` when that is exactly
        ``Major.Minor`` of a version the card's interfaces declare (issue 14 finding 4:
        a slot only for a version the card lists); else ``""``, the variant fetched
        without one."""
        key = variant_key(headers)
        version = rpc.parse_version(key) if key else None
        if version is None or key != f"{version[0]}.{version[1]}" or version not in self.versions():
            return ""
        return key

    async def every_variant(self) -> list[LiveDeclarations]:
        """Every card variant that verified, those of the declared versions loaded
        first (each tried at most once per ``UNVERIFIED_RETRY``)."""
        for version in sorted(self.versions()):
            key = f"{version[0]}.{version[1]}"
            if key not in self.variants:
                await self.variant(key)
        return list(self.variants.values())

    def lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    async def start(self) -> LiveDeclarations:
        """Load the default variant (no ``A2A-Version``), then the variant of every
        version the card's interfaces declare (one that does not verify is reported and
        tried again later: issue 14 finding 4, every variant's paths are judged from the
        first request); raises what :meth:`load` raises for the default."""
        live = await LiveDeclarations.start(lambda: self.load(""), on_error=self.on_error)
        self.variants[""] = live
        await self.every_variant()
        return live

    async def variant(self, key: str) -> LiveDeclarations | None:
        """The live declarations of variant ``key``, loaded on first use (one load at a
        time per key); ``None`` when it never verified. A key whose load failed is tried
        again only after ``UNVERIFIED_RETRY`` seconds, and counts towards
        ``MAX_VARIANTS`` meanwhile, so requests cannot make the proxy fetch the card and
        its proposals again and again."""
        live = self.variants.get(key)
        if live is not None:
            return live
        now = time.monotonic()
        for stale in [k for k, t in self._unverified.items() if now - t >= UNVERIFIED_RETRY]:
            del self._unverified[stale]  # unverified entries expire (issue 14 finding 4)
        failed = self._unverified.get(key)
        if failed is not None:
            return None
        pending = self._loading.get(key)
        if pending is None:
            held = len(self.variants) + len(self._unverified) + len(self._loading)
            if held >= MAX_VARIANTS:
                return self.variants.get("")
            pending = asyncio.ensure_future(self._first_load(key))
            self._loading[key] = pending
        return await asyncio.shield(pending)

    async def _first_load(self, key: str) -> LiveDeclarations | None:
        try:
            loaded = await self.load(key)
        except InterviewError as exc:
            self._unverified[key] = time.monotonic()
            self.on_error(exc)
            return None
        finally:
            self._loading.pop(key, None)
        self._unverified.pop(key, None)
        live = LiveDeclarations(loaded, lambda: self.load(key), on_error=self.on_error)
        self.variants[key] = live
        return live


def _terms_extension_objects(card: Any) -> list[tuple[int, list[dict[str, Any]]]]:
    """The proposal items of every terms extension entry, as mutable objects."""
    from ..terms import terms_extensions

    out: list[tuple[int, list[dict[str, Any]]]] = []
    for i, ext in terms_extensions(card):
        params = ext.get("params")
        items = params.get("proposals") if isinstance(params, dict) else None
        if isinstance(items, list):
            out.append((i, [item for item in items if isinstance(item, dict)]))
    return out


def variant_key(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The card variant a request asks for: its ``A2A-Version`` value, trimmed, when it
    reads as a version (``1.0``, ``0.3.0``); else ``""``, the variant fetched without
    one."""
    for name, value in headers:
        if name.lower() == _VERSION_HEADER:
            text = value.strip(b" \t").decode("latin-1")
            return text if _VERSION.fullmatch(text) else ""
    return ""


# ---------------------------------------------------------------------------- serving


def _listed(headers: Iterable[tuple[bytes, bytes]]) -> set[bytes]:
    """Field names a ``Connection`` header marks as hop-by-hop (RFC 9110 §7.6.1)."""
    named: set[bytes] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            named.update(v.strip().lower() for v in value.split(b",") if v.strip())
    return named


# Fields by which a client names another client address, scheme or host (RFC 7239 and
# its de facto predecessors): passed on only from a trusted peer (issue 14 finding 10).
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


def _request_headers(
    scope: Scope, dropped: frozenset[bytes] = _NOT_FORWARDED, *, trusted: bool = False
) -> list[tuple[bytes, bytes]]:
    """The client's header fields as passed on: less ``dropped`` and what ``Connection``
    names; a client's forwarding fields only from a ``trusted`` peer; then the proxy's
    own ``X-Forwarded-For`` (the peer appended to a trusted chain) and
    ``X-Forwarded-Proto`` (kept when a trusted peer sent one)."""
    raw: list[tuple[bytes, bytes]] = scope["headers"]
    drop = dropped | _listed(raw)
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


def _response_headers(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    raw = response.headers.raw
    drop = _HOP_BY_HOP | _listed(raw)
    return [(n.lower(), v) for n, v in raw if n.lower() not in drop]


async def _plain(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"),
               (b"content-length", str(len(body)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Routes:
    """Where a card variant's interview and card are served, as path keys
    (:func:`a2a_interview.rpc.path_key`, PROFILE §3.9), and the versions it serves."""

    __slots__ = ("card", "declarations", "rest", "rest_versions", "rpc", "versions")

    def __init__(self, declarations: Declarations, card_path: str) -> None:
        card = declarations.card
        self.declarations = declarations
        self.rpc = frozenset(rpc.path_key(p) for p in interface_paths(card, "JSONRPC"))
        self.rest = rest_prefixes(interface_paths(card, "HTTP+JSON"))
        self.card = rpc.path_key(card_path)
        self.versions = rpc.declared_versions(card)  # PROFILE §3.10
        self.rest_versions = rpc.declared_versions(card, "HTTP+JSON")


class _Front:
    """Every request: read whole, then answered here or passed on (module doc)."""

    def __init__(self, source: _Upstream, limiter: Any, client_key: ClientKey) -> None:
        self.source = source
        self.limiter = limiter
        self.client_key = client_key
        self.options = source.options
        self.trusts = trusted_peers(source.options.forwarded_allow_ips)
        self._routes: dict[int, _Routes] = {}
        self.local: dict[tuple[str, ...], bytes] = {}
        for url, body in source.options.proposals.items():
            if source.on_public_origin(url):
                self.local[rpc.path_key(urlsplit(url).path)] = body

    def routes(self, declarations: Declarations) -> _Routes:
        found = self._routes.get(id(declarations))
        if found is None or found.declarations is not declarations:
            if len(self._routes) > 4 * MAX_VARIANTS:
                self._routes.clear()
            found = self._routes[id(declarations)] = _Routes(declarations, self.source.card_path)
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1000})
            return
        if scope["type"] != "http":
            return
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
        if not raw_path.startswith(b"/"):
            # Only origin-form targets are forwarded: `OPTIONS *` has no URL of its own
            # upstream, and a target such as `@host/x` would name another host once
            # appended to the upstream's origin.
            await _plain(send, *_BAD_TARGET)
            return
        method = scope["method"]
        segments = rpc.path_segments(raw_path)  # every spelling (PROFILE §3.9)
        key = rpc.path_key(segments)
        default = self.source.variants[""].declarations
        if method in ("GET", "HEAD") and key == self.routes(default).card:
            await self._card(scope, send)
            return
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        if await self._interview(scope, send, segments, raw_path, body):
            return
        if method in ("GET", "HEAD"):
            local = self.local.get(key)
            if local is not None:
                await send({"type": "http.response.start", "status": 200, "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(local)).encode()),
                ]})  # fmt: skip
                await send({"type": "http.response.body",
                            "body": b"" if method == "HEAD" else local})  # fmt: skip
                return
        await self._pass(scope, receive, send, raw_path, body)

    def _trusted(self, scope: Scope) -> bool:
        """Whether the peer may name other clients (``forwarded_allow_ips``)."""
        client = scope.get("client")
        return client is not None and self.trusts(str(client[0]))

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole request body, read before any upstream connection is taken (issue 8
        finding 3): at most ``max_body`` bytes within ``body_timeout`` seconds, else 413
        or 408 and ``None``. ``None`` too when the client left."""
        limit = self.options.max_body
        for name, value in scope["headers"]:
            if name == b"content-length" and value.strip().isdigit() and int(value) > limit:
                await _plain(send, *_TOO_LARGE)
                return None
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.options.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        await _plain(send, *_TOO_LARGE)
                        return None
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            await _plain(send, *_TOO_SLOW)
            return None

    async def _variant(self, scope: Scope, send: Send) -> LiveDeclarations | None:
        live = await self.source.variant(self.source.variant_key(scope["headers"]))
        if live is None:
            await _plain(send, *_UNVERIFIED)
        return live

    def _where(
        self, variants: Iterable[LiveDeclarations], method: str, segments: tuple[str, ...],
        raw_path: bytes,
    ) -> tuple[bool, str | None]:  # fmt: skip
        """Whether the request is a JSON-RPC interview path, else the HTTP+JSON question
        it asks, under the interface paths of any of ``variants`` (issue 14 finding 4:
        an interview path of one variant is one for a client of every version)."""
        key = rpc.path_key(segments)
        routes = [self.routes(v.declarations) for v in variants]
        if method == "POST" and any(key in r.rpc for r in routes):
            return True, None
        for r in routes:
            question = rest_question(r.rest, segments, raw_path)
            if question is not None:
                return False, question
        return False, None

    async def _interview(
        self, scope: Scope, send: Send, segments: tuple[str, ...], raw_path: bytes, body: bytes
    ) -> bool:
        """Answer or refuse an interview request in any spelling; whether it was one."""
        headers = scope["headers"]
        act = rpc.activation(headers)
        if not act:
            return False  # PROFILE §3.3: the host's own answer
        method = scope["method"]
        source = self.source
        is_rpc, question = self._where(source.variants.values(), method, segments, raw_path)
        if not is_rpc and question is None:
            # Variants not loaded yet may name other paths: load those of the declared
            # versions (once each), then judge again.
            variants = await source.every_variant()
            is_rpc, question = self._where(variants, method, segments, raw_path)
            if not is_rpc and question is None:
                return False
        judged = b""
        first: rpc.Reply | None = None
        scanned: bool | None = None
        if is_rpc:
            # PROFILE §3.9: judged by the decoded body; what cannot be judged is refused.
            # Whether it is an interview call does not depend on the variant: judged once
            # with the default's answers, so ordinary calls never wait for a variant.
            decoded = rpc.decoded_body(headers, body, act, self.options.max_body)
            if isinstance(decoded, rpc.Reply):
                await self._send(scope, decoded, act, rest=False, send=send)
                return True
            judged = decoded
            default = source.variants[""].declarations.interview
            scanned = await scan(judged)
            first = rpc.jsonrpc(judged, act, default, scanned=scanned)
            if first is None:
                return False
        live = await source.variant(source.variant_key(headers))
        if live is None:
            await _plain(send, *_UNVERIFIED)
            return True
        routes = self.routes(live.declarations)
        interview = live.declarations.interview
        reply: rpc.Reply | None
        if is_rpc:
            same = interview is source.variants[""].declarations.interview
            reply = first if same else rpc.jsonrpc(judged, act, interview, scanned=scanned)
            if reply is not None:
                reply = rpc.version_refusal(headers, routes.versions, reply, act)
        else:
            assert question is not None
            query = scope.get("query_string", b"")
            reply = rpc.rest(method, question, query, act, interview)
            if reply is not None:
                reply = rpc.version_refusal(headers, routes.rest_versions, reply, act, rest=True)
        if reply is None:
            return False
        await self._send(scope, reply, act, rest=not is_rpc, send=send)
        return True

    async def _send(
        self, scope: Scope, reply: rpc.Reply, act: rpc.Activation, *, rest: bool, send: Send
    ) -> None:
        if self.limiter is not None:
            wait = await self.limiter.hit(self.client_key(scope))
            if wait is not None:
                reply = rpc.too_many_requests(wait, reply, act, rest=rest)
        await send_reply(send, reply)

    async def _card(self, scope: Scope, send: Send) -> None:
        """The card variant the request asks for, only ever as bytes that verified:
        upstream's live response when its body is the verified one, else the last
        verified bytes with the headers they came with."""
        key = self.source.variant_key(scope["headers"])
        live = await self._variant(scope, send)
        if live is None:
            return
        if self.source.variants.get(key) is not live:
            key = ""  # past MAX_VARIANTS: the default variant, and its lock
        current = live.declarations
        assert isinstance(current, UpstreamDeclarations)
        # The default variant is fetched without A2A-Version, whatever the client sent
        # (not a version, or past MAX_VARIANTS): else its bytes never match.
        dropped = _CARD_REQUEST_DROPPED if key else _CARD_REQUEST_DROPPED | {_VERSION_HEADER}
        headers = _request_headers(scope, dropped, trusted=self._trusted(scope))
        try:
            fetched: _Fetched | None = await _fetch(
                self.source.client(), self.source.card_url, max_bytes=self.source.max_bytes,
                timeout=self.source.timeout, headers=headers,
            )  # fmt: skip
        except ProxyError:
            fetched = None
        if fetched is not None and fetched.status == 200 and fetched.body != current.raw:
            async with self.source.lock(key):  # one verification at a time per variant
                if live.declarations is current:
                    await live.reload()
            swapped = live.declarations
            assert isinstance(swapped, UpstreamDeclarations)
            current = swapped
        if fetched is not None and fetched.status == 200 and fetched.body == current.raw:
            etag = current.etag if current.changed else None
            served = list(_served_headers(fetched.headers.raw, current.card_bytes, etag, date=True))
        else:
            served = list(current.headers)
        if self.options.card_cache_control is not None:
            served = [(n, v) for n, v in served if n != b"cache-control"]
            served.append((b"cache-control", self.options.card_cache_control.encode("latin-1")))
        tag = next((v for n, v in served if n == b"etag"), None)
        if tag is not None:
            for name, value in scope["headers"]:
                if name == b"if-none-match" and if_none_match(value, tag):
                    kept = [(n, v) for n, v in served if n not in _NOT_IN_304]
                    await send({"type": "http.response.start", "status": 304, "headers": kept})
                    await send({"type": "http.response.body", "body": b""})
                    return
        await send({"type": "http.response.start", "status": 200, "headers": served})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else current.card_bytes})  # fmt: skip

    async def _pass(
        self, scope: Scope, receive: Receive, send: Send, raw_path: bytes, body: bytes
    ) -> None:
        """Forward the request byte for byte: the target exactly as received (httpx
        would normalize a URL, so the raw target goes to httpcore as its ``target``)."""
        query: bytes = scope.get("query_string", b"")
        target = raw_path + (b"?" + query if query else b"")
        request = httpx.Request(
            scope["method"], self.source.origin + "/",
            headers=_request_headers(scope, trusted=self._trusted(scope)),
            content=body, extensions={"target": target},
        )  # fmt: skip
        try:
            response = await self.source.client().send(request, stream=True)
        except httpx.PoolTimeout:
            await _plain(send, *_UPSTREAM_BUSY)
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
            await self._stream_until_gone(response, receive, send)
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


def _dated(send: Send) -> Send:
    """``send`` giving every response a ``Date`` (issue 12 item 7): the proxy's own
    answers, refusals and errors, and upstream's responses that came without one
    (RFC 9110 §6.6.1: a recipient with a clock adds it when forwarding). Upstream's own
    ``Date`` passes through unchanged."""

    async def dated(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            if all(name.lower() != b"date" for name, _ in headers):
                headers.append((b"date", http_date()))
                message = {**message, "headers": headers}
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
    public = _origin_of(public_url)
    out: list[str] = []
    from ..declarations import interfaces

    for item in interfaces(card):
        if _origin_of(item.url) != public and item.url not in out:
            out.append(item.url)
    return out


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
    ``declare``, ``card_key``, ``card_kid``, ``proposals``, ``card_cache_control``,
    ``max_body``, ``body_timeout``, ``upstream_connections``, ``upstream_wait``,
    ``forwarded_allow_ips``) shape the card, the bounds and what is forwarded.
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
    source = _Upstream(upstream, timeout=timeout, max_bytes=max_bytes,
                       idle_timeout=idle_timeout, transport=transport, options=options,
                       on_error=on_error or reporter)  # fmt: skip
    try:
        live = await source.start()
    finally:
        await source.aclose()  # the serving loop opens its own connections
    if options.public_url is not None:
        for url in bypassing(live.declarations.card, options.public_url):
            log.warning(
                "the card's interface %s does not point at this proxy (%s): clients that "
                "follow the card bypass the interview; run with --declare, or fix the card",
                _printable(url), _printable(options.public_url),
            )  # fmt: skip
    front = _Front(source, limiter, client_key)
    return ProxyApp(front, live, source, poll, recovered=reporter.clear), live


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
    which also drops trailer fields and refuses upgrades (PROFILE §3.9, issue 14), and
    none of uvicorn's own response headers (upstream's ``Date`` and ``Server`` pass
    through; :class:`ProxyApp` dates the rest)."""
    from . import listen  # the bounds every server of this package keeps

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
