"""The proxy's upstream: its card variants, fetched, verified and (with ``declare``)
changed and re-signed.

On start the proxy fetches the upstream card (``{upstream}/.well-known/agent-card.json``,
or the URL itself when it names a ``.json`` document) and every proposal its terms entries
commit to, and runs the self-check of PROFILE §2.4: :meth:`Upstream.load` raises
``DeclarationError`` or :class:`~.fetch.ProxyError` when the card cannot be read, does not
declare the interview (unless ``declare``), declares it ``required: true``, or a committed
proposal cannot be fetched or fails verification (the message names the entry's pointer,
its URL and the cause).

``public_url`` names the proxy's own public address. A proposal whose URL is on that
origin is read from upstream at the same path (what a client gets through the proxy);
``proposals`` gives local copies instead, served at their paths. With ``declare`` a card
that does not declare the interview, or whose interfaces or proposals name another origin,
is served with the declaration added (``{"uri": ...}``, ``required`` left at its default,
false) and those URLs moved to the public origin; a signed card so changed is re-signed
with ``card_key`` and ``card_alg`` (as ``card sign`` signs, PROFILE §6.3) or refused.

Variants negotiated by ``A2A-Version`` are fetched, verified and kept separately (at most
``MAX_VARIANTS``), each a :class:`~a2a_interview.server.lifecycle.LiveDeclarations`: a
changed card is verified like the first one and swapped in whole, and one that fails keeps
the last good set.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from ... import rpc
from ...card import is_signed
from ...cardproto import spelling
from ...declarations import Declarations, build, interview_entry, read_card
from ...errors import DeclarationError, IngressError, InterviewError
from ...jcs import canonicalize
from ...net.failures import InsecureURL
from ...net.urls import check_url, http_origin, origin
from ...spec import CARD_PATH, INTERVIEW_URI
from ...terms import read_terms_entries, verify_proposal
from ..asgi import NO_INTERFACE, carries_interview
from ..lifecycle import LiveDeclarations
from .connections import upstream_transport
from .fetch import ProxyError, fetch, printable
from .headers import served_headers

log = logging.getLogger("a2a_interview.proxy")

CONNECT_TIMEOUT: Final = 5.0
STREAM_IDLE_TIMEOUT: Final = 300.0  # pass-through: longest silence between two reads
DEFAULT_MAX_BODY: Final = 10 * 1024 * 1024  # a request body, read whole before forwarding
DEFAULT_BODY_TIMEOUT: Final = 30.0  # the whole request body, from the first read
UPSTREAM_CONNECTIONS: Final = 256
POOL_TIMEOUT: Final = 10.0  # the longest wait for a free upstream connection
MAX_VARIANTS: Final = 8  # card variants by A2A-Version, the default one included
UNVERIFIED_RETRY: Final = 30.0  # a variant that did not verify is not fetched again sooner
_VERSION: Final = re.compile(r"[0-9]{1,4}(?:\.[0-9]{1,4}){0,2}")
VERSION_HEADER: Final = b"a2a-version"
# docs/decisions.md D-PROXY-31: where the proxy serves the public key of its re-signing
# key (PROFILE §6.7), named by the re-signed card's jku.
PROXY_JWKS_PATH: Final = "/.well-known/a2a-interview-proxy-jwks.json"


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
    # When these bytes verified, as an HTTP date: the card's Last-Modified when upstream
    # sends none (D-PROXY-33).
    loaded: bytes = b""


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


def _grpc(interface: dict[str, Any]) -> bool:
    """Whether a 1.0 or 0.3 interface object names the gRPC binding."""
    binding = interface.get(spelling(interface, "protocolBinding"), interface.get("transport"))
    return binding == "GRPC"


def _rebase(url: str, public: str) -> str:
    """``url`` with its scheme and authority replaced by ``public``'s; path and query
    kept."""
    base = urlsplit(public)
    return urlsplit(url)._replace(scheme=base.scheme, netloc=base.netloc).geturl()


@dataclass
class ProxyOptions:
    """What shapes the served card and where proposals come from (see the module doc)."""

    public_url: str | None = None
    declare: bool = False
    card_key: Any = None
    card_kid: str | None = None
    # The re-signing algorithm (PROFILE §6.3): the card key's JWK `alg` when it names one,
    # as `card sign` signs; None: the key's default (RS256 for RSA).
    card_alg: str | None = None
    # The jku of the re-signed card (PROFILE §6.7); None: the proxy's own JWKS at
    # PROXY_JWKS_PATH on public_url's origin.
    card_jku: str | None = None
    proposals: Mapping[str, bytes] = field(default_factory=dict)
    card_cache_control: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    upstream_connections: int = UPSTREAM_CONNECTIONS
    upstream_wait: float = POOL_TIMEOUT
    # Upstream connections one client may hold (D-PROXY-41): None, a tenth of
    # upstream_connections; 0, no share.
    upstream_client_connections: int | None = None
    # Peers whose forwarding headers are passed on (D-PROXY-12): addresses or
    # networks ("10.0.0.0/8"), or "*" for every peer. Default: none.
    forwarded_allow_ips: Sequence[str] = ()


class Upstream:
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
        self.public = http_origin(options.public_url) if options.public_url else None
        self.on_error = on_error
        self.variants: dict[str, LiveDeclarations] = {}
        self._loading: dict[str, asyncio.Future[LiveDeclarations | None]] = {}
        self._unverified: dict[str, float] = {}  # key -> when its first load failed
        self._versions: tuple[Any, frozenset[rpc.Version]] | None = None
        self._locks: dict[str, asyncio.Lock] = {}
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            limit = self.options.upstream_connections
            limits = httpx.Limits(max_connections=limit, max_keepalive_connections=min(64, limit))
            self._client = httpx.AsyncClient(
                # Read upstream no further ahead than the client takes (D-PROXY-40).
                transport=self.transport or upstream_transport(limits),
                follow_redirects=False,  # redirects are the caller's, by policy
                timeout=httpx.Timeout(
                    self.idle_timeout, connect=CONNECT_TIMEOUT, pool=self.options.upstream_wait
                ),
                limits=limits,
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def jku(self) -> str | None:
        """The ``jku`` a re-signed card names (PROFILE §6.7): ``card_jku`` when given,
        else the proxy's own JWKS on its public origin; ``None`` without a public URL."""
        if self.options.card_jku is not None:
            return self.options.card_jku
        public = self.options.public_url
        if public is None:
            return None
        return urlsplit(public)._replace(path=PROXY_JWKS_PATH, query="", fragment="").geturl()

    def jwks(self) -> bytes | None:
        """The JWK Set of the re-signing key's public half, as the proxy serves it at
        :data:`PROXY_JWKS_PATH` (PROFILE §6.7); ``None`` without a re-signing key."""
        key, kid = self.options.card_key, self.options.card_kid
        if key is None or kid is None:
            return None
        from ...card import public_jwk

        return canonicalize({"keys": [public_jwk(key, kid, self.options.card_alg)]})

    def on_public_origin(self, url: str) -> bool:
        return self.public is not None and http_origin(url) == self.public

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
            fetched = await fetch(self.client(), where, max_bytes=self.max_bytes,
                                   timeout=self.timeout)  # fmt: skip
        except ProxyError as exc:
            return str(exc)
        if fetched.status != 200:
            who = "upstream" if where != url else "the server"
            return f"{who} answered {fetched.status}"
        return fetched.body

    def shape(self, card: dict[str, Any]) -> bool:
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
        for member in (spelling(card, "supportedInterfaces"), "additionalInterfaces"):
            items = card.get(member)
            if isinstance(items, list):
                # A gRPC interface is not the proxy's to carry (PROFILE §3b): left where it is.
                holders += [i for i in items if isinstance(i, dict) and not _grpc(i)]
        if isinstance(card.get("url"), str) and card.get("preferredTransport") != "GRPC":
            holders.append(card)
        for holder in holders:
            url = holder.get("url")
            if (
                isinstance(url, str)
                and http_origin(url) is not None
                and not self.on_public_origin(url)
            ):
                holder["url"] = _rebase(url, public)
                changed = True
        for _, items in _terms_extension_objects(card):
            for item in items:
                url = item.get("url")
                if isinstance(url, str) and http_origin(url) == self.upstream_origin:
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
            fetched = await fetch(
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
            changed = self.shape(card)
        elif interview_entry(card) is None:
            raise DeclarationError(
                "the upstream card does not declare the interview extension "
                "(--declare serves it with the declaration added)"
            )
        if changed and is_signed(card):  # PROFILE §6.7: "signatures": [] is unsigned
            card = await self.resign(card)
        entries = [e for e in read_terms_entries(card) if e.url is not None]
        urls = sorted({e.url for e in entries if e.url is not None})
        bodies = await asyncio.gather(*(self._proposal(u) for u in urls))
        got = dict(zip(urls, bodies, strict=True))
        for entry in entries:
            assert entry.url is not None
            where = printable(entry.url)
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
        if not carries_interview(card):
            raise ProxyError(f"the upstream card has {NO_INTERFACE}")
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
            headers=served_headers(response_headers, served, etag if changed else None, date=False),
            changed=changed,
            loaded=formatdate(usegmt=True).encode("ascii"),
        )

    async def resign(self, card: dict[str, Any]) -> dict[str, Any]:
        key, kid = self.options.card_key, self.options.card_kid
        if key is None or kid is None:
            raise ProxyError(
                "the upstream card is signed and --declare changes it, which breaks its "
                "signature: give --card-key KEY --kid KID to re-sign it"
            )
        from ...card import sign_card
        from ...errors import SignatureError

        unsigned = {k: v for k, v in card.items() if k != "signatures"}
        # PROFILE §6.3: as `card sign` signs, so both SDKs' verifiers accept it (proto,
        # then served when the card as served carries more).
        try:
            signed: dict[str, Any] = sign_card(
                unsigned, key, kid=kid, alg=self.options.card_alg, jku=self.jku()
            )
        except SignatureError as exc:
            raise SignatureError(f"cannot re-sign the upstream card: {exc}") from None
        return signed

    def versions(self) -> frozenset[rpc.Version]:
        """The protocol versions the default card's interfaces declare, any binding
        (derived once per default card: every request asks, D-PROXY-44)."""
        declarations = self.variants[""].declarations
        known = self._versions
        if known is not None and known[0] is declarations:
            return known[1]
        card = declarations.card
        found = rpc.declared_versions(card) | rpc.declared_versions(card, "HTTP+JSON")
        self._versions = (declarations, found)
        return found

    def variant_key(self, headers: Iterable[tuple[bytes, bytes]]) -> str:
        """The card variant a request asks for: its ``A2A-Version`` when that is exactly
        ``Major.Minor`` of a version the card's interfaces declare (D-PROXY-25:
        a slot only for a version the card lists); else ``""``, the variant fetched
        without one."""
        key = variant_key(headers)
        if key == "1.0":  # the usual request, read without a parse (D-PROXY-51)
            return key if (1, 0) in self.versions() else ""
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
        tried again later: D-PROXY-25, every variant's paths are judged from the
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
            del self._unverified[stale]  # unverified entries expire (D-PROXY-25)
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
    from ...terms import terms_extensions

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
        if len(name) == 11 and name.lower() == VERSION_HEADER:
            if value == b"1.0":  # the usual request (D-PROXY-51)
                return "1.0"
            text = value.strip(b" \t").decode("latin-1")
            return text if _VERSION.fullmatch(text) else ""
    return ""
