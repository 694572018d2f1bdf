"""Counting a task's filters over node classes (`node_classes` + `filter_classes`) gives what
counting node by node gives (`filter_nodes`), for any nodes, usage and task: the classes are
only a shortcut for explanations, never a different answer."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from crdkit.placer import Cluster
from crdkit.scheduling.explanation import filter_classes, filter_nodes, node_classes

HOST = "kubernetes.io/hostname"
RACK = "example.com/rack"
TAINT = st.sampled_from(
    [
        {"key": "gpu", "value": "a100", "effect": "NoSchedule"},
        {"key": "gpu", "value": "h100", "effect": "NoSchedule"},
        {"key": "soft", "value": "", "effect": "PreferNoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"},
    ]
)


def _key(taint: dict[str, str]) -> str:
    return taint["key"]


@st.composite
def node_kind(draw: st.DrawFn) -> dict[str, Any]:
    """What a node offers and carries, but its name: nodes are drawn from a few kinds, so that
    classes with several members (alike but for their usage) are common."""
    labels = {}
    rack = draw(st.sampled_from([None, "r0", "r1"]))
    if rack is not None:
        labels[RACK] = rack
    allocatable: dict[str, str] = {"nvidia.com/gpu": str(draw(st.sampled_from([0, 4, 8])))}
    if draw(st.booleans()):
        allocatable["pods"] = str(draw(st.integers(1, 4)))
    return {
        "labels": labels,
        "allocatable": allocatable,
        # Mostly untainted: the nodes that get as far as the capacity check.
        "taints": draw(st.one_of(st.just([]), st.lists(TAINT, max_size=2, unique_by=_key))),
    }


@st.composite
def nodes(draw: st.DrawFn) -> list[dict[str, Any]]:
    kinds = draw(st.lists(node_kind(), min_size=1, max_size=3))
    out = []
    for i in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(kinds))
        labels = {**kind["labels"], HOST: f"n{i}"}
        ready = draw(st.sampled_from([True, True, True, False]))  # per node: one may fail
        out.append({**kind, "name": f"n{i}", "labels": labels, "ready": ready})
    return out


@st.composite
def usage(draw: st.DrawFn, names: list[str]) -> dict[str, dict[str, int]] | None:
    if draw(st.booleans()):
        return None  # every node empty
    return {
        name: {"nvidia.com/gpu": draw(st.sampled_from([0, 4000, 8000])), "pods": 1000}
        for name in names
        if draw(st.booleans())
    }


@st.composite
def tasks(draw: st.DrawFn) -> dict[str, Any]:
    task: dict[str, Any] = {
        "name": "w",
        "replicas": 1,
        "requests": {"nvidia.com/gpu": str(draw(st.sampled_from([0, 1, 4, 8])))},
    }
    selector = draw(st.sampled_from([{}, {}, {RACK: "r0"}, {"other": "x"}]))
    if selector:
        task["nodeSelector"] = selector
    toleration = draw(
        st.sampled_from(
            [None, {"key": "gpu", "operator": "Exists"}, {"key": "gpu", "value": "a100"}]
        )
    )
    if toleration is not None:
        task["tolerations"] = [toleration]
    return task


@settings(max_examples=150, deadline=None)
@given(data=st.data(), needed=st.sampled_from([(), (RACK,)]))
def test_classes_count_what_nodes_count(data: st.DataObject, needed: tuple[str, ...]) -> None:
    cluster_nodes = data.draw(nodes())
    used = data.draw(usage([n["name"] for n in cluster_nodes]))
    task = data.draw(tasks())
    compiled = Cluster([RACK]).compile({"name": "g", "tasks": [task]}).tasks[0]
    by_node = filter_nodes(compiled, cluster_nodes, used, needed)
    by_class = filter_classes(
        compiled, node_classes(cluster_nodes, used), now=used is not None, needed_labels=needed
    )
    assert by_class == by_node
