"""The placer against an exhaustive search: on small clusters and heterogeneous gangs (different
requests per task, slices, task-level topology inside the gang's), whenever any assignment
satisfies the contract the placer finds one, and at the lowest level where one exists.

The search here is deliberately naive and shares no code with the placer: for every domain,
deepest first, it enumerates every split of every task's pods over the domain's nodes (with
the capacity left by the tasks before it) and checks the constraints on each complete split.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placer_strategies import HOST, effective, node
from test_placement_properties import milli, path_of, tolerated

from crdkit.placer import Cluster, ReferenceCluster

Scenario = tuple[dict[str, Any], dict[str, Any]]
Free = tuple[tuple[tuple[str, int], ...], ...]


@st.composite
def small_scenarios(draw: st.DrawFn) -> Scenario:
    """At most 8 nodes and 3 effective levels; 1-3 tasks with their own requests, some with
    slices or a topology of their own; at most 4 pods a task."""
    named = ["t.io/block", "t.io/rack"][draw(st.integers(0, 1)) :]
    level_keys = [*named, HOST] if len(named) == 1 and draw(st.booleans()) else named
    eff = effective(level_keys)
    count = draw(st.integers(1, 8))
    nodes = [draw(node(f"n{index}", level_keys)) for index in range(count)]
    modes = st.sampled_from(["required", "preferred", "unconstrained"])
    gang_mode = draw(modes)
    gang_topology: dict[str, Any] = {"mode": gang_mode}
    if gang_mode != "unconstrained":
        gang_topology["level"] = draw(st.sampled_from(eff))
    tasks = []
    for index in range(draw(st.integers(1, 3))):
        size = draw(st.sampled_from([1, 1, 1, 2]))
        replicas = size * draw(st.integers(1, 4 // size))
        task: dict[str, Any] = {
            "name": f"t{index}",
            "replicas": replicas,
            "minAvailable": size * draw(st.integers(1, replicas // size)),
            "requests": {
                "cpu": draw(st.sampled_from(["0", "500m", "1", "2"])),
                "nvidia.com/gpu": draw(st.sampled_from([0, 1, 2, 4])),
            },
        }
        lowest = eff.index(gang_topology["level"]) if gang_mode == "required" else 0
        if draw(st.integers(0, 2)) == 0:
            own_mode = draw(modes)
            own: dict[str, Any] = {"mode": own_mode}
            if own_mode != "unconstrained":
                own["level"] = draw(st.sampled_from(eff))
                if own_mode == "required":
                    lowest = max(lowest, eff.index(own["level"]))
            task["topology"] = own
        if draw(st.integers(0, 5)) == 0:
            task["nodeSelector"] = {"pool": draw(st.sampled_from(["x", "y"]))}
        if draw(st.integers(0, 5)) == 0:
            task["tolerations"] = [{"key": "", "operator": "Exists"}]
        if size > 1 or draw(st.integers(0, 5)) == 0:
            task["slice"] = {"level": draw(st.sampled_from(eff[lowest:])), "size": size}
        if draw(st.integers(0, 4)) == 0:
            task["maxPerNode"] = draw(st.integers(1, 2))
        if draw(st.integers(0, 4)) == 0:
            task["avoidNodes"] = draw(st.lists(st.sampled_from([f"n{i}" for i in range(9)])))
        tasks.append(task)
    snapshot = {"levels": level_keys, "nodes": nodes}
    gang: dict[str, Any] = {"name": "g", "topology": gang_topology, "tasks": tasks}
    if draw(st.integers(0, 4)) == 0:
        gang["maxPerNode"] = draw(st.integers(1, 2))
    return snapshot, gang


class Exhaustive:
    """Every assignment of a gang, tried one by one."""

    def __init__(self, snapshot: dict[str, Any], gang: dict[str, Any]) -> None:
        self.levels = snapshot["levels"]
        self.eff = effective(self.levels)
        self.nodes = snapshot["nodes"]
        self.paths = [path_of(n, self.levels) for n in self.nodes]
        self.gang = gang
        self.tasks = gang["tasks"]
        self.requests = [
            {r: m for r, m in milli(t["requests"]).items() if m > 0 and r != "pods"}
            for t in self.tasks
        ]
        # A per-node limit as a count each node starts with and each pod of the task takes
        # one of: the gang's shared by every task, a task's its own.
        self.limits: dict[str, int] = {}
        if "maxPerNode" in gang:
            self.limits["gang limit"] = gang["maxPerNode"]
        for t, task in enumerate(self.tasks):
            if "maxPerNode" in task:
                self.limits[f"limit of t{t}"] = task["maxPerNode"]
        self.takes = [
            [key for key in self.limits if key in ("gang limit", f"limit of t{t}")]
            for t in range(len(self.tasks))
        ]

    def governing(self, task: dict[str, Any]) -> dict[str, Any]:
        return task.get("topology") or self.gang["topology"]

    def eligible(self, i: int, t: int) -> bool:
        n, task = self.nodes[i], self.tasks[t]
        if n["unschedulable"] or not n["ready"] or n["name"] in task.get("avoidNodes", []):
            return False
        loose_ok = self.governing(task)["mode"] == "unconstrained" and "slice" not in task
        if self.paths[i] is None and not loose_ok:
            return False
        if any(n["labels"].get(k) != v for k, v in task.get("nodeSelector", {}).items()):
            return False
        return all(
            t["effect"] == "PreferNoSchedule" or tolerated(task.get("tolerations", []), t)
            for t in n["taints"]
        )

    def most(self, i: int, t: int, free: dict[str, int]) -> int:
        """How many pods of task `t` node `i` takes with `free` left."""
        count = 1 << 40
        for resource, request in self.requests[t].items():
            count = min(count, max(0, free.get(resource, 0)) // request)
        for key in self.takes[t]:
            count = min(count, free[key])
        if "pods" in self.nodes[i]["allocatable"]:
            count = min(count, max(0, free.get("pods", 0)) // 1000)
        return count

    def splits(
        self, members: list[int], t: int, free: list[dict[str, int]], pods: int
    ) -> Iterator[list[int]]:
        caps = [self.most(i, t, free[i]) if self.eligible(i, t) else 0 for i in members]

        def walk(j: int, left: int, acc: list[int]) -> Iterator[list[int]]:
            if left == 0:
                yield acc + [0] * (len(members) - j)
            elif j < len(members) and sum(caps[j:]) >= left:
                for x in range(min(caps[j], left), -1, -1):
                    yield from walk(j + 1, left - x, [*acc, x])

        yield from walk(0, pods, [])

    def constraints_hold(self, members: list[int], t: int, split: list[int]) -> bool:
        task = self.tasks[t]
        used = [i for i, x in zip(members, split, strict=True) if x]
        own = task.get("topology")
        if own and own["mode"] == "required":
            depth = self.eff.index(own["level"])
            prefixes = {self.paths[i][: depth + 1] for i in used if self.paths[i] is not None}
            if len(prefixes) > 1 or any(self.paths[i] is None for i in used):
                return False
        if "slice" in task:
            depth, size = self.eff.index(task["slice"]["level"]), task["slice"]["size"]
            groups: dict[tuple[str, ...], int] = {}
            for i, x in zip(members, split, strict=True):
                path = self.paths[i]
                if x and path is None:
                    return False
                if x and path is not None:
                    groups[path[: depth + 1]] = groups.get(path[: depth + 1], 0) + x
            if any(pods % size for pods in groups.values()):
                return False
        return True

    def feasible(self, domain: tuple[str, ...] | None, counts: list[int]) -> bool:
        members = [
            i
            for i, p in enumerate(self.paths)
            if domain is None or (p is not None and p[: len(domain)] == domain)
        ]
        start = []
        for n in self.nodes:
            alloc, used = milli(n["allocatable"]), milli(n["used"])
            start.append(
                {r: alloc.get(r, 0) - used.get(r, 0) for r in {*alloc, *used}} | self.limits
            )
        failed: set[tuple[int, Free]] = set()

        def solve(t: int, free: list[dict[str, int]]) -> bool:
            if t == len(self.tasks):
                return True
            key = (t, tuple(tuple(sorted(f.items())) for f in free))
            if key in failed:
                return False
            for split in self.splits(members, t, free, counts[t]):
                if not self.constraints_hold(members, t, split):
                    continue
                after = [dict(f) for f in free]
                for i, x in zip(members, split, strict=True):
                    for resource, request in self.requests[t].items():
                        after[i][resource] = after[i].get(resource, 0) - x * request
                    after[i]["pods"] = after[i].get("pods", 0) - 1000 * x
                    for key in self.takes[t]:
                        after[i][key] -= x
                if solve(t + 1, after):
                    return True
            failed.add(key)
            return False

        return solve(0, start)

    def lowest_level(self, counts: list[int]) -> int | None:
        """The deepest level index where one domain holds a complete assignment; -1 when only
        the whole cluster does; None when no assignment exists."""
        topology = self.gang["topology"]
        required = self.eff.index(topology["level"]) if topology["mode"] == "required" else 0
        domains = {p[: d + 1] for p in self.paths if p is not None for d in range(len(p))}
        for domain in sorted(domains, key=lambda d: (-len(d), d)):
            if len(domain) - 1 >= required and self.feasible(domain, counts):
                return len(domain) - 1
        if topology["mode"] != "required" and self.feasible(None, counts):
            return -1
        return None


@pytest.mark.parametrize("cluster_class", [Cluster, ReferenceCluster], ids=["rust", "reference"])
# Small cases are cheap: three times the profile's example count (150 locally, 900 in CI).
@settings(max_examples=3 * settings.default.max_examples)
@given(small_scenarios())
def test_verdict_and_level_match_an_exhaustive_search(
    cluster_class: type[Cluster], scenario: Scenario
) -> None:
    snapshot, gang = scenario
    search = Exhaustive(snapshot, gang)
    placement = cluster_class.from_snapshot(snapshot).place(gang)
    level = None if placement.level is None else search.eff.index(placement.level)
    full = search.lowest_level([t["replicas"] for t in gang["tasks"]])
    if full is not None:
        assert placement.status == "placed", placement.reason
        assert (-1 if level is None else level) == full
        return
    minimal_counts = [t.get("minAvailable", t["replicas"]) for t in gang["tasks"]]
    minimal = None
    if minimal_counts != [t["replicas"] for t in gang["tasks"]]:
        minimal = search.lowest_level(minimal_counts)
    if minimal is not None:
        assert placement.status == "minimal", placement.reason
        assert (-1 if level is None else level) == minimal
        return
    assert placement.status == "unschedulable"
