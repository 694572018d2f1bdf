"""What the scheduler needs of one gang API (`GroupApi`), and what every adapter shares.

A gang API says which pods form a gang (`GroupApi.member_of`), what its PodGroup asks of the
gang (`GroupApi.policy`), and what status the PodGroup is given (`GroupApi.status`). The
scheduler asks the adapter, never the API's name.

A PodGroup may take part of its policy from another object (Kubernetes' PodGroup from the
template of the Workload it names): the adapter's `GroupApi.companion` kind, which the
scheduler watches beside the PodGroups, and `GroupApi.companion_of` names the one a PodGroup
reads; `GroupApi.policy` gets it (None when there is none, or it does not exist).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.resources import KubernetesObject, Pod
    from crdkit.runtime.reconciler import RbacRule
    from crdkit.scheduling.gangs import GangPolicy

__all__ = ["GroupApi", "GroupApiName", "GroupCounts", "PodGroupApi", "Waiting", "now_text"]

PodGroupApi = Literal["coscheduling", "volcano", "kubernetes"]
"""The PodGroup APIs: the ones with an object of their own to watch and to write status to."""
GroupApiName = Literal["coscheduling", "volcano", "kubernetes", "pod"]
"""Every kind of gang, ``pod`` being a pod in no PodGroup."""

Waiting = tuple[str, str]
"""Why a gang waits: a reason and a message."""


@dataclass(frozen=True)
class GroupCounts:
    """How the pods of one group stand."""

    pods: int = 0
    bound: int = 0
    """Bound (or being bound) and not ended."""
    running: int = 0
    succeeded: int = 0
    failed: int = 0

    @property
    def ended(self) -> int:
        return self.succeeded + self.failed


class GroupApi(Protocol):
    """What the scheduler needs of one gang API."""

    name: ClassVar[GroupApiName]
    model: ClassVar[type[KubernetesObject] | None]
    """The PodGroup kind to watch; ``None`` for bare pods."""
    rbac: ClassVar[tuple[RbacRule, ...]]
    status_subresource: ClassVar[bool]
    """Whether the status is written through the ``status`` subresource."""
    crd_file: ClassVar[str | None]
    """The file of the PodGroup's upstream CRD in ``crdkit/scheduling/groups/crds``; None for
    an API built into kube-apiserver (or bare pods)."""
    unserved_hint: ClassVar[str]
    """What a cluster that does not serve the API needs, said when it is asked for."""
    companion: ClassVar[type[KubernetesObject] | None]
    """A kind a PodGroup may take part of its policy from (watched beside the PodGroups)."""

    def member_of(self, pod: Pod) -> str | None:
        """The name of the PodGroup of this API ``pod`` joins (in its namespace), or None."""
        ...

    def companion_of(self, podgroup: Any) -> str | None:
        """The name of the `companion` object ``podgroup`` reads (in its namespace), or None."""
        ...

    def policy(self, podgroup: Any, levels: Sequence[str], companion: Any = None) -> GangPolicy:
        """The gang's policy from its PodGroup and, when it names one, its `companion` object
        (None if that does not exist): ``ValueError`` naming a bad field."""
        ...

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        """The PodGroup's ``status`` for these pod counts (``binding``: a bind is under way;
        ``waiting``: why the gang waits, if it was just told)."""
        ...


CRD_HINT = "install its CRD"
"""`GroupApi.unserved_hint` of an API whose PodGroup is a CRD crdkit ships."""


def gang_minimum(podgroup: Any) -> int:
    return max(podgroup.spec.min_member or 0, 1)


def counts_status(counts: GroupCounts) -> dict[str, Any]:
    return {"running": counts.running, "succeeded": counts.succeeded, "failed": counts.failed}


def now_text() -> str:
    """The current time as the apiserver writes it (RFC 3339, seconds, ``Z``)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
