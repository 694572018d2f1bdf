"""Property test of `Settling` against a model of it, over random pod ends of a few gangs on a
few nodes, clock steps, and reservation holds made and released in between:

- a node is held for settling exactly while its gang is ending (first end within the last
  ``seconds``, some pod still running) and the node was freed then without another hold on it;
- a reservation's hold is never replaced or released by settling;
- once a gang's last pod ends, or its deadline has come and ``expire`` ran, nothing is held for
  it; a pod that ends past the deadline (before ``expire`` ran) is not held.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crdkit.scheduling import ClusterMirror
from crdkit.scheduling.settling import SETTLING_PREFIX, Settling
from crdkit.testing.sim.nodes import simulated_node

NODES = ["n0", "n1", "n2", "n3"]
GANGS = ["a", "b"]
SECONDS = 2.0

steps = st.lists(
    st.one_of(
        st.tuples(st.just("end"), st.sampled_from(GANGS), st.sampled_from(NODES), st.booleans()),
        st.tuples(st.just("tick"), st.sampled_from([0.5, 1.0, 2.5])),
        st.tuples(st.just("late"), st.sampled_from([1.0, 2.5])),  # expire not called yet
        st.tuples(st.just("reserve"), st.sampled_from(NODES)),
        st.tuples(st.just("unreserve"), st.sampled_from(NODES)),
    ),
    max_size=30,
)


def mirror() -> ClusterMirror:
    made = ClusterMirror(["rack"])
    for name in NODES:
        made.set_node(simulated_node(name, labels={"rack": "r"}))
    return made


@settings(max_examples=200, deadline=None)
@given(steps)
def test_settling_holds_what_its_model_holds(script: list[tuple[object, ...]]) -> None:
    now = [0.0]
    seen = mirror()
    settling = Settling(seen, SECONDS, lambda: now[0])
    deadline: dict[str, float] = {}  # the model: each ending gang's deadline and nodes
    nodes: dict[str, set[str]] = {}
    reserved: set[str] = set()
    for step in script:
        if step[0] == "tick":
            now[0] += float(step[1])  # type: ignore[arg-type]
            settling.expire()
            for gang in [g for g, d in deadline.items() if d <= now[0]]:
                del deadline[gang], nodes[gang]
        elif step[0] == "late":
            now[0] += float(step[1])  # type: ignore[arg-type]
        elif step[0] == "reserve":
            node = str(step[1])
            if seen.holder(node) is None:
                seen.hold([node], "r")
                reserved.add(node)
        elif step[0] == "unreserve":
            node = str(step[1])
            if node in reserved:
                seen.release([node], "r")
                reserved.discard(node)
        else:
            _, gang, node, others = step
            gang, node = str(gang), str(node)
            settling.pod_ended(gang, node, bool(others))
            if not others:
                deadline.pop(gang, None)
                nodes.pop(gang, None)
            else:
                deadline.setdefault(gang, now[0] + SECONDS)
                nodes.setdefault(gang, set())
                free = seen.holder(node) in (None, SETTLING_PREFIX + gang)
                if deadline[gang] > now[0] and node not in reserved and free:
                    nodes[gang].add(node)
        for node in reserved:
            assert seen.holder(node) == "r"
        expected = {n: SETTLING_PREFIX + g for g, held in nodes.items() for n in held}
        actual = {n: v for n, v in seen.held().items() if v != "r"}
        assert actual == expected
