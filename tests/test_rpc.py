"""The bindings as pure functions (PROFILE §3, §3b). Real-HTTP tests live elsewhere."""

from __future__ import annotations

import gzip
import json
import re
import tracemalloc
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_interview import reference, rpc
from a2a_interview.declarations import build
from a2a_interview.jcs import canonicalize
from a2a_interview.rpc._scan import _char_pattern
from a2a_interview.spec import INTERVIEW_URI
from support.spellings import raw_deflate

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


# ---------------------------------------------------------------- closing mutation testing's gaps
# Tests of rpc.py that close what mutation testing found unchecked (bench/mutation.py).
# Values are written out by hand from PROFILE §3 and RFC 9110: these pin values, they do
# not compare with the code's own output.


IV = build(reference.unsigned_card(), reference.proposals()).interview
ON = rpc.Activation(current=True)
REPLY = rpc.Reply(200, b"{}", (), 7)


@pytest.mark.parametrize("rest", [False, True])
@pytest.mark.parametrize(("asked", "sent"), [(-5, "1"), (0, "1"), (1, "1"), (2, "2"), (90, "90")])
def test_retry_after_is_at_least_one_second(asked: int, sent: str, rest: bool) -> None:
    # PROFILE §3.7: a 429 carries Retry-After; RFC 9110 §10.2.3 delay-seconds. The
    # floor of 1 is rpc's own (the limiter floors too, so only this test sees it): a 0
    # or a negative would tell clients to come back at once, or be no delay at all.
    limited = rpc.too_many_requests(asked, REPLY, ON, rest=rest)
    assert limited.status == 429
    assert [v for n, v in limited.headers if n == "Retry-After"] == [sent]


URI = INTERVIEW_URI


@pytest.mark.parametrize(
    ("headers", "current"),
    [
        ([("Content-Type", "application/json"), ("A2A-Extensions", URI)], True),
        ([(b"accept", b"*/*"), (b"A2A-EXTENSIONS", URI.encode())], True),
        ([("A2A-Extensions", f"https://x.example/e,{URI}")], True),  # no blank after ","
        ([("A2A-Extensions", f" \t{URI}\t ")], True),
        ([("A2A-Extensions", f"\x0b{URI}")], False),  # only SP and HTAB are trimmed
        ([("A2A-Extensions", f"{URI}\r\n")], False),
        ([("A2A-Extensions", f"X{URI}X")], False),
        ([("A2A-Extensions", f"{URI} {URI}")], False),  # blanks do not separate
    ],
)
def test_activation_reads_every_header_and_trims_only_blanks(
    headers: list[tuple[Any, Any]], current: bool
) -> None:
    # PROFILE §3.2: a comma-separated list, each element trimmed of blanks (RFC 9110
    # §5.6.1: OWS is SP / HTAB), compared exactly.
    assert rpc.activation(headers).current is current


def _envelope(method: Any, request_id: Any = 7, **extra: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, **extra}).encode()


@pytest.mark.parametrize("method", [5, None, ["interview/identity"], {"a": 1}, True])
def test_a_method_that_is_not_a_string_is_the_hosts(method: Any) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "x": "interview/"}).encode()
    assert rpc.jsonrpc(body, ON, IV) is None


def test_a_refusal_and_invalid_params_are_200_and_keep_the_id() -> None:
    # PROFILE §3.6 (a refusal is a result) and §3.5 (-32602): HTTP 200, and the id kept
    # for a 429 that may take the reply's place.
    refused = rpc.jsonrpc(_envelope("interview/weather"), ON, IV)
    assert refused is not None and (refused.status, refused.request_id) == (200, 7)
    invalid = rpc.jsonrpc(_envelope("interview/identity", params={"skill": "x"}), ON, IV)
    assert invalid is not None and (invalid.status, invalid.request_id) == (200, 7)
    assert b'"code":-32602' in invalid.body
    answered = rpc.jsonrpc(_envelope("interview/identity", request_id="a"), ON, IV)
    assert answered is not None and (answered.status, answered.request_id) == (200, "a")
    limited = rpc.too_many_requests(1, refused, ON)
    assert limited.request_id == 7 and b'"id":7' in limited.body


INVALID_REQUEST = b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'


