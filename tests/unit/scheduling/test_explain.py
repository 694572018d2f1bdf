"""Explanations: what filtered each task's nodes, and "never fits" against "not now"."""

from __future__ import annotations

from typing import Any

from crdkit.resources import Node
from crdkit.scheduling.explain import explain
from crdkit.scheduling.mirror import ClusterMirror


def node(name: str, rack: str, *, ready: bool = True, **spec: Any) -> Node:
    return Node.model_validate(
        {
            "metadata": {"name": name, "labels": {"rack": rack}},
            "spec": spec,
            "status": {
                "allocatable": {"cpu": "16", "nvidia.com/gpu": "8", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            },
        }
    )


def gang(replicas: int, gpu: int = 8) -> dict[str, Any]:
    return {
        "name": "g",
        "topology": {"mode": "required", "level": "rack"},
        "tasks": [
            {
                "name": "worker",
                "replicas": replicas,
                "requests": {"cpu": "1", "nvidia.com/gpu": gpu},
            }
        ],
    }


def mirror() -> ClusterMirror:
    m = ClusterMirror(["rack"])
    m.set_node(node("a", "r1"))
    m.set_node(node("b", "r1"))
    m.set_node(node("c", "r2", ready=False))
    m.set_node(node("d", "r2", unschedulable=True))
    m.set_node(node("e", "r2", taints=[{"key": "gpu", "value": "h100", "effect": "NoSchedule"}]))
    return m


def test_a_gang_bigger_than_any_rack_never_fits_and_every_filter_is_counted() -> None:
    m = mirror()
    placement = m.place(gang(3))
    why = explain(m, gang(3), placement)
    assert why.never_fits
    (task,) = why.tasks
    assert task.nodes == 5
    assert task.fit == 2
    assert task.filtered == {
        "node(s) were not ready": 1,
        "node(s) were unschedulable": 1,
        "node(s) had untolerated taint {gpu: h100}": 1,
    }
    assert why.message.startswith("never fits this cluster: required rack")
    assert (
        "worker: 2/5 nodes are available: 1 node(s) had untolerated taint {gpu: h100}"
        in why.message
    )


def test_a_gang_that_fits_an_empty_cluster_is_not_now_and_names_the_short_resource() -> None:
    m = mirror()
    m.cluster.add_pods("a", {"nvidia.com/gpu": 4000})
    placement = m.place(gang(2))
    assert placement.status == "unschedulable"
    why = explain(m, gang(2), placement)
    assert not why.never_fits
    assert why.tasks[0].filtered["Insufficient nvidia.com/gpu"] == 1
    assert why.message.startswith("not now: ")
