"""One scheduling pass as data in, decisions out (kube-scheduler's ``schedule_one``).

`Cycle.run_pass` takes the gangs that changed and returns what to do about them; it makes no
API call. For each gang it reads the group (`crdkit.scheduling.pending`), decides whether it is
ready to place (enough pods, no gates holding it, a valid policy), builds its placer gang, and
then places every ready gang as one batch in the queue's order, each seeing what the ones
before it took:

- a gang that fits is assumed in the mirror at once (`crdkit.scheduling.assumptions`) and
  becomes a `Bind`;
- one that does not joins the line, may get a reservation or preempt (`Reservations`,
  `Preemptor`), and is told why it waits (`Reporter`);
- a placement that breaks a rank rule of a gang bound earlier in the pass, or uses a node held
  by a reservation made after it was placed, is tried again next pass (`Later`);
- a gang left partly bound whose rest cannot join it is rolled back (`RollBack`).

The only local state it changes is the mirror's (assumed pods, held nodes) and its plugins';
the dispatcher performs the decisions.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from crdkit.scheduling.assumptions import PodBinding, assume
from crdkit.scheduling.decisions import Bind, Decision, Later, Reserve, RollBack, WriteStatus
from crdkit.scheduling.gang_builder import GangBuilder, torn
from crdkit.scheduling.gang_records import shape, with_tolerations
from crdkit.scheduling.pending import line_place
from crdkit.scheduling.rank_rules import clash
from crdkit.scheduling.reservations import HELD_AHEAD
from crdkit.scheduling.runtime_bounds import pod_runtime_bound, stamp
from crdkit.scheduling.start_plan import PlanEntry

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence

    from crdkit import _placer
    from crdkit.resources import Pod
    from crdkit.scheduling.gangs import GangRequest
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.options import SchedulerOptions
    from crdkit.scheduling.outlook import Outlook
    from crdkit.scheduling.pending import GroupReader, GroupRef, PendingGroup
    from crdkit.scheduling.preemption import Preemptor
    from crdkit.scheduling.queue import GangQueue
    from crdkit.scheduling.queues.step import QuotaStep
    from crdkit.scheduling.rank_rules import RankRule, RankRuleIndex
    from crdkit.scheduling.reporting import Reporter
    from crdkit.scheduling.reservations import DomainReservation, Reservations

__all__ = ["Cycle"]


def _record_of(request: GangRequest) -> Callable[[], _placer.Gang]:
    """The gang's record, for plugins that compile it only when they need it."""
    return lambda: request.record


_PodsByNode = dict[str, list[tuple["Pod", tuple["RankRule", ...]]]]


def _priority(request: GangRequest) -> int:
    return request.record.priority


def _rank_pods_by_node(request: GangRequest, placement: _placer.Outcome) -> _PodsByNode:
    """Per node of the placement, every pod of each task it takes, with the task's rules."""
    by_node: _PodsByNode = {}
    for assignment in placement.assignments:
        rules = request.rules.get(assignment.task, ())
        by_node.setdefault(assignment.node, []).extend(
            (pod, rules) for pod in request.pods[assignment.task]
        )
    return by_node


def _declared_bound(group: PendingGroup, fallback: float | None) -> float | None:
    """How long the gang runs at most once started: None unless every pending pod declares a
    run-time bound or ``fallback`` (its queue's maximum run time) stands in for it."""
    bounds = []
    for pod in group.pending:
        try:
            bound = pod_runtime_bound(pod)
        except ValueError:
            return None  # the gang waits with that reason; it is not placed
        if bound is None:
            bound = fallback
        if bound is None:
            return None
        bounds.append(bound)
    return max(bounds) if bounds else None


def _pod_bindings(request: GangRequest, placement: _placer.Outcome) -> list[PodBinding]:
    """Which pod of each task goes to which node of the placement (in the task's order)."""
    milli = request.milli  # read off the pods once, by the mirror
    bindings: list[PodBinding] = []
    for task, pods in request.pods.items():
        queue = list(pods)
        for assignment in placement.assignments:
            if assignment.task != task:
                continue
            for _ in range(assignment.count):
                pod = queue.pop(0)
                bindings.append(
                    PodBinding(
                        pod.metadata.namespace or "default",
                        pod.metadata.name or "",
                        assignment.node,
                        milli[task],
                        pod.metadata.uid,
                    )
                )
    return bindings


