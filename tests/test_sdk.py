"""The a2a-sdk integration (D-SERVE-1): one call on the SDK's own route factories,
in Starlette and in FastAPI, behind authentication middleware, projecting the card exactly
as the SDK serves it (0.3 compatibility members included)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    add_a2a_routes_to_fastapi,
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    SimpleUser,
)
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response

from a2a_interview import reference
from a2a_interview.card import generate_key, public_jwk, verify_card
from a2a_interview.errors import DeclarationError
from a2a_interview.jcs import canonicalize
from a2a_interview.pointer import resolve
from a2a_interview.server import demo
from a2a_interview.server.ratelimit import RateLimiter
from a2a_interview.server.sdk import (
    InterviewRoutes,
    agent_card_from_json,
    agent_extension,
    interview_routes,
    served_card,
    sign_agent_card,
)
from a2a_interview.spec import INTERVIEW_URI, QUESTIONS
from a2a_interview.strictjson import loads

BASE = "http://agent.test"
ACT = {"A2A-Extensions": INTERVIEW_URI}
TOKEN = {"Authorization": "Bearer letmein"}
V1 = {"A2A-Version": "1.0"}


def compat_card(*, extension: AgentExtension | None = None) -> AgentCard:
    """A card with a 1.0 JSON-RPC, a 1.0 HTTP+JSON and a 0.3 JSON-RPC interface: the SDK
    serves it with its 0.3 compatibility members merged in."""
    bearer = SecurityRequirement(schemes={"bearer": StringList(list=[])})
    return AgentCard(
        name="Compat Agent",
        description="Echoes; serves 0.3 clients too.",
        version="2.0.0",
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=f"{BASE}/rpc"),
            AgentInterface(
                protocol_binding="HTTP+JSON", protocol_version="1.0", url=f"{BASE}/rest"
            ),
            AgentInterface(protocol_binding="JSONRPC", protocol_version="0.3", url=f"{BASE}/rpc"),
        ],
        capabilities=AgentCapabilities(streaming=True, extensions=[extension or agent_extension()]),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        security_schemes={
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer")
            )
        },
        security_requirements=[bearer],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes text",
                tags=["echo"],
                input_modes=["text/plain"],
                security_requirements=[bearer],
            )
        ],
    )


class TokenAuth(AuthenticationBackend):
    """A toy bearer-token backend: the card is public, everything else needs the token."""

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, SimpleUser] | None:
        if conn.url.path == "/.well-known/agent-card.json":
            return None
        if conn.headers.get("authorization") != "Bearer letmein":
            raise AuthenticationError("unauthenticated")
        return AuthCredentials(["agent"]), SimpleUser("tester")


def rejected(conn: HTTPConnection, exc: AuthenticationError) -> Response:
    return JSONResponse({"error": "unauthenticated"}, status_code=401)


AUTH = Middleware(AuthenticationMiddleware, backend=TokenAuth(), on_error=rejected)


def sdk_routes(card: AgentCard) -> tuple[list[Any], list[Any]]:
    handler = DefaultRequestHandler(demo.executor(), InMemoryTaskStore(), card)
    return (
        create_jsonrpc_routes(handler, rpc_url="/rpc", enable_v0_3_compat=True),
        create_rest_routes(handler, path_prefix="/rest"),
    )


def plain_app(card: AgentCard) -> Starlette:
    """The same agent without the interview: the SDK's routes only."""
    jsonrpc, rest = sdk_routes(card)
    return Starlette(routes=[*create_agent_card_routes(card), *jsonrpc, *rest])


def starlette_app(card: AgentCard, *, auth: bool = False, **options: Any) -> Starlette:
    jsonrpc, rest = sdk_routes(card)
    routes = interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest, **options)
    return Starlette(routes=routes, middleware=[AUTH] if auth else [])


def fastapi_app(card: AgentCard, *, auth: bool = False, **options: Any) -> FastAPI:
    jsonrpc, rest = sdk_routes(card)
    routes = interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest, **options)
    app = FastAPI()
    add_a2a_routes_to_fastapi(app, **routes.fastapi())
    if auth:
        app.add_middleware(AuthenticationMiddleware, backend=TokenAuth(), on_error=rejected)
    return app


