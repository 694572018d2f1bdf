"""Quota in the scheduling pass: the cycle's plugin that admits gangs by their queues' quota
before they are placed, and only those, so that no gang is admitted that is not placed whole
or holding room, and none placed that its queue cannot admit.

Each pass (`QueueGate.new_pass`) reads the queues (the tree is built again only when a queue
changed) and counts what each queue's running gangs hold, by flavor: a pod counts in the first
flavor of its gang's queue whose labels its node has. `QueueGate.admit` then takes the pass's
ready gangs and returns, in fair-share order, those admitted (each restricted to its flavor's
nodes) and those refused with the reason; an admitted gang that is then not placed gives its
quota back (`give_back`), so the gangs refused behind it may be tried again in the same pass.

Which queue a gang is in (`queue_of`), the first that says: the label
``scheduling.crdkit.io/queue`` on its PodGroup or its first pod; a Volcano PodGroup's
``spec.queue``; Kueue's ``kueue.x-k8s.io/queue-name`` label (read as the name of a crdkit
`Queue`); else the default queue (``default``) when a queue of that name exists. A gang in no
queue is not held by quota (as Kueue leaves a job without a queue name to the scheduler).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from crdkit.scheduling.gang_records import evolve_gang, evolve_task
from crdkit.scheduling.pending import GroupRef
from crdkit.scheduling.queues.admission import Ask, Refusal, admit_in_order
from crdkit.scheduling.queues.tree import QuotaTree

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Mapping, Sequence

    from crdkit import _placer
    from crdkit.resources import Pod
    from crdkit.scheduling.gangs import GangRequest
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pending import PendingGroup
    from crdkit.scheduling.preemption import RunningGang
    from crdkit.scheduling.queues.tree import FlavorDef, Fr, QueueDef

__all__ = [
    "DEFAULT_QUEUE",
    "KUEUE_QUEUE_LABEL",
    "QUEUE_LABEL",
    "QueueBook",
    "QueueGate",
    "queue_named",
    "with_node_labels",
]

QUEUE_LABEL = "scheduling.crdkit.io/queue"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
DEFAULT_QUEUE = "default"


class QueueBook(Protocol):
    """Where the queues come from: the `Queue` informer's store, or a list in a test."""

    def version(self) -> Hashable:
        """Changes whenever a queue does."""

    def queues(self) -> Sequence[QueueDef]: ...


def queue_named(labels: Mapping[str, str] | None, spec_queue: str | None) -> str | None:
    """The queue an object names, by the precedence of the module docstring (None: none)."""
    labels = labels or {}
    return labels.get(QUEUE_LABEL) or spec_queue or labels.get(KUEUE_QUEUE_LABEL) or None


def _named_by(podgroup: Any, pods: Sequence[Any]) -> str | None:
    if podgroup is not None:
        spec = getattr(podgroup, "spec", None)
        named = queue_named(podgroup.metadata.labels, getattr(spec, "queue", None))
        if named:
            return named
    for pod in pods:
        named = queue_named(pod.metadata.labels, None)
        if named:
            return named
    return None


def with_node_labels(gang: _placer.Gang, labels: Mapping[str, str]) -> _placer.Gang | None:
    """``gang`` kept to nodes with ``labels`` (each task's node selector with them added);
    None when a task's own selector asks for another value of one of them."""
    if not labels:
        return gang
    tasks = []
    for task in gang.tasks:
        selector = dict(task.node_selector)
        for key, value in labels.items():
            if selector.setdefault(key, value) != value:
                return None
        tasks.append(evolve_task(task, node_selector=selector))
    return evolve_gang(gang, tasks=tasks)


def _asked(request: GangRequest) -> dict[str, int]:
    """What the gang's pending pods request together, in milli-units by resource."""
    total: dict[str, int] = {}
    for task in request.record.tasks:
        count = len(request.pods.get(task.name, ()))
        for resource, milli in task.requests.items():
            total[resource] = total.get(resource, 0) + milli * count
    return total


