"""The interview on an ``a2a-sdk`` 1.x application (Starlette or FastAPI).

One call turns the SDK's own route lists into routes that also serve the interview::

    from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
    from a2a_interview.server.sdk import interview_routes

    routes = interview_routes(
        agent_card,
        jsonrpc_routes=create_jsonrpc_routes(handler, rpc_url="/a2a/jsonrpc"),
        rest_routes=create_rest_routes(handler, path_prefix="/a2a/rest"),
        proposals={url: body, ...},  # or a callable url -> bytes | None
    )
    app = Starlette(routes=routes, middleware=[...])  # or, with FastAPI:
    add_a2a_routes_to_fastapi(app, **routes.fastapi())

What the routes do:

- **The card.** ``agent_card`` is served at ``card_url`` from precomputed RFC 8785 bytes
  of :func:`agent_card_to_dict` (the card exactly as the SDK serves it, 0.3
  compatibility members included, PROFILE §2.1). Every answer is projected from that
  same object, so the card and the answers cannot drift. It replaces the route of
  ``create_agent_card_routes``; do not add both.
- **JSON-RPC** (PROFILE §3). Each route of ``jsonrpc_routes`` is wrapped: an activated
  call in the ``interview/`` namespace is answered here (:func:`a2a_interview.rpc.jsonrpc`);
  every other request reaches the SDK's endpoint with its body untouched, so ``-32601``
  for an interview method without activation, ``-32700`` and everything else stay the
  SDK's own answers.
- **HTTP+JSON** (PROFILE §3b). ``GET {url}/interview/{question}`` for every
  ``HTTP+JSON`` interface the card declares. These routes match only activated GET
  requests; anything else falls through to the routes after them, so a request without
  activation gets the host's own 404. They are placed before ``rest_routes``, whose
  ``Mount('/{tenant}')`` would swallow them otherwise.

Being routes, they run inside the application's middleware: authentication, CORS and the
like apply to interview calls exactly as to the agent's own methods. Interview calls never
reach the request handler, the executor or the task store (PROFILE §3.8).

Requires the ``sdk`` extra (``pip install 'a2a-interview[sdk]'``). This is the only module
of the package that imports ``a2a``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol, overload

try:
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.types import AgentCard, AgentExtension
    from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
    from google.protobuf.json_format import ParseDict
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute, Match, NoMatchFound, Route
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the a2a-sdk integration needs the 'sdk' extra: pip install 'a2a-interview[sdk]'"
    ) from exc

from .. import rpc
from ..declarations import Declarations, Fetch, build
from ..projection import Interview
from ..spec import INTERVIEW_URI
from .asgi import (
    ClientKey,
    Receive,
    Scope,
    Send,
    if_none_match,
    interface_paths,
    remote_address,
)

if TYPE_CHECKING:
    from starlette.datastructures import URLPath

    from ..cardsig import PrivateKey

__all__ = [
    "DESCRIPTION",
    "InterviewRoutes",
    "Limiter",
    "agent_card_from_json",
    "agent_extension",
    "interview_routes",
    "served_card",
    "sign_agent_card",
]

# interview §3: the declaration's example description.
DESCRIPTION: Final = "The five questions, answered from declared documents"


class Limiter(Protocol):
    """What the routes need from a rate limiter
    (:class:`~a2a_interview.server.ratelimit.RateLimiter` fits)."""

    async def hit(self, client: str) -> int | None: ...


def agent_extension(description: str = DESCRIPTION) -> AgentExtension:
    """The card's ``AgentExtension`` declaring the interview (interview §3).

    ``required`` is always false (interview §3 rule 1): the interview is offered, never
    imposed. Append it to ``AgentCapabilities.extensions``.
    """
    return AgentExtension(uri=INTERVIEW_URI, description=description, required=False)


def agent_card_from_json(card: Mapping[str, Any]) -> AgentCard:
    """An ``AgentCard`` from its JSON form (camelCase members, as a card is published).

    Raises ``google.protobuf.json_format.ParseError`` for a member the A2A 1.0 card does
    not define or a value of the wrong type; nothing is silently dropped.
    """
    parsed: AgentCard = ParseDict(card, AgentCard())
    return parsed


def served_card(agent_card: AgentCard) -> dict[str, Any]:
    """The card exactly as the SDK serves it (``agent_card_to_dict``): the 1.0 members,
    plus the 0.3 compatibility members the SDK merges in when the card lists a 0.3
    interface. This object is what every answer is projected from (PROFILE §2.1)."""
    return agent_card_to_dict(agent_card)


def sign_agent_card(
    agent_card: AgentCard,
    key: PrivateKey,
    *,
    kid: str,
    alg: str | None = None,
    jku: str | None = None,
) -> AgentCard:
    """A copy of ``agent_card`` with one more signature, over the card as served.

    The payload is RFC 8785 of :func:`served_card` without ``signatures`` (the ``served``
    reading, PROFILE §6.3), so the signature covers every member the SDK serves, the 0.3
    compatibility members included. The result is checked before it is returned: served
    again, it must carry exactly the signed members and verify under ``served``.

    Raises what :func:`a2a_interview.cardsig.sign_card` raises (``AlgorithmRefused``,
    ``SignatureError``, ``KeyFormatError``, ``CanonicalizationError``), and
    ``SignatureError`` when the SDK would serve the signed card differently from what was
    signed (the signature would not verify).
    """
    from ..cardsig import public_jwk, sign_card, verify_card
    from ..errors import SignatureError

    signed = sign_card(served_card(agent_card), key, kid=kid, alg=alg, jku=jku)
    out = AgentCard()
    out.CopyFrom(agent_card)
    item = signed["signatures"][-1]
    out.signatures.add(protected=item["protected"], signature=item["signature"])
    served = served_card(out)
    report = verify_card(served, [public_jwk(key, kid, alg)], readings=("served",))
    if served != signed or report.status != "verified":
        raise SignatureError("the card as served differs from the card as signed")
    return out


def _route_path(scope: Scope) -> str:
    # Starlette's routing path: the path below the application's root_path.
    path: str = scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) :].startswith("/"):
        return path[len(root) :]
    return path


@dataclass(slots=True)
class _Serving:
    """What every interview route shares: the answers, the limiter, the client key."""

    interview: Interview
    limiter: Limiter | None
    client_key: ClientKey
    max_body: int

    async def response(
        self, scope: Scope, reply: rpc.Reply, act: rpc.Activation, *, rest: bool = False
    ) -> Response:
        if self.limiter is not None:
            wait = await self.limiter.hit(self.client_key(scope))
            if wait is not None:  # PROFILE §3.7
                reply = rpc.too_many_requests(wait, reply, act, rest=rest)
        return _ReplyResponse(reply)


class _ReplyResponse(Response):
    """A complete reply as a Starlette response, its headers already rendered: the
    reply's bytes are final, so Response's media-type and header logic has nothing to
    add (and costs microseconds on every answer)."""

    def __init__(self, reply: rpc.Reply) -> None:  # no super().__init__: see above
        self.status_code = reply.status
        self.body = reply.body
        self.background = None
        self.raw_headers = [
            *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers),
            (b"content-length", str(len(reply.body)).encode()),
        ]


class _InterviewRestRoute(BaseRoute):
    """``GET {base}/interview/{question}`` under activation (PROFILE §3b).

    Matches only an activated GET whose path is one of the bases plus one segment; any
    other request does not match and goes on to the host's routes (its own 404).
    """

    def __init__(self, bases: Sequence[str], serving: _Serving) -> None:
        self.prefixes = tuple(b + rpc.REST_SEGMENT for b in bases)
        self.serving = serving

    def _question(self, scope: Scope) -> str | None:
        path = _route_path(scope)
        for prefix in self.prefixes:
            if path.startswith(prefix) and "/" not in path[len(prefix) :]:
                return path[len(prefix) :]
        return None

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if (
            scope["type"] == "http"
            and scope["method"] == "GET"
            and self._question(scope) is not None
            and rpc.activation(scope["headers"])
        ):
            return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        act = rpc.activation(scope["headers"])
        question = self._question(scope) or ""
        query = scope.get("query_string", b"")
        reply = rpc.rest(scope["method"], question, query, act, self.serving.interview)
        if reply is None:  # pragma: no cover - matches() admits only activated GETs
            raise AssertionError("unreachable")
        response = await self.serving.response(scope, reply, act, rest=True)
        await response(scope, receive, send)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(prefixes={list(self.prefixes)!r})"


Endpoint = Callable[[Request], Awaitable[Response]]


def _wrap_jsonrpc(route: Route, serving: _Serving) -> Route:
    """The SDK's JSON-RPC route, with activated interview calls answered first."""
    sdk_endpoint: Endpoint = route.endpoint

    async def endpoint(request: Request) -> Response:
        try:
            body = await request.body()  # cached on the request: the SDK reads it again
        except ClientDisconnect:
            # The client left mid-body: nothing is ours, and the SDK has its own answer
            # to a departed client (a -32603, logged), not an unhandled exception here.
            return await sdk_endpoint(request)
        act = rpc.activation(request.headers.raw)
        reply = rpc.jsonrpc(body, act, serving.interview, max_bytes=serving.max_body)
        if reply is None:
            return await sdk_endpoint(request)
        return await serving.response(request.scope, reply, act)

    endpoint.__name__ = getattr(sdk_endpoint, "__name__", "handle_requests")
    endpoint.__doc__ = getattr(sdk_endpoint, "__doc__", None)
    return Route(
        route.path,
        endpoint,
        methods=sorted(route.methods or ("POST",)),
        name=route.name,
        include_in_schema=route.include_in_schema,
    )