FRAMEWORKS: dict[str, Callable[..., Any]] = {"starlette": starlette_app, "fastapi": fastapi_app}


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)


async def rpc(c: httpx.AsyncClient, method: str, params: Any = None, headers: Any = None,
              path: str = "/rpc") -> httpx.Response:  # fmt: skip
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        body["params"] = params
    return await c.post(path, content=json.dumps(body).encode(), headers={**V1, **(headers or {})})


def result(response: httpx.Response) -> bytes:
    prefix = b'{"id":1,"jsonrpc":"2.0","result":'
    assert response.content.startswith(prefix), response.content[:200]
    return response.content[len(prefix) : -1]


pytestmark = pytest.mark.anyio


# --- Answers projected from the card exactly as the SDK serves it ------------------------


async def sdk_served(card: AgentCard) -> dict[str, Any]:
    async with client(plain_app(card)) as c:
        served = (await c.get("/.well-known/agent-card.json")).json()
    assert isinstance(served, dict)
    return served


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_card_route_serves_the_sdk_card(framework: str) -> None:
    # PROFILE §2.1: the card, exactly the object the SDK serves, 0.3 members included.
    card = compat_card()
    expected = await sdk_served(card)
    assert {"url", "preferredTransport", "protocolVersion", "security"} <= expected.keys()
    async with client(FRAMEWORKS[framework](card)) as c:
        response = await c.get("/.well-known/agent-card.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.content == canonicalize(expected)
    assert served_card(card) == expected


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_answers_carry_the_0_3_compatibility_members(framework: str) -> None:
    # PROFILE §2.1, §4.3: /url, /preferredTransport, /security come from the SDK's merge
    # and are projected exactly as served.
    card = compat_card()
    served = await sdk_served(card)
    async with client(FRAMEWORKS[framework](card)) as c:
        usage = loads(result(await rpc(c, "interview/usage", headers=ACT)))
        identity = loads(result(await rpc(c, "interview/identity", headers=ACT)))
        refusals = loads(result(await rpc(c, "interview/refusals", headers=ACT)))
    members = [p["source"]["member"] for p in usage["projections"]]
    assert members == [
        "/supportedInterfaces", "/url", "/preferredTransport", "/defaultInputModes",
        "/defaultOutputModes", "/skills/0/inputModes", "/skills/0/securityRequirements",
        "/securitySchemes", "/securityRequirements", "/security",
    ]  # fmt: skip
    values = {p["source"]["member"]: p["value"] for p in usage["projections"]}
    assert values["/url"] == served["url"] == f"{BASE}/rpc"
    assert values["/preferredTransport"] == served["preferredTransport"] == "JSONRPC"
    assert values["/security"] == served["security"] == [{"bearer": []}]
    assert values["/securitySchemes"] == served["securitySchemes"]
    assert "type" in values["/securitySchemes"]["bearer"]  # a 0.3 member merged by the SDK
    assert [p["source"]["member"] for p in identity["projections"]][:4] == [
        "/name", "/url", "/supportedInterfaces/0/url", "/supportedInterfaces/1/url"]  # fmt: skip
    for answer in (usage, identity, refusals):
        for projection in answer["projections"]:
            member = projection["source"]["member"]
            assert canonicalize(projection["value"]) == canonicalize(resolve(served, member))


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_every_binding_answers(framework: str) -> None:
    # PROFILE §3.1, §3b, on both interfaces: the 0.3 JSON-RPC one with its 0.3 header.
    card = compat_card()
    async with client(FRAMEWORKS[framework](card)) as c:
        for question in QUESTIONS:
            jsonrpc = await rpc(c, f"interview/{question}", headers=ACT)
            legacy = await rpc(
                c, f"interview/{question}", headers={"X-A2A-Extensions": INTERVIEW_URI}
            )
            rest = await c.get(f"/rest/interview/{question}", headers={**ACT, **V1})
            assert result(jsonrpc) == result(legacy) == rest.content
            assert jsonrpc.headers["a2a-extensions"] == INTERVIEW_URI
            assert legacy.headers["x-a2a-extensions"] == INTERVIEW_URI
            assert rest.status_code == 200


# --- The SDK's own answers stay its own --------------------------------------------------

FALLBACKS = [
    (b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}', {}),
    (b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}', {"A2A-Extensions": "x"}),
    (b'{"jsonrpc":"2.0","id":1,"method":"no/such"}', ACT),
    (b'{"jsonrpc":"2.0","id":1,"method":"interview/identity",', ACT),  # -32700
    (b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}]', ACT),  # batch
    (b'{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"x"}', ACT),
    (b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}', ACT),
    (b'{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}', ACT),  # 0.3
    (b"", ACT),
]


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(("body", "headers"), FALLBACKS)
async def test_everything_else_is_the_sdks_answer(
    framework: str, body: bytes, headers: dict[str, str]
) -> None:
    # PROFILE §3.3, §3.4: -32601, -32700 and everything not ours: the SDK's, unchanged.
    card = compat_card()
    sent = {**V1, "Content-Type": "application/json", **headers}
    async with client(plain_app(card)) as bare, client(FRAMEWORKS[framework](card)) as ours:
        expected = await bare.post("/rpc", content=body, headers=sent)
        got = await ours.post("/rpc", content=body, headers=sent)
    assert (got.status_code, got.content) == (expected.status_code, expected.content)
    assert got.headers == expected.headers


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_an_activated_batch_naming_the_namespace_never_reaches_the_sdk(
    framework: str,
) -> None:
    # PROFILE §3.9: one -32600 with the echo, answered by the layer, not the host's.
    body = b'[{"jsonrpc":"2.0","id":1,"method":"interview/identity"}]'
    sent = {**V1, "Content-Type": "application/json", **ACT}
    async with client(FRAMEWORKS[framework](compat_card())) as ours:
        got = await ours.post("/rpc", content=body, headers=sent)
    assert (
        got.content
        == b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'
    )
    assert got.headers["a2a-extensions"] == INTERVIEW_URI


