"""Volcano's ``Job`` (``batch.volcano.sh/v1alpha1``), the whole API, typed with pydantic.

Every field of Volcano's ``JobSpec`` and ``JobStatus`` (``staging/src/volcano.sh/apis/pkg/apis/
batch/v1alpha1/job.go`` at volcano-sh/volcano ``ed72c7c8``) is here under its wire name, with
the bounds, patterns, enums and defaults of Volcano's CRD (``maxRetry`` 3, ``queue``
``"default"``, ``networkTopology.mode`` ``hard``, ``partitionPolicy.minPartitions`` 0), and the
CRD's printer columns. So Volcano's own manifests apply unchanged, and the apiserver keeps and
refuses what Volcano's CRD keeps and refuses. Two deliberate differences:

- each task's ``template`` is a PodTemplateSpec kept whole as the user wrote it
  (``x-kubernetes-preserve-unknown-fields``) where Volcano's CRD spells the pod schema out, so
  a mistake inside a pod template is refused by the apiserver when the pods are created, not
  when the Job is; :meth:`TaskSpec.pod_template` gives a typed view for reading;
- the status carries what this example's controller adds: ``metav1.Condition`` fields on
  ``conditions`` entries (``type``, ``reason``, ``message``; Volcano's own entries, a phase and
  a time, fit the same list), the ``placement``, and ``observedGeneration``.

Defaults that Volcano's *webhook* fills in, not its CRD, are Python defaults only (the CRD has
none, as Volcano's has none): an unnamed task is ``default<index>``, ``replicas`` 0, no
``tasks``. Which fields this example's controller acts on: ``operator.py`` and
``honored.py``; the others are kept and reported, never dropped.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from crdkit.crd import Format, python_only
from crdkit.resources import (
    ApiModel,
    CustomResource,
    ObjectMeta,
    OpenModel,
    PodSpec,
    PrinterColumn,
    Time,
    parse_duration,
)
from examples.gang_scheduler.claims import PersistentVolumeClaimSpec

GROUP = "batch.volcano.sh"
VERSION = "v1alpha1"

JobPhase = Literal[
    "Pending",
    "Aborting",
    "Aborted",
    "Running",
    "Restarting",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
]
NetworkTopologyMode = Literal["hard", "soft"]
PolicyEvent = Literal[
    "*",
    "PodPending",
    "PodRunning",
    "PodFailed",
    "PodEvicted",
    "Unknown",
    "TaskCompleted",
    "OutOfSync",
    "CommandIssued",
    "JobUpdated",
    "TaskFailed",
]
"""The events a lifecycle policy can match (Volcano's ``bus/v1alpha1`` Event enum)."""
NumaPolicy = Literal["none", "best-effort", "restricted", "single-numa-node"]

Int32 = Annotated[int, Format("int32")]
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


def _go_duration(value: str) -> str:
    parse_duration(value)  # a ValueError names what is wrong
    return value


GoDuration = Annotated[str, AfterValidator(_go_duration)]
"""A ``metav1.Duration`` kept as written (``"10m"`` stays ``"10m"``): Volcano's CRD types it as
a plain string, so the schema does too, and Python checks Go's duration syntax."""


def no_crd_default(schema: dict[str, Any]) -> None:
    """A field whose Python default stands for Volcano's webhook default: the CRD has none."""
    schema.pop("default", None)


def _empty_if_null(value: Any) -> Any:
    # ``template:`` with nothing after it is YAML's null; the apiserver drops it as absent.
    return {} if value is None else value


class PodTemplate(OpenModel):
    """A typed, read-only view of a task's PodTemplateSpec (unknown fields are kept)."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)


class LifecyclePolicy(ApiModel):
    """What Volcano does on a job or pod event (``PodEvicted`` → ``RestartJob``)."""

    action: str | None = None
    event: PolicyEvent | None = None
    events: list[PolicyEvent] | None = None
    exit_code: Int32 | None = None
    timeout: GoDuration | None = None


class VolumeSpec(ApiModel):
    """A volume Volcano mounts into every pod of the job: an existing claim or a new one."""

    mount_path: str = Field(min_length=1, pattern=r"^[^:]+$")
    volume_claim_name: str | None = Field(default=None, max_length=253)
    volume_claim: PersistentVolumeClaimSpec | None = None


class NetworkTopologySpec(ApiModel):
    """Where the job's pods may spread in the network.

    ``hard``: every pod inside one domain of tier ``highestTierAllowed`` or a lower tier (tier 1 is
    the leaf switch); the job waits until such a domain has room. ``soft``: as few domains, as low,
    as possible; the job is never held back by topology. ``highestTierAllowed`` is only read in
    hard mode, where it defaults to 1. ``highestTierName`` names the tier instead of numbering it.
    """

    mode: NetworkTopologyMode = "hard"
    # Go's *int: no int32 format in Volcano's CRD either.
    highest_tier_allowed: int | None = Field(default=None, ge=0)
    highest_tier_name: str | None = Field(default=None, max_length=253)

    @property
    def tier(self) -> int:
        """The widest tier a hard job may span."""
        return self.highest_tier_allowed if self.highest_tier_allowed is not None else 1


class DependsOn(ApiModel):
    """Tasks that must be running (``iteration: any`` / ``all`` of them) before this one starts."""

    name: list[str] | None = None
    iteration: str | None = None


class PartitionPolicySpec(ApiModel):
    """A task split into ``totalPartitions`` groups of ``partitionSize`` pods, each group
    placed under its own ``networkTopology``."""

    total_partitions: Int32 = Field(ge=1)
    partition_size: Int32 = Field(ge=1)
    network_topology: NetworkTopologySpec | None = None
    min_partitions: Int32 = Field(default=0, ge=0)


class TaskSpec(ApiModel):
    """One role of the job (master, worker): ``replicas`` pods from one template."""

    name: str = Field(
        default="", max_length=63, pattern=DNS_LABEL, json_schema_extra=no_crd_default
    )
    """Empty (not given) becomes ``default<index>``, as Volcano's webhook names it."""
    replicas: Int32 = Field(default=0, ge=0, json_schema_extra=no_crd_default)
    min_available: Int32 | None = Field(default=None, ge=0)
    template: Annotated[dict[str, Any], BeforeValidator(_empty_if_null)] = Field(
        default_factory=dict
    )
    policies: list[LifecyclePolicy] | None = None
    topology_policy: NumaPolicy | None = None
    max_retry: Int32 | None = Field(default=None, ge=0)
    depends_on: DependsOn | None = None
    partition_policy: PartitionPolicySpec | None = None

    def pod_template(self) -> PodTemplate:
        """The template read as a typed PodTemplateSpec."""
        return PodTemplate.model_validate(self.template)


class JobSpec(ApiModel):
    """Volcano's JobSpec, every field."""

    scheduler_name: str | None = Field(default=None, max_length=63)
    min_available: Int32 | None = Field(default=None, ge=0)
    volumes: list[VolumeSpec] | None = None
    tasks: list[TaskSpec] = Field(
        default_factory=list, min_length=1, json_schema_extra=no_crd_default
    )
    policies: list[LifecyclePolicy] | None = None
    plugins: dict[str, list[str]] | None = None
    running_estimate: GoDuration | None = None
    queue: str = Field(default="default", max_length=253, pattern=DNS_SUBDOMAIN)
    max_retry: Int32 = Field(default=3, ge=0)
    ttl_seconds_after_finished: Int32 | None = Field(
        default=None, ge=0, alias="ttlSecondsAfterFinished"
    )
    priority_class_name: str | None = Field(default=None, max_length=253, pattern=DNS_SUBDOMAIN)
    min_success: Int32 | None = Field(default=None, ge=1)
    network_topology: NetworkTopologySpec | None = None

    # Volcano's admission webhook, not its CRD, refuses these (and names unnamed tasks), so
    # the CRD stays as lax as Volcano's; a Job stored past them is kept out of the informer's
    # store and reported as InvalidObject.
    @python_only
    @model_validator(mode="after")
    def _consistent(self) -> JobSpec:
        for index, task in enumerate(self.tasks):
            if not task.name:
                task.name = f"default{index}"
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
        if self.min_available is not None and self.min_available > total:
            raise ValueError(
                f"spec.minAvailable: {self.min_available} exceeds the {total} replicas of all tasks"
            )
        return self


class JobState(ApiModel):
    """The job's phase and why it is in it."""

    phase: JobPhase = Field(default="Pending", json_schema_extra=no_crd_default)
    reason: str | None = None
    message: str | None = None
    last_transition_time: Time | None = None


class TaskState(ApiModel):
    """A task's pods by pod phase (``taskStatusCount``)."""

    phase: dict[str, Int32] | None = None


class JobCondition(ApiModel):
    """A ``status.conditions`` entry.

    Volcano's own entries record a phase change: ``status`` is the phase, with its time. This
    example's controller writes ``metav1.Condition`` entries into the same list (``type``,
    ``status`` True/False/Unknown, ``reason``, ``message``), whose ``status`` and time fit
    Volcano's shape; ``operator.py`` only ever touches entries that have a ``type``.
    """

    status: str
    last_transition_time: Time | None = None
    type: str | None = None
    reason: str | None = None
    message: str | None = None
    observed_generation: int | None = Field(default=None, ge=0)


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


def _count() -> Any:
    return Field(default=0, ge=0, json_schema_extra=no_crd_default)


class JobStatus(ApiModel):
    """Volcano's JobStatus, every field, and what this example's controller adds to it."""

    state: JobState = Field(default_factory=JobState)
    min_available: Int32 | None = Field(default=None, ge=0)
    task_status_count: dict[str, TaskState] | None = None
    pending: Int32 = _count()
    running: Int32 = _count()
    succeeded: Int32 = _count()
    failed: Int32 = _count()
    terminating: Int32 = _count()
    unknown: Int32 = _count()
    version: Int32 = _count()
    retry_count: Int32 = _count()
    running_duration: GoDuration | None = None
    controlled_resources: dict[str, str] | None = None
    conditions: list[JobCondition] = Field(default_factory=list)
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
    annotations={"helm.sh/resource-policy": "keep"},
    printer_columns=[
        PrinterColumn("STATUS", ".status.state.phase"),
        PrinterColumn("minAvailable", ".status.minAvailable", type="integer"),
        PrinterColumn("RUNNINGS", ".status.running", type="integer"),
        PrinterColumn("AGE", ".metadata.creationTimestamp", type="date"),
        PrinterColumn("QUEUE", ".spec.queue", priority=1),
    ],
):
    """A Volcano batch job: tasks whose pods must start together."""

    spec: JobSpec = Field(default_factory=JobSpec, json_schema_extra=no_crd_default)
    status: JobStatus | None = None
