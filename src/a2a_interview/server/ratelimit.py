"""Per-client rate limiting of interview calls (interview §10, PROFILE §3.7).

Built on the ``limits`` library: an in-memory moving window by default, or a Redis URL
(``redis://host:port/db``) so several replicas share one budget per client.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Final

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


class RateLimiter:
    """Counts interview calls per client key against one or more limits.

    ``limit`` uses the ``limits`` notation (``"300/minute"``, ``"10/second;300/minute"``).
    ``storage`` is ``"memory://"`` (default) or a Redis URL; ``redis://`` is read as the
    async Redis storage.
    """

    def __init__(self, limit: str = DEFAULT_LIMIT, storage: str = "memory://") -> None:
        self.limits = parse_many(limit)
        if not storage.startswith("async+"):
            storage = "async+" + storage
        options: dict[str, str] = {}
        if storage.startswith("async+redis"):
            # limits defaults to coredis; the 'redis' extra installs redis-py.
            options["implementation"] = "redispy"
        self.storage: Any = storage_from_string(storage, **options)
        self._strategy = MovingWindowRateLimiter(self.storage)
        self.failing = False

    async def hit(self, client: str) -> int | None:
        """Count one call. Returns ``None`` if allowed, else seconds until one would be.

        A store that fails (Redis down) lets the call through and logs once until it
        recovers: rate limiting is the draft's SHOULD, answering is the extension's
        point, and an answer costs a lookup (docs/decisions.md D-SERVE-10).
        """
        try:
            for item in self.limits:
                if not await self._strategy.hit(item, _NAMESPACE, client):
                    stats = await self._strategy.get_window_stats(item, _NAMESPACE, client)
                    return max(1, math.ceil(stats.reset_time - time.time()))
        except Exception as exc:  # any store error: redis-py, limits and OS errors alike
            if not self.failing:
                log.warning("rate-limit store unavailable, not limiting: %s", type(exc).__name__)
            self.failing = True
            return None
        if self.failing:
            log.warning("rate-limit store available again")
            self.failing = False
        return None

    async def reset(self) -> None:
        """Forget every count (tests, and an operator's clear-all)."""
        await self.storage.reset()
