"""Tests of rpc.py that close what mutation testing found unchecked (issue 17 finding 6,
bench/mutation.py). Values are written out by hand from PROFILE §3 and RFC 9110: these
pin values, they do not compare with the code's own output."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_interview import reference, rpc
from a2a_interview.declarations import build
from a2a_interview.spec import INTERVIEW_URI

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
    # PROFILE §3.9 (amended, issue 14 findings 8-9): an activated call up to the bound
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
    # PROFILE §3.9 (amended, issue 14 finding 9): one scan, no parse; False only when no
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
    ],
)
def test_content_codings_in_order_lower_cased(
    values: list[bytes], codings: tuple[str, ...]
) -> None:
    # RFC 9110 §8.4: Content-Encoding is a comma-separated list, in the order applied.
    headers = [(b"Content-Encoding", v) for v in values] + [(b"x-other", b"gzip")]
    assert rpc.content_codings(headers) == codings
