"""Checking a placement document against the cluster and compiling it into the binding's records.

What a field's own type cannot say is checked here: known levels, distinct names, quantities,
``minAvailable <= replicas``, slices that divide their task. The records
(`crdkit._placer.Node`, `Gang`, `Task`, ...) hold quantities in integer milli-units and levels
as indexes; this is the only place a request is compiled. The input is anything with the
contract's fields: the pydantic models of `crdkit.placer.models`, or the plain records
`crdkit.placer.plain` reads without pydantic.

Every error is a `ValueError` whose single line starts with the field path, for example
``gang.tasks[1].requests.cpu: invalid quantity "abc": not a Kubernetes quantity``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from crdkit import _placer

__all__ = [
    "COUNT_MAX",
    "HOSTNAME_LEVEL",
    "QuantityParser",
    "compile_gang",
    "compile_node",
    "compile_snapshot",
    "effective_levels",
]

HOSTNAME_LEVEL = "kubernetes.io/hostname"
"""The implicit lowest level: one domain per node, named after the node."""

QuantityValue = str | int | float
QuantityParser = Callable[[QuantityValue], int]

COUNT_MAX = 2**64 - 1
"""The largest count (replicas, minAvailable, maxPerNode, a slice's size) a document may give:
the binding's records hold counts as u64, so a larger number is refused where it is read,
naming its field, rather than failing in the binding's conversion with a message that names
nothing."""


if TYPE_CHECKING:
    # A document reaches the compiler read by one of two readers: the contract's pydantic
    # models, or, for a plainly valid document, `crdkit.placer.plain`'s records, which keep
    # `crdkit place` from importing pydantic. Both name the fields alike; labels, selectors and
    # node names are handed to the binding as they are, which takes only a dict or a list.
    from crdkit.placer import models, plain

    NodeFields = models.NodeSpec | plain.PlainNode
    SnapshotFields = models.ClusterSnapshot | plain.PlainSnapshot
    TopologyFields = models.Topology | plain.PlainTopology
    TaskFields = models.Task | plain.PlainTask
    GangFields = models.Gang | plain.PlainGang


def effective_levels(levels: Sequence[str]) -> list[str]:
    """The levels with the implicit per-node level appended when it is not already last."""
    result = list(levels)
    if not result or result[-1] != HOSTNAME_LEVEL:
        result.append(HOSTNAME_LEVEL)
    return result


def _quantities(
    values: Mapping[str, str | int | float], parse: QuantityParser, path: str
) -> dict[str, int]:
    result: dict[str, int] = {}
    for name, value in values.items():
        try:
            result[name] = parse(value)
        except (ValueError, TypeError) as err:
            raise ValueError(f"{path}.{name}: {err}") from None
    return result


def compile_node(node: NodeFields, parse: QuantityParser, path: str) -> _placer.Node:
    """Parse a node's quantities; errors name `path.allocatable.<resource>` and so on."""
    return _placer.Node(
        node.name,
        labels=node.labels,
        allocatable=_quantities(node.allocatable, parse, f"{path}.allocatable"),
        used=_quantities(node.used, parse, f"{path}.used"),
        taints=[_placer.Taint(t.key, t.value, t.effect) for t in node.taints],
        unschedulable=node.unschedulable,
        ready=node.ready,
    )


def compile_snapshot(
    snapshot: SnapshotFields, parse: QuantityParser, path: str = "cluster"
) -> tuple[list[str], list[_placer.Node]]:
    """Validate a snapshot: distinct levels, distinct node names, quantities."""
    seen_levels: set[str] = set()
    for index, level in enumerate(snapshot.levels):
        if not level:
            raise ValueError(f"{path}.levels[{index}]: a level must be a non-empty label key")
        if level in seen_levels:
            raise ValueError(f'{path}.levels[{index}]: duplicate level "{level}"')
        seen_levels.add(level)
    if HOSTNAME_LEVEL in snapshot.levels[:-1]:
        index = snapshot.levels.index(HOSTNAME_LEVEL)
        raise ValueError(f'{path}.levels[{index}]: "{HOSTNAME_LEVEL}" can only be the last level')
    nodes: list[_placer.Node] = []
    names: set[str] = set()
    listed: Sequence[NodeFields] = snapshot.nodes  # either reader's list, not their join
    for index, node in enumerate(listed):
        node_path = f"{path}.nodes[{index}]"
        _first_of_its_name(node.name, names, node_path, "node")
        nodes.append(compile_node(node, parse, node_path))
    return effective_levels(snapshot.levels), nodes


def _first_of_its_name(name: str, seen: set[str], path: str, what: str) -> None:
    """Refuse a second entry of one name (``path.name: duplicate <what> name``), else note it."""
    if name in seen:
        raise ValueError(f'{path}.name: duplicate {what} name "{name}"')
    seen.add(name)


def _level_index(level: str, levels: Sequence[str], path: str) -> int:
    if level not in levels:
        raise ValueError(f'{path}: unknown level "{level}" (levels: {", ".join(levels)})')
    return levels.index(level)


def _topology(topology: TopologyFields, levels: Sequence[str], path: str) -> _placer.Topology:
    if topology.mode == "unconstrained":
        return _UNCONSTRAINED
    assert topology.level is not None  # the model refuses it otherwise
    return _placer.Topology(topology.mode, _level_index(topology.level, levels, f"{path}.level"))


_UNCONSTRAINED = _placer.Topology("unconstrained", None)
_PRIORITY_RANGE = range(-(2**63), 2**63)


def _known_milli(
    gang: GangFields, milli: Mapping[str, Mapping[str, int]], path: str
) -> dict[str, dict[str, int]]:
    """``milli`` checked against the gang's tasks: the same resource names, amounts that are
    non-negative integers (the values themselves are the caller's word for the strings)."""
    tasks: dict[str, tuple[int, TaskFields]] = {}
    given: Sequence[TaskFields] = gang.tasks  # either reader's list, not their join
    for index, task in enumerate(given):
        tasks.setdefault(task.name, (index, task))
    known: dict[str, dict[str, int]] = {}
    for name, amounts in milli.items():
        if name not in tasks:
            raise ValueError(f'{path}: milli-unit requests given for unknown task "{name}"')
        index, task = tasks[name]
        where = f"{path}.tasks[{index}].requests"
        if set(amounts) != set(task.requests):
            raise ValueError(
                f"{where}: the milli-unit requests name {sorted(amounts)}, the task "
                f"{sorted(task.requests)}"
            )
        for resource, amount in amounts.items():
            if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
                raise ValueError(
                    f"{where}.{resource}: expected a non-negative integer of milli-units, "
                    f"got {amount!r}"
                )
        known[name] = dict(amounts)
    return known


def compile_gang(
    gang: GangFields,
    levels: Sequence[str],
    parse: QuantityParser,
    path: str = "gang",
    *,
    milli: Mapping[str, Mapping[str, int]] | None = None,
) -> _placer.Gang:
    """Validate a gang against a cluster's effective levels and compile it, once.

    ``milli`` gives tasks' requests already in milli-units, by task name (what a scheduler
    read off the pods, as `crdkit.scheduling.pod_requests` gives them): those tasks' quantity
    strings are not parsed again. Each must say what the task's ``requests`` say; a task it
    names that the gang lacks, a resource it names that the task does not request (or the
    reverse), or a negative amount is refused, naming the field."""
    known = _known_milli(gang, milli, path) if milli else {}
    if gang.priority not in _PRIORITY_RANGE:
        raise ValueError(f"{path}.priority: {gang.priority} is out of the 64-bit range")
    gang_topology = _topology(gang.topology, levels, f"{path}.topology")
    tasks: list[_placer.Task] = []
    names: set[str] = set()
    given: Sequence[TaskFields] = gang.tasks  # either reader's list, not their join
    for index, task in enumerate(given):
        task_path = f"{path}.tasks[{index}]"
        _first_of_its_name(task.name, names, task_path, "task")
        min_available = task.replicas if task.min_available is None else task.min_available
        if min_available > task.replicas:
            raise ValueError(
                f"{task_path}.minAvailable: {min_available} is more than replicas ({task.replicas})"
            )
        requests = known.get(task.name)
        if requests is None:
            requests = _quantities(task.requests, parse, f"{task_path}.requests")
        own_topology = (
            None
            if task.topology is None
            else _topology(task.topology, levels, f"{task_path}.topology")
        )
        slice_spec: _placer.Slice | None = None
        if task.slice_ is not None:
            slice_path = f"{task_path}.slice"
            slice_level = _level_index(task.slice_.level, levels, f"{slice_path}.level")
            size = task.slice_.size
            if task.replicas % size:
                raise ValueError(
                    f"{slice_path}.size: {size} does not divide replicas ({task.replicas})"
                )
            if min_available % size:
                raise ValueError(
                    f"{slice_path}.size: {size} does not divide minAvailable ({min_available})"
                )
            governing = own_topology if own_topology is not None else gang_topology
            required_level = governing.level if governing.mode == "required" else None
            if required_level is not None and slice_level < required_level:
                raise ValueError(
                    f'{slice_path}.level: "{task.slice_.level}" is wider than the required '
                    f'level "{levels[required_level]}"'
                )
            slice_spec = _placer.Slice(slice_level, size)
        tasks.append(
            _placer.Task(
                task.name,
                replicas=task.replicas,
                min_available=min_available,
                requests=requests,
                node_selector=task.node_selector,
                tolerations=[
                    _placer.Toleration(t.key, t.operator, t.value, t.effect)
                    for t in task.tolerations
                ],
                slice=slice_spec,
                topology=own_topology,
                max_per_node=task.max_per_node,
                avoid_nodes=task.avoid_nodes,
            )
        )
    return _placer.Gang(
        gang.name,
        priority=gang.priority,
        topology=gang_topology,
        tasks=tasks,
        levels=levels if isinstance(levels, list) else list(levels),
        max_per_node=gang.max_per_node,
    )
