"""The name of an agent: its card URL, normalized (PROFILE §8, RFC 3986 §6.2.2).

:func:`normalize_url` is the one normalization every reader applies before it files,
looks up or compares an agent, so that one agent is one line however a record spells its
card URL:

- the scheme and the host lowercased (§6.2.2.1), the scheme's default port dropped and
  an empty port too (§6.2.3);
- percent-encoding normalized (§6.2.2.2): a triplet of an unreserved character decoded,
  every other triplet's hex digits uppercased, a ``%`` that begins no triplet written
  ``%25`` (so that normalizing twice changes nothing);
- dot segments removed (§6.2.2.3, the algorithm of §5.2.4) and empty segments too (so
  ``//.well-known`` and ``/a/`` are ``/.well-known`` and ``/a``); an empty path is ``/``;
- no fragment, and no query: the verifier never fetches a card with one
  (``net.urls.card_url_for`` drops both), so a query names no other card, and
  keeping it would let anyone file one agent under endless names
  (``docs/decisions.md`` D-CORE-17).

A URL with userinfo (``user@host``) is refused (:class:`UserInfo`): what precedes the
``@`` reads as a host to a person (``https://trusted.example:xxxx@evil.example``) and
names nothing to a client. Anything else that is not an ``http``/``https`` URL with a
host and a valid port is refused too (:class:`NotAnHTTPURL`). Characters a URL may not
hold (spaces, non-ASCII) are left as they are: equivalence is defined for URIs, and
nothing is gained by inventing an encoding for what a record should not hold.

Pure: no I/O, no framework.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Final
from urllib.parse import urlsplit

__all__ = ["NotAnHTTPURL", "URLRefused", "UserInfo", "has_userinfo", "normalize_url"]

_DEFAULT_PORT: Final = {"http": 80, "https": 443}
_UNRESERVED: Final = frozenset(string.ascii_letters + string.digits + "-._~")
_HEX: Final = frozenset(string.hexdigits)
_TRIPLET: Final = re.compile("%[0-9a-f]{2}")
# Characters urlsplit would silently delete or strip (tab, CR, LF, C0, DEL): a URL
# holding any is refused rather than read as another URL.
_CONTROL: Final = frozenset(chr(c) for c in (*range(0x20), 0x7F))
# What a host may hold besides letters and digits: RFC 3986 reg-name's unreserved,
# sub-delims and percent-encoding (normalized as a path's is).
_HOST_EXTRA: Final = frozenset("-._~!$&'()*+,;=%")


class URLRefused(ValueError):
    """A URL that names no agent (PROFILE §8)."""


class UserInfo(URLRefused):
    """The URL carries userinfo (``user@host``)."""


class NotAnHTTPURL(URLRefused):
    """Not an ``http``/``https`` URL with a host and a valid port."""


def has_userinfo(url: str) -> bool:
    """Whether ``url``'s authority holds an ``@`` (userinfo, RFC 3986 §3.2.1)."""
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        netloc = url.partition("://")[2].split("/", 1)[0]
    return "@" in netloc


def _percent(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) == 2 and set(pair) <= _HEX:
                char = chr(int(pair, 16))
                out.append(char if char in _UNRESERVED else "%" + pair.upper())
                i += 3
                continue
            out.append("%25")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _path(path: str) -> str:
    segments: list[str] = []
    for segment in _percent(path).split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    return "/" + "/".join(segments)


def _host(host: str) -> str:
    if host.startswith("[") and host.endswith("]"):  # an IP literal (RFC 3986 §3.2.2)
        inner = host[1:-1]
        if not inner or not set(inner) <= set(string.hexdigits + ":.vV"):
            raise NotAnHTTPURL("not an http or https URL with a host")
        return host
    if not host or any(not (c.isalnum() or c in _HOST_EXTRA) for c in host):
        raise NotAnHTTPURL("not an http or https URL with a host")
    # Lowercased after the triplets are read (%41 is A, then a), their hex kept upper.
    return _TRIPLET.sub(lambda m: m.group().upper(), _percent(host).lower())


def normalize_url(url: str) -> str:
    """``url`` as PROFILE §8 names an agent (see the module's text). Raises
    :class:`UserInfo` for a URL with userinfo and :class:`NotAnHTTPURL` for anything
    else that is not an ``http``/``https`` URL with a host and a valid port. Idempotent:
    ``normalize_url(normalize_url(u)) == normalize_url(u)``."""
    if not isinstance(url, str):
        raise NotAnHTTPURL("not an http or https URL with a host")
    return _normalized(url)


@functools.lru_cache(maxsize=4096)  # a store names the same agents again and again
def _normalized(url: str) -> str:
    # Only what urlsplit would strip (space and C0 controls): str.strip() also takes
    # Unicode spaces such as U+0085, which may end a path, so a name would not name itself.
    if any(c in _CONTROL for c in url) or url != url.strip(" "):
        raise NotAnHTTPURL("not an http or https URL with a host")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise NotAnHTTPURL("not an http or https URL with a host") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORT or not url[len(scheme) + 1 :].startswith("//"):
        raise NotAnHTTPURL("not an http or https URL with a host")
    netloc = parts.netloc
    if "@" in netloc:
        raise UserInfo("the URL carries userinfo (user@host)")
    host, colon, port_text = netloc.rpartition(":") if not netloc.endswith("]") else ("", "", "")
    if not colon or "]" in port_text:
        host, port_text = netloc, ""
    if port_text and not (port_text.isascii() and port_text.isdigit()):
        raise NotAnHTTPURL("not an http or https URL with a valid port")
    port = int(port_text) if port_text else None
    if port is not None and port > 65535:
        raise NotAnHTTPURL("not an http or https URL with a valid port")
    authority = _host(host.lower())
    if port is not None and port != _DEFAULT_PORT[scheme]:
        authority += f":{port}"
    return f"{scheme}://{authority}{_path(parts.path)}"
