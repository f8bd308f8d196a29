"""Every spelling of an interview request (PROFILE §3.9, D-PROXY-27) through the
a2a-sdk integration (Starlette and FastAPI) and ``InterviewMiddleware``: answered or
refused, never handed to the host's routes or the executor; what passes on is untouched.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from typing import Any

import pytest

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.spec import INTERVIEW_URI
from stacks import CARD, ORIGIN, RPC, Spies, call, middleware_app, sdk_app
from support.spellings import (
    CARD_VARIANTS,
    CODED,
    IDENTITY,
    PADDED,
    PADDED_BATCH,
    REST_VARIANTS,
    RPC_VARIANTS,
    UNJUDGED,
)

pytestmark = pytest.mark.anyio

ACT = [(b"a2a-extensions", INTERVIEW_URI.encode())]
JSON = [(b"content-type", b"application/json"), (b"a2a-version", b"1.0")]
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
    # PROFILE §3.9 (D-PROXY-27): `/a2a/x/../jsonrpc` is `/a2a/jsonrpc`.
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


# ---------------------------------------------------------------- PROFILE §3.9: hold under attack

V1 = [(b"a2a-version", b"1.0")]
ANSWERED = b'{"id":7,"jsonrpc":"2.0","result":' + ANSWER.answer("identity") + b"}"


@pytest.mark.parametrize(("coding", "pack"), CODED)
async def test_a_compressed_interview_call_is_judged_by_its_decoded_body(
    stack: tuple[Any, Spies], coding: str, pack: Callable[[bytes], bytes]
) -> None:
    # D-SERVE-23, PROFILE §3.9: `Content-Encoding: gzip` took an activated
    # interview call past the layer to a host that inflates before dispatch.
    app, spies = stack
    headers = [*JSON, *ACT, (b"content-encoding", coding.encode())]
    got = await call(app, "POST", RPC.encode(), headers, pack(IDENTITY))
    assert (got.status, got.body) == (200, ANSWERED)
    assert got.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    batch = await call(app, "POST", RPC.encode(), headers, pack(BATCH))
    assert (batch.status, batch.body) == (200, INVALID_REQUEST)
    assert spies.untouched, spies


@pytest.mark.parametrize(("coding", "body", "status"), UNJUDGED)
async def test_an_activated_body_that_cannot_be_judged_is_refused_never_passed_on(
    stack: tuple[Any, Spies], coding: str, body: bytes, status: int
) -> None:
    # PROFILE §3.9: where a layer cannot judge an activated request (an unknown coding, a
    # stack, a body past its bound) it refuses it, with the echo.
    app, spies = stack
    headers = [*JSON, *ACT, (b"content-encoding", coding.encode())]
    got = await call(app, "POST", RPC.encode(), headers, body)
    assert got.status == status
    assert json.loads(got.body)["error"]["code"] == -32600
    assert got.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    if status == 415:
        assert got.header(b"accept-encoding") == b"gzip, deflate"
    assert spies.untouched, spies


async def test_a_compressed_call_without_activation_or_not_ours_passes_on_as_it_came() -> None:
    # PROFILE §3.9: requests passed on go byte for byte, the coding and its bytes kept.
    seen: list[tuple[bytes, Any]] = []

    async def host(scope: Any, receive: Any, send: Any) -> None:
        seen.append(((await receive())["body"], dict(scope["headers"]).get(b"content-encoding")))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    from a2a_interview.server.asgi import InterviewMiddleware

    app = InterviewMiddleware(host, ANSWER)
    packed = gzip.compress(SEND)
    for headers in ([*JSON, *ACT], JSON):
        seen.clear()
        got = await call(app, "POST", RPC.encode(), [*headers, (b"content-encoding", b"gzip")],
                         packed)  # fmt: skip
        assert got.status == 204 and seen == [(packed, b"gzip")]
    seen.clear()  # without activation even an unknown coding is the host's
    got = await call(app, "POST", RPC.encode(), [*JSON, (b"content-encoding", b"br")], IDENTITY)
    assert got.status == 204 and seen == [(IDENTITY, b"br")]


@pytest.mark.parametrize("target", RPC_VARIANTS)
async def test_every_host_normalization_of_the_jsonrpc_path_is_answered(
    stack: tuple[Any, Spies], target: bytes
) -> None:
    app, spies = stack
    got = await call(app, "POST", target, [*JSON, *ACT], IDENTITY)
    assert (got.status, got.body) == (200, ANSWERED)
    assert spies.untouched, spies


@pytest.mark.parametrize("target", REST_VARIANTS)
async def test_every_host_normalization_of_the_rest_path_is_answered(
    stack: tuple[Any, Spies], target: bytes
) -> None:
    app, spies = stack
    got = await call(app, "GET", target, [*ACT, *V1])
    assert (got.status, got.body) == (200, ANSWER.answer("identity"))
    assert spies.untouched, spies


@pytest.mark.parametrize("target", CARD_VARIANTS)
async def test_every_host_normalization_of_the_card_path_is_the_precomputed_card(
    stack: tuple[Any, Spies], target: bytes
) -> None:
    app, spies = stack
    got = await call(app, "GET", target)
    assert (got.status, got.body) == (200, ANSWER.card_bytes)
    assert spies.untouched, spies


ESCAPED_BIG = (b'{"jsonrpc":"2.0","id":7,"method":"\\u0069nterview\\/identity","params":{"p":"'
               + b"z" * 100_000 + b'"}}')  # fmt: skip


@pytest.mark.parametrize("body", [PADDED, PADDED_BATCH, ESCAPED_BIG,
                                  PADDED.decode().encode("utf-16")])  # fmt: skip
async def test_an_activated_call_over_64_kib_never_reaches_the_host(
    stack: tuple[Any, Spies], body: bytes
) -> None:
    # D-SERVE-12, PROFILE §3.9: judged at any size the layer accepts at all; a
    # single padded call and a batch [interview/usage, SendMessage] arrived verbatim.
    app, spies = stack
    got = await call(app, "POST", RPC.encode(), [*JSON, *ACT], body)
    assert (got.status, got.body) == (200, INVALID_REQUEST)
    assert got.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    assert spies.untouched, spies


async def test_a_body_past_the_judging_bound_is_refused_when_activated(
    stack: tuple[Any, Spies],
) -> None:
    # PROFILE §3.9: past its bound a layer cannot judge, so it refuses (413, the echo);
    # without activation the same request is the host's.
    app, spies = stack
    big = b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"p":"' + b"q" * (
        10 * 1024 * 1024) + b'"}}'  # fmt: skip
    got = await call(app, "POST", RPC.encode(), [*JSON, *ACT], big)
    assert got.status == 413 and got.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    assert spies.untouched, spies
    await call(app, "POST", RPC.encode(), JSON, big)
    assert spies.routes, spies


async def test_a_large_ordinary_activated_call_still_reaches_the_host(
    stack: tuple[Any, Spies],
) -> None:
    # PROFILE §3.4: methods outside the namespace pass through, whatever their size.
    app, spies = stack
    text = "interview " * 20_000  # mentions the word, never a string starting the namespace
    body = json.dumps(
        {
            **json.loads(SEND),
            "params": {
                "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
            },
        }
    ).encode()
    got = await call(app, "POST", RPC.encode(), [*JSON, *ACT], body)
    assert got.header(b"a2a-extensions") is None or b'"result"' in got.body
    assert spies.routes, spies


def _middleware_over_the_sdk(spies: Spies) -> Any:
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
    from a2a.server.tasks import InMemoryTaskStore
    from starlette.applications import Starlette

    from a2a_interview.server.asgi import InterviewMiddleware
    from a2a_interview.server.sdk import agent_card_from_json
    from stacks import REST, SpyExecutor

    card = agent_card_from_json(reference.unsigned_card(ORIGIN))
    handler = DefaultRequestHandler(SpyExecutor(spies), InMemoryTaskStore(), card)
    host = Starlette(routes=[*create_jsonrpc_routes(handler, rpc_url=RPC),
                             *create_rest_routes(handler, path_prefix=REST)])  # fmt: skip
    return InterviewMiddleware(host, ANSWER)


VERSIONS = [None, b"", b"0.3", b"1.0", b"2.0", b"1.5", b"1.0.1", b"abc", b"0.3.0"]


@pytest.mark.parametrize("where", ["sdk-starlette", "sdk-fastapi", "middleware-over-sdk"])
async def test_interview_calls_carry_the_hosts_version_negotiation(where: str) -> None:
    # D-SERVE-24, PROFILE §3.10: under an A2A-Version the real a2a-sdk host refuses
    # for an ordinary method (-32009), an activated interview call gets -32009 too (its
    # HTTP mapping, 400, on HTTP+JSON), never an answer; where the host serves the
    # ordinary method under none, 0.3, 1.0 and 2.0, the interview answers.
    spies = Spies()
    app = (
        _middleware_over_the_sdk(spies) if where.startswith("middleware") else STACKS[where](spies)
    )
    for version in VERSIONS:
        vh = [] if version is None else [(b"a2a-version", version)]
        base = [(b"content-type", b"application/json"), *vh]
        host = await call(
            app,
            "POST",
            RPC.encode(),
            base,
            b'{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t"}}',
        )
        refused = json.loads(host.body)["error"]["code"] == -32009
        ours = await call(app, "POST", RPC.encode(), [*base, *ACT], IDENTITY)
        code = json.loads(ours.body).get("error", {}).get("code")
        if refused:
            assert code == -32009, (version, ours.body)
            assert json.loads(ours.body)["id"] == 7
        elif version in (None, b"0.3", b"1.0", b"2.0"):
            assert ours.body == ANSWERED, (version, ours.body)
        rest_host = await call(app, "GET", b"/a2a/rest/tasks/t", vh)
        rest = await call(app, "GET", b"/a2a/rest/interview/identity", [*vh, *ACT])
        if refused:
            assert rest.status == rest_host.status == 400, (version, rest_host.body)
            assert json.loads(rest.body)["error"]["status"] == "FAILED_PRECONDITION"
        elif version in (None, b"0.3", b"1.0", b"2.0"):
            assert (rest.status, rest.body) == (200, ANSWER.answer("identity"))
    assert not spies.executor
