from __future__ import annotations

from typing import Any

import pytest
from examples.gang_scheduler.job_state import (
    PodCounts,
    count_pods,
    derive_phase,
    min_available,
    placement_of,
)
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.resources import Pod
from factories import pod


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
    return pod(namespace=None, container=None, node=node, phase=phase)


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


TOPOLOGY = TopologyConfig()
LEAF, SPINE, ZONE = TOPOLOGY.tier_labels


def _bound(task: str, index: int, node: str) -> Pod:
    return Pod.model_validate(
        {
            "metadata": {
                "name": f"j-{task}-{index}",
                "labels": {"volcano.sh/task-spec": task},
                "annotations": {"volcano.sh/task-index": str(index)},
            },
            "spec": {"nodeName": node},
        }
    )


def _labels(leaf: str, spine: str = "s0", zone: str = "z0") -> dict[str, str]:
    return {LEAF: leaf, SPINE: spine, ZONE: zone}


def _two_task_job() -> Job:
    return Job.model_validate(
        {
            "metadata": {"name": "j", "namespace": "ns"},
            "spec": {"tasks": [{"name": "master", "replicas": 1}, {"name": "w", "replicas": 11}]},
        }
    )


def test_a_placement_under_one_leaf_is_tier_one_with_every_task_in_index_order() -> None:
    nodes = {"n1": _labels("l1"), "n2": _labels("l1")}
    # Index 10 sorts after 2: pods are ordered by their index, not their name.
    pods = [_bound("w", 10, "n2"), _bound("w", 2, "n1"), _bound("master", 0, "n1")]
    record = placement_of(_two_task_job(), pods, nodes, TOPOLOGY)
    assert (record.tier, record.domain_name) == (1, "l1")
    assert record.domain == {LEAF: "l1", SPINE: "s0", ZONE: "z0"}
    assert [(t.name, t.nodes) for t in record.tasks] == [("master", ["n1"]), ("w", ["n1", "n2"])]


def test_a_placement_across_leaves_names_the_spine_and_across_zones_no_tier() -> None:
    nodes = {"a": _labels("l0"), "b": _labels("l1"), "c": _labels("l9", "s9", "z9")}
    spine = placement_of(_job(), [_bound("w", 0, "a"), _bound("w", 1, "b")], nodes, TOPOLOGY)
    assert (spine.tier, spine.domain_name, spine.domain) == (2, "s0", {SPINE: "s0", ZONE: "z0"})
    wide = placement_of(_job(), [_bound("w", 0, "a"), _bound("w", 1, "c")], nodes, TOPOLOGY)
    assert (wide.tier, wide.domain_name, wide.domain) == (None, None, {})


def test_a_node_without_labels_leaves_the_domain_unknown() -> None:
    record = placement_of(_job(), [_bound("w", 0, "gone")], {}, TOPOLOGY)
    assert (record.tier, record.domain) == (None, {})
    assert record.tasks[0].nodes == ["gone"]
