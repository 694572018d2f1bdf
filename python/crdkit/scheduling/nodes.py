"""A Node object as the placer sees it: the contract's node entry (docs/reference/placement-io.md).

The rules follow kube-scheduler's filters:

- capacity is ``status.allocatable`` (every resource, ``pods`` included);
- ``spec.taints`` with the effects that matter for placement are kept; ``spec.unschedulable``
  (a cordon) becomes the ``node.kubernetes.io/unschedulable:NoSchedule`` taint, as the
  NodeUnschedulable plugin treats it, so a pod that tolerates that taint may still land there;
- a node takes new pods only while its ``Ready`` condition is ``True``. A node controller would
  also add the ``node.kubernetes.io/not-ready`` taint; reading the condition itself keeps the
  mirror right where no such controller runs (a local control plane, a fresh registration).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from crdkit.resources import Node

__all__ = [
    "UNSCHEDULABLE_TAINT",
    "node_entry",
    "node_ready",
]

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
"""The taint key kube-scheduler reads a cordon as (``spec.unschedulable: true``)."""

_EFFECTS = frozenset({"NoSchedule", "NoExecute", "PreferNoSchedule"})


def node_ready(node: Node) -> bool:
    """Whether the node's ``Ready`` condition is ``True`` (no condition: not ready)."""
    conditions = node.status.conditions if node.status else []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def node_entry(node: Node) -> dict[str, Any]:
    """The placer's node entry for ``node``, without usage (its pods are counted apart)."""
    name = node.metadata.name
    if not name:
        raise ValueError("node.metadata.name: missing")
    taints = [
        {"key": taint.key, "value": taint.value or "", "effect": taint.effect}
        for taint in node.spec.taints
        if taint.effect in _EFFECTS
    ]
    if node.spec.unschedulable and not any(t["key"] == UNSCHEDULABLE_TAINT for t in taints):
        taints.append({"key": UNSCHEDULABLE_TAINT, "value": "", "effect": "NoSchedule"})
    return {
        "name": name,
        "labels": dict(node.metadata.labels),
        "allocatable": dict(node.status.allocatable) if node.status else {},
        "taints": taints,
        "ready": node_ready(node),
    }
