"""A Volcano Job as a placer gang (the placement contract's ``Gang``), and pod requests.

Translation rules, in Volcano's terms:

- ``networkTopology`` absent: ``unconstrained``. ``hard``: ``required`` at the label of tier
  ``highestTierAllowed`` (default 1). ``soft``: ``preferred`` from tier 1 upwards, so the pods
  land as low in the tree as they fit but the job is never refused for topology alone.
- A task's ``minAvailable`` is used as given. Tasks without one share what the job's
  ``minAvailable`` leaves over, in task order (so a master listed first is kept), each at least 1
  and at most its replicas; with no job-level figure either, a task needs all its replicas.
- A pod's request per resource is the larger of the sum over its containers and the largest init
  container, as the Kubernetes scheduler counts it; a container that gives only a limit requests
  that limit (the apiserver defaults it so).
- Tasks with zero replicas are left out.
"""

from __future__ import annotations

from typing import Any

from crdkit.placer import format_quantity, parse_quantity
from crdkit.resources import Container, PodSpec
from examples.gang_scheduler.models import Job, TaskSpec
from examples.gang_scheduler.topology import TopologyConfig


def gang_name(job: Job) -> str:
    """The gang's name: ``namespace/name``, unique across the cluster."""
    return f"{job.metadata.namespace or 'default'}/{job.metadata.name}"


def _container_requests(container: Container, field: str) -> dict[str, int]:
    requests: dict[str, int] = {}
    for source in (container.resources.limits, container.resources.requests):
        for resource, quantity in source.items():
            requests[resource] = parse_quantity(quantity)  # requests override limits
    for resource, milli in requests.items():
        if milli < 0:
            raise ValueError(f"{field}.resources: {resource} must not be negative")
    return requests


def pod_requests(spec: PodSpec, field: str = "template.spec") -> dict[str, int]:
    """What one pod of this spec takes from a node, in milli-units per resource."""
    total: dict[str, int] = {}
    for index, container in enumerate(spec.containers):
        for resource, milli in _container_requests(
            container, f"{field}.containers[{index}]"
        ).items():
            total[resource] = total.get(resource, 0) + milli
    for index, container in enumerate(spec.init_containers):
        for resource, milli in _container_requests(
            container, f"{field}.initContainers[{index}]"
        ).items():
            total[resource] = max(total.get(resource, 0), milli)
    return total


def task_minimums(job: Job) -> dict[str, int]:
    """The fewest pods each task can start with (see the module docstring for the rule)."""
    tasks = [task for task in job.spec.tasks if task.replicas > 0]
    explicit = {task.name: task.min_available for task in tasks if task.min_available is not None}
    open_tasks = [task for task in tasks if task.min_available is None]
    minimums: dict[str, int] = {}
    if not job.spec.min_available:
        for task in open_tasks:
            minimums[task.name] = task.replicas
    else:
        budget = job.spec.min_available - sum(value for value in explicit.values() if value)
        for task in open_tasks:
            share = min(task.replicas, max(budget, 1))
            minimums[task.name] = share
            budget -= share
    for name, value in explicit.items():
        minimums[name] = max(value or 0, 1)
    return minimums


def topology_constraint(job: Job, topology: TopologyConfig) -> dict[str, Any]:
    """The gang-level ``topology`` of the contract for this job."""
    network = job.spec.network_topology
    if network is None:
        return {"mode": "unconstrained"}
    if network.mode == "soft":
        return {"mode": "preferred", "level": topology.label_for_tier(1)}
    level = topology.label_for_tier(network.tier, "spec.networkTopology.highestTierAllowed")
    return {"mode": "required", "level": level}


def task_request(task: TaskSpec, index: int, minimum: int) -> dict[str, Any]:
    """The contract's task entry for one Volcano task."""
    field = f"spec.tasks[{index}].template.spec"
    spec = task.pod_template().spec
    requests = pod_requests(spec, field)
    entry: dict[str, Any] = {
        "name": task.name,
        "replicas": task.replicas,
        "minAvailable": minimum,
        "requests": {
            resource: format_quantity(milli) for resource, milli in sorted(requests.items())
        },
    }
    if spec.node_selector:
        entry["nodeSelector"] = dict(spec.node_selector)
    if spec.tolerations:
        entry["tolerations"] = [
            toleration.model_dump(
                by_alias=True, exclude_none=True, include={"key", "operator", "value", "effect"}
            )
            for toleration in spec.tolerations
        ]
    return entry


def gang_for_job(job: Job, topology: TopologyConfig, priority: int = 0) -> dict[str, Any]:
    """The placer gang for ``job``; every pod of it is placed, or none."""
    minimums = task_minimums(job)
    tasks = [
        task_request(task, index, minimums[task.name])
        for index, task in enumerate(job.spec.tasks)
        if task.replicas > 0
    ]
    if not tasks:
        raise ValueError("spec.tasks: every task has 0 replicas; there is nothing to place")
    return {
        "name": gang_name(job),
        "priority": priority,
        "topology": topology_constraint(job, topology),
        "tasks": tasks,
    }
