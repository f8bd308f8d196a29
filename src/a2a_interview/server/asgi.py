"""The interview as an ASGI layer in front of any ASGI application.

    app = InterviewMiddleware(app, declarations)

JSON-RPC calls (PROFILE §3) are answered at the path of every ``JSONRPC`` interface the
card declares, HTTP+JSON calls (§3b) under every ``HTTP+JSON`` interface, and the card
itself at ``/.well-known/agent-card.json`` from the same precomputed bytes the answers
are projected from. A request is matched against those paths without case, after every
normalization a common host or intermediary applies (:func:`a2a_interview.rpc.
path_segments`, PROFILE §3.9), and an activated body is judged decoded (one layer of gzip
or deflate) at any size the layer reads, so no spelling, coding or size of an interview
call gets past it. Everything else, and every interview call without
activation, goes to the wrapped app byte for byte, streaming included. The layer holds no
model and calls none: a request it answers never reaches the wrapped app.

Register it *inside* any authentication middleware (``Starlette(middleware=[auth,
Middleware(InterviewMiddleware, ...)])``) so that interview calls are authenticated
exactly like the agent's own methods.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, MutableMapping
from email.utils import formatdate
from typing import Any, Final
from urllib.parse import urlsplit

from .. import rpc
from ..declarations import Declarations, interfaces
from ..projection import Interview
from ..spec import CARD_PATH, INTERVIEW_URI, MAX_JUDGED_BYTES
from .lifecycle import LiveDeclarations
from .listen import client_of

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ClientKey = Callable[[Scope], str]


def remote_address(scope: Scope) -> str:
    """The default client key: the client the peer's address counts as (PROFILE §3.7):
    an IPv4 address (also when mapped into IPv6) or an IPv6 /64, as the connection share
    counts it (``listen.client_of``, D-NET-15)."""
    client = scope.get("client")
    return client_of(str(client[0])) if client else "unknown"


def request_segments(scope: Scope) -> tuple[str, ...]:
    """The request's path as PROFILE §3.9 reads it: the segments of ``raw_path`` (the
    bytes received; the decoded ``path`` when ``raw_path`` is absent, as ASGI allows)
    after every normalization a common host applies (:func:`a2a_interview.rpc.
    path_segments`: decoding, dot segments, ``//``, ``;`` parameters, ``\\``, NUL,
    full-width forms, trailing dots), case kept. Compare with
    :func:`a2a_interview.rpc.path_key`. Never raises."""
    return _segments(raw_target(scope))


# The same few paths arrive again and again: their reading is remembered (bounded, so a
# client spraying paths only evicts; both functions are pure). The proxy reads its
# request paths through the same two.
segments_of = functools.lru_cache(maxsize=1024)(rpc.path_segments)
_segments = segments_of
path_key = functools.lru_cache(maxsize=1024)(rpc.path_key)


_ACTIVATION_HEADERS = frozenset({b"a2a-extensions", b"x-a2a-extensions"})
_URI = INTERVIEW_URI.encode()
_ONLY_CURRENT = rpc.Activation(current=True)


def activation(scope: Scope) -> rpc.Activation:
    """:func:`a2a_interview.rpc.activation` of the request's headers (PROFILE §3.2),
    reading only the two fields that can activate."""
    return header_activation(scope["headers"])


def header_activation(headers: Any) -> rpc.Activation:
    """:func:`activation` of a header list."""
    # Only names of the two lengths are lowered and compared (14, 16 bytes).
    found = [(n, v) for n, v in headers if len(n) in (14, 16) and n.lower() in _ACTIVATION_HEADERS]
    if not found:
        return rpc.NOT_ACTIVATED
    if len(found) == 1 and found[0][1] == _URI and found[0][0].lower() == b"a2a-extensions":
        return _ONLY_CURRENT  # the usual request: one field, the URI alone
    return rpc.activation(found)


_UNKNOWN: Final = rpc.Reply(0, b"", ())  # what Replies remembers nothing about


class Replies:
    """:func:`a2a_interview.rpc.jsonrpc` for one :class:`Interview`, remembered for small
    bodies.

    A reply is a pure function of the body, the activation and the declarations (no
    clock, no randomness: STYLE), and a verifier asks the same questions with the same
    ids on every run, so the same few bodies recur. The memory is bounded: bodies up to
    1 KiB, replies up to 8 KiB, 512 entries (then it starts over), about 4.5 MiB at most;
    a flood of distinct bodies costs a parse each, as without it.
    """

    __slots__ = ("_memo", "interview", "max_body")

    def __init__(self, interview: Interview, max_body: int = rpc.MAX_REQUEST_BYTES) -> None:
        self.interview = interview
        self.max_body = max_body
        self._memo: dict[tuple[bytes, bool, bool], rpc.Reply | None] = {}

    def jsonrpc(
        self, body: bytes, act: rpc.Activation, scanned: bool | None = None
    ) -> rpc.Reply | None:
        """What ``rpc.jsonrpc(body, act, interview, scanned=scanned)`` returns."""
        if len(body) > 1024:
            return rpc.jsonrpc(body, act, self.interview, max_bytes=self.max_body, scanned=scanned)
        key = (body, act.current, act.legacy)
        known = self._memo.get(key, _UNKNOWN)
        if known is not _UNKNOWN:
            return known
        reply = rpc.jsonrpc(body, act, self.interview, max_bytes=self.max_body)
        if reply is None or len(reply.body) <= 8192:
            if len(self._memo) >= 512:
                self._memo.clear()
            self._memo[key] = reply
        return reply


def interface_paths(card: Any, binding: str) -> list[str]:
    """The paths of the card's ``binding`` interfaces, in card order, each once, without a
    trailing slash (``/`` for the root). A URL that does not parse (a malformed IPv6
    host) names no path to answer on and is skipped: it must not break the app."""
    paths: list[str] = []
    for item in interfaces(card):
        if item.binding != binding:
            continue
        try:
            path = urlsplit(item.url).path.rstrip("/") or "/"
        except ValueError:
            continue
        if path not in paths:
            paths.append(path)
    return paths


# PROFILE §7 (docs/decisions.md D-PROXY-6, D-SERVE-25): what the serving layers say at
# start of a card that declares the interview on no interface able to carry it, in the
# verifier's terms.
NO_INTERFACE: Final = (
    "no JSONRPC or HTTP+JSON interface to serve the interview on (gRPC cannot carry it); "
    "verify reports such a card non_conformant (declaration: no_interface)"
)


def carries_interview(card: Any) -> bool:
    """Whether ``card`` has an interface able to carry the interview: a ``JSONRPC`` or
    ``HTTP+JSON`` one whose URL names a path (PROFILE §3b, §7)."""
    return bool(interface_paths(card, "JSONRPC") or interface_paths(card, "HTTP+JSON"))


class _Routes:
    """The paths an interview answers on, derived once per card."""

    __slots__ = ("interview", "last_modified", "replies", "rest", "rest_versions", "rpc",
                 "versions")  # fmt: skip

    def __init__(self, interview: Interview, rpc_paths: Any, rest_paths: Any) -> None:
        card = interview.card
        self.interview = interview
        self.replies = Replies(interview)
        # Read like request paths (PROFILE §3.9), so the two compare.
        paths = rpc_paths if rpc_paths is not None else interface_paths(card, "JSONRPC")
        self.rpc = frozenset(rpc.path_key(p) for p in paths)
        bases = rest_paths if rest_paths is not None else interface_paths(card, "HTTP+JSON")
        self.rest = rest_prefixes(bases)
        self.versions = rpc.negotiated_versions(card)  # PROFILE §3.10
        self.rest_versions = rpc.negotiated_versions(card, "HTTP+JSON")
        # D-SERVE-29: the card's Last-Modified is when these declarations were taken up.
        self.last_modified = formatdate(usegmt=True).encode("ascii")


def rest_prefixes(bases: Any) -> tuple[tuple[str, ...], ...]:
    """The path key (:func:`a2a_interview.rpc.path_key`) of ``{base}/interview`` for each
    HTTP+JSON base path (PROFILE §3.9)."""
    out = ((*rpc.path_key(b), "interview") for b in bases)
    return tuple(dict.fromkeys(out))


def rest_question(
    prefixes: tuple[tuple[str, ...], ...], segments: tuple[str, ...], raw: bytes
) -> str | None:
    """The question a request path (its :func:`request_segments`; ``raw`` as received)
    asks when it is ``{base}/interview/{question}`` under one of ``prefixes`` (the
    question's case kept), or ``""`` when it is ``{base}/interview`` followed by what
    normalization drops (``/``, ``/.``, ``;x``); ``None`` when it is neither."""
    key = rpc.path_key(segments)
    for prefix in prefixes:
        size = len(prefix)
        if key[:size] == prefix:
            if len(key) == size + 1:
                return segments[size]
            if len(key) == size and not raw.lower().endswith(b"interview"):
                return ""
    return None


def raw_target(scope: Scope) -> bytes:
    """The request's path as received (``raw_path``, else ``path`` encoded)."""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes):
        return raw
    decoded = scope.get("path")
    return decoded.encode("utf-8", "surrogateescape") if isinstance(decoded, str) else b"/"


def if_none_match(header: bytes, etag: bytes) -> bool:
    """Whether an ``If-None-Match`` value matches ``etag``: weak comparison, ``*``
    included (RFC 9110 §13.1.2)."""
    candidates = [c.strip() for c in header.split(b",")]
    opaque = etag.removeprefix(b"W/")  # weak comparison: either tag may be weak
    return b"*" in candidates or any(c.removeprefix(b"W/") == opaque for c in candidates)


_ENCODED: dict[tuple[tuple[str, str], ...], list[tuple[bytes, bytes]]] = {}


def _encoded(headers: tuple[tuple[str, str], ...]) -> list[tuple[bytes, bytes]]:
    # Replies carry a handful of distinct header sets (content type, echo, Retry-After):
    # encode each once. The bound keeps a flood of Retry-After values from growing it.
    out = _ENCODED.get(headers)
    if out is None:
        out = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        if len(_ENCODED) < 256:
            _ENCODED[headers] = out
    return out


async def send_reply(send: Send, reply: rpc.Reply) -> None:
    """Send a complete reply."""
    headers = [*_encoded(reply.headers), (b"content-length", b"%d" % len(reply.body))]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


# The Cache-Control of a card this package serves when none is given (docs/decisions.md
# D-SERVE-27): what the A2A TCK's CARD-CACHE-001 looks for, a max-age.
CARD_CACHE_CONTROL: Final = "public, max-age=60"


async def send_document(
    scope: Scope,
    send: Send,
    body: bytes,
    etag: bytes,
    cache_control: bytes | None,
    *,
    content_type: bytes = b"application/json",
    last_modified: bytes | None = None,
) -> None:
    """Answer a GET or HEAD for a document held as bytes: ``304`` when the request's
    ``If-None-Match`` matches ``etag`` (weak comparison), else ``200`` with the body.
    ``Cache-Control`` is sent when ``cache_control`` is not ``None``, ``Last-Modified``
    when ``last_modified`` is not."""
    headers = [(b"etag", etag)]
    if cache_control is not None:
        headers.append((b"cache-control", cache_control))
    if last_modified is not None:
        headers.append((b"last-modified", last_modified))
    for name, value in scope["headers"]:
        if name == b"if-none-match" and if_none_match(value, etag):
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
    headers += [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


class InterviewMiddleware:
    """Serve the interview for ``app``'s agent.

    ``declarations`` is a :class:`LiveDeclarations` (reloadable), a
    :class:`Declarations`, or a bare :class:`Interview`. ``limiter`` (a
    :class:`~a2a_interview.server.ratelimit.RateLimiter`) counts interview calls per
    ``client_key(scope)``; ordinary traffic is never counted. ``rpc_paths`` and
    ``rest_paths`` override the paths taken from the card's interfaces. With
    ``serve_card`` the card is served from the precomputed bytes with a strong ETag.
    ``max_body`` (10 MiB) bounds what is read of an activated JSON-RPC body at an
    interview path: past it the request cannot be judged and is refused (PROFILE §3.9).
    ``versions`` (``Major.Minor`` strings) overrides the protocol versions taken from the
    card's interfaces: an interview call under any other ``A2A-Version`` gets the host's
    ``-32009`` (PROFILE §3.10).
    """

    def __init__(
        self,
        app: ASGIApp,
        declarations: LiveDeclarations | Declarations | Interview,
        *,
        limiter: Any = None,
        client_key: ClientKey = remote_address,
        serve_card: bool = True,
        card_path: str = CARD_PATH,
        rpc_paths: Any = None,
        rest_paths: Any = None,
        max_body: int = MAX_JUDGED_BYTES,
        cache_control: str = CARD_CACHE_CONTROL,
        versions: Any = None,
    ) -> None:
        self.app = app
        if isinstance(declarations, Declarations):
            declarations = declarations.interview
        self._source = declarations
        self.limiter = limiter
        self.client_key = client_key
        self.serve_card = serve_card
        self.card_path = card_path
        self._card_path = rpc.path_key(card_path)
        self.max_body = max_body
        self.cache_control = cache_control.encode("latin-1")
        self._overrides = (rpc_paths, rest_paths)
        self._versions = None if versions is None else frozenset(
            v for v in (rpc.parse_version(str(x)) for x in versions) if v is not None
        )  # fmt: skip
        self._routes = _Routes(self.interview, *self._overrides)

    @property
    def interview(self) -> Interview:
        source = self._source
        return source.interview if isinstance(source, LiveDeclarations) else source

    def _current(self) -> _Routes:
        interview = self.interview
        if self._routes.interview is not interview:  # a reload swapped the declarations
            self._routes = _Routes(interview, *self._overrides)
        return self._routes

    def _supported(self, routes: _Routes, rest: bool = False) -> frozenset[rpc.Version]:
        if self._versions is not None:
            return self._versions
        return routes.rest_versions if rest else routes.versions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        routes = self._current()
        method = scope["method"]
        segments = request_segments(scope)  # every spelling is the same request (PROFILE §3.9)
        key = path_key(segments)
        if method == "POST" and key in routes.rpc:
            await self._jsonrpc(scope, receive, send, routes)
        elif method in ("GET", "HEAD") and key == self._card_path and self.serve_card:
            await self._card(scope, send, routes)
        elif (question := rest_question(routes.rest, segments, raw_target(scope))) is not None:
            await self._rest(scope, receive, send, routes, question)
        else:
            await self.app(scope, receive, send)

    async def _respond(self, scope: Scope, send: Send, reply: rpc.Reply, act: rpc.Activation,
                       rest: bool = False) -> None:  # fmt: skip
        if self.limiter is not None:
            wait = await self.limiter.hit(self.client_key(scope))
            if wait is not None:
                reply = rpc.too_many_requests(wait, reply, act, rest=rest)
        await send_reply(send, reply)

    async def _jsonrpc(self, scope: Scope, receive: Receive, send: Send, routes: _Routes) -> None:
        act = activation(scope)
        if not act:  # PROFILE §3.3: the host's, body unread
            await self.app(scope, receive, send)
            return
        reply, replay = await judge_jsonrpc(scope, receive, act, replies=routes.replies,
                                            max_body=self.max_body,
                                            versions=self._supported(routes))  # fmt: skip
        if reply is None:
            await self.app(scope, replay, send)
        else:
            await self._respond(scope, send, reply, act)

    async def _rest(
        self, scope: Scope, receive: Receive, send: Send, routes: _Routes, question: str
    ) -> None:
        act = activation(scope)
        query = scope.get("query_string", b"")
        reply = rpc.rest(scope["method"], question, query, act, routes.interview)
        if reply is not None:
            versions = self._supported(routes, rest=True)
            reply = rpc.version_refusal(scope["headers"], versions, reply, act, rest=True)
            await self._respond(scope, send, reply, act, rest=True)
            return
        await self.app(scope, receive, send)

    async def _card(self, scope: Scope, send: Send, routes: _Routes) -> None:
        iv = routes.interview
        etag = b'"' + iv.card_digest[7:39].encode() + b'"'
        await send_document(scope, send, iv.card_bytes, etag, self.cache_control,
                            last_modified=routes.last_modified)  # fmt: skip


async def judge_jsonrpc(
    scope: Scope,
    receive: Receive,
    act: rpc.Activation,
    *,
    replies: Replies,
    max_body: int,
    versions: frozenset[rpc.Version],
) -> tuple[rpc.Reply | None, Receive]:
    """An activated JSON-RPC POST at an interview path, judged (PROFILE §3.9, §3.10):
    ``(reply, replay)``, ``reply`` being ``None`` when the request is not ours and goes
    to the host through ``replay`` untouched.

    The body is read (at most ``max_body`` bytes) and judged as the host would read it:
    decoded from one layer of gzip or deflate. What cannot be judged is refused: a body
    past ``max_body``, any other coding or a stack, a body that does not inflate. An
    answer under an ``A2A-Version`` the host refuses is the host's ``-32009``. A client
    that left before the body ended gets nothing of ours: the host's own answer."""
    body, replay = await receive_body(scope, receive, max_body)
    if body is None:
        return None, replay  # the client left
    if body is OVER:
        return rpc.too_large(act), replay
    judged = rpc.decoded_body(scope["headers"], body, act, max_body)
    if isinstance(judged, rpc.Reply):
        return judged, replay
    # A small body is scanned by the core itself: no coroutine for it (D-SERVE-49).
    scanned = await scan(judged) if len(judged) > rpc.SCAN_SLICE else None
    reply = replies.jsonrpc(judged, act, scanned)
    if reply is None:
        return None, replay
    return rpc.version_refusal(scope["headers"], versions, reply, act), replay


async def scan(body: bytes) -> bool | None:
    """:func:`a2a_interview.rpc.may_name_namespace` of a large body, a slice at a time
    with a turn of the event loop between slices, so that a 10 MiB body never holds the
    loop for more than one slice (D-SERVE-12); ``None`` for a small body (the
    core scans it itself)."""
    if len(body) <= rpc.SCAN_SLICE:
        return None
    if b"\x00" in body[:4]:
        return rpc.may_name_namespace(body)
    for start in range(0, len(body), rpc.SCAN_SLICE):
        if rpc.may_name_namespace(body, start, start + rpc.SCAN_SLICE):
            return True
        await asyncio.sleep(0)
    return False


# What receive_body returns for a body past its bound (compared by identity).
OVER: bytes = bytes(bytearray(b"over"))


async def receive_body(
    scope: Scope, receive: Receive, max_body: int
) -> tuple[bytes | None, Receive]:
    """Read a request body, holding at most about ``max_body`` bytes.

    Returns ``(body, replay)``. ``body`` is the whole body; :data:`OVER` (compare with
    ``is``) when it is over ``max_body`` (by ``Content-Length`` or as read), nothing
    past the bound being read; ``None`` when the client left before it ended.
    ``replay`` is the request's receive channel as it was: it gives the messages
    already read, in order, and then the live channel, so whoever gets the request next
    (a streaming response included) sees it untouched.
    """
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit() and int(value) > max_body:
            return OVER, receive
    first = await receive()
    if first["type"] == "http.request" and not first.get("more_body", False):
        # The common case, a body in one message: nothing to join.
        whole: bytes = first.get("body", b"")
        pending = [first]

        async def replay_one() -> Message:
            return pending.pop() if pending else await receive()

        return (whole if len(whole) <= max_body else OVER), replay_one
    read: list[Message] = []
    size = 0
    body: bytes | None = None
    message = first
    while True:
        read.append(message)
        if message["type"] != "http.request":  # http.disconnect: the client left
            break
        size += len(message.get("body", b""))
        if size > max_body:
            body = OVER
            break
        if not message.get("more_body", False):
            body = b"".join(m.get("body", b"") for m in read)
            break
        message = await receive()
    read.reverse()

    async def replay() -> Message:
        return read.pop() if read else await receive()

    return body, replay
