"""The pace's decisions (D-VERIFY-70): how many agents verify-many and the ledger's
workers have under way at once, from windows of what a run observed. Observations are
made up here (a model of a latency-bound or CPU-bound run), so the tests read decisions,
never a clock."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from a2a_interview.pace import CAP, START, Pace, Window
from a2a_interview.verifier import many
from a2a_interview.verifier.many import Paced

Model = Callable[[int], Window]


def latency_bound(seconds_per_agent: float, cpu_per_agent: float, failed: float = 0.0) -> Model:
    """Agents take ``seconds_per_agent`` of waiting each and ``cpu_per_agent`` of CPU:
    the rate is the limit over the wait until the CPU (one core) is full."""

    def window(limit: int) -> Window:
        rate = min(limit / seconds_per_agent, 1 / cpu_per_agent)
        done = max(8, limit)
        seconds = done / rate
        return Window(done, round(done * failed), seconds, done * cpu_per_agent, True)

    return window


def run(pace: Pace, model: Model, windows: int = 60) -> list[int]:
    limits = []
    for _ in range(windows):
        limits.append(pace.observe(model(pace.limit)))
    return limits


def test_a_latency_bound_run_grows_until_the_cpu_is_busy() -> None:
    # 0.5 s of waiting and 5 ms of CPU per agent: the CPU fills at 200 agents/s, i.e.
    # 100 under way; the pace ends between 85% of that and the cap, never above the cap.
    pace = Pace()
    limits = run(pace, latency_bound(0.5, 0.005))
    assert limits[0] == 2 * START  # doubling at first
    assert 85 <= limits[-1] <= CAP
    assert max(limits) <= CAP
    assert pace.reason in {"CPU busy", "flat", "probe", "the rate fell", "the rate rose"}


def test_far_agents_and_little_cpu_reach_the_cap_and_stay() -> None:
    limits = run(Pace(), latency_bound(2.0, 0.0001))
    assert limits[-10:] == [CAP] * 10


def test_a_cpu_bound_run_stays_at_the_start() -> None:
    # Loopback: the CPU is full from the first window; the pace never goes below the
    # old fixed default, nor above it.
    pace = Pace()
    limits = run(pace, latency_bound(0.001, 0.01))
    assert set(limits) == {START}
    assert pace.reason == "CPU busy"


def test_a_usual_share_of_dead_agents_is_no_reason_to_back_off() -> None:
    # 7% unreachable in every window (a real population: refused, slow, gone).
    limits = run(Pace(), latency_bound(2.0, 0.0001, failed=0.07), windows=20)
    assert limits[-1] == CAP


def test_failures_jumping_halve_the_limit_down_to_the_floor() -> None:
    pace = Pace()
    run(pace, latency_bound(2.0, 0.0001, failed=0.05), windows=10)
    assert pace.limit == CAP
    overloaded = Window(done=CAP, failed=CAP // 2, seconds=2.0, cpu=0.1, waiting=True)
    assert pace.observe(overloaded) == CAP // 2
    assert pace.reason == "failures rose"
    for _ in range(20):
        pace.observe(overloaded)
    assert pace.limit == pace.floor == 4


def test_after_failures_it_grows_again_an_eighth_at_a_time() -> None:
    pace = Pace()
    assert pace.observe(Window(16, 16, 1.0, 0.1, True)) == 32  # all failed at first...
    assert pace.observe(Window(16, 0, 1.0, 0.1, True)) == 32  # ...then none: usual is 0
    assert pace.observe(Window(16, 12, 1.0, 0.1, True)) == 16  # 75% > 0 + 25%: halve
    assert pace.observe(Window(16, 0, 1.0, 0.1, True)) == 18  # rising, no longer doubling


def test_a_limit_that_did_not_bind_is_kept() -> None:
    # No agent was waiting (the end of the list, or --per-origin holding them): the rate
    # says nothing about the limit.
    pace = Pace()
    assert pace.observe(Window(16, 0, 0.1, 0.001, waiting=False)) == START
    assert pace.reason == "the limit did not bind"


def test_nothing_finished_keeps_the_limit() -> None:
    pace = Pace()
    assert pace.observe(Window(0, 0, 10.0, 0.01, True)) == START
    assert pace.reason == "nothing finished"


def test_a_rate_that_falls_after_growing_goes_back_to_the_best_limit() -> None:
    pace = Pace()
    assert pace.observe(Window(16, 0, 1.0, 0.1, True)) == 32  # 16/s
    assert pace.observe(Window(32, 0, 1.0, 0.2, True)) == 64  # 32/s
    assert pace.observe(Window(64, 0, 4.0, 0.2, True)) == 32  # 16/s < 0.8 * 32/s
    assert pace.reason == "the rate fell"


def test_a_busy_cpu_and_a_falling_rate_go_back_too() -> None:
    pace = Pace()
    pace.observe(Window(16, 0, 1.0, 0.1, True))
    pace.observe(Window(32, 0, 1.0, 0.2, True))
    assert pace.observe(Window(64, 0, 4.0, 3.9, True)) == 32
    assert pace.reason == "CPU busy and the rate fell"


def test_a_flat_rate_probes_an_eighth_more_every_few_windows() -> None:
    pace = Pace()
    pace.observe(Window(16, 0, 1.0, 0.1, True))  # 32
    flat = Window(32, 0, 1.0, 0.2, True)
    assert [pace.observe(flat) for _ in range(4)] == [64, 64, 64, 72]
    assert pace.reason == "probe"


@pytest.mark.parametrize(("start", "cap"), [(16, 4), (1, 1), (8, 300)])
def test_the_cap_bounds_every_decision(start: int, cap: int) -> None:
    pace = Pace(start=start, cap=cap)
    limits = run(pace, latency_bound(5.0, 0.00001))
    assert pace.floor <= min(limits) and max(limits) <= max(cap, start)
    assert pace.window_size() >= 8


class _Clock:
    """The driver's ``time``: wall and CPU seconds that move only when told."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def monotonic(self) -> float:
        return self.wall

    def process_time(self) -> float:
        return self.cpu


