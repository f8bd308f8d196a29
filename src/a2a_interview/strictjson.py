"""Strict I-JSON ingress (RFC 7493, PROFILE §1.1 and §1.4).

``loads`` is the only way a declared document or a peer's answer enters the package.
Python's ``json.loads`` silently accepts duplicate keys, ``NaN``, huge integers and lone
surrogates; here each is a typed :class:`~a2a_interview.errors.IngressError`.
"""

from __future__ import annotations

import json
from typing import Any, TypeAlias

from .errors import (
    ByteOrderMark,
    DuplicateKey,
    IntegerOutOfRange,
    LoneSurrogate,
    MalformedJSON,
    NonFiniteNumber,
    NotUTF8,
    TooDeep,
    TooLarge,
)
from .spec import MAX_DEPTH, MAX_DOCUMENT_BYTES, MAX_SAFE_INTEGER

__all__ = ["JSON", "JSONObject", "loads"]

# A parsed JSON value: None, bool, int, float, str, list or dict[str, ...]. Typed Any
# because code that walks JSON checks types at run time anyway.
JSON: TypeAlias = Any
JSONObject: TypeAlias = dict[str, Any]

_BOM = b"\xef\xbb\xbf"
_MAX_INT_DIGITS = len(str(MAX_SAFE_INTEGER))


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise DuplicateKey
    return obj


def _constant(_: str) -> Any:
    raise NonFiniteNumber


def _integer(text: str) -> int:
    # Bound the digits before int() so a megabyte of digits costs nothing.
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise IntegerOutOfRange
    value = int(text)
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return value
    raise IntegerOutOfRange


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise NonFiniteNumber
    # "9007199254740993.0" is an integer beyond ±(2^53−1) in another spelling, and its
    # RFC 8785 form is a plain integer that this parser would refuse: refuse it here too,
    # so that whatever is accepted canonicalizes to bytes that are accepted again.
    if value.is_integer() and MAX_SAFE_INTEGER < abs(value) < 1e21:
        raise IntegerOutOfRange
    return value


# One decoder for every call: json.loads with hooks would build a new one each time.
_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_int=_integer, parse_float=_float
)


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check(value: Any, depth: int, max_depth: int, surrogates: bool) -> None:
    if isinstance(value, dict):
        if depth >= max_depth:
            raise TooDeep
        for key, item in value.items():
            if surrogates and _has_surrogate(key):
                raise LoneSurrogate
            _check(item, depth + 1, max_depth, surrogates)
    elif isinstance(value, list):
        if depth >= max_depth:
            raise TooDeep
        for item in value:
            _check(item, depth + 1, max_depth, surrogates)
    elif surrogates and isinstance(value, str) and _has_surrogate(value):
        raise LoneSurrogate


def loads(
    data: bytes | bytearray | memoryview | str,
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_depth: int = MAX_DEPTH,
) -> JSON:
    """Parse ``data`` as strict I-JSON.

    Returns the parsed value (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``
    or ``None``). Raises, each a subclass of ``IngressError``:

    - ``TooLarge``: more than ``max_bytes`` bytes of UTF-8;
    - ``ByteOrderMark``: a leading UTF-8 BOM;
    - ``NotUTF8``: bytes that are not UTF-8;
    - ``MalformedJSON``: not JSON at all;
    - ``DuplicateKey``, ``NonFiniteNumber``, ``IntegerOutOfRange``, ``LoneSurrogate``;
    - ``TooDeep``: containers nested more than ``max_depth`` levels.
    """
    if isinstance(data, str):
        if len(data) > max_bytes:
            raise TooLarge
        try:
            # Bytes arrive decoded strictly; text may carry a raw lone surrogate that
            # no escape announces (PROFILE §1.1 rejects it all the same).
            size = len(data.encode("utf-8"))
        except UnicodeEncodeError:
            raise LoneSurrogate from None
        if size > max_bytes:
            raise TooLarge
        if data.startswith("\ufeff"):
            raise ByteOrderMark
        text = data
    else:
        raw = bytes(data)
        if len(raw) > max_bytes:
            raise TooLarge
        if raw.startswith(_BOM):
            raise ByteOrderMark
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise NotUTF8 from None
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise TooDeep from None
    except json.JSONDecodeError:
        raise MalformedJSON from None
    # Cheap pre-screens: depth needs that many brackets, a surrogate needs an escape.
    deep = text.count("[") + text.count("{") > max_depth
    surrogates = "\\ud" in text or "\\uD" in text
    if deep or surrogates:
        _check(value, 0, max_depth, surrogates)
    return value
