"""The demo's simulated GPU cluster: `crdkit.testing`'s GPU cluster with the demo's defaults
(two zones of two spines of two leaves of 16 nodes, RDMA NICs on every second leaf) and the
tier labels the operator's topology configuration names.

Nothing runs a kubelet in the local control plane, so these Node objects are created straight
through the API with their status (allocatable GPUs, the Ready condition) already filled in, the
way a kubelet would report them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from crdkit.testing import (
    GPU_RESOURCE,
    RDMA_LABEL,
    SIMULATED_LABEL,
    GpuClusterShape,
    gpu_node,
    layout,
)
from crdkit.testing import NodePlace as SimulatedNode
from examples.gang_scheduler.topology import TopologyConfig

__all__ = [
    "GPU_RESOURCE",
    "RDMA_LABEL",
    "SIMULATED_LABEL",
    "ClusterShape",
    "SimulatedNode",
    "layout",
    "node_manifest",
    "node_manifests",
]


@dataclass(frozen=True)
class ClusterShape(GpuClusterShape):
    """The demo's cluster: 128 nodes of 8 GPUs in 8 leaves, RDMA on every second leaf."""

    zones: int = 2
    spines_per_zone: int = 2
    leaves_per_spine: int = 2
    rdma_every: int = 2

    @classmethod
    def with_about(
        cls, nodes: int, nodes_per_leaf: int = 16, name_prefix: str = "gpu"
    ) -> ClusterShape:
        """A shape of exactly ``nodes`` nodes, for benchmarks (`GpuClusterShape.with_nodes`)."""
        shape = cls.with_nodes(nodes, nodes_per_leaf=nodes_per_leaf, name_prefix=name_prefix)
        assert isinstance(shape, ClusterShape)
        return shape


def _labelled(shape: GpuClusterShape, topology: TopologyConfig) -> GpuClusterShape:
    if topology.tiers != 3:
        raise ValueError(
            f"topology: the simulated cluster has 3 tiers, the configuration names {topology.tiers}"
        )
    leaf, spine, zone = topology.tier_labels
    return replace(shape, leaf_label=leaf, spine_label=spine, zone_label=zone)


def node_manifest(
    node: SimulatedNode, shape: GpuClusterShape, topology: TopologyConfig
) -> dict[str, Any]:
    """The Node object a kubelet on this machine would register, status included."""
    made = gpu_node(_labelled(shape, topology), node)
    return made.model_dump(mode="json", by_alias=True, exclude_none=True)


def node_manifests(shape: GpuClusterShape, topology: TopologyConfig) -> list[dict[str, Any]]:
    """Every Node manifest of the simulated cluster, in topology order."""
    labelled = _labelled(shape, topology)
    return [
        gpu_node(labelled, place).model_dump(mode="json", by_alias=True, exclude_none=True)
        for place in layout(labelled)
    ]
