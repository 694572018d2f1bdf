from __future__ import annotations

from examples.gang_scheduler.job_stream import (
    LLAMA3_8B_FINETUNE,
    PRIORITY_CLASSES,
    demo_stream,
    manifest,
)
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.simulated_cluster import RDMA_LABEL, ClusterShape


def test_every_stream_entry_is_a_valid_job_with_a_known_priority_class() -> None:
    stream = demo_stream()
    names = [entry.name for entry in stream]
    assert len(names) == len(set(names))
    for entry in stream:
        job = Job.model_validate(entry.manifest)
        assert job.spec.priority_class_name in PRIORITY_CLASSES
        assert entry.submit_at_s >= 0
    assert [entry.submit_at_s for entry in stream] == sorted(entry.submit_at_s for entry in stream)


def test_the_headline_job_is_a_master_and_fifteen_workers_under_one_rdma_leaf() -> None:
    job = Job.model_validate(manifest(LLAMA3_8B_FINETUNE))
    assert job.metadata.name == "llama3-8b-finetune"
    assert [(task.name, task.replicas) for task in job.spec.tasks] == [
        ("master", 1),
        ("worker", 15),
    ]
    assert job.spec.min_available == 16
    assert job.spec.network_topology is not None
    assert job.spec.network_topology.mode == "hard"
    assert job.spec.network_topology.tier == 1
    for task in job.spec.tasks:
        spec = task.pod_template().spec
        assert spec.node_selector == {RDMA_LABEL: "true"}
        assert spec.containers[0].resources.requests["nvidia.com/gpu"] == "8"
    assert ClusterShape().nodes_per_leaf >= 16


def test_soft_jobs_leave_highest_tier_out_and_unconstrained_jobs_leave_topology_out() -> None:
    stream = {entry.name: entry.manifest for entry in demo_stream()}
    assert "networkTopology" not in stream["resnet50-sweep-0"]["spec"]
    assert stream["vit-h14-train"]["spec"]["networkTopology"] == {
        "mode": "hard",
        "highestTierAllowed": 2,
    }


def test_the_never_fitting_job_wants_more_nodes_than_a_leaf_has() -> None:
    stream = {entry.name: entry.manifest for entry in demo_stream()}
    job = Job.model_validate(stream["gpt-neox-20b"])
    assert sum(task.replicas for task in job.spec.tasks) > ClusterShape().nodes_per_leaf
