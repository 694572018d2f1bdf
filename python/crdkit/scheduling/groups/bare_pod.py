"""A pod in no PodGroup: a gang of one, with nothing to watch or write but the pod."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from crdkit.scheduling.gangs import GangPolicy

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from crdkit.resources import KubernetesObject
    from crdkit.runtime.reconciler import RbacRule
    from crdkit.scheduling.groups.api import GroupApiName, GroupCounts, Waiting

__all__ = ["BarePodApi"]


class BarePodApi:
    """A pod in no PodGroup: a gang of one, with nothing to watch or write but the pod."""

    name: ClassVar[GroupApiName] = "pod"
    model: ClassVar[type[KubernetesObject] | None] = None
    rbac: ClassVar[tuple[RbacRule, ...]] = ()
    status_subresource: ClassVar[bool] = False
    crd_file: ClassVar[str | None] = None

    def member_of(self, labels: Mapping[str, Any], annotations: Mapping[str, Any]) -> str | None:
        return None  # a pod of no group is its own gang: the scheduler names it

    def policy(self, podgroup: Any, levels: Sequence[str]) -> GangPolicy:
        return GangPolicy()

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        raise TypeError("a bare pod has no PodGroup to write a status to")
