"""The virtual-clock event loop: timers jump the clock, real wake-ups are still served."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from crdkit.testing.sim.virtual_time import run_on_virtual_clock


def test_sleeps_and_timeouts_take_exactly_their_virtual_time() -> None:
    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        marks = [loop.time()]
        await asyncio.sleep(3600)
        marks.append(loop.time())
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(2.5):
                await asyncio.sleep(10)
        marks.append(loop.time())
        fired: list[float] = []
        loop.call_later(7, lambda: fired.append(loop.time()))
        loop.call_later(1, lambda: fired.append(loop.time()))
        await asyncio.sleep(8)
        return [*marks, *fired, loop.time()]

    started = time.monotonic()
    assert run_on_virtual_clock(main(), start=100.0) == [
        100.0,
        3700.0,
        3702.5,
        3703.5,
        3709.5,
        3710.5,
    ]
    # Not a timing assertion on the code under test: an hour of virtual waiting must not be
    # an hour of real waiting, or the loop is not virtual at all.
    assert time.monotonic() - started < 3600


def test_a_wake_up_from_another_thread_is_served_while_no_timer_is_due() -> None:
    async def main() -> str:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        threading.Thread(
            target=lambda: loop.call_soon_threadsafe(answer.set_result, "from thread")
        ).start()
        before = loop.time()
        result = await answer
        assert loop.time() == before, "no timer was due, so the clock must not move"
        return result

    assert run_on_virtual_clock(main()) == "from thread"
