"""How many agents to interview at once, from what a run observes (D-VERIFY-70, D-VERIFY-80).

    pace = Pace(start=16, cap=256)
    ...                                   # agents finish; every window_size() of them:
    limit = pace.observe(Window(done=32, failed=2, seconds=1.2, cpu=0.4, waiting=True,
                                took=2.5))

Pure: no clock, no I/O. The driver (``verifier/many.py``'s ``Paced``) counts the agents
that finish, the wall and CPU time of its process, and hands a :class:`Window` to
:meth:`Pace.observe` each time ``window_size()`` agents have finished; the answer is the
number of agents it lets be under way at once until the next window.

An interview is mostly waiting on the network when agents are far away, and mostly the
work of processes (this one's parsing, JCS and checks; the agents' own) on a fast
network: the best number under way at once is large in the first case and small in the
second, and a fixed default is wrong for one of them. The pace climbs a hill: the
height is the rate of agents *reached* a second (finished, not ``unreachable``), the
step a larger limit. A step that raised the rate is kept and the next one taken; a step
that did not is taken back, and tried again later (what the machine and the agents
allow changes as a run goes). The time an agent takes and the share that fail guard
the deadlines: past the knee every agent under way shares the slowed resource and all
of them miss their deadline at once, so those rules act before the rate is read.

A new limit shows in the rate only once the agents it let start finish, one agent's
time after the change: until then a window is *settling* and only the guards read it.
Every agent that finished counts in a window, whenever it started (the rate is all of
them; D-VERIFY-80). The start needs no such wait: like TCP's slow start it adds one
place for each agent reached, which doubles the limit once per agent's time at most,
and stops at the first sign of a queue.

The rules, in order, for each window:

1. nothing finished, or a step down not yet settled (see 6: one step down per
   agent's time, or the queue draining after an overshoot takes the limit to the
   floor): keep;
2. failures far above the population's own share (``failed / done`` more than
   ``error_margin`` above the lowest share seen): halve, not below ``floor``
   (overload shows as deadline misses and refused connections; a population's usual
   share of dead agents does not count);
3. the agents took half their ``deadline`` or more (the deadline not known:
   ``slower`` times the baseline, the lowest median of a settled window): shrink by
   a quarter, not below ``start`` (only failures take it lower). Whether more at once
   pays is the rate's to say (rule 7); this guards the deadlines, which past the knee
   all go at once;
4. no agent was waiting for a place when the window closed: keep (the limit did not
   bind, so the window says nothing about it);
5. starting: one place more for each agent reached (at most twice the limit), until
   the process's CPU is at ``cpu_high`` of one core or the agents take ``faster``
   times the baseline; then the climb (rules 6-10) goes on from there;
6. less than one agent's time (the window's median) since the last change: keep
   (settling);
7. a step up is being judged and the rate did not rise with it (by at least
   ``gain`` of the step): back to the limit before the step;
8. the process's CPU at or above ``cpu_high`` of one core: keep (more would queue here);
9. after a step back (or down), ``hold`` settled windows: keep;
10. otherwise: a step up, by a half until the first step back or down, by a quarter
    after, up to ``cap``.

So on a latency-bound run the limit climbs while the rate follows it, and on a
CPU-bound run (loopback) it stays at ``start``: the CPU is busy, or the rate did not
rise with a step and the step is taken back.
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
    slower: float = 2.5
    error_margin: float = 0.25
    gain: float = 1 / 3
    hold: int = 2
    deadline: float | None = None  # each agent's, seconds (None: not known)
    limit: int = field(init=False)
    reason: str = field(init=False, default="start")
    _starting: bool = field(init=False, default=True)
    _down: bool = field(init=False, default=False)  # the last change was a step down
    _bold: bool = field(init=False, default=True)  # no step back yet: steps of a half
    _baseline: float | None = field(init=False, default=None)
    _usual_failed: float = field(init=False, default=1.0)
    _since_change: float = field(init=False, default=0.0)
    _before: int = field(init=False, default=0)  # the limit a step up is judged against
    _rate: float | None = field(init=False, default=None)  # reached/s at ``_before``
    _held: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.floor = max(1, min(self.floor, self.start))
        self.cap = max(self.cap, self.start)
        self.limit = self._before = self.start
        self._held = self.hold  # the first step needs no wait

    def window_size(self) -> int:
        """Agents to finish before the next decision: half the limit, at least 16 (a
        median of fewer is too loose a baseline for a population of mixed agents)."""
        return max(16, self.limit // 2)

    def observe(self, window: Window) -> int:  # noqa: PLR0912 (the rules, in order: one branch each)
        """The limit after ``window`` (also kept in ``limit``; ``reason`` says why)."""
        if window.done <= 0 or window.seconds <= 0:
            return self._keep("nothing finished")
        self._since_change += window.seconds
        took = window.took if window.took is not None and window.took > 0 else None
        # Settled: the window's middle is one agent's time past the change.
        settled = took is not None and self._since_change - window.seconds / 2 >= took
        if self._down and not settled:
            # The agents finishing now took their place before the last step down: one
            # step down per agent's time, or a queue draining takes it to the floor.
            return self._keep("settling")
        failed = window.failed / window.done
        if failed > self._usual_failed + self.error_margin:
            return self._back(max(self.floor, self.limit // 2), "failures rose")
        self._usual_failed = min(self._usual_failed, failed)
        if took is not None and self._slowed(took):
            if self.limit <= self.start:
                return self._keep("the agents slowed")
            return self._back(max(self.start, self.limit * 3 // 4), "the agents slowed")
        self._down = False
        if settled and took is not None:
            baseline = self._baseline
            self._baseline = took if baseline is None else min(took, baseline)
        if not window.waiting:
            return self._keep("the limit did not bind")
        busy = window.cpu / window.seconds >= self.cpu_high
        if self._starting:
            return self._start(window, busy, took)
        if not settled:
            return self._keep("settling")
        rate = (window.done - window.failed) / window.seconds
        if self.limit > self._before and self._rate is not None:
            step = self.limit / self._before - 1
            if rate < self._rate * (1 + self.gain * step):
                return self._back(self._before, "the rate did not rise")
            self._before, self._held = self.limit, self.hold  # the step paid: go on
        self._rate = rate  # the rate at the limit the next step is judged against
        if busy:
            return self._keep("CPU busy")
        if self._held < self.hold:
            self._held += 1
            return self._keep("holding")
        if self.limit >= self.cap:
            return self._keep("at the cap")
        step = self.limit // 2 if self._bold else self.limit // 4
        self._before, self._since_change = self.limit, 0.0
        self.limit, self.reason = min(self.cap, self.limit + max(1, step)), "a step up"
        return self.limit

    def _start(self, window: Window, busy: bool, took: float | None) -> int:
        """The start (rule 5): one place more for each agent reached, so the limit
        doubles once per agent's time at most, until the CPU is busy or the agents take
        ``faster`` times the baseline; the climb goes on from there, step by step."""
        baseline = self._baseline
        slower = took is not None and baseline is not None and took >= self.faster * baseline
        if busy or slower:
            self._starting, self._since_change = False, 0.0
            self._before, self._rate = self.limit, None
            return self._keep("CPU busy" if busy else "the agents are slower")
        if self.limit >= self.cap:
            return self._keep("at the cap")
        reached = max(1, window.done - window.failed)
        grown = min(self.cap, 2 * self.limit, self.limit + reached)
        self._before, self.limit, self.reason = grown, grown, "starting"
        return grown

    def _slowed(self, took: float) -> bool:
        """Whether agents that take ``took`` wait in a queue that endangers their
        deadline: half the deadline, when it is known; else ``slower`` times the
        baseline."""
        if self.deadline is not None:
            return took >= self.deadline / 2
        return self._baseline is not None and took >= self.slower * self._baseline

    def _keep(self, reason: str) -> int:
        self.reason = reason
        return self.limit

    def _back(self, limit: int, reason: str) -> int:
        """A step back (or down) to ``limit``: judged afresh once it settles."""
        self._starting, self._held, self._down, self._bold = False, 0, True, False
        self._before, self._rate, self._since_change = limit, None, 0.0
        self.limit, self.reason = limit, reason
        return limit
