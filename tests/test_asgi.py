"""``InterviewMiddleware`` in front of a plain ASGI app: its own card route and the edges
of the ASGI scope. The bindings themselves are tested in test_rpc.py and over the SDK."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.server.asgi import InterviewMiddleware, if_none_match
from a2a_interview.spec import INTERVIEW_URI

ORIGIN = "https://stonework.example"
CARD = "/.well-known/agent-card.json"


async def host(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b"host"})


def middleware() -> InterviewMiddleware:
    return InterviewMiddleware(host, build(reference.unsigned_card(), reference.proposals()))


@pytest.mark.anyio
async def test_card_revalidation_uses_the_weak_comparison() -> None:
    # RFC 9110 §13.1.2 (docs/decisions.md D-SERVE-3): If-None-Match compares weakly,
    # and "*" matches any current representation; as the SDK routes and the proxy do.
    transport = httpx.ASGITransport(app=middleware())
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as c:
        first = await c.get(CARD)
        etag = first.headers["etag"]
        for header in (etag, "W/" + etag, f'"x", W/{etag}', "*"):
            again = await c.get(CARD, headers={"If-None-Match": header})
            assert (again.status_code, again.content) == (304, b""), header
            assert again.headers["etag"] == etag
        other = await c.get(CARD, headers={"If-None-Match": '"x", W/"y"'})
        assert other.status_code == 200 and other.content == first.content


@pytest.mark.anyio
async def test_a_scope_without_raw_path_is_served() -> None:
    # ASGI HTTP scope: raw_path is optional and may be None; ordinary traffic still
    # reaches the app instead of failing in the middleware.
    sent: list[Any] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http", "method": "GET", "path": "/elsewhere", "raw_path": None,
        "query_string": b"", "headers": [], "client": ("127.0.0.1", 1),
    }  # fmt: skip
    await middleware()(scope, receive, send)
    assert sent[0]["status"] == 404 and sent[1]["body"] == b"host"


@pytest.mark.anyio
async def test_an_interface_url_that_does_not_parse_is_skipped() -> None:
    # urlsplit raises ValueError for a malformed IPv6 host: that interface names no path
    # to answer on, and the others (and ordinary traffic) are served as before.
    card = reference.unsigned_card()
    card["supportedInterfaces"][0]["url"] = "https://[::1/a2a/jsonrpc"
    declarations = build(card, reference.proposals())
    app = InterviewMiddleware(host, declarations)
    act = {"A2A-Extensions": INTERVIEW_URI, "A2A-Version": "1.0"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as c:
        rest = await c.get("/a2a/rest/interview/identity", headers=act)
        assert rest.content == declarations.interview.answer("identity")
        assert (await c.get("/elsewhere")).content == b"host"


@pytest.mark.parametrize(
    ("header", "etag", "matches"),
    [
        (b'"a"', b'"a"', True),
        (b'W/"a"', b'"a"', True),
        (b'"a"', b'W/"a"', True),  # D-PROXY-3: a2a-js serves weak tags; the proxy kept them
        (b'W/"a"', b'W/"a"', True),
        (b'"x", W/"a"', b'W/"a"', True),
        (b"*", b'W/"a"', True),
        (b'"b"', b'W/"a"', False),
        (b'W/"b"', b'"a"', False),
    ],
)
def test_if_none_match_is_the_weak_comparison(header: bytes, etag: bytes, matches: bool) -> None:
    # RFC 9110 §13.1.2: If-None-Match uses the weak comparison, whichever side is weak.
    assert if_none_match(header, etag) is matches
