"""Reservations: the gang at the head of a priority's queue holds the room it can fit in soonest.

Without them, a gang that needs a whole leaf never starts on a busy cluster: each node that
frees in a leaf goes to the next small gang, so no leaf ever drains. With them, the head gang
that does not fit gets a reservation: the domain of its ``required`` level (or, with none, the
least-loaded set of nodes it fits on) where, judged from the pods held there now, it fits
soonest. Every node of that domain is then held for it: the scheduler's placer view gives the
node a ``NoSchedule`` taint (`HOLD_TAINT`, value the reservation's id) that only the gangs
allowed there tolerate. The pods already there keep running; as they finish, their room stays
free for the holder.

Who may place on held nodes:

- the holder itself;
- a gang of strictly higher priority (it would overtake the holder anyway);
- a gang behind it (backfill) only when it is proven to end before the reservation's
  ``ready_by``: every pod of it declares a bound on its run time
  (`crdkit.scheduling.runtime_bounds`) and now plus that bound is no later than ``ready_by``,
  the time by which the declared run times of the pods on the held nodes guarantee the holder
  fits. Where a pod there declares no bound, ``ready_by`` is unknown and nothing backfills.

Gangs of any priority may use every node no reservation holds. `Reservations` keeps them: it
gives the first gang in its priority's line room (`crdkit.scheduling.room.choose_room`, a pure
function of the mirror's view), holds the nodes a preemption frees, says who may use held
nodes, and releases room once its holder is bound or gone. It makes no API call: what it
decides reaches the apiserver through the dispatcher.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from crdkit.scheduling.mirror import HOLD_TAINT
from crdkit.scheduling.room import choose_room, ready_by
from crdkit.scheduling.runtime_bounds import stamp

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence

    from crdkit import _placer
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pending import GroupRef
    from crdkit.scheduling.preemption import Preemption
    from crdkit.scheduling.queue import GangQueue

__all__ = ["HELD_AHEAD", "HOLD_TAINT", "DomainReservation", "Reservations", "hold_toleration"]

_NAMED = 8  # nodes named in a message; a domain of a level is named by its label value

HELD_AHEAD = "; nodes held ahead"
"""The report topic's mark for a waiting gang behind others' reservations (see `note`)."""


@dataclass
class DomainReservation:
    """Nodes held for one waiting gang."""

    holder: str
    """The gang's name (its ``GroupRef`` text)."""
    id: str
    """The value of `HOLD_TAINT` on the held nodes (taint values have no room for a name)."""
    priority: int
    level: str | None
    """The ``required`` level whose domain is held, or None for a set of nodes."""
    domain: str | None
    """That level's value (the leaf, the spine), or None for a set of nodes."""
    nodes: frozenset[str]
    ready_by: float | None
    """Wall-clock seconds (epoch) by which the declared run times of the pods on ``nodes``
    guarantee the holder fits there; None when some pod there declares none."""
    freed_by_preemption: bool = False
    """The room its holder's victims are freeing: it stays the holder's (see `keep`)."""

    def where(self) -> str:
        """The held room in words, for status messages."""
        if self.level is not None:
            return f"{self.level}={self.domain}"
        names = sorted(self.nodes)
        shown = ", ".join(names[:_NAMED])
        more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
        return f"nodes {shown}{more}"


def hold_toleration(reservation_id: str) -> dict[str, str]:
    """The placer toleration that lets a gang use the nodes held by ``reservation_id``."""
    return {"key": HOLD_TAINT, "operator": "Equal", "value": reservation_id, "effect": "NoSchedule"}


