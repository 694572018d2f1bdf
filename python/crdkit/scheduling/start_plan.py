"""Start plans: once gangs declare how long they run, every waiting gang is promised a start,
and a gang starts now only where it delays no start promised to another (conservative backfill,
as Slurm's backfill or Maui's reservation for every job).

The plan is engaged for a pass when a gang in it declares a run-time bound
(`crdkit.scheduling.runtime_bounds`), or while promises made earlier are still owed; a cluster
where no pod ever declares one never engages it, and is scheduled as before (reservations for
the head of each priority's line).

How a pass plans, in line order (higher priority first, then the queue's order):

- The future is the cluster as it stands, each pod on it leaving at its declared end (a pod
  that declares none stays for ever), plus the slots promised so far: each a gang's nodes from
  its planned start to its declared end (for ever without one). Nodes held by a reservation
  (for a gang no start could be planned for, or for a preemption's victims) keep their hold:
  only the gangs allowed there may be planned on them, as in the scheduler's own placer.
  Settling's holds (`crdkit.scheduling.settling`) are left out: they keep a draining domain
  from small gangs when nothing is known of run times, which the promises now do.
- A gang's start is the first moment, now or a declared end, from which the room it asks for is
  free on some nodes for its whole declared run time, on those nodes and in every slot that
  overlaps it (the placer answers "where", on a scratch cluster holding that moment's usage).
  Gangs of lower priority do not count against it: their slots are planned again after it.
- A gang whose start is now starts, where the plan put it. The others wait for their slots; the
  first start a gang is promised is kept, to say whether it was kept.

Promises only move earlier. A gang planned again is planned around every other slot, its own
left out, and its old slot is still free when pods end no later than they declared: so a pod
that ends early can only bring starts forward. What can break a promise: a gang of higher
priority, a pod running past its declared bound (one the kubelet does not enforce), a node
that goes, a bind the apiserver refuses.

`StartPlan` keeps the slots between passes and makes no API call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crdkit.placer import Cluster
from crdkit.scheduling.gang_records import shape
from crdkit.scheduling.settling import SETTLING_PREFIX

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

    from crdkit import _placer
    from crdkit.placer.cluster import Policy
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pending import GroupRef

__all__ = ["OVERDUE_GRACE", "PLANNED_IN_FULL", "PlanEntry", "Planned", "Slot", "StartPlan"]

SlotPods = tuple[tuple[str, "Mapping[str, int]", int], ...]
"""A slot's pods: (node, one pod's requests in milli-units, how many such pods)."""

PLANNED_IN_FULL = 8
"""How many gangs with a slot, first in line, look for an earlier slot in full on each pass."""

OVERDUE_GRACE = 1.0
"""A pod still counted after its declared end is expected gone this many seconds from now."""


@dataclass(frozen=True)
class PlanEntry:
    """A gang of the pass's line, as the plan needs it."""

    ref: GroupRef
    gang: _placer.Gang
    """Its placer record, with the tolerations it is owed."""
    bound: float | None
    """How long it runs at most once started, in seconds; None: until it ends."""


@dataclass(frozen=True)
class Slot:
    """Room promised to a gang: its pods on their nodes from ``start`` to ``end``."""

    start: float
    end: float
    """``math.inf`` for a gang that declares no bound."""
    priority: int
    pods: SlotPods
    placement: _placer.Outcome | None = None
    """Where the gang goes when its start comes (the placer's outcome that made the slot)."""


@dataclass(frozen=True)
class Planned:
    """What the plan says of one gang this pass."""

    start: float | None
    """Its planned start (epoch seconds; the pass's ``now`` if it starts now); None when no
    start can be planned (it needs room held by pods that declare no end)."""
    placement: _placer.Outcome | None
    """Where it goes at ``start`` (None without a start)."""
    tried: _placer.Outcome
    """Where it was tried now: its placement if it starts now, else why it does not fit."""

    def starts_now(self, now: float) -> bool:
        return self.start is not None and self.start <= now


