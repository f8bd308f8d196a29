"""The proxy's test upstream (a plain a2a-sdk agent written from the SDK's own route
factories, using nothing of this library's serving code), the proxy served on a background
thread as ``run`` serves it, and the ``proxy`` command run as a user runs it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import select
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from a2a.helpers import new_task, new_text_status_update_event
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCard, Message, Part, Role, TaskState
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from a2a_interview import reference
from a2a_interview.server.proxy import ProxyApp, build_proxy
from a2a_interview.spec import INTERVIEW_URI
from needs import ROOT
from support.cli import COMMAND
from support.ports import free_socket
from support.servers import in_thread, serve

ACT = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}  # PROFILE §3.10
V1 = {"A2A-Version": "1.0"}
RPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
CARD = "/.well-known/agent-card.json"


class Executor(AgentExecutor):
    """Echoes a message; ``stream`` runs a task whose completion waits for a gate."""

    def __init__(self, state: Upstream) -> None:
        self.state = state

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        text = message.parts[0].text if message.parts else ""
        if text != "stream":
            reply = Message(
                message_id="reply-" + message.message_id,
                context_id=context.context_id or "",
                role=Role.ROLE_AGENT,
                parts=[Part(text="echo: " + text)],
            )
            await event_queue.enqueue_event(reply)
            return
        task_id, context_id = context.task_id or "", context.context_id or ""
        gate = self.state.gate(message.message_id)
        await event_queue.enqueue_event(
            new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED)
        )
        await event_queue.enqueue_event(
            new_text_status_update_event(task_id, context_id, TaskState.TASK_STATE_WORKING, "tick")
        )
        released = await asyncio.to_thread(gate.wait, 10)
        # "late": the gate was never opened, so the client did not see the first events
        # while the task was still running (a buffering proxy).
        text = "done" if released else "late"
        await event_queue.enqueue_event(
            new_text_status_update_event(task_id, context_id, TaskState.TASK_STATE_COMPLETED, text)
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def card_json(origin: str) -> dict[str, Any]:
    """The Stonework card on ``origin``: the interview and the terms extension declared."""
    return reference.unsigned_card(origin)


@dataclass
class Upstream:
    """The upstream's mutable state, shared with the test thread."""

    origin: str = ""
    card: AgentCard | None = None
    card_statuses: list[int] = field(default_factory=list)
    headers_seen: list[list[tuple[str, str]]] = field(default_factory=list)
    rpc_ended: list[str] = field(default_factory=list)
    gates: dict[str, threading.Event] = field(default_factory=dict)

    def gate(self, key: str) -> threading.Event:
        return self.gates.setdefault(key, threading.Event())

    def set_card(self, card: dict[str, Any]) -> None:
        self.card = ParseDict(card, AgentCard())

    def release(self) -> None:
        for gate in list(self.gates.values()):
            gate.set()


