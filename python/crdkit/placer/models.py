"""The placement contract (docs/reference/placement-io.md) as pydantic models, and their validation.

Two layers, so that every refusal names the field that caused it:

- The models (`ClusterSnapshot`, `NodeSpec`, `Gang`, `Task`, ... and the result `Placement`)
  mirror the JSON with camelCase aliases. They check shapes and simple bounds.
- `compile_snapshot`, `compile_node` and `compile_gang` check what needs the whole document or
  the cluster (known levels, quantities, `minAvailable <= replicas`, duplicate names, slices)
  and build the binding's frozen records (`crdkit._placer.Node`, `Gang`, `Task`, ...) with
  quantities in integer milli-units and levels as indexes. This is the only place a request is
  compiled: the Rust record keeps the converted spec, so placing it extracts nothing more, and
  the pure-Python reference engine takes the same records (it copies what it reads once, at
  its boundary).

Every error is a `ValueError` whose single line starts with the field path, for example
``gang.tasks[1].requests.cpu: invalid quantity "abc": not a Kubernetes quantity``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from crdkit import _placer
from crdkit._yaml import NestedTooDeeply, load_yaml

__all__ = [
    "HOSTNAME_LEVEL",
    "Assignment",
    "ClusterSnapshot",
    "Fit",
    "Gang",
    "NodeSpec",
    "Placement",
    "QuantityParser",
    "Slice",
    "Taint",
    "Task",
    "Toleration",
    "Topology",
    "compile_gang",
    "compile_node",
    "compile_snapshot",
    "effective_levels",
    "load_document",
    "validated",
]

HOSTNAME_LEVEL = "kubernetes.io/hostname"
"""The implicit lowest level: one domain per node, named after the node."""

Mode = Literal["required", "preferred", "unconstrained"]
Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
Quantity = Annotated[StrictStr | StrictInt | StrictFloat, Field(union_mode="left_to_right")]
QuantityParser = Callable[[str | int | float], int]
M = TypeVar("M", bound=BaseModel)


class _Model(BaseModel):
    # Unknown fields are refused: a typo such as `minavailable` must not be silently ignored.
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)


class Taint(_Model):
    """A node taint; `NoSchedule` and `NoExecute` repel, `PreferNoSchedule` lowers preference."""

    key: str
    value: str = ""
    effect: Effect


class NodeSpec(_Model):
    """One node of a cluster snapshot."""

    name: str = Field(min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)
    allocatable: dict[str, Quantity] = Field(default_factory=dict)
    used: dict[str, Quantity] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)
    unschedulable: bool = False
    ready: bool = True


class ClusterSnapshot(_Model):
    """The `--cluster` document: topology levels (widest first) and nodes."""

    levels: list[str]
    nodes: list[NodeSpec] = Field(default_factory=list)


class Topology(_Model):
    """Where the pods of a gang (or of one task) must or should lie together."""

    mode: Mode = "unconstrained"
    level: str | None = None

    @model_validator(mode="after")
    def _level_matches_mode(self) -> Topology:
        if self.mode != "unconstrained" and self.level is None:
            raise ValueError(f"mode {self.mode} needs a level")
        return self


class Toleration(_Model):
    """Kubernetes toleration rules: `Equal` (default) or `Exists`; no effect matches all."""

    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: Effect | None = None


# The Rust records hold counts as u64: a larger number is refused here, naming its field,
# rather than failing in the binding's conversion with a message that names nothing.
_COUNT_MAX = 2**64 - 1


class Slice(_Model):
    """Groups of `size` pods, each group wholly inside one domain of `level`."""

    level: str
    size: int = Field(ge=1, le=_COUNT_MAX)


class Task(_Model):
    """A set of identical pods of a gang."""

    name: str = Field(min_length=1)
    replicas: int = Field(ge=1, le=_COUNT_MAX)
    min_available: int | None = Field(default=None, alias="minAvailable", ge=1, le=_COUNT_MAX)
    requests: dict[str, Quantity] = Field(default_factory=dict)
    node_selector: dict[str, str] = Field(default_factory=dict, alias="nodeSelector")
    tolerations: list[Toleration] = Field(default_factory=list)
    slice_: Slice | None = Field(default=None, alias="slice")
    topology: Topology | None = None
    max_per_node: int | None = Field(default=None, alias="maxPerNode", ge=1, le=_COUNT_MAX)
    """At most this many of the task's pods on one node (1: one rank per node)."""
    avoid_nodes: list[str] = Field(default_factory=list, alias="avoidNodes")
    """Nodes the task's pods must not go to, by name (a name no node has is ignored)."""


class Gang(_Model):
    """An all-or-nothing request: every pod of every task is placed, or none is."""

    name: str = Field(min_length=1)
    priority: int = 0
    topology: Topology = Field(default_factory=Topology)
    tasks: list[Task] = Field(min_length=1)
    max_per_node: int | None = Field(default=None, alias="maxPerNode", ge=1, le=_COUNT_MAX)
    """At most this many of the gang's pods, of all its tasks together, on one node."""


class Fit(_Model):
    """The numbers behind an `unschedulable` reason. `best_domain` is None for the whole cluster."""

    best_domain: str | None = Field(alias="bestDomain")
    fits: int
    wants: int
    unit: Literal["pods", "slices"]


