"""Paths as hosts read them (PROFILE §3.9): the normal form, and the most lenient reading."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote_to_bytes

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


_DECODE_ROUNDS = 4  # `%25252F` is `/` after three rounds; more is no host's reading


def path_segments(path: str | bytes) -> tuple[str, ...]:
    """The segments of ``path`` as the most lenient common host reads them (PROFILE
    §3.9), case kept; compare them with :func:`path_key`.

    ``path`` is the raw request target's path. Applied in this order: percent-escapes
    decoded until none is left (double encoding: ``%252F`` is ``/``); the path cut at
    the first NUL (``%00``); Unicode compatibility forms folded (NFKC: full-width
    ``／`` is ``/``); ``\\`` read as ``/`` (IIS); each segment cut at its first ``;``
    (path parameters: Tomcat, Jetty); trailing dots and blanks dropped from a segment
    (IIS: ``jsonrpc.`` is ``jsonrpc``); empty segments (``//``) dropped and dot
    segments removed (RFC 3986 §5.2.4). Never raises.
    """
    raw = path.encode("utf-8", "surrogateescape") if isinstance(path, str) else path
    for _ in range(_DECODE_ROUNDS):
        if b"%" not in raw:
            break
        decoded = unquote_to_bytes(raw)
        if decoded == raw:
            break
        raw = decoded
    text = raw.split(b"\x00", 1)[0].decode("utf-8", "replace")
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for piece in text.replace("\\", "/").split("/"):
        segment = piece.split(";", 1)[0]
        if segment not in (".", ".."):
            segment = segment.rstrip(". ")
        if segment == "..":
            if out:
                out.pop()
        elif segment not in (".", ""):
            out.append(segment)
    return tuple(out)


def path_key(path: str | bytes | tuple[str, ...]) -> tuple[str, ...]:
    """:func:`path_segments` without case (PROFILE §3.9: hosts such as Express and
    ASP.NET match paths case-insensitively): what two paths are compared by."""
    segments = path if isinstance(path, tuple) else path_segments(path)
    return tuple(s.lower() for s in segments)
