"""The bindings as pure functions (PROFILE §3, §3b). Real-HTTP tests live elsewhere."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_interview import reference, rpc
from a2a_interview.declarations import build
from a2a_interview.jcs import canonicalize
from a2a_interview.spec import INTERVIEW_URI

IV = build(reference.unsigned_card(), reference.proposals()).interview
ON = rpc.Activation(current=True)


def call(method: str, params: Any = ..., request_id: Any = 1, act: rpc.Activation = ON,
         **extra: Any) -> rpc.Reply | None:  # fmt: skip
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}
    if params is not ...:
        body["params"] = params
    return rpc.jsonrpc(json.dumps(body).encode(), act, IV)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([("A2A-Extensions", INTERVIEW_URI)], rpc.Activation(True, False)),
        (
            [(b"a2a-extensions", f"https://x.example/e, \t{INTERVIEW_URI} ".encode())],
            rpc.Activation(True, False),
        ),
        ([("X-A2A-Extensions", INTERVIEW_URI)], rpc.Activation(False, True)),
        ([("A2A-Extensions", INTERVIEW_URI.upper())], rpc.NOT_ACTIVATED),
        ([("A2A-Extensions", INTERVIEW_URI + "/")], rpc.NOT_ACTIVATED),
        ([("A2A-Extensions", INTERVIEW_URI + ";q=1")], rpc.NOT_ACTIVATED),
        ([("A2A-Extension", INTERVIEW_URI)], rpc.NOT_ACTIVATED),
        ([], rpc.NOT_ACTIVATED),
    ],
)
def test_activation(headers: Any, expected: rpc.Activation) -> None:
    # PROFILE §3.2: comma list, blanks trimmed, exact comparison, both header spellings.
    assert rpc.activation(headers) == expected


def test_echo_headers() -> None:
    # PROFILE §3.2: the legacy spelling is echoed under both names.
    assert rpc.Activation(True, False).echo() == (("A2A-Extensions", INTERVIEW_URI),)
    assert dict(rpc.Activation(False, True).echo()) == {
        "A2A-Extensions": INTERVIEW_URI, "X-A2A-Extensions": INTERVIEW_URI}  # fmt: skip
    assert rpc.NOT_ACTIVATED.echo() == ()


def test_not_ours_passes_through() -> None:
    # PROFILE §3.3 and §3.4: the host answers everything else, -32601 included.
    assert call("interview/identity", act=rpc.NOT_ACTIVATED) is None
    assert call("SendMessage") is None
    assert rpc.jsonrpc(b'[{"method":"SendMessage"}]', ON, IV) is None  # batches: PROFILE §3.9
    assert rpc.jsonrpc(b'{"method":"interview/identity",', ON, IV) is None
    assert rpc.jsonrpc(b'{"method":"GetTask","method":"x"}', ON, IV) is None
    assert rpc.jsonrpc(b'{"method":"SendMessage","params":NaN}', ON, IV) is None
    assert rpc.jsonrpc('{"method":"SendMessage"}'.encode("utf-16"), ON, IV) is None


def test_answers_and_refusals() -> None:
    reply = call("interview/identity", request_id="a")
    assert reply is not None and reply.status == 200
    assert reply.body == b'{"id":"a","jsonrpc":"2.0","result":' + IV.answer("identity") + b"}"
    assert ("A2A-Extensions", INTERVIEW_URI) in reply.headers
    bogus = call("interview/weather", params=[1, 2])  # closure first: params don't matter
    assert bogus is not None and bogus.body.endswith(b'"result":' + IV.refusal + b"}")
    skill = call("interview/usage", {"skill": "flag-exceptions"})
    assert skill is not None and b'"result":' + IV.answer("usage", "flag-exceptions") in skill.body


def test_escaped_method_names_are_the_method_names() -> None:
    # PROFILE §3.4: the method is the parsed JSON string; a JSON escape in its spelling
    # does not hand an activated interview call to the host (whose -32601 has no echo).
    for body in (
        rb'{"jsonrpc":"2.0","id":1,"method":"interview\/identity"}',
        rb'{"jsonrpc":"2.0","id":1,"method":"\u0069nterview/identity"}',
    ):
        reply = rpc.jsonrpc(body, ON, IV)
        expected = b'"result":' + IV.answer("identity") + b"}"
        assert reply is not None and reply.body.endswith(expected)
        assert rpc.jsonrpc(body, rpc.NOT_ACTIVATED, IV) is None
    weather = rpc.jsonrpc(rb'{"jsonrpc":"2.0","id":1,"method":"interview\/weather"}', ON, IV)
    assert weather is not None and weather.body.endswith(b'"result":' + IV.refusal + b"}")


INVALID_PARAMS = b'{"error":{"code":-32602,"message":"Invalid params"},"id":1,"jsonrpc":"2.0"}'


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("interview/usage", [1]),
        ("interview/usage", None),
        ("interview/usage", {"skill": 1}),
        ("interview/usage", {"skill": "a", "x": 1}),
        ("interview/terms", {"selector": "a"}),
        ("interview/identity", {"skill": "reconcile-statement"}),
        ("interview/refusals", {"nonce": "n"}),
        ("interview/capabilities", "text"),
    ],
)
def test_invalid_params(method: str, params: Any) -> None:
    # PROFILE §3.5: one fixed -32602, never a word of the request.
    reply = call(method, params)
    assert reply is not None and reply.body == INVALID_PARAMS


def test_params_omitted_or_empty() -> None:
    for params in (..., {}):
        reply = call("interview/usage", params)
        assert reply is not None and b'"result":' + IV.answer("usage") in reply.body


@pytest.mark.parametrize(
    "extra",
    [{"jsonrpc": "1.0"}, {"id": True}, {"id": 1.5}, {"id": [1]}, {"note": "x"}],
)
def test_invalid_envelope(extra: dict[str, Any]) -> None:
    reply = call("interview/identity", **extra)
    assert reply is not None
    assert (
        reply.body
        == b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'
    )


def test_rest_binding() -> None:
    # PROFILE §3b.
    assert rpc.rest("GET", "identity", b"", rpc.NOT_ACTIVATED, IV) is None
    assert rpc.rest("POST", "identity", b"", ON, IV) is None
    ok = rpc.rest("GET", "terms", b"skill=r%C3%A4kna-moms", ON, IV)
    assert ok is not None and ok.body == IV.answer("terms", reference.NON_ASCII_SKILL)
    refusal = rpc.rest("GET", "weather", b"", ON, IV)
    assert refusal is not None and (refusal.status, refusal.body) == (200, IV.refusal)
    for query in (b"skill=a&skill=a", b"x=1", b"skill=%FF", b"skill=x", b"=&&"):
        q = "identity" if query == b"skill=x" else "usage"
        bad = rpc.rest("GET", q, query, ON, IV)
        assert bad is not None and (bad.status, bad.body) == (400, rpc.REST_INVALID), query


def test_rate_limited_reply_keeps_the_id_and_echo() -> None:
    reply = call("interview/identity", request_id=7)
    assert reply is not None
    limited = rpc.too_many_requests(3, reply, ON)
    assert limited.status == 429 and ("Retry-After", "3") in limited.headers
    assert (
        limited.body
        == b'{"error":{"code":-32000,"message":"Too many requests"},"id":7,"jsonrpc":"2.0"}'
    )
    assert ("A2A-Extensions", INTERVIEW_URI) in limited.headers


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=10),
    lambda v: st.lists(v, max_size=3) | st.dictionaries(st.text(max_size=5), v, max_size=3),
    max_leaves=10,
)


@settings(max_examples=500)
@given(st.text(max_size=20), _json, st.integers(0, 2**31) | st.text(max_size=10))
def test_replies_carry_nothing_of_the_request_but_its_id(suffix: str, params: Any,
                                                         request_id: Any) -> None:  # fmt: skip
    # interview §6 rule 3, PROFILE §3.5: a reply is one of a fixed set of bodies, in
    # which only the JSON-RPC id (which the protocol requires echoing) varies.
    reply = call("interview/" + suffix, params, request_id)
    assert reply is not None
    head = b'{"id":' + canonicalize(request_id) + b',"jsonrpc":"2.0","result":'
    possible = {head + answer + b"}" for answer in IV._answers.values()}
    possible.add(head + IV.refusal + b"}")
    possible.add(INVALID_PARAMS.replace(b'"id":1', b'"id":' + canonicalize(request_id)))
    assert reply.body in possible


# PROFILE §3.9: every spelling of an interface path is that path.
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/a2a/jsonrpc", "/a2a/jsonrpc"),
        ("/a2a/jsonrpc/", "/a2a/jsonrpc"),
        ("/a2a/x/../jsonrpc", "/a2a/jsonrpc"),
        ("/a2a/./jsonrpc", "/a2a/jsonrpc"),
        ("/a2a//jsonrpc", "/a2a/jsonrpc"),
        ("/a2a/%2e/jsonrpc", "/a2a/jsonrpc"),
        ("/a2a/%2E%2E/a2a/jsonrpc", "/a2a/jsonrpc"),
        ("/%61%32%61/jsonrpc", "/a2a/jsonrpc"),
        ("/a2a/rest/x/../interview/identity", "/a2a/rest/interview/identity"),
        ("/../../a2a/jsonrpc", "/a2a/jsonrpc"),
        ("/a2a%2fjsonrpc", "/a2a%2Fjsonrpc"),  # an encoded slash is not unreserved: kept
        ("", "/"),
        (b"/a\xff/b", "/a\xff/b"),
    ],
)
def test_normalize_path_every_spelling(raw: str | bytes, expected: str) -> None:
    assert rpc.normalize_path(raw) == expected


def test_activated_batch_naming_the_namespace_is_refused_whole() -> None:
    # PROFILE §3.9: one JSON-RPC -32600 with the activation echo; never passed on.
    body = (
        b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}},'
        b'{"jsonrpc":"2.0","id":2,"method":"interview/identity"}]'
    )
    reply = rpc.jsonrpc(body, ON, IV)
    assert reply is not None
    assert (
        reply.body
        == b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'
    )
    assert ("A2A-Extensions", INTERVIEW_URI) in reply.headers
    ordinary = b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}]'
    assert rpc.jsonrpc(ordinary, ON, IV) is None
    assert rpc.jsonrpc(body, rpc.NOT_ACTIVATED, IV) is None


LENIENT = [
    '{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'.encode("utf-16"),
    '{"jsonrpc":"2.0","id":7,"method":"interview/identity"}'.encode("utf-32-le"),
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":7,"method":"interview/identity"}',
    b'{"jsonrpc":"2.0","id":7,"method":"GetTask","method":"interview/identity"}',
    b'{"jsonrpc":"2.0","id":7,"method":"interview/identity","params":{"skill":NaN}}',
    b'{"jsonrpc":"2.0","id":1' + b"0" * 30 + b',"method":"interview/identity"}',
    b'{"jsonrpc":"2.0","id":7,"method":"interview/usage","params":{"skill":"\\ud800"}}',
    b'{"jsonrpc":"2.0","id":7,"method":"interview/usage","params":{"x":'
    + b"[" * 100
    + b"]" * 100
    + b"}}",
    b'[{"jsonrpc":"2.0","id":7,"method":"GetTask","method":"interview/identity"}]',
]


@pytest.mark.parametrize("body", LENIENT)
def test_what_a_lenient_host_reads_as_an_interview_call_is_refused_not_passed_on(
    body: bytes,
) -> None:
    # PROFILE §3.9: a body strict I-JSON refuses but a host's json.loads reads as an
    # interview call (Starlette and the a2a-sdk do) is refused whole with the echo; passed
    # on, the host would answer an activated interview call with its own -32601.
    reply = rpc.jsonrpc(body, ON, IV)
    assert reply is not None, body
    assert reply.body == rpc.rpc_error(None, (-32600, "Invalid Request"))
    assert ("A2A-Extensions", INTERVIEW_URI) in reply.headers
    assert rpc.jsonrpc(body, rpc.NOT_ACTIVATED, IV) is None  # PROFILE §3.3: the host's


# ---------------------------------------------------------------- PROFILE §3.9, D-SERVE-24


@pytest.mark.parametrize(
    "raw",
    [b"/a2a/jsonrpc", b"/A2A/JSONRPC", b"/a2a;x=1/jsonrpc;y=2", b"/a2a\\jsonrpc",
     b"/a2a%5Cjsonrpc", b"/a2a%252Fjsonrpc", b"/a2a%2525252Fjsonrpc".replace(b"252525", b"2525"),
     "/a2a\uff0fjsonrpc".encode(), b"/a2a/jsonrpc%00/x", b"/a2a/jsonrpc.", b"/a2a/jsonrpc. .",
     b"//a2a//x/../jsonrpc/", "/\uff21\uff12\uff21/JSONRPC".encode(), b"/a2a/;/jsonrpc",
     b"/a2a/jsonrpc", "/a2a/jsonrpc;\u00e9".encode("latin-1")],
)  # fmt: skip
def test_path_key_reads_every_host_normalization(raw: bytes) -> None:
    # PROFILE §3.9, D-SERVE-11: every normalization a common host applies.
    assert rpc.path_key(raw) == ("a2a", "jsonrpc")


@pytest.mark.parametrize(
    "raw",
    [b"/a2a/jsonrpcx", b"/a2a/json/rpc", b"/a2a/jsonrpc/x", b"/a2a%2Fx/jsonrpc", b"/a2ajsonrpc",
     b"/a2a/json%00rpc"],
)  # fmt: skip
def test_path_key_does_not_merge_other_paths(raw: bytes) -> None:
    assert rpc.path_key(raw) != ("a2a", "jsonrpc")


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.binary(max_size=80))
def test_path_segments_never_raises(raw: bytes) -> None:
    segments = rpc.path_segments(raw)
    assert all(s and "/" not in s for s in segments)


def test_a_large_body_is_judged_by_a_scan_not_a_parse() -> None:
    # D-SERVE-12: past 64 KiB an activated body naming the namespace in a
    # string (any escaping) is refused whole, without a parse; one that does not is not ours.
    pad = b" " * (rpc.MAX_REQUEST_BYTES + 1)
    for method in (
        b"interview/usage",
        b"\\u0069nterview\\/usage",
        b"\\u0069\\u006E\\u0074erview/x",
    ):
        body = b'{"jsonrpc":"2.0","id":1,"method":"' + method + b'"}' + pad
        reply = rpc.jsonrpc(body, ON, IV)
        assert reply is not None and reply.body.startswith(b'{"error":{"code":-32600'), method
    # Malformed past the bound still counts: no reading is tried, the scan decides.
    assert rpc.jsonrpc(b'{"method":"interview/x"' + pad, ON, IV) is not None
    assert rpc.jsonrpc(b'{"method":"SendMessage","p":"the interview/ word"}' + pad, ON, IV) is None
    assert rpc.jsonrpc(b'{"method":"SendMessage","p":"interview"}' + pad, ON, IV) is None
    utf16 = ('{"method":"interview/x","p":"' + "a" * 70_000 + '"}').encode("utf-16")
    assert rpc.jsonrpc(utf16, ON, IV) is not None
    assert rpc.jsonrpc(b'{"method":"interview/x"}' + pad, rpc.NOT_ACTIVATED, IV) is None


def test_a_repeated_method_naming_the_namespace_anywhere_is_refused() -> None:
    # PROFILE §3.9: hosts keep the first or the last of two equal members.
    for body in (b'{"method":"interview/identity","method":"GetTask"}',
                 b'{"method":"GetTask","method":"interview/identity"}'):  # fmt: skip
        reply = rpc.jsonrpc(body, ON, IV)
        assert reply is not None and b"-32600" in reply.body


def test_decoded_body_one_layer_of_gzip_or_deflate() -> None:
    import gzip
    import zlib

    body = b'{"x":1}'
    ce = b"content-encoding"
    assert rpc.decoded_body([], body, ON, 100) == body
    assert rpc.decoded_body([(ce, b"identity")], body, ON, 100) == body
    assert (
        rpc.decoded_body([(b"Content-Encoding", b" GZip ")], gzip.compress(body), ON, 100) == body
    )
    assert rpc.decoded_body([(ce, b"deflate")], zlib.compress(body), ON, 100) == body
    statuses = {
        (b"br", body): 415, (b"gzip,gzip", body): 415, (b"gzip", b"x"): 400,
        (b"gzip", gzip.compress(b"y" * 101)): 413,
    }  # fmt: skip
    for (coding, data), status in statuses.items():
        reply = rpc.decoded_body([(ce, coding)], data, ON, 100)
        assert isinstance(reply, rpc.Reply) and reply.status == status, coding
        assert ("A2A-Extensions", INTERVIEW_URI) in reply.headers
    # Two fields are one list (RFC 9110 §8.4): a stack.
    two = rpc.decoded_body([(ce, b"gzip"), (ce, b"gzip")], body, ON, 100)
    assert isinstance(two, rpc.Reply) and two.status == 415
    assert isinstance(rpc.decoded_body([], b"z" * 101, ON, 100), rpc.Reply)


@pytest.mark.parametrize(
    ("requested", "served"),
    [("1.0", True), ("0.3", False), ("2.0", False), ("1.5", False), ("1.0.1", False),
     ("1", False), ("abc", False), ("", False), ("0.0", False)],
)  # fmt: skip
def test_version_negotiation_is_exact_major_minor(requested: str, served: bool) -> None:
    # PROFILE §3.10 and docs/decisions.md D-SERVE-24: never an answer where a host refuses.
    versions = rpc.declared_versions(IV.card)
    assert versions == {(1, 0)}
    assert rpc.version_supported(requested, versions) is served
    headers = [(b"a2a-version", requested.encode())]
    answer = call("interview/identity", request_id=5)
    assert answer is not None
    got = rpc.version_refusal(headers, versions, answer, ON)
    if served:
        assert got is answer
    else:
        assert json.loads(got.body)["error"]["code"] == -32009
        assert json.loads(got.body)["id"] == 5
        assert ("A2A-Extensions", INTERVIEW_URI) in got.headers
        rest = rpc.version_refusal(headers, versions, answer, ON, rest=True)
        assert rest.status == 400 and b"FAILED_PRECONDITION" in rest.body


def test_declared_versions_read_both_card_shapes() -> None:
    legacy = {"url": "http://x/", "additionalInterfaces": [{"url": "http://x/r",
                                                            "transport": "HTTP+JSON"}]}  # fmt: skip
    assert rpc.declared_versions(legacy) == {(0, 3)}
    assert rpc.declared_versions(legacy, "HTTP+JSON") == {(0, 3)}
    assert rpc.declared_versions({**legacy, "protocolVersion": "0.2.5"}) == {(0, 2)}
    assert rpc.requested_version([]) == "0.3"
    assert rpc.requested_version([(b"A2A-Version", b"  ")]) == "0.3"
    assert rpc.version_supported("0.3", frozenset()) is True
