"""The few values the apiserver itself sets on create that reconcilers commonly read.

The fake does no general defaulting (no OpenAPI defaults, no container defaults); it sets only
what code tends to branch on: a new Pod's ``status.phase`` (Pending) and ``status.qosClass``,
and a new Namespace's ``kubernetes.io/metadata.name`` label and ``status.phase`` (Active).
"""

from __future__ import annotations

from typing import Any

__all__ = ["on_create"]

_QOS_RESOURCES = ("cpu", "memory")


def _qos_class(spec: dict[str, Any]) -> str:
    """Kubernetes' pod QoS class from the containers' cpu and memory requests and limits."""
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    any_set = False
    guaranteed = bool(containers)
    for container in containers:
        resources = container.get("resources") or {}
        requests = resources.get("requests") or {}
        limits = resources.get("limits") or {}
        if any(r in requests or r in limits for r in _QOS_RESOURCES):
            any_set = True
        for resource in _QOS_RESOURCES:
            limit = limits.get(resource)
            request = requests.get(resource, limit)  # requests default to limits
            if limit is None or str(request) != str(limit):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def on_create(group: str, kind: str, obj: dict[str, Any]) -> None:
    """Set the server-side values of a new ``group``/``kind`` object in place."""
    if group:
        return
    if kind == "Pod":
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj.get("spec") or {})}
    elif kind == "Namespace":
        name = obj["metadata"]["name"]
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
        obj["status"] = {"phase": "Active"}
