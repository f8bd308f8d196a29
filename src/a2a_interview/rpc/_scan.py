"""Whether a body could name the ``interview/`` namespace in any reading (PROFILE §3.9,
D-SERVE-12): the linear scan of any size of body, and a lenient host's parse."""

from __future__ import annotations

import json
import re
from typing import Any

from ..spec import METHOD_PREFIX


def _names_namespace(item: Any) -> bool:
    return isinstance(item, dict) and str(item.get("method", "")).startswith(METHOD_PREFIX)


def _char_pattern(char: str) -> str:
    # A JSON string spells a character itself or as `\u00XX` (hex in either case);
    # `/` also as `\/`.
    code = f"{ord(char):04x}"
    hexes = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in code)
    forms = [re.escape(char), r"\\u" + hexes]
    if char == "/":
        forms.append(r"\\/")
    return "(?:" + "|".join(forms) + ")"


# The opening of a JSON string whose value begins with the namespace, in any escaping.
_NAMESPACE_STRING = '"' + "".join(_char_pattern(c) for c in METHOD_PREFIX)
_NAMESPACE_TEXT = re.compile(_NAMESPACE_STRING)
_NAMESPACE_BYTES = re.compile(_NAMESPACE_STRING.encode("ascii"))
_LITERAL = b'"' + METHOD_PREFIX.encode()


SCAN_SLICE = 512 * 1024  # what a driver scans between two turns of its event loop
_SCAN_OVERLAP = len(_NAMESPACE_STRING)  # a match begun in one slice ends in the next


def may_name_namespace(body: bytes, start: int = 0, stop: int | None = None) -> bool:
    """Whether any JSON reader could find a string beginning with ``interview/`` in
    ``body``: one linear scan, no parse (PROFILE §3.9, D-SERVE-12). ``False``
    means no reading of ``body`` names the namespace.

    ``start`` and ``stop`` bound where a match may begin, so a driver can scan a large
    body in slices (:data:`SCAN_SLICE`) between turns of its event loop. A body without
    a backslash can only spell the namespace literally (a fast substring search); UTF-16
    and UTF-32 bodies (as ``json.loads`` detects them) are scanned decoded, whole."""
    if b"\x00" in body[:4]:
        try:
            text = body.decode(json.detect_encoding(body), "replace")
        except LookupError:  # pragma: no cover - detect_encoding names known codecs
            return True
        return _NAMESPACE_TEXT.search(text) is not None
    end = len(body) if stop is None else min(len(body), stop + _SCAN_OVERLAP)
    if body.find(b"\\", start, end) < 0:
        return body.find(_LITERAL, start, end) >= 0
    return _NAMESPACE_BYTES.search(body, start, end) is not None


def _lenient_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Hosts differ on a repeated member (the last wins in Python and JavaScript, the
    # first in others): a "method" naming the namespace in any of its places counts.
    obj = dict(pairs)
    methods = [v for k, v in pairs if k == "method"]
    if len(methods) > 1:
        named = [m for m in methods if isinstance(m, str) and m.startswith(METHOD_PREFIX)]
        if named:
            obj["method"] = named[0]
    return obj


def _leniently_names_namespace(body: bytes) -> bool:
    """Whether a lenient reader could take ``body`` for an interview request (PROFILE
    §3.9): Python's ``json.loads`` of the bytes, as Starlette and the ``a2a-sdk`` read a
    body, accepts what strict I-JSON refuses (UTF-16 and UTF-32, a BOM, ``NaN``, lone
    surrogates, huge numbers, either of two equal keys). Nesting past what this reader
    can follow is not judged, and counts as naming it (a host may read deeper)."""
    try:
        request = json.loads(body, object_pairs_hook=_lenient_pairs)
    except RecursionError:
        return True
    except ValueError:
        return False
    if isinstance(request, list):
        return any(_names_namespace(item) for item in request)
    return _names_namespace(request)
