"""A simulated GPU cluster: Node manifests laid out in zones, spines, leaf switches and nodes.

Nothing runs a kubelet in the local control plane, so these Node objects are created straight
through the API with their status (allocatable GPUs, the Ready condition) already filled in, the
way a kubelet would report them. Each node carries one label per topology tier, and the nodes of
every ``rdma_every``-th leaf carry the RDMA label that jobs can select with a ``nodeSelector``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from examples.gang_scheduler.topology import TopologyConfig

GPU_RESOURCE = "nvidia.com/gpu"
RDMA_LABEL = "feature.node.kubernetes.io/rdma.available"
"""Node Feature Discovery's label for nodes with a usable RDMA NIC."""

SIMULATED_LABEL = "crdkit.io/simulated"
"""Marks the nodes this module made (its value is the shape's ``name_prefix``), so a demo or a
test can select exactly its own nodes on a shared apiserver."""


@dataclass(frozen=True)
class ClusterShape:
    """How many of each domain the simulated cluster has, and what one node offers."""

    zones: int = 2
    spines_per_zone: int = 2
    leaves_per_spine: int = 2
    nodes_per_leaf: int = 16
    gpus_per_node: int = 8
    cpus_per_node: int = 96
    memory_gi_per_node: int = 1536
    pods_per_node: int = 110
    rdma_every: int = 2
    """Every n-th leaf (counting from the first) has RDMA NICs; 0 means none."""
    name_prefix: str = "gpu"
    """Starts every node name and is the value of the simulated-node label."""

    def __post_init__(self) -> None:
        for field in (
            "zones",
            "spines_per_zone",
            "leaves_per_spine",
            "nodes_per_leaf",
            "gpus_per_node",
            "cpus_per_node",
            "memory_gi_per_node",
            "pods_per_node",
        ):
            value = getattr(self, field)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{field}: must be a positive integer, got {value!r}")
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?", self.name_prefix):
            raise ValueError(
                f"name_prefix: {self.name_prefix!r} must be 1-32 lowercase letters, digits or '-'"
            )
        if not isinstance(self.rdma_every, int) or self.rdma_every < 0:
            raise ValueError(
                f"rdma_every: must be 0 or a positive integer, got {self.rdma_every!r}"
            )

    @property
    def leaves(self) -> int:
        """Leaf switches in the whole cluster."""
        return self.zones * self.spines_per_zone * self.leaves_per_spine

    @property
    def nodes(self) -> int:
        """Nodes in the whole cluster."""
        return self.leaves * self.nodes_per_leaf

    @property
    def gpus(self) -> int:
        """GPUs in the whole cluster."""
        return self.nodes * self.gpus_per_node

    @classmethod
    def with_about(
        cls, nodes: int, nodes_per_leaf: int = 16, name_prefix: str = "gpu"
    ) -> ClusterShape:
        """A shape of exactly ``nodes`` nodes when it divides evenly, for benchmarks.

        Leaves of ``nodes_per_leaf`` nodes, four leaves per spine and four spines per zone where
        the count allows, fewer otherwise; a count that is not whole leaves is an error.
        """
        if nodes < 1 or nodes % nodes_per_leaf:
            raise ValueError(
                f"nodes: {nodes} is not a positive multiple of {nodes_per_leaf} (nodes per leaf)"
            )
        leaves = nodes // nodes_per_leaf
        leaves_per_spine = _largest_divisor_at_most(leaves, 4)
        spines = leaves // leaves_per_spine
        spines_per_zone = _largest_divisor_at_most(spines, 4)
        return cls(
            zones=spines // spines_per_zone,
            spines_per_zone=spines_per_zone,
            leaves_per_spine=leaves_per_spine,
            nodes_per_leaf=nodes_per_leaf,
            name_prefix=name_prefix,
        )


@dataclass(frozen=True)
class SimulatedNode:
    """Where one simulated node sits, before it becomes a manifest."""

    name: str
    zone: str
    spine: str
    leaf: str
    rdma: bool


def _largest_divisor_at_most(value: int, limit: int) -> int:
    return max(d for d in range(1, min(value, limit) + 1) if value % d == 0)


def layout(shape: ClusterShape) -> list[SimulatedNode]:
    """Every node of ``shape`` in topology order (zone, spine, leaf, node).

    Domain names are globally unique (``z1-s0-l1``), so a leaf's label value alone identifies it.
    """
    nodes: list[SimulatedNode] = []
    leaf_index = 0
    for z in range(shape.zones):
        zone = f"z{z}"
        for s in range(shape.spines_per_zone):
            spine = f"{zone}-s{s}"
            for lf in range(shape.leaves_per_spine):
                leaf = f"{spine}-l{lf}"
                rdma = shape.rdma_every > 0 and leaf_index % shape.rdma_every == 0
                for n in range(shape.nodes_per_leaf):
                    name = f"{shape.name_prefix}-{leaf}-n{n:02d}"
                    nodes.append(SimulatedNode(name, zone, spine, leaf, rdma))
                leaf_index += 1
    return nodes


def node_manifest(
    node: SimulatedNode, shape: ClusterShape, topology: TopologyConfig
) -> dict[str, Any]:
    """The Node object a kubelet on this machine would register, status included."""
    if topology.tiers != 3:
        raise ValueError(
            f"topology: the simulated cluster has 3 tiers, the configuration names {topology.tiers}"
        )
    leaf_label, spine_label, zone_label = topology.tier_labels
    labels = {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        zone_label: node.zone,
        spine_label: node.spine,
        leaf_label: node.leaf,
        SIMULATED_LABEL: shape.name_prefix,
    }
    if node.rdma:
        labels[RDMA_LABEL] = "true"
    resources = {
        "cpu": str(shape.cpus_per_node),
        "memory": f"{shape.memory_gi_per_node}Gi",
        "pods": str(shape.pods_per_node),
        GPU_RESOURCE: str(shape.gpus_per_node),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "simulated node reporting ready",
                }
            ],
        },
    }


def node_manifests(shape: ClusterShape, topology: TopologyConfig) -> list[dict[str, Any]]:
    """Every Node manifest of the simulated cluster, in topology order."""
    return [node_manifest(node, shape, topology) for node in layout(shape)]
