"""Why a gang does not fit: what filtered each task's nodes, and whether it ever could.

kube-scheduler answers an unschedulable pod with a count per filter
(``0/1024 nodes are available: 512 Insufficient nvidia.com/gpu, ...``); a gang scheduler owes
the same for each task of a gang, plus the placer's own reason (which domain came closest and
by how much), plus one more fact that a waiting gang's owner needs: whether the gang would fit
this cluster with every node empty. If not, waiting will not help ("never fits this cluster":
fix the request or add nodes); if so, it waits for room ("not now").

Filters are checked in kube-scheduler's order and a node is counted under the first that
rejects it: readiness, cordon, taints, the node selector, the topology labels the gang needs,
then capacity, where a node short of several resources counts under each of them (as
kube-scheduler's NodeResourcesFit reports).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.placer import parse_quantity
from crdkit.placer.models import HOSTNAME_LEVEL
from crdkit.placer.taints import tolerates
from crdkit.scheduling.nodes import UNSCHEDULABLE_TAINT

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from crdkit import _placer
    from crdkit.placer import Placement
    from crdkit.placer.cluster import GangInput
    from crdkit.scheduling.mirror import ClusterMirror

__all__ = [
    "Explanation",
    "NodeClass",
    "TaskFilters",
    "explain",
    "filter_classes",
    "filter_nodes",
    "node_classes",
]

NOT_READY = "node(s) were not ready"
CORDONED = "node(s) were unschedulable"
SELECTOR = "node(s) didn't match Pod's node selector"


@dataclass(frozen=True)
class TaskFilters:
    """For one task: how many nodes could take one more of its pods, and why the rest could
    not (reason to node count). ``now``: counted against what the nodes hold now; otherwise
    against every node empty (what could ever take one)."""

    task: str
    nodes: int
    fit: int
    filtered: Mapping[str, int] = field(default_factory=dict)
    now: bool = True

    def summary(self) -> str:
        """kube-scheduler's spelling: ``0/4 nodes are available: 3 Insufficient cpu, ...``,
        or ``... nodes could ever take one: ...`` for the empty cluster."""
        parts = [f"{count} {reason}" for reason, count in sorted(self.filtered.items())]
        verb = "are available" if self.now else "could ever take one"
        head = f"{self.fit}/{self.nodes} nodes {verb}"
        return f"{head}: {', '.join(parts)}" if parts else head


@dataclass(frozen=True)
class Explanation:
    """Why a gang is unschedulable, in one sentence (``message``) and in parts."""

    never_fits: bool
    """True when the gang would not fit even with every node of the cluster empty."""
    reason: str
    """The placer's reason: for a gang that never fits, its reason on the empty cluster (what
    would block it forever); otherwise its reason now."""
    tasks: tuple[TaskFilters, ...]
    """Per task, its nodes counted as ``reason`` was judged: now, or every node empty."""

    @property
    def message(self) -> str:
        """``not now: <reason>; worker: 3/128 nodes are available: ...`` or ``never fits this
        cluster, even with every node empty: <reason>; worker: 0/128 nodes could ever take
        one: ...``: the verdict, the placer's reason and each task's counts."""
        verdict = (
            "never fits this cluster, even with every node empty" if self.never_fits else "not now"
        )
        parts = [self.reason, *(f"{t.task}: {t.summary()}" for t in self.tasks)]
        return f"{verdict}: {'; '.join(parts)}"


def filter_nodes(
    task: _placer.Task,
    nodes: Iterable[Mapping[str, Any]],
    used: Mapping[str, Mapping[str, int]] | None,
    needed_labels: Iterable[str] = (),
) -> TaskFilters:
    """Counts, for one compiled task, the nodes (placer entries) that could take one more pod
    and the reasons the others could not. ``used`` is each node's usage in milli-units;
    ``None`` counts every node empty (what could ever take a pod)."""
    empty: Mapping[str, int] = {}
    classes = [
        NodeClass(node, empty if used is None else used.get(node["name"], empty), 1)
        for node in nodes
    ]
    return filter_classes(task, classes, now=used is not None, needed_labels=needed_labels)


@dataclass(frozen=True, slots=True)
class NodeClass:
    """Nodes alike in all a filter reads (readiness, taints, labels but the hostname,
    allocatable, usage): ``count`` of them, ``node`` one's entry and ``used`` its usage."""

    node: Mapping[str, Any]
    used: Mapping[str, int]
    count: int


def node_classes(
    nodes: Iterable[Mapping[str, Any]], used: Mapping[str, Mapping[str, int]] | None
) -> list[NodeClass]:
    """``nodes`` grouped into classes whose members every filter judges alike, unless a task
    selects by hostname (`explain` then counts node by node). A cluster of a few machine kinds
    has a few dozen classes, so explaining a gang costs that many checks, not one per node."""
    empty: Mapping[str, int] = {}
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for node in nodes:
        usage = empty if used is None else used.get(node["name"], empty)
        labels = node.get("labels", {})
        key = (
            node.get("ready", True),
            tuple((t["key"], t.get("value") or "", t["effect"]) for t in node.get("taints", ())),
            tuple(sorted((k, v) for k, v in labels.items() if k != HOSTNAME_LEVEL)),
            tuple(sorted(node.get("allocatable", {}).items())),
            tuple(sorted(usage.items())),
        )
        group = groups.get(key)
        if group is None:
            groups[key] = [node, usage, 1]
        else:
            group[2] += 1
    return [NodeClass(node, usage, count) for node, usage, count in groups.values()]