def test_the_body_bound_given_is_the_bound_used() -> None:
    # PROFILE §3.9 (amended, D-SERVE-12): an activated call up to the bound
    # given is read and answered; one byte past it is never parsed, and since it names
    # the namespace it is refused (-32600 with the echo, JSON-RPC's id unknown: null),
    # never passed on to the host, which would read it at any size.
    body = _envelope("interview/identity")
    answered = rpc.jsonrpc(body, ON, IV, max_bytes=len(body))
    assert answered is not None and (answered.status, answered.request_id) == (200, 7)
    assert answered.body.startswith(b'{"id":7,"jsonrpc":"2.0","result":{')
    refused = rpc.jsonrpc(body, ON, IV, max_bytes=len(body) - 1)
    assert refused is not None
    assert (refused.status, refused.body, refused.request_id) == (200, INVALID_REQUEST, None)
    assert ("A2A-Extensions", URI) in refused.headers
    # A bound above the default (64 KiB) is the one used too: a call padded with blanks
    # past the default is answered under a larger bound, refused under the default.
    padded = body[:-1] + b" " * rpc.MAX_REQUEST_BYTES + b"}"
    large = rpc.jsonrpc(padded, ON, IV, max_bytes=len(padded))
    assert large is not None and large.body == answered.body
    default = rpc.jsonrpc(padded, ON, IV)
    assert default is not None and default.body == INVALID_REQUEST
    # Past the bound, a body naming no interview method is the host's.
    other = _envelope("message/send", params={"x": "interview"})
    assert rpc.jsonrpc(other, ON, IV, max_bytes=len(other) - 1) is None


def test_a_leniently_read_body_of_exactly_the_bound_is_refused() -> None:
    # PROFILE §3.9: not strict I-JSON (a duplicate key) but a host would read it as an
    # interview call: -32600, up to and including the bound.
    body = b'{"jsonrpc":"2.0","id":1,"id":2,"method":"interview/identity"}'
    refused = rpc.jsonrpc(body, ON, IV, max_bytes=len(body))
    assert refused is not None and b'"code":-32600' in refused.body


def test_the_rest_query_is_parsed_strictly_with_blank_values() -> None:
    # PROFILE §3b: "skill" without "=" is malformed (400); "skill=" names the empty
    # skill, which no skill id matches (the refusal), not "no selector".
    bare = rpc.rest("GET", "usage", b"skill", ON, IV)
    assert bare is not None and (bare.status, bare.body) == (400, rpc.REST_INVALID)
    empty = rpc.rest("GET", "usage", b"skill=", ON, IV)
    assert empty is not None and (empty.status, empty.body) == (200, IV.refusal)


def test_a_rest_429_has_the_rest_body() -> None:
    reply = rpc.rest("GET", "identity", b"", ON, IV)
    assert reply is not None
    limited = rpc.too_many_requests(5, reply, ON, rest=True)
    assert limited.body == rpc.REST_TOO_MANY
    assert limited.body == (
        b'{"error":{"code":429,"message":"Too many requests","status":"RESOURCE_EXHAUSTED"}}'
    )


def test_every_reply_says_it_is_json() -> None:
    # RFC 9110 §8.3 (names match case-insensitively): each reply of the bindings and the
    # 429 carries Content-Type: application/json.
    replies = [
        rpc.jsonrpc(_envelope("interview/identity"), ON, IV),
        rpc.jsonrpc(_envelope("interview/weather"), ON, IV),
        rpc.rest("GET", "identity", b"", ON, IV),
        rpc.rest("GET", "usage", b"x=1", ON, IV),
    ]
    replies.append(rpc.too_many_requests(1, REPLY, ON))
    for reply in replies:
        assert reply is not None
        types = [v for n, v in reply.headers if n.lower() == "content-type"]
        assert types == [rpc.JSON_CONTENT_TYPE] and types[0].startswith("application/json")


