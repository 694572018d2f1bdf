"""An asyncio event loop on a virtual clock, for testing timing logic without waiting.

Timing properties (a backoff grows, a delayed key comes back after its delay, a dead leader is
replaced within ``lease_duration + retry_period``) are easy to break and slow to test in real
time, and a wall-clock bound in a test fails on a loaded machine. On :class:`VirtualTimeLoop`
the clock only moves when every task is waiting on a timer: the loop then jumps straight to the
next timer instead of sleeping. Durations measured with ``loop.time()`` are exact, and a test
that "waits" an hour finishes in milliseconds.

    from crdkit.testing.sim.virtual_time import run_on_virtual_clock

    def test_backoff() -> None:
        async def main() -> None:
            loop = asyncio.get_running_loop()
            start = loop.time()
            await asyncio.sleep(30)
            assert loop.time() - start == 30

        run_on_virtual_clock(main())

Meant for code whose waiting is all timers (``asyncio.sleep``, ``asyncio.timeout``,
``call_later``): while a socket or pipe is still busy, the loop does not know that real time
would pass, so keep real I/O out of these tests. Pass ``loop.time`` as the clock of objects that
take one (``WorkQueue``, ``LeaderElector``, rate limiters) so they read the same virtual time.
"""

from __future__ import annotations

import asyncio
import selectors
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Coroutine

__all__ = ["VirtualTimeLoop", "run_on_virtual_clock"]

T = TypeVar("T")


class _VirtualClock:
    def __init__(self, start: float) -> None:
        self.now = start

    def advance(self, seconds: float) -> None:
        self.now += seconds


class _SkippingSelector(selectors.DefaultSelector):
    """The platform's selector, except that an idle wait for a timer advances the clock instead.

    The event loop calls ``select(timeout)`` with the time left until its next timer. Ready file
    descriptors (the loop's own wake-up pipe, a thread's ``call_soon_threadsafe``) are still
    served first; only the sleep is skipped.
    """

    def __init__(self, clock: _VirtualClock) -> None:
        super().__init__()
        self._clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            # No timer is pending: only another thread (through the wake-up pipe) can make
            # progress, so this is a real wait.
            return super().select(None)
        self._clock.advance(timeout)
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose :meth:`time` is virtual and jumps to the next due timer."""

    def __init__(self, start: float = 0.0) -> None:
        self._virtual_clock = _VirtualClock(start)
        super().__init__(selector=_SkippingSelector(self._virtual_clock))

    def time(self) -> float:
        return self._virtual_clock.now


def run_on_virtual_clock(main: Coroutine[Any, Any, T], *, start: float = 0.0) -> T:
    """Run ``main`` to completion on a fresh :class:`VirtualTimeLoop` and return its result."""
    with asyncio.Runner(loop_factory=lambda: VirtualTimeLoop(start)) as runner:
        return runner.run(main)
