"""The project's own defaults work together (PROFILE §7, D-CLI-8).

A default ``verify`` of an agent with 100 skills on 3 interfaces ends ``consistent``
within the default deadline, behind a default ``proxy --declare`` (the command line, over
real loopback HTTP) and behind the default ``InterviewMiddleware``. It ended
``UNREACHABLE: rate_limited`` before: the run needed more calls than the proxy's default
rate limit allowed in the verifier's waits (docs/decisions.md D-CLI-8, "Defaults that fit").
"""

from __future__ import annotations

import copy
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.spec import CARD_PATH, INTERVIEW_URI
from a2a_interview.verifier import verify
from support.servers import closed_port_url, serve

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[1]
SKILLS = 100
PATHS = {"/a2a/jsonrpc": "JSONRPC", "/a2a/rest": "HTTP+JSON", "/a2a/v2/jsonrpc": "JSONRPC"}


def card_of(origin: str, *, declared: bool) -> dict[str, Any]:
    """The reference card grown to 100 skills on 3 interfaces."""
    card = reference.unsigned_card(origin)
    model = card["skills"][0]
    for n in range(SKILLS - len(card["skills"])):
        skill = copy.deepcopy(model)
        skill["id"], skill["name"] = f"skill-{n:03}", f"Skill {n}"
        card["skills"].append(skill)
    card["supportedInterfaces"] = [
        {"url": origin + path, "protocolBinding": binding, "protocolVersion": "1.0"}
        for path, binding in PATHS.items()
    ]
    if not declared:
        extensions = card["capabilities"]["extensions"]
        card["capabilities"]["extensions"] = [e for e in extensions if e["uri"] != INTERVIEW_URI]
    return card


def plain_agent(origin: str, card: dict[str, Any]) -> Starlette:
    """An agent that knows nothing of the interview: its card, its proposals, and a
    host's answers to methods and routes it does not have."""
    proposals = reference.proposals(origin)

    async def served_card(_: Request) -> Response:
        return JSONResponse(card)

    async def proposal(request: Request) -> Response:
        body = proposals.get(origin + request.url.path)
        return Response(body, media_type="application/json") if body else Response(status_code=404)

    async def jsonrpc(request: Request) -> Response:
        try:
            request_id = json.loads(await request.body()).get("id")
        except (ValueError, AttributeError):
            request_id = None
        error = {"code": -32601, "message": "Method not found"}
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error})

    routes = [Route(CARD_PATH, served_card), Route("/terms/{name}", proposal)]
    routes += [Route(p, jsonrpc, methods=["POST"]) for p, b in PATHS.items() if b == "JSONRPC"]
    return Starlette(routes=routes)


@contextmanager
def default_proxy(upstream: str) -> Iterator[str]:
    """``a2a-interview proxy --upstream URL --port N --declare``, every other option its
    default (the rate limit among them), as a user runs it."""
    port = closed_port_url().rsplit(":", 1)[1]
    command = [sys.executable, "-c", "from a2a_interview.cli import entry; entry()", "proxy",
               "--upstream", upstream, "--port", port, "--declare"]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("a2a-interview proxy: serving at"), process.stderr
        yield f"http://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def _consistent(document: dict[str, Any], *, thorough: bool) -> None:
    assert document["outcome"] == "consistent", (
        document.get("incomplete") or [c for run in document["runs"] for c in run["conflicts"]][:3]
    )
    assert not any(a["reason"] == "selectors_not_asked" for a in document["advisories"])
    interfaces = {call["interface"] for call in document["runs"][0]["calls"]}
    # Thorough, every interface; sampled (the default, D-VERIFY-63), one per binding.
    assert len(interfaces) == (3 if thorough else len(set(PATHS.values())))


@pytest.mark.parametrize("thorough", [False, True])
async def test_a_default_verify_finishes_behind_a_default_proxy(thorough: bool) -> None:
    with (
        serve(lambda o: plain_agent(o, card_of(o, declared=False))) as upstream,
        default_proxy(upstream) as proxy,
    ):
        record = await verify(proxy, thorough=thorough)  # every other option its default
    _consistent(record.to_json(), thorough=thorough)


@pytest.mark.parametrize("thorough", [False, True])
async def test_a_default_verify_finishes_behind_the_default_middleware(thorough: bool) -> None:
    def factory(origin: str) -> Any:
        card = card_of(origin, declared=True)
        declarations = build(card, reference.proposals(origin))
        return InterviewMiddleware(plain_agent(origin, card), declarations)

    with serve(factory) as origin:
        record = await verify(origin, thorough=thorough)
    _consistent(record.to_json(), thorough=thorough)
