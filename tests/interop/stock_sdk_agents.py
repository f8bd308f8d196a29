"""Stock ``a2a-sdk`` 1.x agents with the project's integration, for the stock-agent matrix
(``test_stock_matrix.py``). Our own code, written from a2a-sdk's README and this
project's README as a user would: an ``AgentCard`` built with the SDK's types, its
``DefaultRequestHandler``, ``create_jsonrpc_routes``/``create_rest_routes``, and
``interview_routes`` in place of ``create_agent_card_routes``::

    python stock_sdk_agents.py CONFIG.json

CONFIG.json: ``{"agents": [{"variant": V, "port": N, ...}, ...]}``; every app is served
by its own uvicorn server on its loopback port(s), all in this one process:

- ``starlette``: the README's example as written (Starlette).
- ``signed``: the same, signed by ``sign_agent_card`` with ``jku`` naming the JWK Set it
  serves at ``/.well-known/jwks.json`` (item: ``key`` a PEM file, ``kid``).
- ``fastapi``: the same on FastAPI (``add_a2a_routes_to_fastapi(app, **routes.fastapi())``).
- ``bearer``: the README's app behind a bearer-token middleware (item ``token``): the
  card is public, every other request without the token gets 401.
- ``split``: ``bearer``'s app served on two ports, ``port`` (www: the card) and
  ``api_port`` (api: the card's interfaces name it): two origins.
- ``subpath``: the card and the interfaces under ``/agents/echo`` (top-level routes).
- ``mount``: the README's routes inside ``Mount("/agent", routes=...)``.
- ``extended``: ``bearer`` with ``capabilities.extended_agent_card`` and an extended card
  declaring one more skill.
- ``grpc-jsonrpc``: a card naming a GRPC interface (nothing speaks gRPC) and JSON-RPC.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path
from typing import Any

import uvicorn
from a2a.helpers import get_message_text, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    add_a2a_routes_to_fastapi,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from a2a_interview.card import load_private_key, public_jwk
from a2a_interview.server.sdk import agent_extension, interview_routes, sign_agent_card

CARD_PATH = "/.well-known/agent-card.json"


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = get_message_text(context.message) if context.message else ""
        await event_queue.enqueue_event(new_text_message(f"echo: {text}"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class Bearer:
    """A user's own auth middleware: the card is public, the rest needs the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope["path"].endswith(CARD_PATH):
            given = dict(scope["headers"]).get(b"authorization")
            if given != self.token:
                await JSONResponse({"error": "unauthorized"}, 401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def make_card(at: str, *, grpc: bool = False, extra_skill: bool = False) -> AgentCard:
    interfaces = [
        AgentInterface(url=f"{at}/a2a/jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=f"{at}/a2a/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    if grpc:
        grpc_at = AgentInterface(
            url="127.0.0.1:50051", protocol_binding="GRPC", protocol_version="1.0"
        )
        interfaces = [grpc_at, interfaces[0]]
    skills = [AgentSkill(id="echo", name="Echo", description="Says it back", tags=["echo"])]
    if extra_skill:
        skills.append(
            AgentSkill(
                id="audit", name="Audit", description="For signed-in callers", tags=["audit"]
            )
        )
    return AgentCard(
        name="Echo",
        description="Says back what it is told",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True, extensions=[agent_extension()]),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


def build(item: dict[str, Any]) -> ASGIApp:
    variant = item["variant"]
    origin = f"http://127.0.0.1:{item['port']}"
    at = f"http://127.0.0.1:{item['api_port']}" if variant == "split" else origin
    prefix = {"subpath": "/agents/echo", "mount": "/agent"}.get(variant, "")
    card = make_card(at + prefix, grpc=variant == "grpc-jsonrpc")
    extended = None
    if variant == "extended":
        card.capabilities.extended_agent_card = True
        extended = make_card(at, extra_skill=True)
        extended.capabilities.extended_agent_card = True
    extra: list[Any] = []
    if variant == "signed":
        key = load_private_key(Path(item["key"]).read_bytes())
        jwks = {"keys": [public_jwk(key, item["kid"], "ES256")]}
        jku = f"{origin}/.well-known/jwks.json"
        card = sign_agent_card(card, key, kid=item["kid"], jku=jku)
        extra.append(Route("/.well-known/jwks.json", lambda _request: JSONResponse(jwks)))
    handler = DefaultRequestHandler(
        Echo(), InMemoryTaskStore(), agent_card=card, extended_agent_card=extended
    )
    inner = "" if variant == "mount" else prefix
    routes = interview_routes(
        card,
        jsonrpc_routes=[
            *create_jsonrpc_routes(handler, rpc_url=f"{inner}/a2a/jsonrpc"),
            *create_jsonrpc_routes(handler, rpc_url=f"{inner}/a2a/jsonrpc/"),
        ],
        rest_routes=create_rest_routes(handler, path_prefix=f"{inner}/a2a/rest"),
        card_url=f"{inner}{CARD_PATH}",
    )
    app: ASGIApp
    if variant == "fastapi":
        from fastapi import FastAPI

        fastapi = FastAPI()
        add_a2a_routes_to_fastapi(fastapi, **routes.fastapi())
        app = fastapi
    elif variant == "mount":
        app = Starlette(routes=[Mount(prefix, routes=list(routes))])
    else:
        app = Starlette(routes=[*extra, *routes])
    if "token" in item:
        app = Bearer(app, item["token"])
    return app


async def main(config: Path) -> None:
    servers = []
    for item in json.loads(config.read_text("utf-8"))["agents"]:
        app = build(item)
        sockets = []
        for port in (item["port"], item.get("api_port")):
            if port is None:
                continue
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", port))
            sockets.append(sock)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        servers.append(asyncio.create_task(server.serve(sockets=sockets)))
    print("listening", flush=True)
    await asyncio.gather(*servers)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