def _honoured(hold: str) -> bool:
    # Settling holds a gang's nodes while the rest of it ends, so that no small gang takes
    # them first; promises keep the room for the gangs owed it, and a settling hold, which no
    # gang tolerates, would read to the plan as room taken for ever.
    return not hold.startswith(SETTLING_PREFIX)


def _pods_of(gang: _placer.Gang, outcome: _placer.Outcome) -> SlotPods:
    requests = {task.name: task.requests for task in gang.tasks}
    return tuple((a.node, requests[a.task], a.count) for a in outcome.assignments)


class _Future:
    """The nodes with today's usage (a scratch cluster), the declared ends of the pods on them,
    and how to see the cluster at a later moment with some slots taken."""

    def __init__(
        self,
        mirror: ClusterMirror,
        end_of: Callable[[str], float | None],
        now: float,
    ) -> None:
        self.now = now
        nodes = mirror.node_names()
        records = mirror.placer_records(nodes, _honoured)
        self.cluster = Cluster(mirror.levels)
        self.cluster.add_nodes(records)
        self._mirror = mirror
        self._allocatable = {record.name: record.allocatable for record in records}
        self.free: dict[str, int] = {}
        """Free room summed over the nodes, by resource: a moment that cannot hold a gang's
        total is skipped without asking the placer."""
        for record in records:
            for resource, amount in record.allocatable.items():
                self.free[resource] = self.free.get(resource, 0) + amount
        ending: list[tuple[float, str, Mapping[str, int]]] = []
        here: list[tuple[str, Mapping[str, int], int]] = []
        for name in nodes:
            for key in mirror.pods_on(name):
                milli = mirror.requests_of(key)
                if milli is None:
                    continue
                here.append((name, milli, 1))
                end = end_of(key)
                if end is not None:
                    ending.append((end if end > now else now + OVERDUE_GRACE, name, milli))
        self._take(here)
        ending.sort(key=lambda item: item[0])
        self.ending = ending
        self.ends = sorted({end for end, _, _ in ending})

    def _count(self, pods: Sequence[tuple[str, Mapping[str, int], int]], sign: int) -> None:
        for _, milli, count in pods:
            for resource, amount in milli.items():
                self.free[resource] = self.free.get(resource, 0) + sign * amount * count
            self.free["pods"] = self.free.get("pods", 0) + sign * 1000 * count

    def _take(self, pods: Sequence[tuple[str, Mapping[str, int], int]]) -> None:
        if pods:
            self.cluster.add_pods_many(pods)
            self._count(pods, -1)

    def _give(self, pods: Sequence[tuple[str, Mapping[str, int], int]]) -> None:
        if pods:
            self.cluster.remove_pods_many(pods)
            self._count(pods, 1)

    def room_now(self, slot: Slot) -> bool:
        """Whether the slot's pods fit on its nodes as they are now (no hold on them): what
        was kept for a gang whose start has come, unless a pod ran past its declared end."""
        asked: dict[str, dict[str, int]] = {}
        for node, milli, count in slot.pods:
            want = asked.setdefault(node, {"pods": 0})
            want["pods"] += 1000 * count
            for resource, amount in milli.items():
                want[resource] = want.get(resource, 0) + amount * count
        for node, want in asked.items():
            hold = self._mirror.holder(node)
            allocatable = self._allocatable.get(node)
            if allocatable is None or (hold is not None and _honoured(hold)):
                return False
            used = self.cluster.node_used(node) or {}
            for resource, amount in want.items():
                if resource not in allocatable and resource == "pods":
                    continue  # a node that names no pod limit has none
                if used.get(resource, 0) + amount > allocatable.get(resource, 0):
                    return False
        return True

    def _may_hold(self, total: Mapping[str, int]) -> bool:
        return all(self.free.get(resource, 0) >= amount for resource, amount in total.items())

    def earliest(
        self,
        gang: _placer.Gang,
        bound: float | None,
        slots: Sequence[Slot],
        policy: Policy,
        *,
        after: float | None = None,
        until: float = math.inf,
    ) -> Planned:
        """The first moment (now, or a declared end) from which ``gang`` fits for ``bound``
        seconds beside the pods still there and ``slots``, and where; the scratch cluster is
        left as it was. Moments before ``after`` (other than now) and after ``until`` are not
        looked at: the caller knows the answer is not there."""
        now, span = self.now, (math.inf if bound is None else bound)
        total: dict[str, int] = {}
        for task in gang.tasks:
            for resource, amount in task.requests.items():
                total[resource] = total.get(resource, 0) + amount * task.min_available
        later = {slot.end for slot in slots if now < slot.end < math.inf}
        moments = [
            now,
            *sorted(
                moment
                for moment in later.union(self.ends)
                if now < moment <= until and (after is None or moment >= after)
            ),
        ]
        by_start = sorted(slots, key=lambda slot: slot.start)
        gone = 0  # pods of `ending` taken out
        added: list[Slot] = []
        started = 0  # slots of `by_start` looked at
        tried: _placer.Outcome | None = None
        try:
            for moment in moments:
                # What leaves by this moment, and what the window from it runs into, each
                # given to the scratch cluster in one call.
                leaving: list[tuple[str, Mapping[str, int], int]] = []
                first = gone
                while gone < len(self.ending) and self.ending[gone][0] <= moment:
                    gone += 1
                leaving.extend((node, milli, 1) for _, node, milli in self.ending[first:gone])
                ended = [slot for slot in added if slot.end <= moment]
                for slot in ended:
                    leaving.extend(slot.pods)
                    added.remove(slot)
                coming: list[tuple[str, Mapping[str, int], int]] = []
                while started < len(by_start) and by_start[started].start < moment + span:
                    slot = by_start[started]
                    started += 1
                    if slot.end > moment:
                        coming.extend(slot.pods)
                        added.append(slot)
                self._give(leaving)
                self._take(coming)
                if moment != now and not leaving:
                    continue  # nothing left since the last try: no more room than then
                if tried is not None and not self._may_hold(total):
                    continue  # not room enough in all the nodes together
                outcome = self.cluster.place_all_records([gang], policy)[0]
                if tried is None:
                    tried = outcome
                if outcome.status != "unschedulable":
                    return Planned(moment, outcome, tried)
            assert tried is not None  # `now` is always tried
            return Planned(None, None, tried)
        finally:
            self._give([pod for slot in added for pod in slot.pods])
            self._take([(node, milli, 1) for _, node, milli in self.ending[:gone]])