def test_the_driver_hands_windows_to_the_pace_and_resizes_its_limiter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # verify-many's and the workers' driver: a window closes after window_size() agents,
    # says whether agents wait for a place, and the limiter takes the pace's answer.
    clock = _Clock()
    monkeypatch.setattr(many, "time", clock)

    async def main() -> list[tuple[int, str]]:
        paced = Paced(None)
        assert paced.pace is not None
        seen = []
        for _ in range(START):  # nobody waits: the limit did not bind
            clock.wall += 0.1
            paced.finished(False)
        seen.append((int(paced.limiter.total_tokens), paced.pace.reason))
        holders = [object() for _ in range(START)]
        for holder in holders:
            await paced.limiter.acquire_on_behalf_of(holder)
        async with anyio.create_task_group() as group:
            group.start_soon(paced.limiter.acquire_on_behalf_of, "waiting")
            await anyio.wait_all_tasks_blocked()
            for _ in range(START):
                clock.wall += 0.1
                clock.cpu += 0.01
                paced.finished(False)
            seen.append((int(paced.limiter.total_tokens), paced.pace.reason))
        seen.append((paced.limiter.borrowed_tokens, "borrowed"))  # the waiter got in
        return seen

    assert anyio.run(main) == [(START, "the limit did not bind"),
                               (2 * START, "the rate rose"), (START + 1, "borrowed")]  # fmt: skip


def test_a_fixed_concurrency_is_never_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    # --concurrency N: the limiter stays at N whatever is observed.
    clock = _Clock()
    monkeypatch.setattr(many, "time", clock)

    async def main() -> tuple[object, float]:
        paced = Paced(8)
        for _ in range(100):
            clock.wall += 1.0
            paced.finished(True)
        return paced.pace, paced.limiter.total_tokens

    assert anyio.run(main) == (None, 8)
