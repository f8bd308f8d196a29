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


def population(
    seconds_per_agent: float, cpu_per_agent: float, failed: float = 0.0, hosts: float = 1e9
) -> Model:
    """Agents take ``seconds_per_agent`` of waiting each and ``cpu_per_agent`` of this
    process's CPU; their hosts answer at most ``hosts`` agents a second. The rate is the
    limit over the wait until the CPU (one core) or the hosts are full; past that, each
    agent takes longer (Little's law: took = limit / rate)."""

    def window(limit: int) -> Window:
        rate = min(limit / seconds_per_agent, 1 / cpu_per_agent, hosts)
        done = max(8, limit // 2)
        seconds = done / rate
        took = limit / rate
        return Window(done, round(done * failed), seconds, done * cpu_per_agent, True, took)

    return window


def run(pace: Pace, model: Model, windows: int = 60) -> list[int]:
    return [pace.observe(model(pace.limit)) for _ in range(windows)]


def test_a_latency_bound_run_grows_until_the_cpu_is_busy() -> None:
    # 0.5 s of waiting and 5 ms of CPU per agent: the CPU fills at 200 agents/s, i.e.
    # 100 under way; the pace stops once the CPU passes 85% (85 or more under way).
    pace = Pace()
    limits = run(pace, population(0.5, 0.005))
    assert limits[:3] == [2 * START, 4 * START, 80]  # doubling up to 64, then a quarter
    assert 85 <= limits[-1] <= 100
    assert pace.reason == "CPU busy"


def test_far_agents_and_little_cpu_reach_the_cap_and_stay() -> None:
    pace = Pace()
    limits = run(pace, population(2.0, 0.0001))
    assert limits[-10:] == [CAP] * 10
    assert pace.reason == "at the cap"


def test_full_hosts_stop_the_growth_near_their_rate() -> None:
    # The agents' hosts answer 100 agents/s: past 50 under way, agents take longer while
    # this process idles. The pace stops where the rate is (nearly) the hosts' and
    # agents take less than twice their time alone.
    model = population(0.5, 0.0001, hosts=100)
    pace = Pace()
    limits = run(pace, model)
    assert 50 <= limits[-1] < 100
    assert limits[-10:] == [limits[-1]] * 10
    final = model(limits[-1])
    assert final.done / final.seconds >= 100 and final.took is not None and final.took < 1.0


def test_a_cpu_bound_run_stays_at_the_start() -> None:
    # Loopback: the CPU is full from the first window; the pace never goes below the
    # old fixed default, nor above it.
    pace = Pace()
    limits = run(pace, population(0.001, 0.01))
    assert set(limits) == {START}
    assert pace.reason == "CPU busy"


def test_agents_that_slow_down_shrink_it_by_quarters_to_the_start() -> None:
    pace = Pace()
    fast = Window(16, 0, 1.0, 0.1, True, took=1.0)
    assert [pace.observe(fast) for _ in range(2)] == [32, 64]
    slow = Window(64, 0, 1.0, 0.1, True, took=2.0)
    assert [pace.observe(slow) for _ in range(7)] == [48, 36, 27, 20, 16, 16, 16]
    assert pace.reason == "the agents slowed"


def test_somewhat_slower_agents_hold_it() -> None:
    pace = Pace()
    pace.observe(Window(16, 0, 1.0, 0.1, True, took=1.0))
    assert pace.observe(Window(32, 0, 1.0, 0.1, True, took=1.7)) == 32
    assert pace.reason == "the agents are slower"


def test_a_usual_share_of_dead_agents_is_no_reason_to_back_off() -> None:
    # 7% unreachable in every window (a real population: refused, slow, gone).
    limits = run(Pace(), population(2.0, 0.0001, failed=0.07), windows=40)
    assert limits[-1] == CAP


def test_failures_jumping_halve_the_limit_down_to_the_floor() -> None:
    pace = Pace()
    run(pace, population(2.0, 0.0001, failed=0.05), windows=40)
    assert pace.limit == CAP
    overloaded = Window(CAP, CAP // 2, 2.0, 0.1, True, took=2.0)
    assert pace.observe(overloaded) == CAP // 2
    assert pace.reason == "failures rose"
    for _ in range(20):
        pace.observe(overloaded)
    assert pace.limit == pace.floor == 4


def test_after_failures_it_grows_again_a_quarter_at_a_time() -> None:
    pace = Pace()
    assert pace.observe(Window(16, 16, 1.0, 0.1, True)) == 16  # all failed at first
    assert pace.reason == "no time"
    assert pace.observe(Window(16, 0, 1.0, 0.1, True, took=1.0)) == 32  # none: usual is 0
    assert pace.observe(Window(16, 12, 1.0, 0.1, True, took=1.0)) == 16  # 75% > 0 + 25%
    assert pace.observe(Window(16, 0, 1.0, 0.1, True, took=1.0)) == 20  # a quarter more


def test_a_limit_that_did_not_bind_is_kept() -> None:
    # No agent was waiting (the end of the list, or --per-origin holding them): how
    # long the agents took says nothing about more at once.
    pace = Pace()
    assert pace.observe(Window(16, 0, 0.1, 0.001, waiting=False, took=0.1)) == START
    assert pace.reason == "the limit did not bind"


def test_nothing_finished_keeps_the_limit() -> None:
    pace = Pace()
    assert pace.observe(Window(0, 0, 10.0, 0.01, True)) == START
    assert pace.reason == "nothing finished"


@pytest.mark.parametrize(("start", "cap"), [(16, 4), (1, 1), (8, 300)])
def test_the_cap_bounds_every_decision(start: int, cap: int) -> None:
    pace = Pace(start=start, cap=cap)
    limits = run(pace, population(5.0, 0.00001))
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
            paced.finished(False, 1.0, paced.epoch)
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
                paced.finished(False, 1.0, paced.epoch)
            seen.append((int(paced.limiter.total_tokens), paced.pace.reason))
        seen.append((paced.limiter.borrowed_tokens, "borrowed"))  # the waiter got in
        return seen

    assert anyio.run(main) == [
        (START, "the limit did not bind"),
        (2 * START, "the agents are as fast"),
        (START + 1, "borrowed"),
    ]


def test_a_fixed_concurrency_is_never_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    # --concurrency N: the limiter stays at N whatever is observed.
    clock = _Clock()
    monkeypatch.setattr(many, "time", clock)

    async def main() -> tuple[object, float]:
        paced = Paced(8)
        for _ in range(100):
            clock.wall += 1.0
            paced.finished(True, 1.0, paced.epoch)
        return paced.pace, paced.limiter.total_tokens

    assert anyio.run(main) == (None, 8)


def test_agents_started_before_a_change_do_not_judge_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Agents that took their place under the old limit finish after a change; counted,
    # they made the pace double again and again before a doubling showed its effect
    # (the population bench overshot into deadlines so).
    clock = _Clock()
    monkeypatch.setattr(many, "time", clock)

    async def main() -> list[int]:
        paced = Paced(None)
        for holder in range(START):
            await paced.limiter.acquire_on_behalf_of(holder)
        limits = []
        async with anyio.create_task_group() as group:
            for waiter in ("a", "b"):
                group.start_soon(paced.limiter.acquire_on_behalf_of, waiter)
            await anyio.wait_all_tasks_blocked()
            for _ in range(8):
                clock.wall += 0.1
                paced.finished(False, 1.0, 0)
            limits.append(int(paced.limiter.total_tokens))  # grew: epoch 1
            for _ in range(100):  # the old epoch's agents, much slower: not read
                clock.wall += 0.1
                paced.finished(False, 100.0, 0)
            limits.append(int(paced.limiter.total_tokens))
            for _ in range(16):  # the new epoch's, as slow: read
                clock.wall += 0.1
                paced.finished(False, 100.0, 1)
            limits.append(int(paced.limiter.total_tokens))
        return limits

    assert anyio.run(main) == [2 * START, 2 * START, 2 * START * 3 // 4]


def test_the_pace_is_opt_in_and_auto_turns_it_on() -> None:
    # D-VERIFY-71: the defaults stay fixed (verify-many 16, worker 4, verify_many() 4)
    # until the pace is shown at or above them; `--concurrency auto` is the pace (None).
    import argparse
    import inspect

    from a2a_interview.cli import options
    from a2a_interview.cli.ledger import register as register_ledger
    from a2a_interview.cli.verify import register as register_verify
    from a2a_interview.ledger.jobs import WorkerSettings
    from a2a_interview.verifier.many import verify_many

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    register_verify(sub)
    register_ledger(sub)
    assert parser.parse_args(["verify-many", "a.txt"]).concurrency == 16
    assert parser.parse_args(["verify-many", "a.txt", "--concurrency", "auto"]).concurrency is None
    assert parser.parse_args(["verify-many", "a.txt", "--concurrency", "8"]).concurrency == 8
    assert parser.parse_args(["worker"]).concurrency == 4
    assert parser.parse_args(["worker", "--concurrency", "auto"]).concurrency is None
    assert inspect.signature(verify_many).parameters["concurrency"].default == 4
    assert WorkerSettings(verifier=None).concurrency == 4  # type: ignore[arg-type]
    for bad in ("0", "AUTO", "lots", "2000"):
        with pytest.raises(argparse.ArgumentTypeError):
            options.concurrency(bad)
