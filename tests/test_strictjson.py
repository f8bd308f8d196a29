"""Strict I-JSON ingress: every rejection has its typed error (PROFILE §1.1, §1.4)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_interview import errors, strictjson
from a2a_interview.errors import ByteOrderMark, IntegerOutOfRange, LoneSurrogate, TooDeep, TooLarge
from a2a_interview.spec import MAX_SAFE_INTEGER
from a2a_interview.strictjson import loads


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


# ---------------------------------------------------------------- closing mutation testing's gaps
# strictjson.py under mutation (bench/mutation.py): the edges of each bound, and a lone
# surrogate wherever it hides (PROFILE §1.1, §1.4). Inputs and verdicts by hand.


@pytest.mark.parametrize("data", ['"aaaa"', b'"aaaa"', '"\u00e4\u00e4"', '"\u00e4\u00e4"'.encode()])
def test_a_document_of_exactly_max_bytes_is_accepted(data: str | bytes) -> None:
    # PROFILE §1.4: "more than max_bytes" is refused; exactly max_bytes is not. A text's
    # size is its UTF-8 length ("ää" is 4 characters, 6 bytes).
    size = len(data.encode() if isinstance(data, str) else data)
    assert isinstance(strictjson.loads(data, max_bytes=size), str)
    with pytest.raises(TooLarge):
        strictjson.loads(data, max_bytes=size - 1)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":"\\ud800"}', '{"a":{"b":"\\udc00"}}', '{"a":["\\ud800"]}', '[{"a":"\\ud800"}]',
        '{"\\ud800":1}', '[["\\udfff"]]',
    ],
)  # fmt: skip
def test_a_lone_surrogate_is_refused_at_any_depth(text: str) -> None:
    with pytest.raises(LoneSurrogate):
        strictjson.loads(text)


@pytest.mark.parametrize(
    ("text", "levels"),
    [
        ('{"a":{"b":{"c":1}},"x":[],"y":[]}', 3),
        ('[[[1]],[],[]]', 3),
        ('{"a":[{"b":1}],"x":{},"y":{}}', 3),
        ('{"a":{"b":{"c":"\\u00e9"}}}', 3),
    ],
)  # fmt: skip
def test_exactly_max_depth_levels_are_accepted(text: str, levels: int) -> None:
    # PROFILE §1.4: "nested more than max_depth levels" is refused, max_depth is not.
    # Extra siblings (or an escape) make the pre-screen walk the whole value.
    strictjson.loads(text, max_depth=levels)
    with pytest.raises(TooDeep):
        strictjson.loads(text, max_depth=levels - 1)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"{MAX_SAFE_INTEGER}.0", float(MAX_SAFE_INTEGER)),
        (f"-{MAX_SAFE_INTEGER}.0", -float(MAX_SAFE_INTEGER)),
        ("1e21", 1e21),
        ("-1e21", -1e21),
        ("1.5e300", 1.5e300),
    ],
)
def test_integral_floats_at_the_edges_are_accepted(text: str, value: float) -> None:
    # ±(2^53−1) in a float spelling is still in range; from 1e21 on, RFC 8785 writes an
    # exponent, so the canonical form is not an out-of-range integer (strictjson._float).
    assert strictjson.loads(text) == value


@pytest.mark.parametrize("text", [f"{MAX_SAFE_INTEGER + 1}.0", "9.999e20", "-9007199254740993.0"])
def test_integral_floats_beyond_the_safe_range_are_refused(text: str) -> None:
    with pytest.raises(IntegerOutOfRange):
        strictjson.loads(text)


@pytest.mark.parametrize("data", ["\ufeff{}", b"\xef\xbb\xbf{}", "\ufeff[1]"])
def test_a_byte_order_mark_is_refused_in_text_and_bytes(data: str | bytes) -> None:
    # PROFILE §1.1 (RFC 8259 §8.1: no BOM in JSON text on the wire), for str as bytes.
    with pytest.raises(ByteOrderMark):
        strictjson.loads(data)
