"""What a scheduling pass decides, as values: the cycle returns them, the dispatcher performs
those that call the apiserver, and the queue takes `Later`.

A pass changes only local state itself (kube-scheduler's *assume*: the mirror counts a bound
gang's pods and holds reserved nodes at once, so the next gang of the same pass sees them);
everything the apiserver must hear of is one of these, applied in the order decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit import _placer
    from crdkit.resources import Pod
    from crdkit.scheduling.assumptions import Reservation
    from crdkit.scheduling.pending import GroupRef, PendingGroup
    from crdkit.scheduling.preemption import RunningGang
    from crdkit.scheduling.reservations import DomainReservation

__all__ = [
    "DISRUPTION_TARGET",
    "PREEMPTION_BY_SCHEDULER",
    "Bind",
    "Decision",
    "Evict",
    "Later",
    "Reserve",
    "RollBack",
    "Wait",
    "WriteStatus",
    "marked_for_preemption",
]

DISRUPTION_TARGET = "DisruptionTarget"
"""The pod condition saying the pod is about to be terminated by a disruption."""
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
"""Its reason when a scheduler preempts the pod (kube-scheduler's, for every preemption)."""


def marked_for_preemption(pod: Pod) -> bool:
    """Whether a scheduler marked ``pod`` a preemption victim (`Evict`): the mark is written
    before the delete, so it outlives a scheduler that died in between."""
    return any(
        condition.type == DISRUPTION_TARGET
        and condition.status == "True"
        and condition.reason == PREEMPTION_BY_SCHEDULER
        for condition in (pod.status.conditions if pod.status is not None else None) or ()
    )


@dataclass(frozen=True)
class Bind:
    """Bind the gang's pods where ``reservation`` (already assumed in the mirror) put them."""

    group: PendingGroup
    reservation: Reservation
    placement: _placer.Outcome


@dataclass(frozen=True)
class Wait:
    """Tell the gang's pending pods (a ``FailedScheduling`` Event each) and its PodGroup's
    status why it waits."""

    group: PendingGroup
    reason: str
    message: str


@dataclass(frozen=True)
class WriteStatus:
    """Bring the PodGroup's status in line with its pods; ``waiting`` is a report to carry
    (None: the last one written, if the gang still waits)."""

    group: PendingGroup
    waiting: tuple[str, str] | None = None


@dataclass(frozen=True)
class Reserve:
    """Nodes are now held for a waiting gang (the mirror holds them already)."""

    ref: GroupRef
    reservation: DomainReservation


@dataclass(frozen=True)
class Evict:
    """Delete every pod of each victim gang, to free ``where`` for the gang ``ref``."""

    ref: GroupRef
    priority: int
    victims: Sequence[RunningGang]
    where: str
    why: str = ""
    """What the Event says the eviction is for, when not the preemptor's priority (a queue
    reclaiming its quota)."""


@dataclass(frozen=True)
class RollBack:
    """Delete the bound pods of a gang left partly bound whose rest does not fit beside them;
    or, ``evicting``, of a preemption victim whose eviction was cut short (its pods deleted
    with their grace period, as `Evict` deletes them)."""

    group: PendingGroup
    evicting: bool = False


@dataclass(frozen=True)
class Later:
    """Look at the gang again in ``delay`` seconds."""

    ref: GroupRef
    delay: float


Decision = Bind | Wait | WriteStatus | Reserve | Evict | RollBack | Later