def _with_holds(
    ready: list[tuple[PendingGroup, GangRequest]],
    wall: float,
    ends: dict[GroupRef, float | None],
    reservations: Reservations,
    quotas: QuotaStep | None,
) -> list[tuple[PlanEntry, int]]:
    """Each gang's declared end into ``ends`` and the held nodes it may use into its record
    (in place); the start plan's line."""
    line: list[tuple[PlanEntry, int]] = []
    for index, (group, request) in enumerate(ready):
        bound = _declared_bound(group, quotas.gate.max_run(group) if quotas else None)
        ends[group.ref] = end = None if bound is None else wall + bound
        allowed = reservations.tolerations(group.ref, _priority(request), end)
        if allowed:
            record = with_tolerations(request.record, allowed)
            ready[index] = (group, request := replace(request, record=record))
        line.append((PlanEntry(group.ref, request.record, bound), _priority(request)))
    return line


class _BoundThisPass:
    """The pods of the gangs bound so far in a pass, by node, for the rank rules' check: built
    once each, and only when a gang of the pass has rank rules; and those of them with rules."""

    def __init__(self, requests: Sequence[GangRequest]) -> None:
        self._any_rules = any(request.rules for request in requests)
        self._bound: list[_PodsByNode] = []
        self._ranked: list[_PodsByNode] = []

    def pods_of(self, request: GangRequest, placement: _placer.Outcome) -> _PodsByNode | None:
        """The placement's pods by node, if any gang of the pass has rules to check."""
        return _rank_pods_by_node(request, placement) if self._any_rules else None

    def clashes(self, request: GangRequest, mine: _PodsByNode | None) -> bool:
        """Whether the placement breaks a rank rule beside a gang bound before it: a gang with
        rules is checked against every one, one without against those with rules (with none
        on either side, none can clash)."""
        earlier = self._bound if request.rules else self._ranked
        return mine is not None and any(clash(mine, other) for other in earlier)

    def add(self, request: GangRequest, mine: _PodsByNode | None) -> None:
        """The gang is bound where ``mine`` says."""
        if mine is not None:
            self._bound.append(mine)
            if request.rules:
                self._ranked.append(mine)


def _say_planned(
    reporter: Reporter,
    queue: GangQueue,
    planned_waits: Sequence[tuple[PendingGroup, float]],
    out: list[Decision],
) -> None:
    """Tell each gang that waits for its planned start when that is."""
    for group, start in planned_waits:
        reporter.wait(
            group,
            "Unschedulable",
            f"planned to start by {stamp(start)}: the room it needs is in use until then, "
            "or promised to gangs ahead of it, by their declared run times",
            out,
            topic="planned start",
            tail=partial(queue.place_note, group.ref),
        )


