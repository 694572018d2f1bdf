"""Built-in kinds of the core group (``v1``) that operators for GPU clusters read and write.

Only the fields operators commonly touch are typed; every model keeps undeclared fields, so
reading a Pod and writing it back preserves everything the apiserver sent.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, WithJsonSchema

from crdkit.resources._model import OpenModel, RawObject, Time
from crdkit.resources.meta import ObjectMeta
from crdkit.resources.object import KubernetesObject
from crdkit.resources.scalars import QUANTITY_PATTERN, quantity_text

__all__ = [
    "Binding",
    "ConfigMap",
    "Container",
    "Namespace",
    "NamespaceSpec",
    "NamespaceStatus",
    "Node",
    "NodeCondition",
    "NodeSpec",
    "NodeStatus",
    "ObjectReference",
    "Pod",
    "PodCondition",
    "PodSchedulingGroup",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "Quantity",
    "ResourceRequirements",
    "Secret",
    "Taint",
    "Toleration",
]


Quantity = Annotated[
    str,
    BeforeValidator(quantity_text),
    WithJsonSchema({"x-kubernetes-int-or-string": True, "pattern": QUANTITY_PATTERN}),
]
"""A resource quantity (``"500m"``, ``"64Gi"``, or a number), held as text; see crdkit.placer.

Its CRD schema is controller-gen's for ``resource.Quantity`` (int-or-string with the quantity
pattern), and pydantic accepts exactly what that schema accepts: an int64, a whole-number
float, or a string matching the pattern. Numbers are kept as their text (``4`` → ``"4"``).
"""


class ObjectReference(OpenModel):
    """A reference to another object (``Binding.target``, ``Event.regarding``)."""

    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class ResourceRequirements(OpenModel):
    requests: dict[str, Quantity] = Field(default_factory=dict)
    limits: dict[str, Quantity] = Field(default_factory=dict)


class Container(OpenModel):
    name: str
    image: str | None = None
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements)


class Toleration(OpenModel):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class PodSchedulingGroup(OpenModel):
    """The group a pod belongs to (``spec.schedulingGroup``; ``GenericWorkload`` gate)."""

    pod_group_name: str | None = None
    """A ``scheduling.k8s.io`` PodGroup in the pod's namespace; it may not exist yet."""


class PodSpec(OpenModel):
    node_name: str | None = None
    scheduler_name: str | None = None
    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] = Field(default_factory=list)
    node_selector: dict[str, str] = Field(default_factory=dict)
    tolerations: list[Toleration] = Field(default_factory=list)
    priority: int | None = None
    priority_class_name: str | None = None
    affinity: RawObject | None = None
    restart_policy: str | None = None
    active_deadline_seconds: int | None = None
    preemption_policy: str | None = None
    scheduling_group: PodSchedulingGroup | None = None


class PodCondition(OpenModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_probe_time: Time | None = None
    last_transition_time: Time | None = None


class PodStatus(OpenModel):
    phase: str | None = None
    conditions: list[PodCondition] = Field(default_factory=list)
    host_ip: str | None = Field(default=None, alias="hostIP")
    pod_ip: str | None = Field(default=None, alias="podIP")
    nominated_node_name: str | None = None
    start_time: Time | None = None


class Pod(KubernetesObject, group="", version="v1", kind="Pod", plural="pods"):
    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus | None = None


class PodTemplateSpec(OpenModel):
    """The pod a workload (Deployment, StatefulSet, Job, ...) makes, as its ``template``."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)


class Taint(OpenModel):
    key: str
    effect: str
    value: str | None = None
    time_added: Time | None = None


class NodeSpec(OpenModel):
    unschedulable: bool | None = None
    taints: list[Taint] = Field(default_factory=list)
    pod_cidr: str | None = Field(default=None, alias="podCIDR")
    provider_id: str | None = Field(default=None, alias="providerID")


class NodeCondition(OpenModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_heartbeat_time: Time | None = None
    last_transition_time: Time | None = None


class NodeStatus(OpenModel):
    capacity: dict[str, Quantity] = Field(default_factory=dict)
    allocatable: dict[str, Quantity] = Field(default_factory=dict)
    conditions: list[NodeCondition] = Field(default_factory=list)


class Node(KubernetesObject, group="", version="v1", kind="Node", plural="nodes", namespaced=False):
    """A node; its topology (switch, block, zone) is read from ``metadata.labels``."""

    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus | None = None


class NamespaceSpec(OpenModel):
    finalizers: list[str] = Field(default_factory=list)


class NamespaceStatus(OpenModel):
    phase: str | None = None


class Namespace(
    KubernetesObject,
    group="",
    version="v1",
    kind="Namespace",
    plural="namespaces",
    namespaced=False,
):
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


class ConfigMap(KubernetesObject, group="", version="v1", kind="ConfigMap", plural="configmaps"):
    data: dict[str, str] = Field(default_factory=dict)
    binary_data: dict[str, str] = Field(default_factory=dict)
    immutable: bool | None = None


class Secret(KubernetesObject, group="", version="v1", kind="Secret", plural="secrets"):
    """A secret. ``data`` values are base64 as on the wire; ``string_data`` is write-only."""

    type: str | None = None
    data: dict[str, str] = Field(default_factory=dict)
    string_data: dict[str, str] = Field(default_factory=dict)
    immutable: bool | None = None


class Binding(KubernetesObject, group="", version="v1", kind="Binding", plural="bindings"):
    """The body POSTed to ``pods/<name>/binding`` to bind a pod to a node (``target``)."""

    target: ObjectReference