async def _departing_client(app: Any) -> list[Any]:
    """Send a JSON-RPC POST whose client leaves mid-body; return what the app sent."""
    sent: list[Any] = []
    pending = [{"type": "http.request", "body": b'{"jsonrpc":"2.0",', "more_body": True}]

    async def receive() -> Any:
        return pending.pop() if pending else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/rpc", "raw_path": b"/rpc", "query_string": b"",
        "root_path": "", "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1), "server": ("agent.test", 80),
    }  # fmt: skip
    await app(scope, receive, send)
    return sent


async def test_a_client_leaving_mid_body_gets_the_sdks_own_handling() -> None:
    # Decisions D-SERVE-1: every request not ours is the SDK's, a departed client
    # included; the wrapper raised starlette's ClientDisconnect (a logged 500) instead.
    card = compat_card()
    expected = await _departing_client(plain_app(card))
    got = await _departing_client(starlette_app(card))
    assert got == expected


# --- Authentication middleware still applies --------------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
async def test_auth_middleware_applies_to_interview_calls(framework: str) -> None:
    # interview §10: admission is the deployment's; the interview is behind the same auth.
    card = compat_card()
    async with client(FRAMEWORKS[framework](card, auth=True)) as c:
        core = await rpc(c, "GetTask", {"id": "x"}, headers=ACT)
        jsonrpc = await rpc(c, "interview/identity", headers=ACT)
        rest = await c.get("/rest/interview/identity", headers={**ACT, **V1})
        assert core.status_code == jsonrpc.status_code == rest.status_code == 401
        assert jsonrpc.content == rest.content == core.content == b'{"error":"unauthenticated"}'
        assert "a2a-extensions" not in jsonrpc.headers

        allowed = await rpc(c, "interview/identity", headers={**ACT, **TOKEN})
        allowed_rest = await c.get("/rest/interview/identity", headers={**ACT, **TOKEN, **V1})
        assert allowed.status_code == allowed_rest.status_code == 200
        assert result(allowed) == allowed_rest.content
        card_response = await c.get("/.well-known/agent-card.json")  # public by the backend
        assert card_response.status_code == 200


