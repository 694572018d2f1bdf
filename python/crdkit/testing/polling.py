"""``eventually``: wait for a condition on a live cluster, with a generous deadline.

Integration tests observe controllers that react on their own schedule; polling for the end
state is the only robust way to assert it. The deadline is a hang guard, not a performance
assertion: it is long enough for a loaded machine, and how long the wait took is returned for
a benchmark or a log, never for an assertion.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["eventually", "holds"]


async def holds(check: Callable[[], bool | Awaitable[bool]]) -> bool:
    """Whether ``check`` holds now: a plain predicate or a coroutine function."""
    answer = check()
    return await answer if inspect.isawaitable(answer) else answer


async def eventually(
    check: Callable[[], bool | Awaitable[bool]],
    within: float = 60.0,
    what: str = "condition",
    *,
    interval: float = 0.05,
) -> float:
    """Poll ``check`` (a plain predicate, or a coroutine function for one that reads the
    cluster) until it is true, or raise ``AssertionError`` naming ``what`` after ``within``
    seconds; returns the seconds it took."""
    started = time.monotonic()
    while not await holds(check):
        if time.monotonic() - started > within:
            raise AssertionError(f"{what} not met within {within}s")
        await asyncio.sleep(interval)
    return time.monotonic() - started
