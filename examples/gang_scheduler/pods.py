"""The pods of a Job: one per replica of every task, unbound, for the gang scheduler to place.

Pods are named as Volcano names them (``<job>-<task>-<index>``), carry Volcano's labels and
annotations (the task in ``volcano.sh/task-spec``, the PodGroup in ``scheduling.k8s.io/group-name``)
so that `crdkit.scheduling.GangScheduler` groups them into the Job's gang and tells its tasks
apart, and have the Job as their controlling owner. ``spec.schedulerName`` names that scheduler:
no other scheduler takes them, and it binds them all together or none.
"""

from __future__ import annotations

import copy
from typing import Any

from crdkit.scheduling import VOLCANO_GROUP_NAME_ANNOTATION
from examples.gang_scheduler.models import GROUP, VERSION, Job

JOB_NAME_LABEL = "volcano.sh/job-name"
JOB_NAMESPACE_LABEL = "volcano.sh/job-namespace"
TASK_LABEL = "volcano.sh/task-spec"
TASK_INDEX_ANNOTATION = "volcano.sh/task-index"


def pod_name(job: str, task: str, index: int) -> str:
    """Volcano's pod name."""
    return f"{job}-{task}-{index}"


def pod_manifest(job: Job, task_name: str, index: int, scheduler_name: str) -> dict[str, Any]:
    """Pod ``index`` of task ``task_name``: the task's template, kept intact, plus identity,
    gang membership and the scheduler's name (no ``nodeName``: the scheduler binds it).

    The job's ``priorityClassName`` goes to the pod unless its template names one; the numeric
    priority is left to the apiserver's Priority admission, which refuses a pod that states it.
    """
    name = job.metadata.name
    namespace = job.metadata.namespace
    if not name or not namespace or not job.metadata.uid:
        raise ValueError("job metadata: name, namespace and uid are needed to own pods")
    task = next((t for t in job.spec.tasks if t.name == task_name), None)
    if task is None:
        raise ValueError(f"task {task_name!r}: the job has no such task")
    template = copy.deepcopy(task.template)
    metadata = template.get("metadata") or {}
    spec = template.get("spec") or {}
    labels = dict(metadata.get("labels") or {})
    labels.update({JOB_NAME_LABEL: name, JOB_NAMESPACE_LABEL: namespace, TASK_LABEL: task_name})
    annotations = dict(metadata.get("annotations") or {})
    annotations.update(
        {
            TASK_INDEX_ANNOTATION: str(index),
            TASK_LABEL: task_name,
            VOLCANO_GROUP_NAME_ANNOTATION: name,
        }
    )
    spec.pop("nodeName", None)
    spec["schedulerName"] = scheduler_name
    if job.spec.priority_class_name and "priorityClassName" not in spec:
        spec["priorityClassName"] = job.spec.priority_class_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(name, task_name, index),
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


def pod_manifests(job: Job, scheduler_name: str) -> list[dict[str, Any]]:
    """Every pod of the job, task by task, indices counting up from 0."""
    return [
        pod_manifest(job, task.name, index, scheduler_name)
        for task in job.spec.tasks
        for index in range(task.replicas)
    ]
