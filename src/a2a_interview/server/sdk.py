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
- **JSON-RPC** (PROFILE §3). An activated POST to the path of a route of
  ``jsonrpc_routes`` is read (at most ``max_body``, 10 MiB, of it), decoded from one
  layer of gzip or deflate, and, when it is a call in the ``interview/`` namespace or a
  batch naming one, answered or refused here (:func:`a2a_interview.rpc.jsonrpc`); an
  activated body that cannot be judged (past the bound, another coding) is refused
  (PROFILE §3.9); an answer under an ``A2A-Version`` the card's interfaces do not serve
  is the SDK's own ``-32009`` (PROFILE §3.10). Every other request reaches the SDK's own
  route with its body untouched, so ``-32601`` for an interview method without
  activation, ``-32700`` and everything else stay the SDK's own answers.
- **HTTP+JSON** (PROFILE §3b). ``GET {url}/interview/{question}`` for every
  ``HTTP+JSON`` interface the card declares, under activation; without it the request
  goes on to the host's routes (its own 404).
- **Every spelling** (PROFILE §3.9). Paths are compared without case after every
  normalization a common host applies (:func:`a2a_interview.rpc.path_segments`):
  ``/a2a/x/../jsonrpc``, ``/A2A//JsonRpc``, ``/a2a;x/%252Fjsonrpc``-style spellings
  and ``/.well-known/./AGENT-card.json`` are answered like the plain paths, never
  handed to the SDK's handler.

All of this is one route, the first of :attr:`InterviewRoutes.agent_card_routes`, which
matches only those requests (an activated POST or GET at an interview path, or a GET of
the card) and answers them as a plain ASGI app; the SDK's JSON-RPC and REST routes are
passed through as they are. A request it reads and finds not to be its own is routed
again by the application's router, past this route, exactly as if it had not matched.

Being routes, they run inside the application's middleware: authentication, CORS and the
like apply to interview calls exactly as to the agent's own methods. Interview calls never
reach the request handler, the executor or the task store (PROFILE §3.8).

Requires the ``sdk`` extra (``pip install 'a2a-interview[sdk]'``). This is the only module
of the package that imports ``a2a``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import TYPE_CHECKING, Any, Final, Protocol, overload

try:
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.types import AgentCard, AgentExtension
    from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
    from google.protobuf.json_format import ParseDict
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute, Match, NoMatchFound, Route
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the a2a-sdk integration needs the 'sdk' extra: pip install 'a2a-interview[sdk]'"
    ) from exc

from .. import rpc
from ..declarations import Declarations, Fetch, build
from ..errors import DeclarationError
from ..projection import Interview
from ..spec import INTERVIEW_URI, MAX_JUDGED_BYTES
from .asgi import (
    CARD_CACHE_CONTROL,
    NO_INTERFACE,
    ClientKey,
    Receive,
    Replies,
    Scope,
    Send,
    activation,
    carries_interview,
    if_none_match,
    interface_paths,
    judge_jsonrpc,
    path_key,
    raw_target,
    remote_address,
    request_segments,
    rest_prefixes,
    rest_question,
    send_document,
    send_reply,
)

