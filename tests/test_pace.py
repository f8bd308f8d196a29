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


def settled(
    rate: float,
    took: float = 1.0,
    *,
    failed: int = 0,
    cpu: float = 0.1,
    waiting: bool = True,
    seconds: float = 2.0,
) -> Window:
    """A window that reached ``rate`` agents/s, long enough (twice an agent's time) to
    be judged right after a change."""
    return Window(round(rate * seconds) + failed, failed, seconds, cpu * seconds, waiting, took)


def test_a_latency_bound_run_climbs_until_the_cpu_is_busy() -> None:
    # 0.5 s of waiting and 5 ms of CPU per agent: the CPU fills at 200 agents/s, i.e.
    # 100 under way; the pace starts fast and stops once the CPU passes 85%.
    pace = Pace()
    limits = run(pace, population(0.5, 0.005))
    assert limits[:4] == [24, 36, 54, 81]  # one place more per agent reached
    assert all(85 <= limit <= 128 for limit in limits[-20:])
    assert pace.reason == "CPU busy"


def test_far_agents_and_little_cpu_reach_the_cap_and_stay() -> None:
    pace = Pace()
    limits = run(pace, population(2.0, 0.0001))
    assert limits[-10:] == [CAP] * 10
    assert pace.reason == "at the cap"


def test_full_hosts_hold_it_where_the_rate_is_the_hosts() -> None:
    # The agents' hosts answer 100 agents/s: past 50 under way, agents take longer while
    # this process idles and the rate stays at 100. The pace stays where the rate is
    # the hosts' and below where agents would take 2.5 times their time alone (125).
    model = population(0.5, 0.0001, hosts=100)
    pace = Pace()
    limits = run(pace, model)
    assert all(limit < 160 for limit in limits)
    assert all(50 <= limit < 125 for limit in limits[-20:])
    assert sum(limit < 125 for limit in limits[10:]) >= 0.8 * len(limits[10:])


def test_a_cpu_bound_run_stays_at_the_start() -> None:
    # Loopback: the CPU is full from the first window; the pace never goes below the
    # old fixed default, nor above it.
    pace = Pace()
    limits = run(pace, population(0.001, 0.01))
    assert set(limits) == {START}
    assert pace.reason == "CPU busy"


def test_a_usual_share_of_dead_agents_is_no_reason_to_back_off() -> None:
    # 7% unreachable in every window (a real population: refused, slow, gone).
    limits = run(Pace(), population(2.0, 0.0001, failed=0.07), windows=40)
    assert limits[-1] == CAP


@pytest.mark.parametrize(("start", "cap"), [(16, 4), (1, 1), (8, 300)])
def test_the_cap_bounds_every_decision(start: int, cap: int) -> None:
    pace = Pace(start=start, cap=cap)
    limits = run(pace, population(5.0, 0.00001))
    assert pace.floor <= min(limits) and max(limits) <= max(cap, start)
    assert pace.window_size() >= 16


# One test per rule of pace.py's list: each fails when its rule is taken out.


def climbing(pace: Pace, rate: float = 10.0) -> Pace:
    """``pace`` past its start (the CPU was busy once), its rate at its limit read."""
    pace.observe(settled(rate, cpu=0.9))  # rule 5 ends the start
    assert pace.reason == "CPU busy"
    pace.observe(settled(rate))  # settled at the limit: its rate is read, a step taken
    return pace


def test_rule_1_nothing_finished_keeps_the_limit() -> None:
    pace = Pace()
    assert pace.observe(Window(0, 0, 10.0, 0.01, True)) == START
    assert pace.reason == "nothing finished"


def test_rule_1_one_step_down_per_agent_time() -> None:
    # After an overshoot the agents that took their place before a step down still
    # finish slow or fail for one agent's time: read, they took the limit down again at
    # every window, to the floor (the population bench went from 178 to 27 so).
    pace = Pace()
    assert [pace.observe(settled(rate)) for rate in (8, 16)] == [32, 64]
    overloaded = Window(20, 10, 1.0, 0.1, True, took=2.0)  # half failed, half a time
    assert pace.observe(overloaded) == 32
    assert pace.observe(overloaded) == 32
    assert pace.reason == "settling"
    assert pace.observe(overloaded) == 32
    assert pace.observe(overloaded) == 16  # two agents' times later: down again


