from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from examples.gang_scheduler.models import Job
from pydantic import ValidationError

MANIFESTS = Path(__file__).parents[4] / "examples" / "gang_scheduler" / "manifests"


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
            {"networkTopology": {"mode": "hard", "highestTierAllowed": 0}},
            "spec.networkTopology.highestTierAllowed",
            ">= 1|greater than or equal to 1",
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
