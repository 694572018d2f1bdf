"""The Rust placer and the pure-Python reference give identical results on random input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from placer_strategies import clusters, gangs

from crdkit.placer import Cluster, ReferenceCluster
from crdkit.placer.reference import POLICIES

Scenario = tuple[dict[str, Any], list[dict[str, Any]], Any]


@st.composite
def scenarios(draw: st.DrawFn, max_nodes: int = 300) -> Scenario:
    cluster = draw(clusters(max_nodes=max_nodes))
    batch = [draw(gangs(cluster["levels"], f"g{i}")) for i in range(draw(st.integers(1, 3)))]
    return cluster, batch, draw(st.sampled_from(POLICIES))


# Up to three gangs and a batch per example, and the reference's exact search is slow Python:
# at most 60 examples on up to 200 nodes (about 30 s on a quiet machine) keep it well inside
# the per-test timeout under the thorough profile on a loaded one. The exhaustive test checks
# both engines on many more small cases. A search budget of BUDGET steps bounds each example
# (at the default 200,000 an unlucky gang made the reference search for minutes), and makes
# the engines agree on running out more often, not less.
BUDGET = 2_000


def on_scenarios(max_nodes: int) -> Callable[[Callable[[Scenario], None]], Callable[[], None]]:
    """Run a test on at most 60 scenarios of up to ``max_nodes`` nodes (see above)."""

    def wrap(test: Callable[[Scenario], None]) -> Callable[[], None]:
        limited = settings(max_examples=min(60, settings.default.max_examples))
        run: Callable[[], None] = limited(given(scenarios(max_nodes=max_nodes))(test))
        return run

    return wrap


def engines(cluster: dict[str, Any]) -> tuple[Cluster, ReferenceCluster]:
    """The Rust engine and the Python reference, each on its own copy of ``cluster``."""
    return (
        Cluster.from_snapshot(cluster, search_budget=BUDGET),
        ReferenceCluster.from_snapshot(cluster, search_budget=BUDGET),
    )


@on_scenarios(max_nodes=200)
def test_rust_and_reference_agree_on_every_gang(scenario: Scenario) -> None:
    cluster, batch, policy = scenario
    rust, reference = engines(cluster)
    for gang in batch:
        assert rust.place(gang, policy).to_dict() == reference.place(gang, policy).to_dict()
    assert [p.to_dict() for p in rust.place_all(batch, policy)] == [
        p.to_dict() for p in reference.place_all(batch, policy)
    ]
    assert rust.used() == reference.used()


# Several placements per example: smaller clusters keep it well inside the per-test timeout.
@on_scenarios(max_nodes=150)
def test_rust_and_reference_agree_after_assumes_and_node_changes(scenario: Scenario) -> None:
    cluster, batch, policy = scenario
    rust, reference = engines(cluster)
    for gang in batch:
        ours, theirs = rust.place(gang, policy), reference.place(gang, policy)
        assert ours.to_dict() == theirs.to_dict()
        rust.assume(ours)
        reference.assume(theirs)
        assert rust.used() == reference.used()
    # Change the tree: remove the first node, re-add it cordoned, then place again.
    first = cluster["nodes"][0]
    for c in (rust, reference):
        c.remove_node(first["name"])
        c.add_node({**first, "unschedulable": True})
    for gang in batch:
        assert rust.place(gang, policy).to_dict() == reference.place(gang, policy).to_dict()
