"""`GangGate`: API calls in flight capped, admitted a whole gang at a time.

A plain semaphore shared by every gang's calls lets a 16-pod gang's binds queue one by one
behind the calls of 80 smaller gangs, so the gang stays partly bound for as long as the others
take. The gate instead takes a gang's slots all at once (as many as it has calls, at most all
slots), in arrival order: its calls go out together, and a gang that arrives later waits
whole, not between another gang's pods.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["GangGate"]


class GangGate:
    """``slots`` calls in flight at most, granted to whole gangs first come, first served."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"slots: must be at least 1, got {slots}")
        self.slots = slots
        self.free = slots
        self._waiting: collections.deque[tuple[int, asyncio.Future[None]]] = collections.deque()

    @contextlib.asynccontextmanager
    async def admit(self, calls: int) -> AsyncIterator[int]:
        """Hold the slots for ``calls`` calls (capped at `slots`) while inside; yields how many
        it holds, which the gang's calls may have in flight at once."""
        wanted = max(1, min(calls, self.slots))
        await self._acquire(wanted)
        try:
            yield wanted
        finally:
            self.free += wanted
            self._grant()

    async def _acquire(self, wanted: int) -> None:
        if not self._waiting and self.free >= wanted:
            self.free -= wanted
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((wanted, granted))
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.free += wanted  # granted just as it was cancelled: give the slots back
            else:
                # `_grant` may have dropped the cancelled entry already.
                with contextlib.suppress(ValueError):
                    self._waiting.remove((wanted, granted))
            self._grant()
            raise

    def _grant(self) -> None:
        # First come, first served: a gang at the head that does not fit yet holds back the
        # smaller ones behind it, so no gang waits forever behind a stream of small ones.
        while self._waiting and self.free >= self._waiting[0][0]:
            wanted, granted = self._waiting.popleft()
            if granted.cancelled():
                continue
            self.free -= wanted
            granted.set_result(None)