async def test_fastapi_app_still_documents_its_routes() -> None:
    # The wrapped JSON-RPC route is re-registered by FastAPI like the SDK's own.
    async with client(fastapi_app(compat_card())) as c:
        schema = (await c.get("/openapi.json")).json()
    assert "/rpc" in schema["paths"] and "post" in schema["paths"]["/rpc"]


# --- The routes object ---------------------------------------------------------------------


def test_routes_order_and_groups() -> None:
    # The interview's route comes first, before the SDK's Mount('/{tenant}') and its
    # JSON-RPC routes, which are passed through as given (decisions D-SERVE-1).
    card = compat_card()
    jsonrpc, rest = sdk_routes(card)
    routes = interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest)
    assert isinstance(routes, InterviewRoutes)
    assert len(routes) == 2 + len(jsonrpc) + len(rest)
    assert list(routes) == [*routes.agent_card_routes, *routes.jsonrpc_routes, *routes.rest_routes]
    assert routes.jsonrpc_routes == jsonrpc and routes.rest_routes == rest
    assert type(routes.rest_routes[-1]).__name__ == "Mount"
    assert routes.interview.card == served_card(card)
    assert routes[0] is routes.agent_card_routes[0] and routes[-1] is rest[-1]


async def test_card_etag_and_304() -> None:
    # PROFILE §2.1: the card from precomputed bytes, revalidated by ETag.
    async with client(starlette_app(compat_card(), cache_control="public, max-age=5")) as c:
        first = await c.get("/.well-known/agent-card.json")
        etag = first.headers["etag"]
        assert first.headers["cache-control"] == "public, max-age=5"
        again = await c.get("/.well-known/agent-card.json", headers={"If-None-Match": etag})
        weak = await c.get("/.well-known/agent-card.json", headers={"If-None-Match": "W/" + etag})
        other = await c.get("/.well-known/agent-card.json", headers={"If-None-Match": '"x"'})
    assert again.status_code == weak.status_code == 304 and again.content == b""
    assert other.status_code == 200 and other.content == first.content


async def test_rate_limit_with_a_pluggable_client_key() -> None:
    # PROFILE §3.7: per client; the key function is pluggable.
    limiter = RateLimiter("2/minute")

    def key(scope: Any) -> str:
        return dict(scope["headers"]).get(b"x-client", b"anon").decode()

    app = starlette_app(compat_card(), limiter=limiter, client_key=key)
    async with client(app) as c:
        a = [await rpc(c, "interview/identity", headers={**ACT, "X-Client": "a"}) for _ in range(3)]
        b = await rpc(c, "interview/identity", headers={**ACT, "X-Client": "b"})
        rest = await c.get("/rest/interview/identity", headers={**ACT, "X-Client": "a"})
    assert [r.status_code for r in a] == [200, 200, 429]
    assert (
        a[2].content
        == b'{"error":{"code":-32000,"message":"Too many requests"},"id":1,"jsonrpc":"2.0"}'
    )
    assert int(a[2].headers["retry-after"]) >= 1
    assert b.status_code == 200
    assert rest.status_code == 429


# --- Start-up refusals (PROFILE §2.4) ------------------------------------------------------


def test_a_card_without_the_interview_is_refused() -> None:
    # PROFILE §2.4: a server must not start without declarations to serve.
    card = compat_card(extension=AgentExtension(uri="https://example.com/other/v1"))
    jsonrpc, rest = sdk_routes(card)
    with pytest.raises(DeclarationError, match="does not declare"):
        interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest)


def test_a_required_interview_is_refused() -> None:
    # interview §3 rule 1
    card = compat_card(extension=AgentExtension(uri=INTERVIEW_URI, required=True))
    jsonrpc, rest = sdk_routes(card)
    with pytest.raises(DeclarationError, match="required"):
        interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest)


