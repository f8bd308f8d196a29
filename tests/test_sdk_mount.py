"""``interview_routes`` inside a Starlette ``Mount`` (PROFILE §3, §3b): both bindings and
the card answer under the mount prefix, ordinary calls still reach the SDK, and the
project's own verifier finds the mounted agent consistent. In process, through
``httpx.ASGITransport``, with the real a2a-sdk routes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from a2a_interview.server import demo
from a2a_interview.server.sdk import agent_extension, interview_routes
from a2a_interview.spec import INTERVIEW_URI
from a2a_interview.verifier import verify

pytestmark = pytest.mark.anyio

BASE = "https://agent.test"
PREFIX = "/agents/x"
ACT = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}
CARD = "/.well-known/agent-card.json"


def mounted_card() -> AgentCard:
    return AgentCard(
        name="Mounted",
        description="An agent under a Mount",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                protocol_binding="JSONRPC", protocol_version="1.0", url=f"{BASE}{PREFIX}/rpc"
            ),
            AgentInterface(
                protocol_binding="HTTP+JSON", protocol_version="1.0", url=f"{BASE}{PREFIX}/rest"
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, extensions=[agent_extension()]),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Says it back", tags=["e"])],
    )


def mounted_app() -> Starlette:
    card = mounted_card()
    handler = DefaultRequestHandler(demo.executor(), InMemoryTaskStore(), card)
    routes = interview_routes(
        card,
        jsonrpc_routes=create_jsonrpc_routes(handler, rpc_url="/rpc"),
        rest_routes=create_rest_routes(handler, path_prefix="/rest"),
    )

    async def home(request: Any) -> PlainTextResponse:
        return PlainTextResponse("home")

    return Starlette(routes=[Route("/", home), Mount(PREFIX, routes=list(routes))])


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)


async def test_both_bindings_and_the_card_answer_under_a_mount() -> None:
    # The HTTP+JSON interview was a 404 under a Mount: its base paths (from the card)
    # carry the mount prefix, and were compared with the path below it.
    body = b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}'
    async with client(mounted_app()) as c:
        card = await c.get(PREFIX + CARD)
        rpc = await c.post(PREFIX + "/rpc", content=body, headers=ACT)
        rest = await c.get(PREFIX + "/rest/interview/identity", headers=ACT)
        spelled = await c.get(PREFIX + "/REST//interview/identity", headers=ACT)
    assert card.status_code == 200 and card.json()["name"] == "Mounted"
    assert rpc.json()["result"]["question"] == "identity"
    assert rest.status_code == 200, rest.text
    assert rest.content == spelled.content
    assert rest.json() == rpc.json()["result"]


async def test_ordinary_calls_under_a_mount_reach_the_sdk() -> None:
    # An activated call that is not the interview's is handed back to the router, which
    # must find the SDK's route under the Mount again (it was a 404).
    send = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}  # fmt: skip
    async with client(mounted_app()) as c:
        activated = await c.post(PREFIX + "/rpc", json=send, headers=ACT)
        plain = await c.post(PREFIX + "/rpc", json=send, headers={"A2A-Version": "1.0"})
        home = await c.get("/")
    assert activated.status_code == 200 and "result" in activated.json(), activated.text
    assert plain.status_code == 200 and "result" in plain.json(), plain.text
    assert home.text == "home"


async def test_the_verifier_finds_the_mounted_agent_consistent() -> None:
    transport = httpx.ASGITransport(app=mounted_app())
    record = (await verify(BASE + PREFIX, churn_delay=0, transport=transport)).to_json()
    assert record["outcome"] == "consistent", record["runs"][0]["conflicts"]
    interfaces = {c["interface"] for c in record["runs"][0]["calls"]}
    assert interfaces == {f"{BASE}{PREFIX}/rpc", f"{BASE}{PREFIX}/rest"}
