"""Typed Kubernetes objects: custom resources declared as pydantic classes, and built-in kinds.

Every class validates straight from apiserver bytes (``Pod.model_validate_json(body)``) and
keeps fields it does not declare, so read-modify-write loses nothing. Each addressable class
carries a ``ResourceInfo`` (``resource_info(Pod).path(namespace="ns")``) for clients.

::

    KubernetesObject ── apiVersion, kind, metadata: ObjectMeta; to_dict / to_merge_patch / to_apply
      ├── CustomResource ── class keywords → CustomResourceOptions (for gen-crd) + ResourceInfo
      ├── Pod, Node, Namespace, ConfigMap, Secret, Binding   (core v1)
      ├── Event (events.k8s.io/v1), Lease (coordination.k8s.io/v1)
      └── PartialObjectMetadata (meta.k8s.io/v1, metadata only)
    ObjectList[T] ── apiVersion, kind, metadata: ListMeta, items: list[T]
"""

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
    Quantity,
    ResourceRequirements,
    Secret,
    Taint,
    Toleration,
)
from crdkit.resources.custom import CustomResource
from crdkit.resources.durations import Duration, IntOrString
from crdkit.resources.events import Event, EventSeries
from crdkit.resources.info import ResourceInfo, resource_info
from crdkit.resources.lists import ObjectList
from crdkit.resources.meta import ListMeta, ObjectMeta, OwnerReference
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

__all__ = [
    "METADATA_ACCEPT",
    "METADATA_LIST_ACCEPT",
    "ApiModel",
    "Binding",
    "Bytes",
    "ConfigMap",
    "Container",
    "CustomResource",
    "CustomResourceOptions",
    "Duration",
    "Event",
    "EventSeries",
    "Int32",
    "Int64",
    "IntOrString",
    "KubernetesObject",
    "Lease",
    "LeaseSpec",
    "ListMeta",
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
    "Pod",
    "PodCondition",
    "PodSpec",
    "PodStatus",
    "PrinterColumn",
    "Quantity",
    "ResourceInfo",
    "ResourceRequirements",
    "ScaleSubresource",
    "Secret",
    "Taint",
    "Time",
    "Toleration",
    "WebhookConversion",
    "pluralize",
    "resource_info",
]
