"""What a job's pods say about the job, and the order pending jobs are placed in.

Phase rules (Volcano's, reduced to the four phases this scheduler uses):

- ``Completed``: at least ``minAvailable`` pods succeeded and none is still pending or running;
- ``Failed``: so many pods failed that fewer than ``minAvailable`` can still succeed;
- ``Running``: at least ``minAvailable`` pods are bound to nodes or already succeeded;
- ``Pending``: anything else, including a job with no pods yet.

The counts follow the pods' own phases: a bound pod that no kubelet has started yet is
``pending``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from crdkit.resources import Pod
from examples.gang_scheduler.gang_request import task_minimums
from examples.gang_scheduler.models import Job, JobPhase

_EPOCH = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class PodCounts:
    """The job's pods by phase, and how many are bound to a node."""

    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    bound: int = 0

    @property
    def total(self) -> int:
        return self.pending + self.running + self.succeeded + self.failed


def count_pods(pods: Iterable[Pod]) -> PodCounts:
    """Count pods by phase; an unknown or missing phase counts as pending."""
    pending = running = succeeded = failed = bound = 0
    for pod in pods:
        phase = pod.status.phase if pod.status else None
        if phase == "Running":
            running += 1
        elif phase == "Succeeded":
            succeeded += 1
        elif phase == "Failed":
            failed += 1
        else:
            pending += 1
        if pod.spec.node_name and phase not in ("Succeeded", "Failed"):
            bound += 1
    return PodCounts(pending, running, succeeded, failed, bound)


def min_available(job: Job) -> int:
    """The fewest pods the job can run with: the job's figure, else the sum of its tasks'."""
    return job.spec.min_available or sum(task_minimums(job).values())


def derive_phase(job: Job, counts: PodCounts) -> JobPhase:
    """The job's phase from its pod counts (see the module docstring)."""
    needed = min_available(job)
    replicas = sum(task.replicas for task in job.spec.tasks)
    if counts.total and counts.succeeded >= needed and not counts.pending and not counts.running:
        return "Completed"
    if counts.failed and replicas - counts.failed < needed:
        return "Failed"
    if counts.total and counts.bound + counts.succeeded >= needed:
        return "Running"
    return "Pending"


def placement_order(jobs: Sequence[tuple[Job, int]]) -> list[Job]:
    """Jobs with their priorities, in the order to place them: higher priority, then older, then
    by namespace and name so that the order is total."""

    def key(entry: tuple[Job, int]) -> tuple[int, datetime, str, str]:
        job, priority = entry
        meta = job.metadata
        return (-priority, meta.creation_timestamp or _EPOCH, meta.namespace or "", meta.name or "")

    return [job for job, _ in sorted(jobs, key=key)]
