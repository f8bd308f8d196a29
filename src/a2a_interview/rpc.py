"""The interview's bindings as pure functions: request bytes in, a reply or ``None`` out.

``None`` means "not ours": the driver passes the request to the host untouched, so
everything outside the activated ``interview/`` namespace (and the host's own
``-32601`` for an interview method without activation, PROFILE §3.3) stays the host's.
Drivers (the ASGI layer, the ``a2a-sdk`` route wrapper, the proxy) only move bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from .errors import InterviewError
from .ijson import loads
from .jcs import canonicalize
from .projection import Interview
from .spec import (
    EXTENSIONS_HEADER,
    INTERVIEW_URI,
    LEGACY_EXTENSIONS_HEADER,
    MAX_SAFE_INTEGER,
    METHOD_PREFIX,
    QUESTIONS,
    RPC_INVALID_PARAMS,
    RPC_INVALID_REQUEST,
    RPC_TOO_MANY_REQUESTS,
    SELECTOR_QUESTIONS,
)

MAX_REQUEST_BYTES = 64 * 1024
JSON_CONTENT_TYPE = "application/json"
_NAMESPACE = METHOD_PREFIX.encode()
_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})


@dataclass(frozen=True, slots=True)
class Activation:
    """Which request headers named the interview URI (PROFILE §3.2)."""

    current: bool = False
    legacy: bool = False

    def __bool__(self) -> bool:
        return self.current or self.legacy

    def echo(self) -> tuple[tuple[str, str], ...]:
        """The response headers every activated response carries."""
        if not self:
            return ()
        if self.legacy:
            return ((EXTENSIONS_HEADER, INTERVIEW_URI), (LEGACY_EXTENSIONS_HEADER, INTERVIEW_URI))
        return ((EXTENSIONS_HEADER, INTERVIEW_URI),)


NOT_ACTIVATED = Activation()


_HEADER_NAMES = {b"a2a-extensions": 0, b"x-a2a-extensions": 1}

_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SLASHES = re.compile(r"/{2,}")


def _percent(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def normalize_path(path: str | bytes) -> str:
    """The path a host or intermediary may take ``path`` to mean (PROFILE §3.9).

    ``path`` is the raw request target's path, still percent-encoded (ASGI's
    ``raw_path`` without the query). Applied in this order: percent-encoded unreserved
    characters decoded and other escapes upper-cased (RFC 3986 §6.2.2.1, §6.2.2.2);
    runs of ``/`` collapsed to one; dot segments removed (RFC 3986 §5.2.4); a trailing
    ``/`` dropped (interface paths are compared without one). The result always starts
    with ``/``. Bytes outside ASCII are read as Latin-1, so no input raises.
    """
    text = path.decode("latin-1") if isinstance(path, bytes) else path
    text = _SLASHES.sub("/", _PERCENT.sub(_percent, text))
    out: list[str] = []
    for segment in text.split("/"):
        if segment == "..":
            if out:
                out.pop()
        elif segment not in (".", ""):
            out.append(segment)
    return "/" + "/".join(out)


def activation(headers: Iterable[tuple[str | bytes, str | bytes]]) -> Activation:
    """Read activation from request headers: a comma-separated list, each element trimmed
    of blanks and compared exactly with the URI (PROFILE §3.2). Header names match
    case-insensitively, as HTTP requires; values never do."""
    found = [False, False]
    for raw_name, raw_value in headers:
        name = raw_name if isinstance(raw_name, bytes) else raw_name.encode("latin-1")
        which = _HEADER_NAMES.get(name.lower())
        if which is None:
            continue
        value = raw_value.decode("latin-1") if isinstance(raw_value, bytes) else raw_value
        if any(item.strip(" \t") == INTERVIEW_URI for item in value.split(",")):
            found[which] = True
    return Activation(*found)


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete HTTP response for the driver to send."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]
    request_id: Any = None  # the JSON-RPC id, for a later 429 in its place


def _reply(body: bytes, act: Activation, status: int = 200, request_id: Any = None) -> Reply:
    return Reply(status, body, (("Content-Type", JSON_CONTENT_TYPE), *act.echo()), request_id)


def _id_bytes(request_id: Any) -> bytes:
    # The JCS form of a safe integer is its decimal digits (RFC 8785 §3.2.2.3); most ids
    # are integers, and this skips the general serializer on every answer.
    if type(request_id) is int and -MAX_SAFE_INTEGER <= request_id <= MAX_SAFE_INTEGER:
        return b"%d" % request_id
    return canonicalize(request_id)


def rpc_error(request_id: Any, error: tuple[int, str]) -> bytes:
    """A JSON-RPC error response with a fixed message (no request content)."""
    code, message = error
    return b'{"error":{"code":%d,"message":%s},"id":%s,"jsonrpc":"2.0"}' % (
        code,
        canonicalize(message),
        _id_bytes(request_id),
    )


def _rpc_result(request_id: Any, result: bytes) -> bytes:
    return b'{"id":%s,"jsonrpc":"2.0","result":%s}' % (_id_bytes(request_id), result)


def _valid_id(request_id: Any) -> bool:
    return request_id is None or type(request_id) in (str, int)


def _selector(question: str, params: Any) -> tuple[bool, str | None]:
    """PROFILE §3.5: (valid, skill). Omitted params read as ``{}``; ``null`` is invalid."""
    if not isinstance(params, dict):
        return False, None
    if not params:
        return True, None
    if question in SELECTOR_QUESTIONS and params.keys() == {"skill"}:
        skill = params["skill"]
        return (True, skill) if isinstance(skill, str) else (False, None)
    return False, None


def _names_namespace(item: Any) -> bool:
    return isinstance(item, dict) and str(item.get("method", "")).startswith(METHOD_PREFIX)


def _leniently_names_namespace(body: bytes) -> bool:
    """Whether a lenient reader could take ``body`` for an interview request (PROFILE
    §3.9): Python's ``json.loads`` of the bytes, as Starlette and the ``a2a-sdk`` read a
    body, accepts what strict I-JSON refuses (UTF-16 and UTF-32, a BOM, ``NaN``, lone
    surrogates, huge numbers, nesting past the depth bound, the last of two equal keys)."""
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if isinstance(request, list):
        return any(_names_namespace(item) for item in request)
    return _names_namespace(request)


def jsonrpc(
    body: bytes, act: Activation, interview: Interview, *, max_bytes: int = MAX_REQUEST_BYTES
) -> Reply | None:
    """Answer a JSON-RPC POST body if it is an activated interview call, else ``None``.

    Returns, under activation and for a method in the ``interview/`` namespace:

    - the answer, or the standard refusal for a method outside the five, as ``result``
      (PROFILE §3.4, §3.6);
    - ``-32602`` for params of the wrong shape (PROFILE §3.5);
    - ``-32600`` for an envelope that is not JSON-RPC 2.0, and for a batch (an array)
      any element of which names an ``interview/`` method (PROFILE §3.9).

    A body that is not strict I-JSON is never answered, but when a lenient reader (a
    host's ``json.loads``) would read it as naming the namespace it is refused with
    ``-32600`` rather than passed on (PROFILE §3.9).

    Returns ``None`` for everything else, including other bodies that are not strict
    I-JSON and interview methods without activation (the host's ``-32601``, PROFILE §3.3).
    """
    if not act:
        return None
    # Cheap: a body that cannot name the namespace is never parsed here. Without the
    # prefix in its bytes, only a JSON escape (`interview\/usage`, `\u0069nterview/`)
    # or a UTF-16 or UTF-32 body (a NUL among its first four bytes, as `json.loads`
    # detects it) can still spell it, and the parsed method is what counts (PROFILE §3.4).
    if _NAMESPACE not in body and b"\\" not in body and b"\x00" not in body[:4]:
        return None
    try:
        request = loads(body, max_bytes=max_bytes)
    except InterviewError:
        # PROFILE §3.9: what a host would read as an interview request is refused whole,
        # never passed on (its -32601 would carry no echo, PROFILE §3.4).
        if len(body) <= max_bytes and _leniently_names_namespace(body):
            return _reply(rpc_error(None, RPC_INVALID_REQUEST), act)
        return None
    if isinstance(request, list):
        # PROFILE §3.9: a batch naming the namespace anywhere is an interview request;
        # it is refused whole, never split between us and the host.
        if any(_names_namespace(item) for item in request):
            return _reply(rpc_error(None, RPC_INVALID_REQUEST), act)
        return None
    if not isinstance(request, dict):
        return None
    method = request.get("method")
    if not isinstance(method, str) or not method.startswith(METHOD_PREFIX):
        return None
    request_id = request.get("id")
    if request.get("jsonrpc") != "2.0" or not _valid_id(request_id) or request.keys() - _ENVELOPE:
        return _reply(rpc_error(None, RPC_INVALID_REQUEST), act)
    question = method[len(METHOD_PREFIX) :]
    if question not in QUESTIONS:  # interview §6 rule 1: the method set is closed
        return _reply(_rpc_result(request_id, interview.refusal), act, 200, request_id)
    valid, skill = _selector(question, request.get("params", {}))
    if not valid:
        return _reply(rpc_error(request_id, RPC_INVALID_PARAMS), act, 200, request_id)
    return _reply(_rpc_result(request_id, interview.answer(question, skill)), act, 200, request_id)


REST_INVALID = b'{"error":{"code":400,"message":"Invalid params","status":"INVALID_ARGUMENT"}}'
REST_SEGMENT = "/interview/"


def rest(
    method: str, question: str, query: bytes, act: Activation, interview: Interview
) -> Reply | None:
    """Answer ``GET {url}/interview/{question}`` (PROFILE §3b), else ``None``.

    ``question`` is the path segment after ``/interview/``, already percent-decoded;
    ``query`` is the raw query string. Returns ``None`` without activation (the host's
    own 404) and for methods other than GET; a 200 refusal for a question outside the
    five; 400 for unknown query parameters, a repeated ``skill``, or ``skill`` on a
    question that takes no selector.
    """
    if method != "GET" or not act:
        return None
    if question not in QUESTIONS:
        return _reply(interview.refusal, act)
    try:
        pairs = parse_qsl(
            query.decode("ascii"), keep_blank_values=True, strict_parsing=bool(query),
            errors="strict",
        )  # fmt: skip
    except (UnicodeDecodeError, ValueError):
        return _reply(REST_INVALID, act, 400)
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params:
            return _reply(REST_INVALID, act, 400)
        params[name] = value
    valid, skill = _selector(question, params)
    if not valid:
        return _reply(REST_INVALID, act, 400)
    return _reply(interview.answer(question, skill), act)


REST_TOO_MANY = (
    b'{"error":{"code":429,"message":"Too many requests","status":"RESOURCE_EXHAUSTED"}}'
)


def too_many_requests(
    retry_after: int, reply: Reply, act: Activation, *, rest: bool = False
) -> Reply:
    """PROFILE §3.7: HTTP 429 with ``Retry-After`` in place of ``reply``.

    The body is the JSON-RPC error ``-32000`` carrying the request's id (on the HTTP+JSON
    binding, a fixed error object); the activation echo is kept.
    """
    body = REST_TOO_MANY if rest else rpc_error(reply.request_id, RPC_TOO_MANY_REQUESTS)
    headers = (("Content-Type", JSON_CONTENT_TYPE), ("Retry-After", str(max(1, retry_after))))
    return Reply(429, body, headers + act.echo(), reply.request_id)
