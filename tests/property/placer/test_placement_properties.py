"""Invariants of every placement, checked on random clusters and gangs (Rust core).

Capacity is never exceeded, gangs are all or nothing, constraints and filters hold, results are
deterministic, assume-then-release restores the exact state, and (against exhaustive search on
small clusters) the chosen domain is at the lowest level where any domain holds the pods.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from placer_strategies import HOST, clusters, effective, gangs

from crdkit.placer import Cluster, Placement
from crdkit.placer.quantity import parse_quantity

Scenario = tuple[dict[str, Any], dict[str, Any]]


@st.composite
def scenarios(draw: st.DrawFn, max_nodes: int = 80) -> Scenario:
    cluster = draw(clusters(max_nodes=max_nodes))
    return cluster, draw(gangs(cluster["levels"]))


def milli(amounts: dict[str, Any]) -> dict[str, int]:
    return {name: parse_quantity(value) for name, value in amounts.items()}


def path_of(node: dict[str, Any], levels: list[str]) -> tuple[str, ...] | None:
    values = []
    for level in effective(levels):
        if level == HOST and levels[-1] != HOST:
            values.append(node["name"])
        elif level in node["labels"]:
            values.append(node["labels"][level])
        else:
            return None
    return tuple(values)


def tolerated(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for t in tolerations:
        if t.get("effect") not in (None, taint["effect"]):
            continue
        if t.get("operator", "Equal") == "Exists":
            if t.get("key", "") in ("", taint["key"]):
                return True
        elif t.get("key", "") == taint["key"] and t.get("value", "") == taint["value"]:
            return True
    return False


def fit(node: dict[str, Any], task: dict[str, Any], levels: list[str], labelled: bool) -> int:
    """How many pods of `task` fit on `node`, computed directly from the contract's rules."""
    if node["unschedulable"] or not node["ready"]:
        return 0
    if labelled and path_of(node, levels) is None:
        return 0
    if any(node["labels"].get(k) != v for k, v in task.get("nodeSelector", {}).items()):
        return 0
    for taint in node["taints"]:
        repels = taint["effect"] != "PreferNoSchedule"
        if repels and not tolerated(task.get("tolerations", []), taint):
            return 0
    allocatable, used = milli(node["allocatable"]), milli(node["used"])
    count = 1 << 40
    for resource, request in milli(task["requests"]).items():
        if request > 0 and resource != "pods":
            free = allocatable.get(resource, 0) - used.get(resource, 0)
            count = min(count, max(0, free) // request)
    if "pods" in allocatable:
        count = min(count, max(0, allocatable["pods"] - used.get("pods", 0)) // 1000)
    return count


def governing(gang: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    return task.get("topology") or gang.get("topology") or {"mode": "unconstrained"}


@given(scenarios())
def test_capacity_all_or_nothing_constraints_and_filters(scenario: Scenario) -> None:
    snapshot, gang = scenario
    cluster = Cluster.from_snapshot(snapshot)
    placement = cluster.place(gang)
    tasks = {task["name"]: task for task in gang["tasks"]}
    nodes = {node["name"]: node for node in snapshot["nodes"]}
    levels = snapshot["levels"]

    # All or nothing.
    if placement.status == "unschedulable":
        assert placement.assignments == []
        assert set(placement.placed.values()) == {0}
        assert placement.reason
        assert "\n" not in placement.reason
        return
    key = "replicas" if placement.status == "placed" else "minAvailable"
    assert placement.placed == {name: task[key] for name, task in tasks.items()}
    assert placement.reason is None

    # Capacity: for every node, usage plus the placed pods stays within what it had free.
    per_node: dict[str, dict[str, int]] = {}
    for a in placement.assignments:
        wanted = per_node.setdefault(a.node, {})
        for resource, request in milli(tasks[a.task]["requests"]).items():
            if request > 0 and resource != "pods":
                wanted[resource] = wanted.get(resource, 0) + request * a.count
        wanted["pods"] = wanted.get("pods", 0) + 1000 * a.count
    for name, wanted in per_node.items():
        allocatable, used = milli(nodes[name]["allocatable"]), milli(nodes[name]["used"])
        for resource, amount in wanted.items():
            if resource == "pods" and "pods" not in allocatable:
                continue
            assert used.get(resource, 0) + amount <= allocatable.get(resource, 0), (name, resource)

    # Per-node limits: of each limited task, and of the gang's pods together.
    on_node: dict[tuple[str, str], int] = {}
    for a in placement.assignments:
        on_node[(a.task, a.node)] = on_node.get((a.task, a.node), 0) + a.count
    for (task_name, node_name), pods in on_node.items():
        limit = tasks[task_name].get("maxPerNode")
        assert limit is None or pods <= limit, (task_name, node_name, pods)
        assert node_name not in tasks[task_name].get("avoidNodes", []), (task_name, node_name)
    if "maxPerNode" in gang:
        for node_name, _ in per_node.items():
            pods = sum(a.count for a in placement.assignments if a.node == node_name)
            assert pods <= gang["maxPerNode"], (node_name, pods)

    # Filters and constraints.
    group_paths: list[tuple[str, ...] | None] = []
    for a in placement.assignments:
        task = tasks[a.task]
        topology = governing(gang, task)
        labelled = topology["mode"] != "unconstrained" or "slice" in task
        assert fit(nodes[a.node], task, levels, labelled) >= a.count
        if "topology" not in task:
            group_paths.append(path_of(nodes[a.node], levels))
    eff = effective(levels)
    gang_topology = gang.get("topology", {})
    if gang_topology.get("mode") == "required" and group_paths:
        depth = eff.index(gang_topology["level"])
        assert len({p[: depth + 1] if p else None for p in group_paths}) == 1
    for name, task in tasks.items():
        own = task.get("topology", {})
        paths = [path_of(nodes[a.node], levels) for a in placement.assignments if a.task == name]
        if own.get("mode") == "required":
            depth = eff.index(own["level"])
            assert len({p[: depth + 1] if p else None for p in paths}) == 1
        if "slice" in task:
            depth, size = eff.index(task["slice"]["level"]), task["slice"]["size"]
            counts: dict[tuple[str, ...], int] = {}
            for a in placement.assignments:
                path = path_of(nodes[a.node], levels)
                if a.task == name and path is not None:
                    counts[path[: depth + 1]] = counts.get(path[: depth + 1], 0) + a.count
            assert all(count % size == 0 for count in counts.values())


# Four placements per example, some of them exact searches that run to their step budget: 100
# examples keep this well inside the per-test timeout on two loaded cores (300 took 74 s there).
@settings(max_examples=min(100, settings.default.max_examples))
@given(scenarios())
def test_deterministic_and_assume_release_restores_the_state(scenario: Scenario) -> None:
    snapshot, gang = scenario
    cluster = Cluster.from_snapshot(snapshot)
    before = cluster.used()
    first = cluster.place(gang)
    assert cluster.used() == before  # placing changes nothing
    assert cluster.place(gang).to_dict() == first.to_dict()
    assert Cluster.from_snapshot(snapshot).place(gang).to_dict() == first.to_dict()
    cluster.assume(first)
    if first.assignments:
        assert cluster.used() != before
    cluster.release(first)
    assert cluster.used() == before
    assert cluster.place(gang).to_dict() == first.to_dict()


@st.composite
def single_task_scenarios(draw: st.DrawFn) -> Scenario:
    snapshot = draw(clusters(max_nodes=12))
    eff = effective(snapshot["levels"])
    mode = draw(st.sampled_from(["required", "preferred"]))
    task = {
        "name": "w",
        "replicas": draw(st.integers(1, 24)),
        "requests": {"cpu": draw(st.sampled_from(["0", "500m", "1"])), "nvidia.com/gpu": 1},
    }
    topology = {"mode": mode, "level": draw(st.sampled_from(eff))}
    return snapshot, {"name": "g", "topology": topology, "tasks": [task]}


def exhaustive_lowest_level(
    snapshot: dict[str, Any], gang: dict[str, Any]
) -> tuple[int, tuple[str, ...]] | None:
    """The deepest level at which some domain holds every pod, and there the domain with the
    least capacity that holds them (then by path), by trying every domain."""
    levels, task = snapshot["levels"], gang["tasks"][0]
    eff = effective(levels)
    for depth in range(len(eff) - 1, -1, -1):
        capacity: dict[tuple[str, ...], int] = {}
        for node in snapshot["nodes"]:
            path = path_of(node, levels)
            if path is not None:
                key = path[: depth + 1]
                capacity[key] = capacity.get(key, 0) + fit(node, task, levels, True)
        fitting = [(total, key) for key, total in capacity.items() if total >= task["replicas"]]
        if fitting:
            return depth, min(fitting)[1]
    return None


@settings(max_examples=150)
@given(single_task_scenarios())
def test_chosen_domain_is_at_the_lowest_level_that_fits(scenario: Scenario) -> None:
    snapshot, gang = scenario
    placement: Placement = Cluster.from_snapshot(snapshot).place(gang)
    eff = effective(snapshot["levels"])
    found = exhaustive_lowest_level(snapshot, gang)
    topology = gang["topology"]
    required_depth = eff.index(topology["level"])
    if topology["mode"] == "required" and (found is None or found[0] < required_depth):
        assert placement.status == "unschedulable"
        return
    if found is None:  # preferred: no single domain holds the pods, so they span the top
        assert placement.level is None
        return
    lowest, best = found
    assert placement.status == "placed"
    assert placement.level == eff[lowest]
    # Best fit among the domains of that level. At the per-node level the placer ranks nodes,
    # which differ from hostname domains when several nodes share a hostname label.
    if lowest < len(eff) - 1:
        assert tuple(placement.domain.values()) == best
