"""ijson.py under mutation (D-TEST-13, bench/mutation.py): the edges of each bound, and a
lone surrogate wherever it hides (PROFILE §1.1, §1.4). Inputs and verdicts by hand."""

from __future__ import annotations

import pytest

from a2a_interview import ijson
from a2a_interview.errors import ByteOrderMark, IntegerOutOfRange, LoneSurrogate, TooDeep, TooLarge
from a2a_interview.spec import MAX_SAFE_INTEGER


@pytest.mark.parametrize("data", ['"aaaa"', b'"aaaa"', '"\u00e4\u00e4"', '"\u00e4\u00e4"'.encode()])
def test_a_document_of_exactly_max_bytes_is_accepted(data: str | bytes) -> None:
    # PROFILE §1.4: "more than max_bytes" is refused; exactly max_bytes is not. A text's
    # size is its UTF-8 length ("ää" is 4 characters, 6 bytes).
    size = len(data.encode() if isinstance(data, str) else data)
    assert isinstance(ijson.loads(data, max_bytes=size), str)
    with pytest.raises(TooLarge):
        ijson.loads(data, max_bytes=size - 1)


@pytest.mark.parametrize(
    "text",
    [
        '{"a":"\\ud800"}', '{"a":{"b":"\\udc00"}}', '{"a":["\\ud800"]}', '[{"a":"\\ud800"}]',
        '{"\\ud800":1}', '[["\\udfff"]]',
    ],
)  # fmt: skip
def test_a_lone_surrogate_is_refused_at_any_depth(text: str) -> None:
    with pytest.raises(LoneSurrogate):
        ijson.loads(text)


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
    ijson.loads(text, max_depth=levels)
    with pytest.raises(TooDeep):
        ijson.loads(text, max_depth=levels - 1)


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
    # exponent, so the canonical form is not an out-of-range integer (ijson._float).
    assert ijson.loads(text) == value


@pytest.mark.parametrize("text", [f"{MAX_SAFE_INTEGER + 1}.0", "9.999e20", "-9007199254740993.0"])
def test_integral_floats_beyond_the_safe_range_are_refused(text: str) -> None:
    with pytest.raises(IntegerOutOfRange):
        ijson.loads(text)


@pytest.mark.parametrize("data", ["\ufeff{}", b"\xef\xbb\xbf{}", "\ufeff[1]"])
def test_a_byte_order_mark_is_refused_in_text_and_bytes(data: str | bytes) -> None:
    # PROFILE §1.1 (RFC 8259 §8.1: no BOM in JSON text on the wire), for str as bytes.
    with pytest.raises(ByteOrderMark):
        ijson.loads(data)
