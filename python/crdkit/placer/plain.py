"""Reading a placement document that is plainly valid, without pydantic.

`crdkit place` is a command people run in loops and scripts; building the contract's pydantic
models is most of its start-up. The readers here accept a document only when every field has
exactly the type the contract writes it with (a string where a string goes, an integer that is
not a boolean, only the camelCase names, no unknown key) and turn it into records with the
fields `crdkit.placer.compiler` reads. For anything else they answer ``None``, and the caller
takes the models' path, which accepts what pydantic's coercions accept and words every refusal.
So the two paths cannot disagree on what a document means, and an error reads the same
whichever reader saw the document first: ``tests/property/placer/test_plain_properties.py``
keeps that so.

Only the field's own type is checked here; what needs the whole document (levels that exist,
distinct names, quantities) is the compiler's, on either path.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from crdkit import _placer
from crdkit.placer.compiler import COUNT_MAX, HOSTNAME_LEVEL, compile_gang, compile_snapshot

__all__ = [
    "PlainGang",
    "PlainNode",
    "PlainSlice",
    "PlainSnapshot",
    "PlainTaint",
    "PlainTask",
    "PlainToleration",
    "PlainTopology",
    "outcome_dict",
    "place_plainly",
    "plain_gang",
    "plain_snapshot",
]

_MODES = ("required", "preferred", "unconstrained")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_OPERATORS = ("Equal", "Exists")


class PlainTaint(NamedTuple):
    key: str
    value: str
    effect: str


class PlainNode(NamedTuple):
    name: str
    labels: dict[str, str]
    allocatable: dict[str, str | int | float]
    used: dict[str, str | int | float]
    taints: list[PlainTaint]
    unschedulable: bool
    ready: bool


class PlainSnapshot(NamedTuple):
    levels: list[str]
    nodes: list[PlainNode]


class PlainTopology(NamedTuple):
    mode: str
    level: str | None


class PlainToleration(NamedTuple):
    key: str
    operator: str
    value: str
    effect: str | None


class PlainSlice(NamedTuple):
    level: str
    size: int


class PlainTask(NamedTuple):
    name: str
    replicas: int
    min_available: int | None
    requests: dict[str, str | int | float]
    node_selector: dict[str, str]
    tolerations: list[PlainToleration]
    slice_: PlainSlice | None
    topology: PlainTopology | None
    max_per_node: int | None
    avoid_nodes: list[str]


class PlainGang(NamedTuple):
    name: str
    priority: int
    topology: PlainTopology
    tasks: list[PlainTask]
    max_per_node: int | None


class _NotPlain(Exception):
    """Something the models should judge (a coercion, an error to word)."""


def _object(value: Any, allowed: frozenset[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
    if type(value) is not dict or not value.keys() <= allowed:
        raise _NotPlain
    for key in required:
        if key not in value:
            raise _NotPlain
    return value


def _str(value: Any, *, non_empty: bool = False) -> str:
    if type(value) is not str or (non_empty and not value):
        raise _NotPlain
    return value


def _optional_str(value: Any) -> str | None:
    return None if value is None else _str(value)


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise _NotPlain
    return value


def _int(value: Any, low: int | None = None, high: int | None = None) -> int:
    if type(value) is not int:
        raise _NotPlain
    if (low is not None and value < low) or (high is not None and value > high):
        raise _NotPlain
    return value


def _count(value: Any) -> int | None:
    return None if value is None else _int(value, 1, COUNT_MAX)


def _choice(value: Any, choices: tuple[str, ...]) -> str:
    if type(value) is not str or value not in choices:
        raise _NotPlain
    return value


def _strings(value: Any) -> dict[str, str]:
    if type(value) is not dict:
        raise _NotPlain
    for key, item in value.items():
        if type(key) is not str or type(item) is not str:
            raise _NotPlain
    return value


def _quantities(value: Any) -> dict[str, str | int | float]:
    if type(value) is not dict:
        raise _NotPlain
    for key, item in value.items():
        if type(key) is not str or type(item) not in (str, int, float):
            raise _NotPlain
    return value


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise _NotPlain
    return value


_TAINT = frozenset({"key", "value", "effect"})
_NODE = frozenset({"name", "labels", "allocatable", "used", "taints", "unschedulable", "ready"})
_SNAPSHOT = frozenset({"levels", "nodes"})
_TOPOLOGY = frozenset({"mode", "level"})
_TOLERATION = frozenset({"key", "operator", "value", "effect"})
_SLICE = frozenset({"level", "size"})
_TASK = frozenset(
    {
        "name",
        "replicas",
        "minAvailable",
        "requests",
        "nodeSelector",
        "tolerations",
        "slice",
        "topology",
        "maxPerNode",
        "avoidNodes",
    }
)
_GANG = frozenset({"name", "priority", "topology", "tasks", "maxPerNode"})


def _taint(value: Any) -> PlainTaint:
    data = _object(value, _TAINT, ("key", "effect"))
    return PlainTaint(
        _str(data["key"]), _str(data.get("value", "")), _choice(data["effect"], _EFFECTS)
    )


def _node(value: Any) -> PlainNode:
    data = _object(value, _NODE, ("name",))
    return PlainNode(
        name=_str(data["name"], non_empty=True),
        labels=_strings(data.get("labels", {})),
        allocatable=_quantities(data.get("allocatable", {})),
        used=_quantities(data.get("used", {})),
        taints=[_taint(taint) for taint in _list(data.get("taints", []))],
        unschedulable=_bool(data.get("unschedulable", False)),
        ready=_bool(data.get("ready", True)),
    )


def _topology(value: Any) -> PlainTopology:
    data = _object(value, _TOPOLOGY)
    mode = _choice(data.get("mode", "unconstrained"), _MODES)
    level = _optional_str(data.get("level"))
    if mode != "unconstrained" and level is None:
        raise _NotPlain  # the models word this one
    return PlainTopology(mode, level)


def _toleration(value: Any) -> PlainToleration:
    data = _object(value, _TOLERATION)
    effect = data.get("effect")
    return PlainToleration(
        key=_str(data.get("key", "")),
        operator=_choice(data.get("operator", "Equal"), _OPERATORS),
        value=_str(data.get("value", "")),
        effect=None if effect is None else _choice(effect, _EFFECTS),
    )


def _slice(value: Any) -> PlainSlice | None:
    if value is None:
        return None
    data = _object(value, _SLICE, ("level", "size"))
    return PlainSlice(_str(data["level"]), _int(data["size"], 1, COUNT_MAX))


def _task(value: Any) -> PlainTask:
    data = _object(value, _TASK, ("name", "replicas"))
    topology = data.get("topology")
    return PlainTask(
        name=_str(data["name"], non_empty=True),
        replicas=_int(data["replicas"], 1, COUNT_MAX),
        min_available=_count(data.get("minAvailable")),
        requests=_quantities(data.get("requests", {})),
        node_selector=_strings(data.get("nodeSelector", {})),
        tolerations=[_toleration(t) for t in _list(data.get("tolerations", []))],
        slice_=_slice(data.get("slice")),
        topology=None if topology is None else _topology(topology),
        max_per_node=_count(data.get("maxPerNode")),
        avoid_nodes=[_str(name) for name in _list(data.get("avoidNodes", []))],
    )


def plain_snapshot(document: Any) -> PlainSnapshot | None:
    """The cluster snapshot ``document`` as records, or ``None`` if it is not plainly valid."""
    try:
        data = _object(document, _SNAPSHOT, ("levels",))
        return PlainSnapshot(
            levels=[_str(level) for level in _list(data["levels"])],
            nodes=[_node(node) for node in _list(data.get("nodes", []))],
        )
    except _NotPlain:
        return None


def plain_gang(document: Any) -> PlainGang | None:
    """The gang ``document`` as records, or ``None`` if it is not plainly valid."""
    try:
        data = _object(document, _GANG, ("name", "tasks"))
        tasks = [_task(task) for task in _list(data["tasks"])]
        if not tasks:
            return None
        return PlainGang(
            name=_str(data["name"], non_empty=True),
            priority=_int(data.get("priority", 0)),
            topology=_topology(data.get("topology", {})),
            tasks=tasks,
            max_per_node=_count(data.get("maxPerNode")),
        )
    except _NotPlain:
        return None


def place_plainly(
    cluster: Any, gangs: list[Any], policy: str, *, batch: bool
) -> list[dict[str, Any]] | None:
    """`crdkit place` on plainly valid documents: the placements in the contract's JSON (one
    for one gang, or a batch's in placement order), or ``None`` as soon as a document is not
    plainly valid (then `crdkit.placer.Cluster` must judge them all). Errors the compiler
    finds are raised as the models' path raises them, in the same order: the snapshot's first,
    then each gang's, named ``gang`` alone or ``gangs[i]`` in a batch."""
    snapshot = plain_snapshot(cluster)
    plain = [gang for gang in map(plain_gang, gangs) if gang is not None]
    if snapshot is None or len(plain) < len(gangs):
        return None  # decided before compiling anything, which the models would do again
    parse = _placer.parse_quantity
    levels, nodes = compile_snapshot(snapshot, parse)
    compiled = [
        compile_gang(gang, levels, parse, f"gangs[{index}]" if batch else "gang")
        for index, gang in enumerate(plain)
    ]
    implicit_host = not snapshot.levels or snapshot.levels[-1] != HOSTNAME_LEVEL
    engine = _placer.Engine(levels, implicit_host, None)
    engine.add_nodes(nodes)
    if batch:
        return [outcome_dict(outcome) for outcome in engine.place_all(compiled, policy)]
    return [outcome_dict(engine.place(gang, policy)) for gang in compiled]


def outcome_dict(outcome: _placer.Outcome) -> dict[str, Any]:
    """An engine's outcome as the contract's JSON object: what
    `crdkit.placer.Placement.to_dict` gives for it (``reason`` and ``fit`` only when present)."""
    data: dict[str, Any] = {
        "gang": outcome.gang,
        "status": outcome.status,
        "level": outcome.level,
        "domain": outcome.domain,
        "placed": outcome.placed,
        "assignments": [
            {"task": a.task, "node": a.node, "count": a.count} for a in outcome.assignments
        ],
    }
    if outcome.reason is not None:
        data["reason"] = outcome.reason
    fit = outcome.fit
    if fit is not None:
        data["fit"] = {
            "bestDomain": fit.best_domain,
            "fits": fit.fits,
            "wants": fit.wants,
            "unit": fit.unit,
        }
    return data
