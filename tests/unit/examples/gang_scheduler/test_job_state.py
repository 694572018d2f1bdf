from __future__ import annotations

from typing import Any

import pytest
from examples.gang_scheduler.job_state import (
    PodCounts,
    count_pods,
    derive_phase,
    min_available,
    placement_order,
)
from examples.gang_scheduler.models import Job
from hypothesis import given
from hypothesis import strategies as st

from crdkit.resources import Pod


def _job(name: str = "j", created: str | None = None, min_avail: int = 0, replicas: int = 4) -> Job:
    metadata: dict[str, Any] = {"name": name, "namespace": "ns"}
    if created:
        metadata["creationTimestamp"] = created
    return Job.model_validate(
        {
            "metadata": metadata,
            "spec": {"minAvailable": min_avail, "tasks": [{"name": "w", "replicas": replicas}]},
        }
    )


def _pod(phase: str | None, node: str | None = "n") -> Pod:
    data: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {"nodeName": node}}
    if phase:
        data["status"] = {"phase": phase}
    return Pod.model_validate(data)


def test_count_pods_by_phase_and_binding() -> None:
    counts = count_pods(
        [_pod(None), _pod("Pending", None), _pod("Running"), _pod("Succeeded"), _pod("Failed")]
    )
    assert counts == PodCounts(pending=2, running=1, succeeded=1, failed=1, bound=2)
    assert counts.total == 5


def test_min_available_falls_back_to_the_tasks() -> None:
    assert min_available(_job(min_avail=3)) == 3
    assert min_available(_job()) == 4


@pytest.mark.parametrize(
    ("counts", "phase"),
    [
        (PodCounts(), "Pending"),
        (PodCounts(pending=3, bound=3), "Pending"),
        (PodCounts(pending=4, bound=4), "Running"),
        (PodCounts(running=2, succeeded=2, bound=2), "Running"),
        (PodCounts(succeeded=4), "Completed"),
        (PodCounts(succeeded=3, running=1, bound=1), "Running"),
        (PodCounts(failed=1, running=3, bound=3), "Failed"),
    ],
)
def test_derive_phase(counts: PodCounts, phase: str) -> None:
    assert derive_phase(_job(), counts) == phase


def test_with_a_lower_minimum_a_partial_gang_runs_and_one_failure_is_tolerated() -> None:
    job = _job(min_avail=3)
    assert derive_phase(job, PodCounts(pending=3, bound=3)) == "Running"
    assert derive_phase(job, PodCounts(failed=1, running=3, bound=3)) == "Running"
    assert derive_phase(job, PodCounts(failed=2, running=2, bound=2)) == "Failed"


def test_placement_order_is_priority_then_age_then_name() -> None:
    old = _job("b", "2026-01-01T00:00:00Z")
    new = _job("a", "2026-01-02T00:00:00Z")
    same_time = _job("c", "2026-01-01T00:00:00Z")
    urgent = _job("z", "2026-01-03T00:00:00Z")
    order = placement_order([(new, 0), (same_time, 0), (urgent, 10), (old, 0)])
    assert [job.metadata.name for job in order] == ["z", "b", "c", "a"]


@given(
    st.lists(
        st.tuples(st.integers(-5, 5), st.integers(0, 3), st.text("abc", min_size=1, max_size=3)),
        unique_by=lambda t: t[2],
        max_size=12,
    )
)
def test_placement_order_is_a_total_order_independent_of_input_order(
    entries: list[tuple[int, int, str]],
) -> None:
    jobs = [
        (_job(name, f"2026-01-0{day + 1}T00:00:00Z"), priority) for priority, day, name in entries
    ]
    forward = [job.metadata.name or "" for job in placement_order(jobs)]
    backward = [job.metadata.name or "" for job in placement_order(list(reversed(jobs)))]
    assert forward == backward
    priorities = {name: priority for priority, _, name in entries}
    assert [priorities[name] for name in forward] == sorted(priorities.values(), reverse=True)