def test_may_name_namespace_finds_every_spelling_where_a_match_may_begin() -> None:
    # PROFILE §3.9 (amended, D-SERVE-12): one scan, no parse; False only when no
    # reading names the namespace. start and stop bound where a match may begin; a
    # match begun before stop may end past it.
    scan = rpc.may_name_namespace
    assert scan(b'"interview/') and not scan(b'{"method":"message/send"}')
    assert scan(b'\\"\\u0069nterview/')  # a backslash first, the escaped spelling after
    literal = b'"interview/x"'
    assert not scan(literal + b" " * 100, start=20)  # begins before start
    far = b" " * 10_000 + literal
    assert not scan(far, 0, 10) and scan(far, 9_990, 10_000)
    assert scan(b" " * 99 + literal, 0, 100)  # begins at 99, ends past stop
    escaped = b"\\" + b" " * 10_000 + b'"\\u0069nterview/'
    assert not scan(escaped, 0, 10) and scan(escaped)
    assert not scan(b'abcd\x00"interview/x"', start=6)  # a NUL at the fifth byte is UTF-8
    # UTF-16 and UTF-32 bodies (json.loads detects them) are decoded, a bad unit replaced.
    lone = b"\x00\xd8"  # a lone high surrogate, UTF-16-LE
    assert scan('"interview/x"'.encode("utf-16-le") + lone)
    assert not scan('{"method":"message/send"}'.encode("utf-16-le"))
    assert not scan('{"m":"x"}'.encode("utf-16-le") + lone)


def test_a_batch_of_non_objects_is_the_hosts() -> None:
    # PROFILE §3.9: a batch is ours when an element names an interview method; a string
    # element is no call.
    assert rpc.jsonrpc(b'[1, "interview/identity"]', ON, IV) is None


def test_the_drivers_scan_is_the_scan_used() -> None:
    # rpc.jsonrpc's scanned: the driver's may_name_namespace of the body (a large body
    # scanned in slices); a body it found naming nothing is not parsed.
    body = _envelope("interview/identity")
    assert rpc.jsonrpc(body, ON, IV, scanned=False) is None
    assert rpc.jsonrpc(body, ON, IV, scanned=True) is not None


TOO_LARGE = b'{"error":{"code":-32600,"message":"Request too large"},"id":null,"jsonrpc":"2.0"}'


def test_too_large_is_413_with_its_body_and_the_echo() -> None:
    # PROFILE §3.9: a body past the bound cannot be judged, and is refused, not passed on.
    reply = rpc.too_large(ON)
    assert (reply.status, reply.body) == (413, TOO_LARGE)
    assert ("A2A-Extensions", URI) in reply.headers


def test_an_error_carries_its_data_member() -> None:
    assert rpc.rpc_error(3, (-32009, "Version not supported"), data=b'{"v":["1.0"]}') == (
        b'{"error":{"code":-32009,"data":{"v":["1.0"]},"message":"Version not supported"},'
        b'"id":3,"jsonrpc":"2.0"}'
    )


@pytest.mark.parametrize(
    ("values", "codings"),
    [
        ([b"gzip"], ("gzip",)),
        ([b" GZip ,\tdeflate\t", b"br"], ("gzip", "deflate", "br")),  # every field joined
        ([b"identity, ,gzip"], ("gzip",)),  # identity and empty items left out
        ([b"gzip\x0b"], ("gzip\x0b",)),  # only SP and HTAB are trimmed (RFC 9110 OWS)
        ([b"gzip deflate"], ("gzip deflate",)),  # a blank separates nothing
        ([b"X-GZIP"], ("x-gzip",)),  # RFC 9110 §8.4.1.3: x-gzip, in any case
    ],
)
def test_content_codings_in_order_lower_cased(
    values: list[bytes], codings: tuple[str, ...]
) -> None:
    # RFC 9110 §8.4: Content-Encoding is a comma-separated list, in the order applied.
    headers = [(b"Content-Encoding", v) for v in values] + [(b"x-other", b"gzip")]
    assert rpc.content_codings(headers) == codings


# ------------------------------------------------------------ path spellings (D-SERVE-11)