def test_rule_2_failures_above_the_usual_share_halve_it_down_to_the_floor() -> None:
    pace = Pace()
    assert [pace.observe(settled(rate)) for rate in (8, 16)] == [32, 64]
    assert pace.observe(settled(40, failed=30)) == 32  # 27% failed, usual 0%: + 25 points
    assert pace.reason == "failures rose"
    for _ in range(10):
        pace.observe(settled(40, failed=80))
    assert pace.limit == pace.floor == 4


def test_rule_2_a_steady_share_of_failures_is_the_populations_own() -> None:
    pace = Pace()
    # 33% failed from the first window on: the population's share, no reason to halve.
    assert [pace.observe(settled(rate, failed=rate)) for rate in (8, 16)] == [32, 64]


def test_rule_3_agents_that_slow_down_shrink_it_by_quarters_to_the_start() -> None:
    pace = Pace()
    assert [pace.observe(settled(rate)) for rate in (8, 16)] == [32, 64]  # baseline 1 s
    slow = settled(40, took=2.5, seconds=6.0)  # each window one agent's time long
    assert [pace.observe(slow) for _ in range(7)] == [48, 36, 27, 20, 16, 16, 16]
    assert pace.reason == "the agents slowed"


def test_rule_3_with_a_deadline_known_only_half_of_it_shrinks_the_limit() -> None:
    # The population bench's best fixed level ran agents at 3.3 times their time alone
    # and still made the most of them a second: slower agents are the rate's to judge;
    # the guard keeps them within the deadline (30 s here).
    pace = Pace(deadline=30.0)
    assert [pace.observe(settled(rate)) for rate in (8, 16)] == [32, 64]  # baseline 1 s
    assert pace.observe(settled(40, took=10.0, seconds=21.0)) == 64  # 10 times, 1/3
    assert pace.reason != "the agents slowed"
    assert pace.observe(settled(40, took=15.0, seconds=31.0)) == 48
    assert pace.reason == "the agents slowed"


def test_rule_4_a_limit_that_did_not_bind_is_kept() -> None:
    # No agent was waiting (the end of the list, or --per-origin holding them): the
    # rate says nothing about more at once.
    pace = Pace()
    assert pace.observe(settled(10, waiting=False)) == START
    assert pace.reason == "the limit did not bind"


def test_rule_5_the_start_adds_a_place_per_agent_reached_until_agents_slow() -> None:
    pace = Pace()
    # 10 reached in a window (and 2 unreachable): 10 places more, at most twice as many.
    assert pace.observe(settled(5, failed=2)) == START + 10
    assert pace.reason == "starting"
    assert pace.observe(settled(50)) == 2 * (START + 10)
    assert pace.observe(settled(50, took=2.0)) == 2 * (START + 10)  # twice the baseline
    assert pace.reason == "the agents are slower"
    assert pace.observe(Window(16, 0, 0.5, 0.05, True, took=1.0)) == 2 * (START + 10)
    assert pace.reason == "settling"  # the climb, step by step, from here


def test_rule_6_a_change_is_judged_one_agent_time_after_it() -> None:
    # Right after a step up the agents finishing started under the old limit: the rate
    # has not moved yet, and a step judged then would be taken back at once.
    pace = climbing(Pace())
    assert pace.limit == 24
    early = Window(10, 0, 1.0, 0.1, True, took=1.0)  # 10/s, half an agent's time later
    assert pace.observe(early) == 24
    assert pace.reason == "settling"
    assert pace.observe(Window(13, 0, 1.0, 0.1, True, took=1.0)) == 36  # judged: rose 30%


def test_rule_7_a_step_the_rate_did_not_follow_is_taken_back() -> None:
    pace = climbing(Pace())
    assert pace.limit == 24
    assert pace.observe(settled(10.5)) == START  # 50% more places made 5% more: back
    assert pace.reason == "the rate did not rise"


