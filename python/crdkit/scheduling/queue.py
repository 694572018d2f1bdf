"""The gang queue: which gangs a pass looks at, when a refused gang may be tried again, and the
line of gangs waiting for room.

- **Dirty set and wake-up.** Watch events mark a gang; a pass takes every marked gang at once
  (`take`). `later` marks a gang after a delay, on the event loop's clock.
- **Retries.** A gang whose bind the apiserver refused waits before it is tried again, longer
  each time: the runtime's per-item exponential limiter, as a controller's retries.
- **The line.** Gangs that did not fit when last tried, by priority (higher first), then
  arrival (`crdkit.scheduling.pending.line_place`: bigger gangs credited for their size).
  `first_in_line` decides who is owed a reservation; `place_note` tells a gang where it
  stands; the gauges show the line's depth per priority.

It makes no API call; the scheduler wires it to the informers and the dispatcher's outcomes.
"""

from __future__ import annotations

import asyncio
import bisect
from typing import TYPE_CHECKING

from crdkit.runtime.ratelimit import ItemExponentialRateLimiter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from datetime import datetime

    from crdkit.scheduling.metrics import SchedulerMetrics
    from crdkit.scheduling.pending import GroupRef
    from crdkit.scheduling.reservations import DomainReservation

__all__ = ["GangQueue", "LinePlace"]

LinePlace = tuple["datetime", str, str]
"""A gang's place within its priority: arrival (size-credited), namespace, name."""


