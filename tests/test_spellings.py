"""Every spelling of an interview request (PROFILE §3.9, issue 8 finding 2) through the
a2a-sdk integration (Starlette and FastAPI) and ``InterviewMiddleware``: answered or
refused, never handed to the host's routes or the executor; what passes on is untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.spec import INTERVIEW_URI
from stacks import CARD, ORIGIN, RPC, Spies, call, middleware_app, sdk_app

pytestmark = pytest.mark.anyio

ACT = [(b"a2a-extensions", INTERVIEW_URI.encode())]
JSON = [(b"content-type", b"application/json"), (b"a2a-version", b"1.0")]
IDENTITY = b'{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'
BATCH = (
    b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}},'
    b'{"jsonrpc":"2.0","id":2,"method":"interview/identity"}]'
)
INVALID_REQUEST = b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'
SEND = (
    b'{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m",'
    b'"role":"ROLE_USER","parts":[{"text":"hi"}]}}}'
)

RPC_SPELLINGS = [
    b"/a2a/x/../jsonrpc",
    b"/a2a/./jsonrpc",
    b"/a2a//jsonrpc",
    b"//a2a/jsonrpc",
    b"/a2a/%2e/jsonrpc",
    b"/a2a/%2E%2E/a2a/jsonrpc",
    b"/a2a/%6Asonrpc",
    b"/%61%32%61/jsonrpc",
    b"/a2a/jsonrpc/",
    b"/a2a/jsonrpc/.",
    b"/../a2a/jsonrpc",
    b"/a2a%2Fjsonrpc",  # not RFC 3986 normalization, but Starlette routes the decoded path
    b"/a2a%2fx%2F..%2Fjsonrpc",
]
REST_SPELLINGS = [
    b"/a2a/rest/x/../interview/identity",
    b"/a2a//rest/interview/identity",
    b"/a2a/rest/./interview/identity",
    b"/a2a/rest/interview/%69dentity",
    b"/a2a/%72est/interview/identity",
    b"/a2a/rest/%2E/interview/identity",
    b"/a2a/rest/interview%2Fidentity",
    b"/a2a%2Frest%2Finterview%2Fidentity",
]
CARD_SPELLINGS = [
    b"/.well-known/./agent-card.json",
    b"/.well-known//agent-card.json",
    b"/x/../.well-known/agent-card.json",
    b"/.well-known/agent-card%2Ejson",
    b"/%2Ewell-known/agent-card.json",
    b"/.well-known%2Fagent-card.json",
]

STACKS: dict[str, Callable[[Spies], Any]] = {
    "sdk-starlette": lambda spies: sdk_app("starlette", spies),
    "sdk-fastapi": lambda spies: sdk_app("fastapi", spies),
    "middleware": middleware_app,
}
ANSWER = build(reference.unsigned_card(ORIGIN), reference.proposals(ORIGIN)).interview


@pytest.fixture(params=list(STACKS))
def stack(request: pytest.FixtureRequest) -> tuple[Any, Spies]:
    spies = Spies()
    return STACKS[request.param](spies), spies


@pytest.mark.parametrize("target", RPC_SPELLINGS)
async def test_every_spelling_of_the_jsonrpc_path_is_answered(
    stack: tuple[Any, Spies], target: bytes
) -> None:
    # PROFILE §3.9 (issue 8 finding 2): `/a2a/x/../jsonrpc` is `/a2a/jsonrpc`.
    app, spies = stack
    got = await call(app, "POST", target, [*JSON, *ACT], IDENTITY)
    expected = b'{"id":7,"jsonrpc":"2.0","result":' + ANSWER.answer("identity") + b"}"
    assert (got.status, got.body) == (200, expected)
    assert got.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    assert spies.untouched, spies


@pytest.mark.parametrize("target", [RPC.encode(), *RPC_SPELLINGS[:4]])
async def test_an_activated_batch_naming_the_namespace_is_refused_whole(
    stack: tuple[Any, Spies], target: bytes
) -> None:
    # PROFILE §3.9: one -32600 with the echo; the GetTask half never reaches the host.
    app, spies = stack
    got = await call(app, "POST", target, [*JSON, *ACT], BATCH)
    assert (got.status, got.body) == (200, INVALID_REQUEST)
    assert got.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    assert spies.untouched, spies


@pytest.mark.parametrize("target", REST_SPELLINGS)
async def test_every_spelling_of_the_rest_path_is_answered(
    stack: tuple[Any, Spies], target: bytes
) -> None:
    # PROFILE §3.9 and §3b: `GET /a2a/rest/x/../interview/identity` is the identity.
    app, spies = stack
    got = await call(app, "GET", target, [*ACT, (b"a2a-version", b"1.0")])
    assert (got.status, got.body) == (200, ANSWER.answer("identity"))
    assert got.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    assert spies.untouched, spies


@pytest.mark.parametrize("target", CARD_SPELLINGS)
async def test_every_spelling_of_the_card_path_serves_the_precomputed_card(
    stack: tuple[Any, Spies], target: bytes
) -> None:
    # PROFILE §3.9 and §2.1: `/.well-known/./agent-card.json` is the card the answers
    # come from, never whatever the host would serve there.
    app, spies = stack
    plain = await call(app, "GET", CARD.encode())
    got = await call(app, "GET", target)
    assert (got.status, got.body) == (200, ANSWER.card_bytes) == (plain.status, plain.body)
    assert got.header(b"etag") == plain.header(b"etag")
    assert spies.untouched, spies


async def test_what_is_not_ours_passes_on_untouched(stack: tuple[Any, Spies]) -> None:
    # PROFILE §3.9: requests passed on go as they came, whatever their spelling; an
    # activated SendMessage at an odd spelling gets what the host gives that spelling.
    app, spies = stack
    for target in (RPC.encode(), *RPC_SPELLINGS[:3]):
        spies.clear()
        activated = await call(app, "POST", target, [*JSON, *ACT], SEND)
        routes = list(spies.routes)
        spies.clear()
        plain = await call(app, "POST", target, JSON, SEND)
        assert routes == spies.routes, target
        if b'"result"' in plain.body:  # a task id differs per call; the shape does not
            assert b'"result"' in activated.body and activated.status == plain.status
        else:
            assert (activated.status, activated.body) == (plain.status, plain.body), target
    # Not activated, an interview call at any spelling is the host's (PROFILE §3.3).
    for target in (RPC.encode(), *RPC_SPELLINGS):
        spies.clear()
        got = await call(app, "POST", target, JSON, IDENTITY)
        assert b"interview" not in got.body.replace(b"interview/", b""), target
        assert got.body != b'{"id":7,"jsonrpc":"2.0","result":' + ANSWER.answer("identity") + b"}"


async def test_the_middleware_hands_the_host_the_request_as_it_came() -> None:
    # PROFILE §3.9: no path rewriting, no re-encoding, the body whole.
    seen: list[tuple[Any, bytes]] = []

    async def host(scope: Any, receive: Any, send: Any) -> None:
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        seen.append((scope["raw_path"], body))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    from a2a_interview.server.asgi import InterviewMiddleware

    app = InterviewMiddleware(host, ANSWER)
    for target in (b"/a2a/x/../jsonrpc", b"/a2a/%2e/jsonrpc", b"/a2a//jsonrpc"):
        seen.clear()
        got = await call(app, "POST", target, [*JSON, *ACT], SEND)
        assert got.status == 204 and seen == [(target, SEND)]


LENIENT_BODIES = [
    '{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'.encode("utf-16"),
    b"\xef\xbb\xbf" + IDENTITY,
    b'{"jsonrpc":"2.0","id":7,"method":"GetTask","method":"interview/identity"}',
    b'{"jsonrpc":"2.0","id":7,"method":"interview/identity","params":{"skill":NaN}}',
]


@pytest.mark.parametrize("body", LENIENT_BODIES)
async def test_a_body_the_host_reads_leniently_as_an_interview_call_never_reaches_it(
    stack: tuple[Any, Spies], body: bytes
) -> None:
    # PROFILE §3.9: Starlette's json.loads reads UTF-16, a BOM, NaN and the last of two
    # "method" members; such a body is refused here, not handed to the host's -32601.
    app, spies = stack
    got = await call(app, "POST", RPC.encode(), [*JSON, *ACT], body)
    assert (got.status, got.body) == (200, INVALID_REQUEST)
    assert got.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    assert spies.untouched, spies
