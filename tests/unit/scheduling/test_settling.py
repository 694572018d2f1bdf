"""`Settling` on a `ClusterMirror` and a manual clock: the nodes a gang frees while the rest of
it runs are held from the placer until the gang's last pod ends or the deadline comes, a node a
reservation holds is left to it, and ``seconds=0`` holds nothing."""

from __future__ import annotations

import pytest

from crdkit.scheduling import ClusterMirror
from crdkit.scheduling.settling import SETTLING_PREFIX, Settling
from crdkit.testing.sim.nodes import simulated_node
from factories import gang, task


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def mirror_with(nodes: list[str]) -> ClusterMirror:
    mirror = ClusterMirror(["rack"])
    for name in nodes:
        mirror.set_node(simulated_node(name, labels={"rack": "r1"}))
    return mirror


ONE_POD = gang(task("w", 1, "8"), name="small")


def free_nodes_for_one_pod(mirror: ClusterMirror) -> bool:
    return mirror.place(ONE_POD).status != "unschedulable"


def test_a_node_freed_mid_gang_is_held_until_the_gang_has_ended() -> None:
    mirror, clock = mirror_with(["n1", "n2", "n3"]), Clock()
    settling = Settling(mirror, 2.0, clock)
    freed: list[int] = []
    mirror.on_capacity_freed(lambda: freed.append(1))
    assert settling.pod_ended("ns/job", "n1", others_running=True) == 2.0
    assert settling.pod_ended("ns/job", "n2", others_running=True) is None  # one deadline
    assert mirror.holder("n1") == mirror.holder("n2") == SETTLING_PREFIX + "ns/job"
    assert mirror.holder("n3") is None
    assert settling.held() == {"ns/job": {"n1", "n2"}}
    settling.pod_ended("ns/job", "n3", others_running=False)  # the last one
    assert mirror.held() == {}
    assert settling.held() == {}
    assert freed  # the release wakes whoever waits for room


def test_the_deadline_releases_the_hold_and_later_ends_are_not_held() -> None:
    mirror, clock = mirror_with(["n1", "n2", "n3"]), Clock()
    settling = Settling(mirror, 2.0, clock)
    settling.pod_ended("ns/job", "n1", others_running=True)
    clock.now = 1.9
    settling.expire()
    assert mirror.holder("n1") is not None
    clock.now = 2.0
    assert settling.pod_ended("ns/job", "n2", others_running=True) is None
    assert mirror.holder("n2") is None  # settled long enough: free as it comes
    settling.expire()
    assert mirror.held() == {}
    assert free_nodes_for_one_pod(mirror)


def test_a_held_node_is_not_placed_on() -> None:
    mirror, clock = mirror_with(["n1"]), Clock()
    settling = Settling(mirror, 5.0, clock)
    settling.pod_ended("ns/job", "n1", others_running=True)
    assert not free_nodes_for_one_pod(mirror)
    settling.pod_ended("ns/job", "n1", others_running=False)
    assert free_nodes_for_one_pod(mirror)


def test_a_node_a_reservation_holds_is_left_to_it() -> None:
    mirror, clock = mirror_with(["n1", "n2"]), Clock()
    mirror.hold(["n1"], "r1")
    settling = Settling(mirror, 2.0, clock)
    settling.pod_ended("ns/job", "n1", others_running=True)
    settling.pod_ended("ns/job", "n2", others_running=True)
    assert mirror.held() == {"n1": "r1", "n2": SETTLING_PREFIX + "ns/job"}
    settling.pod_ended("ns/job", "n2", others_running=False)
    assert mirror.held() == {"n1": "r1"}


def test_zero_seconds_holds_nothing_and_a_negative_figure_is_refused() -> None:
    mirror, clock = mirror_with(["n1"]), Clock()
    settling = Settling(mirror, 0.0, clock)
    assert settling.pod_ended("ns/job", "n1", others_running=True) is None
    assert mirror.held() == {}
    with pytest.raises(ValueError, match="settle_seconds"):
        Settling(mirror, -1.0, clock)
