"""The Volcano Job controller: policy only; `crdkit.scheduling.GangScheduler` does the placing.

For each Job it owns (``spec.schedulerName`` one of ``scheduler_names``, or none), the reconciler:

- creates the Job's pods, unbound (`pods.py`): they name the in-process scheduler and the
  Job's PodGroup, so the scheduler places and binds them as one gang;
- applies a Volcano ``PodGroup`` of the Job's name, owned by it: ``minMember`` from the Job's
  minAvailable rule, ``minTaskMember`` per task (`gang_request.py`), and ``networkTopology``,
  ``priorityClassName`` and ``queue`` copied from the Job. The pods come first, so the
  scheduler sees the whole gang at once rather than counting it up pod by pod;
- reports the Job's status from its pods and PodGroup (`job_state.py`): phase and counts, the
  ``Scheduled`` condition (the PodGroup's ``Unschedulable`` reason while the gang waits) and,
  once ``minAvailable`` pods are bound, the ``placement``: domain and each task's nodes, read
  from the pods' nodes and the nodes' labels in the manager's shared cache;
- names, in the Job's ``Honored`` condition (``reason: NotHonored``), every field the Job sets
  that this controller does not act on (`honored.py`): they are kept, not acted on.

`setup` adds the `GangScheduler` (levels: the tier labels widest first, so that a Job's tier 1
is the same label for both) to the manager, unless ``run_scheduler`` is False: then the pods
name a scheduler that runs elsewhere (a platform's ``crdkit scheduler --name NAME``, which reads
Volcano PodGroups too), and one scheduler keeps the books of the nodes it shares with other
controllers' jobs (two gang schedulers on the same nodes can both take the same free GPUs: see
docs/guides/recipes/volcano-jobs.md). It keeps the cluster's usage, places gangs in
priority order, binds them all or nothing, rolls back a failed bind, writes the PodGroup's
status and the pods' ``FailedScheduling``/``Scheduled`` Events, and after a restart adopts or
rolls back gangs it finds partly bound (this controller then recreates what was deleted).

Deleting a Job runs its finalizer, which deletes the Job's pods and PodGroup (no garbage
collector runs in the local control plane; this frees their capacity at once everywhere).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crdkit.client import AlreadyExists, KubernetesError, NotFound
from crdkit.resources import Node, Pod
from crdkit.runtime import REASON_PATTERN, Condition, Reconciler, Result, Watch, update_status
from crdkit.scheduling import GangScheduler, VolcanoPodGroup, tier_level
from examples.gang_scheduler.gang_request import task_minimums
from examples.gang_scheduler.honored import HONORED, NOT_HONORED, honored_message, not_honored
from examples.gang_scheduler.job_conditions import find_job_condition, set_job_condition
from examples.gang_scheduler.job_state import count_pods, derive_phase, min_available, placement_of
from examples.gang_scheduler.models import Job, JobPhase, JobPlacement, JobState, JobStatus
from examples.gang_scheduler.pods import JOB_NAME_LABEL, pod_manifests
from examples.gang_scheduler.topology import TopologyConfig

if TYPE_CHECKING:
    from crdkit.runtime import Context, EventType, Manager

log = logging.getLogger("examples.gang_scheduler")

DEFAULT_SCHEDULER_NAMES = ("volcano", "crdkit-gang-scheduler")
"""Jobs naming one of these (or none) are ours; others are left to their scheduler."""
POD_SCHEDULER_NAME = "crdkit-gang-scheduler"
"""The in-process `GangScheduler`'s name, in every pod's ``spec.schedulerName``."""
SCHEDULED = "Scheduled"
CREATE_CONCURRENCY = 32
"""Pod creates in flight at once, across all Jobs."""
TERMINAL: frozenset[str] = frozenset({"Completed", "Failed"})


def podgroup_spec(job: Job) -> dict[str, Any]:
    """The Volcano PodGroup ``spec`` for ``job`` (JSON field names)."""
    spec: dict[str, Any] = {
        "minMember": min_available(job),
        "minTaskMember": task_minimums(job),
    }
    if job.spec.queue:
        spec["queue"] = job.spec.queue
    if job.spec.priority_class_name:
        spec["priorityClassName"] = job.spec.priority_class_name
    network = job.spec.network_topology
    if network is not None:
        topology: dict[str, Any] = {"mode": network.mode}
        if network.mode == "hard":
            topology["highestTierAllowed"] = network.tier
        spec["networkTopology"] = topology
    return spec


def honored_condition(job: Job) -> Condition:
    """The ``Honored`` condition: ``False`` (``NotHonored``) naming the fields ``job`` sets
    that this controller keeps but does not act on, else ``True``."""
    ignored = not_honored(job)
    return Condition(
        type=HONORED,
        status="False" if ignored else "True",
        reason=NOT_HONORED if ignored else HONORED,
        message=honored_message(ignored),
        observed_generation=job.metadata.generation,
        last_transition_time=datetime.now(UTC).replace(microsecond=0),  # kept unless it flips
    )


def check_tiers(topology: TopologyConfig, levels: Sequence[str]) -> None:
    """Raise ``ValueError`` unless every tier of ``topology`` is the same label for the
    scheduler's ``levels`` as for the example (Volcano numbers tiers from the narrowest)."""
    for tier in range(1, topology.tiers + 1):
        theirs = tier_level(levels, tier, "levels")
        if theirs != topology.label_for_tier(tier):
            raise ValueError(
                f"tier {tier}: the scheduler reads it as {theirs!r}, the topology as "
                f"{topology.label_for_tier(tier)!r} (is kubernetes.io/hostname a tier label?)"
            )


