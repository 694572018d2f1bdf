"""The gang APIs a ``GangScheduler`` serves, one adapter each behind :class:`GroupApi`.

=================  =============================================  ============================
API                what makes a gang                               status written
=================  =============================================  ============================
``coscheduling``   scheduler-plugins' PodGroup                     ``status`` subresource:
                   (``scheduling.x-k8s.io/v1alpha1``): its         phase, counts,
                   ``minMember``                                   ``scheduleStartTime``
``volcano``        Volcano's PodGroup (``scheduling.volcano.sh``)  the object (its CRD has no
                   ``minMember``, ``minTaskMember``,               status subresource): phase,
                   ``networkTopology``                             counts, conditions
``pod``            a pod in no PodGroup: a gang of one             none
=================  =============================================  ============================

The scheduler asks its adapter, never the API's name, what a group's policy is and what its
status should say; adding an API is adding an adapter here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from crdkit.resources import resource_info
from crdkit.scheduling.gangs import GangPolicy, tier_level
from crdkit.scheduling.group_status import GroupCounts, coscheduling_phase, volcano_phase
from crdkit.scheduling.podgroups import CoschedulingPodGroup, VolcanoPodGroup

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.resources import KubernetesObject
    from crdkit.runtime.reconciler import RbacRule

__all__ = [
    "GROUP_APIS",
    "POD_GROUP_APIS",
    "BarePodApi",
    "CoschedulingApi",
    "GroupApi",
    "GroupApiName",
    "PodGroupApi",
    "VolcanoApi",
    "group_api",
    "group_version",
    "now_text",
]

PodGroupApi = Literal["coscheduling", "volcano"]
"""The PodGroup APIs: the ones with an object of their own to watch and to write status to."""
GroupApiName = Literal["coscheduling", "volcano", "pod"]
"""Every kind of gang, ``pod`` being a pod in no PodGroup."""

Waiting = tuple[str, str]
"""Why a gang waits: a reason and a message."""


class GroupApi(Protocol):
    """What the scheduler needs of one gang API."""

    name: ClassVar[GroupApiName]
    model: ClassVar[type[KubernetesObject] | None]
    """The PodGroup kind to watch; ``None`` for bare pods."""
    rbac: ClassVar[tuple[RbacRule, ...]]
    status_subresource: ClassVar[bool]
    """Whether the status is written through the ``status`` subresource."""

    def policy(self, podgroup: Any, levels: Sequence[str]) -> GangPolicy:
        """The gang's policy from its PodGroup (``ValueError`` naming a bad field)."""
        ...

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        """The PodGroup's ``status`` for these pod counts (``binding``: a bind is under way;
        ``waiting``: why the gang waits, if it was just told)."""
        ...


def _min_member(podgroup: Any) -> int:
    return max(podgroup.spec.min_member or 0, 1)


def _counts(counts: GroupCounts) -> dict[str, Any]:
    return {"running": counts.running, "succeeded": counts.succeeded, "failed": counts.failed}


def now_text() -> str:
    """The current time as the apiserver writes it (RFC 3339, seconds, ``Z``)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class CoschedulingApi:
    """scheduler-plugins' coscheduling PodGroup."""

    name: ClassVar[GroupApiName] = "coscheduling"
    model: ClassVar[type[KubernetesObject] | None] = CoschedulingPodGroup
    rbac: ClassVar[tuple[RbacRule, ...]] = (
        ("scheduling.x-k8s.io", "podgroups", ("get", "list", "watch")),
        ("scheduling.x-k8s.io", "podgroups/status", ("get", "patch", "update")),
    )
    status_subresource: ClassVar[bool] = True

    def policy(self, podgroup: Any, levels: Sequence[str]) -> GangPolicy:
        return GangPolicy(min_member=_min_member(podgroup))

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        status = {"phase": coscheduling_phase(_min_member(podgroup), counts, binding)}
        status.update(_counts(counts))
        if podgroup.status is None or podgroup.status.schedule_start_time is None:
            status["scheduleStartTime"] = now_text()
        return status


class VolcanoApi:
    """Volcano's PodGroup: ``minTaskMember`` per task, and ``networkTopology`` as the gang's
    topology (tier 1 being the last of the scheduler's levels)."""

    name: ClassVar[GroupApiName] = "volcano"
    model: ClassVar[type[KubernetesObject] | None] = VolcanoPodGroup
    rbac: ClassVar[tuple[RbacRule, ...]] = (
        ("scheduling.volcano.sh", "podgroups", ("get", "list", "watch", "patch", "update")),
    )
    status_subresource: ClassVar[bool] = False

    def policy(self, podgroup: Any, levels: Sequence[str]) -> GangPolicy:
        spec = podgroup.spec
        return GangPolicy(
            min_member=_min_member(podgroup),
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
        min_member = _min_member(podgroup)
        status: dict[str, Any] = {"phase": volcano_phase(min_member, counts)}
        status.update(_counts(counts))
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


class BarePodApi:
    """A pod in no PodGroup: a gang of one, with nothing to watch or write but the pod."""

    name: ClassVar[GroupApiName] = "pod"
    model: ClassVar[type[KubernetesObject] | None] = None
    rbac: ClassVar[tuple[RbacRule, ...]] = ()
    status_subresource: ClassVar[bool] = False

    def policy(self, podgroup: Any, levels: Sequence[str]) -> GangPolicy:
        return GangPolicy()

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        raise TypeError("a bare pod has no PodGroup to write a status to")


GROUP_APIS: dict[str, GroupApi] = {
    api.name: api for api in (CoschedulingApi(), VolcanoApi(), BarePodApi())
}
"""Every gang API by name."""

POD_GROUP_APIS: tuple[PodGroupApi, ...] = ("coscheduling", "volcano")
"""The names of the APIs with a PodGroup object, in the order they are listed to users."""


def group_api(name: str, *, field: str = "pod_groups") -> GroupApi:
    """The adapter of the API ``name``; ``ValueError`` naming ``field`` for an unknown one."""
    api = GROUP_APIS.get(name)
    if api is None or api.model is None:
        raise ValueError(f"{field}: unknown PodGroup API {name!r} ({', '.join(POD_GROUP_APIS)})")
    return api


def group_version(api: GroupApi) -> tuple[str, str]:
    """The API group and version of ``api``'s PodGroup kind."""
    assert api.model is not None
    info = resource_info(api.model)
    return info.group, info.version
