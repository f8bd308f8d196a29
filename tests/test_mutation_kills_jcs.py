"""jcs.py under mutation (D-TEST-13, bench/mutation.py): the fast path's rule, and the
deep-nesting message. Expected bytes come from the ``rfc8785`` package, not from jcs.

``jcs._plain`` decides when ``json.dumps`` already gives the RFC 8785 bytes (PROFILE
§1.2; the module docstring). A wrong "no" only costs speed, so the bytes alone cannot
catch it: the decision is pinned here value by value, and every "yes" is checked against
``rfc8785``.
"""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785

from a2a_interview import jcs, reference
from a2a_interview.errors import CanonicalizationError
from a2a_interview.spec import MAX_SAFE_INTEGER

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
