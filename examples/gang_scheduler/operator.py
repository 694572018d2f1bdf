"""The gang scheduler: a crdkit ``Reconciler`` for Volcano Jobs that places whole gangs at once.

How it keeps its picture of the cluster:

- The Manager's shared informers watch Nodes, Pods (cluster-wide: every pod on a node takes
  capacity, whoever owns it) and PriorityClasses. Their event handlers feed a :class:`NodeUsage`,
  and before every decision the nodes that changed are pushed into the Rust placer ``Cluster``
  (``update_node``): the placer is never rebuilt from scratch.
- Pods are indexed by node (``spec.nodeName``) and by job, so neither question needs a scan.

How it decides:

- A job that carries this scheduler's finalizer (added on its first reconcile, so that deleting
  it always deletes its pods) and has no pods yet is *pending*. A reconcile of a pending job runs
  a scheduling pass over every pending job, in priority then creation order (then namespace and
  name), decided as one ``place_all`` batch on one snapshot of the cluster (each gang sees what
  the earlier ones took); the pod creates and status writes of the whole pass then run
  concurrently, with each job's status writes kept in decision order. A job that does not fit
  is skipped, so smaller jobs behind it may still start (backfill); the next pass tries it
  first again.
- A placed job's pods are counted in ``NodeUsage`` at once (assumed), then created already bound
  to their nodes. If any create fails, the pods created so far are deleted, the assumption is
  dropped, and the job is retried with backoff: all or nothing.
- A job that does not fit gets ``Scheduled=False`` with the placer's reason. It is not polled:
  a node added or changed, a pod deleted or finished, or a PriorityClass added enqueues every
  pending job again, and only then does a new pass run.
- A placed job's status follows its pods (counts and phase); its ``placement`` records the
  domain and every task's nodes.
- Deleting a job runs the finalizer, which deletes the job's pods (no garbage collector runs in
  the local control plane, and this keeps the capacity accounting exact everywhere).

Restarting the operator loses nothing: the informers list the jobs and the pods again; a job
with a recorded placement is placed, a job without pods is pending, and a job with pods but no
recorded placement (its operator stopped mid-bind) is adopted when its gang is complete and
rolled back (its pods deleted, so it is placed afresh) when it is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from crdkit.client import Client, GroupVersionKind, NotFound
from crdkit.placer import Cluster, Placement
from crdkit.resources import Node, Pod
from crdkit.runtime import Condition, Reconciler, Request, Result, set_condition, update_status
from examples.gang_scheduler.gang_request import gang_for_job, pod_requests
from examples.gang_scheduler.job_state import (
    count_pods,
    derive_phase,
    min_available,
    placement_order,
)
from examples.gang_scheduler.models import (
    Job,
    JobPhase,
    JobPlacement,
    JobState,
    JobStatus,
    TaskPlacement,
)
from examples.gang_scheduler.node_usage import NodeUsage, node_snapshot, pod_key, pod_takes_capacity
from examples.gang_scheduler.pods import (
    JOB_NAME_LABEL,
    TASK_LABEL,
    PodPlan,
    plan_pods,
    pod_manifest,
)
from examples.gang_scheduler.topology import TopologyConfig

if TYPE_CHECKING:
    from datetime import datetime

    from crdkit.runtime import Context, Controller, Manager
    from crdkit.runtime.events import EventType
    from crdkit.runtime.informer import Informer

log = logging.getLogger("examples.gang_scheduler")

DEFAULT_SCHEDULER_NAMES = ("volcano", "crdkit-gang-scheduler")
"""Jobs naming one of these (or none) are ours; others are left to their scheduler."""
POD_SCHEDULER_NAME = "crdkit-gang-scheduler"
PRIORITY_CLASS = GroupVersionKind("scheduling.k8s.io", "v1", "PriorityClass")
NODE_INDEX = "field:spec.nodeName"
JOB_INDEX = "gang-scheduler/job"
SCHEDULED = "Scheduled"
CREATE_CONCURRENCY = 32
"""Pod creates in flight at once, across all jobs being bound."""


def job_key(namespace: str | None, name: str | None) -> str:
    return f"{namespace}/{name}"


def _job_of_pod(pod: Any) -> list[str]:
    name = pod.metadata.labels.get(JOB_NAME_LABEL)
    owners = [ref for ref in pod.metadata.owner_references if ref.controller and ref.kind == "Job"]
    if not name or not owners or owners[0].name != name:
        return []
    return [job_key(pod.metadata.namespace, name)]


def _node_of_pod(pod: Any) -> list[str]:
    return [pod.spec.node_name] if pod.spec.node_name else []


class GangScheduler(Reconciler[Job]):
    """Places Volcano Jobs as gangs; see the module docstring. Add it with :meth:`attach`."""

    name = "gang-scheduler"
    finalizer = "batch.volcano.sh/gang-scheduler"
    max_concurrent_reconciles = 8
    """Reconciles of different jobs overlap (finalizers, status); decisions stay serial."""

    def __init__(
        self,
        topology: TopologyConfig,
        *,
        scheduler_names: Sequence[str] = DEFAULT_SCHEDULER_NAMES,
        node_selector: str | None = None,
    ) -> None:
        """``node_selector`` (a label selector) limits the nodes this scheduler places on."""
        self.topology = topology
        self.node_selector = node_selector
        self.scheduler_names = frozenset(scheduler_names)
        self.usage = NodeUsage()
        self.cluster = Cluster(topology.placer_levels)
        self._in_cluster: set[str] = set()
        self.decisions: list[tuple[str, Placement]] = []
        """Every placement this scheduler bound, in order (job key, decision): for audits."""
        self._candidates: set[str] = set()
        """Jobs that, by the Job object alone, wait to be placed (kept from Job events)."""
        self._bound: dict[str, Placement] = {}
        self._decision_seq = 0
        self._latest_decision: dict[str, int] = {}
        self._write_locks: dict[str, asyncio.Lock] = {}
        self._unrecorded: dict[str, tuple[int, Placement, list[PodPlan]]] = {}
        """Bound jobs whose placement could not be written to their status yet."""
        """Jobs this process is binding, until their placement is recorded in their status."""
        self._capacity_version = 0
        self._last_pass: tuple[int, frozenset[str]] | None = None
        self._create_gate = asyncio.Semaphore(CREATE_CONCURRENCY)
        self._deciding = asyncio.Lock()
        """Decisions are made one round at a time; binding runs outside, concurrently."""
        self._controller: Controller[Any] | None = None
        self._jobs: Informer[Any] | None = None
        self._pods: Informer[Any] | None = None
        self._priorities: Informer[Any] | None = None

    # -- wiring ----------------------------------------------------------------------------

    def attach(self, manager: Manager) -> Controller[Any]:
        """Add this reconciler to ``manager`` and hook its node, pod and PriorityClass events."""
        controller = manager.add(self)
        self._controller = controller
        factory = manager.informers
        self._jobs = factory.informer(Job, namespace=manager.namespace)
        nodes = factory.informer(Node, label_selector=self.node_selector)
        self._pods = factory.informer(Pod)
        self._pods.store.add_indexer(NODE_INDEX, _node_of_pod)
        self._pods.store.add_indexer(JOB_INDEX, _job_of_pod)
        self._priorities = factory.informer(PRIORITY_CLASS)
        nodes.add_event_handler(self._node_added, self._node_updated, self._node_deleted)
        self._pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        self._jobs.add_event_handler(
            self._job_seen, lambda _old, new: self._job_seen(new), self._job_gone
        )
        self._priorities.add_event_handler(
            lambda _: self._capacity_changed(), lambda _o, _n: None, lambda _: None
        )
        return controller

    # -- events (run on the event loop, in informer order) ---------------------------------

    def _job_seen(self, job: Job) -> None:
        key = job_key(job.metadata.namespace, job.metadata.name)
        if self._candidate(job):
            self._candidates.add(key)
        else:
            self._candidates.discard(key)

    def _job_gone(self, job: Job) -> None:
        self._candidates.discard(job_key(job.metadata.namespace, job.metadata.name))

    def _node_added(self, node: Node) -> None:
        self.usage.set_node(node)
        name = node.metadata.name or ""
        # Pods already bound there (a node deleted and registered again) count from now on.
        if self._pods is not None:
            for pod in self._pods.store.by_index(NODE_INDEX, name):
                self.usage.set_pod(pod)
        self._capacity_changed()

    def _node_updated(self, old: Node, new: Node) -> None:
        self.usage.set_node(new)
        if node_snapshot(old, {}) != node_snapshot(new, {}):
            self._capacity_changed()

    def _node_deleted(self, node: Node) -> None:
        self.usage.remove_node(node.metadata.name or "")
        self._capacity_changed()

    def _pod_added(self, pod: Pod) -> None:
        # A new pod of a job is one this scheduler created, and counted in the job's status as
        # it did: only later changes (phase, deletion) need the job looked at again.
        self.usage.set_pod(pod)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        self.usage.set_pod(new)
        self._enqueue_owner(new)
        if pod_takes_capacity(old) and not pod_takes_capacity(new):
            self._capacity_changed()

    def _pod_deleted(self, pod: Pod) -> None:
        self.usage.remove_pod(pod_key(pod.metadata.namespace, pod.metadata.name))
        self._enqueue_owner(pod)
        if pod_takes_capacity(pod):
            self._capacity_changed()

    def _enqueue_owner(self, pod: Pod) -> None:
        for key in _job_of_pod(pod):
            namespace, _, name = key.partition("/")
            self._enqueue(Request(namespace, name))

    def _enqueue(self, request: Request) -> None:
        if self._controller is not None:
            self._controller.queue.add(request)

    def _capacity_changed(self) -> None:
        """Something may now fit that did not: every pending job is looked at again."""
        self._capacity_version += 1
        for key in self._waiting_keys():
            namespace, _, name = key.partition("/")
            self._enqueue(Request(namespace, name))

    # -- reading the caches ----------------------------------------------------------------

    # The informer's store decodes an object on every read, so scans go through keys and
    # indexes, and only the jobs that may be pending are ever decoded for a pass.

    def _has_pods(self, key: str) -> bool:
        return self._pods is not None and bool(self._pods.store.index_keys(JOB_INDEX, key))

    def _waiting_keys(self) -> list[str]:
        """Keys of the candidate jobs that are neither being bound nor have pods, sorted."""
        return sorted(
            key for key in self._candidates if key not in self._bound and not self._has_pods(key)
        )

    def _pending_jobs(self) -> list[Job]:
        """The pending jobs, read from the cache."""
        if self._jobs is None:
            return []
        found = (self._jobs.store.get(key) for key in self._waiting_keys())
        return [job for job in found if job is not None and self._candidate(job)]

    def _pods_of(self, job: Job) -> list[Pod]:
        if self._pods is None:
            return []
        return list(
            self._pods.store.by_index(JOB_INDEX, job_key(job.metadata.namespace, job.metadata.name))
        )

    def _ours(self, job: Job) -> bool:
        return (job.spec.scheduler_name or "volcano") in self.scheduler_names

    def _candidate(self, job: Job) -> bool:
        """Whether the Job alone says it waits to be placed (its pods are not looked at)."""
        if not self._ours(job) or job.metadata.deletion_timestamp is not None:
            return False
        if self.finalizer_name() not in job.metadata.finalizers:
            return False  # placed only once deleting it is sure to delete its pods too
        status = job.status
        return status is None or (
            status.placement is None and status.state.phase not in ("Completed", "Failed")
        )

    def _is_pending(self, job: Job) -> bool:
        key = job_key(job.metadata.namespace, job.metadata.name)
        return self._candidate(job) and key not in self._bound and not self._has_pods(key)

    def _priority(self, job: Job) -> int | None:
        """The job's PriorityClass value; 0 without a class; None when the class is missing."""
        name = job.spec.priority_class_name
        if not name:
            return 0
        found = None if self._priorities is None else self._priorities.store.get_by_name(name)
        if found is None:
            return None
        value = found.get("value", 0)
        return int(value) if isinstance(value, int) else 0

    # -- reconcile -------------------------------------------------------------------------

    async def reconcile(self, ctx: Context, obj: Job) -> Result | None:
        if not self._ours(obj):
            return None
        key = job_key(obj.metadata.namespace, obj.metadata.name)
        self._job_seen(obj)  # the cache's event handler may not have run yet
        pods = self._pods_of(obj)
        placed = obj.status is not None and obj.status.placement is not None
        if placed:
            self._bound.pop(key, None)  # bound and recorded: the caches carry it from here
        if self._is_pending(obj):
            await self._schedule_pass(ctx.client)
            return None
        if key in self._bound:
            # This process is binding the job; its status is written once, when the bind is
            # done. Only a record that failed to be written is retried from here.
            unrecorded = self._unrecorded.pop(key, None)
            if unrecorded is not None:
                await self._record(ctx.client, obj, *unrecorded)
            return None
        if pods and not placed:
            await self._adopt(ctx.client, obj, pods)
            return None
        await self._observe(ctx.client, obj, pods)
        return None

    async def _record(
        self, client: Client, job: Job, seq: int, placement: Placement, plans: list[PodPlan]
    ) -> None:
        """Write the placed job's status; on failure keep it to be retried by its reconcile."""
        key = job_key(job.metadata.namespace, job.metadata.name)
        try:
            await self._write_placed(client, job, seq, placement, plans)
        except Exception:
            self._unrecorded[key] = (seq, placement, plans)
            raise

    async def _adopt(self, client: Client, job: Job, pods: Sequence[Pod]) -> None:
        """Pods without a recorded placement were left by an operator that stopped mid-bind.

        A complete gang is kept and its placement recorded from where its pods are; an
        incomplete one is rolled back (its pods deleted), which makes the job pending again.
        """
        counts = count_pods(pods)
        if counts.bound + counts.succeeded < min_available(job):
            log.warning(
                "%s has an incomplete gang of %d pods; deleting them", job.metadata.name, len(pods)
            )
            await self._delete_pods(
                client, job.metadata.namespace or "", [p.metadata.name or "" for p in pods]
            )
            return
        tasks: dict[str, list[str]] = {}
        for pod in sorted(pods, key=lambda p: p.metadata.name or ""):
            task = pod.metadata.labels.get(TASK_LABEL, "")
            tasks.setdefault(task, []).append(pod.spec.node_name or "")
        record = JobPlacement(tasks=[TaskPlacement(name=t, nodes=n) for t, n in tasks.items()])
        for tier, label in enumerate(self.topology.tier_labels, start=1):
            values = {self._node_label(node, label) for nodes in tasks.values() for node in nodes}
            if len(values) == 1 and None not in values:
                record.tier = tier
                record.domain_name = values.pop()
                break
        if record.tier is not None:
            first = next(iter(tasks.values()))[0]
            record.domain = {
                label: self._node_label(first, label) or ""
                for label in self.topology.tier_labels[record.tier - 1 :]
            }

        def change(status: JobStatus) -> None:
            status.placement = record
            status.min_available = min_available(job)
            set_condition(
                status.conditions,
                Condition(
                    type=SCHEDULED,
                    status="True",
                    reason="Scheduled",
                    message=f"{len(pods)} pods found bound",
                ),
            )

        await self._write(client, job, change)

    def _node_label(self, node: str, label: str) -> str | None:
        found = self.usage.nodes.get(node)
        return None if found is None else found.metadata.labels.get(label)

    async def finalize(self, ctx: Context, obj: Job) -> None:
        """Delete every pod of the job before the job goes."""
        key = job_key(obj.metadata.namespace, obj.metadata.name)
        names = {pod.metadata.name or "" for pod in self._pods_of(obj)}
        placement = self._bound.get(key)
        if placement is not None:
            names |= {plan.name(obj.metadata.name or "") for plan in plan_pods(placement)}
        await self._delete_pods(ctx.client, obj.metadata.namespace or "", sorted(names))
        self._bound.pop(key, None)
        self._unrecorded.pop(key, None)
        self._latest_decision.pop(key, None)
        self._write_locks.pop(key, None)

    # -- placing ---------------------------------------------------------------------------

    def _sync_cluster(self) -> None:
        changed, removed = self.usage.take_changes()
        for name in removed:
            if name in self._in_cluster:
                self.cluster.remove_node(name)
                self._in_cluster.discard(name)
        for snapshot in changed:
            if snapshot["name"] in self._in_cluster:
                self.cluster.update_node(snapshot)
            else:
                self.cluster.add_node(snapshot)
                self._in_cluster.add(snapshot["name"])

    async def _schedule_pass(self, client: Client) -> None:
        """Decide every pending job in order, then make the decisions real, concurrently.

        Deciding is one placer batch under a lock (two rounds never hand out the same room, and
        each round's placements are counted before the lock is released); the API calls that
        follow (pod creates, status writes) are what take time, so all jobs' calls run together.
        """
        async with self._deciding:
            work = await self._decide(client)
        results = await asyncio.gather(*work, return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            raise failures[0]  # the controller retries with backoff; rolled-back jobs are pending

    async def _decide(self, client: Client) -> list[Coroutine[Any, Any, None]]:
        """One decision round under the lock: what to bind and what to report."""
        work: list[Coroutine[Any, Any, None]] = []
        pending = self._pending_jobs()
        keys = frozenset(job_key(j.metadata.namespace, j.metadata.name) for j in pending)
        if self._last_pass == (self._capacity_version, keys):
            return work  # nothing changed since the last pass looked at these same jobs
        self._last_pass = (self._capacity_version, keys)
        ranked: list[tuple[Job, int]] = []
        for job in pending:
            priority = self._priority(job)
            if priority is None:
                message = f"PriorityClass {job.spec.priority_class_name!r} does not exist"
                seq = self._decided(job)
                work.append(
                    self._write_unscheduled(client, job, seq, "PriorityClassNotFound", message)
                )
                continue
            ranked.append((job, priority))
        gangs: list[Any] = []  # compiled gangs (crdkit._placer.Gang), placed as they are
        jobs: dict[str, Job] = {}
        priorities = {id(job): priority for job, priority in ranked}
        for job in placement_order(ranked):
            try:
                gang = gang_for_job(job, self.topology, priorities[id(job)])
                compiled = self.cluster.compile(gang)  # a bad gang must not fail the whole batch
            except ValueError as error:
                seq = self._decided(job)
                work.append(self._write_failed(client, job, seq, "InvalidSpec", str(error)))
                continue
            gangs.append(compiled)
            jobs[gang["name"]] = job
        if not gangs:
            return work
        # One batch on one snapshot, off the event loop: higher priority first, each gang
        # seeing what the earlier ones took. Nothing changes the snapshot while it runs.
        self._sync_cluster()
        for placement in await self.cluster.place_all_async(gangs):
            job = jobs[placement.gang]
            if placement.status == "unschedulable":
                reason = placement.reason or "the placer found no room"
                seq = self._decided(job)
                work.append(self._write_unscheduled(client, job, seq, "Unschedulable", reason))
                continue
            seq = self._decided(job)
            work.append(self._bind(client, job, seq, placement, self._assume(job, placement)))
            self._capacity_version += 1  # the next pass must see this job's pods
        return work

    def _assume(self, job: Job, placement: Placement) -> list[PodPlan]:
        """Count the placement's pods on their nodes now, before they exist."""
        name = job.metadata.name or ""
        namespace = job.metadata.namespace or ""
        plans = plan_pods(placement)
        requests = {task.name: pod_requests(task.pod_template().spec) for task in job.spec.tasks}
        for plan in plans:
            self.usage.assume(pod_key(namespace, plan.name(name)), plan.node, requests[plan.task])
        self._bound[job_key(namespace, name)] = placement
        return plans

    async def _bind(
        self, client: Client, job: Job, seq: int, placement: Placement, plans: list[PodPlan]
    ) -> None:
        """Create the assumed pods, bound; on any failure delete them and drop the assumption."""
        name = job.metadata.name or ""
        namespace = job.metadata.namespace or ""
        key = job_key(namespace, name)
        created: list[str] = []

        async def create(plan: PodPlan) -> None:
            async with self._create_gate:
                await client.create(pod_manifest(job, plan, POD_SCHEDULER_NAME))
                created.append(plan.name(name))

        try:
            async with asyncio.TaskGroup() as group:
                for plan in plans:
                    group.create_task(create(plan))
        except BaseException:
            log.warning(
                "creating the pods of %s failed; deleting the %d created", key, len(created)
            )
            with contextlib.suppress(Exception):
                await self._delete_pods(client, namespace, created)
            for plan in plans:
                self.usage.remove_pod(pod_key(namespace, plan.name(name)))
            self._bound.pop(key, None)
            self._capacity_version += 1
            raise
        self.decisions.append((key, placement))
        await self._record(client, job, seq, placement, plans)

    async def _delete_pods(self, client: Client, namespace: str, names: Iterable[str]) -> None:
        async def delete(pod: str) -> None:
            with contextlib.suppress(NotFound):
                # No kubelet confirms a graceful deletion here: remove the pod at once.
                await client.delete(Pod, pod, namespace=namespace, grace_period_seconds=0)
            self.usage.remove_pod(pod_key(namespace, pod))

        async with asyncio.TaskGroup() as group:
            for pod in names:
                group.create_task(delete(pod))

    # -- status ----------------------------------------------------------------------------

    def _placement_status(self, placement: Placement, plans: Sequence[PodPlan]) -> JobPlacement:
        # The placer's domain runs from the widest level down to where the pods are (a single
        # node's hostname, even); the job reports it in tiers, the narrowest tier naming it.
        labels = self.topology.tier_labels
        domain = {label: value for label, value in placement.domain.items() if label in labels}
        tier = min((self.topology.tier_of_label(label) for label in domain), default=None)
        tasks: dict[str, list[str]] = {}
        for plan in plans:
            tasks.setdefault(plan.task, []).append(plan.node)
        return JobPlacement(
            tier=tier,
            domain=domain,
            domain_name=None if tier is None else domain[self.topology.label_for_tier(tier)],
            tasks=[TaskPlacement(name=task, nodes=nodes) for task, nodes in tasks.items()],
        )

    async def _write(self, client: Client, job: Job, change: Any) -> None:
        def mutate(latest: Job) -> None:
            if latest.status is None:
                latest.status = JobStatus()
            change(latest.status)

        with contextlib.suppress(NotFound):  # deleted meanwhile: nothing to report on
            await update_status(client, job, mutate=mutate, field_manager=self.name)

    async def _write_placed(
        self, client: Client, job: Job, seq: int, placement: Placement, plans: Sequence[PodPlan]
    ) -> None:
        record = self._placement_status(placement, plans)
        if record.tier is None:
            message = f"{len(plans)} pods bound across zones"
        else:
            label = self.topology.label_for_tier(record.tier)
            message = f"{len(plans)} pods bound under {label}={record.domain_name}"

        def change(status: JobStatus) -> None:
            status.placement = record
            status.min_available = min_available(job)
            status.pending = len(plans)
            _set_phase(status, "Running", "Scheduled", message)
            set_condition(
                status.conditions,
                Condition(type=SCHEDULED, status="True", reason="Scheduled", message=message),
            )

        await self._write_decision(client, job, seq, change, ("Normal", "Scheduled", message))

    async def _event(self, job: Job, type_: EventType, reason: str, note: str) -> None:
        """An Event about the job, as kube-scheduler records one per decision (never raises)."""
        if self._controller is not None:
            await self._controller.recorder.event(job, type_, reason, note, action="Scheduling")

    async def _write_unscheduled(
        self, client: Client, job: Job, seq: int, reason: str, message: str
    ) -> None:
        current = job.status
        if current is not None:
            existing = next((c for c in current.conditions if c.type == SCHEDULED), None)
            if existing is not None and (existing.status, existing.reason, existing.message) == (
                "False",
                reason,
                message,
            ):
                return  # already says so: no write, no event storm

        def change(status: JobStatus) -> None:
            status.min_available = min_available(job)
            _set_phase(status, "Pending", reason, message)
            set_condition(
                status.conditions,
                Condition(type=SCHEDULED, status="False", reason=reason, message=message),
            )

        await self._write_decision(
            client, job, seq, change, ("Warning", "FailedScheduling", message)
        )

    async def _write_failed(
        self, client: Client, job: Job, seq: int, reason: str, message: str
    ) -> None:
        def change(status: JobStatus) -> None:
            _set_phase(status, "Failed", reason, message)
            set_condition(
                status.conditions,
                Condition(type=SCHEDULED, status="False", reason=reason, message=message),
            )

        await self._write_decision(client, job, seq, change, ("Warning", reason, message))

    def _decided(self, job: Job) -> int:
        """Number a decision about ``job``; only the latest one's status write may land."""
        self._decision_seq += 1
        self._latest_decision[job_key(job.metadata.namespace, job.metadata.name)] = (
            self._decision_seq
        )
        return self._decision_seq

    async def _write_decision(
        self,
        client: Client,
        job: Job,
        seq: int,
        change: Any,
        event: tuple[EventType, str, str],
    ) -> None:
        """Write a decision's status, in decision order per job.

        The writes of one decision round run concurrently with the next round's, so an older
        verdict could land after a newer one. One lock per job orders them, and a write whose
        decision has been superseded is dropped.
        """
        key = job_key(job.metadata.namespace, job.metadata.name)
        async with self._write_locks.setdefault(key, asyncio.Lock()):
            if self._latest_decision.get(key) != seq:
                return
            await self._write(client, job, change)
        await self._event(job, *event)

    async def _observe(self, client: Client, job: Job, pods: Sequence[Pod]) -> None:
        """Bring the counts and the phase of a placed job in line with its pods."""
        counts = count_pods(pods)
        phase = derive_phase(job, counts)
        status = job.status or JobStatus()
        if status.state.phase in ("Completed", "Failed"):
            phase = status.state.phase  # terminal phases stay
        wanted = (phase, counts.pending, counts.running, counts.succeeded, counts.failed)
        have = (status.state.phase, status.pending, status.running, status.succeeded, status.failed)
        if wanted == have:
            return

        def change(latest: JobStatus) -> None:
            latest.pending, latest.running = counts.pending, counts.running
            latest.succeeded, latest.failed = counts.succeeded, counts.failed
            if latest.state.phase != phase:
                _set_phase(
                    latest, phase, phase, f"{counts.succeeded} succeeded, {counts.failed} failed"
                )

        await self._write(client, job, change)


def _set_phase(
    status: JobStatus, phase: JobPhase, reason: str, message: str, now: datetime | None = None
) -> None:
    from datetime import UTC, datetime

    if status.state.phase != phase or status.state.last_transition_time is None:
        stamp = (now or datetime.now(UTC)).replace(microsecond=0)
        status.state = JobState(
            phase=phase, reason=reason, message=message, last_transition_time=stamp
        )
    else:
        status.state.reason, status.state.message = reason, message
