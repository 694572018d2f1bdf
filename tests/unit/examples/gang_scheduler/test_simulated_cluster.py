from __future__ import annotations

from collections import Counter

import pytest
from examples.gang_scheduler.simulated_cluster import (
    GPU_RESOURCE,
    RDMA_LABEL,
    ClusterShape,
    layout,
    node_manifests,
)
from examples.gang_scheduler.topology import TopologyConfig


def test_default_shape_fits_a_sixteen_pod_gang_under_one_leaf() -> None:
    shape = ClusterShape()
    assert shape.nodes_per_leaf >= 16
    assert (shape.zones, shape.spines_per_zone, shape.leaves_per_spine) == (2, 2, 2)
    assert shape.nodes == 128
    assert shape.gpus == 1024


def test_layout_nests_nodes_in_unique_domains() -> None:
    shape = ClusterShape(zones=2, spines_per_zone=3, leaves_per_spine=2, nodes_per_leaf=4)
    nodes = layout(shape)
    assert len(nodes) == shape.nodes == 48
    assert len({node.name for node in nodes}) == 48
    per_leaf = Counter(node.leaf for node in nodes)
    assert set(per_leaf.values()) == {4}
    assert len(per_leaf) == 12
    for node in nodes:
        assert node.leaf.startswith(node.spine + "-")
        assert node.spine.startswith(node.zone + "-")


def test_rdma_is_on_every_nth_leaf_for_all_its_nodes() -> None:
    nodes = layout(
        ClusterShape(zones=1, spines_per_zone=2, leaves_per_spine=3, nodes_per_leaf=2, rdma_every=2)
    )
    leaves = list(dict.fromkeys(node.leaf for node in nodes))
    rdma_leaves = {node.leaf for node in nodes if node.rdma}
    assert rdma_leaves == {leaves[0], leaves[2], leaves[4]}
    assert not any(node.rdma for node in layout(ClusterShape(rdma_every=0)))


def test_manifests_carry_tier_labels_allocatable_and_ready() -> None:
    topology = TopologyConfig(("net/leaf", "net/spine", "net/zone"))
    manifests = node_manifests(
        ClusterShape(zones=1, spines_per_zone=1, leaves_per_spine=2, nodes_per_leaf=1), topology
    )
    first, second = manifests
    labels = first["metadata"]["labels"]
    assert labels["net/leaf"] == "z0-s0-l0"
    assert labels["net/spine"] == "z0-s0"
    assert labels["net/zone"] == "z0"
    assert labels[RDMA_LABEL] == "true"
    assert RDMA_LABEL not in second["metadata"]["labels"]
    assert first["status"]["allocatable"][GPU_RESOURCE] == "8"
    assert first["status"]["allocatable"]["pods"] == "110"
    assert first["status"]["conditions"][0]["type"] == "Ready"


def test_manifests_need_a_three_tier_topology() -> None:
    with pytest.raises(ValueError, match="topology: the simulated cluster has 3 tiers"):
        node_manifests(ClusterShape(), TopologyConfig(("a", "b")))


@pytest.mark.parametrize("field", ["zones", "nodes_per_leaf", "gpus_per_node"])
def test_non_positive_counts_name_the_field(field: str) -> None:
    with pytest.raises(ValueError, match=f"{field}: must be a positive integer"):
        ClusterShape(**{field: 0})  # type: ignore[arg-type]


def test_with_about_gives_exactly_the_asked_node_count() -> None:
    for nodes in (16, 64, 256, 1024, 4096):
        shape = ClusterShape.with_about(nodes)
        assert shape.nodes == nodes
        assert shape.leaves_per_spine <= 4
        assert shape.spines_per_zone <= 4
    with pytest.raises(ValueError, match="nodes: 100 is not a whole number of leaves of 16 nodes"):
        ClusterShape.with_about(100)