def upstream_app(state: Upstream, card: Callable[[str], dict[str, Any]] = card_json) -> Any:
    """A plain a2a-sdk agent (no a2a_interview serving code) on ``state.origin``."""

    def build_app(origin: str) -> Any:
        state.origin = origin
        state.set_card(card(origin))
        assert state.card is not None
        proposals = reference.proposals(origin)
        handler = DefaultRequestHandler(
            agent_executor=Executor(state), task_store=InMemoryTaskStore(), agent_card=state.card
        )

        async def current(_: AgentCard) -> AgentCard:
            assert state.card is not None
            return state.card

        async def terms(request: Request) -> Response:
            body = proposals.get(origin + request.url.path)
            if body is None:
                return Response(b"not found", status_code=404)
            return Response(body, media_type="application/json")

        async def echo(request: Request) -> Response:
            body = await request.body()
            return JSONResponse({
                "method": request.method,
                "path": request.url.path,
                "query": request.url.query,
                "headers": [[k.decode(), v.decode()] for k, v in request.headers.raw],
                "sha256": hashlib.sha256(body).hexdigest(),
                "length": len(body),
            })  # fmt: skip

        async def cross_origin(request: Request) -> Response:
            port = origin.rsplit(":", 1)[1]
            return RedirectResponse(f"http://localhost:{port}{CARD}", status_code=302)

        async def same_origin(request: Request) -> Response:
            return RedirectResponse(CARD, status_code=302)

        async def huge_stream(request: Request) -> Response:
            async def chunks() -> AsyncIterator[bytes]:
                yield b'{"name":"'
                for _ in range(40):
                    yield b"x" * 32768
                yield b'"}'

            return StreamingResponse(chunks(), media_type="application/json")

        app = Starlette(
            routes=[
                *create_agent_card_routes(state.card, card_modifier=current),
                Route("/terms/{name}", terms),
                Route("/echo", echo, methods=["GET", "POST", "PUT", "DELETE"]),
                Route("/moved" + CARD, cross_origin),
                Route("/same" + CARD, same_origin),
                Route("/huge-stream" + CARD, huge_stream),
                *create_jsonrpc_routes(handler, RPC),
                *create_rest_routes(handler, path_prefix=REST),
            ]
        )

        async def recording(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            path = scope["path"]

            async def watch(message: Any) -> None:
                if path == CARD and message["type"] == "http.response.start":
                    state.card_statuses.append(message["status"])
                await send(message)

            try:
                await app(scope, receive, watch)
            finally:
                if path == RPC:
                    state.rpc_ended.append(path)

        return recording

    return build_app


@contextmanager
def upstream_running(
    card: Callable[[str], dict[str, Any]] = card_json,
) -> Iterator[Upstream]:
    state = Upstream()
    with serve(upstream_app(state, card)):
        try:
            yield state
        finally:
            state.release()  # before the server stops: it waits for its tasks


@dataclass
class Proxy:
    origin: str
    app: ProxyApp
    http: httpx.Client

    def rpc(
        self, method: str, params: Any = None, *, request_id: Any = 1, headers: Any = ACT
    ) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        return self.http.post(RPC, content=json.dumps(body).encode(), headers=headers)


@contextmanager
def proxy_running(
    upstream: str, sock: socket.socket | None = None, **options: Any
) -> Iterator[Proxy]:
    """``build_proxy`` and uvicorn in one event loop on a background thread, as ``run``."""
    sock = sock or free_socket()
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def config() -> uvicorn.Config:
        app, _ = await build_proxy(upstream, **options)
        return uvicorn.Config(
            app, lifespan="on", log_level="warning", access_log=False, loop="asyncio",
            server_header=False, date_header=False, proxy_headers=False,
        )  # fmt: skip

    with (
        in_thread(config, [sock], must_stop=True) as server,
        httpx.Client(base_url=origin, timeout=20) as http,
    ):
        yield Proxy(origin, server.config.app, http)


def proxy_command(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*COMMAND, "proxy", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def first_line(process: subprocess.Popen[str], timeout: float = 60.0) -> str:
    """The command's first line on stdout, or "" when none came within ``timeout``
    seconds (a bare ``readline`` waits forever on a command that hangs)."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return process.stdout.readline() if ready else ""


def stopped(process: subprocess.Popen[str]) -> None:
    """Kill ``process`` if a test left it running, and reap it."""
    if process.poll() is None:
        process.kill()
        process.communicate(timeout=20)


def cli_serving(*args: str, attempts: int = 5) -> tuple[subprocess.Popen[str], int, str]:
    """``proxy`` started with ``args`` on a free loopback port; returns the process, the
    port and its first line. The port is chosen here (the default public URL names it),
    so another program may bind it between its choice and the command's bind (D-TEST-27):
    the command then refuses with "cannot listen" and is started again on another."""
    for _ in range(attempts):
        sock = free_socket()
        port = int(sock.getsockname()[1])
        sock.close()
        process = proxy_command(*args, "--port", str(port))
        first = first_line(process)
        if first:
            return process, port, first
        stopped(process)
        assert process.stderr is not None
        err = process.stderr.read()
        assert "cannot listen" in err, err
    raise AssertionError(f"no free port in {attempts} attempts")


def refusal(*args: str) -> str:
    process = proxy_command(*args)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 3, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("a2a-interview proxy: refusing to start: ")
    return lines[0]
