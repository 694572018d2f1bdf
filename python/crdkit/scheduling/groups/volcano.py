"""Volcano's PodGroup (``scheduling.volcano.sh/v1beta1``, volcano-sh/apis
``pkg/apis/scheduling/v1beta1/types.go``), typed, and its adapter. A pod joins it with the
*annotation* ``scheduling.k8s.io/group-name``, the one key Volcano's scheduler and PodGroup
controller read; ``scheduling.volcano.sh/group-name`` is only read as a fallback by a device
plugin, and so here. The gang needs ``minMember`` pods and each task's ``minTaskMember``;
``networkTopology`` is the gang's topology (tier 1 being the last of the scheduler's levels).
Volcano's CRD has no status subresource: the status is written with the object.

The phase it is given, from the counts of its pods:

- ``Pending``: the gang is not placed; ``Running``: at least ``minMember`` pods are bound (the
  Volcano scheduler moves a group to Running once its minimum is allocated);
- ``Completed``: every pod has ended; ``Unknown``: some pods are bound but fewer than
  ``minMember`` (a gang that lost members).

The CRDs are the upstream projects' own, so these classes are plain ``KubernetesObject`` kinds
(clients can address them) rather than ``CustomResource`` classes that ``crdkit gen-crd`` would
write a CRD for. Every model is open: fields this module does not declare (a newer upstream
field) survive a read-modify-write. Optional fields default to None, not to empty containers, so
writing an object back adds no field it did not have. Phases are typed as plain strings on the
models, so a phase a newer upstream adds does not make reading fail; the known ones are the
``*_PHASES`` constants.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from pydantic import Field

from crdkit.resources import KubernetesObject, OpenModel, Quantity, Time
from crdkit.scheduling.gangs import GangPolicy, tier_level
from crdkit.scheduling.groups.api import (
    CRD_HINT,
    GroupApiName,
    GroupCounts,
    Waiting,
    counts_status,
    gang_minimum,
    now_text,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.resources import Pod
    from crdkit.runtime.reconciler import RbacRule

__all__ = [
    "VOLCANO_CONDITION_TYPES",
    "VOLCANO_GROUP",
    "VOLCANO_GROUP_NAME_ANNOTATION",
    "VOLCANO_LEGACY_GROUP_NAME_ANNOTATION",
    "VOLCANO_PHASES",
    "VOLCANO_VERSION",
    "NetworkTopologyMode",
    "VolcanoApi",
    "VolcanoConditionType",
    "VolcanoNetworkTopology",
    "VolcanoPhase",
    "VolcanoPodGroup",
    "VolcanoPodGroupCondition",
    "VolcanoPodGroupSpec",
    "VolcanoPodGroupStatus",
    "VolcanoSubGroupPolicy",
    "volcano_phase",
]

VOLCANO_GROUP = "scheduling.volcano.sh"
VOLCANO_VERSION = "v1beta1"
VOLCANO_GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
"""The annotation naming a pod's PodGroup (upstream ``KubeGroupNameAnnotationKey``)."""
VOLCANO_LEGACY_GROUP_NAME_ANNOTATION = "scheduling.volcano.sh/group-name"
"""Upstream ``VolcanoGroupNameAnnotationKey``: read only when the first annotation is absent."""

VolcanoPhase = Literal["Pending", "Running", "Unknown", "Inqueue", "Completed"]
VOLCANO_PHASES: frozenset[str] = frozenset(get_args(VolcanoPhase))
VolcanoConditionType = Literal["Unschedulable", "Scheduled"]
VOLCANO_CONDITION_TYPES: frozenset[str] = frozenset(get_args(VolcanoConditionType))
NetworkTopologyMode = Literal["hard", "soft"]


class VolcanoNetworkTopology(OpenModel):
    """How far in the network the group may spread (the CRD's enum and minimum, checked here
    too so a bad object fails where it is built, not at the apiserver)."""

    mode: NetworkTopologyMode | None = None
    """``hard``: stay within the tier; ``soft``: prefer to. The CRD defaults it to ``hard``."""
    highest_tier_allowed: int | None = Field(default=None, ge=0)
    highest_tier_name: str | None = Field(default=None, max_length=253)
    """The tier by name instead of number; upstream refuses both at once."""


class VolcanoSubGroupPolicy(OpenModel):
    """Gang and topology rules for a subset of the group's pods (``SubGroupPolicySpec``)."""

    name: str | None = None
    network_topology: VolcanoNetworkTopology | None = None
    sub_group_size: int | None = Field(default=None, ge=1)
    min_sub_groups: int | None = Field(default=None, ge=0)
    label_selector: dict[str, Any] | None = None
    """A ``metav1.LabelSelector``, kept as the JSON it is."""
    match_label_keys: list[str] | None = None


class VolcanoPodGroupSpec(OpenModel):
    min_member: int | None = Field(default=None, ge=0)
    min_task_member: dict[str, int] | None = None
    """The fewest pods of each task (by task name) the group needs."""
    queue: str | None = None
    priority_class_name: str | None = None
    min_resources: dict[str, Quantity] | None = None
    network_topology: VolcanoNetworkTopology | None = None
    sub_group_policy: list[VolcanoSubGroupPolicy] | None = None


