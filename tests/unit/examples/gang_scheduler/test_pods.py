from __future__ import annotations

import pytest
from examples.gang_scheduler.job_stream import LLAMA3_8B_FINETUNE, manifest
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.pods import (
    JOB_NAME_LABEL,
    TASK_LABEL,
    PodPlan,
    plan_pods,
    pod_manifest,
)

from crdkit.placer.models import Placement


def _placement(**overrides: object) -> Placement:
    data: dict[str, object] = {
        "gang": "ml/llama3-8b-finetune",
        "status": "placed",
        "level": "leaf",
        "domain": {"leaf": "l0"},
        "placed": {"master": 1, "worker": 3},
        "assignments": [
            {"task": "master", "node": "n0", "count": 1},
            {"task": "worker", "node": "n1", "count": 2},
            {"task": "worker", "node": "n2", "count": 1},
        ],
    }
    data.update(overrides)
    return Placement.model_validate(data)


def _job() -> Job:
    data = manifest(LLAMA3_8B_FINETUNE)
    data["metadata"].update({"namespace": "ml", "uid": "uid-1"})
    return Job.model_validate(data)


def test_plans_number_pods_per_task_across_nodes() -> None:
    assert plan_pods(_placement()) == [
        PodPlan("master", 0, "n0"),
        PodPlan("worker", 0, "n1"),
        PodPlan("worker", 1, "n1"),
        PodPlan("worker", 2, "n2"),
    ]


def test_inconsistent_or_unschedulable_placements_are_refused() -> None:
    with pytest.raises(ValueError, match=r"placed\.worker is 4 but the assignments hold 3"):
        plan_pods(_placement(placed={"master": 1, "worker": 4}))
    with pytest.raises(ValueError, match="unschedulable"):
        plan_pods(_placement(status="unschedulable", assignments=[], placed={"master": 0}))


def test_pod_is_the_template_plus_identity_owner_and_binding() -> None:
    job = _job()
    pod = pod_manifest(job, PodPlan("worker", 7, "gpu-n7"), "crdkit-gang-scheduler")
    assert pod["metadata"]["name"] == "llama3-8b-finetune-worker-7"
    assert pod["metadata"]["namespace"] == "ml"
    assert pod["metadata"]["labels"][JOB_NAME_LABEL] == "llama3-8b-finetune"
    assert pod["metadata"]["labels"][TASK_LABEL] == "worker"
    assert pod["metadata"]["labels"]["role"] == "worker"  # the template's own labels stay
    (owner,) = pod["metadata"]["ownerReferences"]
    assert owner == {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "llama3-8b-finetune",
        "uid": "uid-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert pod["spec"]["nodeName"] == "gpu-n7"
    assert pod["spec"]["schedulerName"] == "crdkit-gang-scheduler"
    assert pod["spec"]["priorityClassName"] == "training-high"
    template_spec = job.spec.tasks[1].template["spec"]
    assert pod["spec"]["containers"] == template_spec["containers"]
    assert "nodeName" not in template_spec  # the job's template is not modified


def test_unknown_task_and_unsaved_job_are_errors() -> None:
    with pytest.raises(ValueError, match="placement task 'chief'"):
        pod_manifest(_job(), PodPlan("chief", 0, "n"), "s")
    unsaved = Job.model_validate(manifest(LLAMA3_8B_FINETUNE))
    with pytest.raises(ValueError, match="name, namespace and uid"):
        pod_manifest(unsaved, PodPlan("worker", 0, "n"), "s")