@pytest.mark.parametrize(
    ("raw", "segments"),
    [
        # percent-escapes decoded until none is left: %2525252F is "/" after four rounds,
        # the most any host reads; a fifth level stays an escape.
        (b"/a%2525252Fb", ("a", "b")),
        (b"/a%252525252Fb", ("a%2Fb",)),
        (b"/a%41", ("aA",)),
        (b"/a%zz/b", ("a%zz", "b")),  # not an escape: kept as is
        # cut at the first NUL, however many follow
        (b"/a/b%00c/d%00e", ("a", "b")),
        (b"/a\x00b/c", ("a",)),
        # bytes that are not UTF-8 are read with U+FFFD, never an error
        (b"/a\xff/b", ("a\ufffd", "b")),
        # blanks inside a segment are kept; only trailing dots and blanks go (IIS)
        (b"/a b/c", ("a b", "c")),
        (b"/.a./b. ./ .c", (".a", "b", " .c")),
        (b"/aX/bX", ("aX", "bX")),
        # a segment is cut at its FIRST ";" (path parameters)
        (b"/a;b;c/d", ("a", "d")),
        (b"/a;b/..;x/c", ("c",)),  # "..;x" is a dot segment once cut
        # dot segments (RFC 3986 §5.2.4): "." dropped, ".." removes the one before, and
        # nothing above the root
        (b"/a/./b", ("a", "b")),
        (b"/a/b/../c", ("a", "c")),
        (b"/../a", ("a",)),
        (b"/a/../../b", ("b",)),
        (b"/a/.../b", ("a", "b")),  # "..." is no dot segment: trailing dots stripped, empty
        # full-width forms folded (NFKC), case kept
        ("/Ａ/ｂ".encode(), ("A", "b")),
        (b"", ()),
        (b"/", ()),
    ],
)
def test_path_segments_as_the_most_lenient_host_reads_them(
    raw: bytes, segments: tuple[str, ...]
) -> None:
    # docs/decisions.md D-SERVE-11 (PROFILE §3.9): each step of the reading, pinned by hand.
    assert rpc.path_segments(raw) == segments


def test_path_segments_of_a_text_path() -> None:
    # D-SERVE-11: a path given as text is read as its UTF-8 bytes; a lone surrogate (an
    # undecodable byte kept by surrogateescape, as ASGI servers pass them) never raises.
    assert rpc.path_segments("/a2a/jsonrpc") == ("a2a", "jsonrpc")
    assert rpc.path_segments("/é/x%41") == ("é", "xA")
    assert rpc.path_segments("/a\udcff/b") == ("a\ufffd", "b")
    assert rpc.path_key(("A", "Ｂ")) == ("a", "ｂ")  # segments given are not read again


# ------------------------------------------------ content codings (docs/decisions.md D-SERVE-23)

BODY = b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}'
CE = b"Content-Encoding"
UNSUPPORTED = (
    b'{"error":{"code":-32600,"message":"Content-Encoding not supported"},"id":null,'
    b'"jsonrpc":"2.0"}'
)
UNDECODABLE = b'{"error":{"code":-32600,"message":"Body not decodable"},"id":null,"jsonrpc":"2.0"}'


def _decoded(coding: bytes, data: bytes, max_bytes: int = 100) -> bytes | rpc.Reply:
    return rpc.decoded_body([(CE, coding)], data, ON, max_bytes)


