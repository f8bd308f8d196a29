"""RFC 6901 JSON Pointers: escape, format, parse, resolve."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .errors import PointerNotFound, PointerSyntaxError

_BAD_TILDE = re.compile("~(?![01])")


def escape(token: str | int) -> str:
    """One reference token, escaped (``~`` first, then ``/``; RFC 6901 §3)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def format_pointer(tokens: Iterable[str | int]) -> str:
    """The pointer naming ``tokens`` from the document root."""
    return "".join("/" + escape(token) for token in tokens)


def _unescape(token: str) -> str:
    if _BAD_TILDE.search(token):
        raise PointerSyntaxError("'~' not followed by '0' or '1'")
    # ``~01`` means ``~1`` literally: undo ``~1`` before ``~0`` (RFC 6901 §4).
    return token.replace("~1", "/").replace("~0", "~")


def parse(pointer: str) -> list[str]:
    """The unescaped reference tokens of ``pointer``. Raises ``PointerSyntaxError``."""
    if not isinstance(pointer, str):
        raise PointerSyntaxError("a pointer is a string")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PointerSyntaxError("a non-empty pointer starts with '/'")
    return [_unescape(token) for token in pointer[1:].split("/")]


def _index(token: str, length: int) -> int:
    # RFC 6901 §4: array indices are "0" or digits without a leading zero; "-" names
    # the element after the last, which never exists.
    if not token.isascii() or not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PointerNotFound
    index = int(token)
    if index >= length:
        raise PointerNotFound
    return index


def resolve(document: Any, pointer: str) -> Any:
    """The value ``pointer`` names in ``document``.

    Raises ``PointerSyntaxError`` for a malformed pointer and ``PointerNotFound`` when a
    step names a missing member, an index out of range, or descends into a scalar.
    """
    value = document
    for token in parse(pointer):
        if isinstance(value, dict):
            if token not in value:
                raise PointerNotFound
            value = value[token]
        elif isinstance(value, list):
            value = value[_index(token, len(value))]
        else:
            raise PointerNotFound
    return value
