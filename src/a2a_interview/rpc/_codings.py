"""An activated body as the host would read it (PROFILE §3.9): at most one layer of
gzip or deflate, bounded, by the one decoder of :mod:`a2a_interview.codings` (D-CORE-31)."""

from __future__ import annotations

from collections.abc import Iterable

from ..codings import ACCEPT_ENCODING, InflateTooLarge, Undecodable, codings, inflate
from ..spec import ACCEPTED_CODINGS
from ._activation import Activation
from ._envelopes import Reply, _reply


def content_codings(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, ...]:
    """The request's ``Content-Encoding`` codings in order (:func:`codings.codings` of
    every such field)."""
    values: list[str] = []
    for name, value in headers:
        if len(name) == 16 and name.lower() == b"content-encoding":
            values.append(value.decode("latin-1"))
    return codings(values) if values else ()


# PROFILE §3.9: why an activated request at an interview path cannot be judged.
_UNSUPPORTED = b'{"error":{"code":-32600,"message":"Content-Encoding not supported"},' \
    b'"id":null,"jsonrpc":"2.0"}'  # fmt: skip
_UNDECODABLE = b'{"error":{"code":-32600,"message":"Body not decodable"},"id":null,' \
    b'"jsonrpc":"2.0"}'  # fmt: skip
_TOO_LARGE = b'{"error":{"code":-32600,"message":"Request too large"},"id":null,' \
    b'"jsonrpc":"2.0"}'  # fmt: skip


def too_large(act: Activation) -> Reply:
    """PROFILE §3.9: an activated request at an interview path whose body is past what
    the layer reads cannot be judged, and is refused (413, with the echo)."""
    return _reply(_TOO_LARGE, act, 413)


def decoded_body(
    headers: Iterable[tuple[bytes, bytes]], body: bytes, act: Activation, max_bytes: int
) -> bytes | Reply:
    """An activated JSON-RPC body as the host would read it (PROFILE §3.9): ``body``
    itself, or with one layer of gzip or deflate (any case of the name) undone, at most
    ``max_bytes`` of it. A reply refusing the request, with the activation echo, when it
    cannot be judged: any other coding or a stack of codings (415, with
    ``Accept-Encoding``), a body that does not inflate (400), or one past ``max_bytes``
    before or after decoding (413)."""
    if len(body) > max_bytes:
        return too_large(act)
    found = content_codings(headers)
    if not found:
        return body
    if len(found) > 1 or found[0] not in ACCEPTED_CODINGS:
        refused = _reply(_UNSUPPORTED, act, 415)
        extra = (("Accept-Encoding", ACCEPT_ENCODING),)
        return Reply(refused.status, refused.body, refused.headers + extra)
    try:
        return inflate(body, found[0], max_bytes)
    except InflateTooLarge:
        return too_large(act)
    except Undecodable:
        return _reply(_UNDECODABLE, act, 400)
