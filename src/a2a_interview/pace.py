"""How many agents to interview at once, from what a run observes (D-VERIFY-70).

    pace = Pace(start=16, cap=256)
    ...                                   # agents finish; every window_size() of them:
    limit = pace.observe(Window(done=32, failed=2, seconds=1.2, cpu=0.4, waiting=True))

Pure: no clock, no I/O. The driver (``verifier/many.py``'s ``Paced``) counts the agents
that finish, the wall and CPU time of its process, and hands a :class:`Window` to
:meth:`Pace.observe` each time ``window_size()`` agents have finished; the answer is the
number of agents it lets be under way at once until the next window.

An interview is mostly waiting on the network when agents are far away, and mostly the
process's own work (parsing, JCS, checks) on a fast network: the best number under way
at once is large in the first case and small in the second, and a fixed default is wrong
for one of them. The rules, in order, for each window:

1. nothing finished: keep the limit;
2. failures far above the lowest share seen (``failed / done`` more than
   ``error_margin`` above it): halve, not below ``floor`` (overload shows as timeouts and
   refused connections; a population's usual share of dead agents does not count);
3. no agent was waiting for a place when the window closed: keep (the limit did not
   bind, so the window says nothing about it);
4. the process's CPU at or above ``cpu_high`` of one core: grow no more; if the rate
   fell well below the best seen, go back to the limit that made it;
5. the rate (agents per second) rose by ``rise`` or more over the last window: grow
   (doubling at first, an eighth at a time once a rise or a fall was seen), up to ``cap``;
6. the rate fell well below the best seen at a smaller limit: go back to that limit;
7. otherwise (flat): keep, and every ``probe_every`` flat windows try an eighth more
   while the CPU allows.

So on a latency-bound run the limit climbs until the rate stops rising or the CPU is
busy, and on a CPU-bound run (loopback) it stays at ``start``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

START: Final = 16  # what verify-many ran at, fixed, before (D-VERIFY-70)
CAP: Final = 256


@dataclass(frozen=True, slots=True)
class Window:
    """What happened since the last decision: ``done`` agents finished, ``failed`` of
    them unreachable, over ``seconds`` of wall time and ``cpu`` seconds of the process's
    CPU; ``waiting``: agents were waiting for a place when it closed."""

    done: int
    failed: int
    seconds: float
    cpu: float
    waiting: bool


@dataclass(slots=True)
class Pace:
    """The controller: ``limit`` is the current number of agents under way at once."""

    start: int = START
    cap: int = CAP
    floor: int = 4
    cpu_high: float = 0.85
    rise: float = 1.1
    fall: float = 0.8
    error_margin: float = 0.25
    probe_every: int = 3
    limit: int = field(init=False)
    reason: str = field(init=False, default="start")
    _doubling: bool = field(init=False, default=True)
    _last_rate: float = field(init=False, default=0.0)
    _best_rate: float = field(init=False, default=0.0)
    _best_limit: int = field(init=False, default=0)
    _usual_failed: float = field(init=False, default=1.0)
    _flat: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.floor = max(1, min(self.floor, self.start))
        self.cap = max(self.cap, self.start)
        self.limit = self.start
        self._best_limit = self.start

    def window_size(self) -> int:
        """Agents to finish before the next decision: one limit's worth, at least 8."""
        return max(8, self.limit)

    def observe(self, window: Window) -> int:
        """The limit after ``window`` (also kept in ``limit``; ``reason`` says why)."""
        if window.done <= 0 or window.seconds <= 0:
            return self._keep("nothing finished")
        rate = window.done / window.seconds
        failed = window.failed / window.done
        cpu = window.cpu / window.seconds
        if failed > self._usual_failed + self.error_margin:
            self._doubling = False
            self._last_rate = 0.0
            return self._set(max(self.floor, self.limit // 2), "failures rose")
        self._usual_failed = min(self._usual_failed, failed)
        if not window.waiting:
            return self._keep("the limit did not bind")
        if rate > self._best_rate:
            self._best_rate, self._best_limit = rate, self.limit
        previous, self._last_rate = self._last_rate, rate
        fell = rate < self._best_rate * self.fall and self.limit > self._best_limit
        if cpu >= self.cpu_high:
            self._doubling = False
            if fell:
                return self._set(self._best_limit, "CPU busy and the rate fell")
            return self._keep("CPU busy")
        if rate >= previous * self.rise:
            self._flat = 0
            grown = self.limit * 2 if self._doubling else self.limit + max(1, self.limit // 8)
            return self._set(min(self.cap, grown), "the rate rose")
        self._doubling = False
        if fell:
            return self._set(self._best_limit, "the rate fell")
        self._flat += 1
        if self._flat >= self.probe_every:
            self._flat = 0
            return self._set(min(self.cap, self.limit + max(1, self.limit // 8)), "probe")
        return self._keep("flat")

    def _keep(self, reason: str) -> int:
        self.reason = reason
        return self.limit

    def _set(self, limit: int, reason: str) -> int:
        self.limit, self.reason = limit, reason
        return limit
