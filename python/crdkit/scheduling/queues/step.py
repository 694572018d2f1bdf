"""The cycle's quota step: admission before placement, quota given back by gangs that were not
placed, a second chance in the same pass for the gangs that refused quota made wait, and for
those still refused, the reason and reclaim.

A gang refused by quota is not in line for room: it holds no reservation (a reservation is
only made for a gang its queue admits), unless it is reclaiming and the room its victims free
is held for it. Without any queue the step lets every gang through unchanged.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from crdkit.resources.queues import Queue
from crdkit.scheduling.decisions import Evict, Later
from crdkit.scheduling.metrics import scheduler_metrics
from crdkit.scheduling.pending import GroupRef, line_place
from crdkit.scheduling.queues.book import StoreBook
from crdkit.scheduling.queues.gate import QueueGate
from crdkit.scheduling.queues.reclaim import Mode, reclaim_rule, within_queue_scope
from crdkit.scheduling.queues.status import QueueStatusReconciler

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from crdkit.resources import Pod
    from crdkit.runtime import Manager
    from crdkit.scheduling.decisions import Decision
    from crdkit.scheduling.gangs import GangRequest
    from crdkit.scheduling.metrics import SchedulerMetrics
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.options import SchedulerOptions
    from crdkit.scheduling.pending import GroupReader, PendingGroup
    from crdkit.scheduling.preemption import Preemptor
    from crdkit.scheduling.queue import GangQueue
    from crdkit.scheduling.queues.admission import Refusal
    from crdkit.scheduling.reporting import Reporter
    from crdkit.scheduling.reservations import DomainReservation, Reservations

__all__ = ["QuotaStep", "attach_queues"]

_Ready = list[tuple["PendingGroup", "GangRequest"]]

_WHY: dict[Mode, str] = {
    "reclaim": "reclaiming the quota of queue {queue}",
    "fair": "fair share of queue {queue}",
    "own": "priority {priority}, in queue {queue}",
}
"""What each victim's Event says the eviction is for."""


