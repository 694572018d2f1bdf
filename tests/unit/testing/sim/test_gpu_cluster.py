"""The simulated GPU cluster's layout: counts, unique domain names, labels, refusals."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crdkit.testing import RDMA_LABEL, SIMULATED_LABEL, GpuClusterShape, gpu_nodes


def test_a_default_shape_is_two_leaves_of_sixteen_eight_gpu_nodes() -> None:
    shape = GpuClusterShape()
    nodes = gpu_nodes(shape)
    assert (shape.nodes, shape.gpus, shape.leaves) == (32, 256, 2)
    assert len(nodes) == 32
    first = nodes[0]
    assert first.metadata.name == "gpu-z0-s0-l0-n00"
    labels = first.metadata.labels or {}
    assert labels[shape.zone_label] == "z0"
    assert labels[shape.spine_label] == "z0-s0"
    assert labels[shape.leaf_label] == "z0-s0-l0"
    assert labels["kubernetes.io/hostname"] == "gpu-z0-s0-l0-n00"
    assert labels[SIMULATED_LABEL] == "gpu"
    assert first.status is not None
    assert first.status.allocatable["nvidia.com/gpu"] == "8"
    assert shape.levels == [shape.zone_label, shape.spine_label, shape.leaf_label]


@given(
    leaves=st.integers(min_value=1, max_value=40),
    per_leaf=st.integers(min_value=1, max_value=8),
    rdma_every=st.integers(min_value=0, max_value=3),
)
def test_with_nodes_lays_out_exactly_that_many_nodes_in_whole_leaves(
    leaves: int, per_leaf: int, rdma_every: int
) -> None:
    shape = GpuClusterShape.with_nodes(
        leaves * per_leaf, nodes_per_leaf=per_leaf, rdma_every=rdma_every
    )
    nodes = gpu_nodes(shape)
    assert len(nodes) == shape.nodes == leaves * per_leaf
    assert shape.leaves_per_spine <= 4
    assert shape.spines_per_zone <= 4
    names = [n.metadata.name for n in nodes]
    assert len(set(names)) == len(names)
    by_leaf = Counter((n.metadata.labels or {})[shape.leaf_label] for n in nodes)
    assert set(by_leaf.values()) == {per_leaf}
    assert len(by_leaf) == leaves
    # A leaf lies in one spine, a spine in one zone: the tiers nest.
    for upper, lower in (
        (shape.zone_label, shape.spine_label),
        (shape.spine_label, shape.leaf_label),
    ):
        parents: dict[str, set[str]] = {}
        for node in nodes:
            labels = node.metadata.labels or {}
            parents.setdefault(labels[lower], set()).add(labels[upper])
        assert all(len(p) == 1 for p in parents.values())
    rdma_leaves = {
        (n.metadata.labels or {})[shape.leaf_label]
        for n in nodes
        if RDMA_LABEL in (n.metadata.labels or {})
    }
    expected = 0 if rdma_every == 0 else -(-leaves // rdma_every)
    assert len(rdma_leaves) == expected


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: GpuClusterShape.with_nodes(20), "nodes: 20 is not a whole number of leaves"),
        (lambda: GpuClusterShape.with_nodes(0), "nodes: must be a positive integer"),
        (lambda: GpuClusterShape(gpus_per_node=0), "gpus_per_node: must be a positive integer"),
        (lambda: GpuClusterShape(rdma_every=-1), "rdma_every: must be 0 or more"),
        (lambda: GpuClusterShape(name_prefix="GPU"), "name_prefix: 'GPU' must be"),
        (
            lambda: GpuClusterShape(leaf_label="topology.kubernetes.io/zone"),
            "leaf_label: 'topology.kubernetes.io/zone' is already zone_label",
        ),
    ],
)
def test_a_shape_it_cannot_lay_out_is_refused_naming_the_field(build: object, message: str) -> None:
    assert callable(build)
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        build()
