"""The proxy front's body-read deadlines, kept by one timer (D-PROXY-29, D-PROXY-45,
D-PROXY-50): each read runs out on its own deadline, a read that ended is never cut,
and a cancellation from elsewhere is never taken for a deadline."""

from __future__ import annotations

import asyncio

import pytest

from a2a_interview.server.proxy.front import _Deadlines


async def _reading(deadlines: _Deadlines, gate: asyncio.Future[None]) -> str:
    """A body read as ``Front._read_body`` keeps it: ``gate`` is the body arriving."""
    task = asyncio.current_task()
    assert task is not None
    deadlines.add(task)
    try:
        await gate
        return "read"
    except asyncio.CancelledError:
        if not deadlines.expired(task) or task.uncancel() > 0:
            raise
        return "expired"
    finally:
        deadlines.discard(task)


@pytest.mark.anyio
async def test_each_read_runs_out_on_its_own_deadline_and_only_the_slow_ones() -> None:
    """D-PROXY-50: the timer set for the oldest read is set again for a later one, a
    read whose body came in time is never cut, and nothing is held once they end."""
    loop = asyncio.get_running_loop()
    deadlines = _Deadlines(0.3)
    gates: list[asyncio.Future[None]] = [loop.create_future() for _ in range(3)]
    first = asyncio.ensure_future(_reading(deadlines, gates[0]))
    quick = asyncio.ensure_future(_reading(deadlines, gates[1]))
    await asyncio.sleep(0)
    gates[1].set_result(None)
    assert await asyncio.wait_for(quick, 10) == "read"
    await asyncio.sleep(0.1)
    later = asyncio.ensure_future(_reading(deadlines, gates[2]))
    assert await asyncio.wait_for(first, 10) == "expired"
    assert not later.done()  # its own deadline is later than the first one's
    assert await asyncio.wait_for(later, 10) == "expired"
    assert deadlines._reading == {} and deadlines._cut == set()


@pytest.mark.anyio
async def test_a_cancel_from_elsewhere_is_not_a_deadline() -> None:
    """D-PROXY-45: a read cancelled by someone else (the server at shutdown) is
    cancelled, not answered 408; the deadline's own timer then finds nothing to cut."""
    loop = asyncio.get_running_loop()
    deadlines = _Deadlines(0.2)
    read = asyncio.ensure_future(_reading(deadlines, loop.create_future()))
    await asyncio.sleep(0)
    read.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(read, 10)
    assert deadlines._reading == {}
    await asyncio.sleep(0.3)  # the timer fires over an empty table
    assert deadlines._cut == set()
