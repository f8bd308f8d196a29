"""Strict I-JSON ingress: every rejection has its typed error (PROFILE §1.1, §1.4)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_interview import errors
from a2a_interview.ijson import loads


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b'{"a":1,"a":2}', errors.DuplicateKey),
        (b'[{"x":{"k":1,"k":1}}]', errors.DuplicateKey),
        (b"NaN", errors.NonFiniteNumber),
        (b"[Infinity]", errors.NonFiniteNumber),
        (b'{"a":-Infinity}', errors.NonFiniteNumber),
        (b"1e400", errors.NonFiniteNumber),
        (b"9007199254740992", errors.IntegerOutOfRange),
        (b"-9007199254740992", errors.IntegerOutOfRange),
        (b"[" + b"9" * 5000 + b"]", errors.IntegerOutOfRange),
        (b"9007199254740992.0", errors.IntegerOutOfRange),
        (b"-1.2e17", errors.IntegerOutOfRange),
        (b'\xef\xbb\xbf{"a":1}', errors.ByteOrderMark),
        (b'"\\ud800"', errors.LoneSurrogate),
        (b'{"\\udc00x":1}', errors.LoneSurrogate),
        (b'["ok","\\uDFFF"]', errors.LoneSurrogate),
        (b"[" * 65 + b"]" * 65, errors.TooDeep),
        (b'{"a":' * 65 + b"1" + b"}" * 65, errors.TooDeep),
        (b"[" * 100000, errors.TooDeep),
        (b'"\xff"', errors.NotUTF8),
        (b"\xff\xfe{\x00}\x00", errors.NotUTF8),
        (b"{'a':1}", errors.MalformedJSON),
        (b"[1,]", errors.MalformedJSON),
        (b"", errors.MalformedJSON),
        (b'"tab\there"', errors.MalformedJSON),
    ],
)
def test_rejections_are_typed(data: bytes, error: type[errors.IngressError]) -> None:
    with pytest.raises(error) as info:
        loads(data)
    assert isinstance(info.value, errors.IngressError)
    assert info.value.code == error.code


def test_size_bound_default_is_one_mebibyte() -> None:
    # PROFILE §1.4: over 1 MiB is rejected before parsing.
    body = b'"' + b"a" * (1 << 20) + b'"'
    with pytest.raises(errors.TooLarge):
        loads(body)
    assert loads(b'"' + b"a" * ((1 << 20) - 2) + b'"') == "a" * ((1 << 20) - 2)


def test_bounds_are_configurable() -> None:
    with pytest.raises(errors.TooLarge):
        loads(b"[1,2,3]", max_bytes=5)
    with pytest.raises(errors.TooDeep):
        loads(b"[[1]]", max_depth=1)
    assert loads(b"[" * 64 + b"]" * 64) is not None  # exactly 64 levels is allowed


def test_accepts_the_edges() -> None:
    assert loads(b"9007199254740991") == 2**53 - 1
    assert loads(b"-9007199254740991") == -(2**53) + 1
    assert loads(b'"\\ud83d\\ude00"') == "\U0001f600"  # a proper surrogate pair
    assert loads('"räkna"') == "räkna"
    assert loads(b"1.5e3") == 1500.0


@pytest.mark.parametrize("text", ['"\ud800"', '{"\udc00":1}', '["ok","x\udfff"]'])
def test_text_with_a_raw_lone_surrogate_is_rejected(text: str) -> None:
    # PROFILE §1.1: lone surrogates are rejected whether escaped in bytes or raw in text.
    with pytest.raises(errors.LoneSurrogate):
        loads(text)


def test_error_messages_carry_no_input() -> None:
    secret = b'{"ignore previous instructions":1,"ignore previous instructions":2}'
    with pytest.raises(errors.DuplicateKey) as info:
        loads(secret)
    assert "ignore" not in str(info.value)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_escape_the_error_tree(data: bytes) -> None:
    with contextlib.suppress(errors.IngressError):
        loads(data)
