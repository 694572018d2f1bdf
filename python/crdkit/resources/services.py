"""Core ``v1`` kinds that give workloads a network identity and credentials: Service and
ServiceAccount.

As with every built-in kind, only what operators commonly set or read is typed; the models keep
every other field, so a read-modify-write through them loses nothing.
"""

# Annotations are evaluated at class creation (no `from __future__ import annotations`), so the
# names they use are runtime imports to pydantic and to the linter alike.
from pydantic import Field

from crdkit.resources._model import OpenModel, RawObject
from crdkit.resources.core import ObjectReference
from crdkit.resources.durations import IntOrString
from crdkit.resources.object import KubernetesObject

__all__ = [
    "LocalObjectReference",
    "Service",
    "ServiceAccount",
    "ServicePort",
    "ServiceSpec",
    "ServiceStatus",
]


class ServicePort(OpenModel):
    port: int
    name: str | None = None
    protocol: str | None = None
    # a number or the name of a container port
    target_port: IntOrString | None = None
    node_port: int | None = None
    app_protocol: str | None = None


class ServiceSpec(OpenModel):
    """``type`` defaults to ``ClusterIP``; ``cluster_ip="None"`` makes a headless Service (the
    per-pod DNS names a StatefulSet or a training job's workers need)."""

    type: str | None = None
    selector: dict[str, str] = Field(default_factory=dict)
    ports: list[ServicePort] = Field(default_factory=list)
    cluster_ip: str | None = Field(default=None, alias="clusterIP")
    cluster_ips: list[str] = Field(default_factory=list, alias="clusterIPs")
    publish_not_ready_addresses: bool | None = None
    session_affinity: str | None = None
    external_name: str | None = None
    internal_traffic_policy: str | None = None


class ServiceStatus(OpenModel):
    load_balancer: RawObject = Field(default_factory=dict)
    conditions: list[RawObject] = Field(default_factory=list)


class Service(KubernetesObject, group="", version="v1", kind="Service", plural="services"):
    spec: ServiceSpec = Field(default_factory=ServiceSpec)
    status: ServiceStatus | None = None


class LocalObjectReference(OpenModel):
    name: str


class ServiceAccount(
    KubernetesObject, group="", version="v1", kind="ServiceAccount", plural="serviceaccounts"
):
    secrets: list[ObjectReference] = Field(default_factory=list)
    image_pull_secrets: list[LocalObjectReference] = Field(default_factory=list)
    automount_service_account_token: bool | None = None
