from __future__ import annotations

from typing import Any

from examples.gang_scheduler.node_usage import NodeUsage, node_snapshot
from examples.gang_scheduler.simulated_cluster import ClusterShape, layout, node_manifest
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.resources import Node, Pod

SHAPE = ClusterShape(zones=1, spines_per_zone=1, leaves_per_spine=1, nodes_per_leaf=2)
NODES = [Node.model_validate(node_manifest(n, SHAPE, TopologyConfig())) for n in layout(SHAPE)]


def _pod(name: str, node: str | None, gpus: int, phase: str | None = None) -> Pod:
    data: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}],
        },
    }
    if phase:
        data["status"] = {"phase": phase}
    return Pod.model_validate(data)


def test_snapshot_matches_the_contract() -> None:
    node = NODES[0].model_copy(deep=True)
    node.spec.unschedulable = True
    snapshot = node_snapshot(node, {"nvidia.com/gpu": 3000, "cpu": 0})
    assert snapshot["name"] == node.metadata.name
    assert snapshot["allocatable"]["nvidia.com/gpu"] == "8"
    assert snapshot["used"] == {"nvidia.com/gpu": "3"}
    assert snapshot["unschedulable"] is True
    assert snapshot["ready"] is True
    node.status.conditions[0].status = "False"  # type: ignore[union-attr]
    assert node_snapshot(node, {})["ready"] is False


def test_pods_count_once_and_terminal_or_unbound_pods_count_nothing() -> None:
    usage = NodeUsage()
    for node in NODES:
        usage.set_node(node)
    name = NODES[0].metadata.name
    assert name is not None
    changed, removed = usage.take_changes()
    assert [s["name"] for s in changed] == sorted(n.metadata.name or "" for n in NODES)
    assert removed == []

    usage.assume("ns/p0", name, {"nvidia.com/gpu": 8000})
    usage.set_pod(_pod("p0", name, 8))  # the echo of the assumption: no double count
    assert usage.used(name) == {"nvidia.com/gpu": 8000}
    usage.set_pod(_pod("p1", None, 8))
    assert not usage.has_pod("ns/p1")
    changed, _ = usage.take_changes()
    assert [s["name"] for s in changed] == [name]
    assert changed[0]["used"] == {"nvidia.com/gpu": "8"}

    usage.set_pod(_pod("p0", name, 8, phase="Succeeded"))
    assert usage.used(name) == {}
    assert not usage.has_pod("ns/p0")
    assert usage.take_changes()[0][0]["used"] == {}
    assert usage.take_changes() == ([], [])


def test_removed_nodes_are_reported_and_not_snapshotted() -> None:
    usage = NodeUsage()
    usage.set_node(NODES[0])
    usage.take_changes()
    usage.assume("ns/p", NODES[0].metadata.name or "", {"cpu": 1000})
    usage.remove_node(NODES[0].metadata.name or "")
    assert usage.take_changes() == ([], [NODES[0].metadata.name])
    usage.remove_pod("ns/p")  # its node is gone: nothing to report
    assert usage.take_changes() == ([], [])
