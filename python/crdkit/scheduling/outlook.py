"""Expected starts: when each waiting gang will start, as Slurm's ``squeue --start`` says it,
and whether the first start it was told was kept.

The estimate is the start plan's (`crdkit.scheduling.start_plan`): the running pods leave at
their declared ends, the gangs ahead in line take their slots, reservations keep their nodes,
and a gang's start is the first moment its room is free for its whole declared run time. With
`SchedulerOptions.start_plan` the scheduler acts on that plan, and its slots are the estimates.
Without it the same plan is made beside the pass, on the gangs waiting for room, and acted on
by no one: it only says when.

- An estimate is made after a pass's binds are counted, when a gang joined the line or
  ``every`` seconds after the last, and for the first ``depth`` gangs in line only: a gang's
  start depends only on the gangs ahead of it, and planning a long line on a big cluster costs
  the placer a try per declared end.
- A start is unknown, never guessed, when the room the gang needs is held by pods that declare
  no end; a gang the queues have not admitted waits for quota, which no run time says.
- The first start a gang is promised is kept. When the gang starts, the promise is counted
  kept if it started in the first pass at or after it (`StartRecord`).

`Outlook` makes no API call; the scheduler's view (`crdkit.scheduling.view`) reads it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from crdkit.scheduling.gang_records import with_tolerations
from crdkit.scheduling.runtime_bounds import stamp
from crdkit.scheduling.start_plan import StartPlan

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pending import GroupRef
    from crdkit.scheduling.start_plan import PlanEntry, Planned

__all__ = ["ESTIMATE_DEPTH", "ESTIMATE_EVERY", "Expected", "Outlook", "StartRecord"]

ESTIMATE_EVERY = 2.0
"""Seconds between two estimates when no gang joins the line."""

ESTIMATE_DEPTH = 32
"""How many gangs, first in line, get an estimate."""

UNBOUNDED = "the room it needs is held by pods that declare no run-time bound"
NOT_ADMITTED = "it waits for its queue's quota, which no run time says"
TOO_FAR = "not estimated: {ahead} gangs wait ahead of it"
NOT_YET = "not estimated yet"


@dataclass(frozen=True)
class Expected:
    """What is expected of a waiting gang's start."""

    start: float | None
    """Epoch seconds (at or before now: the next pass); None when unknown."""
    note: str
    """Why it is unknown, or ""."""
    promised: float | None
    """The first start it was promised."""


@dataclass(frozen=True)
class StartRecord:
    """A gang that started with a promise."""

    gang: GroupRef
    promised: float
    actual: float
    kept: bool
    """It started in the first pass at or after its promise (or earlier)."""


