"""The verifier fetches the extended card (PROFILE §7): given credentials and a card that
offers one, it asks for it (1.0 JSON-RPC ``GetExtendedAgentCard``, HTTP+JSON ``GET
{url}/extendedAgentCard``; 0.3 ``agent/getAuthenticatedExtendedCard``, ``GET
{url}/v1/card``) and records that it did, with its digest, or why not. Skills beyond the
public card's are an advisory (``extended_skills``), never a conflict; the interview is
still diffed against the public card. Real HTTP on loopback."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest

from a2a_interview.checks import Binding, Interface
from a2a_interview.jcs import canonicalize, digest
from a2a_interview.record import schema
from a2a_interview.report import render_report
from a2a_interview.rpc import rpc_error
from a2a_interview.verifier import VerifyOptions, verify
from a2a_interview.verifier.client import ClientOptions
from a2a_interview.verifier.extended import _request, offers_extended_card
from agents import JSONRPC_PATH, REST_PATH, Call, Reply, Wrap, honest
from support.servers import serve

pytestmark = pytest.mark.anyio

VALIDATOR = jsonschema.Draft202012Validator(schema())
BEARER = ("Authorization", "Bearer the-token")
PRIVATE = {"id": "private-audit", "name": "Private audit", "description": "For members",
           "tags": ["audit"]}  # fmt: skip


def _offering(card: dict[str, Any]) -> dict[str, Any]:
    card["capabilities"]["extendedAgentCard"] = True
    return card


def _rest_only(card: dict[str, Any]) -> dict[str, Any]:
    card = _offering(card)
    card["supportedInterfaces"] = [
        i for i in card["supportedInterfaces"] if i["protocolBinding"] == "HTTP+JSON"
    ]
    return card


class Extended:
    """An agent offering an extended card, served to the bearer only; ``asked`` notes
    each request for it (the path, or the JSON-RPC method)."""

    def __init__(self, edit: Any = _offering, error: bool = False) -> None:
        self.edit = edit
        self.error = error
        self.asked: list[str] = []
        self.extended: dict[str, Any] = {}

    def __call__(self, origin: str) -> Any:
        agent = honest(origin, edit_card=self.edit)
        self.extended = copy.deepcopy(agent.card)
        self.extended["skills"].append(PRIVATE)

        def on_request(call: Call) -> Reply | None:
            authorized = (b"authorization", b"Bearer the-token") in call.headers
            if call.method == "POST" and call.path == JSONRPC_PATH:
                request = json.loads(call.body)
                if request.get("method") != "GetExtendedAgentCard":
                    return None
                self.asked.append(request["method"])
                if not authorized:
                    return Reply(401, [], b"")
                if self.error:  # ExtendedAgentCardNotConfiguredError
                    body = rpc_error(request["id"], (-32007, "Extended card not configured"))
                else:
                    body = canonicalize(
                        {"jsonrpc": "2.0", "id": request["id"], "result": self.extended}
                    )
                return Reply(200, [(b"content-type", b"application/json")], body)
            if call.path == REST_PATH + "/extendedAgentCard":
                self.asked.append(call.path)
                if not authorized:
                    return Reply(401, [], b"")
                return Reply(200, [(b"content-type", b"application/json")],
                             canonicalize(self.extended))  # fmt: skip
            return None

        return Wrap(agent, on_request)


def _with(*headers: tuple[str, str]) -> VerifyOptions:
    return VerifyOptions(churn_delay=0, client=ClientOptions(headers=headers))


async def test_with_credentials_the_extended_card_is_fetched_and_recorded() -> None:
    agent = Extended()
    with serve(agent) as origin:
        record = (await verify(origin, _with(BEARER))).to_json()
    assert record["outcome"] == "consistent"  # extra skills are never a conflict
    assert agent.asked == ["GetExtendedAgentCard"]
    assert record["agent"]["extended_card"] == {
        "fetched": True, "digest": digest(agent.extended), "url": origin + JSONRPC_PATH,
    }  # fmt: skip
    (advisory,) = [a for a in record["advisories"] if a["code"] == "extended_card"]
    assert (advisory["reason"], advisory["value"]) == ("extended_skills", ["private-audit"])
    # The interview was diffed against the public card: the private skill never asked.
    assert not any(c["params"] == {"skill": "private-audit"} for c in record["runs"][0]["calls"])
    VALIDATOR.validate(record)
    assert f"  extended card {digest(agent.extended)}" in render_report(record)


async def test_without_credentials_the_record_says_why_not() -> None:
    agent = Extended()
    with serve(agent) as origin:
        record = (await verify(origin, churn_delay=0)).to_json()
    assert record["outcome"] == "consistent"
    assert agent.asked == []  # the operation requires authentication: not asked
    assert record["agent"]["extended_card"] == {"fetched": False, "reason": "no_credentials"}
    VALIDATOR.validate(record)
    assert "  extended card not fetched (no_credentials)" in render_report(record)


async def test_an_http_json_agent_is_asked_on_its_rest_route() -> None:
    agent = Extended(_rest_only)
    with serve(agent) as origin:
        record = (await verify(origin, _with(BEARER))).to_json()
    assert agent.asked == [REST_PATH + "/extendedAgentCard"]
    assert record["agent"]["extended_card"]["fetched"] is True
    assert record["agent"]["extended_card"]["digest"] == digest(agent.extended)


async def test_an_error_is_recorded_and_ends_nothing() -> None:
    agent = Extended(error=True)
    with serve(agent) as origin:
        record = (await verify(origin, _with(BEARER))).to_json()
    assert record["outcome"] == "consistent"
    assert record["agent"]["extended_card"] == {
        "fetched": False, "reason": "error_response", "url": origin + JSONRPC_PATH,
        "status": 200,
    }  # fmt: skip
    VALIDATOR.validate(record)


async def test_a_card_offering_none_has_no_member() -> None:
    with serve(honest) as origin:
        record = (await verify(origin, _with(BEARER))).to_json()
    assert "extended_card" not in record["agent"]


def test_both_spellings_of_the_offer_and_both_versions_of_the_call() -> None:
    assert offers_extended_card({"capabilities": {"extendedAgentCard": True}})
    assert offers_extended_card({"supportsAuthenticatedExtendedCard": True})
    assert not offers_extended_card({"capabilities": {"extendedAgentCard": False}})
    assert not offers_extended_card({"supportsAuthenticatedExtendedCard": "true"})
    legacy = Interface("https://a.example/rpc", Binding.JSONRPC, "0.3.0", "/url")
    _url, body, headers = _request(legacy, 3)
    assert json.loads(body or b"")["method"] == "agent/getAuthenticatedExtendedCard"
    assert all(name != "A2A-Version" for name, _ in headers)  # none for 0.3
    rest = Interface("https://a.example/v", Binding.HTTP_JSON, "0.3.0", "/url")
    assert _request(rest, 4)[0] == "https://a.example/v/v1/card"
    current = Interface("https://a.example/rpc", Binding.JSONRPC, "1.0", "/url")
    _url, body, headers = _request(current, 5)
    assert json.loads(body or b"")["method"] == "GetExtendedAgentCard"
    assert ("A2A-Version", "1.0") in headers


def _sdk_agent(origin: str, *, rest_only: bool = False) -> Any:
    """A stock a2a-sdk 1.x agent offering an extended card with one more skill, through
    the interview's a2a-sdk routes (as the README builds one)."""
    from a2a.helpers import new_text_message
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from starlette.applications import Starlette

    from a2a_interview.server.sdk import agent_extension, interview_routes

    class Echo(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            await event_queue.enqueue_event(new_text_message("echo"))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    interfaces = [
        AgentInterface(url=origin + JSONRPC_PATH, protocol_binding="JSONRPC",
                       protocol_version="1.0"),
        AgentInterface(url=origin + REST_PATH, protocol_binding="HTTP+JSON",
                       protocol_version="1.0"),
    ][1 if rest_only else 0 :]  # fmt: skip
    echo = AgentSkill(id="echo", name="Echo", description="Says it back", tags=["echo"])
    private = AgentSkill(id="private-audit", name="Audit", description="Members", tags=["a"])

    def card(skills: list[Any]) -> Any:
        return AgentCard(
            name="Echo", description="Says back what it is told", version="1.0.0",
            supported_interfaces=interfaces,
            capabilities=AgentCapabilities(extensions=[agent_extension()],
                                           extended_agent_card=True),
            default_input_modes=["text/plain"], default_output_modes=["text/plain"],
            skills=skills,
        )  # fmt: skip

    public = card([echo])
    handler = DefaultRequestHandler(
        Echo(), InMemoryTaskStore(), agent_card=public, extended_agent_card=card([echo, private])
    )
    routes = interview_routes(
        public,
        jsonrpc_routes=create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH),
        rest_routes=create_rest_routes(handler, path_prefix=REST_PATH),
    )
    return Starlette(routes=routes)


@pytest.mark.parametrize("rest_only", [False, True], ids=["jsonrpc", "http_json"])
async def test_a_stock_a2a_sdk_agent_s_extended_card_is_fetched(rest_only: bool) -> None:
    # What the SDK produces by default: GetExtendedAgentCard's result is the card itself,
    # GET {url}/extendedAgentCard its body.
    with serve(lambda o: _sdk_agent(o, rest_only=rest_only)) as origin:
        record = (await verify(origin, _with(BEARER))).to_json()
    assert record["outcome"] == "consistent"
    extended = record["agent"]["extended_card"]
    assert extended["fetched"] is True
    assert extended["url"].endswith("/extendedAgentCard" if rest_only else JSONRPC_PATH)
    (advisory,) = [a for a in record["advisories"] if a["code"] == "extended_card"]
    assert advisory["value"] == ["private-audit"]