class VolcanoJobReconciler(Reconciler[Job]):
    """Volcano Jobs to PodGroups and pods; see the module docstring. ``manager.add`` it."""

    name = "volcano-job"
    finalizer = "batch.volcano.sh/gang-scheduler"
    max_concurrent_reconciles = 8
    watches = (Watch(Pod), Watch(VolcanoPodGroup))
    """Owned pods and PodGroups (full objects, read back through the cache) wake their Job."""
    runnables = (GangScheduler,)
    rbac = (
        ("", "pods", ("create", "delete", "list")),
        ("scheduling.volcano.sh", "podgroups", ("create", "patch", "delete")),
    )

    def __init__(
        self,
        topology: TopologyConfig,
        *,
        scheduler_names: Sequence[str] = DEFAULT_SCHEDULER_NAMES,
        pod_scheduler_name: str = POD_SCHEDULER_NAME,
        node_selector: str | None = None,
        run_scheduler: bool = True,
    ) -> None:
        """``pod_scheduler_name`` goes into every pod's ``spec.schedulerName``; a Job naming it
        is ours too. With ``run_scheduler`` (the default) the reconciler runs that scheduler
        in process; ``node_selector`` (a label selector) limits the nodes it places on. Without
        it ``scheduler`` is None and the pods wait for a scheduler of that name elsewhere,
        whose ``--levels`` must be the tier labels widest first (`TopologyConfig.placer_levels`)
        for a Job's tier to mean the same label there."""
        if not run_scheduler and node_selector is not None:
            # Nothing here would read it: the nodes are the other scheduler's to choose.
            raise ValueError("node_selector: only the in-process scheduler reads it")
        self.topology = topology
        self.scheduler_names = frozenset((*scheduler_names, pod_scheduler_name))
        self.pod_scheduler_name = pod_scheduler_name
        check_tiers(topology, topology.placer_levels)
        self.scheduler: GangScheduler | None = None
        if run_scheduler:
            self.scheduler = GangScheduler(
                pod_scheduler_name,
                topology.placer_levels,
                pod_groups=("volcano",),
                node_selector=node_selector,
            )
        self._create_gate = asyncio.Semaphore(CREATE_CONCURRENCY)

    def setup(self, manager: Manager) -> None:
        if self.scheduler is not None:
            manager.add_runnable(self.scheduler)

    def _ours(self, job: Job) -> bool:
        return (job.spec.scheduler_name or "volcano") in self.scheduler_names

    # -- reconcile -------------------------------------------------------------------------

    async def reconcile(self, ctx: Context, obj: Job) -> Result | None:
        if not self._ours(obj):
            return None
        try:
            self._validate(obj)
        except ValueError as error:
            await self._write(ctx, obj, _failed("InvalidSpec", str(error)))
            return None
        pods = await self._pods_of(ctx, obj)
        terminal = obj.status is not None and obj.status.state.phase in TERMINAL
        if not terminal:
            try:
                await self._create_missing(ctx, obj, pods)
            except KubernetesError as error:
                await self._write(ctx, obj, _waiting("PodCreateFailed", str(error)))
                raise
            await self._ensure_podgroup(ctx, obj)
        podgroup = await _cached(ctx, VolcanoPodGroup, obj.metadata.name, obj.metadata.namespace)
        await self._observe(ctx, obj, pods, podgroup)
        return None

    def _validate(self, job: Job) -> None:
        if not job.spec.tasks:
            raise ValueError("spec.tasks: the Job has no tasks; there is nothing to place")
        if not any(task.replicas for task in job.spec.tasks):
            raise ValueError("spec.tasks: every task has 0 replicas; there is nothing to place")
        network = job.spec.network_topology
        if network is not None and network.mode == "hard":
            self.topology.label_for_tier(network.tier, "spec.networkTopology.highestTierAllowed")

    async def _pods_of(self, ctx: Context, job: Job) -> list[Pod]:
        """The job's pods in the cache: its label, and the job as controlling owner."""
        found = await ctx.cache.list(
            Pod,
            namespace=job.metadata.namespace,
            label_selector=f"{JOB_NAME_LABEL}={job.metadata.name}",
        )
        return [
            pod
            for pod in found.items
            if any(
                ref.controller and ref.uid == job.metadata.uid
                for ref in pod.metadata.owner_references
            )
        ]

    async def _create_missing(self, ctx: Context, job: Job, pods: Sequence[Pod]) -> None:
        have = {pod.metadata.name for pod in pods}
        missing = [
            m
            for m in pod_manifests(job, self.pod_scheduler_name)
            if m["metadata"]["name"] not in have
        ]

        async def create(manifest: dict[str, Any]) -> None:
            async with self._create_gate:
                with contextlib.suppress(AlreadyExists):  # the cache had not seen it yet
                    await ctx.client.create(manifest)

        if missing:
            async with asyncio.TaskGroup() as group:
                for manifest in missing:
                    group.create_task(create(manifest))

    async def _ensure_podgroup(self, ctx: Context, job: Job) -> None:
        wanted = podgroup_spec(job)
        current = await _cached(ctx, VolcanoPodGroup, job.metadata.name, job.metadata.namespace)
        if current is not None:
            have = current.spec.model_dump(by_alias=True, exclude_none=True, mode="json")
            if all(have.get(key) == value for key, value in wanted.items()):
                return
        podgroup = VolcanoPodGroup.model_validate(
            {
                "metadata": {"name": job.metadata.name, "namespace": job.metadata.namespace},
                "spec": wanted,
            }
        )
        await ctx.apply(podgroup)

    async def _observe(
        self, ctx: Context, job: Job, pods: Sequence[Pod], podgroup: VolcanoPodGroup | None
    ) -> None:
        """Bring the Job's status in line with its pods and PodGroup."""
        counts = count_pods(pods)
        needed = min_available(job)
        bound = [pod for pod in pods if pod.spec.node_name]
        status = job.status or JobStatus()
        phase: JobPhase = derive_phase(job, counts)
        if status.state.phase in TERMINAL:
            phase = status.state.phase  # terminal phases stay
        placement: JobPlacement | None = status.placement if phase in TERMINAL else None
        now = datetime.now(UTC).replace(microsecond=0)  # the time if Scheduled flips
        if len(bound) >= needed:
            placement = placement_of(job, bound, await _node_labels(ctx, bound), self.topology)
            scheduled = Condition(
                type=SCHEDULED,
                status="True",
                reason="Scheduled",
                message=self._where(len(bound), placement),
                last_transition_time=now,
            )
        else:
            reason, message = _waiting_reason(podgroup)
            scheduled = Condition(
                type=SCHEDULED,
                status="False",
                reason=reason,
                message=message,
                last_transition_time=now,
            )
        if phase == "Pending":
            why = (scheduled.reason, scheduled.message)
        elif phase == "Running":
            why = ("Scheduled", scheduled.message)
        else:
            why = (phase, f"{counts.succeeded} succeeded, {counts.failed} failed")

        honored = honored_condition(job)

        def change(latest: JobStatus) -> None:
            latest.min_available = needed
            latest.pending, latest.running = counts.pending, counts.running
            latest.succeeded, latest.failed = counts.succeeded, counts.failed
            latest.placement = placement
            latest.observed_generation = job.metadata.generation
            _set_phase(latest, phase, *why)
            set_job_condition(latest.conditions, scheduled)
            set_job_condition(latest.conditions, honored)

        before = find_job_condition(status.conditions, SCHEDULED)
        event: tuple[EventType, str, str] | None = None
        if before is None or (before.status, before.message) != (
            scheduled.status,
            scheduled.message,
        ):
            event = (
                ("Normal", "Scheduled", scheduled.message)
                if scheduled.status == "True"
                else ("Warning", "FailedScheduling", scheduled.message)
            )
        if await self._write(ctx, job, change) and event is not None:
            await ctx.event(*event, action="Scheduling")

    def _where(self, bound: int, placement: JobPlacement) -> str:
        if placement.tier is None:
            return f"{bound} pods bound across zones"
        label = self.topology.label_for_tier(placement.tier)
        return f"{bound} pods bound under {label}={placement.domain_name}"

    async def _write(self, ctx: Context, job: Job, change: Callable[[JobStatus], None]) -> bool:
        """Apply ``change`` to the status; write only if it changes something. Whether it did."""
        current = job.status or JobStatus()
        probe = current.model_copy(deep=True)
        change(probe)
        if probe == current and job.status is not None:
            return False

        def mutate(latest: Job) -> None:
            if latest.status is None:
                latest.status = JobStatus()
            change(latest.status)

        with contextlib.suppress(NotFound):  # deleted meanwhile: nothing to report on
            await update_status(ctx.client, job, mutate=mutate, field_manager=self.name)
            return True
        return False

    # -- deletion --------------------------------------------------------------------------

    async def finalize(self, ctx: Context, obj: Job) -> None:
        """Delete the job's pods and its PodGroup before the job goes."""
        namespace = obj.metadata.namespace or ""
        # From the API, not the cache: a pod created a moment ago must not be left behind.
        listed = await ctx.client.list(
            Pod, namespace=namespace, label_selector=f"{JOB_NAME_LABEL}={obj.metadata.name}"
        )
        owned = [
            pod.metadata.name or ""
            for pod in listed.items
            if any(ref.uid == obj.metadata.uid for ref in pod.metadata.owner_references)
        ]

        async def delete(name: str) -> None:
            with contextlib.suppress(NotFound):
                # No kubelet confirms a graceful deletion here: remove the pod at once.
                await ctx.client.delete(Pod, name, namespace=namespace, grace_period_seconds=0)

        async with asyncio.TaskGroup() as group:
            for name in owned:
                group.create_task(delete(name))
        with contextlib.suppress(NotFound):
            await ctx.client.delete(VolcanoPodGroup, obj.metadata.name or "", namespace=namespace)


