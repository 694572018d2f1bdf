"""A TrainingJob gets a master pod and N worker pods, placed together under one rack or not at
all: the operator asks the placer where the whole gang fits and creates every pod already
bound there (``OwnGangs``). A job that does not fit creates nothing, says why in its status,
and is reconciled again as soon as the cluster's capacity grows.

    crdkit gen-crd examples.training_job.operator:TrainingJob
    crdkit gen-rbac examples.training_job.operator:TrainingJobReconciler \\
        --option levels=example.com/block,example.com/rack
    crdkit run examples.training_job.operator:TrainingJobReconciler \\
        --option levels=example.com/block,example.com/rack

The scheduling part is the lines marked ``# gang``; the rest is the operator's own policy.
"""

from __future__ import annotations

import contextlib
from typing import Literal

from pydantic import Field

from crdkit import Context, Reconciler
from crdkit.client import NotFound, Preconditions
from crdkit.resources import (
    ApiModel,
    Container,
    CustomResource,
    ObjectMeta,
    Pod,
    PodSpec,
    ResourceRequirements,
)
from crdkit.runtime import Manager, Result, set_controller_reference
from crdkit.scheduling import (
    OWN_GANG_RBAC,
    ClusterMirror,
    OwnGangs,
    bindings_for,
    gang_of,
    pod_key,
)

JOB_LABEL = "ml.example.com/job"
AGAIN = Result(requeue_after=1.0)


class TrainingJobSpec(ApiModel):
    image: str = Field(min_length=1)
    workers: int = Field(ge=0, le=1024)
    gpus_per_pod: int = Field(default=8, ge=0)
    rack_level: str = "example.com/rack"
    """The node label whose domains the whole job must fit inside."""


class TrainingJobStatus(ApiModel):
    phase: Literal["Waiting", "Placed", "NeverFits"] = "Waiting"
    message: str = ""
    rack: str | None = None


class TrainingJob(CustomResource, group="ml.example.com", version="v1", kind="TrainingJob"):
    spec: TrainingJobSpec
    status: TrainingJobStatus | None = None


class TrainingJobReconciler(Reconciler[TrainingJob]):
    owns = (Pod,)
    rbac = OWN_GANG_RBAC  # gang: create its pods bound, delete them if the gang fails

    def __init__(self, levels: list[str], node_selector: str | None = None) -> None:
        self.levels = levels
        self.node_selector = node_selector
        self.mirror = ClusterMirror(levels)  # gang: what is free where

    def setup(self, manager: Manager) -> None:
        self.mirror.attach(manager, node_selector=self.node_selector)  # gang
        self.gangs = OwnGangs(manager, self, self.mirror)  # gang: wakes jobs when room frees

    async def reconcile(self, ctx: Context, obj: TrainingJob) -> Result | None:
        name = obj.metadata.name or ""
        made = await ctx.cache.list(
            Pod, namespace=obj.metadata.namespace, label_selector=f"{JOB_LABEL}={name}"
        )
        placed = obj.status is not None and obj.status.phase == "Placed"
        if made.items and placed:
            return None  # the gang was created whole once; its pods run their course
        roles = [("master", [0]), ("worker", list(range(obj.spec.workers)))]
        pods = {role: [self._pod(obj, role, i) for i in indexes] for role, indexes in roles}
        status = TrainingJobStatus()
        if made.items:
            # Pods, but no Placed status: making the gang was cut short (the operator died
            # between its creates or before writing the status, or a create was applied but
            # its answer lost, which the Binder's rollback cannot undo). Returning here, as
            # for a whole gang, left it half made and never Placed: finish it instead.
            rack = await self._finish(ctx, obj, pods, made.items)
            if rack is None:
                return AGAIN  # not finished now (the cache lags): look again
            status.phase, status.rack = "Placed", rack
        else:
            outcome = await self.gangs.place_and_create(  # gang: all pods bound, or none
                ctx.request,
                name,
                {role: members for role, members in pods.items() if members},
                topology={"mode": "required", "level": obj.spec.rack_level},
            )
            if outcome.placement is None:
                # Placed by an earlier reconcile the cache does not show yet. Look again: the
                # pod events that would wake this job may reach the owner's queue before this
                # cache has them (a restart's caches catching up), and then none comes after.
                return AGAIN
            if outcome.explanation is not None:
                status.phase = "NeverFits" if outcome.explanation.never_fits else "Waiting"
                status.message = outcome.explanation.message
            else:
                status.phase = "Placed"
                status.rack = outcome.placement.domain.get(obj.spec.rack_level)
        if obj.status != status:

            def record(job: TrainingJob) -> None:
                job.status = status

            await ctx.update_status(obj, record)
        return None

    async def _finish(
        self, ctx: Context, job: TrainingJob, pods: dict[str, list[Pod]], made: list[Pod]
    ) -> str | None:
        """Create the pods of a half-made gang that are missing, bound in the rack its pods
        are in; the rack once the gang is whole, ``None`` if it is not (yet)."""
        level = job.spec.rack_level
        nodes = {pod.spec.node_name for pod in made}
        racks = {((self.mirror.node(n or "") or {}).get("labels") or {}).get(level) for n in nodes}
        if len(racks) != 1 or None in racks:
            return None  # a node the mirror does not know yet
        rack = str(racks.pop())
        have = {pod.metadata.name for pod in made}
        missing = {
            role: [p for p in members if p.metadata.name not in have]
            for role, members in pods.items()
        }
        missing = {role: members for role, members in missing.items() if members}
        if not missing:
            return rack
        keys = [pod_key(p.metadata.namespace, p.metadata.name) for m in missing.values() for p in m]
        if any(self.mirror.is_counted(key) for key in keys):
            return None  # being created by this process: the cache does not show them yet
        gang = gang_of(job.metadata.name or "", missing, levels=self.mirror.cluster.levels)
        for task in gang["tasks"]:  # gang: the rest goes where the first pods went
            task["nodeSelector"] = {**task.get("nodeSelector", {}), level: rack}
        placement = self.mirror.place(gang)
        if placement.status == "unschedulable":
            # The rest no longer fits that rack: undo the half gang as the Binder undoes a
            # failed one (grace 0: nothing of it ran as a gang); once its pods are gone the
            # job is placed whole again.
            for pod in made:
                with contextlib.suppress(NotFound):
                    await ctx.client.delete(
                        Pod,
                        pod.metadata.name or "",
                        namespace=job.metadata.namespace,
                        grace_period_seconds=0,
                        preconditions=Preconditions(uid=pod.metadata.uid),
                    )
            return None
        reservation = self.gangs.binder.reserve(bindings_for(placement, missing))
        manifests = dict(zip(keys, (p for m in missing.values() for p in m), strict=True))
        await self.gangs.binder.create_bound(reservation, manifests)
        return rack

    def _pod(self, job: TrainingJob, role: str, index: int) -> Pod:
        name = job.metadata.name or ""
        gpus = {"nvidia.com/gpu": str(job.spec.gpus_per_pod)}
        pod = Pod(
            metadata=ObjectMeta(
                name=f"{name}-{role}-{index}",
                namespace=job.metadata.namespace,
                labels={JOB_LABEL: name, "ml.example.com/role": role},
            ),
            spec=PodSpec(
                restart_policy="Never",
                containers=[
                    Container(
                        name="train",
                        image=job.spec.image,
                        resources=ResourceRequirements(requests=gpus, limits=gpus),
                    )
                ],
            ),
        )
        set_controller_reference(job, pod)  # its pods reconcile the job, and go with it
        return pod
