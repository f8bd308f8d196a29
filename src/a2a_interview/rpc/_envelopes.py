"""The responses a binding sends: a complete ``Reply`` with the activation echo, the
JSON-RPC result and error envelopes, the version refusal's ErrorInfo, and the 429
(PROFILE §3.4, §3.7, §3.10)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..jcs import canonicalize
from ..spec import MAX_SAFE_INTEGER, RPC_TOO_MANY_REQUESTS, RPC_VERSION_NOT_SUPPORTED
from ._activation import Activation

JSON_CONTENT_TYPE = "application/json"


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete HTTP response for the driver to send."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]
    request_id: Any = None  # the JSON-RPC id, for a later 429 in its place


_HEADERS = {(c, x): (("Content-Type", JSON_CONTENT_TYPE), *Activation(c, x).echo())
            for c in (False, True) for x in (False, True)}  # fmt: skip


def _reply(body: bytes, act: Activation, status: int = 200, request_id: Any = None) -> Reply:
    return Reply(status, body, _HEADERS[act.current, act.legacy], request_id)


def _id_bytes(request_id: Any) -> bytes:
    # The JCS form of a safe integer is its decimal digits (RFC 8785 §3.2.2.3); most ids
    # are integers, and this skips the general serializer on every answer.
    if type(request_id) is int and -MAX_SAFE_INTEGER <= request_id <= MAX_SAFE_INTEGER:
        return b"%d" % request_id
    return canonicalize(request_id)


def rpc_error(request_id: Any, error: tuple[int, str], *, data: bytes | None = None) -> bytes:
    """A JSON-RPC error response with a fixed message (no request content); ``data``,
    when given, is the JCS bytes of the error's ``data`` member."""
    code, message = error
    extra = b',"data":' + data if data is not None else b""
    return b'{"error":{"code":%d%s,"message":%s},"id":%s,"jsonrpc":"2.0"}' % (
        code,
        extra,
        canonicalize(message),
        _id_bytes(request_id),
    )


# A2A 1.0 §9.5, §11.6: the ErrorInfo the SDKs attach to VersionNotSupportedError.
_ERROR_INFO = {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
               "domain": "a2a-protocol.org", "reason": "VERSION_NOT_SUPPORTED"}  # fmt: skip
_VERSION_INFO = canonicalize([_ERROR_INFO])
REST_VERSION_NOT_SUPPORTED = canonicalize({"error": {
    "code": 400, "details": [_ERROR_INFO], "message": RPC_VERSION_NOT_SUPPORTED[1],
    "status": "FAILED_PRECONDITION",
}})  # fmt: skip


def _rpc_result(request_id: Any, result: bytes) -> bytes:
    return b'{"id":%s,"jsonrpc":"2.0","result":%s}' % (_id_bytes(request_id), result)


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