class Reservations:
    """The reservations held now, by holder; see the module docstring.

    ``per_priority``: how many gangs of one priority, first in line, may hold room at once (0:
    none); ``most``: how many in all (a new one of higher priority displaces the lowest)."""

    def __init__(
        self, mirror: ClusterMirror, queue: GangQueue, per_priority: int, most: int
    ) -> None:
        self._mirror = mirror
        self._queue = queue
        self.per_priority = per_priority
        self.most = most
        self.held: dict[GroupRef, DomainReservation] = {}
        """The reservations held now, by holder (read them; only this object changes them)."""
        self._serial = 0
        self._unreservable: set[GroupRef] = set()
        """Queued gangs that fit nowhere even on empty nodes: no reservation can help."""
        # No room means it fits nowhere even on empty nodes: that depends on the nodes and on
        # what is taken, never on the pods, so one search answers every gang of that shape.
        self._no_room: set[tuple[Hashable, frozenset[str]]] = set()
        self._no_room_at = -1

    def first_in_line(self, ref: GroupRef, priority: int) -> bool:
        """No gang of its priority that arrived before it waits without a reservation (one
        that fits nowhere does not count)."""
        return self._queue.first_in_line(
            ref, priority, lambda other: other in self.held or other in self._unreservable
        )

    def may_use(
        self, reservation: DomainReservation, ref: GroupRef, priority: int, end: float | None
    ) -> bool:
        """Whether gang ``ref`` may place on ``reservation``'s nodes: its holder, a gang of
        higher priority, or one proven to end before the holder could start there."""
        if reservation.holder == str(ref) or priority > reservation.priority:
            return True
        return end is not None and reservation.ready_by is not None and end <= reservation.ready_by

    def tolerations(self, ref: GroupRef, priority: int, end: float | None) -> list[dict[str, str]]:
        """The placer tolerations of the holds gang ``ref`` may place on."""
        return [
            hold_toleration(r.id) for r in self.held.values() if self.may_use(r, ref, priority, end)
        ]

    def on_new_hold(
        self,
        ref: GroupRef,
        priority: int,
        placement: _placer.Outcome,
        made: Sequence[DomainReservation],
        end: float | None,
    ) -> bool:
        """Whether ``placement`` uses a node held by a reservation made after it was placed
        (in this pass) that the gang may not use."""
        for reservation in made:
            if self.may_use(reservation, ref, priority, end):
                continue
            if any(a.node in reservation.nodes for a in placement.assignments):
                return True
        return False

    def keep(
        self,
        ref: GroupRef,
        priority: int,
        shape: Hashable,
        gang: Callable[[], _placer.Gang],
        end_of: Callable[[str], float | None],
        wall: float,
    ) -> DomainReservation | None:
        """Keep the gang's reservation current, or give it one if it is first in its
        priority's line and there is room for one more: the new reservation, if one was made.
        ``shape`` is the gang without its name; ``gang`` compiles it when it is needed."""
        held = self.held.get(ref)
        if held is not None:
            held.ready_by = ready_by(self._mirror, held.nodes, gang(), end_of, wall)
            return None
        if self.per_priority == 0 or self.most == 0:
            return None
        if not self.first_in_line(ref, priority):
            return None  # a gang ahead of it in line is owed the reservation first
        same = [holder for holder, r in self.held.items() if r.priority == priority]
        displaced: DomainReservation | None = None
        if len(same) >= self.per_priority:
            # The head of the line is owed room before gangs behind it: one that came back
            # into line ahead of a holder (a preempted gang its controller made again) takes
            # the reservation of the holder furthest behind it, once it is sure of room. A
            # head with no room leaves it alone: the holder would take it back on its turn,
            # every pass, each hold and release waking the line again.
            behind = self._queue.furthest_behind(ref, same)
            if behind is None or self.held[behind].freed_by_preemption:
                return None
            displaced = self.held[behind]
        taken = frozenset(
            node
            for r in self.held.values()
            if r is not displaced and r.priority >= priority
            for node in r.nodes
        )
        if self._no_room_at != self._mirror.nodes_version:
            self._no_room.clear()
            self._no_room_at = self._mirror.nodes_version
        if (shape, taken) in self._no_room:
            self._unreservable.add(ref)
            return None
        room = choose_room(self._mirror, gang(), taken=taken, end_of=end_of, now=wall)
        if room is None:
            self._no_room.add((shape, taken))
            self._unreservable.add(ref)
            return None
        self._unreservable.discard(ref)
        if displaced is not None:
            self.release(displaced)
        level, domain, nodes, ready = room
        for overlapping in [r for r in self.held.values() if r.nodes & nodes]:
            self.release(overlapping)  # overtaken: only lower priorities can overlap (see taken)
        if len(self.held) >= self.most:
            lowest = min(self.held.values(), key=lambda r: (r.priority, r.id))
            if lowest.priority >= priority:
                return None
            self.release(lowest)
        return self._hold(ref, priority, level, domain, nodes, ready)

    def protected_from(self, ref: GroupRef, priority: int) -> frozenset[str]:
        """Nodes held for gangs that ``ref`` may not overtake (its own hold aside)."""
        own = self.held.get(ref)
        return frozenset(
            node
            for r in self.held.values()
            if r is not own and r.priority >= priority
            for node in r.nodes
        )

    def hold_freed(self, ref: GroupRef, priority: int, choice: Preemption) -> DomainReservation:
        """Hold the room a preemption frees for its preemptor, instead of any it held, and
        over the lower-priority holds it overtakes."""
        own = self.held.get(ref)
        if own is not None:
            self.release(own)
        for overlapping in [r for r in self.held.values() if r.nodes & choice.nodes]:
            self.release(overlapping)  # lower priority (see protected_from): overtaken
        held = self._hold(ref, priority, choice.level, choice.domain, choice.nodes, None)
        held.freed_by_preemption = True
        return held

    def _hold(
        self,
        ref: GroupRef,
        priority: int,
        level: str | None,
        domain: str | None,
        nodes: frozenset[str],
        ready: float | None,
    ) -> DomainReservation:
        self._serial += 1
        reservation = DomainReservation(
            str(ref), f"r{self._serial}", priority, level, domain, nodes, ready
        )
        self.held[ref] = reservation
        self._mirror.hold(nodes, reservation.id)
        return reservation

    def release(self, reservation: DomainReservation) -> None:
        for ref, held in list(self.held.items()):
            if held is reservation:
                del self.held[ref]
        self._mirror.release(reservation.nodes, reservation.id)

    def drop(self, ref: GroupRef) -> None:
        """The gang is no longer in line for room: bound, gone, or not placeable now."""
        self._unreservable.discard(ref)
        held = self.held.get(ref)
        if held is not None:
            self.release(held)

    def note(self, ref: GroupRef) -> tuple[str, str | None]:
        """What the waiting message adds about reservations, and the report's topic for a
        holder (so its counts changing rewrites the status, not every pod's Event)."""
        held = self.held.get(ref)
        if held is not None:
            idle = sum(not self._mirror.pods_on(node) for node in held.nodes)
            note = (
                f"; reserved {held.where()}: {idle} of {len(held.nodes)} held nodes free, "
                f"{len(held.nodes) - idle} still held by other pods"
            )
            if held.ready_by is not None:
                note += f" (room sure by {stamp(held.ready_by)})"
            return note, f"Reserved/{held.id}"
        others = sum(len(r.nodes) for r in self.held.values())
        if others:
            return f"; {others} nodes are held for gangs ahead of it", HELD_AHEAD
        return "", None
