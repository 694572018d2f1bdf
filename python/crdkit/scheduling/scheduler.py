"""``GangScheduler``: a secondary scheduler that binds whole gangs of pods, topology-aware.

Pods name it in ``spec.schedulerName``; they are grouped into gangs by the PodGroup they
belong to (see `crdkit.scheduling.groups`: the coscheduling PodGroup of scheduler-plugins,
by the ``scheduling.x-k8s.io/pod-group`` label, Volcano's, by the
``scheduling.k8s.io/group-name`` annotation, and Kubernetes' own, by the pod's
``spec.schedulingGroup``); a pod of none is a gang of one. This is what
lets pods made by other controllers (Kubeflow's training-operator, JobSet, LWS, a plain Job)
be gang-placed with crdkit's placer.

It is built as kube-scheduler is::

    watch events ─▶ GangQueue (dirty gangs, retries, the line)
                        │ take
                        ▼
    caches ─▶ Cycle.run_pass (pure: reads, builds, places; plugins: Reservations,
                        │      Preemptor, Reporter)
                        │ decisions: Bind, Wait, WriteStatus, Reserve, Evict, RollBack, Later
                        ▼
                   Dispatcher (every API call) ─▶ outcomes back to the queue

A pass (run whenever pods, PodGroups or capacity change) takes every gang with pending pods
and (`crdkit.scheduling.cycle`):

- waits, reporting why, while fewer pods exist than the PodGroup's ``minMember``, or while
  pods held by ``spec.schedulingGates`` (Kueue's admission gate, for one) leave fewer than
  ``minMember`` to place; gated pods are never placed;
- otherwise builds a gang (`crdkit.scheduling.gangs.build_gang`) of the pending pods, needing
  ``minMember`` less those already bound, and places all the pass's gangs as one batch in the
  queue's order: higher pod priority first (the pods' ``spec.priority``), then the gang that
  arrived first (its PodGroup's ``creationTimestamp``, or its first pod's), bigger gangs
  credited ``size_credit`` seconds per doubling of their pods, then namespace and name;
- gives the gang at the head of each priority's queue that does not fit a reservation
  (`crdkit.scheduling.reservations`), so a stream of smaller gangs cannot starve it, and lets
  it preempt whole gangs of lower priority (`crdkit.scheduling.preemption`);
- binds a placed gang all-or-nothing (`crdkit.scheduling.binder.Binder`): it never binds part
  of a gang, and a failed bind rolls back what it bound; a gang whose bind the apiserver
  refused is retried after the runtime's per-item exponential backoff;
- for a gang that does not fit, writes the PodGroup's status and a ``FailedScheduling`` Event
  on each pending pod with the explanation, once per distinct explanation
  (`crdkit.scheduling.reporting`).

A group whose pods are partly bound but short of ``minMember`` with none running (what a
scheduler that crashed mid-bind leaves) is adopted when its missing pods can be placed beside
the bound ones, and rolled back (its bound pods deleted, for their controller to make again)
when they cannot. What differs between the gang APIs is each API's adapter
(`crdkit.scheduling.groups`); the pass never asks which API a gang is of.

Use it as a Manager component (``manager.add_runnable(GangScheduler(...))``) or run it with
``crdkit scheduler --name NAME --levels ...``; its options are `SchedulerOptions`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, ClassVar

from crdkit.placer.models import HOSTNAME_LEVEL
from crdkit.resources import Pod, PodDisruptionBudget
from crdkit.runtime.events import EventRecorder
from crdkit.runtime.runnable import Runnable
from crdkit.scheduling.binder import Binder
from crdkit.scheduling.cycle import Cycle
from crdkit.scheduling.dispatcher import BindRefused, Bound, Dispatcher, Outcome, Settled
from crdkit.scheduling.gang_events import GangEvents
from crdkit.scheduling.groups import (
    DEFAULT_POD_GROUP_APIS,
    GROUP_APIS,
    POD_GROUP_APIS,
    GroupApiName,
    PodGroupApi,
    group_api,
)
from crdkit.scheduling.groups.discovery import watch_for_pod_group_apis
from crdkit.scheduling.metrics import SchedulerMetrics, count_decisions, scheduler_metrics
from crdkit.scheduling.mirror import ClusterMirror
from crdkit.scheduling.options import SchedulerOptions
from crdkit.scheduling.outlook import Outlook
from crdkit.scheduling.pending import GROUP_INDEX, GroupReader, GroupRef, finished
from crdkit.scheduling.pod_reads import PodReads
from crdkit.scheduling.preemption import Preemptor
from crdkit.scheduling.queue import GangQueue
from crdkit.scheduling.queues.step import attach_queues
from crdkit.scheduling.rank_rules import RankRuleIndex
from crdkit.scheduling.reporting import Reporter
from crdkit.scheduling.reservations import DomainReservation, Reservations
from crdkit.scheduling.runtime_bounds import pod_end
from crdkit.scheduling.settling import Settling
from crdkit.scheduling.view.format import PUBLISHING_RBAC

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from crdkit.placer.cluster import Policy
    from crdkit.runtime.informer import Informer
    from crdkit.runtime.manager import Manager
    from crdkit.runtime.reconciler import RbacRule
    from crdkit.scheduling.queues.gate import QueueGate
    from crdkit.scheduling.start_plan import StartPlan

__all__ = ["GangScheduler"]

log = logging.getLogger(__name__)


def _companions(manager: Manager, api: GroupApiName) -> Informer[Any] | None:
    """The informer of the objects ``api``'s PodGroups take part of their policy from."""
    companion = GROUP_APIS[api].companion
    return None if companion is None else manager.informers.informer(companion)


