"""A gang as the placer's own records (`crdkit._placer.Gang`), built straight from what was
read off the pods: requests in milli-units, levels as indexes. On the scheduler's path nothing
is formatted as a quantity string, serialized or validated by the contract's models; the
contract's JSON (`contract`) is derived only for people and for callers that ask for it.

The records are frozen: `evolve_task` and `evolve_gang` make changed copies (the holds a gang
may use, the nodes its rank rules avoid, the domain a partly bound gang keeps to). `shape` is
the gang without its name, hashable: what an explanation or a room search of it depends on.

What the contract's compiler checks (`crdkit.placer.compiler.compile_gang`) holds by
construction here or is checked with the same rules, naming the pod's field;
``tests/property/scheduling/test_gangs_properties.py`` keeps the records equal to what the
compiler makes of `contract`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit import _placer
from crdkit.placer.compiler import effective_levels
from crdkit.scheduling.requests import requests_as_quantities

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping, Sequence

__all__ = [
    "contract",
    "evolve_gang",
    "evolve_task",
    "gang_record",
    "level_name",
    "shape",
    "toleration_record",
    "with_tolerations",
]

_UNCONSTRAINED = _placer.Topology("unconstrained", None)


def toleration_record(toleration: Mapping[str, Any]) -> _placer.Toleration:
    """A toleration as the contract reads it (``key`` and ``value`` default to empty,
    ``operator`` to ``Equal``, no ``effect`` matches every effect)."""
    return _placer.Toleration(
        toleration.get("key") or "",
        toleration.get("operator") or "Equal",
        toleration.get("value") or "",
        toleration.get("effect"),
    )


def _level_index(level: str, levels: list[str], field: str) -> int:
    if level not in levels:
        raise ValueError(f"{field}: unknown level {level!r} (levels: {', '.join(levels)})")
    return levels.index(level)


def _topology(topology: Mapping[str, Any] | None, levels: list[str]) -> _placer.Topology:
    if topology is None or topology.get("mode", "unconstrained") == "unconstrained":
        return _UNCONSTRAINED
    return _placer.Topology(topology["mode"], _level_index(topology["level"], levels, "topology"))


def _slice(
    entry: Mapping[str, Any], levels: list[str], required: int | None
) -> _placer.Slice | None:
    spec = entry.get("slice")
    if spec is None:
        return None
    size, replicas = spec["size"], entry["replicas"]
    minimum = entry.get("minAvailable", replicas)
    for count, what in ((replicas, "pods"), (minimum, "needed pods")):
        if count % size:
            raise ValueError(f"slice size {size} does not divide the task's {count} {what}")
    level = _level_index(spec["level"], levels, "slice level")
    if required is not None and level < required:
        raise ValueError(
            f"slice level {spec['level']!r} is wider than the required level {levels[required]!r}"
        )
    return _placer.Slice(level, size)


def gang_record(
    name: str,
    priority: int,
    topology: Mapping[str, Any] | None,
    entries: Sequence[Mapping[str, Any]],
    milli: Mapping[str, Mapping[str, int]],
    levels: Sequence[str],
    *,
    max_per_node: int | None = None,
) -> _placer.Gang:
    """The gang's record: ``entries`` are its tasks (name, replicas and, where set,
    ``minAvailable``, ``nodeSelector``, ``tolerations``, ``slice``, ``maxPerNode``, as the
    contract spells them) and ``milli`` their requests by task name. A slice that does not divide
    its task, or a level the cluster lacks, is a ``ValueError`` saying so."""
    effective = effective_levels(levels)
    gang_topology = _topology(topology, effective)
    required = gang_topology.level if gang_topology.mode == "required" else None
    tasks = []
    for entry in entries:
        task = entry["name"]
        tasks.append(
            _placer.Task(
                task,
                replicas=entry["replicas"],
                min_available=entry.get("minAvailable", entry["replicas"]),
                requests=dict(milli[task]),
                node_selector=dict(entry.get("nodeSelector", {})),
                tolerations=[toleration_record(t) for t in entry.get("tolerations", ())],
                slice=_slice(entry, effective, required),
                topology=None,
                max_per_node=entry.get("maxPerNode"),
            )
        )
    return _placer.Gang(
        name,
        priority=priority,
        topology=gang_topology,
        tasks=tasks,
        levels=effective,
        max_per_node=max_per_node,
    )


def evolve_task(task: _placer.Task, **changes: Any) -> _placer.Task:
    """``task`` with ``changes`` (its constructor's keywords), checked as a new task is."""
    return task.__replace__(**changes)


def evolve_gang(gang: _placer.Gang, **changes: Any) -> _placer.Gang:
    """``gang`` with ``changes`` (its constructor's keywords), checked as a new gang is."""
    return gang.__replace__(**changes)


def with_tolerations(gang: _placer.Gang, tolerations: Sequence[Mapping[str, Any]]) -> _placer.Gang:
    """``gang`` with ``tolerations`` added to every task's (the holds it may place on)."""
    extra = [toleration_record(t) for t in tolerations]
    tasks = [evolve_task(t, tolerations=[*t.tolerations, *extra]) for t in gang.tasks]
    return evolve_gang(gang, tasks=tasks)


def level_name(gang: _placer.Gang, mode: str) -> str | None:
    """The level the gang's topology names when its mode is ``mode``, else None."""
    topology = gang.topology
    if topology.mode != mode or topology.level is None:
        return None
    return gang.levels[topology.level]


_SHAPE_NAME = "shape"
"""The one name every shape bears."""


def shape(gang: _placer.Gang) -> Hashable:
    """The gang without its name, hashable: equal for gangs the placer cannot tell apart (the
    records compare and hash by every field, so this is the gang under one common name)."""
    return gang if gang.name == _SHAPE_NAME else evolve_gang(gang, name=_SHAPE_NAME)


def contract(gang: _placer.Gang) -> dict[str, Any]:
    """The contract's JSON of ``gang`` (docs/reference/placement-io.md), quantities as
    strings; ``minAvailable`` is written on every task when some task may be placed short of
    its replicas, as the gang builder writes it."""
    partial = any(task.min_available < task.replicas for task in gang.tasks)
    tasks = []
    for task in gang.tasks:
        entry: dict[str, Any] = {"name": task.name, "replicas": task.replicas}
        if partial:
            entry["minAvailable"] = task.min_available
        entry["requests"] = requests_as_quantities(task.requests)
        if task.node_selector:
            entry["nodeSelector"] = dict(task.node_selector)
        if task.tolerations:
            entry["tolerations"] = [
                {"key": t.key, "operator": t.operator, "value": t.value}
                | ({} if t.effect is None else {"effect": t.effect})
                for t in task.tolerations
            ]
        if task.slice is not None:
            entry["slice"] = {"level": gang.levels[task.slice.level], "size": task.slice.size}
        if task.max_per_node is not None:
            entry["maxPerNode"] = task.max_per_node
        if task.avoid_nodes:
            entry["avoidNodes"] = list(task.avoid_nodes)
        tasks.append(entry)
    data: dict[str, Any] = {"name": gang.name, "priority": gang.priority, "tasks": tasks}
    level = level_name(gang, gang.topology.mode)
    if level is not None:
        data["topology"] = {"mode": gang.topology.mode, "level": level}
    if gang.max_per_node is not None:
        data["maxPerNode"] = gang.max_per_node
    return data
