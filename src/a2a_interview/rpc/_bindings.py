"""The two bindings (PROFILE §3): ``jsonrpc`` answers a JSON-RPC POST body, ``rest``
a ``GET {url}/interview/{question}``; ``None`` from either means "not ours"."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from ..errors import InterviewError
from ..projection import Interview
from ..spec import (
    METHOD_PREFIX,
    QUESTIONS,
    RPC_INVALID_PARAMS,
    RPC_INVALID_REQUEST,
    SELECTOR_QUESTIONS,
)
from ..strictjson import loads
from ._activation import Activation
from ._envelopes import Reply, _reply, _rpc_result, rpc_error
from ._fast import _exact_call, _fast_call
from ._scan import _leniently_names_namespace, _names_namespace, may_name_namespace

# The largest body answered (docs/decisions.md D-SERVE-12): an interview call is a few
# hundred bytes. A larger activated body is still judged (PROFILE §3.9), without a parse.
MAX_REQUEST_BYTES = 64 * 1024
_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})


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


def jsonrpc(  # noqa: PLR0912 (PROFILE §3's envelope rules, in order)
    body: bytes,
    act: Activation,
    interview: Interview,
    *,
    max_bytes: int = MAX_REQUEST_BYTES,
    scanned: bool | None = None,
) -> Reply | None:
    """Answer a JSON-RPC POST body if it is an activated interview call, else ``None``.

    ``body`` is the decoded body (:func:`decoded_body`). Returns, under activation and
    for a method in the ``interview/`` namespace:

    - the answer, or the standard refusal for a method outside ``QUESTIONS``, as ``result``
      (PROFILE §3.4, §3.6);
    - ``-32602`` for params of the wrong shape (PROFILE §3.5);
    - ``-32600`` for an envelope that is not JSON-RPC 2.0, and for a batch (an array)
      any element of which names an ``interview/`` method (PROFILE §3.9).

    A body that is not strict I-JSON is never answered, but when a lenient reader (a
    host's ``json.loads``) would read it as naming the namespace it is refused with
    ``-32600`` rather than passed on (PROFILE §3.9). A body over ``max_bytes`` is never
    parsed: when it holds a JSON string beginning with the namespace (in any escaping)
    it is refused with ``-32600``, else it is not ours (PROFILE §3.9, D-SERVE-12:
    judged at any size, in one linear scan).

    Returns ``None`` for everything else, including other bodies that are not strict
    I-JSON and interview methods without activation (the host's ``-32601``, PROFILE §3.3).
    ``scanned`` is :func:`may_name_namespace` of ``body`` when the driver has it already
    (a large body, scanned in slices).
    """
    if not act:
        return None
    fast = _exact_call(body) if len(body) <= max_bytes else None  # D-SERVE-51
    if fast is None:
        # Cheap: a body without a string that begins with the namespace cannot name it,
        # in any reading; the parsed method is what counts (PROFILE §3.4).
        if not (may_name_namespace(body) if scanned is None else scanned):
            return None
        if len(body) > max_bytes:
            return _reply(rpc_error(None, RPC_INVALID_REQUEST), act)
        fast = _fast_call(body)
    if fast is not None:
        id_bytes, request_id, question, skill = fast  # interview §6 rule 1: closed set
        known = question in QUESTIONS
        result = interview.answer(question, skill) if known else interview.refusal
        return _reply(b'{"id":%s,"jsonrpc":"2.0","result":%s}' % (id_bytes, result), act, 200,
                      request_id)  # fmt: skip
    try:
        request = loads(body, max_bytes=max_bytes)
    except InterviewError:
        # PROFILE §3.9: what a host would read as an interview request is refused whole,
        # never passed on (its -32601 would carry no echo, PROFILE §3.4).
        if _leniently_names_namespace(body):
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
    own 404) and for methods other than GET; a 200 refusal for a question outside
    ``QUESTIONS``; 400 for unknown query parameters, a repeated ``skill``, or ``skill`` on a
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