@dataclass(frozen=True, slots=True)
class InterviewRoutes(Sequence[BaseRoute]):
    """The routes of an SDK app that serves the interview, in serving order.

    As a sequence it is every route, ready for ``Starlette(routes=...)``: the card, the
    JSON-RPC routes, the interview's HTTP+JSON routes, then the SDK's REST routes. The
    three groups are also kept apart for ``add_a2a_routes_to_fastapi``
    (:meth:`fastapi`). ``declarations`` is what the answers were built from.
    """

    agent_card_routes: list[BaseRoute]
    jsonrpc_routes: list[BaseRoute]
    rest_routes: list[BaseRoute]
    declarations: Declarations
    _all: list[BaseRoute] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        routes = [*self.agent_card_routes, *self.jsonrpc_routes, *self.rest_routes]
        object.__setattr__(self, "_all", routes)

    @property
    def interview(self) -> Interview:
        """Every answer, precomputed."""
        return self.declarations.interview

    def fastapi(self) -> dict[str, list[BaseRoute]]:
        """The keyword arguments of ``add_a2a_routes_to_fastapi``."""
        return {
            "agent_card_routes": self.agent_card_routes,
            "jsonrpc_routes": self.jsonrpc_routes,
            "rest_routes": self.rest_routes,
        }

    @overload
    def __getitem__(self, index: int) -> BaseRoute: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[BaseRoute]: ...
    def __getitem__(self, index: int | slice) -> BaseRoute | Sequence[BaseRoute]:
        return self._all[index]

    def __len__(self) -> int:
        return len(self._all)

    def __iter__(self) -> Iterator[BaseRoute]:
        return iter(self._all)


