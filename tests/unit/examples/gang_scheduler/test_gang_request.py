from __future__ import annotations

from typing import Any

import pytest
from examples.gang_scheduler.gang_request import gang_for_job, pod_requests, task_minimums
from examples.gang_scheduler.job_stream import LLAMA3_8B_FINETUNE, manifest
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.simulated_cluster import RDMA_LABEL
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.resources import PodSpec

TOPOLOGY = TopologyConfig(("net/leaf", "net/spine", "net/zone"))


def _job(tasks: list[dict[str, Any]], **spec: Any) -> Job:
    return Job.model_validate(
        {"metadata": {"name": "j", "namespace": "ns"}, "spec": {"tasks": tasks, **spec}}
    )


def _task(name: str, replicas: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {"spec": {"containers": [{"name": "c"}]}},
        **extra,
    }


def test_headline_job_becomes_a_required_leaf_gang() -> None:
    gang = gang_for_job(
        Job.model_validate(
            manifest(LLAMA3_8B_FINETUNE)
            | {"metadata": {"name": "llama3-8b-finetune", "namespace": "ml"}}
        ),
        TOPOLOGY,
        priority=1000,
    )
    assert gang["name"] == "ml/llama3-8b-finetune"
    assert gang["priority"] == 1000
    assert gang["topology"] == {"mode": "required", "level": "net/leaf"}
    master, worker = gang["tasks"]
    assert (master["name"], master["replicas"], master["minAvailable"]) == ("master", 1, 1)
    assert (worker["name"], worker["replicas"], worker["minAvailable"]) == ("worker", 15, 15)
    assert worker["requests"] == {"cpu": "16", "memory": "137438953472", "nvidia.com/gpu": "8"}
    assert worker["nodeSelector"] == {RDMA_LABEL: "true"}
    assert worker["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


@pytest.mark.parametrize(
    ("network", "expected"),
    [
        (None, {"mode": "unconstrained"}),
        ({"mode": "soft"}, {"mode": "preferred", "level": "net/leaf"}),
        ({"mode": "soft", "highestTierAllowed": 3}, {"mode": "preferred", "level": "net/leaf"}),
        ({"mode": "hard"}, {"mode": "required", "level": "net/leaf"}),
        ({"mode": "hard", "highestTierAllowed": 2}, {"mode": "required", "level": "net/spine"}),
        ({"mode": "hard", "highestTierAllowed": 3}, {"mode": "required", "level": "net/zone"}),
    ],
)
def test_network_topology_maps_to_placer_modes(
    network: dict[str, Any] | None, expected: dict[str, Any]
) -> None:
    spec = {} if network is None else {"networkTopology": network}
    assert gang_for_job(_job([_task("w", 1)], **spec), TOPOLOGY)["topology"] == expected


def test_a_tier_the_cluster_lacks_names_the_field() -> None:
    job = _job([_task("w", 1)], networkTopology={"mode": "hard", "highestTierAllowed": 4})
    with pytest.raises(
        ValueError, match=r"spec\.networkTopology\.highestTierAllowed: tier 4 does not exist"
    ):
        gang_for_job(job, TOPOLOGY)


def test_requests_sum_containers_take_max_with_init_and_default_to_limits() -> None:
    spec = PodSpec.model_validate(
        {
            "containers": [
                {
                    "name": "a",
                    "resources": {"requests": {"cpu": "500m"}, "limits": {"nvidia.com/gpu": 4}},
                },
                {
                    "name": "b",
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi"},
                        "limits": {"cpu": "2"},
                    },
                },
            ],
            "initContainers": [
                {"name": "i", "resources": {"requests": {"cpu": "4", "memory": "1Mi"}}}
            ],
        }
    )
    assert pod_requests(spec) == {"cpu": 4000, "memory": 1024**3 * 1000, "nvidia.com/gpu": 4000}


def test_bad_quantities_are_errors() -> None:
    spec = PodSpec.model_validate(
        {"containers": [{"name": "a", "resources": {"requests": {"cpu": "lots"}}}]}
    )
    with pytest.raises(ValueError, match="lots"):
        pod_requests(spec)


def test_minimums_use_task_values_then_share_the_job_minimum_in_order() -> None:
    # Volcano's basic example: 6 replicas, job minAvailable 3.
    assert task_minimums(_job([_task("w", 6)], minAvailable=3)) == {"w": 3}
    # Volcano's MPI example: 1 master + 2 workers, job minAvailable 3.
    assert task_minimums(_job([_task("m", 1), _task("w", 2)], minAvailable=3)) == {"m": 1, "w": 2}
    # No job minimum: every replica.
    assert task_minimums(_job([_task("m", 1), _task("w", 4)])) == {"m": 1, "w": 4}
    # An explicit task minimum is kept; the rest of the job minimum goes to the other task.
    assert task_minimums(_job([_task("m", 1), _task("w", 8, minAvailable=4)], minAvailable=6)) == {
        "m": 1,
        "w": 4,
    }
    # A job minimum smaller than the task count still starts one pod of each task.
    assert task_minimums(_job([_task("m", 2), _task("w", 2)], minAvailable=1)) == {"m": 1, "w": 1}


def test_zero_replica_tasks_are_left_out_and_an_empty_gang_is_an_error() -> None:
    gang = gang_for_job(_job([_task("m", 0), _task("w", 2)]), TOPOLOGY)
    assert [task["name"] for task in gang["tasks"]] == ["w"]
    with pytest.raises(ValueError, match=r"spec\.tasks: every task has 0 replicas"):
        gang_for_job(_job([_task("m", 0)]), TOPOLOGY)
