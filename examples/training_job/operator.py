"""A TrainingJob gets a master pod and N worker pods, placed together under one rack or not at
all: the operator creates them with a coscheduling PodGroup and lets crdkit's GangScheduler,
running inside the same Manager, bind them as one gang.

    crdkit gen-crd examples.training_job.operator:TrainingJob
    crdkit run examples.training_job.operator:TrainingJobReconciler \\
        --option levels=example.com/block,example.com/rack

The scheduling part is the lines marked ``# gang``; the rest is the operator's own policy.
"""

from __future__ import annotations

from pydantic import Field

from crdkit import Context, Reconciler
from crdkit.resources import ApiModel, Container, CustomResource, ObjectMeta, Pod, PodSpec
from crdkit.resources.core import ResourceRequirements
from crdkit.runtime import Manager
from crdkit.scheduling import CoschedulingPodGroup, GangScheduler
from crdkit.scheduling.podgroups import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroupSpec


class TrainingJobSpec(ApiModel):
    image: str = Field(min_length=1)
    workers: int = Field(ge=0, le=1024)
    gpus_per_pod: int = Field(default=8, ge=0)
    rack_level: str = "example.com/rack"
    """The node label whose domains the whole job must fit inside."""


class TrainingJob(CustomResource, group="ml.example.com", version="v1", kind="TrainingJob"):
    spec: TrainingJobSpec


class TrainingJobReconciler(Reconciler[TrainingJob]):
    owns = (Pod, CoschedulingPodGroup)
    runnables = (GangScheduler,)  # gang: so that gen-rbac grants what the scheduler needs

    def __init__(
        self,
        levels: list[str],
        scheduler_name: str = "trainingjob-gangs",
        node_selector: str | None = None,
    ) -> None:
        self.levels = levels
        self.scheduler_name = scheduler_name
        self.node_selector = node_selector

    def setup(self, manager: Manager) -> None:
        scheduler = GangScheduler(  # gang
            self.scheduler_name,
            self.levels,
            pod_groups=["coscheduling"],
            node_selector=self.node_selector,
        )
        manager.add_runnable(scheduler)  # gang

    async def reconcile(self, ctx: Context, obj: TrainingJob) -> None:
        roles = [("master", 0)] + [("worker", i) for i in range(obj.spec.workers)]
        await ctx.apply(  # gang: all pods or none
            CoschedulingPodGroup(
                metadata=ObjectMeta(name=obj.metadata.name, namespace=obj.metadata.namespace),
                spec=CoschedulingPodGroupSpec(min_member=len(roles)),
            )
        )
        for role, index in roles:
            await ctx.apply(self._pod(obj, role, index))

    def _pod(self, job: TrainingJob, role: str, index: int) -> Pod:
        name = job.metadata.name or ""
        gpus = {"nvidia.com/gpu": str(job.spec.gpus_per_pod)}
        return Pod(
            metadata=ObjectMeta(
                name=f"{name}-{role}-{index}",
                namespace=job.metadata.namespace,
                labels={
                    "ml.example.com/job": name,
                    "ml.example.com/role": role,
                    COSCHEDULING_POD_GROUP_LABEL: name,  # gang: its PodGroup
                },
                annotations={
                    "kueue.x-k8s.io/podset-required-topology": job.spec.rack_level,  # gang
                },
            ),
            spec=PodSpec(
                scheduler_name=self.scheduler_name,  # gang: placed by the GangScheduler
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
