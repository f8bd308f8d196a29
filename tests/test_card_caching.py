"""The card routes this project serves pass the A2A TCK's card caching tests
(docs/decisions.md D-SERVE-27, "TCK card caching", and D-PROXY-33).

What the TCK (``tests/compatibility/agent_card/test_agent_card_caching.py``) does, repeated
here against each route: ``GET {base}/.well-known/agent-card.json``, a 2xx, then
CARD-CACHE-001 a ``Cache-Control`` header whose value contains ``max-age`` (case
folded), CARD-CACHE-002 an ``ETag`` header, CARD-CACHE-003 a ``Last-Modified`` header (a
MAY, yet a failure when absent: D-SERVE-28). Our own ETag stays strong, and a
matching ``If-None-Match`` is still a 304.
"""

from __future__ import annotations

from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from starlette.applications import Starlette

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.server import demo
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.server.sdk import agent_card_from_json, interview_routes
from support.proxy import proxy_running, upstream_running
from support.recorder import recorder, undeclared

CARD = "/.well-known/agent-card.json"


def tck_card_caching(response: httpx.Response) -> None:
    """The assertions of the TCK's CARD-CACHE-001, -002 and -003, on one response."""
    response.raise_for_status()
    cache_control = response.headers.get("cache-control")
    assert cache_control is not None, "CARD-CACHE-001: no Cache-Control"
    assert "max-age" in cache_control.lower(), f"CARD-CACHE-001: {cache_control!r}"
    assert response.headers.get("etag") is not None, "CARD-CACHE-002: no ETag"
    last_modified = response.headers.get("last-modified")
    assert last_modified is not None, "CARD-CACHE-003: no Last-Modified"
    assert parsedate_to_datetime(last_modified).tzinfo is not None  # an HTTP date, in GMT


def _strong(first: httpx.Response) -> str:
    """Our own ETag: strong (D-SERVE-3, D-PROXY-26), never weakened."""
    etag = first.headers["etag"]
    assert not etag.startswith("W/"), etag
    return etag


def _sdk_app(**options: Any) -> Starlette:
    card = agent_card_from_json(reference.unsigned_card("http://agent.test"))
    handler = DefaultRequestHandler(demo.executor(), InMemoryTaskStore(), card)
    routes = interview_routes(
        card,
        jsonrpc_routes=create_jsonrpc_routes(handler, rpc_url="/a2a/jsonrpc"),
        rest_routes=create_rest_routes(handler, path_prefix="/a2a/rest"),
        proposals=reference.proposals("http://agent.test"),
        **options,
    )
    return Starlette(routes=list(routes))


@pytest.mark.anyio
async def test_the_sdk_integrations_card_route_passes_the_tcks_card_caching_tests() -> None:
    # D-SERVE-27: interview_routes sent no Cache-Control (CARD-CACHE-001 failed) and no
    # Last-Modified (CARD-CACHE-003 skipped).
    app = _sdk_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as c:
        first = await c.get(CARD)
        tck_card_caching(first)
        etag = _strong(first)
        again = await c.get(CARD, headers={"If-None-Match": etag})
        head = await c.head(CARD)
    assert (again.status_code, again.content) == (304, b"")
    assert again.headers["last-modified"] == first.headers["last-modified"]
    assert head.headers["last-modified"] == first.headers["last-modified"]
    # The card route kept for url_path_for and FastAPI says the same.
    alone = Starlette(routes=[app.routes[1]])
    transport = httpx.ASGITransport(app=alone)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as c:
        tck_card_caching(await c.get(CARD))


@pytest.mark.anyio
async def test_the_sdk_integration_still_takes_the_callers_cache_control() -> None:
    transport = httpx.ASGITransport(app=_sdk_app(cache_control="no-cache, max-age=0"))
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as c:
        got = await c.get(CARD)
    assert got.headers.get_list("cache-control") == ["no-cache, max-age=0"]


async def _not_found(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.mark.anyio
async def test_the_middlewares_card_route_passes_the_tcks_card_caching_tests() -> None:
    # D-SERVE-29: the middleware sent Cache-Control and its ETag but no Last-Modified, so
    # the TCK's CARD-CACHE-003 failed for a card it serves (D-SERVE-28: a MAY, failed).
    at = "http://agent.test"
    declarations = build(reference.unsigned_card(at), reference.proposals(at))
    transport = httpx.ASGITransport(app=InterviewMiddleware(_not_found, declarations))
    async with httpx.AsyncClient(transport=transport, base_url="http://agent.test") as c:
        first = await c.get(CARD)
        tck_card_caching(first)
        etag = _strong(first)
        again = await c.get(CARD, headers={"If-None-Match": etag})
        head = await c.head(CARD)
        later = await c.get(CARD)
    assert (again.status_code, again.content) == (304, b"")
    # Stable while the declarations are unchanged: the date they were taken up.
    for response in (again, head, later):
        assert response.headers["last-modified"] == first.headers["last-modified"]


@pytest.mark.parametrize("declare", [False, True])
def test_the_proxys_card_route_passes_the_tcks_card_caching_tests(declare: bool) -> None:
    # D-PROXY-33: in front of a plain a2a-sdk agent (its card route sends no caching
    # fields), the proxy served the card with none: CARD-CACHE-001 failed.
    card = undeclared if declare else reference.unsigned_card
    with upstream_running(card) as up:
        direct = httpx.get(up.origin + CARD)
        assert "cache-control" not in direct.headers  # the TCK fails the agent itself
        assert "last-modified" not in direct.headers
        options: dict[str, Any] = {"declare": True, "public_url": up.origin} if declare else {}
        with proxy_running(up.origin, poll=0, **options) as proxy:
            first = proxy.http.get(CARD)
            tck_card_caching(first)
            etag = first.headers["etag"]
            if declare:  # the proxy's own tag of the card it changed
                _strong(first)
            again = proxy.http.get(CARD, headers={"If-None-Match": etag})
            later = proxy.http.get(CARD)
    assert (again.status_code, again.content) == (304, b"")
    assert later.headers["last-modified"] == first.headers["last-modified"]  # stable
    assert later.headers["etag"] == etag


def test_the_proxy_never_replaces_upstreams_own_caching_fields() -> None:
    cached = [(b"cache-control", b"max-age=5"), (b"etag", b'W/"up-1"'),
              (b"last-modified", b"Tue, 15 Nov 1994 12:45:26 GMT")]  # fmt: skip
    with recorder() as up:
        up.set_card(reference.unsigned_card(up.origin), cached)
        with proxy_running(up.origin, poll=0) as proxy:
            got = proxy.http.get(CARD)
    tck_card_caching(got)
    assert [(n, v) for n, v in got.headers.raw if n.lower() in dict(cached)] == cached
