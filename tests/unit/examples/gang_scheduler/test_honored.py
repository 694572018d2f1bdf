"""Which fields of a Volcano Job the example's controller reports as kept but not acted on."""

from __future__ import annotations

from typing import Any

import pytest
from examples.gang_scheduler.honored import honored_message, not_honored
from examples.gang_scheduler.models import Job


def _job(**spec: Any) -> Job:
    body: dict[str, Any] = {"tasks": [{"name": "worker", "replicas": 2}]}
    body.update(spec)
    return Job.model_validate({"metadata": {"name": "j"}, "spec": body})


def test_what_the_controller_acts_on_is_not_reported() -> None:
    job = _job(
        schedulerName="volcano",
        minAvailable=2,
        priorityClassName="high",
        networkTopology={"mode": "hard", "highestTierAllowed": 2},
        tasks=[{"name": "worker", "replicas": 2, "minAvailable": 1, "template": {"spec": {}}}],
    )
    assert not_honored(job) == []


def test_the_crd_defaults_mean_nothing_to_do() -> None:
    assert not_honored(_job(queue="default", maxRetry=3, plugins={}, policies=[])) == []


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"volumes": [{"mountPath": "/data", "volumeClaimName": "c"}]}, "spec.volumes"),
        ({"policies": [{"event": "PodEvicted", "action": "RestartJob"}]}, "spec.policies"),
        ({"plugins": {"ssh": []}}, "spec.plugins"),
        ({"runningEstimate": "1h"}, "spec.runningEstimate"),
        ({"queue": "research"}, "spec.queue"),
        ({"maxRetry": 5}, "spec.maxRetry"),
        ({"ttlSecondsAfterFinished": 0}, "spec.ttlSecondsAfterFinished"),
        ({"minSuccess": 1}, "spec.minSuccess"),
        ({"networkTopology": {"highestTierName": "spine"}}, "spec.networkTopology.highestTierName"),
    ],
)
def test_each_job_field_not_acted_on_is_named(spec: dict[str, Any], path: str) -> None:
    assert not_honored(_job(**spec)) == [path]


@pytest.mark.parametrize(
    ("task", "path"),
    [
        ({"policies": [{"event": "PodFailed", "action": "RestartTask"}]}, "policies"),
        ({"topologyPolicy": "best-effort"}, "topologyPolicy"),
        ({"maxRetry": 1}, "maxRetry"),
        ({"dependsOn": {"name": ["master"]}}, "dependsOn"),
        ({"partitionPolicy": {"totalPartitions": 2, "partitionSize": 1}}, "partitionPolicy"),
    ],
)
def test_each_task_field_not_acted_on_is_named_by_task(task: dict[str, Any], path: str) -> None:
    job = _job(tasks=[{"name": "master", "replicas": 1}, {"name": "worker", "replicas": 2, **task}])
    assert not_honored(job) == [f"spec.tasks[worker].{path}"]


def test_an_unnamed_task_is_named_as_volcano_names_it() -> None:
    job = _job(tasks=[{"replicas": 1, "dependsOn": {"name": ["x"]}}])
    assert not_honored(job) == ["spec.tasks[default0].dependsOn"]


def test_the_message_lists_them_in_spec_order() -> None:
    job = _job(minSuccess=1, volumes=[{"mountPath": "/d"}], maxRetry=0)
    assert honored_message(not_honored(job)) == (
        "kept, but not acted on by this controller: spec.volumes, spec.maxRetry, spec.minSuccess"
    )
    assert honored_message([]) == "every field set is acted on"
