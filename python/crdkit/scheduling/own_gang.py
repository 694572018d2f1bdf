"""An operator that makes its own pods and wants them placed whole: one call to place a gang
and create its pods bound, all or nothing, and a watch source that wakes the objects waiting
for room when the cluster's capacity grows.

``GangScheduler`` serves pods other controllers create (PodGroups). An operator that creates
its own pods needs no second scheduler: it asks the placer where the gang goes and creates
every pod with ``spec.nodeName`` set, through the ``Binder`` (rolled back if any create
fails)::

    class TrainingJobReconciler(Reconciler[TrainingJob]):
        rbac = OWN_GANG_RBAC                  # pods: create, delete (the rollback)

        def __init__(self, levels: list[str]) -> None:
            self.mirror = ClusterMirror(levels)

        def setup(self, manager: Manager) -> None:
            self.mirror.attach(manager)       # every Node and Pod: what is free where
            self.gangs = OwnGangs(manager, self, self.mirror)

        async def reconcile(self, ctx: Context, obj: TrainingJob) -> None:
            pods = {"master": [master_pod(obj)], "worker": worker_pods(obj)}
            outcome = await self.gangs.place_and_create(
                ctx.request, obj.metadata.name, pods,
                topology={"mode": "required", "level": "example.com/rack"},
            )
            if not outcome.placed:            # it waits, and is reconciled again when room frees
                ...outcome.explanation.message...

``place_and_create`` places and reserves in one step (no ``await`` between them, so no other
decision of this process hands out the same room), then creates the pods. A request that is
not placed is remembered; when the mirror says capacity may have grown (a node added, a pod
gone or finished), every remembered request is queued once (the work queue merges repeats),
and forgotten until its reconcile waits again. A gang some of whose pods this process placed
already is left alone (the cache may lag behind the creates), and so is a gang whose pods
exist (running or finished: the informer's cache keeps them all); a gang only part of whose
pods exist, none finished, is what an operator killed between two creates leaves, and is
rolled back (its pods deleted) to be placed whole again.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crdkit.client import Conflict, NotFound, Preconditions
from crdkit.placer.policies import DEFAULT_POLICY
from crdkit.resources import Pod
from crdkit.scheduling.assumptions import PodBinding
from crdkit.scheduling.binder import Binder
from crdkit.scheduling.explanation import Explanation, explain
from crdkit.scheduling.gangs import per_node_limits, task_entry
from crdkit.scheduling.mirror import pod_key
from crdkit.scheduling.requests import pod_requests

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from crdkit.placer import Placement
    from crdkit.placer.cluster import Policy
    from crdkit.runtime import Manager, Reconciler, Request
    from crdkit.runtime.controller import Controller
    from crdkit.scheduling.mirror import ClusterMirror

__all__ = [
    "OWN_GANG_RBAC",
    "GangOutcome",
    "OwnGangs",
    "WaitingForCapacity",
    "bindings_for",
    "gang_of",
]

OWN_GANG_RBAC = (("", "pods", ["create", "delete"]),)
"""What creating a gang bound needs beyond watching Pods (the mirror's): create, and delete
for the rollback. Add it to the reconciler's ``rbac``."""


def gang_of(
    name: str,
    pods: Mapping[str, Sequence[Pod]],
    *,
    topology: Mapping[str, Any] | None = None,
    levels: Sequence[str] = (),
    min_available: Mapping[str, int] | None = None,
    priority: int = 0,
) -> dict[str, Any]:
    """The placer's gang for ``pods`` (task name to its pods, all alike): each task's
    requests, node selector and tolerations are its first pod's. ``levels`` resolves Kueue's
    slice annotations; ``min_available`` lowers a task's minimum below its replicas. A
    one-rank-per-node rule of the pods (`crdkit.scheduling.rank_rules`) becomes the task's or
    the gang's ``maxPerNode``; the pods it names that are placed already are the caller's to
    list in ``avoidNodes``.

    ``ValueError`` names the task whose pods differ or a task without pods."""
    tasks = []
    rules = {}
    for task, members in pods.items():
        if not members:
            raise ValueError(f"pods[{task!r}]: a task needs at least one pod")
        keys = set()
        entry: dict[str, Any] = {}
        for pod in members:
            key, entry = task_entry(pod, levels)
            keys.add(key[1:])  # the role aside: the task is named by the caller
        if len(keys) > 1:
            raise ValueError(
                f"pods[{task!r}]: its pods differ in requests, node selector, tolerations, "
                "slice or rank rules; give each kind of pod its own task"
            )
        tasks.append({"name": task, "replicas": len(members), **entry})
        if key[-1]:
            rules[task] = key[-1]
        if min_available and task in min_available:
            tasks[-1]["minAvailable"] = min_available[task]
    unknown = sorted(set(min_available or {}) - set(pods))
    if unknown:
        raise ValueError(f"min_available: no task named {', '.join(unknown)}")
    gang: dict[str, Any] = {"name": name, "priority": priority, "tasks": tasks}
    if per_node_limits(tasks, pods, rules):
        gang["maxPerNode"] = 1
    if topology is not None:
        gang["topology"] = dict(topology)
    return gang


def bindings_for(placement: Placement, pods: Mapping[str, Sequence[Pod]]) -> list[PodBinding]:
    """Each pod of ``pods`` (task name to its pods, in order) paired with a node the placement
    gave its task; with ``status: minimal``, only the first pods of each task are placed."""
    if placement.status == "unschedulable":
        raise ValueError(f"placement of {placement.gang} is unschedulable: nothing to bind")
    given: dict[str, int] = {}
    bindings = []
    for assignment in placement.assignments:
        members = pods.get(assignment.task)
        if members is None:
            raise ValueError(f"pods: no task {assignment.task!r}, which the placement names")
        start = given.get(assignment.task, 0)
        chosen = members[start : start + assignment.count]
        if len(chosen) < assignment.count:
            raise ValueError(
                f"pods[{assignment.task!r}]: {len(members)} pods, fewer than the placement "
                "gives the task"
            )
        given[assignment.task] = start + assignment.count
        for pod in chosen:
            if not pod.metadata.name:
                raise ValueError(f"pods[{assignment.task!r}]: a pod has no metadata.name")
            bindings.append(
                PodBinding(
                    pod.metadata.namespace or "default",
                    pod.metadata.name,
                    assignment.node,
                    pod_requests(pod),
                )
            )
    return bindings


@dataclass(frozen=True)
class GangOutcome:
    """What :meth:`OwnGangs.place_and_create` did: the placement, the pods it created (by
    task), and for a gang that does not fit now, why (``explanation.never_fits``: not ever).
    ``placement`` is ``None`` when the gang's pods were created already (nothing was done)."""

    placement: Placement | None
    created: Mapping[str, Sequence[Pod]]
    explanation: Explanation | None = None

    @property
    def placed(self) -> bool:
        return self.explanation is None


class WaitingForCapacity:
    """Requests of one controller waiting for room, queued again when capacity may have grown.

    ``wait(request)`` remembers it; each capacity event of the mirror queues every remembered
    request once and forgets them (a reconcile that still finds no room waits again)."""

    def __init__(self, mirror: ClusterMirror, controller: Controller[Any]) -> None:
        self._controller = controller
        self._waiting: set[Request] = set()
        mirror.on_capacity_freed(self._freed)

    def wait(self, request: Request) -> None:
        self._waiting.add(request)

    def forget(self, request: Request) -> None:
        self._waiting.discard(request)

    @property
    def waiting(self) -> frozenset[Request]:
        return frozenset(self._waiting)

    def _freed(self) -> None:
        waiting, self._waiting = self._waiting, set()
        for request in waiting:
            self._controller.queue.add(request)


class OwnGangs:
    """Places and creates the gangs of ``reconciler`` (added to ``manager``), and wakes the
    ones that did not fit when room frees. Build it in the reconciler's ``setup``."""

    def __init__(
        self,
        manager: Manager,
        reconciler: Reconciler[Any],
        mirror: ClusterMirror,
        *,
        binder: Binder | None = None,
    ) -> None:
        controller = next((c for c in manager.controllers if c.reconciler is reconciler), None)
        if controller is None:
            raise ValueError(
                f"{type(reconciler).__qualname__} is not added to the manager: build OwnGangs "
                "in its setup()"
            )
        self.mirror = mirror
        self.binder = binder or Binder(manager.client, mirror, field_manager=controller.name)
        self.waiting = WaitingForCapacity(mirror, controller)
        self._pods = manager.informers.informer(Pod)  # the mirror's: every pod, any phase

    async def place_and_create(
        self,
        request: Request,
        name: str,
        pods: Mapping[str, Sequence[Pod]],
        *,
        topology: Mapping[str, Any] | None = None,
        min_available: Mapping[str, int] | None = None,
        priority: int = 0,
        policy: Policy = DEFAULT_POLICY,
    ) -> GangOutcome:
        """Place the gang of ``pods`` and create them bound, all or nothing; or, when it does
        not fit, create nothing, remember ``request`` for when room frees, and say why.

        A failed create rolls every pod of the gang back and raises ``BindError``. A gang any
        of whose pods this process already placed (the cache may not show them yet), or whose
        pods exist, is left alone: ``placement`` is ``None`` and nothing is created. But a gang
        only some of whose pods exist, none finished, fewer than it needs, that this process
        is not creating (an operator killed between its creates left them) is rolled back: its
        pods are deleted, and their deletion brings the owner back to place it whole."""
        keys = [pod_key(p.metadata.namespace, p.metadata.name) for m in pods.values() for p in m]
        if any(self.mirror.is_assumed(key) for key in keys):  # this process is making them
            self.waiting.forget(request)
            return GangOutcome(None, {})
        made = {
            task: [
                seen
                for p in members
                if (
                    seen := self._pods.store.get_by_name(
                        p.metadata.name or "", p.metadata.namespace
                    )
                )
                is not None
            ]
            for task, members in pods.items()
        }
        if any(made.values()) or any(self.mirror.is_counted(key) for key in keys):
            self.waiting.forget(request)
            if _partial(pods, made, min_available):
                # Some of the gang's pods exist, fewer than it needs, none finished, and this
                # process is not making them: an operator that died between the creates of
                # `create_bound` left them (crash case kill-after on a create). Left alone they
                # would hold their nodes for ever, for a gang that never runs: roll them back,
                # and the deletes' events bring the owner back to place the gang whole. The
                # cache may be behind (a restart on a lagging list: the gang whole and running
                # by now), so only what the apiserver says now is judged and deleted.
                await self._roll_back(pods, min_available)
            return GangOutcome(None, {})
        gang = gang_of(
            name,
            pods,
            topology=topology,
            levels=self.mirror.cluster.levels,
            min_available=min_available,
            priority=priority,
        )
        placement = self.mirror.place(gang, policy)
        if placement.status == "unschedulable":
            self.waiting.wait(request)
            return GangOutcome(placement, {}, explain(self.mirror, gang, placement))
        self.waiting.forget(request)
        bindings = bindings_for(placement, pods)
        reservation = self.binder.reserve(bindings)  # before any await: the room is ours
        manifests = dict(zip(keys, (p for m in pods.values() for p in m), strict=True))
        await self.binder.create_bound(reservation, manifests)
        chosen = {b.key for b in bindings}
        created = {
            task: [p for p in members if pod_key(p.metadata.namespace, p.metadata.name) in chosen]
            for task, members in pods.items()
        }
        return GangOutcome(placement, created)

    async def _roll_back(
        self, pods: Mapping[str, Sequence[Pod]], min_available: Mapping[str, int] | None
    ) -> None:
        """Delete the gang's pods if the apiserver, read now, shows the gang partial."""
        client = self.binder.client
        live: dict[str, list[Pod]] = {}
        for task, members in pods.items():
            live[task] = []
            for pod in members:
                with contextlib.suppress(NotFound):
                    live[task].append(
                        await client.get(
                            Pod, pod.metadata.name or "", namespace=pod.metadata.namespace
                        )
                    )
        if not _partial(pods, live, min_available):
            return  # the cache was behind: the gang is whole (or gone)
        for members in live.values():
            for pod in members:
                # Only the pod as read: changed since (it started, another pod took its name),
                # it is judged again on the next reconcile.
                with contextlib.suppress(NotFound, Conflict):
                    await client.delete(
                        Pod,
                        pod.metadata.name or "",
                        namespace=pod.metadata.namespace,
                        grace_period_seconds=0,
                        preconditions=Preconditions(
                            uid=pod.metadata.uid, resource_version=pod.metadata.resource_version
                        ),
                    )


def _partial(
    pods: Mapping[str, Sequence[Pod]],
    made: Mapping[str, Sequence[Pod]],
    min_available: Mapping[str, int] | None,
) -> bool:
    """Whether the gang's pods that exist (``made``, by task) are some, but fewer than a task
    needs, and none has finished: a gang whose pods ran is not what a crash left."""
    if not any(made.values()):
        return False
    if any(
        pod.status is not None and pod.status.phase in ("Succeeded", "Failed")
        for members in made.values()
        for pod in members
    ):
        return False
    return any(
        len(made.get(task, ())) < (min_available or {}).get(task, len(members))
        for task, members in pods.items()
    )