def test_gzip_members_are_one_body_and_both_deflates_are_read() -> None:
    # D-SERVE-23: gzip and x-gzip with concatenated members read as one body; deflate
    # zlib-wrapped or raw (hosts differ on which they accept).
    assert _decoded(b"gzip", gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"
    assert _decoded(b"x-gzip", gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"
    assert _decoded(b"deflate", raw_deflate(BODY)) == BODY
    assert _decoded(b"deflate", zlib.compress(BODY)) == BODY
    assert _decoded(b"DEFLATE", zlib.compress(BODY)) == BODY


@pytest.mark.parametrize(
    ("coding", "data"),
    [
        (b"gzip", zlib.compress(BODY)),  # zlib-wrapped is not gzip
        (b"gzip", raw_deflate(BODY)),
        (b"deflate", gzip.compress(BODY)),  # gzip is not deflate
        (b"deflate", zlib.compress(b"ab") + zlib.compress(b"cd")),  # bytes after the stream
        (b"deflate", zlib.compress(b"ab") + b"x"),
        (b"gzip", gzip.compress(b"ab") + b"x"),  # a member, then bytes that are none
        (b"gzip", gzip.compress(BODY)[:-9]),  # truncated
        (b"deflate", zlib.compress(BODY)[:-6]),
        (b"gzip", b""),
        (b"deflate", b"not deflate"),
    ],
)
def test_a_body_that_does_not_inflate_is_400(coding: bytes, data: bytes) -> None:
    # D-SERVE-23: a body that does not inflate as the coding says is 400, a fixed -32600
    # body with the echo.
    reply = _decoded(coding, data)
    assert isinstance(reply, rpc.Reply)
    assert (reply.status, reply.body) == (400, UNDECODABLE)
    assert reply.headers == (("Content-Type", "application/json"), ("A2A-Extensions", URI))


@pytest.mark.parametrize("coding", [b"gzip", b"deflate"])
def test_inflation_is_bounded_to_the_byte(coding: bytes) -> None:
    # D-SERVE-23: bounded by max_body as it inflates: exactly the bound is read, one byte
    # past it is 413 (also past it only in a second gzip member).
    exact, past = b"a" * 100, b"a" * 101
    packed = gzip.compress if coding == b"gzip" else zlib.compress
    assert _decoded(coding, packed(exact)) == exact
    reply = _decoded(coding, packed(past))
    assert isinstance(reply, rpc.Reply) and (reply.status, reply.body) == (413, TOO_LARGE)
    two = _decoded(b"gzip", gzip.compress(b"a" * 60) + gzip.compress(b"a" * 41))
    assert isinstance(two, rpc.Reply) and two.status == 413
    assert _decoded(b"gzip", gzip.compress(b"a" * 60) + gzip.compress(b"a" * 40)) == exact


def test_the_raw_body_bound_is_inclusive() -> None:
    # D-SERVE-12: a body of exactly the bound is read; one byte more is 413 with the echo.
    assert rpc.decoded_body([], b"a" * 100, ON, 100) == b"a" * 100
    reply = rpc.decoded_body([], b"a" * 101, ON, 100)
    assert isinstance(reply, rpc.Reply) and (reply.status, reply.body) == (413, TOO_LARGE)
    assert ("A2A-Extensions", URI) in reply.headers


@pytest.mark.parametrize("codings", [[b"br"], [b"gzip, gzip"], [b"gzip", b"deflate"], [b"zstd"]])
def test_an_unsupported_coding_is_415_with_accept_encoding(codings: list[bytes]) -> None:
    # D-SERVE-23, RFC 9110 §15.5.16: any other coding, or two, is 415 naming what is
    # accepted, a fixed -32600 body with the echo.
    reply = rpc.decoded_body([(CE, c) for c in codings], gzip.compress(BODY), ON, 1000)
    assert isinstance(reply, rpc.Reply)
    assert (reply.status, reply.body) == (415, UNSUPPORTED)
    assert reply.headers == (
        ("Content-Type", "application/json"),
        ("A2A-Extensions", URI),
        ("Accept-Encoding", "gzip, deflate"),
    )


# ------------------------------------------- version negotiation (docs/decisions.md D-SERVE-24)


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("1.0", (1, 0)),
        ("0.3", (0, 3)),
        ("1", (1, 0)),  # no minor: .0
        ("v2", (2, 0)),
        ("1.2.3", (1, 2)),  # A2A 1.0 §3.6: a patch is ignored
        (" \t1.0\t ", (1, 0)),  # only SP and HTAB are trimmed (RFC 9110 §5.6.3 OWS)
        ("1.0\n", None),
        ("\x0b1.0", None),
        ("X1.0X", None),
        ("1.x", None),
        ("", None),
    ],
)
def test_parse_version_reads_major_minor(text: str, version: tuple[int, int] | None) -> None:
    assert rpc.parse_version(text) == version


def test_requested_version_is_the_first_field_trimmed() -> None:
    # A2A 1.0 §3.6: absent or empty is 0.3; the name matches without case (RFC 9110 §5.1).
    headers = [(b"x-a2a-version", b"2.0"), (b"A2A-VERSION", b" \t1.0\t "), (b"a2a-version", b"3.0")]
    assert rpc.requested_version(headers) == "1.0"
    assert rpc.requested_version([(b"a2a-version", b"\xe91.0")]) == "\u00e91.0"  # Latin-1
    assert rpc.requested_version([(b"a2a-version", b"\x0b")]) == "\x0b"
    assert rpc.requested_version([(b"a2a-version", b"X")]) == "X"
    assert rpc.requested_version([(b"a2a-version", b"")]) == "0.3"


