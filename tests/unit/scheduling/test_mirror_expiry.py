"""Pod accounting in `ClusterMirror` over time: only assumptions whose binding finished expire,
an assumption confirmed, forgotten or made again in between leaves nothing behind to expire,
and a pod's removal takes back that pod only, not a newer one of the same name."""

from __future__ import annotations

import factories
from crdkit.resources import Pod
from crdkit.scheduling import ClusterMirror

GPU = {"nvidia.com/gpu": 8000}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def mirror_with_node(clock: Clock) -> ClusterMirror:
    mirror = ClusterMirror(["rack"], assume_ttl=10.0, clock=clock)
    mirror.set_node(factories.node("n1", gpus=16))
    return mirror


def bound_pod(name: str) -> Pod:
    return factories.pod(name, namespace="ns", uid=f"u-{name}", node="n1", gpus=8, phase="Pending")


def test_only_finished_bindings_expire_and_only_after_the_ttl() -> None:
    clock = Clock()
    mirror = mirror_with_node(clock)
    mirror.assume_pod("ns/a", "n1", GPU)
    mirror.assume_pod("ns/b", "n1", GPU)
    mirror.binding_finished("ns/a")
    clock.now = 9.0
    assert mirror.expire_assumed() == []
    clock.now = 10.0
    assert mirror.expire_assumed() == ["ns/a"]
    assert mirror.is_assumed("ns/b")  # still binding: never expires
    clock.now = 100.0
    assert mirror.expire_assumed() == []
    assert mirror.used("n1")["nvidia.com/gpu"] == 8000


def test_confirmed_forgotten_or_assumed_again_leaves_nothing_to_expire() -> None:
    clock = Clock()
    mirror = mirror_with_node(clock)
    for key in ("ns/a", "ns/b", "ns/c"):
        mirror.assume_pod(key, "n1", {"nvidia.com/gpu": 1000})
        mirror.binding_finished(key)
    mirror.set_pod(bound_pod("a"))  # its bind shows: no longer an assumption
    mirror.forget_pod("ns/b")
    mirror.assume_pod("ns/c", "n1", {"nvidia.com/gpu": 1000})  # a new decision, binding again
    clock.now = 50.0
    assert mirror.expire_assumed() == []
    assert mirror.is_counted("ns/a")
    assert not mirror.is_assumed("ns/a")
    assert not mirror.is_counted("ns/b")
    assert mirror.is_assumed("ns/c")
    mirror.binding_finished("ns/c")
    clock.now = 60.0
    assert mirror.expire_assumed() == ["ns/c"]
    assert mirror.used("n1")["nvidia.com/gpu"] == 8000


def test_removing_a_replaced_pod_keeps_its_successor_of_the_same_name_counted() -> None:
    mirror = mirror_with_node(Clock())
    old = bound_pod("a")
    mirror.set_pod(old)
    mirror.remove_pod(old)  # deleted: its controller makes "a" again, which is then assumed
    mirror.assume_pod("ns/a", "n1", GPU, uid="u-a-2")
    mirror.remove_pod(old)  # a late word about the old pod (a roll-back finishing)
    assert mirror.is_assumed("ns/a")
    assert mirror.used("n1")["nvidia.com/gpu"] == 8000
    mirror.remove_pod(
        old.model_copy(update={"metadata": old.metadata.model_copy(update={"uid": "u-a-2"})})
    )
    assert not mirror.is_counted("ns/a")
