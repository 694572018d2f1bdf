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

from typing import Literal

from pydantic import Field

from crdkit import Context, Reconciler
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
from crdkit.scheduling import OWN_GANG_RBAC, ClusterMirror, OwnGangs

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
        # No look at the cache first: place_and_create leaves a gang whose pods exist alone,
        # and rolls back one an operator killed between its creates left partly made; a job
        # that returned here on any pod of it found would keep that part for ever.
        roles = [("master", [0]), ("worker", list(range(obj.spec.workers)))]
        pods = {role: [self.member_pod(obj, role, i) for i in indexes] for role, indexes in roles}
        outcome = await self.gangs.place_and_create(  # gang: all pods bound, or none
            ctx.request,
            name,
            {role: members for role, members in pods.items() if members},
            topology={"mode": "required", "level": obj.spec.rack_level},
        )
        status = TrainingJobStatus()
        if outcome.placement is None:  # made already, being made, or rolled back
            # Made whole by an operator that may have died before it wrote the status: say so.
            made = await ctx.cache.list(
                Pod, namespace=obj.metadata.namespace, label_selector=f"{JOB_LABEL}={name}"
            )
            if len(made.items) < 1 + obj.spec.workers:
                # Being made, rolled back, or made by an earlier reconcile this cache does not
                # show yet. Look again: the pod events that would wake this job may reach the
                # owner's queue before this cache has them (a restart's caches catching up),
                # and then none comes after (crash tests: stale on the first create).
                return AGAIN
            node = self.mirror.node(made.items[0].spec.node_name or "") or {}
            status.phase = "Placed"
            status.rack = (node.get("labels") or {}).get(obj.spec.rack_level)
        elif outcome.explanation is not None:
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

    def member_pod(self, job: TrainingJob, role: str, index: int) -> Pod:
        """The pod ``index`` of ``role`` in ``job``'s gang, as this operator makes it."""
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
