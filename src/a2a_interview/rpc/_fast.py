"""The usual interview call read without a general parse (D-SERVE-37): exactly what the
strict parse would read, or ``None`` (the body is then judged the general way)."""

from __future__ import annotations

import re
from typing import Any

from ..spec import METHOD_PREFIX, SELECTOR_QUESTIONS

_NAMESPACE = METHOD_PREFIX.encode()


# The usual interview call, read without a general parse (D-SERVE-37): the envelope's
# members, each at most once, in any order, JSON whitespace anywhere; strings of
# printable ASCII but `"` and `\` (their bytes are their RFC 8785 form), small integers
# as RFC 8785 writes them. Anything else, valid or not, goes the general way.
_WS = rb"[ \t\n\r]*"
_PLAIN = rb'"([ !#-\[\]-~]*)"'
# One member: its name, then its value as a plain string, a small integer, null, or an
# object that is empty or holds one plain "skill" string (six groups).
_MEMBER = (
    _WS + rb'"(jsonrpc|id|method|params)"' + _WS + b":" + _WS
    + rb"(?:" + _PLAIN + rb"|(0|-?[1-9][0-9]{0,14})|(null)|(\{" + _WS
    + rb'(?:"skill"' + _WS + b":" + _WS + _PLAIN + _WS + rb")?\}))" + _WS
)  # fmt: skip
_FAST_SHAPE = re.compile(
    _WS + rb"\{" + _MEMBER + rb"(?:," + _MEMBER + rb"(?:," + _MEMBER + rb"(?:," + _MEMBER
    + rb")?)?)?\}" + _WS
)  # fmt: skip


# The usual call as clients write it (D-SERVE-51): no whitespace, the envelope's members
# in one of two orders, the order most clients write (`jsonrpc`, `id`, `method`,
# `params`) and RFC 8785's (`id` first: this project's verifier); the same strings and
# integers as above. One match reads it, with no group to sort; it is tried before the
# namespace scan, since it names the namespace itself.
_EXACT_ID = rb'(?:"([ !#-\[\]-~]*)"|(0|-?[1-9][0-9]{0,14})|null)'
_EXACT_TAIL = (
    rb'"method":"' + re.escape(_NAMESPACE) + rb'([ !#-\[\]-~]*)"'
    + rb'(?:,"params":\{(?:"skill":"([ !#-\[\]-~]*)")?\})?\}'
)  # fmt: skip
_EXACT = (
    re.compile(rb'\{"jsonrpc":"2\.0","id":' + _EXACT_ID + b"," + _EXACT_TAIL),
    re.compile(rb'\{"id":' + _EXACT_ID + rb',"jsonrpc":"2\.0",' + _EXACT_TAIL),
)


def _exact_call(body: bytes) -> tuple[bytes, Any, str, str | None] | None:
    """What :func:`_fast_call` reads, for a body spelled exactly as most clients spell
    the usual call (D-SERVE-51), else ``None``: the body then goes the usual way (the
    namespace scan, :func:`_fast_call`, the strict parse)."""
    for order in _EXACT:
        match = order.fullmatch(body)
        if match is None:
            continue
        text, digits, called, selector = match.groups()
        question = called.decode("ascii")
        skill: str | None = None
        if selector is not None:
            if question not in SELECTOR_QUESTIONS:  # -32602, the general way
                return None
            skill = selector.decode("ascii")
        if text is not None:
            return b'"' + text + b'"', text.decode("ascii"), question, skill
        if digits is not None:
            return digits, int(digits), question, skill
        return b"null", None, question, skill
    return None


def _fast_call(body: bytes) -> tuple[bytes, Any, str, str | None] | None:  # noqa: PLR0912 (a branch a member)
    """``(id bytes, id, question, skill)`` of an interview call in the usual shape whose
    answer :func:`jsonrpc` would give (valid envelope and params), else ``None``: the
    body is then judged the general way. Never a different reading: what it reads is
    exactly what the strict parse would (PROFILE §3.4, §3.5, §3.9)."""
    shape = _FAST_SHAPE.fullmatch(body)
    if shape is None:
        return None
    groups = shape.groups()
    found: dict[bytes, tuple[bytes | None, ...]] = {}
    for at in range(0, 24, 6):
        name = groups[at]
        if name is None:
            break
        if name in found:  # a repeated member: the general way refuses it
            return None
        found[name] = groups[at + 1 : at + 6]
    version, method = found.get(b"jsonrpc"), found.get(b"method")
    if version is None or version[0] != b"2.0" or method is None:
        return None
    called = method[0]
    if called is None or not called.startswith(_NAMESPACE):
        return None
    question = called[len(_NAMESPACE) :].decode("ascii")
    skill: str | None = None
    params = found.get(b"params")
    if params is not None:
        if params[3] is None:  # not an object: -32602, the general way
            return None
        selector = params[4]
        if selector is not None:
            if question not in SELECTOR_QUESTIONS:
                return None
            skill = selector.decode("ascii")
    found_id = found.get(b"id")
    if found_id is None or found_id[2] is not None:
        return b"null", None, question, skill
    text, digits = found_id[0], found_id[1]
    if text is not None:
        return b'"' + text + b'"', text.decode("ascii"), question, skill
    if digits is not None:
        return digits, int(digits), question, skill
    return None  # an object is no id: -32600, the general way
