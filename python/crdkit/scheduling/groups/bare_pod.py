"""A pod in no PodGroup: a gang of one, with nothing to watch or write but the pod."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from crdkit.scheduling.gangs import GangPolicy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.resources import KubernetesObject, Pod
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
    unserved_hint: ClassVar[str] = ""
    companion: ClassVar[type[KubernetesObject] | None] = None

    def member_of(self, pod: Pod) -> str | None:
        return None  # a pod of no group is its own gang: the scheduler names it

    def companion_of(self, podgroup: Any) -> str | None:
        return None

    def policy(self, podgroup: Any, levels: Sequence[str], companion: Any = None) -> GangPolicy:
        return GangPolicy()

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        raise TypeError("a bare pod has no PodGroup to write a status to")
