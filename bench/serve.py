"""Serving benchmark: the interview layer against the baselines it must keep up with.

    .venv/bin/python bench/serve.py --duration 3 --rounds 3    # ~6 minutes; needs wrk
    .venv/bin/python bench/serve.py --only i --only p --duration 2 --rounds 2  # a quick look

Every server is one uvicorn worker on 127.0.0.1 (uvloop, httptools, access log off, the
same settings for all), each app in its own process on its own port; load comes from
``wrk`` (a Lua script sets the method, body and headers). The variants of one question
are measured alternately, round after round (the order reversed every other round), and
each round's req/s ratio is taken; the figure is the median of those ratios:

(a) ``interview/identity`` req/s ÷ a bare Starlette route returning the same response
    bytes (goal ≥ 0.95), through the a2a-sdk integration and through the ASGI
    middleware, every request the same (the same JSON-RPC id);
(i) the same with a fresh JSON-RPC id on every request, as real clients send (the Lua
    script counts; a number, and a string ``"r-<n>"``): goal ≥ 0.9;
(p) the proxy (``proxy --declare`` in front of the a2a-sdk agent, served on its own
    ``server/listen.py`` stack) ÷ the bare route served on that same stack, with the
    bytes the proxy answers: repeated id (goal ≥ 0.95) and fresh ids (goal ≥ 0.9);
(f) the same in FastAPI: the a2a-sdk integration added with ``add_a2a_routes_to_fastapi``
    ÷ a bare FastAPI route serving the same bytes (goal ≥ 0.8);
(b) the card as this project serves it ÷ a2a-sdk's own ``create_agent_card_routes`` for
    the same card (goal ≥ 5);
(c) ``SendMessage`` req/s on an a2a-sdk app with the interview layer ÷ without (goal ≥
    0.98), with ``A2A-Version: 1.0``, not activated and activated (``A2A-Extensions``
    naming the interview: the layer then reads and scans the body);
(s) ``SendMessage`` through the proxy ÷ through a plain hop: the same proxy on the same
    stack with its interview and ``declare`` handling taken out (D-PROXY-43), so both
    make the same hop to the same agent; not activated and activated (goal ≥ 0.98).
(d) the bare route served with this package's connection bounds (``server/listen.py``:
    the counting and timing protocol of ``demo serve`` and the proxy) ÷ plain uvicorn
    httptools (goal ≥ 0.95).

Before the load, each app is also timed in process (its ASGI callable called directly,
no server, no socket, the variants in turns, under uvloop as the servers run): the CPU
each one spends per request, which is far steadier than req/s on a shared machine (the
proxy in process reaches its agent through ``httpx.ASGITransport``). ``SendMessage``
itself varies by more than the layer costs, so for (c) and (s) the layer is timed on a
stub host and the ratio that cost implies is printed beside the SDK's own time.

Not a test: nothing here asserts a time; it prints figures and exits 0 (1 when a server
answers wrongly, 2 when wrk is missing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from a2a_interview.spec import INTERVIEW_URI

RPC = "/a2a/jsonrpc"
CARD = "/.well-known/agent-card.json"
IDENTITY = b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}'
SEND = (
    b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1",'
    b'"contextId":"c-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
)
SERVERS = (
    "bare",
    "bare@bounded",
    "bare-fastapi",
    "sdk",
    "sdk+interview",
    "sdk+middleware",
    "fastapi+interview",
    "proxy",
    "hop",
    "bare@proxy",
)
# The proxy's own stack (``proxy.server_config``): the listening options of every server
# on it, the proxy and the bare route it is compared with alike.
PROXY_STACK = {"per_connection": 2, "lifespan": "on", "server_header": False,
               "date_header": False, "proxy_headers": False}  # fmt: skip
ACTIVATED = {"Content-Type": "application/json", "A2A-Extensions": INTERVIEW_URI,
             "A2A-Version": "1.0"}  # fmt: skip


# ---------------------------------------------------------------- the servers (children)


def _sdk_parts() -> tuple[Any, Any, dict[str, bytes]]:
    from a2a.helpers import new_text_message
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCard, Role
    from google.protobuf.json_format import ParseDict

    from a2a_interview import reference

    class Echo(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            text = context.message.parts[0].text if context.message else ""
            await event_queue.enqueue_event(
                new_text_message(
                    "echo: " + text, role=Role.ROLE_AGENT, context_id=context.context_id
                )
            )

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            return None

    # One card for every server (the declared origin, not the listening port), so all
    # of them give the very same answer bytes.
    card = ParseDict(reference.unsigned_card(), AgentCard())
    handler = DefaultRequestHandler(
        agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=card
    )
    return card, handler, reference.proposals()


def build_app(name: str) -> Any:
    """The ASGI app of one server variant."""
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from starlette.applications import Starlette

    card, handler, proposals = _sdk_parts()
    jsonrpc = create_jsonrpc_routes(handler, RPC)
    rest = create_rest_routes(handler, path_prefix="/a2a/rest")
    if name == "sdk":
        return Starlette(routes=[*create_agent_card_routes(card), *jsonrpc, *rest])
    if name == "sdk+interview":
        from a2a_interview.server.sdk import interview_routes

        routes = interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest,
                                  proposals=proposals)  # fmt: skip
        return Starlette(routes=list(routes))
    if name == "fastapi+interview":
        from a2a.server.routes import add_a2a_routes_to_fastapi
        from fastapi import FastAPI

        from a2a_interview.server.sdk import interview_routes

        routes = interview_routes(card, jsonrpc_routes=jsonrpc, rest_routes=rest,
                                  proposals=proposals)  # fmt: skip
        app = FastAPI()
        add_a2a_routes_to_fastapi(app, **routes.fastapi())
        return app
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict

    from a2a_interview import rpc
    from a2a_interview.declarations import build

    declarations = build(agent_card_to_dict(card), proposals)
    if name == "sdk+middleware":
        from a2a_interview.server.asgi import InterviewMiddleware

        plain = Starlette(routes=[*create_agent_card_routes(card), *jsonrpc, *rest])
        return InterviewMiddleware(plain, declarations)
    if name.startswith("stub"):
        # The JSON-RPC route of a host that reads the body and answers at once: what the
        # layer adds to ordinary traffic, without the SDK's own (noisy) cost.
        from starlette.responses import Response
        from starlette.routing import Route

        async def stub(request: Any) -> Response:
            await request.body()
            return Response(b'{"id":1,"jsonrpc":"2.0","result":{}}', media_type="application/json")

        host = [Route(RPC, stub, methods=["POST"])]
        if name == "stub+interview":
            from a2a_interview.server.sdk import interview_routes

            return Starlette(routes=list(interview_routes(card, jsonrpc_routes=host,
                                                          proposals=proposals)))  # fmt: skip
        plain = Starlette(routes=[*create_agent_card_routes(card), *host])
        if name == "stub+middleware":
            from a2a_interview.server.asgi import InterviewMiddleware

            return InterviewMiddleware(plain, declarations)
        return plain
    if name in ("bare", "bare-fastapi"):
        from starlette.responses import Response
        from starlette.routing import Route

        act = rpc.activation([("A2A-Extensions", INTERVIEW_URI)])
        reply = rpc.jsonrpc(IDENTITY, act, declarations.interview)
        assert reply is not None
        body, headers = reply.body, dict(reply.headers)

        if name == "bare-fastapi":
            from fastapi import FastAPI
            from starlette.requests import Request

            async def fastapi_answer(request: Request) -> Response:
                return Response(body, headers=headers)

            # Resolved here: this module's postponed annotations would name a local.
            fastapi_answer.__annotations__ = {"request": Request, "return": Response}

            app = FastAPI()
            app.add_api_route(RPC, fastapi_answer, methods=["POST"])
            return app
        return bare_app(body, headers)
    raise SystemExit(f"unknown server {name!r}")


async def build_proxy_app(name: str, upstream: str, public_url: str, transport: Any = None) -> Any:
    """``proxy --declare`` in front of ``upstream`` (``name`` "proxy"), or the plain hop
    (``name`` "hop"): the same proxy with its interview and ``declare`` handling taken
    out, so it reads the body and forwards exactly as the proxy does (D-PROXY-43)."""
    from a2a_interview import reference
    from a2a_interview.server.proxy import build_proxy

    # wrk is one client of many connections: no per-client share of the upstream
    # connections (D-PROXY-41), else most of its SendMessage calls get 503.
    app, _ = await build_proxy(upstream, poll=0, transport=transport, public_url=public_url,
                               declare=True, proposals=reference.proposals(),
                               upstream_client_connections=0)  # fmt: skip
    if name == "hop":
        front = app.app

        async def never(*args: Any) -> bool:
            return False

        front._interview = never
        front._extended = never
    return app


def _retrying(what: str, attempt: Any) -> Any:
    deadline = time.monotonic() + 30
    while True:
        try:
            return attempt()
        except Exception:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not answer") from None
            time.sleep(0.1)


def serve_child(name: str, port: int, origins: dict[str, str]) -> None:
    import asyncio

    import uvicorn

    options: dict[str, Any] = {"host": "127.0.0.1", "port": port, "workers": 1,
                               "loop": "uvloop", "access_log": False, "log_level": "warning",
                               "lifespan": "off"}  # fmt: skip
    app_name, _, how = name.partition("@")
    if app_name in ("proxy", "hop"):
        # The agent behind it is the plain a2a-sdk server, started beside this one.
        app = _retrying("the upstream agent", lambda: asyncio.run(
            build_proxy_app(app_name, origins["sdk"], origins[name])))  # fmt: skip
        how = "proxy"
    else:
        app = build_app(app_name)
    if how == "proxy" and app_name == "bare":
        # The bytes (and headers) the proxy answers, taken from the proxy itself.
        import httpx

        answer = _retrying("the proxy", lambda: httpx.post(
            origins["proxy"] + RPC, content=IDENTITY, headers=ACTIVATED, timeout=5))  # fmt: skip
        kept = {k: answer.headers[k] for k in ("content-type", "a2a-extensions")}
        app = bare_app(answer.content, kept)
    if how in ("bounded", "proxy"):
        from a2a_interview.server import listen

        if how == "proxy":
            options.update(PROXY_STACK)
        config = listen.config(app, listen.DEFAULT_BOUNDS, **options)
    else:
        config = uvicorn.Config(app, http="httptools", **options)
    uvicorn.Server(config).run()


def bare_app(body: bytes, headers: dict[str, str]) -> Any:
    """A bare Starlette route answering every POST with ``body``."""
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def answer(request: Any) -> Response:
        return Response(body, headers=headers)

    return Starlette(routes=[Route(RPC, answer, methods=["POST"])])


# ---------------------------------------------------------------- load (the parent)


@dataclass
class Run:
    rps: float
    p50_ms: float
    p99_ms: float


@dataclass
class Case:
    label: str
    server: str
    method: str
    path: str
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    # None: every request the same body; "int" or "str": a fresh JSON-RPC id on each
    # (a number, or the string "r-<n>"), as real clients send.
    ids: str | None = None
    goal: float | None = None  # its own goal, in place of its question's
    runs: list[Run] = field(default_factory=list)

    def bodies(self) -> Iterator[bytes]:
        """The request bodies in order (the same one, or one per fresh id)."""
        if self.ids is None:
            while True:
                yield self.body
        head, _, tail = self.body.partition(b'"id":1,')
        n = 1_000_000
        while True:
            n += 1
            spelled = b"%d" % n if self.ids == "int" else b'"r-%d"' % n
            yield head + b'"id":' + spelled + b"," + tail

    def median(self, attr: str) -> float:
        return statistics.median(getattr(r, attr) for r in self.runs)


def _lua(case: Case) -> str:
    lines = [f'wrk.method = "{case.method}"']
    if case.body:
        lines.append(f"wrk.body = {json.dumps(case.body.decode())}")
    for name, value in case.headers.items():
        lines.append(f'wrk.headers["{name}"] = "{value}"')
    if case.ids is not None:
        # A fresh id on every request, distinct across wrk's threads (each thread its
        # own range): the id is spliced into the body, every other byte kept.
        head, _, tail = case.body.decode().partition('"id":1,')
        quote = '\\"' if case.ids == "str" else ""
        prefix = "r-" if case.ids == "str" else ""
        lines += [
            "local threads = 0",
            "function setup(thread)",
            "  thread:set('base', threads * 1000000000)",
            "  threads = threads + 1",
            "end",
            "function init(args) counter = base end",
            "function request()",
            "  counter = counter + 1",
            f"  local body = {json.dumps(head)} .. '\"id\":{quote}{prefix}' .. counter .. "
            f"'{quote},' .. {json.dumps(tail)}",
            "  return wrk.format(nil, nil, nil, body)",
            "end",
        ]
    return "\n".join(lines) + "\n"


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _latency(text: str, pct: str) -> float:
    match = re.search(rf"^\s*{pct}%\s+([\d.]+)(us|ms|s)\s*$", text, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no {pct}% latency in wrk output:\n{text}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def wrk(url: str, script: Path, seconds: float, threads: int, connections: int) -> Run:
    out = subprocess.run(
        ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds:g}s", "--latency",
         "--timeout", "10s", "-s", str(script), url],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors or "Socket errors" in out:
        raise RuntimeError(f"wrk saw failed requests against {url}:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return Run(rps, _latency(out, "50"), _latency(out, "99"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def servers(wanted: set[str]) -> Iterator[dict[str, str]]:
    """The server variants ``wanted`` (and those they need: the agent behind the proxy,
    the proxy whose bytes the bare route on its stack serves), each in its own process;
    yields name -> origin."""
    if wanted & {"proxy", "hop", "bare@proxy"}:
        wanted = wanted | {"sdk", "proxy"}
    children: list[subprocess.Popen[bytes]] = []
    origins = {name: f"http://127.0.0.1:{_free_port()}" for name in SERVERS if name in wanted}
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    try:
        for name, origin in origins.items():
            port = origin.rsplit(":", 1)[1]
            children.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        __file__,
                        "--serve",
                        name,
                        "--port",
                        port,
                        "--origins",
                        json.dumps(origins),
                    ],
                    env=env,
                )
            )
        for (name, origin), child in zip(origins.items(), children, strict=True):
            deadline = time.monotonic() + 30
            while True:
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", int(origin.rsplit(":", 1)[1]))) == 0:
                        break
                if child.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server {name} did not start")
                time.sleep(0.05)
        yield origins
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def check(case: Case, origin: str) -> bytes:
    """One request before the load: the server must answer correctly."""
    import httpx

    response = httpx.request(case.method, origin + case.path, content=case.body or None,
                             headers=case.headers, timeout=10)  # fmt: skip
    if response.status_code != 200:
        raise RuntimeError(f"{case.label}: HTTP {response.status_code}")
    return response.content


def in_process(group: list[Case], seconds: float = 2.0, *, stub: bool = False) -> list[float]:
    """CPU microseconds of one request through each case's ASGI app, called directly.

    The apps of the group run in turns of a small batch each, so background noise falls
    on all of them alike. The proxy and the hop reach their agent (the stub host, or the
    a2a-sdk app) through ``httpx.ASGITransport``; with ``stub``, the stub host.
    """
    import asyncio

    import httpx

    async def app_of(case: Case) -> Any:
        name, _, how = case.server.partition("@")
        if name in ("proxy", "hop"):
            transport = httpx.ASGITransport(app=_at_rpc(build_app("stub" if stub else "sdk")))
            return await build_proxy_app(name, "http://agent.test", "http://127.0.0.1:8000",
                                         transport)  # fmt: skip
        if how == "proxy":
            proxy = await build_proxy_app("proxy", "http://agent.test", "http://127.0.0.1:8000",
                                          httpx.ASGITransport(app=build_app("sdk")))  # fmt: skip
            answer = await _call(proxy, case, IDENTITY)
            return bare_app(answer, {"content-type": "application/json",
                                     "a2a-extensions": INTERVIEW_URI})  # fmt: skip
        return build_app(name)

    async def measure() -> list[float]:
        apps = [await app_of(case) for case in group]
        bodies = [case.bodies() for case in group]

        async def batch(i: int, count: int) -> float:
            app, case, source = apps[i], group[i], bodies[i]
            todo = [next(source) for _ in range(count)]
            start = time.process_time()  # CPU time: steadier than the clock when shared
            for body in todo:
                await _call(app, case, body)
            return time.process_time() - start

        first = await batch(0, 20)
        count = max(5, int(0.02 / max(first / 20, 1e-7)))  # about 20 ms a batch
        spent = [0.0] * len(group)
        done = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for i in range(len(group)):
                spent[i] += await batch(i, count)
            done += count
        return [t / done * 1e6 for t in spent]

    # The event loop the servers run (uvloop, D-SERVE-50): its timers and tasks cost
    # differently from the default loop's.
    try:
        import uvloop
    except ImportError:
        return asyncio.run(measure())
    return uvloop.run(measure())


def _at_rpc(app: Any) -> Any:
    """``app`` taking a POST to ``/`` as one to the JSON-RPC path: ``httpx.ASGITransport``
    does not carry the raw target the proxy forwards (it arrives as ``/``)."""

    async def at_rpc(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == "/":
            scope = {**scope, "path": RPC, "raw_path": RPC.encode()}
        await app(scope, receive, send)

    return at_rpc


def _scope(case: Case, body: bytes) -> dict[str, Any]:
    headers = [(k.lower().encode(), v.encode()) for k, v in case.headers.items()]
    headers += [(b"host", b"127.0.0.1"), (b"content-length", str(len(body)).encode())]
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": case.method, "scheme": "http", "path": case.path,
        "raw_path": case.path.encode(), "query_string": b"", "root_path": "",
        "headers": headers, "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000), "state": {},
    }  # fmt: skip


async def _call(app: Any, case: Case, body: bytes) -> bytes:
    """One request through ``app``, in process; the response body. As a server does,
    ``receive`` gives the body once, then waits for the response to end and says the
    client left."""
    import asyncio

    out: list[bytes] = []
    done = asyncio.Event()
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            out.append(message.get("body", b""))
            if not message.get("more_body", False):
                done.set()

    await app(_scope(case, body), receive, send)
    return b"".join(out)


def cases() -> list[tuple[str, str, float, list[Case]]]:
    """Every question: its letter, its label, its goal, and its cases (the first the
    baseline the others are divided by)."""
    ask = ACTIVATED
    send = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    bare = Case("bare Starlette route, same bytes", "bare", "POST", RPC, IDENTITY, ask)
    return [
        ("a", "(a) interview/identity ÷ bare route", 0.95, [
            bare,
            Case("interview/identity, a2a-sdk integration", "sdk+interview", "POST", RPC,
                 IDENTITY, ask),
            Case("interview/identity, ASGI middleware", "sdk+middleware", "POST", RPC,
                 IDENTITY, ask),
        ]),
        # The bare routes of (i) and (p) are sent fresh ids too (and ignore them): wrk
        # spends the same on writing each request for both sides of the ratio.
        ("i", "(i) fresh ids: interview/identity ÷ bare route", 0.9, [
            Case("bare Starlette route, fresh ids", "bare", "POST", RPC, IDENTITY, ask,
                 ids="int"),
            Case("fresh ids, a2a-sdk integration", "sdk+interview", "POST", RPC, IDENTITY,
                 ask, ids="int"),
            Case("fresh ids, ASGI middleware", "sdk+middleware", "POST", RPC, IDENTITY, ask,
                 ids="int"),
            Case("fresh string ids, a2a-sdk integration", "sdk+interview", "POST", RPC,
                 IDENTITY, ask, ids="str"),
            Case("fresh string ids, ASGI middleware", "sdk+middleware", "POST", RPC,
                 IDENTITY, ask, ids="str"),
        ]),
        ("p", "(p) interview/identity ÷ bare route, proxy stack", 0.95, [
            Case("bare Starlette route, proxy stack", "bare@proxy", "POST", RPC, IDENTITY,
                 ask),
            Case("same id, proxy --declare", "proxy", "POST", RPC, IDENTITY, ask),
        ]),
        ("p", "(p) fresh ids: interview/identity ÷ bare route, proxy stack", 0.9, [
            Case("bare Starlette route, proxy stack, fresh ids", "bare@proxy", "POST", RPC,
                 IDENTITY, ask, ids="int"),
            Case("fresh ids, proxy --declare", "proxy", "POST", RPC, IDENTITY, ask, ids="int"),
            Case("fresh string ids, proxy --declare", "proxy", "POST", RPC, IDENTITY, ask,
                 ids="str"),
        ]),
        ("f", "(f) interview/identity ÷ bare route, FastAPI", 0.8, [
            Case("bare FastAPI route, same bytes", "bare-fastapi", "POST", RPC, IDENTITY, ask),
            Case("interview/identity, a2a-sdk integration in FastAPI", "fastapi+interview",
                 "POST", RPC, IDENTITY, ask),
        ]),
        ("b", "(b) card ÷ a2a-sdk card route", 5.0, [
            Case("card, a2a-sdk create_agent_card_routes", "sdk", "GET", CARD),
            Case("card, a2a-sdk integration", "sdk+interview", "GET", CARD),
            Case("card, ASGI middleware", "sdk+middleware", "GET", CARD),
        ]),
        ("c", "(c) SendMessage with the layer ÷ without", 0.98, [
            Case("SendMessage, a2a-sdk alone", "sdk", "POST", RPC, SEND, send),
            Case("SendMessage, with the a2a-sdk integration", "sdk+interview", "POST", RPC,
                 SEND, send),
            Case("SendMessage, with the ASGI middleware", "sdk+middleware", "POST", RPC,
                 SEND, send),
            Case("SendMessage, activated, with the a2a-sdk integration", "sdk+interview",
                 "POST", RPC, SEND, ask),
            Case("SendMessage, activated, with the ASGI middleware", "sdk+middleware", "POST",
                 RPC, SEND, ask),
        ]),
        ("s", "(s) SendMessage through the proxy ÷ a plain hop", 0.98, [
            Case("SendMessage, plain hop", "hop", "POST", RPC, SEND, send),
            Case("SendMessage, through the proxy", "proxy", "POST", RPC, SEND, send),
            Case("SendMessage, activated, through the proxy", "proxy", "POST", RPC, SEND, ask),
        ]),
        ("d", "(d) with connection bounds ÷ without", 0.95, [
            Case("bare Starlette route, plain uvicorn", "bare", "POST", RPC, IDENTITY, ask),
            Case("bare Starlette route, connection bounds", "bare@bounded", "POST", RPC,
                 IDENTITY, ask),
        ]),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per run (3)")
    parser.add_argument("--rounds", type=int, default=5, help="alternations (5)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (2)")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections (32)")
    parser.add_argument(
        "--only",
        choices=("a", "i", "p", "f", "b", "c", "s", "d"),
        action="append",
        help="measure only these questions (repeatable; default: all); i and p are the "
        "fresh-id and proxy questions",
    )
    parser.add_argument("--origins", help=argparse.SUPPRESS)
    parser.add_argument(
        "--in-process-only", action="store_true", help="only the in-process timing (no wrk)"
    )
    args = parser.parse_args(argv)
    if args.serve:
        serve_child(args.serve, args.port, json.loads(args.origins))
        return 0
    if shutil.which("wrk") is None and not args.in_process_only:
        print("bench/serve.py needs wrk: apt-get install wrk (Debian/Ubuntu), "
              "brew install wrk (macOS)", file=sys.stderr)  # fmt: skip
        return 2

    chosen = [c for c in cases() if args.only is None or c[0] in args.only]
    goals = [(label, goal) for _, label, goal, _ in chosen]
    groups = [group for _, _, _, group in chosen]
    print(f"one uvicorn worker per server (uvloop, httptools, access log off) on 127.0.0.1; "
          f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s, "
          f"{args.rounds} alternating rounds; medians")  # fmt: skip
    print("\nASGI app time per request, in process (no server, no socket), microseconds:")
    for group in groups:
        if group[0].body == SEND:
            # SendMessage itself varies by more than the layer costs: measure the layer
            # on a stub host, and state the ratio that cost implies.
            (send_cost,) = in_process(group[:1])
            stubs = [Case(c.label, c.server.replace("sdk", "stub"), c.method, c.path, c.body,
                          c.headers) for c in group]  # fmt: skip
            base, *others = in_process(stubs, stub=True)
            print(f"  {group[0].label:52} {send_cost:8.1f}")
            for case, spent in zip(group[1:], others, strict=True):
                added = spent - base
                print(f"  {case.label:52} {send_cost + added:8.1f}  ({added:+.1f} on a stub "
                      f"host: implies {send_cost / (send_cost + added):.3f})")  # fmt: skip
            continue
        base, *others = in_process(group)
        print(f"  {group[0].label:52} {base:8.1f}")
        for case, spent in zip(group[1:], others, strict=True):
            print(f"  {case.label:52} {spent:8.1f}  ({spent - base:+.1f}; "
                  f"{base / spent:.2f} of the baseline's pace)")  # fmt: skip
    print()
    if args.in_process_only:
        return 0
    with (
        servers({c.server for group in groups for c in group}) as origins,
        tempfile.TemporaryDirectory() as tmp,
    ):
        scripts: dict[str, Path] = {}
        for group in groups:
            bodies = {c.label: check(c, origins[c.server]) for c in group}
            if group[0].body == IDENTITY and (
                len(set(bodies.values())) != 1 or not all(b'"result"' in b for b in bodies.values())
            ):
                print(f"the identity answers differ or are not answers: {bodies}",
                      file=sys.stderr)  # fmt: skip
                return 1
            if group[0].body == SEND and not all(b'"result"' in b for b in bodies.values()):
                print(f"SendMessage failed: {bodies}", file=sys.stderr)
                return 1
            for case in group:
                script = Path(tmp) / f"{len(scripts)}.lua"
                script.write_text(_lua(case))
                scripts[case.label] = script
                wrk(origins[case.server] + case.path, script, 1, args.threads, args.connections)
        for r in range(args.rounds):
            for group in groups:
                order = group if r % 2 == 0 else list(reversed(group))
                for case in order:
                    case.runs.append(
                        wrk(origins[case.server] + case.path, scripts[case.label],
                            args.duration, args.threads, args.connections)
                    )  # fmt: skip
    print()
    print(f"{'':46} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for group in groups:
        for case in group:
            print(f"{case.label:46} {case.median('rps'):9.0f} {case.median('p50_ms'):8.2f} "
                  f"{case.median('p99_ms'):8.2f}")  # fmt: skip
        print()
    print("ratio of req/s: the median of each round's ratio (range over rounds)")
    for (label, goal), group in zip(goals, groups, strict=True):
        base = group[0]
        for case in group[1:]:
            ratios = [c.rps / b.rps for c, b in zip(case.runs, base.runs, strict=True)]
            ratio = statistics.median(ratios)
            name = f"{label.split(' ', 1)[0]} {case.label}"
            aim = case.goal if case.goal is not None else goal
            mark = "ok" if ratio >= aim else "MISSED"
            spread = f"({min(ratios):.2f}-{max(ratios):.2f})"
            print(f"  {name:60} {ratio:6.2f} {spread:11}  goal >= {aim:g} {mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