class QuotaStep:
    """See the module docstring."""

    def __init__(
        self,
        gate: QueueGate,
        preemptor: Preemptor,
        reservations: Reservations,
        reporter: Reporter,
        queue: GangQueue,
        size_credit: float,
    ) -> None:
        self.gate = gate
        self._preemptor = preemptor
        self._reservations = reservations
        self._reporter = reporter
        self._queue = queue
        self._size_credit = size_credit
        self._refused: dict[GroupRef, tuple[PendingGroup, GangRequest, Refusal]] = {}
        self.wall_clock: Callable[[], float] = time.time
        """Epoch seconds, for maximum run times (the scheduler's own clock once attached)."""
        self.metrics: SchedulerMetrics | None = None
        """Where the queues' figures are shown after each pass, once set."""
        self.scheduler = ""
        preemptor.scope = within_queue_scope(gate)

    def _place(self, group: PendingGroup) -> tuple[datetime, str, str]:
        return line_place(group, self._size_credit)

    def new_pass(self, out: list[Decision]) -> None:
        """The queues and their usage as this pass starts; gangs past their queue's enforced
        maximum run time are evicted."""
        self.gate.new_pass()
        self._refused = {}
        if self.gate.engaged:
            self._expire(out)

    def admit(self, ready: _Ready) -> _Ready:
        """The gangs to place, in order: those their queues admit (all of them without
        queues)."""
        if not self.gate.engaged:
            return ready
        return self._admit(ready)

    def _admit(self, ready: _Ready) -> _Ready:
        admitted, refused = self.gate.admit(ready, self._place)
        requests = {group.ref: request for group, request in ready}
        self._refused = {group.ref: (group, requests[group.ref], why) for group, why in refused}
        return admitted

    def unplaced(self, ref: GroupRef, holds_room: bool) -> None:
        """An admitted gang did not fit: its quota is free for this pass's others, unless the
        room held for it keeps it (the head of a line keeps its quota as it keeps its room)."""
        if not holds_room:
            self.gate.give_back(ref)

    def again(self) -> _Ready:
        """The refused gangs that quota given back now admits, in order, to place after the
        first batch; the others stay refused."""
        if not self._refused:
            return []
        return self._admit([(group, request) for group, request, _ in self._refused.values()])

    def report(self, out: list[Decision], made: list[DomainReservation]) -> None:
        """Say why each refused gang waits, and let those under their nominal quota reclaim;
        then the queues' metrics."""
        self._report(out, made)
        if self.metrics is not None:
            self._show(self.metrics)

    def _expire(self, out: list[Decision]) -> None:
        """Evict, whole, each gang of a queue that enforces its maximum run time once it ran
        past it (from its first pod's start); a pass is asked for at the next such end."""
        gate = self.gate
        now = self.wall_clock()
        for gang in gate.running_gangs():
            queue = gate.holdings.get(gang.ref, ("", {}))[0]
            found = gate.tree.queues.get(queue)
            if found is None or not found.enforce_max_run or found.max_run_seconds is None:
                continue
            started = gate.started(gang.ref)
            if started is None:
                continue  # not running yet: its clock has not started
            ref = GroupRef.parse(gang.ref)
            end = started + found.max_run_seconds
            if now < end:
                out.append(Later(ref, end - now))
                continue
            why = f"ran past {found.max_run_seconds} s, the maximum run time of queue {queue}"
            out.append(Evict(ref, 0, (gang,), "its queue's maximum run time", why))

    def _show(self, metrics: SchedulerMetrics) -> None:
        gate, name = self.gate, self.scheduler
        pending = gate.pending()
        for queue in gate.tree.queues:
            metrics.queue_share.labels(name, queue).set(gate.tree.share(queue, gate.usage))
            metrics.queue_pending.labels(name, queue).set(pending.get(queue, 0))
            metrics.queue_admitted.labels(name, queue).set(gate.admitted.get(queue, 0))

    def _report(self, out: list[Decision], made: list[DomainReservation]) -> None:
        for group, request, why in self._refused.values():
            ref = group.ref
            self._queue.dequeue(ref)  # not in line for room: quota holds it
            note = ""
            if why.reclaims is not None:
                note = self._reclaim(group, request, why.reclaims, made, out, "reclaim")
            elif why.flavor is not None and self._fair_share_cohort(group):
                note = self._reclaim(group, request, why.flavor, made, out, "fair")
            if not note and why.flavor is not None and self._may_preempt_own(group):
                note = self._reclaim(group, request, why.flavor, made, out, "own")
            if not self._preemptor.awaiting(ref):
                self._reservations.drop(ref)
            self._reporter.wait(
                group, "Unschedulable", why.reason + note, out, topic=why.topic or why.reason
            )

    def _reclaim(
        self,
        group: PendingGroup,
        request: GangRequest,
        flavor: str,
        made: list[DomainReservation],
        out: list[Decision],
        mode: Mode,
    ) -> str:
        ask = self.gate.ask(group, request)
        record = None if ask is None else self.gate.flavor_record(request, ask.queue, flavor)
        if ask is None or record is None:
            return ""
        if self._preemptor.awaiting(group.ref):
            return "; it waits for the gangs it reclaimed from to go"
        taken = self._preemptor.reclaim(
            group,
            request.record.priority,
            record,
            reclaim_rule(self.gate, ask, flavor, mode),
            _WHY[mode].format(priority=ask.priority, queue=ask.queue),
        )
        if taken is None:
            return ""
        reservation, evict = taken
        made.append(reservation)
        out.append(evict)
        if mode == "own":
            return f"; preempting {len(evict.victims)} gang(s) of lower priority in its queue"
        if self.metrics is not None:
            reason = "InCohortReclamation" if mode == "reclaim" else "InCohortFairSharing"
            counter = self.metrics.queue_reclaimed.labels(self.scheduler, ask.queue, reason)
            counter.inc(len(evict.victims))
        if mode == "fair":
            return f"; preempting {len(evict.victims)} gang(s) of queues over their fair share"
        return f"; reclaiming it from {len(evict.victims)} borrowing gang(s)"

    def _fair_share_cohort(self, group: PendingGroup) -> bool:
        """Whether the gang's cohort preempts to restore fair share (off by default)."""
        tree = self.gate.tree
        cohort = tree.parent(self.gate.waiting.get(group.ref, ""))
        return cohort is not None and tree.queues[cohort].fair_share_preemption

    def _may_preempt_own(self, group: PendingGroup) -> bool:
        queue = self.gate.tree.queues.get(self.gate.waiting.get(group.ref, ""))
        if queue is None or queue.within_queue == "Never":
            return False
        return not any(p.spec.preemption_policy == "Never" for p in group.pending)


def attach_queues(
    name: str,
    manager: Manager,
    options: SchedulerOptions,
    mirror: ClusterMirror,
    preemptor: Preemptor,
    reader: GroupReader,
    plugins: tuple[GangQueue, Reservations, Reporter, Callable[[], float]],
) -> QuotaStep:
    """The quota step of the scheduler ``name`` watching `Queue` objects: a change to any
    queue sends every waiting gang to the next pass (its quota, its cohort or its order may
    have changed); the queues' status is reconciled beside it (`QueueStatusReconciler`)."""
    queue, reservations, reporter, wall_clock = plugins
    informer = manager.informers.informer(Queue)

    def group_of(text: str) -> tuple[Any, list[Pod]]:
        group = reader.read(GroupRef.parse(text))
        if group is None:
            return None, []
        return group.podgroup, [*group.bound, *group.pending]

    def changed(*_: Any) -> None:
        queue.mark_all(reporter.waiting)
        queue.wake()

    informer.add_event_handler(changed, changed, changed, reads_old=False)
    book = StoreBook(informer.store)
    gate = QueueGate(book, mirror, preemptor.running, group_of, options.default_queue)
    step = QuotaStep(gate, preemptor, reservations, reporter, queue, options.size_credit)
    step.metrics, step.scheduler = scheduler_metrics(manager.registry), name
    step.wall_clock = wall_clock
    manager.add(QueueStatusReconciler(lambda: gate))
    return step
