"""The gang scheduler's pure parts: which jobs wait, how a decision is recorded, and how node
usage reaches the Rust placer incrementally. (The whole loop is tested on the real apiserver in
tests/integration/examples.)"""

from __future__ import annotations

from typing import Any

import pytest
from examples.gang_scheduler.job_stream import LLAMA3_8B_FINETUNE, manifest
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.operator import GangScheduler
from examples.gang_scheduler.pods import plan_pods
from examples.gang_scheduler.simulated_cluster import ClusterShape, layout, node_manifest
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.placer import Placement
from crdkit.resources import Node

TOPOLOGY = TopologyConfig()
LEAF, SPINE, ZONE = TOPOLOGY.tier_labels
FINALIZER = "batch.volcano.sh/gang-scheduler"


def _job(**changes: Any) -> Job:
    data = manifest(LLAMA3_8B_FINETUNE)
    data["metadata"] = {"name": "j", "namespace": "ns", "finalizers": [FINALIZER]}
    data.update(changes)
    return Job.model_validate(data)


def test_the_finalizer_name_is_domain_qualified() -> None:
    assert GangScheduler.finalizer_name() == FINALIZER


@pytest.mark.parametrize(
    ("changes", "waits"),
    [
        ({}, True),
        ({"metadata": {"name": "j", "namespace": "ns"}}, False),  # no finalizer yet
        (
            {
                "metadata": {
                    "name": "j",
                    "namespace": "ns",
                    "finalizers": [FINALIZER],
                    "deletionTimestamp": "2026-01-01T00:00:00Z",
                }
            },
            False,
        ),
        ({"status": {"state": {"phase": "Completed"}}}, False),
        ({"status": {"state": {"phase": "Pending"}, "placement": {"tier": 1}}}, False),
        ({"status": {"state": {"phase": "Pending"}}}, True),
    ],
)
def test_which_jobs_are_candidates(changes: dict[str, Any], waits: bool) -> None:
    assert GangScheduler(TOPOLOGY)._candidate(_job(**changes)) is waits


def test_jobs_of_other_schedulers_are_left_alone() -> None:
    job = _job()
    job.spec.scheduler_name = "default-scheduler"
    assert not GangScheduler(TOPOLOGY)._candidate(job)
    assert GangScheduler(TOPOLOGY, scheduler_names=["default-scheduler"])._candidate(job)


def _placement(level: str | None, domain: dict[str, str], nodes: list[str]) -> Placement:
    return Placement.model_validate(
        {
            "gang": "ns/j",
            "status": "placed",
            "level": level,
            "domain": domain,
            "placed": {"worker": len(nodes)},
            "assignments": [{"task": "worker", "node": node, "count": 1} for node in nodes],
        }
    )


def test_a_leaf_placement_is_recorded_as_tier_one_with_the_leaf_name() -> None:
    placement = _placement(LEAF, {ZONE: "z0", SPINE: "z0-s0", LEAF: "z0-s0-l1"}, ["n1", "n2"])
    record = GangScheduler(TOPOLOGY)._placement_status(placement, plan_pods(placement))
    assert (record.tier, record.domain_name) == (1, "z0-s0-l1")
    assert record.domain == {ZONE: "z0", SPINE: "z0-s0", LEAF: "z0-s0-l1"}
    assert [(t.name, t.nodes) for t in record.tasks] == [("worker", ["n1", "n2"])]


def test_a_single_node_placement_keeps_its_leaf_and_a_spread_one_has_no_tier() -> None:
    one_node = _placement(
        "kubernetes.io/hostname",
        {ZONE: "z1", SPINE: "z1-s0", LEAF: "z1-s0-l0", "kubernetes.io/hostname": "n9"},
        ["n9"],
    )
    record = GangScheduler(TOPOLOGY)._placement_status(one_node, plan_pods(one_node))
    assert (record.tier, record.domain_name) == (1, "z1-s0-l0")
    assert "kubernetes.io/hostname" not in record.domain
    spread = _placement(None, {}, ["a", "b"])
    record = GangScheduler(TOPOLOGY)._placement_status(spread, plan_pods(spread))
    assert (record.tier, record.domain_name, record.domain) == (None, None, {})


def test_node_usage_reaches_the_placer_incrementally() -> None:
    shape = ClusterShape(zones=1, spines_per_zone=1, leaves_per_spine=2, nodes_per_leaf=2)
    scheduler = GangScheduler(TOPOLOGY)
    nodes = [Node.model_validate(node_manifest(n, shape, TOPOLOGY)) for n in layout(shape)]
    for node in nodes:
        scheduler.usage.set_node(node)
    scheduler._sync_cluster()
    assert len(scheduler.cluster) == 4
    first = nodes[0].metadata.name or ""
    scheduler.usage.assume("ns/p", first, {"nvidia.com/gpu": 8000})
    scheduler._sync_cluster()
    assert scheduler.cluster.used()[first]["nvidia.com/gpu"] == 8000
    scheduler.usage.remove_node(nodes[3].metadata.name or "")
    scheduler._sync_cluster()
    assert len(scheduler.cluster) == 3
    gang = {
        "name": "ns/g",
        "topology": {"mode": "required", "level": LEAF},
        "tasks": [{"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": 8}}],
    }
    # Leaf l0 has one free node, leaf l1 has one node left: no leaf holds two 8-GPU pods.
    assert scheduler.cluster.place(gang).status == "unschedulable"
    scheduler.usage.remove_pod("ns/p")
    scheduler._sync_cluster()
    assert scheduler.cluster.place(gang).domain[LEAF] == "z0-s0-l0"
