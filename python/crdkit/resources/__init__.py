"""Typed Kubernetes objects: custom resources declared as pydantic classes, and built-in kinds.

Every class validates straight from apiserver bytes (``Pod.model_validate_json(body)``) and
keeps fields it does not declare, so read-modify-write loses nothing. Each addressable class
carries a ``ResourceInfo`` (``resource_info(Pod).path(namespace="ns")``) for clients.

::

    KubernetesObject ── apiVersion, kind, metadata: ObjectMeta; to_dict / to_merge_patch / to_apply
      ├── CustomResource ── class keywords → CustomResourceOptions (for gen-crd) + ResourceInfo
      ├── Pod, Node, Namespace, ConfigMap, Secret, Binding   (core v1)
      ├── Service, ServiceAccount, PersistentVolumeClaim    (core v1, imported on first use)
      ├── Deployment, StatefulSet, DaemonSet, ReplicaSet    (apps/v1, imported on first use)
      ├── Job, CronJob (batch/v1), PodDisruptionBudget (policy/v1), imported on first use
      ├── Event (events.k8s.io/v1), Lease (coordination.k8s.io/v1)
      └── PartialObjectMetadata (meta.k8s.io/v1, metadata only)
    ObjectList[T] ── apiVersion, kind, metadata: ListMeta, items: list[T]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace
from crdkit.resources._model import ApiModel, MicroTime, OpenModel, Time
from crdkit.resources.coordination import Lease, LeaseSpec
from crdkit.resources.core import (
    Binding,
    ConfigMap,
    Container,
    Namespace,
    NamespaceSpec,
    NamespaceStatus,
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    ObjectReference,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    Quantity,
    ResourceRequirements,
    Secret,
    Taint,
    Toleration,
)
from crdkit.resources.custom import CustomResource
from crdkit.resources.durations import Duration, IntOrString, format_duration, parse_duration
from crdkit.resources.events import Event, EventSeries
from crdkit.resources.info import ResourceInfo, resource_info
from crdkit.resources.lists import ObjectList
from crdkit.resources.meta import (
    LabelSelector,
    LabelSelectorRequirement,
    ListMeta,
    ObjectMeta,
    OwnerReference,
)
from crdkit.resources.naming import ACRONYMS, camel_case, camel_case_with
from crdkit.resources.object import KubernetesObject
from crdkit.resources.options import (
    CustomResourceOptions,
    PrinterColumn,
    ScaleSubresource,
    WebhookConversion,
)
from crdkit.resources.partial import METADATA_ACCEPT, METADATA_LIST_ACCEPT, PartialObjectMetadata
from crdkit.resources.plural import pluralize
from crdkit.resources.scalars import Bytes, Int32, Int64

if TYPE_CHECKING:
    from crdkit.resources.apps import (
        DaemonSet,
        DaemonSetSpec,
        DaemonSetStatus,
        Deployment,
        DeploymentSpec,
        DeploymentStatus,
        DeploymentStrategy,
        ReplicaSet,
        ReplicaSetSpec,
        ReplicaSetStatus,
        RollingUpdate,
        StatefulSet,
        StatefulSetSpec,
        StatefulSetStatus,
        WorkloadCondition,
    )
    from crdkit.resources.batch import (
        CronJob,
        CronJobSpec,
        CronJobStatus,
        Job,
        JobCondition,
        JobSpec,
        JobStatus,
        JobTemplateSpec,
    )
    from crdkit.resources.policy import (
        PodDisruptionBudget,
        PodDisruptionBudgetSpec,
        PodDisruptionBudgetStatus,
    )
    from crdkit.resources.services import (
        LocalObjectReference,
        Service,
        ServiceAccount,
        ServicePort,
        ServiceSpec,
        ServiceStatus,
    )
    from crdkit.resources.storage import (
        PersistentVolumeClaim,
        PersistentVolumeClaimSpec,
        PersistentVolumeClaimStatus,
        VolumeResourceRequirements,
    )

__all__ = [
    "ACRONYMS",
    "METADATA_ACCEPT",
    "METADATA_LIST_ACCEPT",
    "ApiModel",
    "Binding",
    "Bytes",
    "ConfigMap",
    "Container",
    "CronJob",
    "CronJobSpec",
    "CronJobStatus",
    "CustomResource",
    "CustomResourceOptions",
    "DaemonSet",
    "DaemonSetSpec",
    "DaemonSetStatus",
    "Deployment",
    "DeploymentSpec",
    "DeploymentStatus",
    "DeploymentStrategy",
    "Duration",
    "Event",
    "EventSeries",
    "Int32",
    "Int64",
    "IntOrString",
    "Job",
    "JobCondition",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
    "KubernetesObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Lease",
    "LeaseSpec",
    "ListMeta",
    "LocalObjectReference",
    "MicroTime",
    "Namespace",
    "NamespaceSpec",
    "NamespaceStatus",
    "Node",
    "NodeCondition",
    "NodeSpec",
    "NodeStatus",
    "ObjectList",
    "ObjectMeta",
    "ObjectReference",
    "OpenModel",
    "OwnerReference",
    "PartialObjectMetadata",
    "PersistentVolumeClaim",
    "PersistentVolumeClaimSpec",
    "PersistentVolumeClaimStatus",
    "Pod",
    "PodCondition",
    "PodDisruptionBudget",
    "PodDisruptionBudgetSpec",
    "PodDisruptionBudgetStatus",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "PrinterColumn",
    "Quantity",
    "ReplicaSet",
    "ReplicaSetSpec",
    "ReplicaSetStatus",
    "ResourceInfo",
    "ResourceRequirements",
    "RollingUpdate",
    "ScaleSubresource",
    "Secret",
    "Service",
    "ServiceAccount",
    "ServicePort",
    "ServiceSpec",
    "ServiceStatus",
    "StatefulSet",
    "StatefulSetSpec",
    "StatefulSetStatus",
    "Taint",
    "Time",
    "Toleration",
    "VolumeResourceRequirements",
    "WebhookConversion",
    "WorkloadCondition",
    "camel_case",
    "camel_case_with",
    "format_duration",
    "parse_duration",
    "pluralize",
    "resource_info",
]

# Kinds fewer operators use are imported on first use, so `import crdkit.resources` costs no more
# for an operator that never touches them (each module builds a few dozen pydantic models).
_LAZY_HOMES = {
    "crdkit.resources.apps": (
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
    ),
    "crdkit.resources.batch": (
        "CronJob",
        "CronJobSpec",
        "CronJobStatus",
        "Job",
        "JobCondition",
        "JobSpec",
        "JobStatus",
        "JobTemplateSpec",
    ),
    "crdkit.resources.policy": (
        "PodDisruptionBudget",
        "PodDisruptionBudgetSpec",
        "PodDisruptionBudgetStatus",
    ),
    "crdkit.resources.services": (
        "LocalObjectReference",
        "Service",
        "ServiceAccount",
        "ServicePort",
        "ServiceSpec",
        "ServiceStatus",
    ),
    "crdkit.resources.storage": (
        "PersistentVolumeClaim",
        "PersistentVolumeClaimSpec",
        "PersistentVolumeClaimStatus",
        "VolumeResourceRequirements",
    ),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _LAZY_HOMES)
