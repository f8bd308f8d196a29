"""The interview as an ASGI layer in front of any ASGI application.

    app = InterviewMiddleware(app, declarations)

JSON-RPC calls (PROFILE §3) are answered at the path of every ``JSONRPC`` interface the
card declares, HTTP+JSON calls (§3b) under every ``HTTP+JSON`` interface, and the card
itself at ``/.well-known/agent-card.json`` from the same precomputed bytes the answers
are projected from. Everything else, and every interview call without activation, goes
to the wrapped app byte for byte, streaming included. The layer holds no model and
calls none: a request it answers never reaches the wrapped app.

Register it *inside* any authentication middleware (``Starlette(middleware=[auth,
Middleware(InterviewMiddleware, ...)])``) so that interview calls are authenticated
exactly like the agent's own methods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from .. import rpc
from ..declarations import Declarations, interfaces
from ..projection import Interview
from ..spec import CARD_PATH
from .lifecycle import LiveDeclarations

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ClientKey = Callable[[Scope], str]

_INTERVIEW = rpc.REST_SEGMENT.encode()


def remote_address(scope: Scope) -> str:
    """The default client key: the peer's address (PROFILE §3.7)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


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

    __slots__ = ("interview", "rest", "rpc")

    def __init__(self, interview: Interview, rpc_paths: Any, rest_paths: Any) -> None:
        card = interview.card
        self.interview = interview
        self.rpc = frozenset(
            rpc_paths if rpc_paths is not None else interface_paths(card, "JSONRPC")
        )
        bases = rest_paths if rest_paths is not None else interface_paths(card, "HTTP+JSON")
        self.rest = tuple((b.rstrip("/") + rpc.REST_SEGMENT) for b in bases)


def if_none_match(header: bytes, etag: bytes) -> bool:
    """Whether an ``If-None-Match`` value matches ``etag``: weak comparison, ``*``
    included (RFC 9110 §13.1.2)."""
    candidates = [c.strip() for c in header.split(b",")]
    opaque = etag.removeprefix(b"W/")  # weak comparison: either tag may be weak
    return b"*" in candidates or any(c.removeprefix(b"W/") == opaque for c in candidates)


async def send_reply(send: Send, reply: rpc.Reply) -> None:
    """Send a complete reply."""
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers]
    headers.append((b"content-length", str(len(reply.body)).encode()))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


async def send_document(
    scope: Scope,
    send: Send,
    body: bytes,
    etag: bytes,
    cache_control: bytes,
    *,
    content_type: bytes = b"application/json",
) -> None:
    """Answer a GET or HEAD for a document held as bytes: ``304`` when the request's
    ``If-None-Match`` matches ``etag`` (weak comparison), else ``200`` with the body."""
    headers = [(b"etag", etag), (b"cache-control", cache_control)]
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
        self.max_body = max_body
        self.cache_control = cache_control.encode("latin-1")
        self._overrides = (rpc_paths, rest_paths)
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        routes = self._current()
        method, path = scope["method"], scope["path"]
        stripped = path.rstrip("/") or "/"
        if method == "POST" and stripped in routes.rpc:
            await self._jsonrpc(scope, receive, send, routes.interview)
        elif method in ("GET", "HEAD") and path == self.card_path and self.serve_card:
            await self._card(scope, send, routes.interview)
        elif _INTERVIEW in (scope.get("raw_path") or b"") or rpc.REST_SEGMENT in path:
            await self._rest(scope, receive, send, routes)
        else:
            await self.app(scope, receive, send)

    async def _respond(self, scope: Scope, send: Send, reply: rpc.Reply, act: rpc.Activation,
                       rest: bool = False) -> None:  # fmt: skip
        if self.limiter is not None:
            wait = await self.limiter.hit(self.client_key(scope))
            if wait is not None:
                reply = rpc.too_many_requests(wait, reply, act, rest=rest)
        await send_reply(send, reply)

    async def _jsonrpc(self, scope: Scope, receive: Receive, send: Send, iv: Interview) -> None:
        body, replay = await self._buffer(scope, receive)
        if body is None:  # too large to be an interview call, or the client left
            if replay is not None:
                await self.app(scope, replay, send)
            return
        act = rpc.activation(scope["headers"])
        reply = rpc.jsonrpc(body, act, iv, max_bytes=self.max_body)
        if reply is None:
            await self.app(scope, replay, send)  # type: ignore[arg-type]
        else:
            await self._respond(scope, send, reply, act)

    async def _rest(self, scope: Scope, receive: Receive, send: Send, routes: _Routes) -> None:
        path = scope["path"]
        for base in routes.rest:
            if path.startswith(base) and "/" not in path[len(base) :]:
                act = rpc.activation(scope["headers"])
                question = path[len(base) :]
                query = scope.get("query_string", b"")
                reply = rpc.rest(scope["method"], question, query, act, routes.interview)
                if reply is not None:
                    await self._respond(scope, send, reply, act, rest=True)
                    return
                break
        await self.app(scope, receive, send)

    async def _card(self, scope: Scope, send: Send, iv: Interview) -> None:
        etag = b'"' + iv.card_digest[7:39].encode() + b'"'
        await send_document(scope, send, iv.card_bytes, etag, self.cache_control)

    async def _buffer(self, scope: Scope, receive: Receive) -> tuple[bytes | None, Receive | None]:
        """Read the request body up to ``max_body``.

        Returns ``(body, replay)``; ``replay`` hands the app the same bytes and then the
        live channel (so a streaming response still sees ``http.disconnect``). A body
        over the bound gives ``(None, replay)``; a client that left gives ``(None, None)``.
        """
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self.max_body:
                return None, receive
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None, None
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            more = message.get("more_body", False)
            if size > self.max_body:
                break
        body = b"".join(chunks)
        pending = [{"type": "http.request", "body": body, "more_body": more}]

        async def replay() -> Message:
            return pending.pop() if pending else await receive()

        return (None if more or size > self.max_body else body), replay