async def _cached(ctx: Context, kind: type[Any], name: str | None, namespace: str | None) -> Any:
    try:
        return await ctx.cache.get(kind, name or "", namespace=namespace)
    except NotFound:
        return None


async def _node_labels(ctx: Context, pods: Sequence[Pod]) -> dict[str, dict[str, str]]:
    labels: dict[str, dict[str, str]] = {}
    for name in {pod.spec.node_name or "" for pod in pods}:
        node = await _cached(ctx, Node, name, None)
        if node is not None:
            labels[name] = dict(node.metadata.labels)
    return labels


def _waiting_reason(podgroup: VolcanoPodGroup | None) -> tuple[str, str]:
    """Why the gang is not bound yet, as its PodGroup says (or that nothing has said yet)."""
    if podgroup is None:
        return "Pending", "waiting for the PodGroup to be created"
    conditions = podgroup.status.conditions if podgroup.status else None
    for condition in conditions or ():
        if condition.type == "Unschedulable" and condition.status == "True":
            reason = condition.reason or "Unschedulable"
            if not re.fullmatch(REASON_PATTERN, reason):  # Volcano's reasons are free text
                reason = "Unschedulable"
            return reason, (condition.message or "")[:32768]
    return "Pending", "waiting for the gang scheduler"


def _not_scheduled(status: JobStatus, phase: JobPhase, reason: str, message: str) -> None:
    """The phase, and a Scheduled condition that is False for ``reason``."""
    _set_phase(status, phase, reason, message)
    set_job_condition(
        status.conditions,
        Condition(
            type=SCHEDULED,
            status="False",
            reason=reason,
            message=message[:32768],
            last_transition_time=datetime.now(UTC).replace(microsecond=0),
        ),
    )


def _waiting(reason: str, message: str) -> Callable[[JobStatus], None]:
    def change(status: JobStatus) -> None:
        _not_scheduled(status, status.state.phase, reason, message)

    return change


def _failed(reason: str, message: str) -> Callable[[JobStatus], None]:
    def change(status: JobStatus) -> None:
        _not_scheduled(status, "Failed", reason, message)

    return change


def _set_phase(status: JobStatus, phase: JobPhase, reason: str, message: str) -> None:
    if status.state.phase != phase or status.state.last_transition_time is None:
        stamp = datetime.now(UTC).replace(microsecond=0)
        status.state = JobState(
            phase=phase, reason=reason, message=message, last_transition_time=stamp
        )
    else:
        status.state.reason, status.state.message = reason, message
