"""Which fields of a Volcano Job this example's controller does not act on.

The Job model keeps all of Volcano's API, so nothing a user writes is dropped; but this
controller implements gang placement only. Whatever else a Job asks for is named in its
``Honored`` condition (``status: "False"``, ``reason: NotHonored``), so it is never ignored in
silence. Acted on, and so not listed: ``schedulerName`` (which Jobs are ours),
``minAvailable``, ``priorityClassName`` (the pods' priority), ``networkTopology`` ``mode`` and
``highestTierAllowed``, and each task's ``name``, ``replicas``, ``minAvailable`` and
``template``. A field at the value that means "nothing to do" is not listed either: the CRD's
defaults ``queue: default`` (this controller has one queue, the whole cluster) and
``maxRetry: 3`` (only restart policies retry, and those are listed themselves).
"""

from __future__ import annotations

from examples.gang_scheduler.models import Job, LifecyclePolicy, NetworkTopologySpec

HONORED = "Honored"
NOT_HONORED = "NotHonored"
DEFAULT_QUEUE = "default"
DEFAULT_MAX_RETRY = 3


def not_honored(job: Job) -> list[str]:
    """The wire paths of the fields ``job`` sets that this controller does not act on, in
    the order they appear in the spec (tasks by name)."""
    spec = job.spec
    found: list[str] = []
    if spec.volumes:
        found.append("spec.volumes")
    found += _policies("spec", spec.policies)
    if spec.plugins:
        found.append("spec.plugins")
    if spec.running_estimate is not None:
        found.append("spec.runningEstimate")
    if spec.queue != DEFAULT_QUEUE:
        found.append("spec.queue")
    if spec.max_retry != DEFAULT_MAX_RETRY:
        found.append("spec.maxRetry")
    if spec.ttl_seconds_after_finished is not None:
        found.append("spec.ttlSecondsAfterFinished")
    if spec.min_success is not None:
        found.append("spec.minSuccess")
    found += _topology("spec.networkTopology", spec.network_topology)
    for task in spec.tasks:
        where = f"spec.tasks[{task.name}]"
        found += _policies(where, task.policies)
        if task.topology_policy is not None:
            found.append(f"{where}.topologyPolicy")
        if task.max_retry is not None and task.max_retry != DEFAULT_MAX_RETRY:
            found.append(f"{where}.maxRetry")
        if task.depends_on is not None:
            found.append(f"{where}.dependsOn")
        if task.partition_policy is not None:
            found.append(f"{where}.partitionPolicy")
    return found


def honored_message(paths: list[str]) -> str:
    """The condition's message for ``not_honored``'s answer."""
    if not paths:
        return "every field set is acted on"
    return "kept, but not acted on by this controller: " + ", ".join(paths)


def _policies(where: str, policies: list[LifecyclePolicy] | None) -> list[str]:
    return [f"{where}.policies"] if policies else []


def _topology(where: str, topology: NetworkTopologySpec | None) -> list[str]:
    if topology is not None and topology.highest_tier_name is not None:
        return [f"{where}.highestTierName"]
    return []