class QueueGate:
    """See the module docstring. ``running`` gives this pass's running gangs (the
    preemptor's read of them), ``group_of`` a running gang's PodGroup and pods by its text."""

    def __init__(
        self,
        book: QueueBook,
        mirror: ClusterMirror,
        running: Callable[[], Sequence[RunningGang]],
        group_of: Callable[[str], tuple[Any, Sequence[Pod]]],
        default_queue: str = DEFAULT_QUEUE,
    ) -> None:
        self._book = book
        self._mirror = mirror
        self._running = running
        self._group_of = group_of
        self.default_queue = default_queue
        self._version: Hashable = object()
        self.tree = QuotaTree(())
        self.usage: dict[str, dict[Fr, int]] = {}
        """Per leaf queue, what its gangs hold (running, and admitted this pass)."""
        self._asked: dict[GroupRef, tuple[str, dict[Fr, int]]] = {}
        """This pass's admitted gangs: their queue and what they were counted for."""
        self._read: dict[str, tuple[RunningGang, QuotaTree, str | None, dict[Fr, int]]] = {}
        """Per running gang: the gang as the preemptor last decoded it, the tree it was read
        against, its queue and what it holds (read again only when either changed)."""
        self.holdings: dict[str, tuple[str, dict[Fr, int]]] = {}
        """Per running gang (by its text) in a queue: the queue, and what it holds of it."""
        self.waiting: dict[GroupRef, str] = {}
        """Gangs waiting, by queue, for the queues' status."""
        self.admitted: dict[str, int] = {}
        """Per queue, its gangs holding room now."""

    @property
    def engaged(self) -> bool:
        """Whether any queue exists: without one, no gang is held by quota."""
        return bool(self.tree.queues)

    # -- each pass --------------------------------------------------------------------------

    def new_pass(self) -> None:
        version = self._book.version()
        if version != self._version:
            self._version = version
            self.tree = QuotaTree(self._book.queues())
        self._asked = {}
        self.usage = {}
        self.admitted = {}
        self.holdings = {}
        if not self.engaged:
            self._read = {}
            return
        read: dict[str, tuple[RunningGang, QuotaTree, str | None, dict[Fr, int]]] = {}
        for gang in self._running():
            known = self._read.get(gang.ref)
            if known is None or known[0] is not gang or known[1] is not self.tree:
                # The preemptor decodes a gang again only when its pods changed.
                queue = self._resolve(_named_by(*self._group_of(gang.ref)))
                known = (gang, self.tree, queue, self._held(queue, gang))
            read[gang.ref] = known
            queue, held = known[2], known[3]
            if queue is None or queue not in self.tree.queues:
                continue
            self.admitted[queue] = self.admitted.get(queue, 0) + 1
            mine = self.usage.setdefault(queue, {})
            for fr, milli in held.items():
                mine[fr] = mine.get(fr, 0) + milli
            self.holdings[gang.ref] = (queue, held)
        self._read = read

    def _held(self, queue: str | None, gang: RunningGang) -> dict[Fr, int]:
        """What the gang holds of its queue's quota: each pod in the first flavor of the queue
        whose labels its node has (none: no quota of it is used)."""
        held: dict[Fr, int] = {}
        if queue is None or queue not in self.tree.queues:
            return held
        flavors = self.tree.queues[queue].flavors
        for pod in gang.pods:
            entry = self._mirror.node(pod.node)
            labels = entry["labels"] if entry is not None else {}
            flavor = next((f for f in flavors if f.holds(labels)), None)
            if flavor is None:
                continue
            for resource, milli in pod.milli.items():
                if resource in flavor.limits:
                    fr = (flavor.name, resource)
                    held[fr] = held.get(fr, 0) + milli
        return held

    def _resolve(self, named: str | None) -> str | None:
        if named:
            return named
        return self.default_queue if self.default_queue in self.tree.queues else None

    def max_run(self, group: PendingGroup | GroupRef | None) -> float | None:
        """The maximum run time of the gang's queue (a waiting gang, or a running one by its
        name), the run-time estimate of its pods that declare none; None without one."""
        if group is None:
            return None
        queue = (
            self.running_queue(str(group)) if isinstance(group, GroupRef) else self.queue_of(group)
        )
        found = self.tree.queues.get(queue) if queue is not None else None
        return None if found is None or found.max_run_seconds is None else found.max_run_seconds

    def queue_of(self, group: PendingGroup) -> str | None:
        """The gang's queue (see the module docstring); None: it is in none."""
        return self._resolve(_named_by(group.podgroup, [*group.pending, *group.bound]))

    # -- admission -------------------------------------------------------------------------

    def admit(
        self,
        ready: Sequence[tuple[PendingGroup, GangRequest]],
        place: Callable[[PendingGroup], Any],
    ) -> tuple[list[tuple[PendingGroup, GangRequest]], list[tuple[PendingGroup, Refusal]]]:
        """The gangs admitted, in the order to place them, each kept to its flavor's nodes,
        and those refused; ``place`` gives a gang's place in its priority's line. Gangs in no
        queue are not held: they go in by priority and place in line among the others."""
        asks: list[Ask] = []
        by_key: dict[GroupRef, tuple[PendingGroup, GangRequest]] = {}
        free: list[tuple[PendingGroup, GangRequest]] = []
        for group, request in ready:
            ask = self.ask(group, request, place(group))
            if ask is None:
                free.append((group, request))
                continue
            by_key[group.ref] = (group, request)
            self.waiting[group.ref] = ask.queue
            asks.append(ask)

        def may_use(ask: Ask, flavor: FlavorDef) -> bool:
            record = by_key[ask.key][1].record  # type: ignore[index]
            return with_node_labels(record, flavor.node_labels) is not None

        verdict = admit_in_order(self.tree, self.usage, asks, may_use)
        self.usage = verdict.usage
        admitted: list[tuple[PendingGroup, GangRequest]] = []
        for ask, flavor_name in verdict.admitted:
            group, request = by_key[ask.key]  # type: ignore[index]
            flavor = self.tree.flavor(ask.queue, flavor_name)
            record = self.flavor_record(request, ask.queue, flavor_name)
            assert flavor is not None
            assert record is not None  # may_use said so
            self._asked[group.ref] = (
                ask.queue,
                {(flavor_name, r): m for r, m in ask.requests.items() if r in flavor.limits},
            )
            admitted.append((group, replace(request, record=record)))
        refused = [
            (by_key[key][0], why)  # type: ignore[index]
            for key, why in verdict.refused.items()
        ]
        return _merge(admitted, free, place), refused

    def give_back(self, ref: GroupRef) -> None:
        """An admitted gang was not placed: its quota is free again for this pass."""
        asked = self._asked.pop(ref, None)
        if asked is None:
            return
        queue, amounts = asked
        mine = self.usage.setdefault(queue, {})
        for fr, milli in amounts.items():
            mine[fr] = mine.get(fr, 0) - milli

    def running_gangs(self) -> list[RunningGang]:
        """The gangs this pass read as running."""
        return [known[0] for known in self._read.values()]

    def started(self, text: str) -> float | None:
        """When the running gang ``text`` started (its first pod's start, epoch seconds)."""
        _, pods = self._group_of(text)
        starts = [
            pod.status.start_time.timestamp()
            for pod in pods
            if pod.status is not None and pod.status.start_time is not None
        ]
        return min(starts) if starts else None

    def running_queue(self, text: str) -> str | None:
        """The queue of a running gang (by its text), as this pass read it."""
        known = self._read.get(text)
        return None if known is None else known[2]

    def flavor_record(
        self, request: GangRequest, queue: str, flavor_name: str
    ) -> _placer.Gang | None:
        """The gang kept to the nodes of ``flavor_name`` of ``queue``."""
        flavor = self.tree.flavor(queue, flavor_name)
        return None if flavor is None else with_node_labels(request.record, flavor.node_labels)

    def ask(self, group: PendingGroup, request: GangRequest, place: Any = ()) -> Ask | None:
        """What the gang asks of its queue, at ``place`` in its line (None: it is in no
        queue)."""
        queue = self.queue_of(group)
        if queue is None:
            return None
        return Ask(group.ref, queue, _asked(request), request.record.priority, place)

    def dequeue(self, ref: GroupRef) -> None:
        """The gang no longer waits (bound, gone, or not placeable now)."""
        self.waiting.pop(ref, None)

    def pending(self) -> dict[str, int]:
        """Per queue, its gangs waiting."""
        out: dict[str, int] = {}
        for queue in self.waiting.values():
            out[queue] = out.get(queue, 0) + 1
        return out


def _merge(
    admitted: list[tuple[PendingGroup, GangRequest]],
    free: list[tuple[PendingGroup, GangRequest]],
    place: Callable[[PendingGroup], Any],
) -> list[tuple[PendingGroup, GangRequest]]:
    """The admitted gangs in their order, with the gangs in no queue (in their own line's
    order) each put before the first admitted gang it is ahead of by priority and place."""
    if not free:
        return admitted

    def key(item: tuple[PendingGroup, GangRequest]) -> tuple[int, Any]:
        return (-item[1].record.priority, place(item[0]))

    out: list[tuple[PendingGroup, GangRequest]] = []
    rest = sorted(free, key=key)
    for item in admitted:
        while rest and key(rest[0]) < key(item):
            out.append(rest.pop(0))
        out.append(item)
    return [*out, *rest]