class Assignment(_Model):
    """`count` pods of `task` on `node`."""

    task: str
    node: str
    count: int = Field(ge=1)


class Placement(_Model):
    """The placer's answer for one gang, in contract form via `to_dict()`."""

    gang: str
    status: Literal["placed", "minimal", "unschedulable"]
    level: str | None
    domain: dict[str, str]
    placed: dict[str, int]
    assignments: list[Assignment]
    reason: str | None = None
    fit: Fit | None = None
    # The compiled gang this answers, so `Cluster.assume(placement)` needs nothing else.
    _gang: _placer.Gang | None = PrivateAttr(default=None)

    def to_dict(self) -> dict[str, Any]:
        """The contract's JSON object (camelCase; `reason` and `fit` only when present)."""
        data = self.model_dump(by_alias=True, mode="json")
        for optional in ("reason", "fit"):
            if data[optional] is None:
                del data[optional]
        return data

    @property
    def requests(self) -> dict[str, dict[str, int]]:
        """Per task, the per-pod requests in milli-units (empty when loaded from JSON)."""
        if self._gang is None:
            return {}
        return {task.name: task.requests for task in self._gang.tasks}


# --- validation ------------------------------------------------------------------------------


def _format_loc(prefix: str, loc: Sequence[int | str]) -> str:
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part in ("str", "int", "float", "function-after[_level_matches_mode()]"):
            continue  # pydantic's union-member and validator markers, not fields
        else:
            path += f".{part}" if path else str(part)
    return path


def validated(model: type[M], data: Any, prefix: str) -> M:
    """`model.model_validate(data)`, with the first error as one line naming the field path."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        raise ValueError(f"{_format_loc(prefix, first['loc'])}: {first['msg']}") from None


MAX_DEPTH = 64
"""How deeply a YAML placement document may nest (the contract needs six levels)."""


def load_document(path: str | Path) -> Any:
    """Read a JSON or YAML file (YAML is a superset of JSON; JSON is tried first for speed).

    Every failure is a one-line `ValueError` starting with the path: text that is not UTF-8,
    neither JSON nor YAML, or nested too deeply. JSON's decoder bounds its own recursion (a
    `RecursionError`, refused here); YAML can also build shared and cyclic values with
    aliases, so a YAML document is walked once more and refused past `MAX_DEPTH` levels (a
    cycle counts as endless). JSON skips that walk: it would cost as much as the parse on a
    large snapshot, and a JSON value is always a tree.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text: {err.reason} at byte {err.start}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to read") from None
    try:
        document = load_yaml(text)
    except NestedTooDeeply:
        raise ValueError(f"{path}: nested too deeply to read") from None
    except ValueError as err:
        raise ValueError(f"{path}: not JSON or YAML: {err}") from None
    too_deep = _too_deep(document, MAX_DEPTH)
    if too_deep is not None:
        raise ValueError(f"{path}: {too_deep}: nested more than {MAX_DEPTH} levels deep")
    return document


def _too_deep(document: Any, limit: int) -> str | None:
    """The path of a value nested deeper than `limit` containers, or None.

    Breadth first and without recursion; a container reached twice on one level is walked
    once, so YAML aliases cost what the file's text does, and a cycle runs into the limit.
    """
    frontier: list[tuple[Any, str]] = [(document, "")]
    for _ in range(limit):
        deeper: list[tuple[Any, str]] = []
        seen: set[int] = set()
        for value, path in frontier:
            if isinstance(value, dict):
                pairs: Any = value.items()
            elif isinstance(value, list):
                pairs = enumerate(value)
            else:
                continue
            for key, child in pairs:
                if isinstance(child, dict | list) and id(child) not in seen:
                    seen.add(id(child))
                    step = f"[{key}]" if isinstance(value, list) else f".{key}" if path else key
                    deeper.append((child, f"{path}{step}"))
        if not deeper:
            return None
        frontier = deeper
    path = frontier[0][1]
    return path if len(path) <= 60 else f"{path[:60]}..."


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


def compile_node(node: NodeSpec, parse: QuantityParser, path: str) -> _placer.Node:
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
    snapshot: ClusterSnapshot, parse: QuantityParser, path: str = "cluster"
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
    for index, node in enumerate(snapshot.nodes):
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


def _topology(topology: Topology, levels: Sequence[str], path: str) -> _placer.Topology:
    if topology.mode == "unconstrained":
        return _UNCONSTRAINED
    assert topology.level is not None  # the model refuses it otherwise
    return _placer.Topology(topology.mode, _level_index(topology.level, levels, f"{path}.level"))


_UNCONSTRAINED = _placer.Topology("unconstrained", None)
_PRIORITY_RANGE = range(-(2**63), 2**63)


def _known_milli(
    gang: Gang, milli: Mapping[str, Mapping[str, int]], path: str
) -> dict[str, dict[str, int]]:
    """``milli`` checked against the gang's tasks: the same resource names, amounts that are
    non-negative integers (the values themselves are the caller's word for the strings)."""
    tasks: dict[str, tuple[int, Task]] = {}
    for index, task in enumerate(gang.tasks):
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
    gang: Gang,
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
    for index, task in enumerate(gang.tasks):
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
