"""The honest test agent, and the small mutations that turn it into the rogue zoo.

``honest(origin)`` is the Stonework reference agent built straight on the core: the
card signed with the test key (``jku`` on its own origin), the JWKS, the two standing
proposals, and the interview on both bindings through ``rpc.jsonrpc``/``rpc.rest``.
Anything ``rpc`` leaves alone gets what a host gives an unknown method (``-32601``) or
route (404).

A rogue is the honest agent plus one mutation: either its declarations are edited
before it is built (``edit_card``, ``tamper``, ``edit_proposal``), or it is wrapped in
:class:`Wrap`, an ASGI layer that may answer a request itself or rewrite the reply
(``rewrite_results`` rewrites interview results as parsed JSON).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from a2a_interview import reference
from a2a_interview.card import load_private_key, sign_card
from a2a_interview.declarations import build
from a2a_interview.jcs import canonicalize
from a2a_interview.projection import CommittedProposal, Interview
from a2a_interview.rpc import activation, jsonrpc, rest, rpc_error
from a2a_interview.spec import CARD_PATH, METHOD_PREFIX, RPC_INVALID_PARAMS, RPC_METHOD_NOT_FOUND
from a2a_interview.strictjson import loads
from a2a_interview.terms import read_terms_entries

JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
CardEdit = Callable[[dict[str, Any]], dict[str, Any]]


def sign(card: dict[str, Any], origin: str) -> dict[str, Any]:
    """Sign ``card`` as the reference agent does (EdDSA, test key, same-origin jku)."""
    key = load_private_key(reference.read_bytes("TEST-ONLY-card-key.jwk.json"))
    return sign_card(
        card, key, kid=reference.CARD_KID, alg="EdDSA", jku=origin + reference.JWKS_PATH
    )


def _interview(card: dict[str, Any], files: dict[str, bytes], self_check: bool) -> Interview:
    if self_check:  # the honest path: PROFILE §2.4 self-check, as a server does
        return build(card, files).interview
    # A rogue serves whatever it holds, verified or not.
    committed = [
        CommittedProposal(entry, loads(files[entry.url]))  # type: ignore[arg-type]
        for entry in read_terms_entries(card)
        if entry.url in files
    ]
    return Interview(card, committed)


@dataclass
class Agent:
    """The parts of a served agent a test may want to look at."""

    origin: str
    card: dict[str, Any]
    interview: Interview
    files: dict[str, bytes]
    app: Starlette = field(init=False)
    hits: Counter[str] = field(default_factory=Counter)
    # More public JWKs the agent's JWKS lists beside its own (PROFILE §8: listed keys).
    listed_keys: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.app = Starlette(
            routes=[
                Route(CARD_PATH, self._card),
                Route(reference.JWKS_PATH, self._jwks),
                Route("/terms/{name}", self._proposal),
                Route(JSONRPC_PATH, self._jsonrpc, methods=["POST"]),
                Route(REST_PATH + "/interview/{question:path}", self._rest),
            ]
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)

    async def _card(self, _: Request) -> Response:
        self.hits["card"] += 1
        # Pretty-printed on the wire: only the JCS form counts (PROFILE §1.2).
        return Response(json.dumps(self.card, indent=2, ensure_ascii=False),
                        media_type="application/json")  # fmt: skip

    async def _jwks(self, _: Request) -> Response:
        jwks = reference.jwks()
        jwks["keys"] = [*jwks["keys"], *self.listed_keys]  # type: ignore[misc]
        return Response(canonicalize(jwks), media_type="application/json")

    async def _proposal(self, request: Request) -> Response:
        body = self.files.get(str(request.url).split("?")[0])
        if body is None:
            return Response(status_code=404)
        return Response(body, media_type="application/json")

    async def _jsonrpc(self, request: Request) -> Response:
        body = await request.body()
        reply = jsonrpc(body, activation(request.headers.raw), self.interview)
        if reply is None:  # what the host gives any method it does not have
            try:
                request_id = loads(body).get("id")  # type: ignore[union-attr]
            except Exception:
                request_id = None
            return Response(rpc_error(request_id, RPC_METHOD_NOT_FOUND),
                            media_type="application/json")  # fmt: skip
        return Response(reply.body, reply.status, dict(reply.headers))

    async def _rest(self, request: Request) -> Response:
        reply = rest(
            request.method,
            request.path_params["question"],
            request.scope["query_string"],
            activation(request.headers.raw),
            self.interview,
        )
        if reply is None:
            return Response(b'{"error":"not found"}', 404, media_type="application/json")
        return Response(reply.body, reply.status, dict(reply.headers))


def honest(
    origin: str,
    *,
    edit_card: CardEdit | None = None,
    tamper: CardEdit | None = None,
    edit_proposal: Callable[[str, bytes], bytes] | None = None,
    proposals: dict[str, bytes] | None = None,
    signed: bool = True,
    self_check: bool = True,
) -> Agent:
    """The reference agent at ``origin``, optionally with its declarations edited.

    ``edit_card`` edits the card before it is signed (the agent answers from the edited
    card); ``tamper`` edits it after signing (the signature no longer holds);
    ``edit_proposal(url, bytes)`` changes a served proposal (the agent still answers
    from the bytes it was built with); ``proposals`` replaces the proposal files (by
    url) the agent is built with and serves.
    """
    card = reference.unsigned_card(origin)
    for interface in card["supportedInterfaces"]:  # type: ignore[union-attr]
        path = JSONRPC_PATH if interface["protocolBinding"] == "JSONRPC" else REST_PATH
        interface["url"] = origin + path
    if edit_card is not None:
        card = edit_card(card)
    if signed:
        card = sign(card, origin)
    if tamper is not None:
        card = tamper(card)
    files = proposals if proposals is not None else reference.proposals(origin)
    interview = _interview(card, files, self_check)
    if edit_proposal is not None:
        files = {url: edit_proposal(url, body) for url, body in files.items()}
    return Agent(origin, card, interview, files)


# ---------------------------------------------------------------------------------------
# Wrapping


@dataclass
class Call:
    """An incoming request as a mutation sees it."""

    method: str
    path: str
    query: str
    headers: list[tuple[bytes, bytes]]
    body: bytes
    question: str | None = None  # the interview question, for an interview call
    skill: str | None = None
    binding: str | None = None
    n: int = 0  # how many times this (binding, question, skill) was asked before
    cards: int = 0  # how many times the card was fetched before this request

    @property
    def activated(self) -> bool:
        return bool(activation(self.headers))


@dataclass
class Reply:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


OnRequest = Callable[[Call], Reply | None]
OnReply = Callable[[Call, Reply], Reply]


class Wrap:
    """ASGI middleware around an agent: ``on_request`` may answer first (a 429, a 401)
    or edit the request headers in place; ``on_reply`` may rewrite the reply."""

    def __init__(
        self, app: Any, on_request: OnRequest | None = None, on_reply: OnReply | None = None
    ) -> None:
        self.app = app
        self.on_request = on_request
        self.on_reply = on_reply
        self.seen: Counter[tuple[Any, ...]] = Counter()
        self.cards = 0

    def _describe(self, call: Call) -> None:
        if call.path.endswith(CARD_PATH):
            return
        if call.method == "POST" and call.path == JSONRPC_PATH:
            try:
                request = loads(call.body)
            except Exception:
                return
            method = request.get("method") if isinstance(request, dict) else None
            if isinstance(method, str) and method.startswith(METHOD_PREFIX):
                params = request.get("params") or {}
                call.question = method[len(METHOD_PREFIX) :]
                skill = params.get("skill") if isinstance(params, dict) else None
                call.skill = skill if isinstance(skill, str) else None  # a selector is a string
                call.binding = "JSONRPC"
        elif call.path.startswith(REST_PATH + "/interview/"):
            call.question = unquote(call.path[len(REST_PATH + "/interview/") :])
            call.skill = dict(parse_qsl(call.query)).get("skill")
            call.binding = "HTTP+JSON"
        if call.question is not None:
            key = (call.binding, call.question, call.skill, call.activated)
            call.n = self.seen[key]
            self.seen[key] += 1

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        call = Call(scope["method"], scope["path"], scope["query_string"].decode("latin-1"),
                    list(scope["headers"]), body, cards=self.cards)  # fmt: skip
        if call.path.endswith(CARD_PATH):
            self.cards += 1
        self._describe(call)
        reply = self.on_request(call) if self.on_request else None
        if reply is None:
            reply = await _inner(self.app, {**scope, "headers": call.headers}, body)
            if self.on_reply is not None:
                reply = self.on_reply(call, reply)
        headers = [(n, v) for n, v in reply.headers if n.lower() != b"content-length"]
        headers.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": reply.body})


async def _inner(app: Any, scope: Any, body: bytes) -> Reply:
    sent = False
    parts: dict[str, Any] = {"status": 500, "headers": [], "body": b""}

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            parts["status"] = message["status"]
            parts["headers"] = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            parts["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return Reply(parts["status"], parts["headers"], parts["body"])


def params_first(app: Any, *, always: bool = False) -> Wrap:
    """The host's own JSON-RPC dispatch as @a2a-js/sdk has it: params are checked before
    the method name, so a call without ``params`` gets ``-32602`` and one with ``{}`` the
    ``-32601`` any unknown method gets (D-VERIFY-34). ``always``: ``-32602`` even
    with ``{}`` (a host stricter still). Activated interview calls are answered in front
    of the host, as the middleware or the proxy does."""

    def on_request(call: Call) -> Reply | None:
        if call.binding != "JSONRPC" or call.activated:
            return None
        request = loads(call.body)
        assert isinstance(request, dict)
        if always or not isinstance(request.get("params"), dict):
            body = rpc_error(request.get("id"), RPC_INVALID_PARAMS)  # type: ignore[arg-type]
            return Reply(200, [(b"content-type", b"application/json")], body)
        return None

    return Wrap(app, on_request=on_request)


ResultEdit = Callable[[Call, Any], Any]


def rewrite_results(app: Any, edit: ResultEdit) -> Wrap:
    """Rewrite every activated interview result (answer or refusal, parsed JSON)
    through ``edit(call, result) -> result``; the reply is re-serialized in JCS form."""

    def on_reply(call: Call, reply: Reply) -> Reply:
        if call.question is None or not call.activated or reply.status != 200:
            return reply
        document = loads(reply.body)
        if call.binding == "JSONRPC":
            if not isinstance(document, dict) or "result" not in document:
                return reply
            document["result"] = edit(call, document["result"])
        else:
            document = edit(call, document)
        return Reply(reply.status, reply.headers, canonicalize(document))

    return Wrap(app, on_reply=on_reply)


# ---------------------------------------------------------------------------------------
# Hostile agents below HTTP: raw sockets, for what an ASGI app cannot do (headers that
# never finish, a body that never ends, bytes no framework would send).

RawHandler = Callable[[socket.socket, threading.Event], None]
HOSTILE_LIFETIME = 10.0  # no hostile connection outlives this, whatever the client does


def read_request(conn: socket.socket) -> bytes:
    """The request head (bounded to 64 KiB); its target is the second word."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            break
        head += chunk
    return head