class Cycle:
    """See the module docstring. ``busy`` says whether a bind or roll-back of a gang is under
    way; ``pod_end`` is the declared end of a counted pod (epoch seconds)."""

    def __init__(
        self,
        levels: Sequence[str],
        options: SchedulerOptions,
        mirror: ClusterMirror,
        reader: GroupReader,
        rank_rules: RankRuleIndex,
        plugins: tuple[GangQueue, Reservations, Preemptor, Reporter],
        *,
        busy: Callable[[GroupRef], bool],
        clock: Callable[[], float],
        wall_clock: Callable[[], float],
        pod_end: Callable[[str], float | None],
        outlook: Outlook,
        quotas: QuotaStep | None = None,
    ) -> None:
        self._options = options
        self._quotas = quotas
        self._mirror = mirror
        self._reader = reader
        self._queue, self._reservations, self._preemptor, self._reporter = plugins
        self._builder = GangBuilder(levels, options, mirror, rank_rules, self._reporter)
        self._busy = busy
        self._clock = clock
        self._wall_clock = wall_clock
        self._pod_end = pod_end
        self._shapes: dict[GroupRef, Hashable] = {}
        """This pass's gangs without their names (`crdkit.scheduling.gang_records.shape`)."""
        self.outlook = outlook
        self.plan = outlook.plan
        """The starts promised to waiting gangs once run-time bounds are declared."""

    async def run_pass(self, refs: Sequence[GroupRef]) -> list[Decision]:
        """The decisions for the gangs ``refs`` (sorted), given the caches as they stand."""
        self._preemptor.new_pass()
        self._shapes = {}
        out: list[Decision] = []
        if self._quotas is not None:
            self._quotas.new_pass(out)
        ready: list[tuple[PendingGroup, GangRequest]] = []
        now = self._clock()
        self.outlook.new_pass(self._wall_clock())
        for ref in refs:
            if self._busy(ref):
                continue  # its bind or roll-back marks it again when it ends
            delay = self._queue.retry_in(ref, now)
            if delay is not None:
                out.append(Later(ref, delay))
                continue
            group = self._reader.read(ref)
            if group is None:
                self.forget(ref)
                continue
            out.append(WriteStatus(group))
            request = self._builder.gang_for(group, out)
            if request is not None:
                ready.append((group, request))
            else:
                self._dequeue(ref)  # bound, gated or short of pods: not in line for room
        if ready:
            await self._place(ready, out)
        return out

    async def _place(
        self, ready: list[tuple[PendingGroup, GangRequest]], out: list[Decision]
    ) -> None:
        # The queue's order: higher priority first (the placer keeps it), then the gang that
        # arrived first (its PodGroup's creationTimestamp, or its first pod's), bigger gangs
        # credited `size_credit` seconds per doubling of their pods, then the name. With
        # queues, the order across them is the fair share's, and only what they admit is
        # placed (`crdkit.scheduling.queues`).
        ready.sort(key=lambda item: line_place(item[0], self._options.size_credit))
        bound_now = _BoundThisPass([request for _, request in ready])
        quotas = self._quotas
        if quotas is not None:
            asked, ready = ready, quotas.admit(ready)
            admitted = {group.ref for group, _ in ready}
            self.outlook.refused(g.ref for g, _ in asked if g.ref not in admitted)
        wall = self._wall_clock()
        ends: dict[GroupRef, float | None] = {}
        line = _with_holds(ready, wall, ends, self._reservations, quotas)
        made: list[DomainReservation] = []
        if self._options.start_plan and self.plan.engaged(entry for entry, _ in line):
            self._place_planned(ready, line, wall, out)
        else:
            waiting: list[tuple[PendingGroup, GangRequest, _placer.Outcome]] = []
            await self._place_batch(ready, ends, wall, bound_now, made, waiting, out)
            more = quotas.again() if quotas is not None else []
            if more:
                # Quota the gangs that did not fit gave back admits others this pass.
                line += _with_holds(more, wall, ends, self._reservations, quotas)
                await self._place_batch(more, ends, wall, bound_now, made, waiting, out)
            # Told after this pass's binds are counted: the counts are the ones the next pass
            # starts from, and the gangs explained read one state (explanations of alike gangs
            # and the nodes' grouping are shared while the state holds); so is the estimate.
            waits = {group.ref for group, _, _ in waiting}
            self.outlook.waiting(item for item in line if item[0].ref in waits)
            self.outlook.estimate(
                self._queue.ordered, self._pod_end, wall, self._reservations.tolerations
            )
            for group, request, placement in waiting:
                self._unschedulable(group, request, placement, out)
        if quotas is not None:
            quotas.report(out, made)

    async def _place_batch(
        self,
        ready: list[tuple[PendingGroup, GangRequest]],
        ends: dict[GroupRef, float | None],
        wall: float,
        bound_now: _BoundThisPass,
        made: list[DomainReservation],
        waiting: list[tuple[PendingGroup, GangRequest, _placer.Outcome]],
        out: list[Decision],
    ) -> None:
        """Place ``ready`` as one batch, each gang seeing the room the ones before it took."""
        placements = await self._mirror.place_all_records_async(
            [request.record for _, request in ready],
            self._options.policy,  # type: ignore[arg-type]
        )
        by_name = {request.record.name: (group, request) for group, request in ready}
        for placement in placements:
            group, request = by_name[placement.gang]
            ref, priority = group.ref, _priority(request)
            placed = placement.status != "unschedulable"
            mine = bound_now.pods_of(request, placement) if placed else None
            if bound_now.clashes(request, mine):
                # The placer saw none of this pass's other gangs' rank rules: it is placed
                # again next pass, beside them once they are bound.
                out.append(Later(ref, 0.0))
                self._not_placed(ref)
            elif placement.status == "unschedulable":
                self._queue.enqueue(ref, priority, line_place(group, self._options.size_credit))
                self._hold_room(group, request, wall, made, out)
                waiting.append((group, request, placement))
                self._not_placed(ref)
            elif self._reservations.on_new_hold(ref, priority, placement, made, ends[ref]):
                out.append(Later(ref, 0.0))  # placed before the hold existed: try again
                self._not_placed(ref)
            else:
                out.append(self._bind(group, request, placement))
                bound_now.add(request, mine)

    def _not_placed(self, ref: GroupRef) -> None:
        if self._quotas is not None:
            self._quotas.unplaced(ref, holds_room=ref in self._reservations.held)

    def _place_planned(
        self,
        ready: list[tuple[PendingGroup, GangRequest]],
        line: list[tuple[PlanEntry, int]],
        wall: float,
        out: list[Decision],
    ) -> None:
        """`_place` once run-time bounds are declared: each gang starts where the start plan
        puts it now, or waits for its planned start (`crdkit.scheduling.start_plan`)."""
        said, replan = self.plan.plan(line, self._pod_end, wall)
        self.outlook.told(said)
        self.outlook.waiting(item for item in line if not said[item[0].ref].starts_now(wall))
        out.extend(Later(ref, 0.0) for ref in sorted(replan))
        made: list[DomainReservation] = []
        waiting: list[tuple[PendingGroup, GangRequest, _placer.Outcome]] = []
        planned_waits: list[tuple[PendingGroup, float]] = []
        bound_now = _BoundThisPass([request for _, request in ready])
        for group, request in ready:
            ref, priority = group.ref, _priority(request)
            planned = said[ref]
            if planned.starts_now(wall) and planned.placement is not None:
                mine = bound_now.pods_of(request, planned.placement)
                if bound_now.clashes(request, mine):
                    self.plan.drop(ref)
                    out.append(Later(ref, 0.0))  # placed again next pass, beside them
                    continue
                out.append(self._bind(group, request, planned.placement))
                bound_now.add(request, mine)
                continue
            self._queue.enqueue(ref, priority, line_place(group, self._options.size_credit))
            if planned.start is None:
                # No start can be planned (its room is taken by pods that declare no end):
                # room is held for it as it drains, as without a plan.
                self._hold_room(group, request, wall, made, out)
                waiting.append((group, request, planned.tried))
                continue
            self._preempt(group, request, made, out)
            out.append(Later(ref, planned.start - wall))  # a pass at its planned start
            planned_waits.append((group, planned.start))
        for group, request, placement in waiting:
            self._unschedulable(group, request, placement, out)
        _say_planned(self._reporter, self._queue, planned_waits, out)

    def _hold_room(
        self,
        group: PendingGroup,
        request: GangRequest,
        wall: float,
        made: list[DomainReservation],
        out: list[Decision],
    ) -> None:
        """Keep or make the gang's reservation, then let it preempt if it may."""
        ref, priority = group.ref, _priority(request)
        shape = self._shape_of(ref, request)
        gang = _record_of(request)
        held = self._reservations.keep(ref, priority, shape, gang, self._pod_end, wall)
        if held is not None:
            made.append(held)
            out.append(Reserve(ref, held))
        self._preempt(group, request, made, out)

    def _preempt(
        self,
        group: PendingGroup,
        request: GangRequest,
        made: list[DomainReservation],
        out: list[Decision],
    ) -> None:
        """Let the gang evict whole gangs of lower priority if it may; its victims' nodes are
        held for it."""
        preempted = self._preemptor.preempt(group, _priority(request), _record_of(request))
        if preempted is not None:
            reservation, evict = preempted
            made.append(reservation)
            out.append(evict)

    def _unschedulable(
        self,
        group: PendingGroup,
        request: GangRequest,
        placement: _placer.Outcome,
        out: list[Decision],
    ) -> None:
        if torn(group, self._mirror):
            # Left partly bound (a crash mid-bind) and the rest does not fit beside it.
            out.append(RollBack(group))
            return
        ref = group.ref
        explanation = self._reporter.explanation(
            ref,
            self._shape_of(ref, request),
            placement,
            lambda: request.record,
        )
        if ref in self._reporter.never_fits:
            # Waiting does not help it: only why, no place in line, start or held nodes.
            self._reporter.wait(group, "Unschedulable", explanation, out)
            return
        note, topic = self._reservations.note(ref)
        if topic == HELD_AHEAD:
            # How many nodes are held ahead of it changes with every new head of the line:
            # that rewrites the status, but is no new reason for an Event on every pod.
            topic = f"{explanation}{HELD_AHEAD}"
        self._reporter.wait(
            group,
            "Unschedulable",
            explanation + note,
            out,
            topic=topic,
            tail=lambda: self.outlook.note(ref) + self._queue.place_note(ref),
        )

    def _bind(self, group: PendingGroup, request: GangRequest, placement: _placer.Outcome) -> Bind:
        """Assume the gang where it was placed; the dispatcher binds it."""
        bindings = _pod_bindings(request, placement)
        reservation = assume(self._mirror, bindings)  # before any await: the room is taken
        self.outlook.started(group.ref, self._wall_clock())
        self._dequeue(group.ref)  # its reservation, if any, has done its work
        self._reporter.placing(group.ref)
        return Bind(group, reservation, placement)

    def _shape_of(self, ref: GroupRef, request: GangRequest) -> Hashable:
        """`shape` of the gang as this pass places it, once per pass (its room search and
        explanation key on it)."""
        found = self._shapes.get(ref)
        if found is None:
            found = self._shapes[ref] = shape(request.record)
        return found

    def _dequeue(self, ref: GroupRef) -> None:
        """The gang is no longer in line for room: bound, gone, or not placeable now."""
        self._queue.dequeue(ref)
        self._reservations.drop(ref)
        self._preemptor.forget(ref)
        self.outlook.drop(ref)
        if self._quotas is not None:
            self._quotas.gate.dequeue(ref)

    def forget(self, ref: GroupRef) -> None:
        """The gang is gone: nothing of it is kept by the cycle or its plugins."""
        self._dequeue(ref)
        self._queue.forget(ref)
        self._reporter.forget(ref)
        self.outlook.forget(ref)
