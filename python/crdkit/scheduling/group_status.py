"""The phase a PodGroup reports, from the counts of its pods, by each API's own rules.

Coscheduling (``scheduling.x-k8s.io/v1alpha1``, kubernetes-sigs/scheduler-plugins; the phases
of its current types, ``Scheduled`` and ``PreScheduling`` having been dropped upstream):

- ``Pending``: fewer than ``minMember`` pods are bound and none is being bound;
- ``Scheduling``: this scheduler is binding the gang, or ``minMember`` pods are bound but fewer
  are running;
- ``Running``: at least ``minMember`` pods are running (or have succeeded);
- ``Finished``: at least ``minMember`` pods have succeeded and none is left running;
- ``Failed``: a pod failed and fewer than ``minMember`` can still run or have succeeded.

Volcano (``scheduling.volcano.sh/v1beta1``):

- ``Pending``: the gang is not placed; ``Running``: at least ``minMember`` pods are bound (the
  Volcano scheduler moves a group to Running once its minimum is allocated);
- ``Completed``: every pod has ended; ``Unknown``: some pods are bound but fewer than
  ``minMember`` (a gang that lost members).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GroupCounts", "coscheduling_phase", "volcano_phase"]


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


def volcano_phase(min_member: int, counts: GroupCounts) -> str:
    """The Volcano PodGroup phase; see the module docstring."""
    if counts.pods and counts.ended == counts.pods:
        return "Completed"
    if counts.bound + counts.succeeded >= min_member:
        return "Running"
    if counts.bound:
        return "Unknown"
    return "Pending"
