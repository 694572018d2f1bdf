"""scheduler-plugins' coscheduling PodGroup (``scheduling.x-k8s.io/v1alpha1``,
kubernetes-sigs/scheduler-plugins ``apis/scheduling/v1alpha1/types.go``), typed, and its
adapter. A pod joins it with the *label* ``scheduling.x-k8s.io/pod-group``; the gang needs the
group's ``minMember`` pods. The status is written through the ``status`` subresource.

The phase it is given, from the counts of its pods (the phases of the current upstream types,
``Scheduled`` and ``PreScheduling`` having been dropped upstream):

- ``Pending``: fewer than ``minMember`` pods are bound and none is being bound;
- ``Scheduling``: this scheduler is binding the gang, or ``minMember`` pods are bound but fewer
  are running;
- ``Running``: at least ``minMember`` pods are running (or have succeeded);
- ``Finished``: at least ``minMember`` pods have succeeded and none is left running;
- ``Failed``: a pod failed and fewer than ``minMember`` can still run or have succeeded.

The model is open (see `crdkit.scheduling.groups.volcano` for the rules both follow).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from pydantic import Field

from crdkit.resources import KubernetesObject, OpenModel, Quantity, Time
from crdkit.scheduling.gangs import GangPolicy
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
    "COSCHEDULING_GROUP",
    "COSCHEDULING_PHASES",
    "COSCHEDULING_POD_GROUP_LABEL",
    "COSCHEDULING_VERSION",
    "CoschedulingApi",
    "CoschedulingPhase",
    "CoschedulingPodGroup",
    "CoschedulingPodGroupSpec",
    "CoschedulingPodGroupStatus",
    "coscheduling_phase",
]

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


def coscheduling_phase(min_member: int, counts: GroupCounts, binding: bool) -> str:
    """The coscheduling PodGroup phase; see the module docstring."""
    live = counts.pods - counts.ended
    if counts.succeeded >= min_member and counts.running == 0:
        return "Finished"
    if counts.failed and live + counts.succeeded < min_member:
        return "Failed"
    if counts.running + counts.succeeded >= min_member:
        return "Running"
    if binding or counts.bound >= min_member:
        return "Scheduling"
    return "Pending"


class CoschedulingApi:
    """scheduler-plugins' coscheduling PodGroup."""

    name: ClassVar[GroupApiName] = "coscheduling"
    model: ClassVar[type[KubernetesObject] | None] = CoschedulingPodGroup
    rbac: ClassVar[tuple[RbacRule, ...]] = (
        ("scheduling.x-k8s.io", "podgroups", ("get", "list", "watch")),
        ("scheduling.x-k8s.io", "podgroups/status", ("get", "patch", "update")),
    )
    status_subresource: ClassVar[bool] = True
    crd_file: ClassVar[str | None] = "scheduler-plugins_scheduling.x-k8s.io_podgroups.yaml"
    unserved_hint: ClassVar[str] = CRD_HINT
    companion: ClassVar[type[KubernetesObject] | None] = None

    def member_of(self, pod: Pod) -> str | None:
        name = pod.metadata.labels.get(COSCHEDULING_POD_GROUP_LABEL)
        return str(name) if name else None

    def companion_of(self, podgroup: Any) -> str | None:
        return None

    def policy(self, podgroup: Any, levels: Sequence[str], companion: Any = None) -> GangPolicy:
        return GangPolicy(min_member=gang_minimum(podgroup))

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        status = {"phase": coscheduling_phase(gang_minimum(podgroup), counts, binding)}
        status.update(counts_status(counts))
        if podgroup.status is None or podgroup.status.schedule_start_time is None:
            status["scheduleStartTime"] = now_text()
        return status