def filter_classes(
    task: _placer.Task,
    classes: Iterable[NodeClass],
    *,
    now: bool,
    needed_labels: Iterable[str] = (),
) -> TaskFilters:
    """`filter_nodes` over node classes: each class counts as its ``count`` nodes."""
    # The record's getters build new objects on every access: read them once for all nodes.
    asks = _Asks(
        tolerations=tuple((t.key, t.operator, t.value, t.effect) for t in task.tolerations),
        selector=tuple(task.node_selector.items()),
        requests=dict(task.requests),
        labels=tuple(needed_labels),
    )
    reasons: Counter[str] = Counter()
    total = fit = 0
    for group in classes:
        total += group.count
        rejected = _first_filter(asks, group.node)
        if rejected is not None:
            reasons[rejected] += group.count
            continue
        short = _short_of(asks, group.node, group.used)
        if short:
            for resource in short:
                reasons[f"Insufficient {resource}"] += group.count
        else:
            fit += group.count
    return TaskFilters(task.name, total, fit, dict(reasons), now=now)


@dataclass(frozen=True, slots=True)
class _Asks:
    """What one task asks of a node, read once from its record."""

    tolerations: tuple[tuple[str, str, str, str | None], ...]
    selector: tuple[tuple[str, str], ...]
    requests: dict[str, int]
    labels: tuple[str, ...]


def _first_filter(asks: _Asks, node: Mapping[str, Any]) -> str | None:
    if not node.get("ready", True):
        return NOT_READY
    for taint in node.get("taints", ()):
        if taint["effect"] == "PreferNoSchedule":
            continue
        triple = (taint["key"], taint.get("value") or "", taint["effect"])
        if not tolerates(asks.tolerations, triple):
            if taint["key"] == UNSCHEDULABLE_TAINT:
                return CORDONED
            return f"node(s) had untolerated taint {{{triple[0]}: {triple[1]}}}"
    node_labels = node.get("labels", {})
    if any(node_labels.get(key) != value for key, value in asks.selector):
        return SELECTOR
    for label in asks.labels:
        if label not in node_labels:
            return f"node(s) lack the topology label {label}"
    return None


def _short_of(asks: _Asks, node: Mapping[str, Any], used: Mapping[str, int]) -> list[str]:
    allocatable = node.get("allocatable", {})
    short = []
    wanted = {**asks.requests, "pods": 1000} if "pods" in allocatable else asks.requests
    for resource, milli in sorted(wanted.items()):
        if milli <= 0:
            continue
        have = parse_quantity(allocatable[resource]) if resource in allocatable else 0
        if have - used.get(resource, 0) < milli:
            short.append("pods" if resource == "pods" else resource)
    return short


def explain(
    mirror: ClusterMirror, gang: GangInput, placement: Placement | _placer.Outcome
) -> Explanation:
    """Why ``gang`` (whose placement came back unschedulable) does not fit ``mirror``.

    If it would not fit with every node empty either, waiting will not help: the reason and
    the counts are the empty cluster's (what blocks it for good). Otherwise they are now's.
    """
    compiled = mirror.cluster.compile(gang)
    levels = mirror.cluster.levels
    empty = mirror.empty.place(compiled)
    never = empty.status == "unschedulable"
    by_host = any(HOSTNAME_LEVEL in task.node_selector for task in compiled.tasks)
    tasks = []
    gang_mode = compiled.topology.mode
    for task in compiled.tasks:
        needed = _topology_labels(gang_mode, task, levels)
        if by_host:
            used = None if never else mirror.cluster.used()
            tasks.append(filter_nodes(task, mirror.nodes(), used, needed))
        else:
            classes = _classes_of(mirror, now=not never)
            tasks.append(filter_classes(task, classes, now=not never, needed_labels=needed))
    reason = (empty if never else placement).reason or "the placer found no room"
    return Explanation(never_fits=never, reason=reason, tasks=tuple(tasks))


def _classes_of(mirror: ClusterMirror, *, now: bool) -> list[NodeClass]:
    """The mirror's node classes (against its usage, or ``now=False`` every node empty), kept
    by the mirror while neither its nodes nor (``now``) its usage changed: a pass that explains
    many gangs groups the nodes once."""

    def build() -> list[NodeClass]:
        return node_classes(mirror.nodes(), mirror.cluster.used() if now else None)

    return mirror.derived(("explanation.node_classes", now), build, usage=now)


def _topology_labels(gang_mode: str, task: _placer.Task, levels: list[str]) -> list[str]:
    """The level labels a node must carry to take this task's pods: every level's, when the
    task or its gang is constrained or the task has slices (docs/reference/placement-io.md); the
    per-node level is left out, since every Node carries its hostname."""
    modes = {gang_mode, gang_mode if task.topology is None else task.topology.mode}
    if modes == {"unconstrained"} and task.slice is None:
        return []
    return [label for label in levels if label != HOSTNAME_LEVEL]
