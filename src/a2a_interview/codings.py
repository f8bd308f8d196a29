"""Content codings as every layer of the package reads them: one parser of
``Content-Encoding`` (RFC 9110 §8.4) and one bounded gzip/deflate decoder (D-CORE-31).

The serving bindings (:mod:`a2a_interview.rpc`, PROFILE §3.9) and the interviewer's
bodies (:mod:`a2a_interview.net.bodies`, PROFILE §1.4) both accept at most one layer of
:data:`a2a_interview.spec.ACCEPTED_CODINGS`, inflated a slice at a time under a running
bound, so a 2 KB body that would inflate to 1 GiB never takes more than the bound.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import Final

from .errors import InterviewError
from .spec import ACCEPTED_CODINGS

__all__ = [
    "ACCEPT_ENCODING",
    "InflateTooLarge",
    "Inflater",
    "Undecodable",
    "codings",
    "inflate",
]

# The Accept-Encoding of what is accepted (gzip and deflate; x-gzip is gzip's old name).
ACCEPT_ENCODING: Final = ", ".join(sorted(ACCEPTED_CODINGS - {"x-gzip"}, key=len))
_SLICE: Final = 64 * 1024  # decoded bytes produced per zlib call


class Undecodable(InterviewError):
    """The coded bytes are corrupt or truncated, or run past the end of the coding."""


class InflateTooLarge(InterviewError):
    """The bytes inflate past the bound."""


def codings(values: Iterable[str]) -> tuple[str, ...]:
    """The codings of ``Content-Encoding`` field ``values`` in order, every field joined
    (RFC 9110 §8.4), lower-cased; ``identity`` and empty items left out."""
    out: list[str] = []
    for value in values:
        for item in value.split(","):
            coding = item.strip(" \t").lower()
            if coding and coding != "identity":
                out.append(coding)
    return tuple(out)


class Inflater:
    """One layer of ``coding`` (one of :data:`ACCEPTED_CODINGS`) undone a slice at a time.

    Concatenated gzip members are read as one body (RFC 1952 §2.2, as zlib-based hosts
    read them); ``deflate`` is zlib-wrapped (RFC 9110 §8.4.1.2) or, as some servers send
    it, raw: the raw reading is tried when the wrapped one fails on the first bytes."""

    __slots__ = ("_first", "_gzip", "_z")

    def __init__(self, coding: str) -> None:
        self._gzip = coding != "deflate"
        self._z = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._first = True

    def feed(self, data: bytes, room: int) -> Iterator[bytes]:
        """Decoded pieces of ``data``; raises :class:`InflateTooLarge` as soon as more
        than ``room`` bytes in all would come out (never holding more than a slice), and
        :class:`Undecodable` for corrupt data or bytes after a deflate stream."""
        while data:
            if self._z.eof:  # another gzip member; deflate has one
                if not self._gzip:
                    raise Undecodable
                self._z = zlib.decompressobj(zlib.MAX_WBITS | 16)
            try:
                out = self._z.decompress(data, min(_SLICE, room + 1))
            except zlib.error:
                if self._first and not self._gzip:
                    self._z, self._first = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise Undecodable from None
            self._first = False
            room -= len(out)
            if room < 0:
                raise InflateTooLarge
            if out:
                yield out
            data = self._z.unused_data if self._z.eof else self._z.unconsumed_tail

    def finish(self) -> None:
        """Raises :class:`Undecodable` when the coded data stopped short."""
        if not self._z.eof:
            raise Undecodable


def inflate(body: bytes, coding: str, max_bytes: int) -> bytes:
    """``body`` with one layer of ``coding`` undone, at most ``max_bytes`` out: the whole
    of :class:`Inflater` for a body that arrived whole. Raises :class:`InflateTooLarge`
    and :class:`Undecodable` (also for an empty body: no coding encodes to nothing)."""
    inflater = Inflater(coding)
    out = bytearray()
    for piece in inflater.feed(body, max_bytes):
        out += piece
    inflater.finish()
    return bytes(out)
