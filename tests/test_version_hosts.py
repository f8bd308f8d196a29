"""Never stricter than the host on ``A2A-Version`` (PROFILE §3.10): a host whose card
declares no 1.0 interface (a 0.3 host) does not negotiate, so no layer in front of it
answers ``-32009``; a host that negotiates gets its versions kept.

Each layer is tried with a 0.3-shaped card and with the 1.0 card (the control, which
shows the same requests can be refused): the middleware and the SDK integration through
``httpx.ASGITransport``, the proxy on a real loopback socket.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

from a2a_interview import reference, rpc
from a2a_interview.declarations import build
from a2a_interview.server import demo
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.server.sdk import agent_extension, interview_routes
from a2a_interview.spec import INTERVIEW_URI
from support.proxy import proxy_running
from support.recorder import recorder

ORIGIN = "https://stonework.example"
ACT = {"A2A-Extensions": INTERVIEW_URI}
# None: no A2A-Version at all (0.3, A2A 1.0 §3.6).
VARIANTS: list[str | None] = ["1.0", "1.1", "0.3", None, "garbage", "", "2.0", "1.0.1"]
BODY = b'{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'


def card_03(origin: str = ORIGIN) -> dict[str, Any]:
    """The Stonework card in the 0.3 shape: ``url``, ``preferredTransport``,
    ``protocolVersion`` and ``additionalInterfaces`` instead of ``supportedInterfaces``."""
    card = reference.unsigned_card(origin)
    interfaces = card.pop("supportedInterfaces")
    by = {i["protocolBinding"]: i["url"] for i in interfaces}
    card["url"] = by["JSONRPC"]
    card["preferredTransport"] = "JSONRPC"
    card["protocolVersion"] = "0.3.0"
    card["additionalInterfaces"] = [{"url": by["HTTP+JSON"], "transport": "HTTP+JSON"}]
    return card


def _headers(version: str | None) -> dict[str, str]:
    return {**ACT, **({} if version is None else {"A2A-Version": version})}


def _answered_rpc(response: httpx.Response) -> bool:
    body = response.json()
    if "result" in body:
        assert body["result"]["question"] == "identity"
        return True
    assert body["error"]["code"] == -32009, response.text
    return False


def _answered_rest(response: httpx.Response) -> bool:
    if response.status_code == 200:
        assert response.json()["question"] == "identity"
        return True
    assert response.status_code == 400 and b"FAILED_PRECONDITION" in response.content
    return False


# ---------------------------------------------------------------- the core rule


@pytest.mark.parametrize(
    ("shape", "wanted"),
    [
        (card_03(), frozenset()),
        ({**card_03(), "protocolVersion": "0.2.5"}, frozenset()),
        ({**reference.unsigned_card()}, frozenset({(1, 0)})),
        # A 0.3 JSON-RPC interface on a host that also serves 1.0 on gRPC: it negotiates.
        ({"supportedInterfaces": [
            {"url": ORIGIN + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": ORIGIN + ":50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        ]}, frozenset({(0, 3)})),
        ({"supportedInterfaces": [
            {"url": ORIGIN + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ]}, frozenset()),
        ("not a card", frozenset()),
    ],
)  # fmt: skip
def test_a_host_negotiates_only_when_some_interface_declares_1_0_or_later(
    shape: Any, wanted: frozenset[rpc.Version]
) -> None:
    # PROFILE §3.10: the empty set refuses nothing (rpc.version_supported).
    assert rpc.negotiated_versions(shape) == wanted
    for version in VARIANTS:
        if not wanted:
            assert rpc.version_supported(version or "0.3", wanted)


# ---------------------------------------------------------------- the middleware


async def _host(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b"host"})


def _middleware(card: dict[str, Any]) -> httpx.AsyncClient:
    app = InterviewMiddleware(_host, build(card, reference.proposals()))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN)


@pytest.mark.anyio
async def test_the_middleware_answers_a_0_3_host_under_any_version() -> None:
    # PROFILE §3.10: -32009 for `A2A-Version: 1.0` in front of a 0.3 host (an a2a-sdk 1.3
    # client puts it on every request) was stricter than the host.
    async with _middleware(card_03()) as c:
        for version in VARIANTS:
            got = await c.post("/a2a/jsonrpc", content=BODY, headers=_headers(version))
            assert _answered_rpc(got), version
            rest = await c.get("/a2a/rest/interview/identity", headers=_headers(version))
            assert _answered_rest(rest), version


@pytest.mark.anyio
async def test_the_middleware_keeps_the_negotiation_of_a_1_0_host() -> None:
    async with _middleware(reference.unsigned_card()) as c:
        for version in VARIANTS:
            got = await c.post("/a2a/jsonrpc", content=BODY, headers=_headers(version))
            assert _answered_rpc(got) is (version == "1.0"), version


# ---------------------------------------------------------------- the SDK integration


def _sdk_card(version: str) -> AgentCard:
    return AgentCard(
        name="Versions",
        description="One JSON-RPC interface",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                protocol_binding="JSONRPC", protocol_version=version, url="http://agent.test/rpc"
            ),
        ],
        capabilities=AgentCapabilities(extensions=[agent_extension()]),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Says it back", tags=["e"])],
    )


def _sdk(card: AgentCard) -> httpx.AsyncClient:
    handler = DefaultRequestHandler(demo.executor(), InMemoryTaskStore(), card)
    jsonrpc = create_jsonrpc_routes(handler, rpc_url="/rpc", enable_v0_3_compat=True)
    app = Starlette(routes=interview_routes(card, jsonrpc_routes=jsonrpc))
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://agent.test")


@pytest.mark.anyio
@pytest.mark.parametrize(("declared", "answered"), [("0.3", set(VARIANTS)), ("1.0", {"1.0"})])
async def test_the_sdk_integration_negotiates_only_for_a_host_that_does(
    declared: str, answered: set[str | None]
) -> None:
    # PROFILE §3.10: an SDK card whose only interface is 0.3 declares no 1.0 interface.
    async with _sdk(_sdk_card(declared)) as c:
        for version in VARIANTS:
            got = await c.post("/rpc", content=BODY, headers=_headers(version))
            assert _answered_rpc(got) is (version in answered), (declared, version)


# ---------------------------------------------------------------- the proxy


@pytest.mark.parametrize("declare", [False, True])
def test_the_proxy_answers_a_0_3_host_under_any_version(declare: bool) -> None:
    # PROFILE §3.10: an a2a-sdk 0.3 agent behind `proxy --declare` got -32009 for every
    # interview call of an a2a-sdk 1.3 client (`a2a-version: 1.0` on its httpx client).
    def shaped(origin: str) -> dict[str, Any]:
        card = card_03(origin)
        if declare:
            exts = card["capabilities"]["extensions"]
            card["capabilities"]["extensions"] = [e for e in exts if e["uri"] != INTERVIEW_URI]
        return card

    with recorder(shaped) as up:
        options: dict[str, Any] = {"declare": True, "public_url": up.origin} if declare else {}
        with proxy_running(up.origin, poll=0, **options) as proxy:
            for version in VARIANTS:
                got = proxy.http.post("/a2a/jsonrpc", content=BODY, headers=_headers(version))
                assert _answered_rpc(got), version
                rest = proxy.http.get("/a2a/rest/interview/identity", headers=_headers(version))
                assert _answered_rest(rest), version


def test_the_proxy_keeps_the_negotiation_of_a_1_0_host() -> None:
    with recorder() as up, proxy_running(up.origin, poll=0) as proxy:
        for version in VARIANTS:
            got = proxy.http.post("/a2a/jsonrpc", content=BODY, headers=_headers(version))
            assert _answered_rpc(got) is (version == "1.0"), version
            assert json.loads(got.content)["id"] == 7


# ---------------------------------------------------------------- gRPC only


def test_interview_routes_refuse_a_grpc_only_card_at_start() -> None:
    # PROFILE §7: the SDK integration says at start what verify would (no_interface).
    from a2a_interview.errors import DeclarationError

    card = _sdk_card("1.0")
    del card.supported_interfaces[:]
    card.supported_interfaces.add(
        protocol_binding="GRPC", protocol_version="1.0", url="http://agent.test:50051"
    )
    handler = DefaultRequestHandler(demo.executor(), InMemoryTaskStore(), card)
    jsonrpc = create_jsonrpc_routes(handler, rpc_url="/rpc")
    with pytest.raises(DeclarationError) as caught:
        interview_routes(card, jsonrpc_routes=jsonrpc)
    assert "(declaration: no_interface)" in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.anyio
async def test_interview_routes_serve_a_grpc_and_jsonrpc_card_on_jsonrpc() -> None:
    card = _sdk_card("1.0")
    card.supported_interfaces.add(
        protocol_binding="GRPC", protocol_version="1.0", url="http://agent.test:50051"
    )
    async with _sdk(card) as c:
        got = await c.post("/rpc", content=BODY, headers=_headers("1.0"))
    assert _answered_rpc(got)
