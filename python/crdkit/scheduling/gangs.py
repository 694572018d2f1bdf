"""Pending pods of one group as a placer gang: the placer's record, built straight from the
milli-units read off the pods (`crdkit.scheduling.gang_records`), and on request the ``Gang``
of docs/reference/placement-io.md that it stands for.

The pods of a gang were made by some other controller (a training operator, JobSet, LWS, a
Job), so the gang's tasks are read off the pods: pods that ask for the same thing (requests,
node selector, tolerations, slice) under the same role are one task. The role comes from the
label or annotation their controller sets (`TASK_KEYS`: Volcano's task, Kubeflow's replica
type, JobSet's replicated job, LWS's leader/worker), else the task is called ``pods``.

Topology, first found wins:

1. the PodGroup's (Volcano ``networkTopology``: ``hard`` is ``required`` at the level of tier
   ``highestTierAllowed``, ``soft`` is ``preferred`` from tier 1; tier 1 is the narrowest of the
   scheduler's levels, as Volcano numbers HyperNode tiers from the leaves);
2. Kueue's pod annotations (``kueue.x-k8s.io/podset-required-topology`` and
   ``podset-preferred-topology``: a node label key, which must be one of the levels;
   ``podset-unconstrained-topology``; ``podset-slice-required-topology`` with
   ``podset-slice-size`` for slices);
3. the scheduler's default.

A gang needs ``needed`` pods (its PodGroup's ``minMember`` less the pods already bound): with
more pods pending than that, each task's ``minAvailable`` is set so that the tasks' minimums add
up to ``needed`` (Volcano's ``minTaskMember`` first, the rest in task order, each at least one),
and the placer places every pod if it can, else exactly those minimums.

A required anti-affinity on ``kubernetes.io/hostname`` among the gang's own pods ("one rank per
node", `crdkit.scheduling.rank_rules`) becomes a per-node limit of one: the task's
``maxPerNode`` when its selector matches just that task's pending pods, the gang's when it
matches all of them. Pods that carry different rules are different tasks.

What the placer cannot honour is refused, naming the field, rather than placed against the
pod's own rule: required node affinity richer than a label match, required inter-pod affinity,
anti-affinity a per-node limit cannot say, and spread constraints with ``whenUnsatisfiable:
DoNotSchedule``. The gang then waits with that reason. Preferred terms are preferences and are
left out of the decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.placer.models import HOSTNAME_LEVEL
from crdkit.scheduling.gang_records import contract, gang_record
from crdkit.scheduling.rank_rules import RANK_RULES_FIELD, RankRule, rank_rules
from crdkit.scheduling.requests import pod_requests, requests_as_quantities

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from crdkit import _placer
    from crdkit.resources import Pod

__all__ = [
    "HOSTNAME",
    "KUEUE_PREFERRED",
    "KUEUE_REQUIRED",
    "KUEUE_SLICE_REQUIRED",
    "KUEUE_SLICE_SIZE",
    "KUEUE_UNCONSTRAINED",
    "TASK_KEYS",
    "GangPolicy",
    "GangRequest",
    "PriorityRule",
    "build_gang",
    "kueue_topology",
    "per_node_limits",
    "pod_role",
    "scheduling_gates",
    "task_entry",
    "tier_level",
]

HOSTNAME = HOSTNAME_LEVEL
"""The per-node level (the placer's), which every Node carries as a label."""
KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
KUEUE_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
KUEUE_SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
KUEUE_SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"

TASK_KEYS = (
    "volcano.sh/task-spec",
    "training.kubeflow.org/replica-type",
    "jobset.sigs.k8s.io/replicatedjob-name",
    "leaderworkerset.sigs.k8s.io/worker-index",
)
"""Labels or annotations (looked up in this order) whose value names a pod's role."""


@dataclass(frozen=True)
class PriorityRule:
    """The priority a PodGroup declares for its pods, which they must all have (kube-scheduler
    refuses a gang whose pods' priority differs from its group's too)."""

    field: str
    """Where it is declared, named in the refusal."""
    class_name: str | None = None
    """The pods' ``spec.priorityClassName`` must be this."""
    value: int | None = None
    """The pods' ``spec.priority`` (0 when unset) must be this."""

    def refusal(self, pods: Sequence[Pod]) -> str | None:
        """Why ``pods`` break the rule (the first that does), or None."""
        for pod in pods:
            name = f"{pod.metadata.namespace}/{pod.metadata.name}"
            if self.class_name is not None and pod.spec.priority_class_name != self.class_name:
                return (
                    f"{self.field}: the group's priority class is {self.class_name!r} and pod "
                    f"{name}'s is {pod.spec.priority_class_name or ''!r}: a gang has one priority"
                )
            if self.value is not None and (pod.spec.priority or 0) != self.value:
                return (
                    f"{self.field}: the group's priority is {self.value} and pod {name}'s is "
                    f"{pod.spec.priority or 0}: a gang has one priority"
                )
        return None


@dataclass(frozen=True)
class GangPolicy:
    """What a PodGroup (or the lack of one) asks of a gang."""

    min_member: int = 1
    topology: Mapping[str, Any] | None = None
    """The contract's gang ``topology``; None: from the pods' annotations, else the default."""
    min_task_member: Mapping[str, int] = field(default_factory=dict)
    """The fewest pods of a task (by role), as Volcano's ``minTaskMember``."""
    priority: PriorityRule | None = None
    """The priority the group declares; None: the gang's priority is its pods'."""


@dataclass(frozen=True)
class GangRequest:
    """A gang for the placer, and which pods each of its tasks stands for (sorted by name)."""

    record: _placer.Gang
    """The gang as the placer's record (`crdkit.scheduling.gang_records`): what the scheduler
    places, built from the milli-units read off the pods."""
    pods: dict[str, list[Pod]]
    rules: dict[str, tuple[RankRule, ...]] = field(default_factory=dict)
    """Each task's one-rank-per-node rules (tasks without any left out): the limits are in
    the gang already; what placed pods they keep the task from is the caller's to add as
    ``avoid_nodes`` (see `crdkit.scheduling.rank_rules.RankRuleIndex`)."""

    @property
    def gang(self) -> dict[str, Any]:
        """The contract's gang (its requests as quantity strings), for people and for
        `Cluster.compile`; made on each access, not on the scheduler's path."""
        return contract(self.record)

    @property
    def milli(self) -> dict[str, dict[str, int]]:
        """Each task's requests in milli-units, as read off its pods."""
        return {task.name: task.requests for task in self.record.tasks}


def tier_level(levels: Sequence[str], tier: int, field_name: str) -> str:
    """The level label of Volcano tier ``tier`` (1 = the narrowest named level)."""
    named = [level for level in levels if level != HOSTNAME]
    if not named:
        raise ValueError(f"{field_name}: the scheduler has no topology levels to map tiers to")
    if tier < 1:
        raise ValueError(f"{field_name}: must be at least 1, got {tier}")
    return named[max(len(named) - tier, 0)]


def kueue_topology(
    pod: Pod, levels: Sequence[str]
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The topology and slice Kueue's annotations ask for on ``pod`` (None where absent).

    A level that is not one of ``levels`` raises ``ValueError`` naming the annotation."""
    annotations = pod.metadata.annotations
    topology: dict[str, Any] | None = None
    for key, mode in ((KUEUE_REQUIRED, "required"), (KUEUE_PREFERRED, "preferred")):
        if key in annotations:
            topology = {"mode": mode, "level": _known_level(annotations[key], levels, key)}
            break
    else:
        if annotations.get(KUEUE_UNCONSTRAINED, "").lower() == "true":
            topology = {"mode": "unconstrained"}
    slice_: dict[str, Any] | None = None
    if KUEUE_SLICE_REQUIRED in annotations:
        level = _known_level(annotations[KUEUE_SLICE_REQUIRED], levels, KUEUE_SLICE_REQUIRED)
        text = annotations.get(KUEUE_SLICE_SIZE, "")
        if not text.isdigit() or int(text) < 1:
            raise ValueError(
                f"metadata.annotations[{KUEUE_SLICE_SIZE}]: expected a positive integer "
                f"with {KUEUE_SLICE_REQUIRED}, got {text!r}"
            )
        slice_ = {"level": level, "size": int(text)}
    return topology, slice_


def _known_level(level: str, levels: Sequence[str], key: str) -> str:
    if level not in levels and level != HOSTNAME:
        raise ValueError(
            f"metadata.annotations[{key}]: level {level!r} is not one of the scheduler's "
            f"levels ({', '.join(levels)})"
        )
    return level


def pod_role(pod: Pod) -> str:
    """The role (task) a pod plays in its gang, by `TASK_KEYS`; ``pods`` without one."""
    for key in TASK_KEYS:
        value = pod.metadata.labels.get(key) or pod.metadata.annotations.get(key)
        if value:
            if key == "leaderworkerset.sigs.k8s.io/worker-index":
                return "leader" if value == "0" else "worker"
            return value.lower()
    return "pods"


def scheduling_gates(pod: Pod) -> list[str]:
    """The names of the pod's ``spec.schedulingGates`` (Kueue's admission gate, for one): a
    gated pod is not to be scheduled until every gate is removed."""
    gates = (pod.spec.model_extra or {}).get("schedulingGates") or []
    return [str(g.get("name", "")) if isinstance(g, dict) else str(g) for g in gates]


def _refuse_pod_rules(pod: Pod) -> None:
    """Hard rules about other pods (inter-pod affinity, anti-affinity, spread constraints that
    refuse to schedule) are not something the placer knows: refuse the pod with the field
    named rather than place it against its own rule. Preferred ones are only preferences, and
    are left out of the decision."""
    affinity = pod.spec.affinity or {}
    if (affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"):
        raise ValueError(
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
            "inter-pod affinity is not supported by crdkit's gang scheduler; use the "
            "gang's topology (PodGroup networkTopology or Kueue's annotations) instead"
        )
    extra = pod.spec.model_extra or {}
    for index, spread in enumerate(extra.get("topologySpreadConstraints") or []):
        if spread.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule":
            raise ValueError(
                f"spec.topologySpreadConstraints[{index}]: whenUnsatisfiable DoNotSchedule is "
                "not supported by crdkit's gang scheduler (ScheduleAnyway is, as a preference "
                "left out)"
            )


def _affinity_selector(pod: Pod) -> dict[str, str]:
    """Required node affinity that is a plain label match (one term, ``In`` one value), as a
    node selector; anything richer raises ``ValueError``: placing the pod while ignoring it
    would break the pod's own rule."""
    _refuse_pod_rules(pod)
    affinity = pod.spec.affinity
    if not affinity:
        return {}
    node_affinity = affinity.get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return {}
    terms = required.get("nodeSelectorTerms") or []
    field_name = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    if len(terms) != 1 or terms[0].get("matchFields"):
        raise ValueError(f"{field_name}: only one term of matchExpressions is supported")
    selector: dict[str, str] = {}
    for expression in terms[0].get("matchExpressions") or []:
        values = expression.get("values") or []
        if expression.get("operator") != "In" or len(values) != 1:
            raise ValueError(
                f"{field_name}: only `In` with one value is supported, got "
                f"{expression.get('key')} {expression.get('operator')} {values}"
            )
        selector[expression["key"]] = values[0]
    return selector


def task_entry(pod: Pod, levels: Sequence[str]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The placer task a pod belongs to (its requests, node selector, tolerations and slice,
    without name or counts), and a key equal for pods of one task."""
    key, entry, milli = _task_entry(pod, levels)
    return key, {"requests": requests_as_quantities(milli), **entry}


def _task_entry(
    pod: Pod, levels: Sequence[str], requests_of: Callable[[Pod], Mapping[str, int]] | None = None
) -> tuple[tuple[Any, ...], dict[str, Any], dict[str, int]]:
    """`task_entry` without its requests, and the requests in milli-units (the pod's rank
    rules are the key's last element)."""
    milli = dict(pod_requests(pod) if requests_of is None else requests_of(pod))
    selector = {**pod.spec.node_selector, **_affinity_selector(pod)}
    tolerations = [
        t.model_dump(
            by_alias=True, exclude_none=True, include={"key", "operator", "value", "effect"}
        )
        for t in pod.spec.tolerations
    ]
    _, slice_ = kueue_topology(pod, levels)
    entry: dict[str, Any] = {}
    if selector:
        entry["nodeSelector"] = selector
    if tolerations:
        entry["tolerations"] = tolerations
    if slice_ is not None:
        entry["slice"] = slice_
    key = (
        pod_role(pod),
        tuple(sorted(milli.items())),
        tuple(sorted(selector.items())),
        tuple(tuple(sorted(t.items())) for t in tolerations),
        None if slice_ is None else (slice_["level"], slice_["size"]),
        rank_rules(pod),
    )
    return key, entry, milli


def build_gang(
    name: str,
    pending: Sequence[Pod],
    *,
    needed: int,
    policy: GangPolicy,
    levels: Sequence[str],
    default_topology: Mapping[str, Any] | None = None,
    bound_by_role: Mapping[str, int] | None = None,
    priority: int = 0,
    requests_of: Callable[[Pod], Mapping[str, int]] | None = None,
) -> GangRequest:
    """The gang for ``pending`` (the group's pods waiting to be placed); see the module
    docstring. ``needed`` (at least 1, at most ``len(pending)``) is how many must be placed
    together; ``bound_by_role`` counts the pods of each role already bound. ``requests_of``
    reads a pod's requests in milli-units (a scheduler passes its mirror's, which parsed each
    pod once as it arrived; default: parse them here). Bad input (an
    unknown level, an unsupported affinity) raises ``ValueError`` naming the pod and field."""
    if not pending:
        raise ValueError("pending: a gang needs at least one pod")
    if not 1 <= needed <= len(pending):
        raise ValueError(f"needed: must be within 1..{len(pending)}, got {needed}")
    tasks: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, int], list[Pod]]] = {}
    topology: Mapping[str, Any] | None = policy.topology
    for pod in sorted(pending, key=lambda p: p.metadata.name or ""):
        where = f"pod {pod.metadata.namespace}/{pod.metadata.name}"
        try:
            key, entry, milli = _task_entry(pod, levels, requests_of)
            if topology is None:
                topology = kueue_topology(pod, levels)[0]
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
        tasks.setdefault(key, (entry, milli, []))[2].append(pod)
    entries: list[dict[str, Any]] = []
    members: dict[str, list[Pod]] = {}
    requests: dict[str, dict[str, int]] = {}
    roles: dict[str, int] = {}
    for key, (entry, milli, pods) in tasks.items():
        role = key[0]
        roles[role] = roles.get(role, 0) + 1
        task_name = role if roles[role] == 1 else f"{role}-{roles[role]}"
        entries.append({"name": task_name, "replicas": len(pods), **entry, "_role": role})
        members[task_name] = pods
        requests[task_name] = milli
    _set_minimums(entries, needed, policy.min_task_member, bound_by_role or {})
    rules = {task: key[-1] for task, key in zip(members, tasks, strict=True) if key[-1]}
    gang_limit = per_node_limits(entries, members, rules)
    chosen = topology if topology is not None else default_topology
    try:
        record = gang_record(
            name,
            priority,
            chosen,
            entries,
            requests,
            levels,
            max_per_node=1 if gang_limit else None,
        )
    except ValueError as error:
        raise ValueError(f"gang {name}: {error}") from None
    return GangRequest(record, members, rules)


