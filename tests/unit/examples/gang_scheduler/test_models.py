from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from examples.gang_scheduler.models import Job
from pydantic import ValidationError

MANIFESTS = Path(__file__).parents[4] / "examples" / "gang_scheduler" / "manifests"
VOLCANO_JOBS = Path(__file__).parents[4] / "tests" / "data" / "volcano-jobs"

# Volcano's manifests the model refuses, and why: the first two as Volcano's webhook refuses
# them, the others as both Job CRDs do (tests/integration/examples/
# test_gang_volcano_job_conformance.py shows the apiserver agreeing).
REFUSED = {
    "example-invalid-jobs-duplicatedtaskname-webhook-deny-1.yaml": "duplicate task name",
    "example-invalid-jobs-minavailable-webhook-deny-1.yaml": "exceeds the 4 replicas",
    "docs-user-guide-how-to-use-cdp-plugin-2.yaml": "valid dictionary or instance of JobSpec",
    "docs-user-guide-how-to-use-job-policy-3.yaml": "valid list",
}
# Fields outside Volcano's API (a design doc's proposal): both CRDs refuse it under strict
# validation and prune the field otherwise, as the model ignores it.
OUTSIDE_THE_API = {"docs-design-dedicated-volume-1.yaml": ("spec", "tasks", 0, "volumes")}


def _job(**spec: object) -> dict[str, object]:
    base: dict[str, object] = {"tasks": [{"name": "worker", "replicas": 2, "template": {}}]}
    base.update(spec)
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": base,
    }


@pytest.mark.parametrize("name", ["volcano-basic-job.yaml", "volcano-mpi-job.yaml"])
def test_volcano_examples_validate_and_keep_every_field(name: str) -> None:
    data = yaml.safe_load((MANIFESTS / name).read_text())
    job = Job.model_validate(data)
    assert job.to_merge_patch() == data


def _volcano_job_files() -> list[str]:
    return sorted(path.name for path in VOLCANO_JOBS.glob("*.yaml"))


@pytest.mark.parametrize("name", _volcano_job_files())
def test_volcanos_own_jobs_keep_every_field_or_are_refused_naming_why(name: str) -> None:
    data = yaml.safe_load((VOLCANO_JOBS / name).read_text())
    if name in REFUSED:
        with pytest.raises(ValidationError, match=REFUSED[name]):
            Job.model_validate(data)
        return
    dumped = Job.model_validate(data).to_merge_patch()
    if name in OUTSIDE_THE_API:
        *parent, key = OUTSIDE_THE_API[name]
        node = data
        for part in parent:
            node = node[part]
        del node[key]
    for index, task in enumerate((data.get("spec") or {}).get("tasks") or []):
        task.setdefault("name", f"default{index}")  # the webhook's name, as the model gives it
        if task.get("template", {}) is None:
            task["template"] = {}
    assert dumped == data


def test_the_whole_api_reads_typed() -> None:
    job = Job.model_validate(
        _job(
            minSuccess=2,
            runningEstimate="1h30m",
            ttlSecondsAfterFinished=60,
            networkTopology={"mode": "hard", "highestTierName": "spine"},
            volumes=[
                {
                    "mountPath": "/data",
                    "volumeClaim": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "8Gi", "count": 2}},
                        "dataSource": {
                            "apiGroup": "snapshot.storage.k8s.io",
                            "kind": "S",
                            "name": "s",
                        },
                    },
                }
            ],
            tasks=[
                {
                    "replicas": 4,
                    "topologyPolicy": "single-numa-node",
                    "dependsOn": {"name": ["other"], "iteration": "any"},
                    "partitionPolicy": {"totalPartitions": 2, "partitionSize": 2},
                    "policies": [
                        {
                            "events": ["PodEvicted", "PodFailed"],
                            "action": "RestartJob",
                            "timeout": "10m",
                        }
                    ],
                },
                {"name": "other", "replicas": 1},
            ],
        )
    )
    spec = job.spec
    assert (spec.min_success, spec.running_estimate, spec.ttl_seconds_after_finished) == (
        2,
        "1h30m",
        60,
    )
    assert (spec.queue, spec.max_retry) == ("default", 3)  # the CRD's defaults
    assert spec.network_topology is not None
    assert spec.network_topology.highest_tier_name == "spine"
    claim = spec.volumes[0].volume_claim if spec.volumes else None
    assert claim is not None
    assert claim.resources is not None
    assert claim.resources.requests == {"storage": "8Gi", "count": 2}
    assert claim.data_source is not None
    assert claim.data_source.api_group == "snapshot.storage.k8s.io"
    first = spec.tasks[0]
    assert first.name == "default0"  # unnamed: Volcano's webhook default
    assert first.depends_on is not None
    assert first.depends_on.name == ["other"]
    assert first.partition_policy is not None
    assert first.partition_policy.min_partitions == 0
    assert first.policies is not None
    assert first.policies[0].timeout == "10m"
    wire = job.to_merge_patch()["spec"]
    assert wire["ttlSecondsAfterFinished"] == 60
    assert wire["volumes"][0]["volumeClaim"]["dataSource"]["apiGroup"] == "snapshot.storage.k8s.io"