V1 = {"protocolBinding": "JSONRPC", "protocolVersion": "1.0", "url": "http://x/a2a"}


@pytest.mark.parametrize(
    ("card", "binding", "versions"),
    [
        ({"supportedInterfaces": [V1]}, "JSONRPC", {(1, 0)}),
        ({"supportedInterfaces": [{"protocolBinding": "JSONRPC"}]}, "JSONRPC", {(1, 0)}),
        ({"supportedInterfaces": [V1, {**V1, "protocolVersion": "1.2"}]}, "JSONRPC",
         {(1, 0), (1, 2)}),
        ({"supportedInterfaces": [V1]}, "HTTP+JSON", set()),
        ({"supportedInterfaces": [{**V1, "protocolBinding": "HTTP+JSON"}, V1]}, "HTTP+JSON",
         {(1, 0)}),
        ({"supportedInterfaces": [{**V1, "protocolVersion": 1.0}]}, "JSONRPC", set()),
        ({"supportedInterfaces": [{**V1, "protocolVersion": "one"}]}, "JSONRPC", set()),
        ({"supportedInterfaces": ["JSONRPC", None, V1]}, "JSONRPC", {(1, 0)}),
        ({"supportedInterfaces": {"0": V1}}, "JSONRPC", set()),
        # the 0.3 shape: the top-level protocolVersion (0.3 when absent) when url's
        # preferredTransport (JSONRPC when absent) or an additional interface is the binding
        ({"url": "http://x/"}, "JSONRPC", {(0, 3)}),
        ({"url": "http://x/", "protocolVersion": "0.2.5"}, "JSONRPC", {(0, 2)}),
        ({"url": "http://x/", "preferredTransport": "GRPC"}, "JSONRPC", set()),
        ({"url": "http://x/", "preferredTransport": "GRPC"}, "GRPC", {(0, 3)}),
        ({"url": "http://x/", "preferredTransport": "GRPC",
          "additionalInterfaces": [{"transport": "JSONRPC", "url": "http://x/j"}]}, "JSONRPC",
         {(0, 3)}),
        ({"url": "http://x/", "preferredTransport": "GRPC",
          "additionalInterfaces": ["JSONRPC", {"transport": "HTTP+JSON"}]}, "JSONRPC", set()),
        ({"url": "http://x/", "preferredTransport": "GRPC",
          "additionalInterfaces": {"transport": "JSONRPC"}}, "JSONRPC", set()),
        ({"preferredTransport": "JSONRPC", "protocolVersion": "0.3"}, "JSONRPC", set()),  # no url
        ({"url": "http://x/", "supportedInterfaces": [{**V1, "protocolVersion": "1.1"}]},
         "JSONRPC", {(0, 3), (1, 1)}),
        ("not a card", "JSONRPC", set()),
        ([V1], "JSONRPC", set()),
    ],
)  # fmt: skip
def test_declared_versions_of_each_card_shape(
    card: Any, binding: str, versions: set[tuple[int, int]]
) -> None:
    # D-SERVE-24: supportedInterfaces[].protocolVersion of the binding (1.0 when absent);
    # the 0.3 shape's top-level protocolVersion; anything else declares nothing.
    assert rpc.declared_versions(card, binding) == versions


ERROR_INFO = (
    b'{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org",'
    b'"reason":"VERSION_NOT_SUPPORTED"}'
)


