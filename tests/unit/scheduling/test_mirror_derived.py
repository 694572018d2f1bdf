"""`ClusterMirror.derived`: a value built once per state of the mirror, built again when a node
or (unless ``usage=False``) a pod's usage changes."""

from __future__ import annotations

from crdkit.scheduling import ClusterMirror
from crdkit.testing.sim.nodes import simulated_node


def test_a_derived_value_is_kept_until_what_it_read_changes() -> None:
    mirror = ClusterMirror()
    mirror.set_node(simulated_node("n1"))
    builds: list[str] = []

    def build(tag: str) -> str:
        builds.append(tag)
        return f"{tag}{len(builds)}"

    assert mirror.derived("both", lambda: build("b")) == "b1"
    assert mirror.derived("nodes", lambda: build("n"), usage=False) == "n2"
    assert mirror.derived("both", lambda: build("b")) == "b1"  # nothing changed
    mirror.assume_pod("ns/p", "n1", {"nvidia.com/gpu": 8000})  # usage only
    assert mirror.derived("both", lambda: build("b")) == "b3"
    assert mirror.derived("nodes", lambda: build("n"), usage=False) == "n2"
    mirror.set_node(simulated_node("n2"))  # the nodes
    assert mirror.derived("nodes", lambda: build("n"), usage=False) == "n4"
    assert builds == ["b", "n", "b", "n"]
