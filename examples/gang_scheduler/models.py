"""Volcano's ``Job`` (``batch.volcano.sh/v1alpha1``): the common subset, typed with pydantic.

The spec follows Volcano's field names and meanings, so Volcano's own example manifests apply
unchanged: ``minAvailable``, ``schedulerName``, ``queue``, ``priorityClassName``, ``maxRetry``,
``policies``, ``plugins``, ``volumes``, ``tasks[]`` and ``networkTopology``. Each task's
``template`` is a full PodTemplateSpec kept as the user wrote it (the CRD preserves every field
of it), with :meth:`TaskSpec.pod_template` giving a typed view for reading.

The status keeps Volcano's ``state.phase`` and pod counts, plus what the Job controller adds:
``metav1.Condition`` entries (``Scheduled``, with the PodGroup's reason while the gang waits)
and the ``placement`` (the topology domain and the nodes of every task).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from crdkit.resources import (
    ApiModel,
    CustomResource,
    ObjectMeta,
    OpenModel,
    PodSpec,
    PrinterColumn,
    Time,
)
from crdkit.runtime import Condition

GROUP = "batch.volcano.sh"
VERSION = "v1alpha1"

JobPhase = Literal["Pending", "Running", "Completed", "Failed"]
NetworkTopologyMode = Literal["hard", "soft"]


class PodTemplate(OpenModel):
    """A typed, read-only view of a task's PodTemplateSpec (unknown fields are kept)."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)


class LifecyclePolicy(ApiModel):
    """What Volcano does on a job or pod event (``PodEvicted`` → ``RestartJob``).

    Kept so Volcano manifests round-trip; this scheduler acts on none of them.
    """

    action: str | None = None
    event: str | None = None
    events: list[str] | None = None
    exit_code: int | None = None
    timeout: str | None = None


class VolumeSpec(ApiModel):
    """A volume Volcano mounts into every pod of the job (kept, not acted on)."""

    mount_path: str
    volume_claim_name: str | None = None
    volume_claim: dict[str, Any] | None = None


class NetworkTopologySpec(ApiModel):
    """Where the job's pods may spread in the network.

    ``hard``: every pod inside one domain of tier ``highestTierAllowed`` or a lower tier (tier 1 is
    the leaf switch); the job waits until such a domain has room. ``soft``: as few domains, as low,
    as possible; the job is never held back by topology. ``highestTierAllowed`` is only read in
    hard mode, where it defaults to 1.
    """

    mode: NetworkTopologyMode = "hard"
    highest_tier_allowed: int | None = Field(default=None, ge=1)

    @property
    def tier(self) -> int:
        """The widest tier a hard job may span."""
        return self.highest_tier_allowed if self.highest_tier_allowed is not None else 1


class TaskSpec(ApiModel):
    """One role of the job (master, worker): ``replicas`` pods from one template."""

    name: str = Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    replicas: int = Field(ge=0)
    min_available: int | None = Field(default=None, ge=0)
    template: dict[str, Any] = Field(default_factory=dict)
    policies: list[LifecyclePolicy] | None = None
    max_retry: int | None = Field(default=None, ge=0)

    def pod_template(self) -> PodTemplate:
        """The template read as a typed PodTemplateSpec."""
        return PodTemplate.model_validate(self.template)


class JobSpec(ApiModel):
    """Volcano's JobSpec, common subset."""

    scheduler_name: str | None = None
    min_available: int = Field(default=0, ge=0)
    queue: str | None = None
    priority_class_name: str | None = None
    max_retry: int | None = Field(default=None, ge=0)
    ttl_seconds_after_finished: int | None = Field(default=None, ge=0)
    policies: list[LifecyclePolicy] | None = None
    plugins: dict[str, list[str]] | None = None
    volumes: list[VolumeSpec] | None = None
    tasks: list[TaskSpec] = Field(min_length=1)
    network_topology: NetworkTopologySpec | None = None

    @model_validator(mode="after")
    def _consistent(self) -> JobSpec:
        names = [task.name for task in self.tasks]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise ValueError(f"spec.tasks[{index}].name: duplicate task name {name!r}")
        for index, task in enumerate(self.tasks):
            if task.min_available is not None and task.min_available > task.replicas:
                raise ValueError(
                    f"spec.tasks[{index}].minAvailable: {task.min_available} "
                    f"exceeds replicas {task.replicas}"
                )
        total = sum(task.replicas for task in self.tasks)
        if self.min_available > total:
            raise ValueError(
                f"spec.minAvailable: {self.min_available} exceeds the {total} replicas of all tasks"
            )
        return self


class JobState(ApiModel):
    """The job's phase and why it is in it."""

    phase: JobPhase = "Pending"
    reason: str | None = None
    message: str | None = None
    last_transition_time: Time | None = None


class TaskPlacement(ApiModel):
    """The nodes of one task's pods, in pod index order."""

    name: str
    nodes: list[str] = Field(default_factory=list)


class JobPlacement(ApiModel):
    """Where the job's pods were bound: the smallest topology domain holding all of them."""

    tier: int | None = None
    """The tier of ``domain`` (1 = leaf switch); None when the pods span top-level domains."""
    domain: dict[str, str] = Field(default_factory=dict)
    """The domain's tier labels and their values."""
    domain_name: str | None = None
    """The value of the domain's narrowest tier label (the leaf switch's name for tier 1)."""
    tasks: list[TaskPlacement] = Field(default_factory=list)


class JobStatus(ApiModel):
    """What the scheduler observed and decided."""

    state: JobState = Field(default_factory=JobState)
    min_available: int | None = None
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    conditions: list[Condition] = Field(default_factory=list)
    placement: JobPlacement | None = None
    observed_generation: int | None = None


class Job(
    CustomResource,
    group=GROUP,
    version=VERSION,
    kind="Job",
    plural="jobs",
    short_names=["vcjob", "vj"],
    categories=["volcano"],
    printer_columns=[
        PrinterColumn("Status", ".status.state.phase"),
        PrinterColumn("MinAvailable", ".spec.minAvailable", type="integer"),
        PrinterColumn("Running", ".status.running", type="integer"),
        PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ],
):
    """A Volcano batch job: tasks whose pods must start together."""

    spec: JobSpec
    status: JobStatus | None = None
