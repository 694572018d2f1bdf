"""Where a waiting gang fits soonest, and when: the pure part of reservations and preemption.

`choose_room` picks the room a reservation holds (the domain of the gang's ``required`` level
where, judged from the declared ends of the pods there, it fits soonest; with no such level,
the fewest least-loaded nodes it fits on when empty). `ready_by` is when a set of nodes is sure
to have room for it; `fits_without` whether it fits once some pods are gone (preemption's
question). Each is a function of the mirror's view, tested apart from the scheduler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit.placer import Cluster, parse_quantity

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from crdkit import _placer
    from crdkit.placer.cluster import GangInput
    from crdkit.scheduling.mirror import ClusterMirror

__all__ = ["choose_room", "fits_without", "ready_by", "required_level"]


def required_level(gang: _placer.Gang) -> str | None:
    """The level a compiled gang's topology requires it to keep to; None when it requires none."""
    topology = gang.topology
    if topology.mode != "required" or topology.level is None:
        return None
    return gang.levels[topology.level]


def _fits(
    mirror: ClusterMirror,
    nodes: Iterable[str],
    gang: _placer.Gang,
    used: Callable[[str], Mapping[str, int]] | None,
) -> bool:
    """Whether ``gang`` fits on ``nodes`` alone, each using ``used(node)`` (None: empty).

    The scratch cluster is given the mirror's compiled node records and the compiled gang, so
    a room search that asks this of many sets of nodes compiles nothing again."""
    cluster = Cluster(mirror.levels)
    records = mirror.node_records(nodes)
    cluster.add_nodes(records)
    if used is None:
        return cluster.place(gang).status != "unschedulable"
    for record in records:
        name = record.name
        usage = used(name)
        milli = {k: v for k, v in usage.items() if v > 0 and k != "pods"}
        pods = max(usage.get("pods", 0) // 1000, 0)
        # add_pods counts one ``pods`` per pod: the summed requests as one pod, then the rest
        # of the node's pod count with nothing else, is the node's usage exactly.
        if milli or pods:
            cluster.add_pods(name, milli, 1)
        if pods > 1:
            cluster.add_pods(name, {}, pods - 1)
    return cluster.place(gang).status != "unschedulable"


def fits_without(
    mirror: ClusterMirror,
    nodes: Iterable[str],
    gang: GangInput,
    removed: Mapping[str, Sequence[Mapping[str, int]]],
) -> bool:
    """Whether ``gang`` fits on ``nodes`` alone once the pods in ``removed`` (their requests,
    by node) are gone from them; the placer's view of holds is not consulted. ``gang`` is a
    contract gang or, to compile it once for many questions, `mirror.cluster.compile`'s record."""
    record = mirror.cluster.compile(gang)
    return _fits(mirror, nodes, record, _used_after(mirror, removed))


def _used_after(
    mirror: ClusterMirror, removed: Mapping[str, Sequence[Mapping[str, int]]]
) -> Callable[[str], dict[str, int]]:
    """Each node's usage once the pods in ``removed`` (their requests, by node) are gone."""

    def used(name: str) -> dict[str, int]:
        now = dict(mirror.used(name))
        for milli in removed.get(name, ()):
            for resource, amount in milli.items():
                now[resource] = now.get(resource, 0) - amount
            now["pods"] = now.get("pods", 0) - 1000
        return now

    return used


def ready_by(
    mirror: ClusterMirror,
    nodes: Iterable[str],
    gang: GangInput,
    end_of: Callable[[str], float | None],
    now: float,
) -> float | None:
    """When ``gang`` is sure to fit on ``nodes``: the earliest time by which pods there whose
    declared ends (``end_of(pod key)``) have passed leave it room. ``now`` if it fits now;
    None if it needs room that a pod without a declared end holds."""
    gang = mirror.cluster.compile(gang)
    names = sorted(nodes)
    if _fits(mirror, names, gang, mirror.used):
        return now
    ending: list[tuple[float, str, str]] = []
    for name in names:
        for key in mirror.pods_on(name):
            end = end_of(key)
            if end is not None:
                ending.append((end, key, name))
    ending.sort()

    def fits_after(count: int) -> bool:
        removed: dict[str, list[Mapping[str, int]]] = {}
        for _, key, name in ending[:count]:
            milli = mirror.requests_of(key)
            if milli is not None:
                removed.setdefault(name, []).append(milli)
        return _fits(mirror, names, gang, _used_after(mirror, removed))

    if not ending or not fits_after(len(ending)):
        return None
    low, high = 1, len(ending)  # fewest of the earliest-ending pods that must go
    while low < high:
        middle = (low + high) // 2
        if fits_after(middle):
            high = middle
        else:
            low = middle + 1
    return max(now, ending[low - 1][0])


def _load(mirror: ClusterMirror, nodes: Iterable[str], resources: Sequence[str]) -> float:
    """How full ``nodes`` are in the resources a gang asks for (a sum of used fractions)."""
    total = 0.0
    for name in nodes:
        entry = mirror.node(name) or {}
        allocatable = entry.get("allocatable", {})
        used = mirror.used(name)
        for resource in resources:
            capacity = _milli(allocatable.get(resource))
            if capacity > 0:
                total += used.get(resource, 0) / capacity
    return total


def _milli(quantity: Any) -> int:
    return 0 if quantity is None else parse_quantity(quantity)


def choose_room(
    mirror: ClusterMirror,
    gang: GangInput,
    *,
    taken: frozenset[str],
    end_of: Callable[[str], float | None],
    now: float,
) -> tuple[str | None, str | None, frozenset[str], float | None] | None:
    """Where ``gang`` (which does not fit now) fits soonest: ``(level, domain, nodes,
    ready_by)``, or None when it fits nowhere even on empty nodes. Nodes in ``taken`` (held
    for gangs it may not overtake) are never chosen.

    With a ``required`` topology level the candidates are that level's domains with no taken
    node, ranked by ``ready_by`` (unknown last), then by how full they are, then by name.
    Without one, the room is the fewest least-loaded free nodes it fits on when empty."""
    gang = mirror.cluster.compile(gang)  # once, for every set of nodes asked about
    resources = sorted({r for task in gang.tasks for r in task.requests})
    level = required_level(gang)
    if level is not None:
        domains: dict[str, set[str]] = {}
        for entry in mirror.nodes():
            value = entry["labels"].get(level)
            if value is not None:
                domains.setdefault(value, set()).add(entry["name"])
        ranked: list[tuple[bool, float, float, str]] = []
        for value, names in domains.items():
            if names & taken or not _fits(mirror, names, gang, None):
                continue
            when = ready_by(mirror, names, gang, end_of, now)
            ranked.append((when is None, when or 0.0, _load(mirror, names, resources), value))
        if not ranked:
            return None
        unknown, when, _, value = min(ranked)
        return level, value, frozenset(domains[value]), None if unknown else when
    free = sorted(
        (name for name in mirror.node_names() if name not in taken),
        key=lambda name: (_load(mirror, [name], resources), name),
    )
    if not free or not _fits(mirror, free, gang, None):
        return None
    low, high = 1, len(free)  # the shortest prefix of the least-loaded nodes it fits on
    while low < high:
        middle = (low + high) // 2
        if _fits(mirror, free[:middle], gang, None):
            high = middle
        else:
            low = middle + 1
    nodes = frozenset(free[:low])
    return None, None, nodes, ready_by(mirror, nodes, gang, end_of, now)