class GangQueue:
    """See the module docstring. ``clock`` times retries; ``retry_backoff`` is the first and
    longest wait before a refused gang is tried again."""

    def __init__(self, clock: Callable[[], float], retry_backoff: tuple[float, float]) -> None:
        self._clock = clock
        self._dirty: set[GroupRef] = set()
        self._wake = asyncio.Event()
        self._retries = ItemExponentialRateLimiter(*retry_backoff)
        self._retry_at: dict[GroupRef, float] = {}
        """When each gang whose bind failed may be tried again (on ``clock``)."""
        self._queued: dict[GroupRef, tuple[int, LinePlace]] = {}
        """Gangs that did not fit when last tried: their priority and place in line."""
        self._lines: dict[int, tuple[list[LinePlace], int]] | None = None
        """`_queued`'s places sorted by priority, and how many wait above each (built on
        demand by `place_note`, dropped when `_queued` changes)."""
        self._priorities_shown: set[int] = set()

    # -- the dirty set ------------------------------------------------------------------------

    def mark(self, ref: GroupRef) -> None:
        self._dirty.add(ref)
        self._wake.set()

    def mark_all(self, refs: Iterable[GroupRef]) -> None:
        """Mark each of ``refs``; wake a pass only if there was one."""
        marked = False
        for ref in refs:
            self._dirty.add(ref)
            marked = True
        if marked:
            self._wake.set()

    def wake(self) -> None:
        """Call for a pass even if no gang is marked."""
        self._wake.set()

    def later(self, ref: GroupRef, delay: float) -> None:
        asyncio.get_running_loop().call_later(max(delay, 0.0), self.mark, ref)

    async def wait(self) -> None:
        """Until a gang is marked (or `wake` was called); clears the wake-up."""
        await self._wake.wait()
        self._wake.clear()

    def take(self) -> list[GroupRef]:
        """Every marked gang, sorted, and the dirty set emptied."""
        refs = sorted(self._dirty)
        self._dirty.clear()
        return refs

    @property
    def due(self) -> bool:
        """A pass is called for: a gang is marked or a wake-up is pending."""
        return bool(self._dirty) or self._wake.is_set()

    # -- retries ------------------------------------------------------------------------------

    def back_off(self, ref: GroupRef) -> None:
        """The gang's bind was refused: it waits before it is tried again."""
        self._retry_at[ref] = self._clock() + self._retries.when(ref)

    def retry_in(self, ref: GroupRef, now: float) -> float | None:
        """Seconds until a refused gang may be tried again; None when it may be now."""
        retry_at = self._retry_at.get(ref)
        if retry_at is not None and retry_at > now:
            return retry_at - now
        return None

    def bound(self, ref: GroupRef) -> None:
        """The gang is bound: its retries start over."""
        self._retry_at.pop(ref, None)
        self._retries.forget(ref)

    # -- the line -----------------------------------------------------------------------------

    def enqueue(self, ref: GroupRef, priority: int, place: LinePlace) -> None:
        self._queued[ref] = (priority, place)
        self._lines = None

    def dequeue(self, ref: GroupRef) -> None:
        """The gang is no longer in line for room: bound, gone, or not placeable now."""
        if self._queued.pop(ref, None) is not None:
            self._lines = None

    def forget(self, ref: GroupRef) -> None:
        """The gang is gone: nothing of it is kept."""
        self.dequeue(ref)
        self._retry_at.pop(ref, None)
        self._retries.forget(ref)

    def first_in_line(
        self, ref: GroupRef, priority: int, excused: Callable[[GroupRef], bool]
    ) -> bool:
        """No gang of its priority that arrived before it waits, other than those ``excused``
        (holding room already, or fitting nowhere)."""
        place = self._queued[ref][1]
        return not any(
            other_priority == priority and other_place < place and not excused(other)
            for other, (other_priority, other_place) in self._queued.items()
        )

    def furthest_behind(self, ref: GroupRef, others: Iterable[GroupRef]) -> GroupRef | None:
        """Of ``others`` in line at ``ref``'s priority, the one furthest behind it, if any is."""
        priority, place = self._queued[ref]
        behind = [
            (entry[1], other)
            for other in others
            if (entry := self._queued.get(other)) is not None
            and entry[0] == priority
            and entry[1] > place
        ]
        return max(behind)[1] if behind else None

    def ordered(self) -> list[tuple[GroupRef, int]]:
        """The line in the order it is served: higher priority first, then place."""
        entries = sorted(self._queued.items(), key=lambda item: (-item[1][0], item[1][1]))
        return [(ref, priority) for ref, (priority, _) in entries]

    def place_note(self, ref: GroupRef) -> str:
        """Its place in line when the report is written (a later shift rewrites nothing)."""
        entry = self._queued.get(ref)
        if entry is None:
            return ""
        priority, place = entry
        if self._lines is None:
            # Each priority's places sorted, and how many wait above it: built once for all
            # the reports of a pass (counting the line for each gang made a pass quadratic).
            by_priority: dict[int, list[LinePlace]] = {}
            for p, a in self._queued.values():
                by_priority.setdefault(p, []).append(a)
            above = 0
            lines: dict[int, tuple[list[LinePlace], int]] = {}
            for p in sorted(by_priority, reverse=True):
                lines[p] = (sorted(by_priority[p]), above)
                above += len(by_priority[p])
            self._lines = lines
        same, higher = self._lines[priority]
        ahead = bisect.bisect_left(same, place)
        return (
            f" [in line: {ahead + 1} of {len(same)} at priority {priority}"
            + (f", {higher} waiting at higher priorities" if higher else "")
            + "]"
        )

    def show(
        self, metrics: SchedulerMetrics, name: str, reservations: Iterable[DomainReservation]
    ) -> None:
        """The line's and the reservations' gauges, as the last pass left them."""
        depth: dict[int, int] = {}
        for priority, _ in self._queued.values():
            depth[priority] = depth.get(priority, 0) + 1
        for priority in self._priorities_shown | depth.keys():
            metrics.pending_gangs.labels(name, str(priority)).set(depth.get(priority, 0))
        self._priorities_shown = set(depth)
        held = list(reservations)
        metrics.reservations.labels(name).set(len(held))
        metrics.reserved_nodes.labels(name).set(sum(len(r.nodes) for r in held))
