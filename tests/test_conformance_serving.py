"""The project's own serving layers pass the conformance kit (docs/conformance.md,
D-CONF-6): ``InterviewMiddleware`` serving each published vector's declarations answers
every call of the vector exactly; the middleware and the ``a2a-sdk`` integration
(Starlette and FastAPI) serving the reference card pass every call the runner derives
from their own served card. In process, through ``httpx.ASGITransport``.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2a_interview import reference
from a2a_interview.conformance.runner import Result, run_live, run_vector
from a2a_interview.conformance.vectors import Vector, read_vector
from a2a_interview.declarations import build
from a2a_interview.server.asgi import InterviewMiddleware
from conformance_serve import host  # the host's own dispatch: -32601, 404

SERVING = Path(__file__).resolve().parent.parent / "conformance" / "vectors" / "serving"


@functools.cache
def vector(name: str) -> Vector:
    return read_vector((SERVING / name).read_bytes())


def _cases() -> list[Any]:
    cases = []
    for path in sorted(SERVING.glob("*.json")):
        for call in vector(path.name).calls:
            cases.append(pytest.param(path.name, call.id, id=f"{path.stem}:{call.id}"))
    return cases


def _failures(results: list[Result]) -> list[tuple[str, str, list[str]]]:
    return [(r.id, r.verdict, [p.detail for p in r.problems]) for r in results if r.problems]


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "call_id"), _cases())
async def test_middleware_answers_every_vector_call(name: str, call_id: str) -> None:
    """Every rule of the vectors (interview §3-§6, PROFILE §3-§5): the middleware serving
    the vector's declarations gives the exact response of each call."""
    v = vector(name)
    one = dataclasses.replace(v, calls=tuple(c for c in v.calls if c.id == call_id))
    app = InterviewMiddleware(host, build(v.card, v.proposals))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app)) as client:
        results = await run_vector(client, "http://agent.example", one)
    assert _failures(results) == []


def _with_proposals(app: Any, files: dict[str, bytes]) -> Any:
    """``app`` with the reference proposals served beside it (the runner fetches them)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        url = f"http://agent.test{scope.get('path', '')}"
        if scope["type"] == "http" and url in files:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})  # fmt: skip
            await send({"type": "http.response.body", "body": files[url]})
            return
        await app(scope, receive, send)

    return wrapped


async def _live(app: Any) -> list[Result]:
    files = reference.proposals("http://agent.test")
    transport = httpx.ASGITransport(_with_proposals(app, files))
    async with httpx.AsyncClient(transport=transport) as client:
        _, results = await run_live(client, "http://agent.test")
    return results


@pytest.mark.anyio
async def test_middleware_passes_the_runner_on_its_own_card() -> None:
    """D-CONF-7: the runner reads the served card and derives every expectation from it;
    the middleware passes all of them, draft and profile level."""
    origin = "http://agent.test"
    declarations = build(reference.unsigned_card(origin), reference.proposals(origin))
    results = await _live(InterviewMiddleware(host, declarations))
    assert len(results) > 50
    assert _failures(results) == []


@pytest.mark.anyio
@pytest.mark.parametrize("framework", ["starlette", "fastapi"])
async def test_sdk_integration_passes_the_runner_on_its_own_card(framework: str) -> None:
    """D-CONF-7: the a2a-sdk integration, its card as the SDK serves it (0.3 members
    merged in), passes every call the runner derives from that card."""
    from stacks import Spies, sdk_app

    spies = Spies()
    results = await _live(sdk_app(framework, spies))
    assert len(results) > 50
    assert _failures(results) == []
    assert spies.executor == []  # PROFILE §3.8: nothing reached the executor
