"""`ClusterMirror.empty`, the "as if every node were empty" twin: built on first use from the
nodes the mirror has, then kept current by node events, never by pods."""

from __future__ import annotations

from functools import partial

import factories
from crdkit.resources import Pod
from crdkit.scheduling import ClusterMirror


def whole_nodes(count: int) -> dict[str, object]:
    """A gang of ``count`` pods that each take a whole 8-GPU node."""
    return factories.gang(factories.task("w", count, "8"))


WHOLE_NODE = whole_nodes(1)


node = partial(factories.node, pods=None)


def bound_pod(name: str, on: str) -> Pod:
    return factories.pod(name, namespace="ns", uid=f"u-{name}", node=on, gpus=8, phase="Running")


def nodes_taken(mirror: ClusterMirror, gang: dict[str, object]) -> list[str]:
    return [a.node for a in mirror.empty.place(gang).assignments]


def test_the_twin_sees_the_nodes_added_before_and_after_it_was_built() -> None:
    mirror = ClusterMirror(["rack"])
    mirror.set_node(node("n1"))
    mirror.set_pod(bound_pod("p1", "n1"))  # n1 is full now, but not for the twin
    assert mirror.cluster.place(WHOLE_NODE).status == "unschedulable"
    assert nodes_taken(mirror, WHOLE_NODE) == ["n1"]
    mirror.set_node(node("n2"))
    mirror.set_pod(bound_pod("p2", "n2"))
    assert sorted(nodes_taken(mirror, whole_nodes(2))) == ["n1", "n2"]


def test_node_changes_and_removals_reach_the_twin() -> None:
    mirror = ClusterMirror(["rack"])
    mirror.set_node(node("n1"))
    assert nodes_taken(mirror, WHOLE_NODE) == ["n1"]
    mirror.set_node(node("n1", gpus=4))  # smaller now: a whole-node pod can never fit
    assert mirror.empty.place(WHOLE_NODE).status == "unschedulable"
    mirror.set_node(node("n1"))
    mirror.remove_node("n1")
    assert mirror.empty.place(WHOLE_NODE).status == "unschedulable"
    assert len(mirror.empty) == 0


def test_node_records_are_the_nodes_as_compiled_without_holds_or_usage() -> None:
    mirror = ClusterMirror(["rack"])
    mirror.set_node(node("n1"))
    mirror.set_node(node("n2"))
    mirror.set_pod(bound_pod("p1", "n1"))
    mirror.hold(["n2"], "r1")
    records = mirror.node_records(["n2", "gone", "n1"])
    assert [r.name for r in records] == ["n2", "n1"]  # in the order asked, unknown left out
    assert all(not r.taints for r in records)  # the hold is the placer view's alone
    assert mirror.cluster.place(WHOLE_NODE).status == "unschedulable"  # n1 full, n2 held
    mirror.set_node(node("n2", gpus=4))  # a change compiles the record again
    (changed,) = mirror.node_records(["n2"])
    assert changed.allocatable["nvidia.com/gpu"] == 4000
    mirror.release(["n2"], "r1")
    assert mirror.cluster.place(whole_nodes(1)).status == "unschedulable"  # 4 GPUs, not 8
    mirror.remove_node("n2")
    assert mirror.node_records(["n2"]) == []