def per_node_limits(
    entries: list[dict[str, Any]],
    members: Mapping[str, Sequence[Pod]],
    rules: Mapping[str, tuple[RankRule, ...]],
) -> bool:
    """Set ``maxPerNode: 1`` on each task whose rank rule matches just its own pods; True
    when a rule matches every pending pod of the gang (the gang's limit). A rule that matches
    part of the gang other than one whole task is refused, naming the pod and the field."""
    everyone = [pod for pods in members.values() for pod in pods]
    gang_limit = False
    for entry in entries:
        task = entry["name"]
        for rule in rules.get(task, ()):
            matched = {id(pod) for pod in everyone if rule.matches(pod)}
            if len(matched) == len(everyone):
                gang_limit = True
            elif matched == {id(pod) for pod in members[task]}:
                entry["maxPerNode"] = 1
            else:
                first = members[task][0]
                raise ValueError(
                    f"pod {first.metadata.namespace}/{first.metadata.name}: "
                    f"{RANK_RULES_FIELD}: its labelSelector matches {len(matched)} of the "
                    f"gang's {len(everyone)} pending pods, not all of them nor just the "
                    f"{len(members[task])} of task {task}: one pod per node is kept among a "
                    "whole gang or one task (the pods of one role with the same requests)"
                )
    return gang_limit


def _set_minimums(
    entries: list[dict[str, Any]],
    needed: int,
    min_task_member: Mapping[str, int],
    bound_by_role: Mapping[str, int],
) -> None:
    total = sum(entry["replicas"] for entry in entries)
    if needed >= total:
        return  # every pod is needed: minAvailable defaults to replicas
    budget = needed
    for entry in entries:
        floor = max(
            min_task_member.get(entry["_role"], 0) - bound_by_role.get(entry["_role"], 0), 1
        )
        entry["minAvailable"] = min(entry["replicas"], floor)
        budget -= entry["minAvailable"]
    for entry in entries:
        if budget <= 0:
            break
        extra = min(entry["replicas"] - entry["minAvailable"], budget)
        entry["minAvailable"] += extra
        budget -= extra
    for entry in entries:
        size = entry.get("slice", {}).get("size", 1)
        if entry["minAvailable"] % size:  # a slice is placed whole or not at all
            entry["minAvailable"] = min(entry["replicas"], -(-entry["minAvailable"] // size) * size)
