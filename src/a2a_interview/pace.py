"""How many agents to interview at once, from what a run observes (D-VERIFY-70).

    pace = Pace(start=16, cap=256)
    ...                                   # agents finish; every window_size() of them:
    limit = pace.observe(Window(done=32, failed=2, seconds=1.2, cpu=0.4, waiting=True))

Pure: no clock, no I/O. The driver (``verifier/many.py``'s ``Paced``) counts the agents
that finish, the wall and CPU time of its process, and hands a :class:`Window` to
:meth:`Pace.observe` each time ``window_size()`` agents have finished; the answer is the
number of agents it lets be under way at once until the next window.

An interview is mostly waiting on the network when agents are far away, and mostly the
work of processes (this one's parsing, JCS and checks; the agents' own) on a fast
network: the best number under way at once is large in the first case and small in the
second, and a fixed default is wrong for one of them. The signal is how long an agent
takes: while more at once do not make each take longer, more at once is more agents a
second (Little's law); once they take longer, something queues (this process, the
agents' hosts, the network) and more at once only adds waiting, and deadlines. The
rules, in order, for each window:

1. nothing finished: keep the limit;
2. failures far above the lowest share seen (``failed / done`` more than
   ``error_margin`` above it): halve, not below ``floor`` (overload shows as timeouts and
   refused connections; a population's usual share of dead agents does not count);
3. no time given: keep;
4. the agents took ``slower`` times the baseline (the lowest median seen in a window)
   or more (those that failed count too: an agent held until its deadline shows the
   queue it waited in): shrink by a quarter, not below ``start``
   (only failures take it lower);
5. no agent was waiting for a place when the window closed: keep (the limit did not
   bind, so the window says nothing about it);
6. the process's CPU at or above ``cpu_high`` of one core: keep (more would queue here);
7. the agents took at most ``faster`` times the baseline: grow (doubling up to
   ``doubling_until``, a quarter at a time past it or once anything else was decided),
   up to ``cap``. Past the knee, every agent under way shares the slowed resource and
   all of them miss their deadline at once, so the steps there are small;
8. otherwise: keep.

So on a latency-bound run the limit climbs until the agents slow down or the CPU is
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
    CPU; ``waiting``: agents were waiting for a place when it closed; ``took``: the
    median seconds the agents took, from their place to their record."""

    done: int
    failed: int
    seconds: float
    cpu: float
    waiting: bool
    took: float | None = None


@dataclass(slots=True)
class Pace:
    """The controller: ``limit`` is the current number of agents under way at once."""

    start: int = START
    cap: int = CAP
    floor: int = 4
    cpu_high: float = 0.85
    faster: float = 1.5
    slower: float = 2.0
    error_margin: float = 0.25
    doubling_until: int = 64
    limit: int = field(init=False)
    reason: str = field(init=False, default="start")
    _doubling: bool = field(init=False, default=True)
    _baseline: float | None = field(init=False, default=None)
    _usual_failed: float = field(init=False, default=1.0)

    def __post_init__(self) -> None:
        self.floor = max(1, min(self.floor, self.start))
        self.cap = max(self.cap, self.start)
        self.limit = self.start

    def window_size(self) -> int:
        """Agents to finish before the next decision: half the limit, at least 8."""
        return max(8, self.limit // 2)

    def observe(self, window: Window) -> int:
        """The limit after ``window`` (also kept in ``limit``; ``reason`` says why)."""
        if window.done <= 0 or window.seconds <= 0:
            return self._keep("nothing finished")
        failed = window.failed / window.done
        if failed > self._usual_failed + self.error_margin:
            return self._set(max(self.floor, self.limit // 2), "failures rose")
        self._usual_failed = min(self._usual_failed, failed)
        if window.took is None or window.took <= 0:
            return self._keep("no time")
        baseline = self._baseline
        baseline = window.took if baseline is None else min(window.took, baseline)
        self._baseline = baseline
        slowed = window.took / baseline
        if slowed >= self.slower:
            if self.limit <= self.start:
                return self._keep("the agents slowed")
            return self._set(max(self.start, self.limit * 3 // 4), "the agents slowed")
        if not window.waiting:
            return self._keep("the limit did not bind")
        if window.cpu / window.seconds >= self.cpu_high:
            self._doubling = False
            return self._keep("CPU busy")
        if slowed <= self.faster:
            doubling = self._doubling and self.limit < self.doubling_until
            grown = self.limit * 2 if doubling else self.limit + max(1, self.limit // 4)
            return self._keep("at the cap") if self.limit >= self.cap else self._grow(grown)
        self._doubling = False
        return self._keep("the agents are slower")

    def _grow(self, limit: int) -> int:
        self.limit, self.reason = min(self.cap, limit), "the agents are as fast"
        return self.limit

    def _keep(self, reason: str) -> int:
        self.reason = reason
        return self.limit

    def _set(self, limit: int, reason: str) -> int:
        self._doubling = False
        self.limit, self.reason = limit, reason
        return limit
