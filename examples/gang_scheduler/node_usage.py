"""What every node offers and what its pods already take, as placer node snapshots.

The operator keeps one :class:`NodeUsage` up to date from node and pod events and hands the
snapshots of the nodes that changed to the placer's incremental ``Cluster``, so a decision never
rebuilds the world. Usage is keyed by pod (``namespace/name``), which makes two things safe:

- the operator records the pods of a placement the moment it decides (``assume``), before the
  apiserver has echoed them back; when the pod event arrives it lands on the same key, so the pod
  is never counted twice;
- a pod that moves to a terminal phase or disappears is removed once, whatever the event order.

Pods in phase Succeeded or Failed take nothing, as in the Kubernetes scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crdkit.placer import format_quantity
from crdkit.resources import Node, Pod
from examples.gang_scheduler.gang_request import pod_requests

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def node_ready(node: Node) -> bool:
    """A node without a Ready condition, or with it not True, takes no new pods."""
    conditions = node.status.conditions if node.status else []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def node_snapshot(node: Node, used: Mapping[str, int]) -> dict[str, Any]:
    """The placement contract's node entry for ``node`` with ``used`` (milli-units)."""
    name = node.metadata.name
    if not name:
        raise ValueError("node metadata.name: missing")
    allocatable = dict(node.status.allocatable) if node.status else {}
    return {
        "name": name,
        "labels": dict(node.metadata.labels),
        "allocatable": allocatable,
        "used": {
            resource: format_quantity(milli) for resource, milli in sorted(used.items()) if milli
        },
        "taints": [
            {"key": taint.key, "value": taint.value or "", "effect": taint.effect}
            for taint in node.spec.taints
            if taint.effect in ("NoSchedule", "NoExecute", "PreferNoSchedule")
        ],
        "unschedulable": bool(node.spec.unschedulable),
        "ready": node_ready(node),
    }


def pod_key(namespace: str | None, name: str | None) -> str:
    """``namespace/name`` of a pod."""
    return f"{namespace or 'default'}/{name}"


def pod_takes_capacity(pod: Pod) -> bool:
    """Bound and not finished: the pod holds its requests on its node."""
    phase = pod.status.phase if pod.status else None
    return bool(pod.spec.node_name) and phase not in TERMINAL_PHASES


@dataclass
class NodeUsage:
    """Nodes and the requests of their pods, with the nodes changed since last asked."""

    nodes: dict[str, Node] = field(default_factory=dict)
    _pods: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)
    _used: dict[str, dict[str, int]] = field(default_factory=dict)
    _dirty: set[str] = field(default_factory=set)
    _removed: set[str] = field(default_factory=set)

    # -- nodes -----------------------------------------------------------------------------

    def set_node(self, node: Node) -> None:
        """A node was added or changed."""
        name = node.metadata.name
        if not name:
            raise ValueError("node metadata.name: missing")
        self.nodes[name] = node
        self._removed.discard(name)
        self._dirty.add(name)

    def remove_node(self, name: str) -> None:
        """A node is gone; pods still recorded on it keep their usage until they go too."""
        if self.nodes.pop(name, None) is not None:
            self._dirty.discard(name)
            self._removed.add(name)

    # -- pods ------------------------------------------------------------------------------

    def set_pod(self, pod: Pod) -> None:
        """A pod was added or changed: record what it takes, or forget it if it takes nothing."""
        key = pod_key(pod.metadata.namespace, pod.metadata.name)
        if not pod_takes_capacity(pod):
            self.remove_pod(key)
            return
        assert pod.spec.node_name is not None  # pod_takes_capacity checked it
        self.assume(key, pod.spec.node_name, pod_requests(pod.spec, f"pod {key} spec"))

    def assume(self, key: str, node: str, requests: Mapping[str, int]) -> None:
        """Count ``requests`` on ``node`` for pod ``key`` (replacing what that key held before)."""
        previous = self._pods.get(key)
        if previous is not None and previous == (node, dict(requests)):
            return
        self.remove_pod(key)
        self._pods[key] = (node, dict(requests))
        used = self._used.setdefault(node, {})
        for resource, milli in requests.items():
            used[resource] = used.get(resource, 0) + milli
        self._touch(node)

    def remove_pod(self, key: str) -> None:
        """Pod ``key`` no longer takes anything (deleted, finished, or a rolled-back assumption)."""
        previous = self._pods.pop(key, None)
        if previous is None:
            return
        node, requests = previous
        used = self._used[node]
        for resource, milli in requests.items():
            used[resource] -= milli
            if not used[resource]:
                del used[resource]
        if not used:
            del self._used[node]
        self._touch(node)

    def _touch(self, node: str) -> None:
        if node in self.nodes:
            self._dirty.add(node)

    # -- reading ---------------------------------------------------------------------------

    def has_pod(self, key: str) -> bool:
        """Whether pod ``key`` is counted."""
        return key in self._pods

    def used(self, node: str) -> dict[str, int]:
        """What the counted pods take on ``node``, in milli-units."""
        return dict(self._used.get(node, {}))

    def snapshot(self, node: str) -> dict[str, Any]:
        """The contract node entry for ``node``, usage included."""
        return node_snapshot(self.nodes[node], self._used.get(node, {}))

    def snapshots(self) -> list[dict[str, Any]]:
        """Every node's contract entry, by name."""
        return [self.snapshot(name) for name in sorted(self.nodes)]

    def take_changes(self) -> tuple[list[dict[str, Any]], list[str]]:
        """Snapshots of the nodes changed since the last call, and the names of removed ones."""
        changed = [self.snapshot(name) for name in sorted(self._dirty) if name in self.nodes]
        removed = sorted(self._removed)
        self._dirty.clear()
        self._removed.clear()
        return changed, removed