def test_a_refused_version_is_the_hosts_error_with_the_echo() -> None:
    # D-SERVE-24, A2A 1.0 §5.4, §9.5: -32009 "Version not supported" with the request's
    # id and the ErrorInfo on JSON-RPC (HTTP 200); 400 FAILED_PRECONDITION on HTTP+JSON.
    headers = [(b"a2a-version", b"2.0")]
    reply = rpc.Reply(200, b"{}", (), "r-1")
    legacy = rpc.Activation(legacy=True)
    got = rpc.version_refusal(headers, frozenset({(1, 0)}), reply, legacy)
    assert got.body == (
        b'{"error":{"code":-32009,"data":[' + ERROR_INFO + b'],"message":"Version not supported"},'
        b'"id":"r-1","jsonrpc":"2.0"}'
    )
    assert (got.status, got.request_id) == (200, "r-1")
    echo = (("A2A-Extensions", URI), ("X-A2A-Extensions", URI))
    assert got.headers == (("Content-Type", "application/json"), *echo)
    rest = rpc.version_refusal(headers, frozenset({(1, 0)}), reply, legacy, rest=True)
    assert rest.body == (
        b'{"error":{"code":400,"details":[' + ERROR_INFO + b'],"message":"Version not supported",'
        b'"status":"FAILED_PRECONDITION"}}'
    )
    assert rest.status == 400
    assert rest.headers == (("Content-Type", "application/json"), *echo)
    # Served: the reply itself, unchanged, on either binding.
    served = [(b"a2a-version", b"1.0")]
    assert rpc.version_refusal(served, frozenset({(1, 0)}), reply, legacy) is reply
    assert rpc.version_refusal(served, frozenset({(1, 0)}), reply, legacy, rest=True) is reply
    assert rpc.version_refusal([], frozenset(), reply, legacy) is reply


# ----------------------------------------- the namespace in any JSON escaping (PROFILE §3.9)


@pytest.mark.parametrize(
    ("char", "spellings", "not_spellings"),
    [
        ("i", ["i", "\\u0069"], ["I", "\\u0049", "\\x69", "\\u069", "\\/"]),
        ("e", ["e", "\\u0065"], ["E", "\\u0045", "\\U0065"]),
        # hex digits that are letters, in either case (RFC 8259 §7)
        ("z", ["z", "\\u007a", "\\u007A"], ["Z", "\\u005a", "\\u007"]),
        ("/", ["/", "\\u002f", "\\u002F", "\\/"], ["\\\\", "\\u002g", "//"]),
        (".", [".", "\\u002e", "\\u002E"], ["x", "\\."]),  # a regex character kept literal
    ],
)
def test_char_pattern_matches_every_json_spelling_of_a_character(
    char: str, spellings: list[str], not_spellings: list[str]
) -> None:
    # PROFILE §3.9 (D-SERVE-12), RFC 8259 §7: a JSON string spells a character
    # itself or as \\u with four hex digits of either case; "/" also as "\\/". Tested here
    # on the function itself: the module's pattern is built from it at import.
    pattern = _char_pattern(char)
    for spelling in spellings:
        assert re.fullmatch(pattern, spelling), (char, spelling)
        assert re.fullmatch(pattern.encode(), spelling.encode()), (char, spelling)
    for spelling in not_spellings:
        assert not re.fullmatch(pattern, spelling), (char, spelling)


def test_a_bomb_is_inflated_only_up_to_the_bound() -> None:
    # D-SERVE-23 : bounded "as it inflates": a body of about 20 KB
    # that inflates to 20 MB, against a bound of 100,000 bytes, is refused (413) having
    # held about the bound, never the whole inflated body (traced allocations stay far
    # below 1 MB).
    bomb = gzip.compress(bytes(20_000_000))
    assert len(bomb) < 100_000
    tracemalloc.start()
    try:
        reply = rpc.decoded_body([(CE, b"gzip")], bomb, ON, 100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(reply, rpc.Reply) and reply.status == 413
    assert peak < 1_000_000


def test_a_body_nested_past_any_reading_counts_as_naming_the_namespace() -> None:
    # PROFILE §3.9: nesting past what the lenient reader can follow is not judged and
    # counts as naming the namespace (a host may read deeper): refused, never passed on.
    body = _envelope("interview/identity")[:-1] + b',"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    reply = rpc.jsonrpc(body, ON, IV, max_bytes=len(body))
    assert reply is not None and (reply.status, reply.body) == (200, INVALID_REQUEST)


def test_a_bound_past_the_json_readers_default_is_the_bound_used() -> None:
    # PROFILE §3.9, D-SERVE-12: the body bound given to the binding is the one the strict
    # reading uses, also past the reader's own default of 1 MiB.
    body = _envelope("interview/identity")
    padded = body[:-1] + b" " * (1 << 20) + b"}"
    answered = rpc.jsonrpc(padded, ON, IV, max_bytes=len(padded))
    assert answered is not None and answered.body.startswith(b'{"id":7,"jsonrpc":"2.0","result":{')
