"""Per-client rate limiting of interview calls (interview §10, PROFILE §3.7).

Built on the ``limits`` library: an in-memory moving window by default, or a Redis URL
(``redis://host:port/db``) so several replicas share one budget per client.

A store that fails lets calls through (D-SERVE-10), and one that stops answering fails
too: the Redis client connects and runs each command within ``STORE_TIMEOUT``, without
retries, and a whole count is bounded by it as well, so a frozen Redis costs a call at
most about a second. While the store fails, calls skip it for ``RETRY_AFTER`` seconds
between single probes (D-SERVE-35).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

try:
    from limits import parse_many
    from limits.aio.strategies import MovingWindowRateLimiter
    from limits.storage import storage_from_string
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "rate limiting needs the 'server' extra: pip install 'a2a-interview[server]'"
    ) from exc

from ..spec import DEFAULT_RATE_LIMIT

log = logging.getLogger("a2a_interview.server")

DEFAULT_LIMIT: Final = DEFAULT_RATE_LIMIT
_NAMESPACE: Final = "a2a-interview"
# Seconds: to connect to the store, for each command, and for a whole count (D-SERVE-35).
STORE_TIMEOUT: Final = 1.0
# Seconds a failing store is left alone before one call probes it again.
RETRY_AFTER: Final = 1.0


def redacted(url: str) -> str:
    """``url`` fit for a log line: a password (in the authority or a ``password=`` query
    field) is replaced by ``***``; a text that is no URL is returned as it is."""
    try:
        parts = urlsplit(url)
        secret = parts.password
    except ValueError:
        return url
    fields = parse_qsl(parts.query, keep_blank_values=True)
    if secret is None and all(name.lower() != "password" for name, _ in fields):
        return url
    netloc = parts.netloc
    if secret is not None:
        users, _, host = netloc.rpartition("@")
        user = users.partition(":")[0]
        netloc = f"{user}:***@{host}"
    query = urlencode([(n, "***" if n.lower() == "password" else v) for n, v in fields], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class RateLimiter:
    """Counts interview calls per client key against one or more limits.

    ``limit`` uses the ``limits`` notation (``"300/minute"``, ``"10/second;300/minute"``).
    ``storage`` is ``"memory://"`` (default) or a Redis URL; ``redis://`` is read as the
    async Redis storage.
    """

    def __init__(self, limit: str = DEFAULT_LIMIT, storage: str = "memory://") -> None:
        self.limits = parse_many(limit)
        self.url = redacted(storage.removeprefix("async+"))
        if not storage.startswith("async+"):
            storage = "async+" + storage
        options: dict[str, Any] = {}
        if storage.startswith("async+redis"):
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            # limits defaults to coredis; the 'redis' extra installs redis-py. redis-py
            # waits on a silent server without end and retries three times by default.
            options["implementation"] = "redispy"
            options["socket_connect_timeout"] = STORE_TIMEOUT
            options["socket_timeout"] = STORE_TIMEOUT
            options["retry"] = Retry(NoBackoff(), 0)
        self.storage: Any = storage_from_string(storage, **options)
        self._strategy = MovingWindowRateLimiter(self.storage)
        self.failing = False
        self._retry_at = 0.0  # time.monotonic() from which a failing store is probed

    async def hit(self, client: str) -> int | None:
        """Count one call. Returns ``None`` if allowed, else seconds until one would be.

        A store that fails (Redis down) or does not answer within ``STORE_TIMEOUT``
        (Redis frozen) lets the call through, and one line names it (its URL, password
        redacted) until it recovers, when one more line says so: rate limiting is the
        draft's SHOULD, answering is the extension's point, and an answer costs a lookup
        (docs/decisions.md D-SERVE-10, D-SERVE-35). While it fails, calls skip it but
        for one probe each ``RETRY_AFTER`` seconds.
        """
        if self.failing:
            now = time.monotonic()
            if now < self._retry_at:
                return None
            self._retry_at = now + RETRY_AFTER  # this call probes; the others skip
        try:
            async with asyncio.timeout(STORE_TIMEOUT):
                for item in self.limits:
                    if not await self._strategy.hit(item, _NAMESPACE, client):
                        stats = await self._strategy.get_window_stats(item, _NAMESPACE, client)
                        wait = max(1, math.ceil(stats.reset_time - time.time()))
                        self._recovered()
                        return wait
        except Exception as exc:  # any store error: redis-py, limits, OS errors, timeouts
            if not self.failing:
                log.warning(
                    "rate-limit store %s unavailable, not limiting: %s",
                    self.url,
                    type(exc).__name__,
                )
            self.failing = True
            self._retry_at = time.monotonic() + RETRY_AFTER
            return None
        self._recovered()
        return None

    def _recovered(self) -> None:
        if self.failing:
            log.warning("rate-limit store %s available again", self.url)
            self.failing = False

    async def reset(self) -> None:
        """Forget every count (tests, and an operator's clear-all)."""
        await self.storage.reset()
