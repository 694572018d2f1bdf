"""``own_gang``: the placer's gang for an operator's own pods, each pod paired with its node,
and the waiting requests queued again when capacity grows."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import factories
from crdkit.resources import Pod
from crdkit.runtime import Request
from crdkit.scheduling import ClusterMirror, WaitingForCapacity, bindings_for, gang_of
from factories import node


def pod(name: str, gpus: int = 8, **spec: Any) -> Pod:
    return factories.pod(name, gpus=gpus, **spec)


def test_gang_of_names_the_tasks_and_takes_their_pods_shape() -> None:
    pods = {"master": [pod("m")], "worker": [pod("w0", 4), pod("w1", 4)]}
    gang = gang_of("job", pods, topology={"mode": "required", "level": "rack"})
    assert gang["name"] == "job"
    assert gang["topology"] == {"mode": "required", "level": "rack"}
    tasks = {t["name"]: t for t in gang["tasks"]}
    assert tasks["master"]["replicas"] == 1
    assert tasks["worker"]["replicas"] == 2
    assert tasks["worker"]["requests"] == {"nvidia.com/gpu": "4"}


@pytest.mark.parametrize(
    ("pods", "message"),
    [
        ({"worker": [pod("a", 4), pod("b", 8)]}, r"pods\['worker'\]: its pods differ"),
        ({"worker": []}, r"pods\['worker'\]: a task needs at least one pod"),
    ],
)
def test_gang_of_refuses_tasks_it_cannot_describe(pods: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gang_of("job", pods)
    with pytest.raises(ValueError, match="min_available: no task named x"):
        gang_of("job", {"w": [pod("a")]}, min_available={"x": 1})


def test_bindings_pair_each_pod_with_a_node_of_its_task() -> None:
    mirror = ClusterMirror(["rack"])
    for name, rack in (("n1", "r1"), ("n2", "r1"), ("n3", "r2")):
        mirror.set_node(node(name, rack))
    pods = {"master": [pod("m")], "worker": [pod("w0"), pod("w1")]}
    gang = gang_of("job", pods, topology={"mode": "required", "level": "rack"})
    placement = mirror.place(gang)
    assert placement.status == "unschedulable"  # 3 whole nodes, but r1 has 2
    with pytest.raises(ValueError, match="unschedulable: nothing to bind"):
        bindings_for(placement, pods)
    mirror.set_node(node("n4", "r1"))
    placement = mirror.place(gang)
    bindings = bindings_for(placement, pods)
    assert sorted(b.name for b in bindings) == ["m", "w0", "w1"]
    assert len({b.node for b in bindings}) == 3
    assert {b.node for b in bindings} <= {"n1", "n2", "n4"}  # rack r1 only
    assert all(b.milli == {"nvidia.com/gpu": 8000} for b in bindings)
    with pytest.raises(ValueError, match=r"pods\['worker'\]: 1 pods, fewer than"):
        bindings_for(placement, {"master": [pod("m")], "worker": [pod("w0")]})


def test_waiting_requests_are_queued_once_when_capacity_grows() -> None:
    mirror = ClusterMirror(["rack"])
    queued: list[Request] = []
    controller = SimpleNamespace(queue=SimpleNamespace(add=queued.append))
    waiting = WaitingForCapacity(mirror, controller)  # type: ignore[arg-type]
    a, b = Request("ml", "a"), Request("ml", "b")
    waiting.wait(a)
    waiting.wait(b)
    waiting.forget(b)
    assert queued == []
    mirror.set_node(node("n1", "r1"))  # room grew
    assert queued == [a]
    assert waiting.waiting == frozenset()
    mirror.set_node(node("n2", "r1"))  # nobody waits any more: nothing queued
    assert queued == [a]


def test_gang_of_keeps_one_rank_per_node_as_the_tasks_or_the_gangs_limit() -> None:
    def ranked(name: str, role: str, selector: dict[str, str]) -> Pod:
        made = pod(
            name,
            1,
            affinity={
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": selector},
                        }
                    ]
                }
            },
        )
        made.metadata.labels = {"job": "j", "role": role}
        return made

    per_task = gang_of(
        "j",
        {
            "master": [pod("j-master-0", 1)],
            "worker": [ranked(f"j-worker-{i}", "worker", {"role": "worker"}) for i in range(2)],
        },
    )
    assert [t.get("maxPerNode") for t in per_task["tasks"]] == [None, 1]
    assert "maxPerNode" not in per_task
    whole = gang_of(
        "j",
        {
            "master": [ranked("j-master-0", "master", {"job": "j"})],
            "worker": [ranked(f"j-worker-{i}", "worker", {"job": "j"}) for i in range(2)],
        },
    )
    assert whole["maxPerNode"] == 1
