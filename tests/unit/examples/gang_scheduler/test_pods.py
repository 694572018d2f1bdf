from __future__ import annotations

import pytest
from examples.gang_scheduler.job_stream import LLAMA3_8B_FINETUNE, manifest
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.pods import (
    JOB_NAME_LABEL,
    TASK_INDEX_ANNOTATION,
    TASK_LABEL,
    pod_manifest,
    pod_manifests,
)

from crdkit.resources import Pod
from crdkit.scheduling import pod_group_of
from crdkit.scheduling.gangs import TASK_KEYS


def _job() -> Job:
    data = manifest(LLAMA3_8B_FINETUNE)
    data["metadata"].update({"namespace": "ml", "uid": "uid-1"})
    return Job.model_validate(data)


def test_every_replica_of_every_task_gets_a_pod_named_as_volcano_names_it() -> None:
    names = [m["metadata"]["name"] for m in pod_manifests(_job(), "s")]
    assert names[:3] == [
        "llama3-8b-finetune-master-0",
        "llama3-8b-finetune-worker-0",
        "llama3-8b-finetune-worker-1",
    ]
    assert len(names) == 16 == len(set(names))


def test_pod_is_the_template_plus_identity_owner_and_gang_membership_unbound() -> None:
    job = _job()
    data = pod_manifest(job, "worker", 7, "crdkit-gang-scheduler")
    assert data["metadata"]["name"] == "llama3-8b-finetune-worker-7"
    assert data["metadata"]["namespace"] == "ml"
    assert data["metadata"]["labels"][JOB_NAME_LABEL] == "llama3-8b-finetune"
    assert data["metadata"]["labels"][TASK_LABEL] == "worker"
    assert data["metadata"]["labels"]["role"] == "worker"  # the template's own labels stay
    assert data["metadata"]["annotations"][TASK_INDEX_ANNOTATION] == "7"
    (owner,) = data["metadata"]["ownerReferences"]
    assert owner == {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "llama3-8b-finetune",
        "uid": "uid-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert "nodeName" not in data["spec"]  # the gang scheduler binds it
    assert data["spec"]["schedulerName"] == "crdkit-gang-scheduler"
    assert data["spec"]["priorityClassName"] == "training-high"
    template_spec = job.spec.tasks[1].template["spec"]
    assert data["spec"]["containers"] == template_spec["containers"]
    assert "schedulerName" not in template_spec  # the job's template is not modified


def test_the_library_reads_the_pods_gang_and_task() -> None:
    pod = Pod.model_validate(pod_manifest(_job(), "worker", 0, "s"))
    assert pod_group_of(pod) == ("volcano", "llama3-8b-finetune")
    assert TASK_KEYS[0] == TASK_LABEL
    assert pod.metadata.annotations[TASK_LABEL] == "worker"


def test_unknown_task_and_unsaved_job_are_errors() -> None:
    with pytest.raises(ValueError, match="task 'chief'"):
        pod_manifest(_job(), "chief", 0, "s")
    unsaved = Job.model_validate(manifest(LLAMA3_8B_FINETUNE))
    with pytest.raises(ValueError, match="name, namespace and uid"):
        pod_manifest(unsaved, "worker", 0, "s")
