"""The proxy's front: what each request is, and the answers given here.

Every request is first read whole (at most ``max_body`` bytes within ``body_timeout``
seconds) before an upstream connection is taken, so a slow client holds none. Then it is
one of:

- the card, at the card's path in any spelling, checked against the verified bytes on
  every request: upstream's live response (headers and all) when its body is the one that
  verified, else the last verified bytes; the variant the request's ``A2A-Version``
  negotiates, verified on its own;
- an interview call in any spelling of its path (PROFILE §3.9: dot segments, ``//``,
  percent-encoding) or a batch naming the namespace: answered or refused here, never
  passed on;
- with ``declare``, a request for the extended card: shaped as the public card is
  (:mod:`.extended`, PROFILE §7);
- a local copy of a proposal (``proposals`` on the public origin);
- the re-signing key's public JWKS at ``PROXY_JWKS_PATH`` (PROFILE §6.7), when the proxy
  re-signs;
- anything else: passed on by :func:`~.passthrough.forward`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import urlsplit

from ... import rpc
from ...declarations import Declarations
from ..asgi import (
    CARD_CACHE_CONTROL,
    ClientKey,
    Receive,
    Replies,
    Scope,
    Send,
    header_activation,
    if_none_match,
    interface_paths,
    path_key,
    rest_prefixes,
    rest_question,
    scan,
    segments_of,
    send_reply,
)
from ..lifecycle import LiveDeclarations
from . import extended
from .fetch import Fetched, ProxyError, fetch
from .headers import CARD_REQUEST_DROPPED, plain, request_headers, served_headers, trusted_peers
from .passthrough import forward
from .upstream import (
    MAX_VARIANTS,
    PROXY_JWKS_PATH,
    VERSION_HEADER,
    Upstream,
    UpstreamDeclarations,
)

# RFC 9110 §15.4.5: a 304 carries the validators and caching fields, not the content's.
_NOT_IN_304: Final = frozenset({b"content-type", b"content-length"})
_UNVERIFIED: Final = (502, b"upstream card did not verify\n")
_BAD_TARGET: Final = (400, b"request target not forwarded\n")
_TOO_LARGE: Final = (413, b"request body too large\n")
_TOO_SLOW: Final = (408, b"request body not received in time\n")


class _Routes:
    """Where a card variant's interview and card are served, as path keys
    (:func:`a2a_interview.rpc.path_key`, PROFILE §3.9), and the versions it serves."""

    __slots__ = ("card", "declarations", "replies", "rest", "rest_versions", "rpc", "versions")

    def __init__(self, declarations: Declarations, card_path: str) -> None:
        card = declarations.card
        self.declarations = declarations
        self.rpc = frozenset(rpc.path_key(p) for p in interface_paths(card, "JSONRPC"))
        self.rest = rest_prefixes(interface_paths(card, "HTTP+JSON"))
        self.card = rpc.path_key(card_path)
        self.versions = rpc.negotiated_versions(card)  # PROFILE §3.10
        self.rest_versions = rpc.negotiated_versions(card, "HTTP+JSON")
        # D-PROXY-46: replies to the default variant's small bodies, as the other layers.
        self.replies = Replies(declarations.interview)


class _Deadlines:
    """When each body read under way runs out (``body_timeout`` after it began), kept
    by one timer for all of them (D-PROXY-50). Every read has the same duration, so
    reads run out in the order they began: the timer is set for the oldest read, and
    when it fires it cancels the reads that ran out and is set again for the oldest
    left. A read that ends removes its entry; the timer, when it finds none left that
    ran out, is simply set again, or not at all when no read is under way."""

    __slots__ = ("_cut", "_loop", "_reading", "_timer", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._reading: dict[asyncio.Task[Any], float] = {}  # in the order reads began
        self._cut: set[asyncio.Task[Any]] = set()  # cancelled here, not yet told
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, task: asyncio.Task[Any]) -> None:
        loop = task.get_loop()
        if loop is not self._loop:  # another event loop: what the old one held is gone
            if self._timer is not None:
                self._timer.cancel()
            self._reading.clear()
            self._cut.clear()
            self._timer, self._loop = None, loop
        deadline = loop.time() + self.seconds
        self._reading[task] = deadline
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._expire)

    def discard(self, task: asyncio.Task[Any]) -> None:
        self._reading.pop(task, None)
        self._cut.discard(task)

    def expired(self, task: asyncio.Task[Any]) -> bool:
        """Whether ``task`` was cancelled here, its read having run out."""
        return task in self._cut

    def _expire(self) -> None:
        self._timer = None
        loop = self._loop
        assert loop is not None
        now = loop.time()
        reading = self._reading
        while reading:
            task, deadline = next(iter(reading.items()))
            if deadline > now:
                self._timer = loop.call_at(deadline, self._expire)
                return
            del reading[task]
            self._cut.add(task)
            task.cancel()


class Front:
    """Every request: read whole, then answered here or passed on (module doc)."""

    def __init__(self, source: Upstream, limiter: Any, client_key: ClientKey) -> None:
        self.source = source
        self.limiter = limiter
        self.client_key = client_key
        self.options = source.options
        self.trusts = trusted_peers(source.options.forwarded_allow_ips)
        self._deadlines = _Deadlines(source.options.body_timeout)
        self._routes: dict[int, _Routes] = {}
        self.local: dict[tuple[str, ...], bytes] = {}
        for url, body in source.options.proposals.items():
            if source.on_public_origin(url):
                self.local[rpc.path_key(urlsplit(url).path)] = body
        # PROFILE §6.7: the re-signing key's public JWKS, on the proxy's own origin.
        self.jwks = source.jwks()
        self.jwks_key = rpc.path_key(PROXY_JWKS_PATH)

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
            await plain(send, *_BAD_TARGET)
            return
        method = scope["method"]
        segments = segments_of(raw_path)  # every spelling (PROFILE §3.9)
        key = path_key(segments)
        default = self.source.variants[""].declarations
        if method in ("GET", "HEAD") and key == self.routes(default).card:
            await self._card(scope, send)
            return
        if method in ("GET", "HEAD") and key == self.jwks_key and self.jwks is not None:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"application/jwk-set+json"),
                (b"content-length", str(len(self.jwks)).encode()),
                (b"cache-control", b"max-age=300"),
            ]})  # fmt: skip
            await send({"type": "http.response.body",
                        "body": b"" if method == "HEAD" else self.jwks})  # fmt: skip
            return
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        if await self._interview(scope, send, segments, raw_path, body):
            return
        if self.options.declare and await self._extended(scope, send, segments, raw_path, body):
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
        trusted = self._trusted(scope)
        await forward(self.source, scope, receive, send, raw_path=raw_path, body=body,
                      trusted=trusted)  # fmt: skip

    def _trusted(self, scope: Scope) -> bool:
        """Whether the peer may name other clients (``forwarded_allow_ips``)."""
        client = scope.get("client")
        return client is not None and self.trusts(str(client[0]))

    async def _extended(
        self, scope: Scope, send: Send, segments: tuple[str, ...], raw_path: bytes, body: bytes
    ) -> bool:
        """With ``declare``, a request for the extended card, answered shaped as the
        public card is (PROFILE §7, :mod:`.extended`); whether it was one."""
        method = scope["method"]
        key = rpc.path_key(segments)
        routes = [self.routes(v.declarations) for v in self.source.variants.values()]
        if method == "POST" and any(key in r.rpc for r in routes):
            request_id = extended.rpc_request(scope["headers"], body, self.options.max_body)
            if request_id is extended.NOT_ONE:
                return False
        elif method in ("GET", "HEAD"):
            bases = [prefix[:-1] for r in routes for prefix in r.rest]
            if not extended.rest_request(bases, key):
                return False
            request_id = extended.NOT_ONE
        else:
            return False
        await extended.serve(self.source, scope, send, raw_path=raw_path, body=body,
                             trusted=self._trusted(scope), request_id=request_id)  # fmt: skip
        return True

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole request body, read before any upstream connection is taken
        (D-PROXY-29): at most ``max_body`` bytes within ``body_timeout`` seconds, else 413
        or 408 and ``None``. ``None`` too when the client left."""
        limit = self.options.max_body
        for name, value in scope["headers"]:
            if name == b"content-length" and value.strip().isdigit() and int(value) > limit:
                await plain(send, *_TOO_LARGE)
                return None
        # The deadline (D-PROXY-45) is kept by the front's one timer for every read under
        # way (D-PROXY-50): a read costs an entry, not a timer of its own.
        task = asyncio.current_task()
        assert task is not None
        deadlines = self._deadlines
        deadlines.add(task)
        expired = False
        try:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            if not message.get("more_body", False) and len(chunk) <= limit:
                whole: bytes = chunk
                return whole  # the usual request: its body in one message
            chunks: list[bytes] = []
            size = 0
            while True:
                size += len(chunk)
                if size > limit:
                    break
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk = message.get("body", b"")
        except asyncio.CancelledError:
            expired = deadlines.expired(task)
            if not expired or task.uncancel() > 0:
                raise  # cancelled by someone else: not ours to swallow
        finally:
            deadlines.discard(task)
        if expired:
            await plain(send, *_TOO_SLOW)
        else:
            await plain(send, *_TOO_LARGE)
        return None

    async def _variant(self, scope: Scope, send: Send) -> LiveDeclarations | None:
        live = await self.source.variant(self.source.variant_key(scope["headers"]))
        if live is None:
            await plain(send, *_UNVERIFIED)
        return live

    def _where(
        self, variants: Iterable[LiveDeclarations], method: str, segments: tuple[str, ...],
        raw_path: bytes,
    ) -> tuple[bool, str | None]:  # fmt: skip
        """Whether the request is a JSON-RPC interview path, else the HTTP+JSON question
        it asks, under the interface paths of any of ``variants`` (D-PROXY-25:
        an interview path of one variant is one for a client of every version)."""
        key = path_key(segments)
        if method == "POST":
            variants = list(variants)
            default = self.routes(variants[0].declarations) if variants else None
            if default is not None and key in default.rpc:  # the usual call: no list
                return True, None
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
        act = header_activation(headers)
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
            scanned = await scan(judged) if len(judged) > rpc.SCAN_SLICE else None
            first = self.routes(source.variants[""].declarations).replies.jsonrpc(
                judged, act, scanned
            )
            if first is None:
                return False
        live = await source.variant(source.variant_key(headers))
        if live is None:
            await plain(send, *_UNVERIFIED)
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
        dropped = CARD_REQUEST_DROPPED if key else CARD_REQUEST_DROPPED | {VERSION_HEADER}
        headers = request_headers(scope, dropped, trusted=self._trusted(scope))
        try:
            fetched: Fetched | None = await fetch(
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
            served = list(served_headers(fetched.headers.raw, current.card_bytes, etag, date=True))
        else:
            served = list(current.headers)
        if self.options.card_cache_control is not None:
            served = [(n, v) for n, v in served if n != b"cache-control"]
            served.append((b"cache-control", self.options.card_cache_control.encode("latin-1")))
        # D-PROXY-33: the caching fields upstream left out (what the A2A TCK's card tests
        # look for), never in place of one it sent.
        present = {n for n, _ in served}
        for name, value in (
            (b"cache-control", CARD_CACHE_CONTROL.encode("ascii")),
            (b"etag", current.etag),
            (b"last-modified", current.loaded),
        ):
            if name not in present:
                served.append((name, value))
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
