"""A simulated GPU cluster: nodes laid out in zones, spines and leaf switches, with GPUs and RDMA.

A gang scheduler is tried on the shape of a real training cluster: machines of 8 GPUs under leaf
switches, leaves under spines, spines in zones. `GpuClusterShape` says how many of each there
are and what a machine offers; `gpu_nodes` gives its Nodes, as their kubelets would register
them (`crdkit.testing.simulated_node`), in topology order; `create_gpu_cluster` creates them.
Each node carries one label per tier (`LEAF_LABEL`, `SPINE_LABEL`, `ZONE_LABEL` by default), a
GPU product label, and, on every ``rdma_every``-th leaf, Node Feature Discovery's RDMA label.
Domain names are unique cluster-wide (``z1-s0-l1``), so a leaf's label value alone names it.

``crdkit envtest up --gpu-nodes N --kubelets`` serves one from the command line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, NamedTuple

from crdkit.testing.sim.nodes import create_nodes, simulated_node

if TYPE_CHECKING:
    from crdkit.client import Client
    from crdkit.resources import Node

__all__ = [
    "GPU_PRODUCT_LABEL",
    "GPU_RESOURCE",
    "LEAF_LABEL",
    "RDMA_LABEL",
    "SIMULATED_LABEL",
    "SPINE_LABEL",
    "ZONE_LABEL",
    "GpuClusterShape",
    "NodePlace",
    "create_gpu_cluster",
    "gpu_node",
    "gpu_nodes",
    "layout",
]

GPU_RESOURCE = "nvidia.com/gpu"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
"""What NVIDIA's GPU feature discovery labels a node with: its GPU model."""
RDMA_LABEL = "feature.node.kubernetes.io/rdma.available"
"""Node Feature Discovery's label for nodes with a usable RDMA NIC."""
LEAF_LABEL = "topology.crdkit.io/leaf"
SPINE_LABEL = "topology.crdkit.io/spine"
ZONE_LABEL = "topology.kubernetes.io/zone"
SIMULATED_LABEL = "crdkit.io/simulated"
"""Marks the nodes of one simulated cluster (its value is the shape's ``name_prefix``), so a
test or a demo can select exactly its own nodes on a shared apiserver."""

_COUNTS = (
    "zones",
    "spines_per_zone",
    "leaves_per_spine",
    "nodes_per_leaf",
    "gpus_per_node",
    "cpus_per_node",
    "memory_gi_per_node",
    "pods_per_node",
)
_NAME_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?")


@dataclass(frozen=True)
class GpuClusterShape:
    """How many of each domain the cluster has, what one node offers, and the tier labels."""

    zones: int = 1
    spines_per_zone: int = 1
    leaves_per_spine: int = 2
    nodes_per_leaf: int = 16
    """Machines under one leaf switch: a gang that must stay in a leaf has at most these."""
    gpus_per_node: int = 8
    cpus_per_node: int = 96
    memory_gi_per_node: int = 1536
    """Memory of one machine, in GiB."""
    pods_per_node: int = 110
    """The kubelet's default limit of pods."""
    rdma_every: int = 1
    """Every n-th leaf (counting from the first) has RDMA NICs; 0 means none."""
    gpu_product: str = "NVIDIA-H100-80GB-HBM3"
    name_prefix: str = "gpu"
    """Starts every node name and is the value of `SIMULATED_LABEL`."""
    zone_label: str = ZONE_LABEL
    spine_label: str = SPINE_LABEL
    leaf_label: str = LEAF_LABEL

    def __post_init__(self) -> None:
        for name in _COUNTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: must be a positive integer, got {value!r}")
        if isinstance(self.rdma_every, bool) or not isinstance(self.rdma_every, int):
            raise ValueError(f"rdma_every: must be an integer, got {self.rdma_every!r}")
        if self.rdma_every < 0:
            raise ValueError(f"rdma_every: must be 0 or more, got {self.rdma_every}")
        if not _NAME_PREFIX.fullmatch(self.name_prefix):
            raise ValueError(
                f"name_prefix: {self.name_prefix!r} must be 1-32 lowercase letters, digits or '-'"
            )
        labels = [f for f in fields(self) if f.name.endswith("_label")]
        seen: dict[str, str] = {}
        for label in labels:
            key = getattr(self, label.name)
            if not isinstance(key, str) or not key:
                raise ValueError(f"{label.name}: must be a non-empty label key, got {key!r}")
            if key in seen:
                raise ValueError(f"{label.name}: {key!r} is already {seen[key]}")
            seen[key] = label.name

    @classmethod
    def with_nodes(
        cls, nodes: int, *, nodes_per_leaf: int = 16, **others: int | str
    ) -> GpuClusterShape:
        """A shape of exactly ``nodes`` nodes: leaves of ``nodes_per_leaf``, up to four leaves
        per spine and four spines per zone, fewer where the count does not divide. A count
        that is not whole leaves is refused."""
        if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
            raise ValueError(f"nodes: must be a positive integer, got {nodes!r}")
        if nodes_per_leaf < 1 or nodes % nodes_per_leaf:
            raise ValueError(
                f"nodes: {nodes} is not a whole number of leaves of {nodes_per_leaf} nodes "
                "(nodes_per_leaf)"
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
            **others,  # type: ignore[arg-type]  # the constructor checks each
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

    @property
    def levels(self) -> list[str]:
        """The tier labels widest first: what `crdkit scheduler --levels` and the placer take."""
        return [self.zone_label, self.spine_label, self.leaf_label]


def _largest_divisor_at_most(value: int, limit: int) -> int:
    return max(d for d in range(1, min(value, limit) + 1) if value % d == 0)


class NodePlace(NamedTuple):
    """Where one node of a `GpuClusterShape` sits."""

    name: str
    zone: str
    spine: str
    leaf: str
    rdma: bool


def layout(shape: GpuClusterShape) -> list[NodePlace]:
    """Every node of ``shape`` in topology order (zone, spine, leaf, node)."""
    places: list[NodePlace] = []
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
                    places.append(NodePlace(name, zone, spine, leaf, rdma))
                leaf_index += 1
    return places


def gpu_node(shape: GpuClusterShape, place: NodePlace) -> Node:
    """The node at ``place`` as its kubelet would register it: ready, untainted, with a
    machine of ``shape``'s resources and a label per tier."""
    labels = {
        "kubernetes.io/os": "linux",
        GPU_PRODUCT_LABEL: shape.gpu_product,
        shape.zone_label: place.zone,
        shape.spine_label: place.spine,
        shape.leaf_label: place.leaf,
        SIMULATED_LABEL: shape.name_prefix,
    }
    if place.rdma:
        labels[RDMA_LABEL] = "true"
    offered = {
        "cpu": str(shape.cpus_per_node),
        "memory": f"{shape.memory_gi_per_node}Gi",
        "pods": str(shape.pods_per_node),
        GPU_RESOURCE: str(shape.gpus_per_node),
    }
    return simulated_node(place.name, labels=labels, allocatable=offered)


def gpu_nodes(shape: GpuClusterShape) -> list[Node]:
    """Every node of ``shape`` in topology order (see `layout` and `gpu_node`)."""
    return [gpu_node(shape, place) for place in layout(shape)]


async def create_gpu_cluster(client: Client, shape: GpuClusterShape) -> list[Node]:
    """Create the nodes of ``shape`` (see `crdkit.testing.create_nodes`); the nodes as stored."""
    return await create_nodes(client, gpu_nodes(shape))
