"""``GangScheduler``: a secondary scheduler that binds whole gangs of pods, topology-aware.

Pods name it in ``spec.schedulerName``; they are grouped into gangs by the PodGroup they
belong to (see `crdkit.scheduling.podgroups`: the coscheduling PodGroup of scheduler-plugins,
by the ``scheduling.x-k8s.io/pod-group`` label, and Volcano's, by the
``scheduling.k8s.io/group-name`` annotation); a pod of neither is a gang of one. This is what
lets pods made by other controllers (Kubeflow's training-operator, JobSet, LWS, a plain Job)
be gang-placed with crdkit's placer.

A scheduling pass (run whenever pods, PodGroups or capacity change) takes every group with
pending pods and:

- waits, reporting why, while fewer pods exist than the PodGroup's ``minMember``;
- waits, saying which gates hold it, while pods held by ``spec.schedulingGates`` (Kueue's
  admission gate, for one) leave fewer than ``minMember`` to place; gated pods are never placed;
- otherwise builds a gang (`crdkit.scheduling.gangs.build_gang`) of the pending pods, needing
  ``minMember`` less those already bound, and places all the pass's gangs as one batch, each
  seeing what the ones before it took, in the queue's order: higher pod priority first (the
  pods' ``spec.priority``, which the apiserver resolves from ``priorityClassName``), then the
  gang that arrived first (its PodGroup's ``creationTimestamp``, or its first pod's), then its
  namespace and name;
- gives the gang at the head of each priority's queue that does not fit a reservation
  (`crdkit.scheduling.reservations`): the domain it can fit in soonest is held for it as it
  drains, so a stream of smaller gangs cannot starve it; gangs behind it use the rest of the
  cluster, and held nodes only when their declared run time ends before the holder could start;
- binds a placed gang all-or-nothing (`crdkit.scheduling.binder.Binder`): it never binds part
  of a gang, and a failed bind rolls back what it bound;
- for a gang that does not fit, writes the PodGroup's status (phase, and for Volcano an
  ``Unschedulable`` condition) and a ``FailedScheduling`` Event on each pending pod with the
  explanation (`crdkit.scheduling.explanation`), once per distinct explanation.

What differs between the gang APIs (the policy a PodGroup asks for, the status it is given,
where that status is written) is each API's adapter (`crdkit.scheduling.group_apis`); the
pass never asks which API a gang is of. A gang whose bind the apiserver refused is retried
after the runtime's per-item exponential backoff (``retry_backoff``: first and longest delay).

A group whose pods are partly bound but short of ``minMember`` with none running (what a
scheduler that crashed mid-bind leaves) is adopted when its missing pods can be placed beside
the bound ones (inside the same domain of a ``required`` level), and rolled back (its bound
pods deleted, for their controller to make again) when they cannot, or when the bound pods
already span several domains of that level.

Use it as a Manager component (``manager.add_runnable(GangScheduler(...))``) or run it with
``crdkit scheduler --name NAME --levels ...``.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import logging
import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from crdkit.client import Conflict, KubernetesError, NotFound, PatchType, Preconditions
from crdkit.resources import Pod, PodDisruptionBudget
from crdkit.runtime.events import EventRecorder
from crdkit.runtime.ratelimit import ItemExponentialRateLimiter
from crdkit.runtime.runnable import Runnable
from crdkit.scheduling.binder import Binder, BindError, PodBinding, Reservation
from crdkit.scheduling.explanation import explain
from crdkit.scheduling.gangs import (
    GangPolicy,
    GangRequest,
    build_gang,
    pod_role,
    scheduling_gates,
)
from crdkit.scheduling.group_apis import (
    GROUP_APIS,
    POD_GROUP_APIS,
    GroupApiName,
    PodGroupApi,
    group_api,
)
from crdkit.scheduling.group_status import GroupCounts
from crdkit.scheduling.metrics import SchedulerMetrics, scheduler_metrics
from crdkit.scheduling.mirror import TERMINAL_PHASES, ClusterMirror, pod_key
from crdkit.scheduling.pod_reads import PodReads
from crdkit.scheduling.podgroups import pod_group_of
from crdkit.scheduling.preemption import RunningGang, VictimPod, choose_victims
from crdkit.scheduling.rank_rules import RankRule, RankRuleIndex, clash
from crdkit.scheduling.requests import pod_requests
from crdkit.scheduling.reservations import (
    DomainReservation,
    choose_room,
    hold_toleration,
    pod_end,
    pod_runtime_bound,
    ready_by,
)
from crdkit.scheduling.settling import Settling

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from crdkit import _placer
    from crdkit.placer import Placement
    from crdkit.placer.cluster import Policy
    from crdkit.runtime.manager import Manager
    from crdkit.runtime.reconciler import RbacRule

__all__ = ["GROUP_INDEX", "GangScheduler", "GroupRef", "PodGroupApi"]

log = logging.getLogger("crdkit.scheduling.scheduler")

_HELD_AHEAD = "; nodes held ahead"
"""The report topic's mark for a waiting gang behind others' reservations (see `_unschedulable`)."""

GROUP_INDEX = "crdkit.io/gang"
"""The Pod store index of this scheduler's pods by group (``GroupRef`` text)."""


@dataclass(frozen=True, order=True)
class GroupRef:
    """A gang: the PodGroup of an API (or ``pod`` for a pod in no group) in a namespace."""

    api: GroupApiName
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.api}/{self.namespace}/{self.name}"

    @classmethod
    def parse(cls, text: str) -> GroupRef:
        api, namespace, name = text.split("/", 2)
        if api not in GROUP_APIS:
            raise ValueError(f"group: unknown PodGroup API {api!r}")
        return cls(GROUP_APIS[api].name, namespace, name)


_NEVER = datetime.max.replace(tzinfo=UTC)


def _shape(gang: dict[str, Any]) -> str:
    """The gang without its name: what its placement, explanation and room depend on."""
    return json.dumps({k: v for k, v in gang.items() if k != "name"}, sort_keys=True)


_PodsByNode = dict[str, list[tuple[Pod, tuple[RankRule, ...]]]]


def _clashes(mine: _PodsByNode, bound: Sequence[_PodsByNode]) -> bool:
    """Whether a placement (its pods by node) breaks a rank rule of, or is kept out by one of,
    a gang bound earlier in the same pass (the placer placed the batch without them)."""
    return any(clash(mine, other) for other in bound)


def _rank_pods_by_node(request: GangRequest, placement: Placement) -> _PodsByNode:
    """Per node of the placement, every pod of each task it takes, with the task's rules."""
    by_node: _PodsByNode = {}
    for assignment in placement.assignments:
        rules = request.rules.get(assignment.task, ())
        by_node.setdefault(assignment.node, []).extend(
            (pod, rules) for pod in request.pods[assignment.task]
        )
    return by_node


def _finished(pod: Pod) -> bool:
    return pod.status is not None and pod.status.phase in TERMINAL_PHASES


def _priority(request: GangRequest) -> int:
    return int(request.gang.get("priority") or 0)


def _arrival(group: _Group) -> tuple[datetime, str, str]:
    """When the gang joined the queue, and its name: the order within a priority."""
    if group.podgroup is not None:
        stamps = [group.podgroup.metadata.creation_timestamp]
    else:
        stamps = [
            p.metadata.creation_timestamp for p in (*group.pending, *group.bound, *group.gated)
        ]
    known = [stamp for stamp in stamps if stamp is not None]
    return (min(known) if known else _NEVER, group.ref.namespace, group.ref.name)


