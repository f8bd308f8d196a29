"""The proxy's upstream, one document at a time: a bounded GET and what it raises.

Every read from upstream (the card, a proposal on upstream's origin, the card again for
a client) goes through :func:`fetch`: a total deadline, a size bound kept as the body
streams and decodes, and same-origin redirects only. :class:`ProxyError` is what the
proxy raises when it cannot start or cannot read its upstream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import urljoin

import httpx

from ...errors import InterviewError
from ...net.bodies import read_body
from ...net.failures import BodyTooLarge, EncodingRefused, InsecureURL
from ...net.urls import origin

DEFAULT_TIMEOUT: Final = 10.0  # the whole fetch of one declared document
MAX_REDIRECTS: Final = 3


class ProxyError(InterviewError):
    """The proxy cannot start or cannot read its upstream: unreachable, a non-2xx or
    oversized card, a refused redirect, no interface to serve the interview on, a signed
    card ``declare`` would change without a key, or an unusable rate-limit store."""

    code = "proxy"


def printable(text: str, limit: int = 200) -> str:
    """A URL from a card, safe in a one-line message: escaped, and cut at ``limit``."""
    escaped = text.encode("unicode_escape").decode("ascii")
    return escaped if len(escaped) <= limit else escaped[:limit] + "..."


@dataclass(frozen=True, slots=True)
class Fetched:
    status: int
    body: bytes
    headers: httpx.Headers


async def fetch(
    client: httpx.AsyncClient,
    url: str,
    *,
    max_bytes: int,
    timeout: float,
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> Fetched:
    """GET ``url`` with a total deadline, a size bound and same-origin redirects only.

    Asks for ``identity`` and undoes at most one gzip or deflate coding, bounded as it
    streams. Returns the final response (any status, 304 included) with its whole body.
    Raises :class:`ProxyError` on a transport error, the deadline, a body over
    ``max_bytes`` (before or after decoding), a refused content coding, a cross-origin
    redirect, or more than ``MAX_REDIRECTS`` hops.
    """
    start = origin(url)
    sent = [*headers, (b"accept-encoding", b"identity")]
    try:
        async with asyncio.timeout(timeout):
            for _ in range(MAX_REDIRECTS + 1):
                request = httpx.Request("GET", url, headers=sent)
                response = await client.send(request, stream=True)
                try:
                    location = response.headers.get("location")
                    if response.is_redirect and location is not None:
                        try:
                            url = urljoin(url, location)  # ValueError: a bad IPv6 host
                            same = origin(url) == start
                        except (InsecureURL, ValueError):
                            same = False
                        if not same:
                            raise ProxyError("a cross-origin redirect was refused")
                        continue
                    # The verifier's reader: decoded under the bound as it streams.
                    try:
                        body = await read_body(response, max_bytes)
                    except BodyTooLarge:
                        raise ProxyError(f"the document is larger than {max_bytes} bytes") from None
                    except EncodingRefused:
                        raise ProxyError(
                            "the document's Content-Encoding is stacked, unknown or corrupt"
                        ) from None
                    return Fetched(response.status_code, body, response.headers)
                finally:
                    await response.aclose()
            raise ProxyError(f"more than {MAX_REDIRECTS} redirects")
    except TimeoutError:
        raise ProxyError(f"no complete answer within {timeout:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise ProxyError(f"transport error ({type(exc).__name__})") from None
