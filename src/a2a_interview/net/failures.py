"""The interviewer's failures: one small tree, each class with a stable ``code``.

A failure means the exchange could not be completed: nothing was learnt about the agent
(the procedure records it as ``unreachable``, never as non-conformance)::

    TransportFailure        transport
    ├── InsecureURL         insecure_url       (not HTTPS, not loopback HTTP)
    ├── ConnectFailed       connect_failed     (DNS, refused, reset, protocol error)
    ├── TimedOut            timeout
    ├── BodyTooLarge        too_large
    ├── RedirectRefused     redirect_refused   (cross-origin, too many, on POST)
    ├── Unavailable         unavailable        (502, 503, 504)
    ├── RateLimited         rate_limited       (429 beyond the wait budget)
    ├── EncodingRefused     bad_encoding       (stacked, unknown or corrupt coding)
    ├── AddressRefused      address_refused    (not a public address)
    ├── BudgetSpent         request_budget     (the run's request budget is spent)
    └── DeadlineExceeded    deadline           (the caller's overall deadline)

A failure names the URL whose exchange failed without its credentials
(:func:`without_credentials`), and why a connection failed (:data:`CAUSES`).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

from ..errors import InterviewError

__all__ = [
    "CAUSES",
    "AddressRefused",
    "BodyTooLarge",
    "BudgetSpent",
    "ConnectFailed",
    "DeadlineExceeded",
    "EncodingRefused",
    "InsecureURL",
    "NotItsBinding",
    "RateLimited",
    "RedirectRefused",
    "TimedOut",
    "TransportFailure",
    "Unavailable",
    "without_credentials",
]


class TransportFailure(InterviewError):
    """The exchange could not be completed; nothing was learnt about the agent.

    ``url`` is the URL whose exchange failed (without credentials), set when it is
    known; ``cause`` refines ``connect_failed`` and ``timeout`` (D-CLI-9): one
    of :data:`CAUSES`."""

    code = "transport"
    url: str | None = None
    cause: str | None = None

    def at(self, url: str) -> TransportFailure:
        """This failure, naming ``url`` unless it names one already."""
        if self.url is None:
            self.url = without_credentials(url)
        return self


CAUSES: Final[dict[str, str]] = {
    "name": "the host name did not resolve",
    "refused": "the connection was refused",
    "unreachable": "no route to the host",
    "timeout": "the host did not answer in time",
    "tls": "the TLS handshake failed (a bad certificate, or TLS to a plain HTTP port)",
    "reset": "the connection was reset",
    "closed": "the connection closed before the response ended",
    "protocol": "the response was not HTTP/1.1 as it must be",
    "connect": "the connection failed",
}
"""Why a connection failed: the ``cause`` of a ``connect_failed`` or ``timeout``."""


class InsecureURL(TransportFailure):
    """The URL is neither HTTPS nor HTTP to a loopback host."""

    code = "insecure_url"


class ConnectFailed(TransportFailure):
    """The connection failed (name resolution, refused, reset, malformed HTTP)."""

    code = "connect_failed"


class TimedOut(TransportFailure):
    """The exchange did not complete within the time bound."""

    code = "timeout"


class BodyTooLarge(TransportFailure):
    """The body is larger than the size bound."""

    code = "too_large"


class RedirectRefused(TransportFailure):
    """A redirect to another origin, more redirects than allowed, or one on a POST."""

    code = "redirect_refused"


class Unavailable(TransportFailure):
    """The server answered 502, 503 or 504: it is there, but cannot answer now."""

    code = "unavailable"


class RateLimited(TransportFailure):
    """The agent kept answering 429 beyond the wait budget."""

    code = "rate_limited"


class EncodingRefused(TransportFailure):
    """The body's ``Content-Encoding`` is not one layer of gzip or deflate (stacked or
    unknown codings), or its compressed data is corrupt."""

    code = "bad_encoding"


class AddressRefused(TransportFailure):
    """The host is, or resolves to, an address that is not public (private, loopback
    for a target that is not, link-local, unique-local, shared, multicast, reserved);
    nothing was sent to it."""

    code = "address_refused"


class BudgetSpent(TransportFailure):
    """The run's request budget is spent (PROFILE §7)."""

    code = "request_budget"


class NotItsBinding(TransportFailure):
    """An interface answered, but never in its binding (an HTML page at a JSON-RPC
    URL): judged as the same page at the card URL is, a failure to reach the agent,
    never a conflict (PROFILE §7)."""

    code = "not_its_binding"


class DeadlineExceeded(TransportFailure):
    """The caller's overall deadline passed before the work was done."""

    code = "deadline"


_AUTHORITY: Final = re.compile(r"([^:/?#]+://)([^/?#]*)(.*)", re.S)


def without_credentials(url: str) -> str:
    """``url`` without a ``user:password@`` part: what a record may keep of it. Never
    raises: a URL that does not parse (an unclosed IPv6 bracket) is cut by hand."""
    try:
        parts = urlsplit(url)
    except ValueError:
        match = _AUTHORITY.match(url)
        if match is None:
            return url
        return match[1] + match[2].rpartition("@")[2] + match[3]
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
