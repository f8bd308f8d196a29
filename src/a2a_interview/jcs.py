"""The one canonical byte path: RFC 8785 (JCS) bytes and the digest spelling.

Everything this package compares, hashes or signs goes through :func:`canonicalize`
(PROFILE §1.2) and :func:`digest` (PROFILE §1.3).

Most declared documents hold no fractional numbers and no member names outside the
Basic Multilingual Plane. For those, the C-accelerated ``json.dumps`` with sorted keys
already emits exactly the RFC 8785 bytes (the string escaping rules coincide, and
code-point order equals UTF-16 order below U+10000), so we take that path after a
check; anything else goes through the ``rfc8785`` package. Both paths pass the same
vectors (tests/test_jcs.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import rfc8785

from .errors import CanonicalizationError
from .spec import MAX_SAFE_INTEGER

DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")

_dumps = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
).encode


def _plain(value: Any) -> bool:
    """True when ``json.dumps`` gives the RFC 8785 bytes of ``value``."""
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return True
    if kind is int:
        return bool(-MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not (key.isascii() or max(key) < "\U00010000"):
                return False
            if not _plain(item):
                return False
        return True
    if kind is list:
        return all(_plain(item) for item in value)
    return False


def canonicalize(value: Any) -> bytes:
    """Return the RFC 8785 UTF-8 bytes of ``value``.

    Raises ``CanonicalizationError`` for values JSON cannot carry exactly: unsupported
    types, non-string keys, NaN or infinite floats, integers beyond ±(2^53−1), strings
    holding lone surrogates.
    """
    try:
        if _plain(value):
            return _dumps(value).encode("utf-8")
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError, ValueError, TypeError):
        raise CanonicalizationError from None
    except RecursionError:
        raise CanonicalizationError("nesting too deep to canonicalize") from None


def digest_bytes(data: bytes) -> str:
    """``sha256:`` + 64 lowercase hex of SHA-256 over ``data`` (PROFILE §1.3)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """The digest of ``value``'s canonical bytes."""
    return digest_bytes(canonicalize(value))


def is_digest(text: object) -> bool:
    """True when ``text`` is spelled as PROFILE §1.3 requires."""
    return isinstance(text, str) and DIGEST_RE.fullmatch(text) is not None
