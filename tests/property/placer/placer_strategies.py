"""Hypothesis strategies for random clusters and gangs in contract form (plain dicts)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HOST = "kubernetes.io/hostname"
NAMED_LEVELS = ["t.io/zone", "t.io/block", "t.io/rack"]
MODES = ["required", "preferred", "unconstrained"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
AVOIDED = [f"n{index:03d}" for index in range(12)]  # nodes a task may avoid, some absent


@st.composite
def levels(draw: st.DrawFn) -> list[str]:
    """2 to 4 effective levels: 1-3 named ones, the hostname level explicit or implicit."""
    count = draw(st.integers(1, 3))
    named = NAMED_LEVELS[3 - count :]
    if len(named) < 3 and draw(st.booleans()):
        return [*named, HOST]
    return named


@st.composite
def node(draw: st.DrawFn, name: str, level_keys: list[str]) -> dict[str, Any]:
    labels: dict[str, str] = {}
    for key in level_keys:
        if key == HOST:
            # Mostly the node's own name; sometimes shared, so a leaf holds several nodes.
            labels[key] = draw(st.sampled_from([name, name, name, "shared-a", "shared-b"]))
        else:
            labels[key] = draw(st.sampled_from(["a", "b", "c"]))
    if level_keys and draw(st.integers(0, 19)) == 0:
        del labels[draw(st.sampled_from(level_keys))]  # a loose node
    if draw(st.booleans()):
        labels["pool"] = draw(st.sampled_from(["x", "y"]))
    cpu = draw(st.integers(0, 16)) * 500
    gpu = draw(st.sampled_from([0, 2, 4, 8]))
    allocatable: dict[str, Any] = {"cpu": f"{cpu}m", "nvidia.com/gpu": gpu}
    used: dict[str, Any] = {}
    if draw(st.booleans()):
        used["cpu"] = f"{draw(st.integers(0, 18)) * 500}m"
    if draw(st.booleans()):
        used["nvidia.com/gpu"] = draw(st.integers(0, gpu + 1))
    if draw(st.integers(0, 2)) == 0:
        allocatable["pods"] = draw(st.integers(0, 6))
        if draw(st.booleans()):
            used["pods"] = draw(st.integers(0, 3))
    taints = []
    if draw(st.integers(0, 4)) == 0:
        taints.append(
            {
                "key": draw(st.sampled_from(["gpu", "maint"])),
                "value": draw(st.sampled_from(["", "h100"])),
                "effect": draw(st.sampled_from(EFFECTS)),
            }
        )
    return {
        "name": name,
        "labels": labels,
        "allocatable": allocatable,
        "used": used,
        "taints": taints,
        "unschedulable": draw(st.integers(0, 14)) == 0,
        "ready": draw(st.integers(0, 14)) != 0,
    }


@st.composite
def clusters(draw: st.DrawFn, max_nodes: int = 300) -> dict[str, Any]:
    level_keys = draw(levels())
    count = draw(st.integers(1, max_nodes))
    nodes = [draw(node(f"n{index:03d}", level_keys)) for index in range(count)]
    return {"levels": level_keys, "nodes": nodes}


def effective(level_keys: list[str]) -> list[str]:
    return level_keys if level_keys[-1] == HOST else [*level_keys, HOST]


@st.composite
def topologies(draw: st.DrawFn, level_keys: list[str]) -> dict[str, Any]:
    mode = draw(st.sampled_from(MODES))
    if mode == "unconstrained":
        return {"mode": mode}
    return {"mode": mode, "level": draw(st.sampled_from(effective(level_keys)))}


@st.composite
def gangs(draw: st.DrawFn, level_keys: list[str], name: str = "g") -> dict[str, Any]:
    eff = effective(level_keys)
    gang_topology = draw(topologies(level_keys))
    tasks = []
    for index in range(draw(st.integers(1, 4))):
        own = draw(topologies(level_keys)) if draw(st.integers(0, 3)) == 0 else None
        governing = own or gang_topology
        size = draw(st.sampled_from([1, 1, 2, 4]))
        replicas = size * draw(st.integers(1, 6))
        min_available = size * draw(st.integers(1, replicas // size))
        task: dict[str, Any] = {
            "name": f"t{index}",
            "replicas": replicas,
            "minAvailable": min_available,
            "requests": {
                "cpu": draw(st.sampled_from(["0", "500m", "1", "2"])),
                "nvidia.com/gpu": draw(st.sampled_from([0, 1, 1, 2, 4, 8])),
            },
        }
        if draw(st.integers(0, 3)) == 0:
            task["nodeSelector"] = {"pool": draw(st.sampled_from(["x", "y"]))}
        if draw(st.integers(0, 3)) == 0:
            task["tolerations"] = [
                draw(
                    st.sampled_from(
                        [
                            {"key": "gpu", "operator": "Exists"},
                            {"key": "", "operator": "Exists"},
                            {"key": "maint", "value": "h100", "effect": "NoSchedule"},
                            {"key": "gpu", "value": "", "effect": "PreferNoSchedule"},
                        ]
                    )
                )
            ]
        if size > 1 or draw(st.integers(0, 4)) == 0:
            lowest = 0
            if governing.get("mode") == "required":
                lowest = eff.index(governing["level"])
            task["slice"] = {"level": draw(st.sampled_from(eff[lowest:])), "size": size}
        if own is not None:
            task["topology"] = own
        if draw(st.integers(0, 4)) == 0:
            task["maxPerNode"] = draw(st.integers(1, 3))
        if draw(st.integers(0, 5)) == 0:
            task["avoidNodes"] = draw(st.lists(st.sampled_from(AVOIDED), max_size=3))
        tasks.append(task)
    gang = {
        "name": name,
        "priority": draw(st.integers(0, 2)),
        "topology": gang_topology,
        "tasks": tasks,
    }
    if draw(st.integers(0, 4)) == 0:
        gang["maxPerNode"] = draw(st.integers(1, 3))
    return gang