def _line_place(group: _Group, size_credit: float) -> tuple[datetime, str, str]:
    """Its place in its priority's line: its arrival, moved ahead by ``size_credit`` seconds
    for each doubling of its pods (Slurm's job-size factor), then its name. A big gang placed
    late waits for whole domains to drain while the small ones behind it could have gone
    anywhere; a credit bounded in seconds lets it overtake only gangs that arrived at most
    that much before it."""
    arrived, namespace, name = _arrival(group)
    pods = len(group.pending) + len(group.bound) + len(group.gated)
    if arrived == _NEVER or size_credit == 0 or pods < 2:
        return arrived, namespace, name
    return arrived - timedelta(seconds=size_credit * math.log2(pods)), namespace, name


@dataclass
class _Group:
    """One group's pods as a pass sees them."""

    ref: GroupRef
    pending: list[Pod] = field(default_factory=list)
    bound: list[Pod] = field(default_factory=list)
    gated: list[Pod] = field(default_factory=list)
    """Pending pods held by ``spec.schedulingGates``: not placed until their gates are gone."""
    counts: GroupCounts = field(default_factory=GroupCounts)
    podgroup: Any = None
    policy: GangPolicy = field(default_factory=GangPolicy)


class GangScheduler(Runnable):
    """A gang scheduler named ``name``; see the module docstring.

    ``levels``: the topology's node label keys, widest first. ``default_topology``: the
    contract's ``topology`` for gangs that ask for none (default: unconstrained, packed as
    tightly as it fits). ``pod_groups``: the PodGroup APIs to watch (their CRDs must be
    installed). ``node_selector`` limits the nodes it places on (a label selector).
    """

    needs_leader: ClassVar[bool] = True
    rbac: ClassVar[Sequence[RbacRule]] = (
        ("", "pods", ("get", "list", "watch", "delete")),
        ("", "pods/binding", ("create",)),
        ("", "nodes", ("get", "list", "watch")),
        ("events.k8s.io", "events", ("create", "patch")),
        ("policy", "poddisruptionbudgets", ("get", "list", "watch")),
        *(rule for api in GROUP_APIS.values() for rule in api.rbac),
    )

    def __init__(
        self,
        name: str = "crdkit-gang-scheduler",
        levels: Sequence[str] = (),
        *,
        default_topology: Mapping[str, Any] | None = None,
        pod_groups: Sequence[PodGroupApi] = POD_GROUP_APIS,
        node_selector: str | None = None,
        policy: Policy = "best-fit",
        assume_ttl: float = 30.0,
        bind_concurrency: int = 32,
        retry_backoff: tuple[float, float] = (1.0, 60.0),
        clock: Callable[[], float] = time.monotonic,
        mirror: ClusterMirror | None = None,
        shutdown_grace: float = 10.0,
        explain_refresh: float = 10.0,
        reservations_per_priority: int = 1,
        max_reservations: int = 16,
        wall_clock: Callable[[], float] = time.time,
        settle_seconds: float = 2.0,
        pass_pause: float = 1.0,
        size_credit: float = 10.0,
        report_backoff: tuple[float, float] = (1.0, 30.0),
    ) -> None:
        """``explain_refresh``: seconds a waiting gang's explanation is reused while neither
        its gang nor the placer's reason changed (its node counts may then lag that long).
        ``reservations_per_priority``: how many gangs of one priority, first in line, may
        hold a reservation at once (0: none); ``max_reservations``: how many in all (a new
        one of higher priority displaces the lowest). ``wall_clock`` (epoch seconds) dates
        the pods' declared ends, which backfill into held nodes is judged by.
        ``settle_seconds``: how long the nodes a gang frees while the rest of it still runs are
        held back, at most, so that its domain frees whole (0: not at all; see
        `crdkit.scheduling.settling`). ``pass_pause``: after a pass, the scheduler waits this
        many times the pass's own (wall) duration before the next, so that the watch events
        that came meanwhile are applied, not left behind a pass woken by each of them (0: no
        pause; a simulation on a virtual clock wants 0). ``size_credit``: seconds a gang moves
        ahead in its priority's line for each doubling of its pods (0: first come, first
        served; see `_line_place`). ``report_backoff``: a waiting gang's first and longest
        wait between two reports of the same reason with a new message (Events on its pods and
        a status write; ``(0, 0)``: every change is written at once; see `_may_report`)."""
        if not name:
            raise ValueError("name: the scheduler needs the name pods give in spec.schedulerName")
        for field_name, value in (
            ("reservations_per_priority", reservations_per_priority),
            ("max_reservations", max_reservations),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{field_name}: expected a whole number >= 0, got {value!r}")
        for api in pod_groups:
            group_api(api)  # a ValueError naming pod_groups for an unknown one
        self.name = name
        self.levels = list(levels)
        self.default_topology = dict(default_topology) if default_topology else None
        self.pod_groups = tuple(pod_groups)
        self.node_selector = node_selector
        self.policy: Policy = policy
        # Not "mirror or ...": a mirror with no nodes yet has len() 0 and is falsy.
        self.mirror = (
            mirror
            if mirror is not None
            else ClusterMirror(levels, assume_ttl=assume_ttl, clock=clock)
        )
        self._own_mirror = mirror is None
        self.settling = Settling(self.mirror, settle_seconds, clock)
        for field_name, number in (("pass_pause", pass_pause), ("size_credit", size_credit)):
            if not math.isfinite(number) or number < 0:
                raise ValueError(f"{field_name}: expected a number >= 0, got {number!r}")
        self.pass_pause = pass_pause
        self.size_credit = size_credit
        first, longest = report_backoff
        if not (math.isfinite(longest) and 0 <= first <= longest):
            raise ValueError(
                f"report_backoff: expected (first, longest) with 0 <= first <= longest, "
                f"got {report_backoff!r}"
            )
        self.report_backoff = (float(first), float(longest))
        self._bind_concurrency = bind_concurrency
        # A gang whose bind the apiserver refused waits before it is tried again, longer
        # each time (the runtime's per-item exponential limiter, as a controller's retries).
        self._retries = ItemExponentialRateLimiter(*retry_backoff)
        self._clock = clock
        self.shutdown_grace = shutdown_grace
        """Seconds binds and writes in flight get to finish when the scheduler stops."""
        self.explain_refresh = explain_refresh
        self._explained: dict[GroupRef, tuple[str, str | None, float, str]] = {}
        """Per waiting group: the gang's shape (`_shape_of`; its name is the group's) and the
        placer reason it was explained for, when, and the message. Explaining walks every node
        per task; most passes change neither."""
        self.explanations = 0
        """Explanations computed (not reused), for the bench and tests."""
        # What one waiting gang's answer says holds for every gang of the same shape (all but
        # its name), until the state the answer read changes: a queue of hundreds of alike
        # gangs costs one explanation and one room search, not one per gang.
        self._shape_explained: dict[tuple[str, str | None], str] = {}
        self._shape_explained_at: tuple[int, int] = (-1, -1)
        self._no_room: set[tuple[str, frozenset[str]]] = set()
        self._no_room_at = -1
        self._running: list[RunningGang] | None = None
        """This pass's running gangs (victim candidates), read once for every preemptor."""
        self._shapes: dict[GroupRef, str] = {}
        """This pass's gangs, serialized without their names (`_shape_of`)."""
        self._compiled: dict[GroupRef, tuple[tuple[str, str], _placer.Gang]] = {}
        """Per waiting group: its gang as last compiled for the placer, and the gang's name and
        shape then. A gang that waits is compiled (validated, quantities parsed) once, not once per
        pass."""
        self._running_read: dict[str, tuple[tuple[Any, ...], RunningGang | None]] = {}
        """Per gang with pods in the cache: what its pods were when last decoded, and the
        victim it made (None: nothing of it runs)."""
        self.last_pass_seconds = 0.0
        """How long the last scheduling pass took: wall time, so it also counts what other
        tasks of the event loop did while the pass awaited the placer (the binds and status
        writes it spawned are not awaited by it)."""
        self._dirty: set[GroupRef] = set()
        self._waiting: set[GroupRef] = set()
        self._binding: set[GroupRef] = set()
        self._reads: PodReads | None = None
        """The shared Pod informer's store, read through a decode-once cache (from setup)."""
        self._rank_rules: RankRuleIndex | None = None
        """What placed pods' rank rules keep gangs from (from setup)."""
        self._rolling_back: set[GroupRef] = set()
        """Gangs whose bound pods are being deleted: left alone until that ends, so a pass in
        the meantime neither rolls them back again nor places them beside pods on their way
        out."""
        self._retry_at: dict[GroupRef, float] = {}
        """When each gang whose bind failed may be tried again (on ``clock``)."""
        self._reported: dict[GroupRef, tuple[str, str]] = {}
        self._report_backoff: dict[GroupRef, tuple[float, float, bool]] = {}
        """Per waiting gang: when its next report of the same reason may be written, the
        interval that set it, and whether a pass is already called for then."""
        self._said: dict[GroupRef, tuple[str, str]] = {}
        """The last waiting report written for each gang, ``(reason, message)``: a status written
        without a report of its own keeps it (the cached PodGroup may not show it yet)."""
        """The last waiting report of each group: its topic and message."""
        self._status: dict[GroupRef, Any] = {}
        self._wake = asyncio.Event()
        self._in_pass = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._manager: Manager | None = None
        self._binder: Binder | None = None
        self._recorder: EventRecorder | None = None
        self.reservations_per_priority = reservations_per_priority
        self.max_reservations = max_reservations
        self._wall_clock = wall_clock
        self.reservations: dict[GroupRef, DomainReservation] = {}
        """The reservations held now, by holder (read them; the scheduler changes them)."""
        self._reservation_serial = 0
        self._queued: dict[GroupRef, tuple[int, tuple[datetime, str, str]]] = {}
        self._lines: dict[int, tuple[list[tuple[datetime, str, str]], int]] | None = None
        """`_queued`'s arrivals sorted by priority, and how many wait above each (built on
        demand by `_place_note`, dropped when `_queued` changes)."""
        """Gangs that did not fit when last tried: their priority and arrival."""
        self._unreservable: set[GroupRef] = set()
        self._preempting: dict[GroupRef, set[str]] = {}
        """Gangs that evicted victims: the victims' pod keys, until they are gone."""
        """Queued gangs that fit nowhere even on empty nodes: no reservation can help."""
        self.metrics: SchedulerMetrics | None = None
        """The queue's metric families (in the manager's registry), once set up."""
        self._priorities_shown: set[int] = set()
        self.bound_gangs = 0
        """Gangs this scheduler bound (for metrics and tests)."""
        self.passes = 0

    # -- wiring ----------------------------------------------------------------------------

    def setup(self, manager: Manager) -> None:
        self._manager = manager
        self.metrics = scheduler_metrics(manager.registry)
        if self._own_mirror:
            self.mirror.attach(manager, node_selector=self.node_selector)
        self.mirror.on_capacity_freed(self._capacity_freed)
        manager.informers.informer(PodDisruptionBudget)  # what preemption must not break
        pods = manager.informers.informer(Pod)
        pods.store.add_indexer(GROUP_INDEX, self._group_index)
        self._reads = PodReads(pods.store)
        self._rank_rules = RankRuleIndex(pods.store, self._reads.get, self._placed_on, _finished)
        pods.add_event_handler(self._pod_changed, self._pod_updated, self._pod_deleted)
        for api in self.pod_groups:
            informer = manager.informers.informer(self._model(api))
            informer.add_event_handler(*self._podgroup_handlers(api))
        self._binder = Binder(
            manager.client,
            self.mirror,
            concurrency=self._bind_concurrency,
            field_manager=self.name,
        )
        self._recorder = EventRecorder(
            manager.client,
            reporting_controller=f"crdkit.io/{self.name}",
            reporting_instance=manager.identity,
        )

    def _pod_reads(self) -> PodReads:
        assert self._reads is not None, "the scheduler reads pods once it is set up"
        return self._reads

    def _placed_on(self, pod: Pod) -> str | None:
        """The node ``pod`` holds: its own, or the one its bind under way assumed."""
        return pod.spec.node_name or self.mirror.node_of(
            pod_key(pod.metadata.namespace, pod.metadata.name)
        )

    @staticmethod
    def _model(api: GroupApiName) -> type[Any]:
        model = GROUP_APIS[api].model
        assert model is not None, f"{api} gangs have no PodGroup"
        return model

    def _ours(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name == self.name

    def group_of(self, pod: Pod) -> GroupRef | None:
        """The gang ``pod`` belongs to, if this scheduler places it."""
        if not self._ours(pod):
            return None
        namespace = pod.metadata.namespace or "default"
        found = pod_group_of(pod)
        if found is None:
            return GroupRef("pod", namespace, pod.metadata.name or "")
        api, group = found
        return GroupRef(api, namespace, group)

    def _group_index(self, pod: Pod) -> list[str]:
        ref = self.group_of(pod)
        return [] if ref is None else [str(ref)]

    def _pod_changed(self, pod: Pod) -> None:
        ref = self.group_of(pod)
        if ref is not None:
            self._mark(ref)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        self._pod_changed(new)
        if _finished(new) and not _finished(old):
            self._pod_ended(new)

    def _pod_deleted(self, pod: Pod) -> None:
        key = pod_key(pod.metadata.namespace, pod.metadata.name)
        self._pod_reads().forget(key)
        if self._rank_rules is not None:
            self._rank_rules.forget(key)
        self._pod_changed(pod)
        if not _finished(pod):
            self._pod_ended(pod)

    def _pod_ended(self, pod: Pod) -> None:
        """A bound pod of one of its gangs finished or went: hold its node while the rest of
        the gang still runs (the mirror has already counted the node free)."""
        ref, node = self.group_of(pod), pod.spec.node_name
        if ref is None or ref.api == "pod" or not node or self._manager is None:
            return
        others = any(
            p.metadata.uid != pod.metadata.uid and p.spec.node_name and not _finished(p)
            for p in self._pod_reads().by_index(GROUP_INDEX, str(ref))
        )
        deadline = self.settling.pod_ended(str(ref), node, others)
        if deadline is not None:
            delay = max(deadline - self._clock(), 0.0)
            asyncio.get_running_loop().call_later(delay, self.settling.expire)

    def _podgroup_handlers(
        self, api: PodGroupApi
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        def changed(podgroup: Any) -> None:
            namespace = podgroup.metadata.namespace or "default"
            ref = GroupRef(api, namespace, podgroup.metadata.name or "")
            self._status.pop(ref, None)  # the next write compares with what it says now
            self._mark(ref)

        return changed, lambda _old, new: changed(new), changed

    def _capacity_freed(self) -> None:
        for ref in self._waiting:
            self._dirty.add(ref)
        if self._waiting:
            self._wake.set()

    def _mark(self, ref: GroupRef) -> None:
        self._dirty.add(ref)
        self._wake.set()

    # -- running ---------------------------------------------------------------------------

    async def run(self, manager: Manager) -> None:
        pods = manager.informers.informer(Pod)
        for text in pods.store.index_values(GROUP_INDEX):
            self._dirty.add(GroupRef.parse(text))
        self._wake.set()
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                await self.schedule_pass()
                if self.pass_pause > 0:
                    # A pass runs on the event loop; while it ran, watch events queued up. A
                    # pass woken by the first of them would leave the rest waiting again, and
                    # on a busy cluster (a thousand pods ending at once) the scheduler's view
                    # fell seconds behind the apiserver's while nodes sat free.
                    await asyncio.sleep(self.pass_pause * self.last_pass_seconds)
        finally:
            # Binds and status writes in flight are short: let them end rather than cut a
            # gang's bind in the middle (which would roll it back) or a request mid-stream.
            if self._tasks:
                _, late = await asyncio.wait(set(self._tasks), timeout=self.shutdown_grace)
                for task in late:
                    task.cancel()
                await asyncio.gather(*late, return_exceptions=True)

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def idle(self) -> bool:
        """No pass running or due, and no bind or status write in flight: what a test waits
        for before it looks (events still on their way from the apiserver are not seen)."""
        return not (
            self._in_pass or self._dirty or self._binding or self._tasks or self._wake.is_set()
        )

    async def schedule_pass(self) -> None:
        """One pass over the groups that changed since the last; see the module docstring."""
        started = time.perf_counter()
        self._in_pass = True
        try:
            await self._pass()
        finally:
            self._in_pass = False
            self.last_pass_seconds = time.perf_counter() - started

    async def _pass(self) -> None:
        self.passes += 1
        self._running = None
        self._shapes = {}
        self.mirror.expire_assumed()
        now = self._clock()
        refs = sorted(self._dirty)
        self._dirty.clear()
        requests: list[tuple[_Group, GangRequest]] = []
        for ref in refs:
            if ref in self._binding or ref in self._rolling_back:
                continue  # its bind or roll-back marks it again when it ends
            retry_at = self._retry_at.get(ref)
            if retry_at is not None and retry_at > now:
                self._later(ref, retry_at - now)
                continue
            group = self._read_group(ref)
            if group is None:
                continue
            self._spawn(self._write_status(group))
            request = self._gang_for(group)
            if request is not None:
                requests.append((group, request))
            else:
                self._dequeue(ref)  # bound, gated or short of pods: not in line for room
        if not requests:
            return
        # The queue's order: higher priority first (the placer keeps it), then the gang that
        # arrived first (its PodGroup's creationTimestamp, or its first pod's), bigger gangs
        # credited `size_credit` seconds per doubling of their pods, then the name.
        requests.sort(key=lambda item: _line_place(item[0], self.size_credit))
        wall = self._wall_clock()
        ends: dict[GroupRef, float | None] = {}
        for group, request in requests:
            ends[group.ref] = self._declared_end(group, wall)
            self._tolerate_holds(group.ref, request, ends[group.ref])
        placements = await self.mirror.place_all_async(
            [self._compiled_gang(group.ref, request) for group, request in requests], self.policy
        )
        by_name = {request.gang["name"]: (group, request) for group, request in requests}
        made: list[DomainReservation] = []
        waiting: list[tuple[_Group, GangRequest, Placement]] = []
        # This pass's bound gangs' pods by node (built once each, and only when a gang of the
        # pass has rank rules), and those of them with rules.
        any_rules = any(request.rules for _, request in requests)
        bound_now: list[_PodsByNode] = []
        ranked_now: list[_PodsByNode] = []
        for placement in placements:
            group, request = by_name[placement.gang]
            # A gang with rules is checked against every gang bound before it in this pass,
            # one without against those with rules (with none on either side, none can clash).
            earlier = bound_now if request.rules else ranked_now
            mine = (
                _rank_pods_by_node(request, placement)
                if any_rules and placement.status != "unschedulable"
                else None
            )
            if mine is not None and _clashes(mine, earlier):
                # The placer saw none of this pass's other gangs' rank rules: it is placed
                # again next pass, beside them once they are bound.
                self._later(group.ref, 0.0)
            elif placement.status == "unschedulable":
                self._queued[group.ref] = (
                    _priority(request),
                    _line_place(group, self.size_credit),
                )
                self._lines = None
                self._reserve(group, request, wall, made)
                self._preempt(group, request, made)
                waiting.append((group, request, placement))
            elif self._on_new_hold(group.ref, request, placement, made, ends[group.ref]):
                self._later(group.ref, 0.0)  # placed before the hold existed: try again
            else:
                self._bind(group, request, placement)
                if mine is not None:
                    bound_now.append(mine)
                    if request.rules:
                        ranked_now.append(mine)
        # Told after this pass's binds are counted: the counts are the ones the next pass
        # starts from, and the gangs explained read one state (explanations of alike gangs and
        # the nodes' grouping are shared while the state holds).
        for group, request, placement in waiting:
            self._unschedulable(group, request, placement)
        self._show_queue()

    def _show_queue(self) -> None:
        """The queue's and the reservations' gauges, as this pass left them."""
        if self.metrics is None:
            return
        depth: dict[int, int] = {}
        for priority, _ in self._queued.values():
            depth[priority] = depth.get(priority, 0) + 1
        for priority in self._priorities_shown | depth.keys():
            self.metrics.pending_gangs.labels(self.name, str(priority)).set(depth.get(priority, 0))
        self._priorities_shown = set(depth)
        self.metrics.reservations.labels(self.name).set(len(self.reservations))
        held = sum(len(r.nodes) for r in self.reservations.values())
        self.metrics.reserved_nodes.labels(self.name).set(held)

    # -- reservations ----------------------------------------------------------------------

    def _declared_end(self, group: _Group, wall: float) -> float | None:
        """When the gang ends at the latest if it starts now: None unless every pending pod
        declares a run-time bound."""
        bounds = []
        for pod in group.pending:
            try:
                bound = pod_runtime_bound(pod)
            except ValueError:
                return None  # _gang_for reported it; it is not placed
            if bound is None:
                return None
            bounds.append(bound)
        return wall + max(bounds) if bounds else None

    def _may_use(
        self, reservation: DomainReservation, ref: GroupRef, priority: int, end: float | None
    ) -> bool:
        """Whether gang ``ref`` may place on ``reservation``'s nodes: its holder, a gang of
        higher priority, or one proven to end before the holder could start there."""
        if reservation.holder == str(ref) or priority > reservation.priority:
            return True
        return end is not None and reservation.ready_by is not None and end <= reservation.ready_by

    def _tolerate_holds(self, ref: GroupRef, request: GangRequest, end: float | None) -> None:
        allowed = [
            hold_toleration(r.id)
            for r in self.reservations.values()
            if self._may_use(r, ref, _priority(request), end)
        ]
        if allowed:
            for task in request.gang["tasks"]:
                task["tolerations"] = [*task.get("tolerations", []), *allowed]

    def _on_new_hold(
        self,
        ref: GroupRef,
        request: GangRequest,
        placement: Placement,
        made: Sequence[DomainReservation],
        end: float | None,
    ) -> bool:
        """Whether ``placement`` uses a node held by a reservation made after it was placed
        (in this pass) that the gang may not use."""
        for reservation in made:
            if self._may_use(reservation, ref, _priority(request), end):
                continue
            if any(a.node in reservation.nodes for a in placement.assignments):
                return True
        return False

    def _pod_end(self, key: str) -> float | None:
        """The declared end of counted pod ``key`` (epoch seconds), if it declares one."""
        assert self._manager is not None
        namespace, _, name = key.partition("/")
        pod = self._pod_reads().get(f"{namespace}/{name}")
        if pod is None:
            return None
        try:
            return pod_end(pod, self._wall_clock())
        except ValueError:
            return None

    def _reserve(
        self,
        group: _Group,
        request: GangRequest,
        wall: float,
        made: list[DomainReservation],
    ) -> None:
        """Keep the gang's reservation current, or give it one if it is first in its
        priority's line and there is room for one more."""
        ref, priority = group.ref, _priority(request)
        held = self.reservations.get(ref)
        if held is not None:
            gang = self._compiled_gang(ref, request)
            held.ready_by = ready_by(self.mirror, held.nodes, gang, self._pod_end, wall)
            return
        if self.reservations_per_priority == 0 or self.max_reservations == 0:
            return
        same = sum(r.priority == priority for r in self.reservations.values())
        if same >= self.reservations_per_priority:
            return
        if not self._first_in_line(ref, priority):
            return  # a gang ahead of it in line is owed the reservation first
        taken = frozenset(
            node for r in self.reservations.values() if r.priority >= priority for node in r.nodes
        )
        # No room means it fits nowhere even on empty nodes: that depends on the nodes and on
        # what is taken, never on the pods.
        if self._no_room_at != self.mirror.nodes_version:
            self._no_room.clear()
            self._no_room_at = self.mirror.nodes_version
        shape = (self._shape_of(ref, request), taken)
        if shape in self._no_room:
            self._unreservable.add(ref)
            return
        room = choose_room(
            self.mirror,
            self._compiled_gang(ref, request),
            taken=taken,
            end_of=self._pod_end,
            now=wall,
        )
        if room is None:
            self._no_room.add(shape)
            self._unreservable.add(ref)
            return
        self._unreservable.discard(ref)
        level, domain, nodes, ready = room
        for overlapping in [r for r in self.reservations.values() if r.nodes & nodes]:
            self._release(overlapping)  # overtaken: only lower priorities can overlap (see taken)
        if len(self.reservations) >= self.max_reservations:
            lowest = min(self.reservations.values(), key=lambda r: (r.priority, r.id))
            if lowest.priority >= priority:
                return
            self._release(lowest)
        self._reservation_serial += 1
        reservation = DomainReservation(
            str(ref), f"r{self._reservation_serial}", priority, level, domain, nodes, ready
        )
        self.reservations[ref] = reservation
        self.mirror.hold(nodes, reservation.id)
        made.append(reservation)
        log.info("%s holds %s (%d nodes)", ref, reservation.where(), len(nodes))

    def _first_in_line(self, ref: GroupRef, priority: int) -> bool:
        """No gang of its priority that arrived before it waits without a reservation (one
        that fits nowhere does not count)."""
        arrival = self._queued[ref][1]
        return not any(
            other_priority == priority
            and other_arrival < arrival
            and other not in self.reservations
            and other not in self._unreservable
            for other, (other_priority, other_arrival) in self._queued.items()
        )

    # -- preemption ------------------------------------------------------------------------

    def _running_gangs(self, exclude: GroupRef) -> list[RunningGang]:
        """This scheduler's gangs with pods bound (deleting ones excluded), as victims: read
        from the pod cache once a pass, however many gangs look for victims in it."""
        if self._running is None:
            self._running = self._read_running_gangs()
        return [gang for gang in self._running if gang.ref != str(exclude)]

    def _read_running_gangs(self) -> list[RunningGang]:
        """Each gang is decoded again only when one of its pods changed (its resourceVersion
        or where the mirror counts it) or a PodDisruptionBudget did: decoding every running
        pod on every pass costs more than the rest of the pass."""
        assert self._manager is not None
        store = self._manager.informers.informer(Pod).store
        budgets = self._manager.informers.informer(PodDisruptionBudget).store
        budget_state = tuple((k, budgets.version_of(k)) for k in sorted(budgets.keys()))
        gangs: list[RunningGang] = []
        kept: dict[str, tuple[tuple[Any, ...], RunningGang | None]] = {}
        for text in store.index_values(GROUP_INDEX):
            keys = store.index_keys(GROUP_INDEX, text)
            state = (
                budget_state,
                tuple((k, store.version_of(k), self.mirror.node_of(k)) for k in sorted(keys)),
            )
            cached = self._running_read.get(text)
            gang = cached[1] if cached is not None and cached[0] == state else self._read_gang(text)
            kept[text] = (state, gang)
            if gang is not None:
                gangs.append(gang)
        self._running_read = kept
        return gangs

    def _read_gang(self, text: str) -> RunningGang | None:
        assert self._manager is not None
        pods = self._pod_reads().by_index(GROUP_INDEX, text)
        victims: list[VictimPod] = []
        for pod in pods:
            key = pod_key(pod.metadata.namespace, pod.metadata.name)
            node = pod.spec.node_name or self.mirror.node_of(key)
            phase = pod.status.phase if pod.status else None
            if not node or phase in ("Succeeded", "Failed"):
                continue
            if pod.metadata.deletion_timestamp is not None:
                victims = []  # already going: evicting it again frees nothing new
                break
            milli = self.mirror.requests_of(key) or pod_requests(pod)
            victims.append(VictimPod(key, node, milli, pod.metadata.uid))
        if not victims:
            return None
        stamps = [p.metadata.creation_timestamp for p in pods if p.metadata.creation_timestamp]
        live = [p for p in pods if p.metadata.deletion_timestamp is None]
        return RunningGang(
            text,
            max((p.spec.priority or 0 for p in pods), default=0),
            min(stamps) if stamps else None,
            tuple(victims),
            self._breaks_budget(live),
        )

    def _breaks_budget(self, pods: Sequence[Pod]) -> bool:
        """Whether evicting ``pods`` takes more than some PodDisruptionBudget allows."""
        assert self._manager is not None
        budgets = self._manager.informers.informer(PodDisruptionBudget).store.list()
        for budget in budgets:
            selector = budget.spec.selector
            if selector is None:
                continue  # policy/v1: a budget with no selector covers no pod
            covered = sum(
                1
                for pod in pods
                if pod.metadata.namespace == budget.metadata.namespace
                and selector.matches(pod.metadata.labels)
            )
            allowed = budget.status.disruptions_allowed if budget.status else 0
            if covered > allowed:
                return True
        return False

    def _preempt(self, group: _Group, request: GangRequest, made: list[DomainReservation]) -> None:
        """Evict lower-priority gangs for the gang first in its priority's line, when that
        lets it fit, and hold the room they free for it."""
        ref, priority = group.ref, _priority(request)
        if any(p.spec.preemption_policy == "Never" for p in group.pending):
            return
        assert self._manager is not None
        store = self._manager.informers.informer(Pod).store
        waiting_for = self._preempting.get(ref)
        if waiting_for is not None:
            if any(key in store for key in waiting_for):
                return  # its victims are still going
            del self._preempting[ref]
        if not self._first_in_line(ref, priority):
            return
        own = self.reservations.get(ref)
        protected = frozenset(
            node
            for r in self.reservations.values()
            if r is not own and r.priority >= priority
            for node in r.nodes
        )
        running = self._running_gangs(ref)
        if not any(gang.priority < priority for gang in running):
            return  # only strictly lower priorities are victims
        gang = self._compiled_gang(ref, request)
        choice = choose_victims(self.mirror, gang, priority, running, protected=protected)
        if choice is None:
            return
        self._preempting[ref] = {pod.key for victim in choice.victims for pod in victim.pods}
        if own is not None:
            self._release(own)
        for overlapping in [r for r in self.reservations.values() if r.nodes & choice.nodes]:
            self._release(overlapping)  # lower priority (see protected): overtaken
        self._reservation_serial += 1
        reservation = DomainReservation(
            str(ref),
            f"r{self._reservation_serial}",
            priority,
            choice.level,
            choice.domain,
            choice.nodes,
            None,
        )
        self.reservations[ref] = reservation
        self.mirror.hold(choice.nodes, reservation.id)
        made.append(reservation)
        names = ", ".join(victim.ref for victim in choice.victims)
        log.info("%s preempts %s in %s", ref, names, reservation.where())
        if self.metrics is not None:
            self.metrics.preemptions.labels(self.name).inc(len(choice.victims))
        self._spawn(self._evict(ref, priority, choice.victims, reservation.where()))

    async def _evict(
        self, ref: GroupRef, priority: int, victims: Sequence[RunningGang], where: str
    ) -> None:
        """Delete every pod of each victim gang, with its grace period, after an Event on it
        naming the preemptor."""
        assert self._manager is not None
        store = self._manager.informers.informer(Pod).store
        for victim in victims:
            for pod in victim.pods:
                namespace, _, name = pod.key.partition("/")
                seen = store.get_by_name(name, namespace)
                if seen is not None:
                    await self._event(
                        seen,
                        "Warning",
                        "Preempted",
                        f"Preempted by gang {ref} (priority {priority}) to free {where}; "
                        f"the whole gang {victim.ref} (priority {victim.priority}) is evicted",
                    )
                try:
                    await self._manager.client.delete(
                        Pod, name, namespace=namespace, preconditions=Preconditions(uid=pod.uid)
                    )
                except (NotFound, Conflict):
                    pass  # gone already, or replaced by a new pod of that name
                except KubernetesError as error:
                    log.warning("%s: could not evict %s: %s", ref, pod.key, error)

    def _release(self, reservation: DomainReservation) -> None:
        for ref, held in list(self.reservations.items()):
            if held is reservation:
                del self.reservations[ref]
        self.mirror.release(reservation.nodes, reservation.id)

    def _dequeue(self, ref: GroupRef) -> None:
        """The gang is no longer in line for room: bound, gone, or not placeable now."""
        if self._queued.pop(ref, None) is not None:
            self._lines = None
        self._unreservable.discard(ref)
        self._preempting.pop(ref, None)
        held = self.reservations.get(ref)
        if held is not None:
            self._release(held)

    def _reservation_note(self, ref: GroupRef) -> tuple[str, str | None]:
        """What the waiting message adds about reservations, and the report's topic for a
        holder (so its counts changing rewrites the status, not every pod's Event)."""
        held = self.reservations.get(ref)
        if held is not None:
            idle = sum(not self.mirror.pods_on(node) for node in held.nodes)
            note = (
                f"; reserved {held.where()}: {idle} of {len(held.nodes)} held nodes free, "
                f"{len(held.nodes) - idle} still held by other pods"
            )
            if held.ready_by is not None:
                when = datetime.fromtimestamp(held.ready_by, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                note += f" (room sure by {when})"
            return note, f"Reserved/{held.id}"
        others = sum(len(r.nodes) for r in self.reservations.values())
        if others:
            return f"; {others} nodes are held for gangs ahead of it", _HELD_AHEAD
        return "", None

    def _later(self, ref: GroupRef, delay: float) -> None:
        asyncio.get_running_loop().call_later(max(delay, 0.0), self._mark, ref)

    # -- reading a group -------------------------------------------------------------------

    def _read_group(self, ref: GroupRef) -> _Group | None:
        assert self._manager is not None
        pods = self._pod_reads().by_index(GROUP_INDEX, str(ref))
        group = _Group(ref)
        running = succeeded = failed = 0
        for pod in pods:
            phase = pod.status.phase if pod.status else None
            if phase == "Succeeded":
                succeeded += 1
            elif phase == "Failed":
                failed += 1
            elif pod.spec.node_name or self.mirror.is_counted(
                pod_key(pod.metadata.namespace, pod.metadata.name)
            ):
                group.bound.append(pod)
                running += phase == "Running"
            elif pod.metadata.deletion_timestamp is None:
                (group.gated if scheduling_gates(pod) else group.pending).append(pod)
        group.counts = GroupCounts(len(pods), len(group.bound), running, succeeded, failed)
        if GROUP_APIS[ref.api].model is not None:
            store = self._manager.informers.informer(self._model(ref.api)).store
            group.podgroup = store.get_by_name(ref.name, ref.namespace)
        if not pods and group.podgroup is None:
            self._forget(ref)
            return None
        return group

    def _forget(self, ref: GroupRef) -> None:
        self._dequeue(ref)
        for table in (
            self._reported,
            self._report_backoff,
            self._said,
            self._status,
            self._retry_at,
            self._explained,
            self._compiled,
        ):
            table.pop(ref, None)
        self._retries.forget(ref)
        self._waiting.discard(ref)

    def _policy(self, group: _Group) -> GangPolicy:
        return GROUP_APIS[group.ref.api].policy(group.podgroup, self.levels)

    # -- deciding --------------------------------------------------------------------------

    def _gang_for(self, group: _Group) -> GangRequest | None:
        ref = group.ref
        if not group.pending and not group.gated:
            self._waiting.discard(ref)
            return None
        if GROUP_APIS[ref.api].model is not None and group.podgroup is None:
            self._wait(
                group, "PodGroupNotFound", f"PodGroup {ref.namespace}/{ref.name} does not exist"
            )
            return None
        try:
            group.policy = self._policy(group)
        except ValueError as error:
            self._wait(group, "InvalidPodGroup", str(error))
            return None
        needed = group.policy.min_member - len(group.bound)
        if group.gated and needed > len(group.pending):
            gates = sorted({gate for pod in group.gated for gate in scheduling_gates(pod)})
            self._wait(
                group,
                "SchedulingGated",
                f"{len(group.gated)} of the gang's pods are held by scheduling gates "
                f"({', '.join(gates)}); the gang is placed once enough of them are released",
            )
            return None
        if not group.pending:
            self._waiting.discard(ref)
            return None
        if needed > len(group.pending):
            have = len(group.pending) + len(group.bound)
            self._wait(
                group,
                "WaitingForPods",
                f"{have} of the {group.policy.min_member} pods of the gang exist",
                topic=f"WaitingForPods/{group.policy.min_member}",
            )
            return None
        roles: dict[str, int] = {}
        for pod in group.bound:  # minTaskMember counts the bound pods of each task too
            role = pod_role(pod)
            roles[role] = roles.get(role, 0) + 1
        try:
            request = build_gang(
                str(ref),
                group.pending,
                needed=max(needed, 1),
                policy=group.policy,
                levels=self.levels,
                default_topology=self.default_topology,
                bound_by_role=roles,
                priority=max((p.spec.priority or 0 for p in group.pending), default=0),
            )
        except ValueError as error:
            self._wait(group, "InvalidPod", str(error))
            return None
        self._avoid_rank_rules(request, group)
        if group.bound and needed > 0 and not self._stay_beside(request, group.bound):
            # Its bound pods already span several domains of the level the gang must keep to:
            # no placement of the rest can make it whole there.
            if self._torn(group):
                self._start_roll_back(group)
            else:
                level = (request.gang.get("topology") or {}).get("level")
                self._wait(
                    group,
                    "Unschedulable",
                    f"the gang's {len(group.bound)} bound pods span several {level} domains",
                )
            return None
        return request

    def _avoid_rank_rules(self, request: GangRequest, group: _Group) -> None:
        """Keep each task off the nodes whose placed pods its rank rules match, or whose own
        rank rules match its pods (`crdkit.scheduling.rank_rules`)."""
        assert self._rank_rules is not None
        if not request.rules and not self._rank_rules.has_carriers(group.ref.namespace):
            return  # no rule of its own, and none of a pod that could name it
        pending = frozenset(pod_key(p.metadata.namespace, p.metadata.name) for p in group.pending)
        for task in request.gang["tasks"]:
            avoided = self._rank_rules.avoided(
                request.rules.get(task["name"], ()), request.pods[task["name"]], pending
            )
            if avoided:
                task["avoidNodes"] = sorted(avoided)

    def _stay_beside(self, request: GangRequest, bound: Sequence[Pod]) -> bool:
        """Keep a partly bound gang's missing pods inside the domain its bound pods share at
        the gang's ``required`` level; False when they are in two domains or more of it."""
        topology = request.gang.get("topology") or {}
        if topology.get("mode") != "required":
            return True
        level = topology["level"]
        values = set()
        for pod in bound:
            node = self.mirror.node(
                pod.spec.node_name
                or self.mirror.node_of(pod_key(pod.metadata.namespace, pod.metadata.name))
                or ""
            )
            values.add(None if node is None else node["labels"].get(level))
        if len(values) == 1 and None not in values:
            (value,) = values
            for task in request.gang["tasks"]:
                task["nodeSelector"] = {**task.get("nodeSelector", {}), level: value}
        return len(values - {None}) <= 1  # a node it does not know is no evidence of a split

    def _unschedulable(self, group: _Group, request: GangRequest, placement: Placement) -> None:
        if self._torn(group):
            # Left partly bound (a crash mid-bind) and the rest does not fit beside it.
            self._start_roll_back(group)
            return
        note, topic = self._reservation_note(group.ref)
        explanation = self._explanation(group.ref, request, placement)
        if topic == _HELD_AHEAD:
            # How many nodes are held ahead of it changes with every new head of the line:
            # that rewrites the status, but is no new reason for an Event on every pod.
            topic = f"{explanation}{_HELD_AHEAD}"
        message = explanation + note
        self._wait(
            group, "Unschedulable", message, topic=topic, tail=lambda: self._place_note(group.ref)
        )

    def queue(self) -> list[tuple[str, int]]:
        """The gangs waiting for room, in the order they are served: ``(gang, priority)``,
        higher priority first, then first to arrive, bigger gangs credited ``size_credit``
        seconds per doubling of their pods (a snapshot; it changes every pass)."""
        ordered = sorted(self._queued.items(), key=lambda item: (-item[1][0], item[1][1]))
        return [(str(ref), priority) for ref, (priority, _) in ordered]

    def _place_note(self, ref: GroupRef) -> str:
        """Its place in line when the report is written (a later shift rewrites nothing)."""
        entry = self._queued.get(ref)
        if entry is None:
            return ""
        priority, arrival = entry
        if self._lines is None:
            # Each priority's arrivals sorted, and how many wait above it: built once for all
            # the reports of a pass (counting the line for each gang made a pass quadratic).
            by_priority: dict[int, list[tuple[datetime, str, str]]] = {}
            for p, a in self._queued.values():
                by_priority.setdefault(p, []).append(a)
            above = 0
            lines: dict[int, tuple[list[tuple[datetime, str, str]], int]] = {}
            for p in sorted(by_priority, reverse=True):
                lines[p] = (sorted(by_priority[p]), above)
                above += len(by_priority[p])
            self._lines = lines
        same, higher = self._lines[priority]
        ahead = bisect.bisect_left(same, arrival)
        return (
            f" [in line: {ahead + 1} of {len(same)} at priority {priority}"
            + (f", {higher} waiting at higher priorities" if higher else "")
            + "]"
        )

    def _shape_of(self, ref: GroupRef, request: GangRequest) -> str:
        """`_shape` of the gang as this pass places it, serialized once per pass (its
        compile cache, room search and explanation all key on it)."""
        shape = self._shapes.get(ref)
        if shape is None:
            shape = self._shapes[ref] = _shape(request.gang)
        return shape

    def _compiled_gang(self, ref: GroupRef, request: GangRequest) -> _placer.Gang:
        """The gang as the placer's record, compiled again only when its text changed."""
        text = (request.gang["name"], self._shape_of(ref, request))
        kept = self._compiled.get(ref)
        if kept is not None and kept[0] == text:
            return kept[1]
        compiled = self.mirror.cluster.compile(request.gang, milli=request.milli)
        self._compiled[ref] = (text, compiled)
        return compiled

    def _explanation(self, ref: GroupRef, request: GangRequest, placement: Placement) -> str:
        """Why the gang waits: explained again only when its gang or the placer's reason
        changed, or the last explanation is ``explain_refresh`` seconds old."""
        now = self._clock()
        shape = self._shape_of(ref, request)
        last = self._explained.get(ref)
        if (
            last is not None
            and last[0] == shape
            and last[1] == placement.reason
            and now - last[2] < self.explain_refresh
        ):
            return last[3]
        state = (self.mirror.nodes_version, self.mirror.usage_version)
        if state != self._shape_explained_at:
            self._shape_explained.clear()
            self._shape_explained_at = state
        key = (shape, placement.reason)
        message = self._shape_explained.get(key)
        if message is None:
            message = explain(self.mirror, self._compiled_gang(ref, request), placement).message
            self.explanations += 1
            self._shape_explained[key] = message
        self._explained[ref] = (shape, placement.reason, now, message)
        return message

    def _torn(self, group: _Group) -> bool:
        """Partly bound, short of ``minMember``, none running and no bind of it under way:
        what a scheduler stopped mid-bind leaves. (A gang bound at its minimum whose further
        pods do not fit is whole: those pods just wait.)"""
        counts = group.counts
        return (
            bool(group.bound)
            and counts.bound + counts.succeeded < group.policy.min_member
            and not counts.running
            and not self._in_flight(group)
        )

    def _in_flight(self, group: _Group) -> bool:
        return any(
            self.mirror.is_assumed(pod_key(p.metadata.namespace, p.metadata.name))
            for p in group.bound
        )

    def _bind(self, group: _Group, request: GangRequest, placement: Placement) -> None:
        assert self._binder is not None
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
                            pod_requests(pod),
                            pod.metadata.uid,
                        )
                    )
        reservation = self._binder.reserve(bindings)  # before any await: the room is taken
        self._dequeue(group.ref)  # its reservation, if any, has done its work
        if self.metrics is not None:
            arrived = _arrival(group)[0]
            if arrived != _NEVER:
                waited = max(self._wall_clock() - arrived.timestamp(), 0.0)
                self.metrics.gang_wait.labels(self.name, str(_priority(request))).observe(waited)
        self._binding.add(group.ref)
        self._waiting.discard(group.ref)
        self._explained.pop(group.ref, None)
        self._spawn(self._finish_bind(group, reservation, placement))

    async def _finish_bind(
        self, group: _Group, reservation: Reservation, placement: Placement
    ) -> None:
        assert self._binder is not None
        ref = group.ref
        pods = {pod_key(p.metadata.namespace, p.metadata.name): p for p in group.pending}
        try:
            await self._binder.bind(reservation)
        except BindError as error:
            self._fail_backoff(ref)
            message = f"binding rejected: {error}"
            log.warning("%s: %s", ref, message)
            for binding in reservation.bindings:
                await self._event(pods[binding.key], "Warning", "FailedScheduling", message)
            return
        finally:
            self._binding.discard(ref)
            self._mark(ref)
        self.bound_gangs += 1
        if self.metrics is not None:
            self.metrics.gangs_bound.labels(self.name).inc()
        self._retry_at.pop(ref, None)
        self._retries.forget(ref)
        self._reported.pop(ref, None)
        self._report_backoff.pop(ref, None)
        self._said.pop(ref, None)
        where = ", ".join(f"{k}={v}" for k, v in placement.domain.items()) or "across domains"
        for binding in reservation.bindings:
            await self._event(
                pods[binding.key],
                "Normal",
                "Scheduled",
                f"Successfully assigned {binding.key} to {binding.node} (gang {ref}, {where})",
            )

    def _fail_backoff(self, ref: GroupRef) -> None:
        self._retry_at[ref] = self._clock() + self._retries.when(ref)

    def _start_roll_back(self, group: _Group) -> None:
        self._rolling_back.add(group.ref)
        self._spawn(self._roll_back(group))

    async def _roll_back(self, group: _Group) -> None:
        try:
            await self._delete_bound(group)
        finally:
            self._rolling_back.discard(group.ref)
            self._mark(group.ref)

    async def _delete_bound(self, group: _Group) -> None:
        assert self._manager is not None
        message = (
            f"{len(group.bound)} of the gang's pods were bound and the other "
            f"{len(group.pending)} do not fit beside them: deleting the bound pods"
        )
        log.warning("%s: %s", group.ref, message)
        for pod in group.bound:
            await self._event(pod, "Warning", "GangRolledBack", message)
            try:
                # Only the pod seen bound: its controller may have made a new one of that name.
                await self._manager.client.delete(
                    Pod,
                    pod.metadata.name or "",
                    namespace=pod.metadata.namespace,
                    grace_period_seconds=0,
                    preconditions=Preconditions(uid=pod.metadata.uid),
                )
            except (NotFound, Conflict):
                pass  # gone already, or already replaced
            except KubernetesError as error:
                log.warning("%s: could not delete %s: %s", group.ref, pod.metadata.name, error)
            self.mirror.remove_pod(pod)

    # -- reporting -------------------------------------------------------------------------

    def _wait(
        self,
        group: _Group,
        reason: str,
        message: str,
        *,
        topic: str | None = None,
        tail: Callable[[], str] | None = None,
    ) -> None:
        """Record why ``group`` waits: an Event on each pending pod and the PodGroup's status,
        once per ``topic`` (default: the message). A new message of the same topic (a gang
        whose pods are being created, one more each pass) only rewrites the status, so a
        controller creating a gang pod by pod causes no storm of Events. ``tail`` adds to
        what is written (the place in line) without being a reason to write again."""
        ref = group.ref
        self._waiting.add(ref)
        report = (message if topic is None else topic, message)
        last = self._reported.get(ref)
        if last == report:
            return  # already said: no event storm on every pass
        if not self._may_report(ref, reason):
            return  # said again once its backoff ends (a pass is called for then)
        self._reported[ref] = report
        if tail is not None:
            message += tail()
        self._said[ref] = (reason, message)
        if last is not None and last[0] == report[0]:
            self._spawn(self._write_status(group, (reason, message)))
            return
        self._spawn(self._report_waiting(group, reason, message))

    def _may_report(self, ref: GroupRef, reason: str) -> bool:
        """Whether a new report of why ``ref`` waits may be written now. A new reason is said
        at once; a new message of the same reason (the counts of a saturated cluster change on
        every pass) waits out a per-gang backoff that doubles from the first to the last of
        ``report_backoff``, as kube-scheduler backs off a pod's attempts, each of which is an
        Event. Without it, hundreds of waiting gangs wrote Events on every pod at every pass,
        and the apiserver, busy with them, delivered the watch events that free nodes late."""
        first, longest = self.report_backoff
        now = self._clock()
        said = self._said.get(ref)
        if said is None or said[0] != reason or longest == 0:
            self._report_backoff[ref] = (now + first, first, False)
            return True
        allowed_at, interval, called = self._report_backoff.get(ref, (now, 0.0, False))
        if now < allowed_at:
            if not called:
                self._later(ref, allowed_at - now)
                self._report_backoff[ref] = (allowed_at, interval, True)
            return False
        interval = min(max(interval * 2, first), longest)
        self._report_backoff[ref] = (now + interval, interval, False)
        return True

    async def _report_waiting(self, group: _Group, reason: str, message: str) -> None:
        log.info("%s waits: %s", group.ref, message)
        # A gated pod is told only that it is gated (kube-scheduler does not even try it).
        told = [*group.pending, *group.gated] if reason == "SchedulingGated" else group.pending
        for pod in told:
            await self._event(pod, "Warning", "FailedScheduling", f"{reason}: {message}")
        await self._write_status(group, (reason, message))

    async def _event(
        self, pod: Pod, type_: Literal["Normal", "Warning"], reason: str, note: str
    ) -> None:
        if self._recorder is not None:
            await self._recorder.event(pod, type_, reason, note[:1024], action="Scheduling")

    async def _write_status(self, group: _Group, waiting: tuple[str, str] | None = None) -> None:
        """Bring the PodGroup's status in line with its pods (a merge patch of ``status``)."""
        podgroup, ref = group.podgroup, group.ref
        if podgroup is None or self._manager is None:
            return
        api = GROUP_APIS[ref.api]
        if waiting is None and ref in self._waiting:
            # Still waiting: say so again. Built from the cached PodGroup alone, a status
            # written while the report's own write is not yet in the cache would erase it.
            waiting = self._said.get(ref)
        status = api.status(podgroup, group.counts, ref in self._binding, waiting)
        key = tuple(sorted((k, repr(v)) for k, v in status.items() if k != "scheduleStartTime"))
        if self._status.get(ref) == key:
            return  # written already: a waiting report that changed nothing writes nothing
        self._status[ref] = key
        try:
            await self._manager.client.patch(
                self._model(ref.api),
                ref.name,
                {"status": status},
                namespace=ref.namespace,
                patch_type=PatchType.MERGE,
                # Volcano's PodGroup CRD has no status subresource: its status is the object's.
                subresource="status" if api.status_subresource else None,
            )
        except NotFound:
            return
        except KubernetesError as error:
            self._status.pop(ref, None)
            log.warning("%s: could not write the PodGroup status: %s", ref, error)
