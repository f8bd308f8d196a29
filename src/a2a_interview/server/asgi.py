"""The interview as an ASGI layer in front of any ASGI application.

    app = InterviewMiddleware(app, declarations)

JSON-RPC calls (PROFILE §3) are answered at the path of every ``JSONRPC`` interface the
card declares, HTTP+JSON calls (§3b) under every ``HTTP+JSON`` interface, and the card
itself at ``/.well-known/agent-card.json`` from the same precomputed bytes the answers
are projected from. A request is matched against those paths after the normalization any
host or intermediary might apply (dot segments, ``//``, percent-encoded unreserved
characters: :func:`a2a_interview.rpc.normalize_path`, PROFILE §3.9), so no spelling of an
interview call gets past it. Everything else, and every interview call without
activation, goes to the wrapped app byte for byte, streaming included. The layer holds no
model and calls none: a request it answers never reaches the wrapped app.

Register it *inside* any authentication middleware (``Starlette(middleware=[auth,
Middleware(InterviewMiddleware, ...)])``) so that interview calls are authenticated
exactly like the agent's own methods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import unquote, urlsplit

from .. import rpc
from ..declarations import Declarations, interfaces
from ..projection import Interview
from ..spec import CARD_PATH, INTERVIEW_URI
from .lifecycle import LiveDeclarations

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ClientKey = Callable[[Scope], str]


def remote_address(scope: Scope) -> str:
    """The default client key: the peer's address (PROFILE §3.7)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def request_paths(scope: Scope) -> tuple[str, ...]:
    """The request's path as PROFILE §3.9 reads it, in each form a host may take it to
    mean: ``raw_path`` (the bytes received, still percent-encoded) normalized by
    :func:`a2a_interview.rpc.normalize_path`, so ``/a2a/x/../jsonrpc``, ``/a2a//jsonrpc``
    and ``/a2a/%6asonrpc`` are all ``/a2a/jsonrpc``; and, when it differs, the decoded
    ``path`` normalized too, since hosts such as Starlette route on the decoded path
    (``/a2a%2Fjsonrpc`` is their ``/a2a/jsonrpc``). Without ``raw_path`` (it is optional
    in ASGI) the decoded ``path`` alone. Never raises."""
    raw = scope.get("raw_path")
    decoded = scope.get("path")
    if not isinstance(raw, bytes):
        return (rpc.normalize_path(decoded if isinstance(decoded, str) else "/"),)
    # The common case costs four scans: nothing to decode, collapse or remove.
    if b"%" not in raw and b"/." not in raw and b"//" not in raw and raw[-1:] != b"/":
        return (raw.decode("latin-1") if raw.startswith(b"/") else rpc.normalize_path(raw),)
    first = rpc.normalize_path(raw)
    if b"%" in raw and isinstance(decoded, str):
        second = rpc.normalize_path(decoded)
        if second != first:
            return (first, second)
    return (first,)


def request_path(scope: Scope) -> str:
    """The first of :func:`request_paths`: the normalized raw path."""
    return request_paths(scope)[0]


_ACTIVATION_HEADERS = frozenset({b"a2a-extensions", b"x-a2a-extensions"})
_URI = INTERVIEW_URI.encode()
_ONLY_CURRENT = rpc.Activation(current=True)


def activation(scope: Scope) -> rpc.Activation:
    """:func:`a2a_interview.rpc.activation` of the request's headers (PROFILE §3.2),
    reading only the two fields that can activate."""
    found = [(n, v) for n, v in scope["headers"] if n.lower() in _ACTIVATION_HEADERS]
    if not found:
        return rpc.NOT_ACTIVATED
    if len(found) == 1 and found[0][1] == _URI and found[0][0].lower() == b"a2a-extensions":
        return _ONLY_CURRENT  # the usual request: one field, the URI alone
    return rpc.activation(found)


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

    def jsonrpc(self, body: bytes, act: rpc.Activation) -> rpc.Reply | None:
        """What ``rpc.jsonrpc(body, act, interview)`` returns."""
        if len(body) > 1024:
            return rpc.jsonrpc(body, act, self.interview, max_bytes=self.max_body)
        key = (body, act.current, act.legacy)
        try:
            return self._memo[key]
        except KeyError:
            pass
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


class _Routes:
    """The paths an interview answers on, derived once per card."""

    __slots__ = ("interview", "replies", "rest", "rpc")

    def __init__(
        self, interview: Interview, rpc_paths: Any, rest_paths: Any, max_body: int
    ) -> None:
        card = interview.card
        self.interview = interview
        self.replies = Replies(interview, max_body)
        # Normalized like request paths (PROFILE §3.9), so the two compare.
        paths = rpc_paths if rpc_paths is not None else interface_paths(card, "JSONRPC")
        self.rpc = frozenset(rpc.normalize_path(p) for p in paths)
        bases = rest_paths if rest_paths is not None else interface_paths(card, "HTTP+JSON")
        self.rest = rest_prefixes(bases)


def rest_prefixes(bases: Any) -> tuple[str, ...]:
    """``{base}/interview/`` for each HTTP+JSON base path, normalized (PROFILE §3.9)."""
    out = (rpc.normalize_path(b).rstrip("/") + rpc.REST_SEGMENT for b in bases)
    return tuple(dict.fromkeys(out))


