"""Bodies as the interviewer reads them: decoded under the size bound as they arrive.

At most one ``Content-Encoding`` layer, ``gzip`` (several members allowed) or
``deflate``, inflated a slice at a time, so a 2 KB body that would inflate to 1 GiB never
takes more than the bound (PROFILE §1.4). :func:`read_body` reads a streamed httpx
response, :func:`decode_whole` a response read whole (the verifier's raw wire); both use
the one decoder of :mod:`a2a_interview.codings`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

import httpx

from ..codings import Inflater, InflateTooLarge, Undecodable, codings
from ..spec import ACCEPTED_CODINGS
from .failures import BodyTooLarge, EncodingRefused

__all__ = ["decode_whole", "read_body"]


def _inflater(header: str | None) -> Inflater | None:
    """The decoder for a ``Content-Encoding`` (``None``: identity). Raises
    ``EncodingRefused`` for more than one layer or a coding other than gzip/deflate."""
    found = codings((header,)) if header else ()
    if len(found) > 1 or any(c not in ACCEPTED_CODINGS for c in found):
        raise EncodingRefused
    return Inflater(found[0]) if found else None


def _decoded(chunks: Iterable[bytes], inflater: Inflater | None, max_bytes: int) -> bytes:
    """Raw body chunks decoded under the bounds of :func:`read_body`."""
    body = bytearray()
    wire_limit = 2 * max_bytes if inflater else max_bytes
    wire = 0
    for chunk in chunks:
        wire += len(chunk)
        if wire > wire_limit:
            raise BodyTooLarge
        if inflater is None:
            body += chunk
            if len(body) > max_bytes:
                raise BodyTooLarge
            continue
        try:
            for piece in inflater.feed(chunk, max_bytes - len(body)):
                body += piece
        except InflateTooLarge:
            raise BodyTooLarge from None
        except Undecodable:
            raise EncodingRefused from None
    if inflater is not None and wire:
        try:
            inflater.finish()
        except Undecodable:
            raise EncodingRefused from None
    return bytes(body)


async def read_body(reply: httpx.Response, max_bytes: int) -> bytes:
    """The decoded body of a streamed ``reply``, read under ``max_bytes`` as it arrives.

    The raw bytes are read (never httpx's decoders, which inflate a whole network chunk
    at once) and decoded here: at most one ``Content-Encoding`` layer, ``gzip`` (several
    members allowed) or ``deflate``, inflated a slice at a time, so memory stays near
    the bound whatever the compression ratio. Raises ``BodyTooLarge`` (decoded bytes over
    ``max_bytes``, or raw bytes over twice that) and ``EncodingRefused`` (more than one
    layer, an unknown coding, corrupt or truncated data); httpx errors pass through.
    """
    inflater = _inflater(reply.headers.get("content-encoding"))
    wire_limit = 2 * max_bytes if inflater else max_bytes
    length = reply.headers.get("content-length", "")
    if length.isascii() and length.isdigit() and int(length) > wire_limit:
        raise BodyTooLarge
    raw: AsyncIterator[bytes] = reply.aiter_raw()
    chunks = [chunk async for chunk in _bounded(raw, wire_limit)]
    return _decoded(chunks, inflater, max_bytes)


async def _bounded(raw: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes]:
    seen = 0
    async for chunk in raw:
        seen += len(chunk)
        if seen > limit:
            raise BodyTooLarge
        yield chunk


def decode_whole(headers: Iterable[tuple[str, str]], body: bytes, max_bytes: int) -> bytes:
    """The decoded ``body`` of a response that arrived whole (its size on the wire
    already bounded by twice ``max_bytes``), ``headers`` its fields with lower-case
    names, under the bounds and codings of :func:`read_body`."""
    header = ", ".join(v for n, v in headers if n == "content-encoding") or None
    return _decoded((body,), _inflater(header), max_bytes)
