"""The usual interview call read without a general parse (D-SERVE-37): the fast reading
of ``rpc.jsonrpc`` and the general one give byte-identical replies for every body, and
a body the fast reading must not take goes the general way (PROFILE §3.4, §3.5, §3.9)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_interview import reference, rpc
from a2a_interview.declarations import build
from a2a_interview.rpc import _bindings
from a2a_interview.rpc._fast import _exact_call, _fast_call
from a2a_interview.spec import QUESTIONS

IV = build(reference.unsigned_card(), reference.proposals()).interview
ON = rpc.Activation(current=True)
LEGACY = rpc.Activation(current=True, legacy=True)


@contextmanager
def general_only() -> Iterator[None]:
    """``rpc.jsonrpc`` with its fast reading taken out: every body parsed in full."""
    with (
        patch.object(_bindings, "_fast_call", lambda body: None),
        patch.object(_bindings, "_exact_call", lambda body: None),
    ):
        yield


def both(body: bytes, act: rpc.Activation = ON) -> tuple[rpc.Reply | None, rpc.Reply | None]:
    fast = rpc.jsonrpc(body, act, IV)
    with general_only():
        general = rpc.jsonrpc(body, act, IV)
    return fast, general


WHITESPACE = st.text(alphabet=" \t\n\r", max_size=3)
ODD_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
) | st.sampled_from(["", " ", "a b", '"', "\\", "/", "\x7f", "\u2028", "é", "\U0001f600"])
IDS = st.one_of(
    st.integers(min_value=-(2**53) - 5, max_value=2**53 + 5),
    st.integers(min_value=-1000, max_value=1000),
    st.sampled_from([0, 1, -1]),
    ODD_TEXT,
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.just({}),
    st.just([]),
)
METHODS = st.sampled_from(
    [f"interview/{q}" for q in sorted(QUESTIONS)]
    + ["interview/nope", "interview/", "interview/Identity", "SendMessage", "interview/usage "]
) | ODD_TEXT.map(lambda t: "interview/" + t)
PARAMS = st.one_of(
    st.just({}),
    st.fixed_dictionaries({"skill": ODD_TEXT}),
    st.fixed_dictionaries({"skill": st.integers() | st.none()}),
    st.just({"skill": "a", "x": 1}),
    st.just([]),
    st.none(),
    st.just("x"),
)
NUMBER_SPELLINGS = {1: ["1", "1.0", "1e0", "10e-1"], 0: ["-0", "0", "0.0"], -1: ["-1", "-1E0"]}


def _value(draw: Any, value: Any) -> str:
    """``value`` as JSON text, in one of the spellings a client may use."""
    if type(value) is int and value in NUMBER_SPELLINGS:
        return draw(st.sampled_from(NUMBER_SPELLINGS[value]))
    if isinstance(value, dict):
        items = [
            draw(WHITESPACE) + _value(draw, k) + draw(WHITESPACE) + ":" + draw(WHITESPACE)
            + _value(draw, v) + draw(WHITESPACE)
            for k, v in value.items()
        ]  # fmt: skip
        return "{" + ",".join(items) + draw(WHITESPACE) + "}"
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if isinstance(value, str) and draw(st.booleans()):
        text = text.replace("/", "\\/")  # an escaped solidus reads as "/"
    return text


@st.composite
def bodies(draw: Any, usual: bool = False) -> bytes:
    """A JSON-RPC call: the envelope's members (some left out, some repeated, sometimes
    one more), in any order, any JSON whitespace, strings escaped or not. ``usual``: a
    valid call of one of the five questions, only its id and spelling varied."""
    members: list[tuple[str, Any]] = []
    if usual:
        question = draw(st.sampled_from(sorted(QUESTIONS)))
        members += [("jsonrpc", "2.0"), ("method", f"interview/{question}")]
        members.append(("id", draw(st.sampled_from([0, 1, -1]) | IDS)))
        if question in ("usage", "terms") and draw(st.booleans()):
            members.append(("params", {"skill": draw(ODD_TEXT)}))
        elif draw(st.booleans()):
            members.append(("params", {}))
    else:
        if draw(st.integers(0, 9)):
            members.append(("jsonrpc", draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]))))
        if draw(st.integers(0, 9)):
            members.append(("id", draw(IDS)))
        if draw(st.integers(0, 19)):
            members.append(("method", draw(METHODS)))
        if draw(st.booleans()):
            members.append(("params", draw(PARAMS)))
        if draw(st.integers(0, 9)) == 0:
            members.append(("extra", 1))
        if members and draw(st.integers(0, 9)) == 0:
            members.append(draw(st.sampled_from(members)))  # a repeated member
    members = draw(st.permutations(members))
    inner = ",".join(
        draw(WHITESPACE) + _value(draw, k) + draw(WHITESPACE) + ":" + draw(WHITESPACE)
        + _value(draw, v) + draw(WHITESPACE)
        for k, v in members
    )  # fmt: skip
    text = draw(WHITESPACE) + "{" + inner + draw(WHITESPACE) + "}" + draw(WHITESPACE)
    return text.encode("utf-8")


@settings(max_examples=1000, deadline=None)
@given(bodies(usual=True) | bodies(), st.sampled_from([ON, LEGACY]))
def test_fast_and_general_readings_give_the_same_reply(body: bytes, act: rpc.Activation) -> None:
    """PROFILE §3.4, §3.5, §3.6, §3.9: whatever the id, spelling, whitespace, member order,
    repetition or characters, the fast reading answers exactly as the strict parse does
    (status, bytes, headers, and the id a later 429 carries), or leaves it to it."""
    fast, general = both(body, act)
    assert fast == general
    if fast is not None:
        assert type(fast.request_id) is type(general.request_id)  # type: ignore[union-attr]


@st.composite
def exact_bodies(draw: Any) -> bytes:
    """A call spelled with no whitespace, its members in one of the two orders the exact
    reading knows (D-SERVE-51), with any id, method and params: valid or not."""
    ids = [json.dumps(draw(IDS), ensure_ascii=draw(st.booleans()))]
    ids += draw(st.lists(st.sampled_from(["-0", "1.0", "1e0", "00", "{}", "[]", "true"])))
    request_id = draw(st.sampled_from(ids))
    method = json.dumps(draw(METHODS), ensure_ascii=draw(st.booleans()))
    head = draw(
        st.sampled_from(
            [f'"jsonrpc":"2.0","id":{request_id}', f'"id":{request_id},"jsonrpc":"2.0"']
        )
    )
    body = "{" + head + ',"method":' + method
    if draw(st.booleans()):
        body += ',"params":' + json.dumps(
            draw(PARAMS), ensure_ascii=draw(st.booleans()), separators=(",", ":")
        )
    return (body + "}").encode("utf-8")


@settings(max_examples=1000, deadline=None)
@given(exact_bodies(), st.sampled_from([ON, LEGACY]))
def test_the_exact_reading_reads_what_the_fast_one_does(body: bytes, act: rpc.Activation) -> None:
    """D-SERVE-51: a body the exact reading takes is read as the fast reading reads it,
    and answered as the strict parse answers it (PROFILE §3.4, §3.5, §3.6)."""
    exact = _exact_call(body)
    if exact is not None:
        assert exact == _fast_call(body)
    fast, general = both(body, act)
    assert fast == general


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}',
        b'{"id":"r-1","jsonrpc":"2.0","method":"interview/usage","params":{"skill":"s"}}',
        b'{"jsonrpc":"2.0","id":null,"method":"interview/terms","params":{}}',
        b'{"id":-900719925474099,"jsonrpc":"2.0","method":"interview/elsewhere"}',
    ],
)
def test_the_usual_spellings_take_the_exact_reading(body: bytes) -> None:
    """D-SERVE-51: the usual call as clients and this project's verifier write it is read
    by one match, before the namespace scan; its reply is the strict parse's."""
    assert _exact_call(body) is not None
    fast, general = both(body)
    assert fast is not None and fast == general


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"interview/identity","params":{"skill":"s"}}',
        b'{"jsonrpc":"2.0","id":-0,"method":"interview/identity"}',
        b'{"jsonrpc":"2.0","id":1.0,"method":"interview/identity"}',
        b'{"jsonrpc":"2.0", "id":1,"method":"interview/identity"}',
        b'{"method":"interview/identity","jsonrpc":"2.0","id":1}',
        b'{"jsonrpc":"2.0","id":"\\u0041","method":"interview/identity"}',
    ],
)
def test_what_the_exact_reading_must_not_take_is_left_to_the_others(body: bytes) -> None:
    """D-SERVE-51: a skill on a question without a selector, an id it cannot echo byte for
    byte, whitespace, another member order, an escape: not the exact reading's; the
    reply is still the strict parse's."""
    assert _exact_call(body) is None
    fast, general = both(body)
    assert fast == general


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}',
        b'{"jsonrpc":"2.0","id":"r-17","method":"interview/identity","params":{}}',
        b' {\n "method" : "interview/usage" ,\t"params":{ "skill" : "reconcile" },'
        b'"id":-42,"jsonrpc":"2.0"}\r\n',
        b'{"id":null,"jsonrpc":"2.0","method":"interview/terms","params":{"skill":"a b/c"}}',
        b'{"jsonrpc":"2.0","method":"interview/identity"}',
        b'{"jsonrpc":"2.0","id":900719925474099,"method":"interview/elsewhere"}',
    ],
)
def test_the_usual_calls_take_the_fast_reading(body: bytes) -> None:
    """D-SERVE-37: the usual call shapes (any member order, whitespace, a number or a
    plain string id, a selector) are read without a parse, and answered as the strict
    parse answers them (PROFILE §3.4, §3.5, §3.6)."""
    assert _fast_call(body) is not None
    fast, general = both(body)
    assert fast is not None and fast == general


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # a repeated member: refused whole (PROFILE §3.9), never read as either copy
        (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"interview/identity"}',
         b'{"error":{"code":-32600,"message":"Invalid Request"},"id":null,"jsonrpc":"2.0"}'),
        # -0 is the number 0: the reply's id is 0, not the request's spelling
        (b'{"jsonrpc":"2.0","id":-0,"method":"interview/identity"}', b'"id":0,'),
        # an escaped string is read decoded: the reply's id is its RFC 8785 form
        (b'{"jsonrpc":"2.0","id":"\\u0041","method":"interview/identity"}', b'"id":"A",'),
        (b'{"jsonrpc":"2.0","id":"a\\"b","method":"interview/identity"}', b'"id":"a\\"b",'),
        # an escaped method names the namespace all the same
        (b'{"jsonrpc":"2.0","id":1,"method":"interview\\/identity"}', b'"id":1,'),
        # past the safe integers: not an id this layer can echo exactly
        (b'{"jsonrpc":"2.0","id":9007199254740993,"method":"interview/identity"}',
         b'"code":-32600'),
        # 1.0 is a fraction to the parser, and no valid id
        (b'{"jsonrpc":"2.0","id":1.0,"method":"interview/identity"}', b'"code":-32600'),
        # wrong params: -32602 with the id
        (b'{"jsonrpc":"2.0","id":3,"method":"interview/identity","params":{"skill":"x"}}',
         b'"code":-32602'),
        (b'{"jsonrpc":"2.0","id":3,"method":"interview/usage","params":null}', b'"code":-32602'),
        # a member outside the envelope, a version that is not 2.0, an object id
        (b'{"jsonrpc":"2.0","id":1,"method":"interview/identity","x":1}', b'"code":-32600'),
        (b'{"jsonrpc":"1.0","id":1,"method":"interview/identity"}', b'"code":-32600'),
        (b'{"jsonrpc":"2.0","id":{},"method":"interview/identity"}', b'"code":-32600'),
        # a UTF-8 byte order mark: strict I-JSON refuses it, a lenient host reads it
        (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"interview/identity"}',
         b'"code":-32600'),
        # non-ASCII in a string: read by the parser, written in RFC 8785 form
        ('{"jsonrpc":"2.0","id":"é","method":"interview/identity"}'.encode(), '"id":"é",'
         .encode()),
    ],
)  # fmt: skip
def test_what_the_fast_reading_must_not_take_goes_the_general_way(
    body: bytes, expected: bytes
) -> None:
    """D-SERVE-37: a body outside the fast reading's narrow shape (a repeated member, an
    escape, a number it cannot echo byte for byte, wrong params or envelope, a BOM,
    non-ASCII) is left to the strict parse, whose reply is the one given (PROFILE §3.4,
    §3.5, §3.9)."""
    assert _fast_call(body) is None
    fast, general = both(body)
    assert fast is not None and fast == general
    assert expected in fast.body