def rest_question(prefixes: tuple[str, ...], paths: tuple[str, ...]) -> str | None:
    """The question the first of the normalized ``paths`` that is
    ``{base}/interview/{question}`` under one of ``prefixes`` asks (one segment,
    percent-decoded), or ``None`` when none is."""
    for path in paths:
        for prefix in prefixes:
            if path.startswith(prefix):
                rest = path[len(prefix) :]
                if "/" not in rest:
                    return unquote(rest, errors="surrogateescape")
    return None


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


async def send_document(
    scope: Scope,
    send: Send,
    body: bytes,
    etag: bytes,
    cache_control: bytes | None,
    *,
    content_type: bytes = b"application/json",
) -> None:
    """Answer a GET or HEAD for a document held as bytes: ``304`` when the request's
    ``If-None-Match`` matches ``etag`` (weak comparison), else ``200`` with the body.
    ``Cache-Control`` is sent when ``cache_control`` is not ``None``."""
    headers = [(b"etag", etag)]
    if cache_control is not None:
        headers.append((b"cache-control", cache_control))
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
        max_body: int = rpc.MAX_REQUEST_BYTES,
        cache_control: str = "public, max-age=60",
    ) -> None:
        self.app = app
        if isinstance(declarations, Declarations):
            declarations = declarations.interview
        self._source = declarations
        self.limiter = limiter
        self.client_key = client_key
        self.serve_card = serve_card
        self.card_path = card_path
        self._card_path = rpc.normalize_path(card_path)
        self.max_body = max_body
        self.cache_control = cache_control.encode("latin-1")
        self._overrides = (rpc_paths, rest_paths)
        self._routes = _Routes(self.interview, *self._overrides, max_body)

    @property
    def interview(self) -> Interview:
        source = self._source
        return source.interview if isinstance(source, LiveDeclarations) else source

    def _current(self) -> _Routes:
        interview = self.interview
        if self._routes.interview is not interview:  # a reload swapped the declarations
            self._routes = _Routes(interview, *self._overrides, self.max_body)
        return self._routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        routes = self._current()
        method = scope["method"]
        paths = request_paths(scope)  # every spelling is the same request (PROFILE §3.9)
        if method == "POST" and not routes.rpc.isdisjoint(paths):
            await self._jsonrpc(scope, receive, send, routes.replies)
        elif method in ("GET", "HEAD") and self._card_path in paths and self.serve_card:
            await self._card(scope, send, routes.interview)
        elif any(rpc.REST_SEGMENT in path for path in paths):
            await self._rest(scope, receive, send, routes, paths)
        else:
            await self.app(scope, receive, send)

    async def _respond(self, scope: Scope, send: Send, reply: rpc.Reply, act: rpc.Activation,
                       rest: bool = False) -> None:  # fmt: skip
        if self.limiter is not None:
            wait = await self.limiter.hit(self.client_key(scope))
            if wait is not None:
                reply = rpc.too_many_requests(wait, reply, act, rest=rest)
        await send_reply(send, reply)

    async def _jsonrpc(self, scope: Scope, receive: Receive, send: Send, replies: Replies) -> None:
        body, replay = await read_body(scope, receive, self.max_body)
        act = activation(scope)
        # A body over the bound, or cut short by a departing client, is not ours: the app
        # gets the request as it came, and its own answer to a departed client.
        reply = None if body is None else replies.jsonrpc(body, act)
        if reply is None:
            await self.app(scope, replay, send)
        else:
            await self._respond(scope, send, reply, act)

    async def _rest(
        self, scope: Scope, receive: Receive, send: Send, routes: _Routes, paths: tuple[str, ...]
    ) -> None:
        question = rest_question(routes.rest, paths)
        if question is not None:
            act = activation(scope)
            query = scope.get("query_string", b"")
            reply = rpc.rest(scope["method"], question, query, act, routes.interview)
            if reply is not None:
                await self._respond(scope, send, reply, act, rest=True)
                return
        await self.app(scope, receive, send)

    async def _card(self, scope: Scope, send: Send, iv: Interview) -> None:
        etag = b'"' + iv.card_digest[7:39].encode() + b'"'
        await send_document(scope, send, iv.card_bytes, etag, self.cache_control)


async def read_body(scope: Scope, receive: Receive, max_body: int) -> tuple[bytes | None, Receive]:
    """Read a request body, holding at most about ``max_body`` bytes.

    Returns ``(body, replay)``. ``body`` is the whole body, or ``None`` when it is over
    ``max_body`` (by ``Content-Length`` or as read) or the client left before it ended:
    such a request cannot be an interview call (PROFILE §3.5 bounds it at 64 KiB), and
    nothing past the bound is read. ``replay`` is the request's receive channel as it
    was: it gives the messages already read, in order, and then the live channel, so
    whoever gets the request next (a streaming response included) sees it untouched.
    """
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit() and int(value) > max_body:
            return None, receive
    first = await receive()
    if first["type"] == "http.request" and not first.get("more_body", False):
        # The common case, a body in one message: nothing to join.
        whole: bytes = first.get("body", b"")
        pending = [first]

        async def replay_one() -> Message:
            return pending.pop() if pending else await receive()

        return (whole if len(whole) <= max_body else None), replay_one
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
            break
        if not message.get("more_body", False):
            body = b"".join(m.get("body", b"") for m in read)
            break
        message = await receive()
    read.reverse()

    async def replay() -> Message:
        return read.pop() if read else await receive()

    return body, replay