class VolcanoPodGroupCondition(OpenModel):
    type: str | None = None
    """One of ``VOLCANO_CONDITION_TYPES``."""
    status: str | None = None
    """``True``, ``False`` or ``Unknown``."""
    transition_id: str | None = Field(default=None, alias="transitionID")
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class VolcanoPodGroupStatus(OpenModel):
    phase: str | None = None
    """One of ``VOLCANO_PHASES`` (or a phase of another release)."""
    conditions: list[VolcanoPodGroupCondition] | None = None
    running: int | None = None
    succeeded: int | None = None
    failed: int | None = None


class VolcanoPodGroup(
    KubernetesObject,
    group=VOLCANO_GROUP,
    version=VOLCANO_VERSION,
    kind="PodGroup",
    plural="podgroups",
):
    """Volcano's CRD has no status subresource: status is written with the object itself."""

    spec: VolcanoPodGroupSpec = Field(default_factory=VolcanoPodGroupSpec)
    status: VolcanoPodGroupStatus | None = None


def volcano_phase(min_member: int, counts: GroupCounts) -> str:
    """The Volcano PodGroup phase; see the module docstring."""
    if counts.pods and counts.ended == counts.pods:
        return "Completed"
    if counts.bound + counts.succeeded >= min_member:
        return "Running"
    if counts.bound:
        return "Unknown"
    return "Pending"


class VolcanoApi:
    """Volcano's PodGroup: ``minTaskMember`` per task, and ``networkTopology`` as the gang's
    topology (tier 1 being the last of the scheduler's levels)."""

    name: ClassVar[GroupApiName] = "volcano"
    model: ClassVar[type[KubernetesObject] | None] = VolcanoPodGroup
    rbac: ClassVar[tuple[RbacRule, ...]] = (
        ("scheduling.volcano.sh", "podgroups", ("get", "list", "watch", "patch", "update")),
    )
    status_subresource: ClassVar[bool] = False
    crd_file: ClassVar[str | None] = "volcano_scheduling.volcano.sh_podgroups.yaml"
    unserved_hint: ClassVar[str] = CRD_HINT
    companion: ClassVar[type[KubernetesObject] | None] = None

    def member_of(self, pod: Pod) -> str | None:
        annotations = pod.metadata.annotations
        name = annotations.get(VOLCANO_GROUP_NAME_ANNOTATION) or annotations.get(
            VOLCANO_LEGACY_GROUP_NAME_ANNOTATION
        )
        return str(name) if name else None

    def companion_of(self, podgroup: Any) -> str | None:
        return None

    def policy(self, podgroup: Any, levels: Sequence[str], companion: Any = None) -> GangPolicy:
        spec = podgroup.spec
        return GangPolicy(
            min_member=gang_minimum(podgroup),
            topology=self._topology(spec.network_topology, levels),
            min_task_member={k.lower(): v for k, v in (spec.min_task_member or {}).items()},
        )

    def _topology(self, network: Any, levels: Sequence[str]) -> dict[str, Any] | None:
        if network is None:
            return None
        field_name = "spec.networkTopology"
        if network.mode == "soft":
            return {"mode": "preferred", "level": tier_level(levels, 1, field_name)}
        if network.highest_tier_name:
            if network.highest_tier_name not in levels:
                raise ValueError(
                    f"{field_name}.highestTierName: {network.highest_tier_name!r} is not one of "
                    f"the scheduler's levels ({', '.join(levels)})"
                )
            return {"mode": "required", "level": network.highest_tier_name}
        tier = network.highest_tier_allowed if network.highest_tier_allowed is not None else 1
        return {
            "mode": "required",
            "level": tier_level(levels, tier, f"{field_name}.highestTierAllowed"),
        }

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        min_member = gang_minimum(podgroup)
        status: dict[str, Any] = {"phase": volcano_phase(min_member, counts)}
        status.update(counts_status(counts))
        status["conditions"] = self._conditions(podgroup, counts, min_member, waiting)
        return status

    def _conditions(
        self, podgroup: Any, counts: GroupCounts, min_member: int, waiting: Waiting | None
    ) -> list[dict[str, Any]]:
        current = {c.type: c for c in (podgroup.status.conditions if podgroup.status else [])}
        if counts.bound + counts.succeeded >= min_member:
            wanted = ("Scheduled", "True", "tasks in gang are ready to be scheduled", "")
        elif waiting is not None:
            wanted = ("Unschedulable", "True", waiting[0], waiting[1])
        elif "Unschedulable" in current:
            old = current["Unschedulable"]
            wanted = ("Unschedulable", old.status, old.reason or "", old.message or "")
        else:
            return [
                c.model_dump(by_alias=True, exclude_none=True, mode="json")
                for c in current.values()
            ]
        type_, status, reason, message = wanted
        kept = [
            c.model_dump(by_alias=True, exclude_none=True, mode="json")
            for t, c in current.items()
            if t not in ("Scheduled", "Unschedulable")
        ]
        old = current.get(type_)
        stamp = (
            old.last_transition_time.isoformat().replace("+00:00", "Z")
            if old is not None and old.status == status and old.last_transition_time
            else now_text()
        )
        return [
            *kept,
            {
                "type": type_,
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": stamp,
            },
        ]
