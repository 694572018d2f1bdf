"""``apps/v1`` workloads an operator commonly owns: Deployment, StatefulSet, DaemonSet and
ReplicaSet.

Only what operators set or read is typed (replicas, selector, template, the rollout and
readiness counts of the status); every model keeps the fields it does not declare, so a
read-modify-write through them loses nothing.
"""

# Annotations are evaluated at class creation (no `from __future__ import annotations`), so the
# names they use are runtime imports to pydantic and to the linter alike.
from pydantic import Field

from crdkit.resources._model import OpenModel, RawObject, Time
from crdkit.resources.core import PodTemplateSpec
from crdkit.resources.durations import IntOrString
from crdkit.resources.meta import LabelSelector
from crdkit.resources.object import KubernetesObject
from crdkit.resources.storage import PersistentVolumeClaim

__all__ = [
    "DaemonSet",
    "DaemonSetSpec",
    "DaemonSetStatus",
    "Deployment",
    "DeploymentSpec",
    "DeploymentStatus",
    "DeploymentStrategy",
    "ReplicaSet",
    "ReplicaSetSpec",
    "ReplicaSetStatus",
    "RollingUpdate",
    "StatefulSet",
    "StatefulSetSpec",
    "StatefulSetStatus",
    "WorkloadCondition",
]


class WorkloadCondition(OpenModel):
    """A condition of a Deployment, StatefulSet, DaemonSet or ReplicaSet (``Available``,
    ``Progressing``, ``ReplicaFailure``, ...)."""

    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_update_time: Time | None = None
    last_transition_time: Time | None = None


class RollingUpdate(OpenModel):
    """Rolling-update limits: a count or a percentage (``"25%"``)."""

    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None
    partition: int | None = None


class DeploymentStrategy(OpenModel):
    type: str | None = None
    rolling_update: RollingUpdate | None = None


class DeploymentSpec(OpenModel):
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    replicas: int | None = None
    strategy: DeploymentStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None
    progress_deadline_seconds: int | None = None
    paused: bool | None = None


class DeploymentStatus(OpenModel):
    observed_generation: int | None = None
    replicas: int | None = None
    updated_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    unavailable_replicas: int | None = None
    conditions: list[WorkloadCondition] = Field(default_factory=list)


class Deployment(
    KubernetesObject, group="apps", version="v1", kind="Deployment", plural="deployments"
):
    spec: DeploymentSpec = Field(default_factory=DeploymentSpec)
    status: DeploymentStatus | None = None


class StatefulSetSpec(OpenModel):
    """``service_name`` names the headless Service that gives each pod its DNS name."""

    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    service_name: str | None = None
    replicas: int | None = None
    pod_management_policy: str | None = None
    update_strategy: DeploymentStrategy | None = None
    volume_claim_templates: list[PersistentVolumeClaim] = Field(default_factory=list)
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None
    persistent_volume_claim_retention_policy: RawObject | None = None
    ordinals: RawObject | None = None


class StatefulSetStatus(OpenModel):
    observed_generation: int | None = None
    replicas: int | None = None
    ready_replicas: int | None = None
    current_replicas: int | None = None
    updated_replicas: int | None = None
    available_replicas: int | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    conditions: list[WorkloadCondition] = Field(default_factory=list)


class StatefulSet(
    KubernetesObject, group="apps", version="v1", kind="StatefulSet", plural="statefulsets"
):
    spec: StatefulSetSpec = Field(default_factory=StatefulSetSpec)
    status: StatefulSetStatus | None = None


class DaemonSetSpec(OpenModel):
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    update_strategy: DeploymentStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None


class DaemonSetStatus(OpenModel):
    observed_generation: int | None = None
    current_number_scheduled: int | None = None
    desired_number_scheduled: int | None = None
    number_ready: int | None = None
    number_available: int | None = None
    number_unavailable: int | None = None
    number_misscheduled: int | None = None
    updated_number_scheduled: int | None = None
    conditions: list[WorkloadCondition] = Field(default_factory=list)


class DaemonSet(
    KubernetesObject, group="apps", version="v1", kind="DaemonSet", plural="daemonsets"
):
    """One pod per matching node: device plugins, node agents, topology labellers."""

    spec: DaemonSetSpec = Field(default_factory=DaemonSetSpec)
    status: DaemonSetStatus | None = None


class ReplicaSetSpec(OpenModel):
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    replicas: int | None = None
    min_ready_seconds: int | None = None


class ReplicaSetStatus(OpenModel):
    observed_generation: int | None = None
    replicas: int | None = None
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    conditions: list[WorkloadCondition] = Field(default_factory=list)


class ReplicaSet(
    KubernetesObject, group="apps", version="v1", kind="ReplicaSet", plural="replicasets"
):
    spec: ReplicaSetSpec = Field(default_factory=ReplicaSetSpec)
    status: ReplicaSetStatus | None = None