def test_terms_that_do_not_verify_are_refused() -> None:
    # PROFILE §2.4: a missing or altered proposal stops the agent from starting.
    card = agent_card_from_json(reference.unsigned_card())
    jsonrpc, _ = sdk_routes(card)
    with pytest.raises(DeclarationError, match="fetch_failed"):
        interview_routes(card, jsonrpc_routes=jsonrpc)
    altered = {url: body.replace(b"Stonework", b"Stonewerk") for url, body in
               reference.proposals().items()}  # fmt: skip
    with pytest.raises(DeclarationError, match="terms entry"):
        interview_routes(card, jsonrpc_routes=jsonrpc, proposals=altered)
    ok = interview_routes(card, jsonrpc_routes=jsonrpc, proposals=reference.proposals().get)
    assert len(ok.declarations.proposals) == 2


def test_agent_extension_is_offered_never_required() -> None:
    # interview §3 rule 1: required MUST NOT be true. docs/decisions.md (D-VERIFY-37, "The
    # interview declaration omits required"): the 1.0 card leaves it out, as the proxy's --declare
    # does; only the SDK's own 0.3 compatibility members carry "required": false.
    ext = agent_extension()
    assert (ext.uri, ext.required) == (INTERVIEW_URI, False)
    described = {"uri": INTERVIEW_URI,
                 "description": "The five questions, answered from declared documents"}  # fmt: skip
    plain = AgentCard()
    plain.CopyFrom(compat_card())
    del plain.supported_interfaces[2]  # no 0.3 interface: no compat members
    assert "url" not in served_card(plain)
    assert served_card(plain)["capabilities"]["extensions"][0] == described
    served = served_card(compat_card())["capabilities"]["extensions"][0]
    assert served == {**described, "required": False}


def test_agent_card_from_json_is_strict() -> None:
    # PROFILE §2.1: the published card round-trips through the SDK unchanged.
    from google.protobuf.json_format import ParseError

    card = reference.unsigned_card()
    assert served_card(agent_card_from_json(card)) == card
    with pytest.raises(ParseError):
        agent_card_from_json({**card, "unknownMember": 1})


# --- Signing the card as served -----------------------------------------------------------


@pytest.mark.parametrize("alg", ["EdDSA", "ES256"])
def test_sign_agent_card_covers_the_compat_members(alg: str) -> None:
    # PROFILE §6.3: proto first (what the SDKs' verifiers check), then served, which covers
    # the card as it will be served, 0.3 members included.
    key = generate_key(alg)
    card = sign_agent_card(compat_card(), key, kid="k1", jku=f"{BASE}/jwks.json")
    served = served_card(card)
    assert len(served["signatures"]) == 2
    keys = [public_jwk(key, "k1")]
    proto, strict = ({**served, "signatures": [s]} for s in served["signatures"])
    assert verify_card(proto, keys, readings=("proto",)).status == "verified"
    report = verify_card(strict, keys, readings=("served",))
    assert report.status == "verified" and report.checks[0].uncovered == ()
    assert verify_card(served, keys).reading == "served"
    moved = {**served, "url": "https://evil.example/rpc"}  # a compat member
    assert verify_card(moved, keys, readings=("served",)).status == "invalid"
    only_proto = verify_card(moved, keys)  # what the SDKs check does not cover it
    assert "proto" in only_proto.readings and "/url" in only_proto.checks[0].uncovered
    twice = served_card(sign_agent_card(card, key, kid="k2"))
    assert twice["signatures"][:2] == served["signatures"]
    assert len(twice["signatures"]) == 4


def test_sign_agent_card_proto_is_what_the_sdk_signer_signs() -> None:
    # PROFILE §6.3: the proto signature's payload is a2a-sdk's own canonical form.
    from a2a.utils.signing import _canonicalize_agent_card

    from a2a_interview.card import signing_payload

    card = compat_card()
    assert signing_payload(served_card(card), "proto") == [_canonicalize_agent_card(card).encode()]
    one = sign_agent_card(card, generate_key("EdDSA"), kid="k1", reading="served")
    assert len(served_card(one)["signatures"]) == 1


def test_the_sdk_module_names_its_extra_when_a2a_is_missing() -> None:
    # docs/style.md: optional parts fail with an ImportError naming the extra.
    code = (
        "import sys; sys.modules['a2a'] = None\n"
        "try:\n    import a2a_interview.server.sdk\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "'sdk' extra" in out.stdout and "a2a-interview[sdk]" in out.stdout
