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
      ├── PodGroup, Workload (scheduling.k8s.io/v1beta1, gated), imported on first use
      ├── Queue (scheduling.crdkit.io/v1alpha1, crdkit's own CRD), imported on first use
      ├── Event (events.k8s.io/v1), Lease (coordination.k8s.io/v1)
      └── PartialObjectMetadata (meta.k8s.io/v1, metadata only)
    ObjectList[T] ── apiVersion, kind, metadata: ListMeta, items: list[T]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace
from crdkit.resources._model import ApiModel as ApiModel
from crdkit.resources._model import MicroTime as MicroTime
from crdkit.resources._model import OpenModel as OpenModel
from crdkit.resources._model import Time as Time
from crdkit.resources.coordination import Lease as Lease
from crdkit.resources.coordination import LeaseSpec as LeaseSpec
from crdkit.resources.core import Binding as Binding
from crdkit.resources.core import ConfigMap as ConfigMap
from crdkit.resources.core import Container as Container
from crdkit.resources.core import Namespace as Namespace
from crdkit.resources.core import NamespaceSpec as NamespaceSpec
from crdkit.resources.core import NamespaceStatus as NamespaceStatus
from crdkit.resources.core import Node as Node
from crdkit.resources.core import NodeCondition as NodeCondition
from crdkit.resources.core import NodeSpec as NodeSpec
from crdkit.resources.core import NodeStatus as NodeStatus
from crdkit.resources.core import ObjectReference as ObjectReference
from crdkit.resources.core import Pod as Pod
from crdkit.resources.core import PodCondition as PodCondition
from crdkit.resources.core import PodSchedulingGroup as PodSchedulingGroup
from crdkit.resources.core import PodSpec as PodSpec
from crdkit.resources.core import PodStatus as PodStatus
from crdkit.resources.core import PodTemplateSpec as PodTemplateSpec
from crdkit.resources.core import Quantity as Quantity
from crdkit.resources.core import ResourceRequirements as ResourceRequirements
from crdkit.resources.core import Secret as Secret
from crdkit.resources.core import Taint as Taint
from crdkit.resources.core import Toleration as Toleration
from crdkit.resources.custom import CustomResource as CustomResource
from crdkit.resources.durations import Duration as Duration
from crdkit.resources.durations import IntOrString as IntOrString
from crdkit.resources.durations import format_duration as format_duration
from crdkit.resources.durations import parse_duration as parse_duration
from crdkit.resources.events import Event as Event
from crdkit.resources.events import EventSeries as EventSeries
from crdkit.resources.info import ResourceInfo as ResourceInfo
from crdkit.resources.info import resource_info as resource_info
from crdkit.resources.lists import ObjectList as ObjectList
from crdkit.resources.meta import LabelSelector as LabelSelector
from crdkit.resources.meta import LabelSelectorRequirement as LabelSelectorRequirement
from crdkit.resources.meta import ListMeta as ListMeta
from crdkit.resources.meta import ObjectMeta as ObjectMeta
from crdkit.resources.meta import OwnerReference as OwnerReference
from crdkit.resources.naming import ACRONYMS as ACRONYMS
from crdkit.resources.naming import camel_case as camel_case
from crdkit.resources.naming import camel_case_with as camel_case_with
from crdkit.resources.object import KubernetesObject as KubernetesObject
from crdkit.resources.options import CustomResourceOptions as CustomResourceOptions
from crdkit.resources.options import PrinterColumn as PrinterColumn
from crdkit.resources.options import ScaleSubresource as ScaleSubresource
from crdkit.resources.options import WebhookConversion as WebhookConversion
from crdkit.resources.partial import METADATA_ACCEPT as METADATA_ACCEPT
from crdkit.resources.partial import METADATA_LIST_ACCEPT as METADATA_LIST_ACCEPT
from crdkit.resources.partial import PartialObjectMetadata as PartialObjectMetadata
from crdkit.resources.plural import pluralize as pluralize
from crdkit.resources.scalars import Bytes as Bytes
from crdkit.resources.scalars import Int32 as Int32
from crdkit.resources.scalars import Int64 as Int64

# Kinds fewer operators use are imported on first use, so `import crdkit.resources` costs no more
# for an operator that never touches them (each module builds a few dozen pydantic models).
if TYPE_CHECKING:
    from crdkit.resources.apps import DaemonSet as DaemonSet
    from crdkit.resources.apps import DaemonSetSpec as DaemonSetSpec
    from crdkit.resources.apps import DaemonSetStatus as DaemonSetStatus
    from crdkit.resources.apps import Deployment as Deployment
    from crdkit.resources.apps import DeploymentSpec as DeploymentSpec
    from crdkit.resources.apps import DeploymentStatus as DeploymentStatus
    from crdkit.resources.apps import DeploymentStrategy as DeploymentStrategy
    from crdkit.resources.apps import ReplicaSet as ReplicaSet
    from crdkit.resources.apps import ReplicaSetSpec as ReplicaSetSpec
    from crdkit.resources.apps import ReplicaSetStatus as ReplicaSetStatus
    from crdkit.resources.apps import RollingUpdate as RollingUpdate
    from crdkit.resources.apps import StatefulSet as StatefulSet
    from crdkit.resources.apps import StatefulSetSpec as StatefulSetSpec
    from crdkit.resources.apps import StatefulSetStatus as StatefulSetStatus
    from crdkit.resources.apps import WorkloadCondition as WorkloadCondition
    from crdkit.resources.batch import CronJob as CronJob
    from crdkit.resources.batch import CronJobSpec as CronJobSpec
    from crdkit.resources.batch import CronJobStatus as CronJobStatus
    from crdkit.resources.batch import Job as Job
    from crdkit.resources.batch import JobCondition as JobCondition
    from crdkit.resources.batch import JobSpec as JobSpec
    from crdkit.resources.batch import JobStatus as JobStatus
    from crdkit.resources.batch import JobTemplateSpec as JobTemplateSpec
    from crdkit.resources.podgroups import GangSchedulingPolicy as GangSchedulingPolicy
    from crdkit.resources.podgroups import PodGroup as PodGroup
    from crdkit.resources.podgroups import PodGroupCondition as PodGroupCondition
    from crdkit.resources.podgroups import (
        PodGroupSchedulingConstraints as PodGroupSchedulingConstraints,
    )
    from crdkit.resources.podgroups import PodGroupSchedulingPolicy as PodGroupSchedulingPolicy
    from crdkit.resources.podgroups import PodGroupSpec as PodGroupSpec
    from crdkit.resources.podgroups import PodGroupStatus as PodGroupStatus
    from crdkit.resources.podgroups import PodGroupTemplate as PodGroupTemplate
    from crdkit.resources.podgroups import TopologyConstraint as TopologyConstraint
    from crdkit.resources.podgroups import Workload as Workload
    from crdkit.resources.podgroups import WorkloadReference as WorkloadReference
    from crdkit.resources.podgroups import WorkloadSpec as WorkloadSpec
    from crdkit.resources.policy import PodDisruptionBudget as PodDisruptionBudget
    from crdkit.resources.policy import PodDisruptionBudgetSpec as PodDisruptionBudgetSpec
    from crdkit.resources.policy import PodDisruptionBudgetStatus as PodDisruptionBudgetStatus
    from crdkit.resources.queues import Queue as Queue
    from crdkit.resources.queues import QueueCondition as QueueCondition
    from crdkit.resources.queues import QueueFlavor as QueueFlavor
    from crdkit.resources.queues import QueueFlavorUsage as QueueFlavorUsage
    from crdkit.resources.queues import QueuePreemption as QueuePreemption
    from crdkit.resources.queues import QueueQuota as QueueQuota
    from crdkit.resources.queues import QueueResource as QueueResource
    from crdkit.resources.queues import QueueResourceUsage as QueueResourceUsage
    from crdkit.resources.queues import QueueSpec as QueueSpec
    from crdkit.resources.queues import QueueStatus as QueueStatus
    from crdkit.resources.services import LocalObjectReference as LocalObjectReference
    from crdkit.resources.services import Service as Service
    from crdkit.resources.services import ServiceAccount as ServiceAccount
    from crdkit.resources.services import ServicePort as ServicePort
    from crdkit.resources.services import ServiceSpec as ServiceSpec
    from crdkit.resources.services import ServiceStatus as ServiceStatus
    from crdkit.resources.storage import PersistentVolumeClaim as PersistentVolumeClaim
    from crdkit.resources.storage import PersistentVolumeClaimSpec as PersistentVolumeClaimSpec
    from crdkit.resources.storage import PersistentVolumeClaimStatus as PersistentVolumeClaimStatus
    from crdkit.resources.storage import VolumeResourceRequirements as VolumeResourceRequirements


__getattr__, __dir__ = lazy_namespace(__name__, globals())
