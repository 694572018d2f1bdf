"""What a job's pods say about the job: its phase, its counts, and where it was placed.

Phase rules (Volcano's, reduced to the four phases this scheduler uses):

- ``Completed``: at least ``minAvailable`` pods succeeded and none is still pending or running;
- ``Failed``: so many pods failed that fewer than ``minAvailable`` can still succeed;
- ``Running``: at least ``minAvailable`` pods are bound to nodes or already succeeded;
- ``Pending``: anything else, including a job with no pods yet.

The counts follow the pods' own phases: a pod not started yet (bound or not) is ``pending``.

The placement is read off the bound pods: the narrowest tier whose label all their nodes share
is the job's domain (none when they span the widest tier), and each task lists its pods' nodes
in pod index order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from crdkit.resources import Pod
from examples.gang_scheduler.gang_request import task_minimums
from examples.gang_scheduler.models import Job, JobPhase, JobPlacement, TaskPlacement
from examples.gang_scheduler.pods import TASK_INDEX_ANNOTATION, TASK_LABEL
from examples.gang_scheduler.topology import TopologyConfig


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


def placement_of(
    job: Job,
    bound: Sequence[Pod],
    node_labels: Mapping[str, Mapping[str, str]],
    topology: TopologyConfig,
) -> JobPlacement:
    """Where ``bound`` (the job's pods that have a node) are, with ``node_labels`` by node name
    (a node missing there has no labels); see the module docstring."""

    def order(pod: Pod) -> tuple[str, int, str]:
        index = pod.metadata.annotations.get(TASK_INDEX_ANNOTATION, "")
        return (
            pod.metadata.labels.get(TASK_LABEL, ""),
            int(index) if index.isdigit() else -1,
            pod.metadata.name or "",
        )

    by_task: dict[str, list[str]] = {}
    for pod in sorted(bound, key=order):
        by_task.setdefault(pod.metadata.labels.get(TASK_LABEL, ""), []).append(
            pod.spec.node_name or ""
        )
    names = [task.name for task in job.spec.tasks if task.name in by_task]
    names += sorted(set(by_task) - set(names))
    record = JobPlacement(tasks=[TaskPlacement(name=n, nodes=by_task[n]) for n in names])
    nodes = {node for task in record.tasks for node in task.nodes}
    for tier, label in enumerate(topology.tier_labels, start=1):
        values = {node_labels.get(node, {}).get(label) for node in nodes}
        if len(values) == 1 and None not in values:
            first = node_labels[next(iter(nodes))]
            record.tier = tier
            record.domain_name = first[label]
            record.domain = {key: first[key] for key in topology.tier_labels[tier - 1 :]}
            break
    return record
