"""Bodies as the interviewer reads them: decoded under the size bound as they arrive.

At most one ``Content-Encoding`` layer, ``gzip`` (several members allowed) or
``deflate``, inflated a slice at a time, so a 2 KB body that would inflate to 1 GiB never
takes more than the bound (PROFILE §1.4). :func:`read_body` reads a streamed httpx
response, :func:`decode_raw` a response of :mod:`.wire`; both share one decoder.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterable
from typing import Final

import httpx

from .failures import BodyTooLarge, EncodingRefused
from .wire import RawResponse

__all__ = ["ACCEPT_ENCODING", "decode_raw", "read_body"]

# What we accept: one layer of either, inflated under the bound (read_body). Not br or
# zstd: their decoders are optional packages, and one coding we bound is enough.
ACCEPT_ENCODING: Final = "gzip, deflate"
_INFLATE_SLICE: Final = 64 * 1024  # decoded bytes produced per zlib call


class _Inflater:
    """One content coding, decoded a slice at a time under a running bound."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        # deflate: RFC 9110 says zlib-wrapped; some servers send it raw (tried on failure).
        bits = zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS
        self._z = zlib.decompressobj(bits)
        self._first = True

    def feed(self, data: bytes, room: int) -> Iterable[bytes]:
        """Decoded pieces of ``data``; raises ``BodyTooLarge`` as soon as more than
        ``room`` bytes in all would come out, never holding more than a slice."""
        while data:
            if self._z.eof:  # another gzip member (RFC 1952 §2.2); deflate has one
                if self.coding != "gzip":
                    raise EncodingRefused
                self._z = zlib.decompressobj(zlib.MAX_WBITS | 16)
            try:
                out = self._z.decompress(data, min(_INFLATE_SLICE, room + 1))
            except zlib.error:
                if self._first and self.coding == "deflate":
                    self._z, self._first = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise EncodingRefused from None
            self._first = False
            room -= len(out)
            if room < 0:
                raise BodyTooLarge
            if out:
                yield out
            data = self._z.unused_data if self._z.eof else self._z.unconsumed_tail

    def finish(self) -> None:
        if not self._z.eof:
            raise EncodingRefused  # truncated compressed data


def _codings(header: str | None) -> list[str]:
    codings = [c.strip().lower() for c in (header or "").split(",")]
    return [c for c in codings if c and c != "identity"]


def _inflater(header: str | None) -> _Inflater | None:
    """The decoder for a ``Content-Encoding`` (``None``: identity). Raises
    ``EncodingRefused`` for more than one layer or a coding other than gzip/deflate."""
    codings = _codings(header)
    if len(codings) > 1 or any(c not in ("gzip", "x-gzip", "deflate") for c in codings):
        raise EncodingRefused
    if not codings:
        return None
    return _Inflater("gzip" if codings[0] != "deflate" else "deflate")


def _decoded(chunks: Iterable[bytes], inflater: _Inflater | None, max_bytes: int) -> bytes:
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
        for piece in inflater.feed(chunk, max_bytes - len(body)):
            body += piece
    if inflater is not None and wire:
        inflater.finish()
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


def decode_raw(raw: RawResponse, max_bytes: int) -> bytes:
    """The decoded body of a response from :mod:`.wire` (whose body arrives whole, its
    size on the wire already bounded by twice ``max_bytes``), under the bounds and
    codings of :func:`read_body`."""
    header = ", ".join(v for n, v in raw.headers if n == "content-encoding") or None
    return _decoded((raw.body,), _inflater(header), max_bytes)