if TYPE_CHECKING:
    from starlette.datastructures import URLPath

    from ..card import PrivateKey, SignReading

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

    It leaves ``required`` unset (docs/decisions.md D-VERIFY-37, "The interview declaration
    omits required"): its default, false, is what interview §3 rule 1 asks (offered, never
    imposed), and ``false`` is what a 1.0 card cannot spell anyway (the SDK drops it). An
    a2a-sdk host with a 0.3 interface still serves ``"required": false`` on every
    extension: the SDK's own 0.3 compatibility members. Append it to
    ``AgentCapabilities.extensions``.
    """
    return AgentExtension(uri=INTERVIEW_URI, description=description)


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
    reading: SignReading | None = None,
) -> AgentCard:
    """A copy of ``agent_card`` with its new signature(s), over the card as served.

    Signs :func:`served_card` as :func:`a2a_interview.card.sign_card` does (PROFILE
    §6.3): under ``proto``, what ``a2a-sdk``'s and ``@a2a-js/sdk``'s verifiers check (the
    SDK's own signer signs the same bytes), and, when the card as served carries more
    (the 0.3 compatibility members an SDK host merges in, ``"required": false``), also
    under ``served``, covering every member the SDK serves; ``reading`` asks for one
    signature under one reading. The result is checked before it is returned: served
    again, it must carry exactly the signed members, and each new signature verify under
    its reading.

    Raises what :func:`a2a_interview.card.sign_card` raises (``AlgorithmRefused``,
    ``SignatureError``, ``KeyFormatError``, ``CanonicalizationError``), and
    ``SignatureError`` when the SDK would serve the signed card differently from what was
    signed (the signature would not verify).
    """
    from ..card import public_jwk, sign_card, sign_readings, verify_card
    from ..errors import SignatureError

    unsigned = served_card(agent_card)
    readings = sign_readings(unsigned, reading)
    signed = sign_card(unsigned, key, kid=kid, alg=alg, jku=jku, reading=reading)
    out = AgentCard()
    out.CopyFrom(agent_card)
    added = signed["signatures"][len(signed["signatures"]) - len(readings) :]
    for item in added:
        out.signatures.add(protected=item["protected"], signature=item["signature"])
    served = served_card(out)
    jwks = [public_jwk(key, kid, alg)]
    for item, each in zip(added, readings, strict=True):
        alone = {**served, "signatures": [item]}
        if verify_card(alone, jwks, readings=(each,)).status != "verified":
            raise SignatureError("the card as served differs from the card as signed")
    if served != signed:
        raise SignatureError("the card as served differs from the card as signed")
    return out


# Set on a request this route read and handed back to the router: it must not match again.
_PASSED: Final = "a2a_interview.passed"
# What matches() found, for handle(): the HTTP+JSON question (None: the card or JSON-RPC)
# and the activation.
_MATCHED: Final = "a2a_interview.matched"


def _route_segments(scope: Scope) -> tuple[str, ...]:
    """The request path's segments below the application's ``root_path`` (what
    Starlette routes on, PROFILE §3.9 applied): :func:`~.asgi.request_segments`."""
    segments = request_segments(scope)
    root = scope.get("root_path") or ""
    if root:
        prefix = rpc.path_key(root)
        if prefix and rpc.path_key(segments[: len(prefix)]) == prefix:
            return segments[len(prefix) :]
    return segments


@dataclass(slots=True)
class _Serving:
    """What the interview route answers with: the answers, the limiter, the client key."""

    interview: Interview
    limiter: Limiter | None
    client_key: ClientKey
    max_body: int
    replies: Replies = field(init=False)
    versions: frozenset[rpc.Version] = field(init=False)
    rest_versions: frozenset[rpc.Version] = field(init=False)

    def __post_init__(self) -> None:
        self.replies = Replies(self.interview)
        self.versions = rpc.negotiated_versions(self.interview.card)  # PROFILE §3.10
        self.rest_versions = rpc.negotiated_versions(self.interview.card, "HTTP+JSON")

    async def send(
        self, scope: Scope, send: Send, reply: rpc.Reply, act: rpc.Activation, *,
        rest: bool = False,
    ) -> None:  # fmt: skip
        if self.limiter is not None:
            wait = await self.limiter.hit(self.client_key(scope))
            if wait is not None:  # PROFILE §3.7
                reply = rpc.too_many_requests(wait, reply, act, rest=rest)
        await send_reply(send, reply)


class _InterviewRoute(BaseRoute):
    """Every interview request of an SDK app, in every spelling (PROFILE §3.9).

    Matches an activated ``POST`` whose normalized path is a JSON-RPC route's, an
    activated ``GET {base}/interview/{question}`` under an HTTP+JSON base, and a ``GET``
    or ``HEAD`` of the card; nothing else, so ordinary traffic meets one cheap check.
    It is a plain ASGI endpoint (no ``Request``, no ``Response`` objects): an answer is
    precomputed bytes, and the per-request work is reading the body and the activation.
    """

    def __init__(
        self,
        serving: _Serving,
        rpc_paths: Sequence[str],
        rest_bases: Sequence[str],
        card_url: str,
        cache_control: str | None,
        *,
        last_modified: str,
    ) -> None:
        self.serving = serving
        self.rpc = frozenset(rpc.path_key(p) for p in rpc_paths)
        self.rest = rest_prefixes(rest_bases)
        self.card_url = rpc.path_key(card_url)
        interview = serving.interview
        self.etag = b'"' + interview.card_digest[7:39].encode("ascii") + b'"'
        self.cache_control = cache_control.encode("latin-1") if cache_control else None
        self.last_modified = last_modified.encode("ascii")

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or _PASSED in scope:
            return Match.NONE, {}
        method = scope["method"]
        if method not in ("POST", "GET", "HEAD"):
            return Match.NONE, {}
        segments = _route_segments(scope)
        key = path_key(segments)
        question = None
        if method == "POST":
            ours = key in self.rpc
        elif key == self.card_url:
            return Match.FULL, {_MATCHED: (None, rpc.NOT_ACTIVATED)}
        elif method == "GET":
            raw = raw_target(scope)
            question = rest_question(self.rest, segments, raw)
            if question is None and scope.get("root_path"):
                # Under a Mount the card's HTTP+JSON URLs name the whole path, the mount's
                # prefix included (D-SERVE-26).
                question = rest_question(self.rest, request_segments(scope), raw)
            ours = question is not None
        else:
            ours = False
        if ours:
            act = activation(scope)
            if act:
                return Match.FULL, {_MATCHED: (question, act)}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        matched = scope.pop(_MATCHED, None)
        if matched is None:  # handed a request without matches(): nothing here to answer
            await _route_again(scope, receive, send)
            return
        question, act = matched
        if method != "POST":
            if question is None:  # the card
                card = self.serving.interview.card_bytes
                await send_document(scope, send, card, self.etag, self.cache_control,
                                    last_modified=self.last_modified)  # fmt: skip
                return
            query = scope.get("query_string", b"")
            reply = rpc.rest(method, question, query, act, self.serving.interview)
            if reply is None:  # pragma: no cover - matches() admits only activated GETs
                raise AssertionError("unreachable")
            versions = self.serving.rest_versions
            reply = rpc.version_refusal(scope["headers"], versions, reply, act, rest=True)
            await self.serving.send(scope, send, reply, act, rest=True)
            return
        serving = self.serving
        reply, replay = await judge_jsonrpc(
            scope,
            receive,
            act,
            replies=serving.replies,
            max_body=serving.max_body,
            versions=serving.versions,
        )
        if reply is not None:
            await serving.send(scope, send, reply, act)
            return
        # Not ours (not an interview call, or the client left): the host's router takes
        # it as if this route had not matched, body untouched.
        await _route_again(scope, replay, send)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rpc={sorted(self.rpc)!r}, rest={list(self.rest)!r})"


async def _route_again(scope: Scope, receive: Receive, send: Send) -> None:
    router = scope.get("router")
    scope[_PASSED] = True
    if router is not None:
        # The application's router routes from the application's root: under a Mount,
        # the root_path the Mount extended is put back first (D-SERVE-26).
        if "app_root_path" in scope:
            scope["root_path"] = scope["app_root_path"]
        await router(scope, receive, send)
        return
    # Routes used without a Starlette router: nothing else can take the request.
    await send_reply(send, rpc.Reply(404, b"Not Found", (("Content-Type", "text/plain"),)))


@dataclass(frozen=True, slots=True)
class InterviewRoutes(Sequence[BaseRoute]):
    """The routes of an SDK app that serves the interview, in serving order.

    As a sequence it is every route, ready for ``Starlette(routes=...)``: the interview's
    own route (every interview request, the card included), the card route (the card for
    ``url_path_for`` and FastAPI's ``/docs``), then the SDK's JSON-RPC and REST routes as
    they were given. The three groups are also kept apart for
    ``add_a2a_routes_to_fastapi`` (:meth:`fastapi`). ``declarations`` is what the answers
    were built from.
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


def _card_route(
    interview: Interview, card_url: str, cache_control: str | None, last_modified: str
) -> Route:
    etag = '"' + interview.card_digest[7:39] + '"'
    etag_bytes = etag.encode("ascii")
    headers = {"ETag": etag, "Last-Modified": last_modified}
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
    cache_control: str | None = CARD_CACHE_CONTROL,
    rest_paths: Sequence[str] | None = None,
    max_body: int = MAX_JUDGED_BYTES,
) -> InterviewRoutes:
    """Add the interview to an ``a2a-sdk`` app's routes (see the module docstring).

    ``jsonrpc_routes`` and ``rest_routes`` are the lists ``create_jsonrpc_routes`` and
    ``create_rest_routes`` returned, kept as they are; the interview answers at the path
    of every ``Route`` of the first that accepts POST, in every spelling, and
    ``max_body`` (10 MiB) bounds what it reads of an activated body (past it, such a
    request is refused: PROFILE §3.9). The routes work at the application's top level
    and inside a Starlette ``Mount`` alike (D-SERVE-26): the card's interface URLs then
    name the mount's prefix, the SDK's route paths do not, and a request the interview's
    route reads and finds not its own is routed again by the application's router from
    the application's root.
    ``proposals`` maps each proposal url the card's terms entries commit to onto its
    bytes (or is a callable ``url -> bytes | None``); they are verified once, here.
    ``limiter`` counts interview calls per ``client_key(scope)`` (the peer address by
    default); ordinary traffic is never counted. ``rest_paths`` overrides the HTTP+JSON
    base paths taken from the card's ``HTTP+JSON`` interfaces. ``cache_control`` is sent
    with the card (default ``public, max-age=60``; ``None``: none), with its strong
    ``ETag`` and a ``Last-Modified`` of when the routes were built (D-SERVE-27).

    Returns :class:`InterviewRoutes`.

    Raises ``DeclarationError`` when the served card does not declare the interview,
    declares it with ``required: true``, has no ``JSONRPC`` or ``HTTP+JSON`` interface to
    carry it (gRPC only: PROFILE §7, ``no_interface``), is not a card the answers can be
    built from, or a
    terms entry's proposal fails verification (PROFILE §2.4: the agent must not start);
    ``CanonicalizationError`` when a card value has no RFC 8785 form (a NaN in a
    ``Struct``). Exceptions raised by a ``proposals`` callable propagate.
    """
    card = served_card(agent_card)
    fetch: Mapping[str, bytes] | Fetch = {} if proposals is None else proposals
    declarations = build(card, fetch)
    if not carries_interview(card):  # PROFILE §7: refused at start, as verify judges it
        raise DeclarationError(f"the agent card has {NO_INTERFACE}")
    serving = _Serving(declarations.interview, limiter, client_key, max_body)

    rpc_paths = [
        route.path
        for route in jsonrpc_routes
        if isinstance(route, Route) and route.methods and "POST" in route.methods
    ]
    bases = rest_paths if rest_paths is not None else interface_paths(card, "HTTP+JSON")
    # D-SERVE-27: the card's Last-Modified is when these routes were built from it.
    built = formatdate(usegmt=True)
    front = _InterviewRoute(
        serving, rpc_paths, list(bases), card_url, cache_control, last_modified=built
    )
    return InterviewRoutes(
        [front, _card_route(declarations.interview, card_url, cache_control, built)],
        list(jsonrpc_routes),
        list(rest_routes),
        declarations,
    )