class StartPlan:
    """The slots promised to waiting gangs, and the first start each was promised; see the
    module docstring. ``policy`` is the placer policy the plan places with; ``depth`` how many
    gangs with a slot, first in line, look for an earlier one in full on each pass (the
    others only ask whether they can start now)."""

    def __init__(self, mirror: ClusterMirror, policy: Policy, depth: int = PLANNED_IN_FULL) -> None:
        self._mirror = mirror
        self._policy = policy
        self.depth = depth
        self.slots: dict[GroupRef, Slot] = {}
        """The slots promised now, by gang (read them; only this object changes them)."""
        self.promised: dict[GroupRef, float] = {}
        """The first start each waiting gang was promised, epoch seconds."""
        self.kept = 0
        """Gangs started no later than the first pass at or after their first promise."""
        self.late = 0
        """Gangs started later than that."""
        self._last_pass: float | None = None
        self._previous_pass: float | None = None

    def engaged(self, line: Iterable[PlanEntry]) -> bool:
        """Whether a pass over ``line`` plans starts: some gang in it declares a bound, or
        promises made earlier are still owed."""
        return bool(self.slots) or any(entry.bound is not None for entry in line)

    def plan(
        self,
        line: Sequence[tuple[PlanEntry, int]],
        end_of: Callable[[str], float | None],
        now: float,
    ) -> tuple[dict[GroupRef, Planned], set[GroupRef]]:
        """Plan ``line`` ((gang, priority) in line order) at ``now``: what the plan says of each,
        and the gangs not in the line whose slots were given up to a gang of higher priority
        (to be planned again)."""
        future = _Future(self._mirror, end_of, now)
        said: dict[GroupRef, Planned] = {}
        replan: set[GroupRef] = set()
        in_line = {entry.ref for entry, _ in line}
        in_full = 0
        # What a gang of one shape was last told this pass: a gang of the same shape, bound
        # and room planned after it is not told sooner by looking again (only slots were
        # added since), so the search starts there; and one that did not start now, when
        # nothing was added since, does not start now either.
        last_start: dict[tuple[Hashable, float | None], float] = {}
        not_now: dict[tuple[Hashable, float | None], tuple[int, Planned]] = {}
        changes = 0
        starting: set[GroupRef] = set()  # bound this pass: room taken now, whatever priority
        # Higher priority first, as the placer's batch; the line's order within a priority.
        for entry, priority in sorted(line, key=lambda item: -item[1]):
            ref = entry.ref
            lower = [
                r
                for r, slot in self.slots.items()
                if slot.priority < priority and r not in starting
            ]
            for other in lower:  # a gang of higher priority is planned before them
                del self.slots[other]
                self.promised.pop(other, None)
                changes += 1
                if other not in in_line:
                    replan.add(other)
            kind = (shape(entry.gang), entry.bound)
            own = self.slots.get(ref)
            if own is not None and own.start <= now:
                if own.placement is not None and future.room_now(own):
                    # Its start has come and the room kept for it is free: it starts there.
                    # (Planned again as if new, the slots of gangs behind it, planned around
                    # this one, could push it later.)
                    said[ref] = Planned(now, own.placement, own.placement)
                    starting.add(ref)
                    continue
                # Its slot's time has come and it cannot start there (a pod ran past its
                # declared end, a node went): planned again as if new, its first promise kept
                # to count.
                del self.slots[ref]
                own = None
                changes += 1
            if own is not None and in_full >= self.depth:
                # Behind the first in line: kept where it was promised, unless it starts now.
                seen = not_now.get(kind)
                if seen is not None and seen[0] == changes:
                    said[ref] = Planned(own.start, None, seen[1].tried)
                    continue
                others = [slot for other, slot in self.slots.items() if other != ref]
                planned = future.earliest(entry.gang, entry.bound, others, self._policy, until=now)
                if not planned.starts_now(now):
                    not_now[kind] = (changes, planned)
                    said[ref] = Planned(own.start, None, planned.tried)
                    continue
            else:
                if own is not None:
                    in_full += 1
                others = [slot for other, slot in self.slots.items() if other != ref]
                planned = future.earliest(
                    entry.gang,
                    entry.bound,
                    others,
                    self._policy,
                    after=None if own is not None else last_start.get(kind),
                    until=math.inf if own is None else own.start,
                )
                if own is not None and planned.start is None:
                    # Its own slot is still free: nothing earlier was found before it.
                    said[ref] = Planned(own.start, None, planned.tried)
                    continue
            said[ref] = planned
            if planned.start is None or planned.placement is None:
                continue
            if own is None:
                last_start[kind] = planned.start
            end = math.inf if entry.bound is None else planned.start + entry.bound
            self.slots[ref] = Slot(
                planned.start,
                end,
                priority,
                _pods_of(entry.gang, planned.placement),
                planned.placement,
            )
            if planned.starts_now(now):
                starting.add(ref)
            self.promised.setdefault(ref, planned.start)
            changes += 1
        self._previous_pass, self._last_pass = self._last_pass, now
        return said, replan

    def started(self, ref: GroupRef, now: float) -> None:
        """``ref`` starts at ``now``: its slot has done its work; count its promise."""
        self.slots.pop(ref, None)
        promise = self.promised.pop(ref, None)
        if promise is None:
            return
        first_since = self._previous_pass is None or self._previous_pass < promise
        if now <= promise or first_since:
            self.kept += 1
        else:
            self.late += 1

    def drop(self, ref: GroupRef) -> None:
        """``ref`` no longer waits (bound, gone, or not placeable now): its slot is free, and
        what it was promised is owed no more."""
        self.slots.pop(ref, None)
        self.promised.pop(ref, None)

    def forget(self, ref: GroupRef) -> None:
        """``ref`` is gone: nothing of it is kept."""
        self.drop(ref)