def target_of(head: bytes) -> str:
    parts = head.split(b" ", 2)
    return parts[1].decode("latin-1") if len(parts) > 1 else "/"


def answer(
    status: int, headers: list[tuple[str, str]], body: bytes, *, length: bool = True
) -> RawHandler:
    """A handler that answers every request with these bytes and closes."""

    def handler(conn: socket.socket, stop: threading.Event) -> None:
        read_request(conn)
        lines = [f"HTTP/1.1 {status} X", *(f"{n}: {v}" for n, v in headers)]
        if length:
            lines.append(f"Content-Length: {len(body)}")
        lines.append("Connection: close")
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    return handler


def drip(head: bytes, piece: bytes, every: float) -> RawHandler:
    """Send ``head``, then ``piece`` every ``every`` seconds until the client leaves,
    the server stops, or ``HOSTILE_LIFETIME`` passes."""

    def handler(conn: socket.socket, stop: threading.Event) -> None:
        read_request(conn)
        conn.sendall(head)
        deadline = time.monotonic() + HOSTILE_LIFETIME
        while not stop.wait(every) and time.monotonic() < deadline:
            conn.sendall(piece)

    return handler


def flood(head: bytes, piece: bytes, limit: int = 1 << 30) -> RawHandler:
    """Send ``head``, then ``piece`` as fast as the client reads, up to ``limit`` bytes
    (or until it leaves, the server stops, or ``HOSTILE_LIFETIME`` passes)."""

    def handler(conn: socket.socket, stop: threading.Event) -> None:
        read_request(conn)
        conn.sendall(head)
        sent, deadline = 0, time.monotonic() + HOSTILE_LIFETIME
        while sent < limit and not stop.is_set() and time.monotonic() < deadline:
            conn.sendall(piece)
            sent += len(piece)

    return handler


@contextlib.contextmanager
def raw_server(handler: RawHandler) -> Iterator[str]:
    """Serve ``handler`` (one thread per connection) on a free loopback port; yields the
    origin. Every connection is closed when the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.settimeout(0.05)
    stop = threading.Event()
    conns: list[socket.socket] = []
    threads: list[threading.Thread] = []

    def serve_one(conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            handler(conn, stop)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(HOSTILE_LIFETIME)
            conns.append(conn)
            thread = threading.Thread(target=serve_one, args=(conn,), daemon=True)
            threads.append(thread)
            thread.start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        acceptor.join(2)
        sock.close()
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(2)


def liar(origin: str) -> Any:
    """An agent whose identity answer claims another version than its card: a persistent
    ``projection`` conflict (non_conformant)."""

    def edit(call: Call, result: Any) -> Any:
        if call.question == "identity":
            for projection in result["projections"]:
                if projection["source"]["member"] == "/version":
                    projection["value"] = "9.9.9"
        return result

    return rewrite_results(honest(origin), edit)