class Outlook:
    """See the module docstring. ``plan`` is the scheduler's start plan: acted on by the pass
    when ``acting``, made beside it otherwise."""

    def __init__(
        self,
        mirror: ClusterMirror,
        policy: object,
        *,
        acting: bool,
        every: float = ESTIMATE_EVERY,
        depth: int = ESTIMATE_DEPTH,
        remember: int = 1024,
    ) -> None:
        self.plan = StartPlan(mirror, policy)  # type: ignore[arg-type]
        self.acting = acting
        self.every = every
        self.depth = depth
        self._line: dict[GroupRef, tuple[PlanEntry, int]] = {}
        """The waiting gangs' plan entries, as their last pass built them."""
        self._unbounded: set[GroupRef] = set()
        """Estimated, and no start could be planned."""
        self._refused: set[GroupRef] = set()
        """Waiting for quota, not for room."""
        self._ahead: dict[GroupRef, int] = {}
        """Beyond the estimate's depth: how many wait ahead."""
        self._last_estimate = -math.inf
        self._new = False
        self._previous_pass: float | None = None
        self._last_pass: float | None = None
        self.starts: deque[StartRecord] = deque(maxlen=remember)
        """The last starts made with a promise, oldest first."""
        self.kept = 0
        self.late = 0

    def new_pass(self, wall: float) -> None:
        """A pass begins at ``wall`` (epoch seconds)."""
        self._previous_pass, self._last_pass = self._last_pass, wall

    def waiting(self, line: Iterable[tuple[PlanEntry, int]]) -> None:
        """These gangs wait for room after this pass (placed in no node now)."""
        for entry, priority in line:
            if entry.ref not in self._line:
                self._new = True
            self._line[entry.ref] = (entry, priority)
            self._refused.discard(entry.ref)

    def refused(self, refs: Iterable[GroupRef]) -> None:
        """These gangs wait for their queues' quota."""
        for ref in refs:
            self._refused.add(ref)
            self._line.pop(ref, None)

    def estimate(
        self,
        order: Callable[[], Sequence[tuple[GroupRef, int]]],
        pod_end: Callable[[str], float | None],
        wall: float,
        tolerations: Callable[[GroupRef, int, float | None], Sequence[Mapping[str, Any]]],
    ) -> None:
        """Estimate the starts of the first `depth` gangs in line (``order``: the line as it
        is served), if due; with an acting plan its slots already say. ``tolerations``: the
        held nodes a gang may use (`Reservations.tolerations`), asked again now, for the
        holds made in the pass after the gang's record was built."""
        if self.acting or not self._line:
            return
        if not self._new and wall - self._last_estimate < self.every:
            return
        self._new, self._last_estimate = False, wall
        line: list[tuple[PlanEntry, int]] = []
        self._ahead.clear()
        for ref, _ in order():
            item = self._line.get(ref)
            if item is None:
                continue
            if len(line) < self.depth:
                entry, priority = item
                end = None if entry.bound is None else wall + entry.bound
                allowed = tolerations(ref, priority, end)
                if allowed:
                    entry = replace(entry, gang=with_tolerations(entry.gang, allowed))
                line.append((entry, priority))
            else:
                self._ahead[ref] = len(line) + len(self._ahead)
        said, _ = self.plan.plan(line, pod_end, wall)
        self.told(said)

    def told(self, said: Mapping[GroupRef, Planned]) -> None:
        """What the plan said of the gangs it planned: those with no start are unknown."""
        for ref, planned in said.items():
            if planned.start is None:
                self._unbounded.add(ref)
            else:
                self._unbounded.discard(ref)

    def expected(self, ref: GroupRef) -> Expected:
        """What is expected of ``ref``'s start now."""
        promised = self.plan.promised.get(ref)
        if ref in self._refused:
            return Expected(None, NOT_ADMITTED, promised)
        slot = self.plan.slots.get(ref)
        if slot is not None:
            return Expected(slot.start, "", promised)
        if ref in self._unbounded:
            return Expected(None, UNBOUNDED, promised)
        ahead = self._ahead.get(ref)
        if ahead is not None:
            return Expected(None, TOO_FAR.format(ahead=ahead), promised)
        return Expected(None, NOT_YET if ref in self._line else "", promised)

    def note(self, ref: GroupRef) -> str:
        """The expected start, to close a ``FailedScheduling`` message."""
        expected = self.expected(ref)
        if expected.start is not None:
            return f"; expected to start by {stamp(expected.start)}"
        return f"; expected start unknown: {expected.note}" if expected.note else ""

    def started(self, ref: GroupRef, now: float) -> None:
        """``ref`` starts at ``now``: its promise, if it had one, is counted."""
        promise = self.plan.promised.get(ref)
        self.plan.started(ref, now)
        self._forget_waiting(ref)
        if promise is None:
            return
        # Kept when no pass that came at or after the promise passed it by.
        previous = self._previous_pass
        kept = now <= promise or previous is None or previous < promise
        self.starts.append(StartRecord(ref, promise, now, kept))
        if kept:
            self.kept += 1
        else:
            self.late += 1

    def drop(self, ref: GroupRef) -> None:
        """``ref`` no longer waits for room (bound, gone, or not placeable now)."""
        self.plan.drop(ref)
        self._forget_waiting(ref)

    def forget(self, ref: GroupRef) -> None:
        """``ref`` is gone."""
        self.plan.forget(ref)
        self._forget_waiting(ref)
        self._refused.discard(ref)

    def _forget_waiting(self, ref: GroupRef) -> None:
        self._line.pop(ref, None)
        self._unbounded.discard(ref)
        self._ahead.pop(ref, None)