def test_template_is_kept_intact_and_readable_typed() -> None:
    template = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {
            "containers": [{"name": "c", "image": "i", "securityContext": {"privileged": True}}],
            "hostNetwork": True,
        },
    }
    job = Job.model_validate(_job(tasks=[{"name": "w", "replicas": 1, "template": template}]))
    assert job.to_merge_patch()["spec"]["tasks"][0]["template"] == template
    assert job.spec.tasks[0].pod_template().spec.containers[0].image == "i"


def test_hard_mode_defaults_to_tier_one() -> None:
    job = Job.model_validate(_job(networkTopology={"mode": "hard"}))
    assert job.spec.network_topology is not None
    assert job.spec.network_topology.tier == 1


@pytest.mark.parametrize(
    ("spec", "location", "message"),
    [
        ({"tasks": []}, "spec.tasks", "at least 1 item"),
        ({"minAvailable": 3}, "spec", r"spec\.minAvailable: 3 exceeds the 2 replicas"),
        ({"minAvailable": -1}, "spec.minAvailable", "greater than or equal to 0"),
        ({"networkTopology": {"mode": "strict"}}, "spec.networkTopology.mode", "'hard' or 'soft'"),
        (
            {"networkTopology": {"mode": "hard", "highestTierAllowed": -1}},
            "spec.networkTopology.highestTierAllowed",
            ">= 0|greater than or equal to 0",
        ),
        (
            {"tasks": [{"name": "w", "replicas": 1}, {"name": "w", "replicas": 1}]},
            "spec",
            r"spec\.tasks\[1\]\.name: duplicate task name 'w'",
        ),
        (
            {"tasks": [{"name": "w", "replicas": 1, "minAvailable": 2}]},
            "spec",
            r"spec\.tasks\[0\]\.minAvailable: 2 exceeds replicas 1",
        ),
        ({"tasks": [{"name": "Bad_Name", "replicas": 1}]}, "spec.tasks.0.name", "pattern"),
        ({"queue": "Not A Queue"}, "spec.queue", "pattern"),
        ({"minSuccess": 0}, "spec.minSuccess", "greater than or equal to 1"),
        ({"runningEstimate": "soon"}, "spec.runningEstimate", "not a duration"),
        (
            {"policies": [{"event": "PodExploded", "action": "RestartJob"}]},
            "spec.policies.0.event",
            "PodPending",
        ),
        (
            {"tasks": [{"name": "w", "replicas": 1, "topologyPolicy": "any"}]},
            "spec.tasks.0.topologyPolicy",
            "single-numa-node",
        ),
        (
            {"tasks": [{"name": "w", "replicas": 1, "partitionPolicy": {"partitionSize": 1}}]},
            "spec.tasks.0.partitionPolicy.totalPartitions",
            "Field required",
        ),
        (
            {"volumes": [{"mountPath": "/a:b"}]},
            "spec.volumes.0.mountPath",
            "pattern",
        ),
        (
            {
                "volumes": [
                    {"mountPath": "/d", "volumeClaim": {"resources": {"requests": {"x": "8 GB"}}}}
                ]
            },
            "spec.volumes.0.volumeClaim.resources.requests.x",
            "not a quantity",
        ),
    ],
)
def test_bad_specs_name_the_field(spec: dict[str, object], location: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Job.model_validate(_job(**spec))
    error = caught.value.errors()[0]
    assert ".".join(str(part) for part in error["loc"]).startswith(location)

    assert re.search(message, str(caught.value))


def test_status_round_trips_from_apiserver_json() -> None:
    body = _job()
    body["status"] = {
        "state": {"phase": "Running", "lastTransitionTime": "2026-01-02T03:04:05Z"},
        "running": 2,
        "conditions": [
            {
                "type": "Scheduled",
                "status": "True",
                "reason": "Placed",
                "message": "",
                "lastTransitionTime": "2026-01-02T03:04:05Z",
            }
        ],
        "placement": {
            "tier": 1,
            "domain": {"zone": "z0", "leaf": "l0"},
            "tasks": [{"name": "worker", "nodes": ["n1", "n2"]}],
        },
    }

    job = Job.model_validate_json(json.dumps(body))
    assert job.status is not None
    assert job.status.state.phase == "Running"
    assert job.status.placement is not None
    assert job.status.placement.tasks[0].nodes == ["n1", "n2"]
    assert job.to_merge_patch()["status"] == body["status"]