def test_rule_8_a_busy_cpu_stops_the_climb() -> None:
    pace = climbing(Pace())
    assert pace.observe(settled(13, cpu=0.9)) == 24  # the step paid, but no further
    assert pace.reason == "CPU busy"


def test_rule_9_after_a_step_back_it_holds_then_climbs_again_a_quarter_at_a_time() -> None:
    pace = climbing(Pace())
    assert pace.observe(settled(10.5)) == START
    assert [pace.observe(settled(10)) for _ in range(3)] == [16, 16, 20]
    assert pace.reason == "a step up"


def test_rule_10_it_climbs_by_halves_while_the_rate_follows_up_to_the_cap() -> None:
    pace = climbing(Pace(cap=80))
    limits = [pace.limit]
    rate = 10.0
    for _ in range(5):
        rate *= 1.25  # a fourth more a second for half more under way: enough
        limits.append(pace.observe(settled(rate)))
    assert limits == [24, 36, 54, 80, 80, 80]
    assert pace.reason == "at the cap"


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
            clock.wall += 0.2
            paced.finished(False, 1.0)
        seen.append((int(paced.limiter.total_tokens), paced.pace.reason))
        holders = [object() for _ in range(START)]
        for holder in holders:
            await paced.limiter.acquire_on_behalf_of(holder)
        async with anyio.create_task_group() as group:
            for waiter in range(20):
                group.start_soon(paced.limiter.acquire_on_behalf_of, f"waiting {waiter}")
            await anyio.wait_all_tasks_blocked()
            for _ in range(START):
                clock.wall += 0.2
                clock.cpu += 0.01
                paced.finished(False, 1.0)
            seen.append((int(paced.limiter.total_tokens), paced.pace.reason))
            for _ in range(START):  # the CPU busy all the time: the start ends
                clock.wall += 0.2
                clock.cpu += 0.2
                paced.finished(False, 1.0)
            seen.append((int(paced.limiter.total_tokens), paced.pace.reason))
            seen.append((paced.limiter.borrowed_tokens, "borrowed"))  # 16 waiters got in
            for _ in range(4):
                paced.limiter.release_on_behalf_of(holders.pop())
        return seen

    assert anyio.run(main) == [
        (START, "the limit did not bind"),
        (2 * START, "starting"),
        (2 * START, "CPU busy"),
        (2 * START, "borrowed"),
    ]


def test_a_fixed_concurrency_is_never_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    # --concurrency N: the limiter stays at N whatever is observed.
    clock = _Clock()
    monkeypatch.setattr(many, "time", clock)

    async def main() -> tuple[object, float]:
        paced = Paced(8)
        for _ in range(100):
            clock.wall += 1.0
            paced.finished(True, 1.0)
        return paced.pace, paced.limiter.total_tokens

    assert anyio.run(main) == (None, 8)


def test_the_pace_is_the_commands_default_and_n_fixes_it() -> None:
    # D-VERIFY-82: verify-many and worker run the pace unless --concurrency N fixes N
    # (their help says which is the default); the library's verify_many() and
    # WorkerSettings keep their fixed 4, a caller's choice.
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
    assert parser.parse_args(["verify-many", "a.txt"]).concurrency is None
    assert parser.parse_args(["verify-many", "a.txt", "--concurrency", "auto"]).concurrency is None
    assert parser.parse_args(["verify-many", "a.txt", "--concurrency", "16"]).concurrency == 16
    assert parser.parse_args(["worker"]).concurrency is None
    assert parser.parse_args(["worker", "--concurrency", "4"]).concurrency == 4
    for command in ("verify-many", "worker"):
        action = next(
            a for a in sub.choices[command]._actions if "--concurrency" in a.option_strings
        )
        assert action.help is not None and "default %(default)s" in action.help
        assert action.default == "auto"
    assert inspect.signature(verify_many).parameters["concurrency"].default == 4
    assert WorkerSettings(verifier=None).concurrency == 4  # type: ignore[arg-type]
    for bad in ("0", "AUTO", "lots", "2000"):
        with pytest.raises(argparse.ArgumentTypeError):
            options.concurrency(bad)
