"""URLs as the interviewer reads them: origins (RFC 6454), the scheme policy (HTTPS
only, except HTTP to a loopback host), and where a card is for what the user named.

Each function raises ``InsecureURL`` for a string that does not parse as a URL.
"""

from __future__ import annotations

import functools
import ipaddress
from urllib.parse import SplitResult, urlsplit

from ..spec import CARD_PATH
from .failures import InsecureURL

__all__ = ["card_url_for", "check_url", "http_origin", "is_loopback", "origin", "origin_text"]


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _split(url: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        raise InsecureURL from None


@functools.lru_cache(maxsize=512)
def origin(url: str) -> tuple[str, str, int]:
    """RFC 6454 origin: (scheme, host lowercased, port with the scheme's default).
    Raises ``InsecureURL`` for a string that does not parse as a URL."""
    parts = _split(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or (443 if scheme == "https" else 80)


def http_origin(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) URL with a host, or ``None`` when it has
    none (another scheme, no host, a port that does not parse): never raises, unlike
    :func:`origin`."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80)


@functools.lru_cache(maxsize=512)
def check_url(url: str) -> bool:
    """Raise ``InsecureURL`` unless ``url`` is HTTPS or HTTP to a loopback host, with a
    valid port; return whether it is loopback HTTP (which the result records)."""
    parts = _split(url)
    host = parts.hostname
    try:
        parts.port  # noqa: B018 - a port out of range or not a number raises ValueError
    except ValueError:
        raise InsecureURL from None  # else it escapes the socket layer as OverflowError
    if not host:
        raise InsecureURL
    if parts.scheme == "https":
        return False
    if parts.scheme == "http" and is_loopback(host):
        return True
    raise InsecureURL


def origin_text(url: str) -> str:
    """``scheme://host:port`` of ``url``, an IPv6 host in brackets."""
    scheme, host, port = origin(url)
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def card_url_for(url: str) -> str:
    """The card URL for what the user gave: a URL whose path ends in ``.json`` is the
    card itself; anything else is a base URL, and the card is at its path +
    ``/.well-known/agent-card.json`` (as the A2A SDKs join it). Query and fragment are
    dropped. Raises ``InsecureURL`` as :func:`check_url`."""
    check_url(url)
    parts = _split(url)
    path = parts.path
    if not path.endswith(".json"):
        path = path.rstrip("/") + CARD_PATH
    return parts._replace(path=path, query="", fragment="").geturl()
