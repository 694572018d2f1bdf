"""The two PodGroup kinds gang schedulers use, typed, and which one a pod belongs to.

- ``CoschedulingPodGroup``: ``scheduling.x-k8s.io/v1alpha1`` PodGroup of the coscheduling plugin
  of kubernetes-sigs/scheduler-plugins (``apis/scheduling/v1alpha1/types.go``). A pod joins it
  with the *label* ``scheduling.x-k8s.io/pod-group``.
- ``VolcanoPodGroup``: ``scheduling.volcano.sh/v1beta1`` PodGroup of Volcano (volcano-sh/apis,
  ``pkg/apis/scheduling/v1beta1/types.go``). A pod joins it with the *annotation*
  ``scheduling.k8s.io/group-name``, the one key Volcano's scheduler and PodGroup controller read;
  ``scheduling.volcano.sh/group-name`` is only read as a fallback by a device plugin, and so here.

The CRDs are the upstream projects' own, so these classes are plain ``KubernetesObject`` kinds
(clients can address them) rather than ``CustomResource`` classes that ``crdkit gen-crd`` would
write a CRD for. Every model is open: fields this module does not declare (a newer upstream
field, the ``status.scheduled`` older coscheduling releases wrote) survive a read-modify-write.
Optional fields default to None, not to empty containers, so writing an object back adds no
field it did not have. Phases are typed as plain strings on the models, so a phase a newer
upstream adds does not make reading fail; the known ones are the ``*_PHASES`` constants.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import Field

from crdkit.resources import KubernetesObject, OpenModel, Pod, Quantity, Time

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "COSCHEDULING_GROUP",
    "COSCHEDULING_PHASES",
    "COSCHEDULING_POD_GROUP_LABEL",
    "COSCHEDULING_VERSION",
    "VOLCANO_CONDITION_TYPES",
    "VOLCANO_GROUP",
    "VOLCANO_GROUP_NAME_ANNOTATION",
    "VOLCANO_LEGACY_GROUP_NAME_ANNOTATION",
    "VOLCANO_PHASES",
    "VOLCANO_VERSION",
    "CoschedulingPhase",
    "CoschedulingPodGroup",
    "CoschedulingPodGroupSpec",
    "CoschedulingPodGroupStatus",
    "NetworkTopologyMode",
    "PodGroupKind",
    "VolcanoConditionType",
    "VolcanoNetworkTopology",
    "VolcanoPhase",
    "VolcanoPodGroup",
    "VolcanoPodGroupCondition",
    "VolcanoPodGroupSpec",
    "VolcanoPodGroupStatus",
    "VolcanoSubGroupPolicy",
    "pod_group_of",
]

# -- scheduler-plugins' coscheduling PodGroup --------------------------------------------------

COSCHEDULING_GROUP = "scheduling.x-k8s.io"
COSCHEDULING_VERSION = "v1alpha1"
COSCHEDULING_POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
"""The label naming a pod's PodGroup (upstream ``PodGroupLabel``)."""

CoschedulingPhase = Literal["Pending", "Running", "Scheduling", "Unknown", "Finished", "Failed"]
"""The phases of the current upstream types. ``PreScheduling`` and ``Scheduled`` were removed
upstream (scheduler-plugins #574) and may still be read from old objects."""
COSCHEDULING_PHASES: frozenset[str] = frozenset(get_args(CoschedulingPhase))


class CoschedulingPodGroupSpec(OpenModel):
    min_member: int | None = Field(default=None, ge=1)
    """The fewest pods that must be placeable together before any of them is bound."""
    min_resources: dict[str, Quantity] | None = None
    """The least resources the whole group needs; the plugin refuses a group without them."""
    schedule_timeout_seconds: int | None = None
    """How long pods of the group wait at Permit for the rest of the group."""


class CoschedulingPodGroupStatus(OpenModel):
    phase: str | None = None
    """One of ``COSCHEDULING_PHASES`` (or a phase of another release)."""
    occupied_by: str | None = None
    """The UID of the workload (Deployment, StatefulSet, ...) the group belongs to."""
    running: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    schedule_start_time: Time | None = None


class CoschedulingPodGroup(
    KubernetesObject,
    group=COSCHEDULING_GROUP,
    version=COSCHEDULING_VERSION,
    kind="PodGroup",
    plural="podgroups",
):
    spec: CoschedulingPodGroupSpec = Field(default_factory=CoschedulingPodGroupSpec)
    status: CoschedulingPodGroupStatus | None = None


# -- Volcano's PodGroup ------------------------------------------------------------------------

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


# -- membership --------------------------------------------------------------------------------

PodGroupKind = Literal["coscheduling", "volcano"]


def pod_group_of(pod: Pod | Mapping[str, Any]) -> tuple[PodGroupKind, str] | None:
    """Which PodGroup ``pod`` (a ``Pod`` or its JSON) joins, by its label or annotation.

    The PodGroup is in the pod's namespace. The coscheduling label wins when a pod carries
    both, as the coscheduling plugin would hold it back for its group whatever the annotation
    says; an empty name means no group, as upstream reads it.
    """
    if isinstance(pod, Pod):
        labels: Mapping[str, Any] = pod.metadata.labels
        annotations: Mapping[str, Any] = pod.metadata.annotations
    else:
        metadata = pod.get("metadata") or {}
        labels = metadata.get("labels") or {}
        annotations = metadata.get("annotations") or {}
    name = labels.get(COSCHEDULING_POD_GROUP_LABEL)
    if name:
        return ("coscheduling", str(name))
    name = annotations.get(VOLCANO_GROUP_NAME_ANNOTATION) or annotations.get(
        VOLCANO_LEGACY_GROUP_NAME_ANNOTATION
    )
    if name:
        return ("volcano", str(name))
    return None