def _card_route(interview: Interview, card_url: str, cache_control: str | None) -> Route:
    etag = '"' + interview.card_digest[7:39] + '"'
    etag_bytes = etag.encode("ascii")
    headers = {"ETag": etag}
    if cache_control:
        headers["Cache-Control"] = cache_control
    body = interview.card_bytes

    async def agent_card(request: Request) -> Response:
        """The Agent Card, exactly the object the interview answers are projected from."""
        wanted = request.headers.get("if-none-match")
        if wanted is not None and if_none_match(wanted.encode("latin-1"), etag_bytes):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    return Route(card_url, agent_card, methods=["GET"])


def interview_routes(
    agent_card: AgentCard,
    *,
    jsonrpc_routes: Sequence[BaseRoute],
    rest_routes: Sequence[BaseRoute] = (),
    proposals: Mapping[str, bytes] | Fetch | None = None,
    limiter: Limiter | None = None,
    client_key: ClientKey = remote_address,
    card_url: str = AGENT_CARD_WELL_KNOWN_PATH,
    cache_control: str | None = None,
    rest_paths: Sequence[str] | None = None,
    max_body: int = rpc.MAX_REQUEST_BYTES,
) -> InterviewRoutes:
    """Add the interview to an ``a2a-sdk`` app's routes (see the module docstring).

    ``jsonrpc_routes`` and ``rest_routes`` are the lists ``create_jsonrpc_routes`` and
    ``create_rest_routes`` returned; the first are wrapped (every ``Route`` accepting
    POST), the second passed through after the interview's HTTP+JSON routes.
    ``proposals`` maps each proposal url the card's terms entries commit to onto its
    bytes (or is a callable ``url -> bytes | None``); they are verified once, here.
    ``limiter`` counts interview calls per ``client_key(scope)`` (the peer address by
    default); ordinary traffic is never counted. ``rest_paths`` overrides the HTTP+JSON
    base paths taken from the card's ``HTTP+JSON`` interfaces. ``cache_control`` is sent
    with the card, as ``create_agent_card_routes`` does.

    Returns :class:`InterviewRoutes`.

    Raises ``DeclarationError`` when the served card does not declare the interview,
    declares it with ``required: true``, is not a card the answers can be built from, or a
    terms entry's proposal fails verification (PROFILE §2.4: the agent must not start);
    ``CanonicalizationError`` when a card value has no RFC 8785 form (a NaN in a
    ``Struct``). Exceptions raised by a ``proposals`` callable propagate.
    """
    card = served_card(agent_card)
    fetch: Mapping[str, bytes] | Fetch = {} if proposals is None else proposals
    declarations = build(card, fetch)
    serving = _Serving(declarations.interview, limiter, client_key, max_body)

    wrapped: list[BaseRoute] = []
    for route in jsonrpc_routes:
        if isinstance(route, Route) and route.methods and "POST" in route.methods:
            wrapped.append(_wrap_jsonrpc(route, serving))
        else:
            wrapped.append(route)

    if rest_paths is None:
        bases = [p.rstrip("/") for p in interface_paths(card, "HTTP+JSON")]
    else:
        bases = [p.rstrip("/") for p in rest_paths]
    rest: list[BaseRoute] = [_InterviewRestRoute(bases, serving)] if bases else []
    rest.extend(rest_routes)

    return InterviewRoutes(
        [_card_route(declarations.interview, card_url, cache_control)],
        wrapped,
        rest,
        declarations,
    )
