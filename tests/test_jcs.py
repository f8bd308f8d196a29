"""RFC 8785 canonical bytes and the digest spelling (PROFILE §1.2, §1.3)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from a2a_interview import jcs, reference
from a2a_interview.errors import CanonicalizationError, IntegerOutOfRange
from a2a_interview.spec import MAX_SAFE_INTEGER
from a2a_interview.strictjson import loads

NAMES = ["arrays", "french", "structures", "unicode", "values", "weird"]


@pytest.mark.parametrize("name", NAMES)
def test_rfc8785_vectors_byte_for_byte(jcs_vectors: Path, name: str) -> None:
    # PROFILE §1.2: everything compared is its RFC 8785 bytes; the vectors are the authority.
    source = (jcs_vectors / "input" / f"{name}.json").read_bytes()
    expected = (jcs_vectors / "output" / f"{name}.json").read_bytes()
    assert jcs.canonicalize(json.loads(source)) == expected


def test_vector_files_are_all_covered(jcs_vectors: Path) -> None:
    assert sorted(p.stem for p in (jcs_vectors / "input").glob("*.json")) == NAMES


# Strategies for JSON values that exercise both byte paths: supplementary-plane keys
# (UTF-16 order differs from code point order there) and floats (ES6 number formatting).
_keys = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=6)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(exclude_categories=("Cs",)))
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=20,
)


@given(_json)
def test_fast_path_agrees_with_rfc8785(value: object) -> None:
    # The json.dumps fast path must give exactly the rfc8785 package's bytes.
    assert jcs.canonicalize(value) == rfc8785.dumps(value)


@given(_json)
def test_canonical_bytes_parse_back_to_an_equal_value(value: object) -> None:
    # Whatever strict ingress accepts, it accepts again in canonical form.
    try:
        accepted = loads(json.dumps(value))
    except IntegerOutOfRange:
        return  # an integral float beyond 2^53: refused on ingress (test_strictjson)
    once = jcs.canonicalize(accepted)
    assert jcs.canonicalize(loads(once)) == once


def test_utf16_key_order_not_code_point_order() -> None:
    # RFC 8785 §3.2.3: U+1F600 (surrogates D83D DE00) sorts before U+FB01.
    value = {"\ufb01": 1, "\U0001f600": 2}
    assert jcs.canonicalize(value) == '{"\U0001f600":2,"\ufb01":1}'.encode()


def test_es6_number_formatting() -> None:
    assert jcs.canonicalize([1.0, 1e21, 1e-7, 0.5, -0.0]) == b"[1,1e+21,1e-7,0.5,0]"


@pytest.mark.parametrize(
    "bad",
    [math.nan, math.inf, 2**53, -(2**53), {1: "int key"}, {"s": {1, 2}}, "\ud800", b"bytes"],
)
def test_values_without_canonical_form_raise(bad: object) -> None:
    with pytest.raises(CanonicalizationError) as info:
        jcs.canonicalize(bad)
    assert info.value.code == "canonicalization"


def test_digest_spelling() -> None:
    # PROFILE §1.3: "sha256:" + 64 lowercase hex over the JCS bytes.
    assert (
        jcs.digest({}) == "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    )
    assert jcs.is_digest(jcs.digest([1]))
    for wrong in ["SHA256:" + "0" * 64, "sha256:" + "A" * 64, "sha256:" + "0" * 63, None, 5]:
        assert not jcs.is_digest(wrong)


# ---------------------------------------------------------------- closing mutation testing's gaps
# jcs.py under mutation (bench/mutation.py): the fast path's rule, and the deep-nesting
# message. Expected bytes come from the ``rfc8785`` package, not from jcs.  ``jcs._plain``
# decides when ``json.dumps`` already gives the RFC 8785 bytes (PROFILE §1.2; the module
# docstring). A wrong "no" only costs speed, so the bytes alone cannot catch it: the
# decision is pinned here value by value, and every "yes" is checked against ``rfc8785``.


PLAIN: list[Any] = [
    "text", "", None, True, False, 0, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER,
    {"a": 1}, {"\uffff": "last of the BMP"}, {"\u00e4": [1, "x", None]}, [], [1, [2, {}]],
    {}, reference.unsigned_card(),
]  # fmt: skip
NOT_PLAIN: list[Any] = [
    1.5, 0.0, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, {"\U00010000": 1},
    {"a\U0001f600": 1}, {"a": 1.5}, [1, 2.5], {"a": {"b": [{"c": 0.1}]}}, {1: "x"},
    {"a": MAX_SAFE_INTEGER + 1}, (1, 2),
]  # fmt: skip


@pytest.mark.parametrize("value", PLAIN, ids=[f"plain{i}" for i in range(len(PLAIN))])
def test_plain_values_take_the_fast_path_and_give_the_rfc_bytes(value: Any) -> None:
    assert jcs._plain(value) is True
    assert jcs.canonicalize(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("value", NOT_PLAIN, ids=[f"other{i}" for i in range(len(NOT_PLAIN))])
def test_other_values_take_the_rfc8785_path(value: Any) -> None:
    assert jcs._plain(value) is False


def test_nesting_too_deep_says_so() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(CanonicalizationError) as caught:
        jcs.canonicalize(deep)
    assert str(caught.value) == "nesting too deep to canonicalize"
