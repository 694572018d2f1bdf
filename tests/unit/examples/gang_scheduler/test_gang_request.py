"""The minimum rule of a Job's tasks (what its PodGroup's ``minTaskMember`` says)."""

from __future__ import annotations

from typing import Any

from examples.gang_scheduler.gang_request import task_minimums
from examples.gang_scheduler.models import Job


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


def test_zero_replica_tasks_are_left_out() -> None:
    assert task_minimums(_job([_task("m", 0), _task("w", 2)])) == {"w": 2}