def _companion(api: GroupApiName) -> type[Any]:
    companion = GROUP_APIS[api].companion
    assert companion is not None, f"{api} PodGroups name no other object"
    return companion


class GangScheduler(Runnable):
    """A gang scheduler named ``name``; see the module docstring.

    ``levels``: the topology's node label keys, widest first. ``options``: everything else
    (`SchedulerOptions`; keyword shorthand such as ``size_credit=0.0`` changes one field).
    ``clock`` times retries, reports and assumptions; ``wall_clock`` (epoch seconds) dates the
    pods' declared ends, which backfill into held nodes is judged by. ``mirror``: a cluster
    mirror to share (default: one of its own, attached to the manager's informers).
    """

    needs_leader: ClassVar[bool] = True
    rbac: ClassVar[Sequence[RbacRule]] = (
        ("", "pods", ("get", "list", "watch", "delete")),
        ("", "pods/binding", ("create",)),
        ("", "pods/status", ("patch",)),  # DisruptionTarget on the pods it preempts
        ("", "nodes", ("get", "list", "watch")),
        ("events.k8s.io", "events", ("create", "patch")),
        ("policy", "poddisruptionbudgets", ("get", "list", "watch")),
        # With --queues: the queues' quota, and their status.
        ("scheduling.crdkit.io", "queues", ("get", "list", "watch")),
        ("scheduling.crdkit.io", "queues/status", ("get", "update", "patch")),
        *(rule for api in GROUP_APIS.values() for rule in api.rbac),
    )
    home_rbac: ClassVar[Sequence[RbacRule]] = PUBLISHING_RBAC  # its queue, for crdkit queue

    def __init__(
        self,
        name: str = "crdkit-gang-scheduler",
        levels: Sequence[str] = (),
        options: SchedulerOptions | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        mirror: ClusterMirror | None = None,
        **shorthand: Any,
    ) -> None:
        if not name:
            raise ValueError("name: the scheduler needs the name pods give in spec.schedulerName")
        options = options or SchedulerOptions()
        if shorthand:
            options = options.replace(**shorthand)
        wanted = DEFAULT_POD_GROUP_APIS if options.pod_groups is None else options.pod_groups
        for index, (_, topology) in enumerate(options.topology_by_size):
            level = topology.get("level")
            if level is not None and level not in (*levels, HOSTNAME_LEVEL):
                raise ValueError(
                    f"topology_by_size[{index}]: level {level!r} is not one of the scheduler's "
                    f"levels ({', '.join(levels)})"
                )
        self.options = options
        self.name = name
        self.levels = list(levels)
        self.pod_groups: tuple[GroupApiName, ...] = tuple(
            group_api(api).name  # a ValueError naming pod_groups for an unknown one
            for api in wanted
        )
        # Not "mirror or ...": a mirror with no nodes yet has len() 0 and is falsy.
        self.mirror = (
            mirror
            if mirror is not None
            else ClusterMirror(levels, assume_ttl=options.assume_ttl, clock=clock)
        )
        self._own_mirror = mirror is None
        self.settling = Settling(self.mirror, options.settle_seconds, clock)
        self._clock = clock
        self._wall_clock = wall_clock
        self._queue = GangQueue(clock, options.retry_backoff)
        self._reservations = Reservations(
            self.mirror, self._queue, options.reservations_per_priority, options.max_reservations
        )
        self.reporter = Reporter(
            self.mirror, clock, options.report_backoff, options.explain_refresh
        )
        """Why each gang waits, as last said (read it; the passes change it)."""
        self.outlook = Outlook(self.mirror, options.policy, acting=options.start_plan)
        """Each waiting gang's expected start (`crdkit.scheduling.outlook`)."""
        self._events = GangEvents(
            name, self.mirror, self._queue, self.reporter, self.settling, clock
        )
        self._reads: PodReads | None = None
        """The shared Pod informer's store, read through a decode-once cache (from setup)."""
        self._cycle: Cycle | None = None
        self._dispatcher: Dispatcher | None = None
        self._in_pass = False
        self.metrics: SchedulerMetrics | None = None
        """The queue's metric families (in the manager's registry), once set up."""
        self.last_pass_seconds = 0.0
        """How long the last scheduling pass took: wall time, so it also counts what other
        tasks of the event loop did while the pass awaited the placer."""
        self.bound_gangs = 0
        """Gangs this scheduler bound (for metrics and tests)."""
        self.passes = 0
        self.quota_gate: QueueGate | None = None
        """The queues as the last pass saw them (with `SchedulerOptions.queues`)."""

    @property
    def node_selector(self) -> str | None:
        return self.options.node_selector

    @property
    def policy(self) -> Policy:
        return self.options.policy  # type: ignore[return-value]

    @property
    def pass_pause(self) -> float:
        return self.options.pass_pause

    @property
    def reservations(self) -> dict[GroupRef, DomainReservation]:
        """The reservations held now, by holder (read them; the scheduler changes them)."""
        return self._reservations.held

    # -- wiring ----------------------------------------------------------------------------

    def setup(self, manager: Manager) -> None:
        self.metrics = scheduler_metrics(manager.registry)
        if self._own_mirror:
            self.mirror.attach(manager, node_selector=self.node_selector)
        budgets = manager.informers.informer(PodDisruptionBudget)  # what preemption must keep
        pods = manager.informers.informer(Pod)
        self._reads = reads = PodReads(pods.store)
        rank_rules = RankRuleIndex(pods.store, reads.get, self._events.placed_on, finished)
        podgroups = {api: manager.informers.informer(self._model(api)) for api in self.pod_groups}
        self._events.watch(pods, reads, rank_rules)
        for api, informer in podgroups.items():
            self._events.watch_pod_groups(api, informer, _companions(manager, api))
        reader = GroupReader(
            reads,
            self.mirror,
            lambda api: manager.informers.informer(self._model(api)).store,
            lambda api: manager.informers.informer(_companion(api)).store,
        )
        preemptor = Preemptor(self.mirror, self._reservations, reader, pods.store, budgets.store)
        plugins = (self._queue, self._reservations, self.reporter, self._wall_clock)
        quotas = (
            attach_queues(self.name, manager, self.options, self.mirror, preemptor, reader, plugins)
            if self.options.queues
            else None
        )
        self.quota_gate = None if quotas is None else quotas.gate
        self._cycle = Cycle(
            self.levels,
            self.options,
            self.mirror,
            reader,
            rank_rules,
            (self._queue, self._reservations, preemptor, self.reporter),
            busy=lambda ref: self._dispatcher is not None and self._dispatcher.busy(ref),
            clock=self._clock,
            wall_clock=self._wall_clock,
            pod_end=self._pod_end,
            outlook=self.outlook,
            quotas=quotas,
        )
        binder = Binder(
            manager.client,
            self.mirror,
            concurrency=self.options.bind_concurrency,
            field_manager=self.name,
        )
        recorder = EventRecorder(
            manager.client,
            reporting_controller=f"crdkit.io/{self.name}",
            reporting_instance=manager.identity,
        )
        self._dispatcher = Dispatcher(
            manager.client,
            binder,
            recorder,
            self.mirror,
            pods.store,
            self.reporter,
            later=self._queue.later,
            outcome=self._outcome,
            shutdown_grace=self.options.shutdown_grace,
        )

    def pod_reads(self) -> PodReads:
        assert self._reads is not None, "the scheduler reads pods once it is set up"
        return self._reads

    def _pod_end(self, key: str) -> float | None:
        """The declared end of pod ``key`` (epoch seconds), if it or its queue declares one."""
        pod = self.pod_reads().get(key)
        if pod is None:
            return None
        gate = self.quota_gate  # its queue's maximum, asked only if the pod declares no bound
        queue_bound = None if gate is None else lambda: gate.max_run(self.group_of(pod))
        try:
            return pod_end(pod, self._wall_clock(), queue_bound)
        except ValueError:
            return None

    @staticmethod
    def _model(api: GroupApiName) -> type[Any]:
        model = GROUP_APIS[api].model
        assert model is not None, f"{api} gangs have no PodGroup"
        return model

    def group_of(self, pod: Pod) -> GroupRef | None:
        """The gang ``pod`` belongs to, if this scheduler places it."""
        return self._events.group_of(pod)

    def _outcome(self, outcome: Outcome) -> None:
        """What the apiserver answered a bind or roll-back, back to the queue."""
        match outcome:
            case BindRefused(ref):
                self._queue.back_off(ref)
            case Settled(ref):
                self._queue.mark(ref)
            case Bound(ref):
                self.bound_gangs += 1
                if self.metrics is not None:
                    self.metrics.gangs_bound.labels(self.name).inc()
                self._queue.bound(ref)
                self.reporter.bound(ref)

    # -- running ---------------------------------------------------------------------------

    async def run(self, manager: Manager) -> None:
        pods = manager.informers.informer(Pod)
        self._queue.mark_all(GroupRef.parse(text) for text in pods.store.index_values(GROUP_INDEX))
        self._queue.wake()
        looking = self._look_for_pod_group_apis(manager)
        try:
            while True:
                await self._queue.wait()
                await self.schedule_pass()
                if self.pass_pause > 0:
                    # A pass runs on the event loop; while it ran, watch events queued up. A
                    # pass woken by the first of them would leave the rest waiting again, and
                    # on a busy cluster (a thousand pods ending at once) the scheduler's view
                    # fell seconds behind the apiserver's while nodes sat free.
                    await asyncio.sleep(self.pass_pause * self.last_pass_seconds)
        finally:
            if looking is not None:
                looking.cancel()
                await asyncio.gather(looking, return_exceptions=True)
            if self._dispatcher is not None:
                await self._dispatcher.drain()

    def _look_for_pod_group_apis(self, manager: Manager) -> asyncio.Task[None] | None:
        """With `SchedulerOptions.pod_group_discovery`, a task that watches each PodGroup API
        left out of `pod_groups` from the look that finds the cluster serving it."""
        interval = self.options.pod_group_discovery
        missing = [api for api in POD_GROUP_APIS if api not in self.pod_groups]
        if interval is None or not missing:
            return None

        async def served(api: PodGroupApi) -> None:
            informer = manager.informers.informer(self._model(api))
            self._events.watch_pod_groups(api, informer, _companions(manager, api))
            await manager.informers.start()  # starts the informers not yet running: this one
            self.pod_groups = (*self.pod_groups, api)
            log.info(
                "watching PodGroups of an API served since the scheduler started",
                extra={"fields": {"api": api, "apis": list(self.pod_groups)}},
            )

        return asyncio.create_task(
            watch_for_pod_group_apis(manager.client, missing, interval, served),
            name=f"{self.name}: PodGroup APIs",
        )

    @property
    def idle(self) -> bool:
        """No pass running or due, and no bind or status write in flight: what a test waits
        for before it looks (events still on their way from the apiserver are not seen)."""
        busy = self._dispatcher is not None and self._dispatcher.in_flight
        return not (self._in_pass or self._queue.due or busy)

    async def schedule_pass(self) -> None:
        """One pass over the gangs that changed since the last; see the module docstring."""
        assert self._cycle is not None, "the scheduler passes once it is set up"
        assert self._dispatcher is not None
        started = time.perf_counter()
        self._in_pass = True
        try:
            self.passes += 1
            self.mirror.expire_assumed()
            decisions = await self._cycle.run_pass(self._queue.take())
            count_decisions(self.metrics, self.name, decisions, self._wall_clock())
            if self.metrics is not None:
                self._queue.show(self.metrics, self.name, self._reservations.held.values())
            self._dispatcher.apply(decisions)
        finally:
            self._in_pass = False
            self.last_pass_seconds = time.perf_counter() - started

    @property
    def start_plan(self) -> StartPlan:
        """The starts promised to waiting gangs (`crdkit.scheduling.start_plan`)."""
        return self.outlook.plan

    def queue(self) -> list[tuple[str, int]]:
        """The gangs waiting for room, in the order they are served: ``(gang, priority)``,
        higher priority first, then first to arrive, bigger gangs credited ``size_credit``
        seconds per doubling of their pods (a snapshot; it changes every pass)."""
        return [(str(ref), priority) for ref, priority in self._queue.ordered()]
