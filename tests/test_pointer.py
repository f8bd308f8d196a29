"""RFC 6901 JSON Pointers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_interview import pointer
from a2a_interview.errors import PointerNotFound, PointerSyntaxError

# RFC 6901 §5: the example document and every pointer in it.
DOC = {
    "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5,
    'k"l': 6, " ": 7, "m~n": 8,
}  # fmt: skip
RFC_EXAMPLES = [
    ("", DOC), ("/foo", ["bar", "baz"]), ("/foo/0", "bar"), ("/", 0), ("/a~1b", 1),
    ("/c%d", 2), ("/e^f", 3), ("/g|h", 4), ("/i\\j", 5), ('/k"l', 6), ("/ ", 7), ("/m~0n", 8),
]  # fmt: skip


@pytest.mark.parametrize(("ptr", "value"), RFC_EXAMPLES)
def test_rfc6901_section5(ptr: str, value: object) -> None:
    assert pointer.resolve(DOC, ptr) == value


@pytest.mark.parametrize("ptr", ["/foo/2", "/foo/-", "/foo/01", "/foo/+1", "/nope", "/foo/0/x"])
def test_not_found(ptr: str) -> None:
    with pytest.raises(PointerNotFound):
        pointer.resolve(DOC, ptr)


@pytest.mark.parametrize("ptr", ["foo", "/a~2", "/~", "/~~01", 5])
def test_syntax_errors(ptr: object) -> None:
    with pytest.raises(PointerSyntaxError):
        pointer.parse(ptr)  # type: ignore[arg-type]


def test_escape_order() -> None:
    # RFC 6901 §4: "~01" unescapes to "~1", not "/".
    assert pointer.parse("/~01") == ["~1"]
    assert pointer.escape("~1") == "~01"
    assert pointer.format_pointer(["skills", 0, "a/b~c"]) == "/skills/0/a~1b~0c"


@given(st.lists(st.text(max_size=8), max_size=5))
def test_format_then_parse_round_trips(tokens: list[str]) -> None:
    assert pointer.parse(pointer.format_pointer(tokens)) == tokens
