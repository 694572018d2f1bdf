"""Node objects as placer entries: allocatable, taints, cordons and readiness."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

import factories
from crdkit.scheduling.nodes import UNSCHEDULABLE_TAINT, node_entry, node_ready

node = partial(factories.node, cpu=96)


def test_a_ready_node_keeps_every_allocatable_resource_and_its_labels() -> None:
    entry = node_entry(node())
    assert entry["allocatable"] == {"cpu": "96", "nvidia.com/gpu": "8", "pods": "110"}
    assert entry["labels"] == {"rack": "r1"}
    assert entry["ready"] is True
    assert entry["taints"] == []


def test_a_cordon_is_the_unschedulable_taint_and_the_not_ready_taint_is_kept() -> None:
    taints = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
    entry = node_entry(node(unschedulable=True, taints=taints))
    assert {"key": UNSCHEDULABLE_TAINT, "value": "", "effect": "NoSchedule"} in entry["taints"]
    assert {"key": "node.kubernetes.io/not-ready", "value": "", "effect": "NoSchedule"} in entry[
        "taints"
    ]


@pytest.mark.parametrize(
    "conditions",
    [[], [{"type": "Ready", "status": "False"}], [{"type": "Ready", "status": "Unknown"}]],
)
def test_a_node_without_a_true_ready_condition_is_not_ready(conditions: list[Any]) -> None:
    status = {"allocatable": {"cpu": "1"}, "conditions": conditions}
    assert not node_ready(node(status=status))
    assert node_entry(node(status=status))["ready"] is False


def test_a_node_without_a_name_is_refused() -> None:
    with pytest.raises(ValueError, match=r"node.metadata.name"):
        node_entry(node(None, rack=None))
