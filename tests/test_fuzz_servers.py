"""Standing fuzz suite (PROFILE §3.9): both bindings through all three
servers, hostile paths, headers, bodies, params and Unicode.

- the a2a-sdk integration, in a Starlette and in a FastAPI app (in process);
- ``InterviewMiddleware`` in front of the same SDK agent (in process);
- the proxy in front of a plain a2a-sdk agent, over real loopback sockets.

Every response must be a documented answer, refusal or error: never a 5xx, never a
traceback, a body the interview produced never echoes params, and the executor is never
called (no request here is an ordinary SendMessage; those appear only inside batches).
Bounded: a fixed number of examples, derandomized (the same requests every run).
``FUZZ_EXAMPLES=5000 FUZZ_RANDOM=1 .venv/bin/python -m pytest tests/test_fuzz_servers.py``
is the longer, random run.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import socket
import zlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
import uvicorn
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response as StarletteResponse
from starlette.routing import Route

from a2a_interview import reference
from a2a_interview.declarations import build
from a2a_interview.net import sockets
from a2a_interview.server import listen
from a2a_interview.server.asgi import InterviewMiddleware
from a2a_interview.server.proxy import build_proxy
from a2a_interview.server.sdk import agent_card_from_json
from a2a_interview.spec import INTERVIEW_URI, QUESTIONS
from stacks import ORIGIN, REST, RPC, Response, Spies, SpyExecutor, call, sdk_app
from support.servers import in_thread

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("FUZZ_RANDOM"),
    suppress_health_check=list(HealthCheck),
    database=None,
)
MARK = "ZQX"  # put in every param value: an interview reply must never contain it

# ---------------------------------------------------------------- requests

unicode_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
segment = st.one_of(
    st.sampled_from(
        [
            "a2a",
            "jsonrpc",
            "rest",
            "interview",
            "identity",
            "usage",
            "terms",
            ".",
            "..",
            "",
            "%2e",
            "%2E%2E",
            "%2F",
            "%00",
            "%ff",
            "%6Asonrpc",
            "%69dentity",
            ".well-known",
            "agent-card.json",
            "x",
            "tasks",
            "message:send",
            "%",
        ]
    ),
    unicode_text.map(lambda t: quote(t, safe="")),
)
# Most requests aim at the interview's paths, in some spelling (PROFILE §3.9).
# D-SERVE-11: case, `;` parameters, `%5C`, double encoding, full-width
# `／` (percent-encoded), NUL and trailing dots too (PROFILE §3.9).
spelled_rpc = st.sampled_from([RPC, RPC, RPC, "/a2a/x/../jsonrpc", "/a2a/./jsonrpc",
                               "/a2a//jsonrpc", "/a2a/%2e/jsonrpc", "/a2a/%6Asonrpc",
                               "/a2a/jsonrpc/", "/../a2a/jsonrpc", "/a2a%2Fjsonrpc",
                               "/A2A/JSONRPC", "/a2a/JsonRpc", "/a2a;x=1/jsonrpc",
                               "/a2a/jsonrpc;j=0", "/a2a%5Cjsonrpc", "/a2a%252Fjsonrpc",
                               "/a2a%EF%BC%8Fjsonrpc", "/a2a/jsonrpc%00", "/a2a/jsonrpc.",
                               "/a2a/jsonrpc%20"])  # fmt: skip
spelled_rest = st.sampled_from([REST + "/interview/", REST + "/x/../interview/",
                                "/a2a//rest/interview/", REST + "/interview/%69",
                                "/a2a/%72est/interview/", "/A2A/REST/Interview/",
                                "/a2a;v=1/rest/interview/", "/a2a%5Crest/interview/",
                                "/a2a/rest./interview/"])  # fmt: skip
path = st.one_of(
    spelled_rpc,
    spelled_rpc,
    st.tuples(
        spelled_rest,
        st.sampled_from([*QUESTIONS, "dentity", "x", "", "%2F", "..", "identity/x", "Identity"]),
    ).map("".join),
    st.sampled_from(
        [
            "/.well-known/agent-card.json",
            "/.well-known/./agent-card.json",
            "/.well-known//agent-card.json",
            "/.well-known/agent-card%2Ejson",
            "/.well-known/AGENT-card.json",
            "/.WELL-KNOWN/agent-card.json;x",
        ]
    ),
    st.lists(segment, min_size=0, max_size=6).map(lambda s: "/" + "/".join(s)),
    st.tuples(st.sampled_from([RPC, REST + "/interview"]), st.lists(segment, max_size=3)).map(
        lambda t: t[0] + "/" + "/".join(t[1])
    ),
)
query = st.one_of(
    st.just(""),
    st.sampled_from(
        [
            "skill=stonework.reconcile",
            "skill=a&skill=b",
            "skill",
            "x=1",
            "%zz",
            "skill=%ff",
            "skill=" + MARK,
        ]
    ),
    unicode_text.map(lambda t: "skill=" + quote(MARK + t)),
)
activation = st.sampled_from([
    [], [("a2a-extensions", INTERVIEW_URI)], [("x-a2a-extensions", INTERVIEW_URI)],
    [("a2a-extensions", INTERVIEW_URI)], [("A2A-Extensions", INTERVIEW_URI)],
    [("A2A-Extensions", f" {INTERVIEW_URI} , urn:x")], [("a2a-extensions", INTERVIEW_URI + "/")],
    [("a2a-extensions", INTERVIEW_URI.upper())],
    [("a2a-extensions", INTERVIEW_URI), ("x-a2a-extensions", "urn:other")],
])  # fmt: skip
# PROFILE §3.10: versions the host serves, refuses, and nonsense.
versions = st.sampled_from([[("a2a-version", "1.0")], [("a2a-version", "1.0")], [],
                            [("a2a-version", "0.3")], [("a2a-version", "2.0")],
                            [("a2a-version", "")], [("a2a-version", "1.0.1")]])  # fmt: skip
# D-SERVE-23: one layer of gzip or deflate in any case, other codings, stacks.
codings = st.sampled_from([None, None, None, "gzip", "GZIP", "x-gzip", "deflate", "Deflate",
                           "br", "zstd", "gzip, gzip", "identity", "gzip, identity"])  # fmt: skip
extra_headers = st.lists(
    st.tuples(st.sampled_from(["a2a-version", "content-type", "x-junk", "accept",
                               "if-none-match", "a2a-extensions"]),
              # Trailing blanks included: the proxy answered 502 to them (its upstream
              # client refuses to send such a value) until the server stripped them.
              st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=20)),
    max_size=3,
)  # fmt: skip
json_value: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              unicode_text.map(lambda t: MARK + t)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(unicode_text, inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
method = st.one_of(
    st.sampled_from([f"interview/{q}" for q in QUESTIONS]),
    st.sampled_from(["interview/", "interview/x", "interview/identity/", "Interview/identity",
                     "interview\u2215identity", "GetTask", "no/such"]),
    unicode_text.map(lambda t: "interview/" + t),
)  # fmt: skip
params = st.one_of(
    st.none().map(lambda _: ...),  # omitted
    st.just({}),
    st.builds(lambda s: {"skill": s}, unicode_text.map(lambda t: MARK + t)),
    st.just({"skill": "stonework.reconcile"}),
    json_value,
)
request_id = st.one_of(st.integers(), unicode_text, st.none(), st.floats(allow_nan=False),
                       st.booleans(), st.just([1]), st.just(2**60))  # fmt: skip


@st.composite
def envelope(draw: Any) -> Any:
    body: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "1.0", 2]))}
    if draw(st.booleans()):
        body["id"] = draw(request_id)
    body["method"] = draw(method)
    p = draw(params)
    if p is not ...:
        body["params"] = p
    if draw(st.integers(0, 9)) == 0:
        body[MARK] = 1
    return body


MESSAGE = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}
SEND = {"jsonrpc": "2.0", "id": 9, "method": "SendMessage", "params": {"message": MESSAGE}}


@st.composite
def body(draw: Any) -> bytes:
    kind = draw(st.integers(0, 9))
    if kind <= 5:
        return json.dumps(draw(envelope()), ensure_ascii=draw(st.booleans())).encode()
    if kind == 6:  # a batch, an ordinary call beside interview calls
        items = [SEND, *draw(st.lists(envelope(), min_size=1, max_size=3))]
        return json.dumps(draw(st.permutations(items))).encode()
    if kind == 7:  # escapes spelling the namespace, duplicate keys, huge numbers
        return draw(st.sampled_from([
            b'{"jsonrpc":"2.0","id":1,"method":"\\u0069nterview/identity"}',
            b'{"jsonrpc":"2.0","id":1,"method":"interview\\/usage","params":{"skill":"ZQX"}}',
            b'{"jsonrpc":"2.0","id":1,"method":"interview/identity","method":"GetTask"}',
            b'{"jsonrpc":"2.0","id":1e400,"method":"interview/identity"}',
            b'{"jsonrpc":"2.0","id":1,"method":"interview/identity","params":NaN}',
            b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"interview/identity"}',
            b'{"jsonrpc":"2.0","id":1,"method":"interview/identity","params":{"skill":"\\ud800"}}',
            b"[" * 200 + b"]" * 200,
            b'{"jsonrpc":"2.0","id":1,"method":"interview/terms","params":{"skill":"'
            + b"a" * 70000 + b'"}}',
        ]))  # fmt: skip
    if kind == 8:
        return draw(st.binary(max_size=64))
    return b""


@st.composite
def request(draw: Any) -> tuple[str, bytes, list[tuple[bytes, bytes]], bytes]:
    target = draw(path)
    if target.startswith(RPC[:4]) and "interview" not in target:
        verb = draw(st.sampled_from(["POST", "POST", "POST", "GET", "PUT", "OPTIONS"]))
    else:
        verb = draw(st.sampled_from(["GET", "GET", "GET", "HEAD", "POST", "DELETE"]))
    q = draw(query)
    if q:
        target += "?" + q
    headers = [*draw(activation), *draw(versions), *draw(extra_headers)]
    if verb == "POST" and not any(n.lower() == "content-type" for n, _ in headers):
        headers.append(("content-type", "application/json"))
    payload = draw(body()) if verb == "POST" else b""
    coding = draw(codings) if verb == "POST" else None
    if coding is not None:
        headers.append(("content-encoding", coding))
        name = coding.split(",")[0].strip().lower()
        if name in ("gzip", "x-gzip"):
            payload = gzip.compress(payload, mtime=0)
        elif name == "deflate":
            payload = zlib.compress(payload)
    raw = [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in headers]
    return verb, target.encode("latin-1", "replace"), raw, payload


def documented(response: Response, payload: bytes) -> None:
    """A documented answer, refusal or error (PROFILE §3, §3b, §5): no 5xx, no
    traceback; what the interview produced never echoes a param."""
    assert response.status < 500, (response.status, response.body[:300])
    assert b"Traceback" not in response.body and b'File "' not in response.body
    ours = response.header(b"a2a-extensions") == INTERVIEW_URI.encode()
    if not ours:
        return
    if response.status == 200 and response.body.startswith(b'{"error"'):
        reply = json.loads(response.body)
        assert reply["error"]["code"] in (-32600, -32602, -32009), reply
        assert reply["error"]["message"] in ("Invalid Request", "Invalid params",
                                             "Version not supported"), reply  # fmt: skip
    elif response.status == 200:
        reply = json.loads(response.body)
        assert isinstance(reply, dict)
    else:
        # 413/415/400: an activated body that cannot be judged (PROFILE §3.9); 400 also
        # the HTTP+JSON mapping of -32009 (PROFILE §3.10).
        assert response.status in (400, 413, 415, 429), response.status
        if response.status in (413, 415):
            assert json.loads(response.body)["error"]["code"] == -32600
    if MARK.encode() in payload:
        # An id is echoed by design (JSON-RPC); params and other members never are.
        try:
            sent_id = json.loads(payload).get("id")
        except (ValueError, AttributeError):
            sent_id = None
        if not (isinstance(sent_id, str) and MARK in sent_id):
            assert MARK.encode() not in response.body, response.body[:300]


# ---------------------------------------------------------------- in process


@pytest.mark.parametrize("stack", ["sdk-starlette", "sdk-fastapi", "middleware"])
def test_fuzz_in_process(stack: str) -> None:
    spies = Spies()
    if stack == "middleware":
        card = agent_card_from_json(reference.unsigned_card(ORIGIN))
        handler = DefaultRequestHandler(SpyExecutor(spies), InMemoryTaskStore(), card)
        host = Starlette(routes=[*create_agent_card_routes(card),
                                 *create_jsonrpc_routes(handler, rpc_url=RPC),
                                 *create_rest_routes(handler, path_prefix=REST)])  # fmt: skip
        declarations = build(reference.unsigned_card(ORIGIN), reference.proposals(ORIGIN))
        app: Any = InterviewMiddleware(host, declarations)
    else:
        app = sdk_app(stack.removeprefix("sdk-"), spies)

    with asyncio.Runner() as runner:

        @SETTINGS
        @given(request())
        def check(req: tuple[str, bytes, list[tuple[bytes, bytes]], bytes]) -> None:
            verb, target, headers, payload = req
            response = runner.run(call(app, verb, target, headers, payload))
            documented(response, payload)
            assert not spies.executor, (req, spies.executor)

        check()


# ---------------------------------------------------------------- the proxy, over loopback


@contextlib.contextmanager
def agent_and_proxy(spies: Spies) -> Iterator[tuple[str, int]]:
    up_sock = sockets.bind("127.0.0.1", 0)
    up_sock.setblocking(False)
    origin = sockets.socket_origin(up_sock)
    card = agent_card_from_json(reference.unsigned_card(origin))
    handler = DefaultRequestHandler(SpyExecutor(spies), InMemoryTaskStore(), card)
    documents = []
    for url, data in reference.proposals(origin).items():

        async def document(request: Request, _data: bytes = data) -> StarletteResponse:
            return StarletteResponse(_data, media_type="application/json")

        documents.append(Route(url.removeprefix(origin), document))
    upstream = Starlette(routes=[*documents, *create_agent_card_routes(card),
                                 *create_jsonrpc_routes(handler, rpc_url=RPC),
                                 *create_rest_routes(handler, path_prefix=REST)])  # fmt: skip
    up_config = listen.config(upstream, listen.Bounds(), log_level="error", access_log=False,
                              loop="asyncio", lifespan="off")  # fmt: skip
    sock = sockets.bind("127.0.0.1", 0)
    sock.setblocking(False)

    async def config() -> uvicorn.Config:
        app, _ = await build_proxy(origin + "/", poll=0)
        return listen.config(app, listen.Bounds(), per_connection=2, lifespan="on",
                             log_level="error", access_log=False, loop="asyncio",
                             server_header=False, date_header=False,
                             proxy_headers=False)  # fmt: skip

    with in_thread(up_config, [up_sock], stop=10), in_thread(config, [sock]):
        yield sock.getsockname()[:2]


def raw_request(
    address: tuple[str, int],
    verb: str,
    target: bytes,
    headers: list[tuple[bytes, bytes]],
    payload: bytes,
    trailers: list[tuple[bytes, bytes]] | None = None,
) -> Response:
    """One HTTP/1.1 request with the target exactly as given; the connection closes.
    With ``trailers``, the body goes chunked, followed by those trailer fields."""
    lines = [verb.encode() + b" " + target + b" HTTP/1.1", b"host: 127.0.0.1",
             b"connection: close", *(n + b": " + v for n, v in headers)]  # fmt: skip
    if trailers is not None:
        lines.append(b"transfer-encoding: chunked")
        chunk = b"%x\r\n%s\r\n" % (len(payload), payload) if payload else b""
        fields = b"".join(n + b": " + v + b"\r\n" for n, v in trailers)
        payload = chunk + b"0\r\n" + fields + b"\r\n"
    elif verb == "POST":
        lines.append(b"content-length: %d" % len(payload))
    with socket.create_connection(address, timeout=30) as conn:
        conn.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + payload)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *fields = head.split(b"\r\n")
    parsed = [(n.strip().lower(), v.strip()) for n, _, v in (f.partition(b":") for f in fields)]
    if (b"transfer-encoding", b"chunked") in parsed:
        out = b""
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2 :]
        rest = out
    return Response(int(status_line.split()[1]), parsed, rest)


def test_fuzz_the_proxy_over_loopback() -> None:
    spies = Spies()
    with agent_and_proxy(spies) as address:

        @settings(SETTINGS, max_examples=max(20, EXAMPLES // 3))
        @given(request())
        def check(req: tuple[str, bytes, list[tuple[bytes, bytes]], bytes]) -> None:
            verb, target, headers, payload = req
            if not target.startswith(b"/") or b" " in target:
                return  # not a request line a client can send
            response = raw_request(address, verb, target, headers, payload)
            documented(response, payload)
            assert not spies.executor, (req, spies.executor)

        check()


trailer_fields = st.lists(
    st.tuples(st.sampled_from([b"x-t", b"content-type", b"a2a-version", b"content-length",
                               b"transfer-encoding", b"host", b"x-forwarded-for"]),
              st.binary(max_size=30).map(lambda b: bytes(c for c in b if 32 < c < 127))),
    max_size=4,
)  # fmt: skip


def test_fuzz_trailers_through_the_proxy_over_loopback() -> None:
    # D-SERVE-20, PROFILE §3.9: a trailer never activates and is never read as a
    # header. Every request here carries its activation (if any) in the trailer section
    # only, beside other trailer fields: nothing is ever answered as an interview call.
    spies = Spies()
    with agent_and_proxy(spies) as address:

        @settings(SETTINGS, max_examples=max(20, EXAMPLES // 6))
        @given(request(), trailer_fields)
        def check(req: tuple[str, bytes, list[tuple[bytes, bytes]], bytes], extra: Any) -> None:
            verb, target, headers, payload = req
            if not target.startswith(b"/") or b" " in target:
                return  # not a request line a client can send
            moved = [(n, v) for n, v in headers if n.endswith(b"a2a-extensions")]
            kept = [(n, v) for n, v in headers if not n.endswith(b"a2a-extensions")]
            response = raw_request(address, "POST" if verb == "GET" else verb, target, kept,
                                   payload, trailers=[*moved, *extra])  # fmt: skip
            documented(response, payload)
            assert response.header(b"a2a-extensions") is None, (req, response.status)
            assert not spies.executor, (req, spies.executor)

        check()


# ---------------------------------------------------------------- the reply memo


def test_remembered_replies_are_the_core_replies_and_the_memo_is_bounded() -> None:
    # docs/decisions.md D-SERVE-17: the memo of rpc.jsonrpc changes no reply (PROFILE §3.6:
    # the same request gets the same bytes) and holds at most 512 entries.
    from a2a_interview import rpc
    from a2a_interview.server.asgi import Replies

    interview = build(reference.unsigned_card(ORIGIN), reference.proposals(ORIGIN)).interview
    replies = Replies(interview)
    acts = [rpc.NOT_ACTIVATED, rpc.Activation(current=True), rpc.Activation(legacy=True)]

    @SETTINGS
    @given(body(), st.sampled_from(acts))
    def check(payload: bytes, act: rpc.Activation) -> None:
        expected = rpc.jsonrpc(payload, act, interview)
        assert replies.jsonrpc(payload, act) == expected
        assert replies.jsonrpc(payload, act) == expected  # remembered, still the same

    check()
    for i in range(2000):
        replies.jsonrpc(b'{"jsonrpc":"2.0","id":%d,"method":"interview/identity"}' % i, acts[1])
    assert len(replies._memo) <= 512
