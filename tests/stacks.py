"""The interview's in-process servers with spies, for the spelling and fuzz suites.

Each stack is a real application around the reference (Stonework) card: the ``a2a-sdk``
integration in a Starlette app and in a FastAPI app (the real SDK, its request handler and
task store, an executor that records every call), and ``InterviewMiddleware`` in front of
a host app that records every request it is given. ``call`` drives an ASGI app with a raw
request target, as uvicorn hands it over (``raw_path`` still percent-encoded, ``path``
decoded): httpx would remove dot segments before the app ever saw them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import add_a2a_routes_to_fastapi, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount, Route

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.server import demo
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.server.sdk import agent_card_from_json, interview_routes

ORIGIN = "http://agent.test"
RPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
CARD = "/.well-known/agent-card.json"


@dataclass
class Spies:
    """What reached the host: executor calls, SDK route calls, host app calls."""

    executor: list[str] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)

    def clear(self) -> None:
        self.executor.clear()
        self.routes.clear()

    @property
    def untouched(self) -> bool:
        return not self.executor and not self.routes


class SpyExecutor(AgentExecutor):
    """The demo's executor, recording every call first."""

    def __init__(self, spies: Spies) -> None:
        self.spies = spies
        self.inner = demo.executor()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.spies.executor.append("execute")
        await self.inner.execute(context, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.spies.executor.append("cancel")
        await self.inner.cancel(context, event_queue)


def _spied(routes: list[BaseRoute], spies: Spies) -> list[BaseRoute]:
    """The SDK's routes, each recording the requests it is handed (endpoints stay
    functions, so FastAPI's re-registration keeps the spy)."""
    out: list[BaseRoute] = []
    for route in routes:
        if isinstance(route, Route):
            endpoint = route.endpoint

            @functools.wraps(endpoint)
            async def spy(request: Any, _endpoint: Any = endpoint, _path: str = route.path) -> Any:
                spies.routes.append(_path)
                return await _endpoint(request)

            out.append(Route(route.path, spy, methods=sorted(route.methods or ()),
                             name=route.name))  # fmt: skip
        elif isinstance(route, Mount):
            inner = route.app

            async def spy_app(scope: Any, receive: Any, send: Any, _app: Any = inner) -> None:
                spies.routes.append("mount:" + scope["path"])
                await _app(scope, receive, send)

            out.append(Mount(route.path, app=spy_app, name=route.name))
        else:
            out.append(route)
    return out


def sdk_app(framework: str, spies: Spies, **options: Any) -> Any:
    """The reference agent as an a2a-sdk app with the interview (Starlette or FastAPI)."""
    card = agent_card_from_json(reference.unsigned_card(ORIGIN))
    handler = DefaultRequestHandler(SpyExecutor(spies), InMemoryTaskStore(), card)
    jsonrpc = _spied(create_jsonrpc_routes(handler, rpc_url=RPC), spies)
    rest = _spied(create_rest_routes(handler, path_prefix=REST), spies)
    routes = interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest,
                              proposals=reference.proposals(ORIGIN), **options)  # fmt: skip
    if framework == "starlette":
        return Starlette(routes=list(routes))
    app = FastAPI()
    add_a2a_routes_to_fastapi(app, **routes.fastapi())
    return app


def middleware_app(spies: Spies, **options: Any) -> Any:
    """``InterviewMiddleware`` in front of a host that records what it is handed and
    answers 404 ``host``, after reading the whole body."""

    async def host(scope: Any, receive: Any, send: Any) -> None:
        spies.routes.append(scope["path"])
        if scope["type"] == "http":
            more = True
            while more:
                message = await receive()
                more = message.get("more_body", False) and message["type"] == "http.request"
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"host"})

    declarations = build(reference.unsigned_card(ORIGIN), reference.proposals(ORIGIN))
    return InterviewMiddleware(host, declarations, **options)


@dataclass
class Response:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def header(self, name: bytes) -> bytes | None:
        return next((v for n, v in self.headers if n == name), None)


async def call(
    app: Any,
    method: str,
    target: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    body: bytes = b"",
) -> Response:
    """One request through ``app``; ``target`` is the raw request target (query too)."""
    raw_path, _, query = target.partition(b"?")
    hdrs = [(b"host", b"agent.test"), *(headers or [])]
    if body or method == "POST":
        hdrs.append((b"content-length", b"%d" % len(body)))
    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1", "method": method, "scheme": "http",
        "path": unquote(raw_path.decode("latin-1"), encoding="latin-1"),
        "raw_path": raw_path, "query_string": query, "root_path": "", "headers": hdrs,
        "client": ("127.0.0.1", 40000), "server": ("agent.test", 80), "state": {},
    }  # fmt: skip
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[Any] = []

    async def receive() -> Any:
        return pending.pop() if pending else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return Response(start["status"], [(n.lower(), v) for n, v in start["headers"]], data)
