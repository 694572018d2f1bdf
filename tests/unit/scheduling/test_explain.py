"""Explanations: what filtered each task's nodes, and "never fits" against "not now"."""

from __future__ import annotations

from functools import partial
from typing import Any

import factories
from crdkit.scheduling.explanation import explain
from crdkit.scheduling.mirror import ClusterMirror

node = partial(factories.node, cpu=16)


def gang(replicas: int, gpu: int = 8, *, name: str = "worker", master: int = 0) -> dict[str, Any]:
    tasks = [factories.task(name, replicas, requests={"cpu": "1", "nvidia.com/gpu": gpu})]
    if master:
        tasks.insert(
            0, factories.task("master", master, requests={"cpu": "1", "nvidia.com/gpu": 8})
        )
    return factories.gang(*tasks, topology={"mode": "required", "level": "rack"})


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
    assert why.message == (
        "never fits this cluster, even with every node empty: required rack: the best rack "
        "fits 2 of 3 worker pods (r1); worker: 2/5 nodes could ever take one: 1 node(s) had "
        "untolerated taint {gpu: h100}, 1 node(s) were not ready, 1 node(s) were unschedulable"
    )


def test_a_gang_that_never_fits_is_told_by_the_empty_cluster_not_by_what_runs_now() -> None:
    # The demo's old message: "never fits ... (master: 40/128 nodes are available: 88
    # Insufficient nvidia.com/gpu)" described the running pods, which will end.
    m = mirror()
    m.cluster.add_pods("a", {"nvidia.com/gpu": 8000})
    placement = m.place(gang(3))
    why = explain(m, gang(3), placement)
    assert why.never_fits
    assert "Insufficient" not in why.message
    assert why.reason == "required rack: the best rack fits 2 of 3 worker pods (r1)"
    assert why.tasks[0].fit == 2
    assert not why.tasks[0].now
    # A pod larger than any node: counted against the nodes' allocatable, for good.
    huge = gang(1, gpu=16)
    why = explain(m, huge, m.place(huge))
    assert why.never_fits
    assert why.message.endswith(
        "worker: 0/5 nodes could ever take one: 2 Insufficient nvidia.com/gpu, 1 node(s) had "
        "untolerated taint {gpu: h100}, 1 node(s) were not ready, 1 node(s) were unschedulable"
    )


def test_a_two_task_gang_is_counted_per_task_in_one_sentence() -> None:
    m = mirror()
    two = gang(1, master=1)
    m.cluster.add_pods("b", {"nvidia.com/gpu": 8000})
    placement = m.place(two)
    why = explain(m, two, placement)
    assert not why.never_fits
    assert why.message == (
        "not now: required rack: no rack holds 1 master pod and 1 worker pod together; "
        "master: 1/5 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had "
        "untolerated taint {gpu: h100}, 1 node(s) were not ready, 1 node(s) were "
        "unschedulable; worker: 1/5 nodes are available: 1 Insufficient nvidia.com/gpu, 1 "
        "node(s) had untolerated taint {gpu: h100}, 1 node(s) were not ready, 1 node(s) were "
        "unschedulable"
    )


def test_a_task_named_after_its_unit_is_not_named_twice() -> None:
    m = mirror()
    one = gang(3, name="pods")
    why = explain(m, one, m.place(one))
    assert "fits 2 of 3 pods (r1)" in why.message
    assert "pods pods" not in why.message


def test_a_gang_that_fits_an_empty_cluster_is_not_now_and_names_the_short_resource() -> None:
    m = mirror()
    m.cluster.add_pods("a", {"nvidia.com/gpu": 4000})
    placement = m.place(gang(2))
    assert placement.status == "unschedulable"
    why = explain(m, gang(2), placement)
    assert not why.never_fits
    assert why.tasks[0].filtered["Insufficient nvidia.com/gpu"] == 1
    assert why.message.startswith("not now: required rack: the best rack fits 1 of 2 worker pods")
    assert why.tasks[0].now
    assert "worker: 1/5 nodes are available: 1 Insufficient nvidia.com/gpu" in why.message
