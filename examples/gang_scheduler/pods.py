"""The pods of a placed job: one per placed replica, bound to the node the placer chose.

Pods are named as Volcano names them (``<job>-<task>-<index>``), carry Volcano's labels so
tools that know Volcano find them, and have the Job as their controlling owner. They are created
with ``spec.nodeName`` already set: that binds each in the request that creates it, so no pod of
a placed job is ever seen unbound, and no other scheduler can take it meanwhile.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from crdkit.placer.models import Placement
from examples.gang_scheduler.models import GROUP, VERSION, Job

JOB_NAME_LABEL = "volcano.sh/job-name"
JOB_NAMESPACE_LABEL = "volcano.sh/job-namespace"
TASK_LABEL = "volcano.sh/task-spec"
TASK_INDEX_ANNOTATION = "volcano.sh/task-index"


@dataclass(frozen=True)
class PodPlan:
    """One pod the placement asks for: its task, index within the task, and node."""

    task: str
    index: int
    node: str

    def name(self, job: str) -> str:
        """Volcano's pod name."""
        return f"{job}-{self.task}-{self.index}"


def plan_pods(placement: Placement) -> list[PodPlan]:
    """Every pod of a placed gang, task by task, indices counting up across its nodes."""
    if placement.status == "unschedulable":
        raise ValueError(
            f"placement of {placement.gang}: unschedulable, there are no pods to create"
        )
    next_index: dict[str, int] = {}
    plans: list[PodPlan] = []
    for assignment in placement.assignments:
        for _ in range(assignment.count):
            index = next_index.get(assignment.task, 0)
            next_index[assignment.task] = index + 1
            plans.append(PodPlan(assignment.task, index, assignment.node))
    for task, count in placement.placed.items():
        if next_index.get(task, 0) != count:
            raise ValueError(
                f"placement of {placement.gang}: placed.{task} is {count} "
                f"but the assignments hold {next_index.get(task, 0)}"
            )
    return plans


def pod_manifest(job: Job, plan: PodPlan, scheduler_name: str) -> dict[str, Any]:
    """The Pod for ``plan``: the task's template, kept intact, plus identity and binding.

    The job's ``priorityClassName`` goes to the pod unless its template names one; the numeric
    priority is left to the apiserver's Priority admission, which refuses a pod that states it.
    """
    name = job.metadata.name
    namespace = job.metadata.namespace
    if not name or not namespace or not job.metadata.uid:
        raise ValueError("job metadata: name, namespace and uid are needed to own pods")
    task = next((t for t in job.spec.tasks if t.name == plan.task), None)
    if task is None:
        raise ValueError(f"placement task {plan.task!r}: the job has no such task")
    template = copy.deepcopy(task.template)
    metadata = template.get("metadata") or {}
    spec = template.get("spec") or {}
    labels = dict(metadata.get("labels") or {})
    labels.update({JOB_NAME_LABEL: name, JOB_NAMESPACE_LABEL: namespace, TASK_LABEL: plan.task})
    annotations = dict(metadata.get("annotations") or {})
    annotations[TASK_INDEX_ANNOTATION] = str(plan.index)
    spec["nodeName"] = plan.node
    spec["schedulerName"] = scheduler_name
    if job.spec.priority_class_name and "priorityClassName" not in spec:
        spec["priorityClassName"] = job.spec.priority_class_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": plan.name(name),
            "namespace": namespace,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": "Job",
                    "name": name,
                    "uid": job.metadata.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }
