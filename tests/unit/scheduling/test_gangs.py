"""Pending pods as a placer gang: tasks by role and shape, minimums, topology sources."""

from __future__ import annotations

from typing import Any

import pytest

import factories
from crdkit.placer import Cluster
from crdkit.resources import Pod
from crdkit.scheduling.gangs import (
    KUEUE_PREFERRED,
    KUEUE_REQUIRED,
    KUEUE_SLICE_REQUIRED,
    KUEUE_SLICE_SIZE,
    GangPolicy,
    build_gang,
    kueue_topology,
    pod_role,
    tier_level,
)

LEVELS = ["example.com/block", "example.com/rack"]


def pod(
    name: str,
    *,
    gpu: int = 8,
    role: str | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> Pod:
    return factories.pod(
        name,
        labels={"training.kubeflow.org/replica-type": role} if role else {},
        annotations=annotations or {},
        container="pytorch",
        requests={"cpu": "8"},
        gpus=gpu,
        **spec,
    )


def test_pods_of_one_role_and_shape_are_one_task_and_roles_keep_their_names() -> None:
    pods = [
        pod("job-master-0", role="Master"),
        *(pod(f"job-worker-{i}", role="Worker") for i in range(3)),
    ]
    request = build_gang("g", pods, needed=4, policy=GangPolicy(min_member=4), levels=LEVELS)
    tasks = {task["name"]: task for task in request.gang["tasks"]}
    assert set(tasks) == {"master", "worker"}
    assert tasks["worker"]["replicas"] == 3
    assert tasks["worker"]["requests"] == {"cpu": "8", "nvidia.com/gpu": "8"}
    assert "minAvailable" not in tasks["worker"]  # every pod is needed
    assert [p.metadata.name for p in request.pods["worker"]] == [
        f"job-worker-{i}" for i in range(3)
    ]
    Cluster(LEVELS).compile(request.gang)  # a valid contract gang


def test_one_role_with_two_shapes_becomes_two_tasks() -> None:
    pods = [pod("a", role="Worker"), pod("b", role="Worker", gpu=4)]
    request = build_gang("g", pods, needed=2, policy=GangPolicy(min_member=2), levels=LEVELS)
    assert sorted(t["name"] for t in request.gang["tasks"]) == ["worker", "worker-2"]


def test_fewer_needed_than_pending_sets_minimums_that_add_up_to_needed() -> None:
    pods = [pod("m", role="Master"), *(pod(f"w{i}", role="Worker") for i in range(5))]
    policy = GangPolicy(min_member=4, min_task_member={"master": 1, "worker": 2})
    request = build_gang("g", pods, needed=4, policy=policy, levels=LEVELS)
    minimums = {t["name"]: t["minAvailable"] for t in request.gang["tasks"]}
    assert minimums == {"master": 1, "worker": 3}


def test_the_podgroup_topology_wins_over_kueue_annotations() -> None:
    annotated = pod("a", annotations={KUEUE_REQUIRED: "example.com/block"})
    from_group = build_gang(
        "g",
        [annotated],
        needed=1,
        policy=GangPolicy(topology={"mode": "required", "level": "example.com/rack"}),
        levels=LEVELS,
    )
    assert from_group.gang["topology"] == {"mode": "required", "level": "example.com/rack"}
    from_pods = build_gang("g", [annotated], needed=1, policy=GangPolicy(), levels=LEVELS)
    assert from_pods.gang["topology"] == {"mode": "required", "level": "example.com/block"}
    default = build_gang(
        "g",
        [pod("b")],
        needed=1,
        policy=GangPolicy(),
        levels=LEVELS,
        default_topology={"mode": "preferred", "level": "example.com/rack"},
    )
    assert default.gang["topology"]["mode"] == "preferred"


def test_kueue_annotations_read_as_topology_and_slices() -> None:
    annotated = pod(
        "a",
        annotations={
            KUEUE_PREFERRED: "example.com/block",
            KUEUE_SLICE_REQUIRED: "example.com/rack",
            KUEUE_SLICE_SIZE: "2",
        },
    )
    assert kueue_topology(annotated, LEVELS) == (
        {"mode": "preferred", "level": "example.com/block"},
        {"level": "example.com/rack", "size": 2},
    )


def test_an_unknown_kueue_level_names_the_pod_and_the_annotation() -> None:
    bad = pod("a", annotations={KUEUE_REQUIRED: "example.com/zone"})
    with pytest.raises(
        ValueError,
        match=r"pod ml/a: metadata.annotations\[kueue.x-k8s.io/podset-required-topology\]",
    ):
        build_gang("g", [bad], needed=1, policy=GangPolicy(), levels=LEVELS)


def test_simple_required_node_affinity_becomes_a_selector_and_richer_affinity_is_refused() -> None:
    term = {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]}]}
    simple = pod(
        "a",
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        },
    )
    request = build_gang("g", [simple], needed=1, policy=GangPolicy(), levels=LEVELS)
    assert request.gang["tasks"][0]["nodeSelector"] == {"gpu": "h100"}
    term = {"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["a100"]}]}
    rich = pod(
        "b",
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        },
    )
    with pytest.raises(ValueError, match="only `In` with one value"):
        build_gang("g", [rich], needed=1, policy=GangPolicy(), levels=LEVELS)


def test_volcano_tiers_count_from_the_narrowest_level() -> None:
    assert tier_level(LEVELS, 1, "f") == "example.com/rack"
    assert tier_level(LEVELS, 2, "f") == "example.com/block"
    assert tier_level(LEVELS, 9, "f") == "example.com/block"
    with pytest.raises(ValueError, match="f: must be at least 1"):
        tier_level(LEVELS, 0, "f")


def test_needed_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="needed"):
        build_gang("g", [pod("a")], needed=2, policy=GangPolicy(), levels=LEVELS)


def test_pod_role_reads_the_task_keys_in_order() -> None:
    volcano = Pod.model_validate(
        {"metadata": {"name": "p", "annotations": {"volcano.sh/task-spec": "Worker"}}}
    )
    assert pod_role(volcano) == "worker"
    lws = Pod.model_validate(
        {"metadata": {"name": "p", "labels": {"leaderworkerset.sigs.k8s.io/worker-index": "0"}}}
    )
    assert pod_role(lws) == "leader"
    assert pod_role(Pod.model_validate({"metadata": {"name": "p"}})) == "pods"


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (
            {
                "affinity": {
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}
                }
            },
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}}},
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "rack"}]},
            r"spec.topologySpreadConstraints\[0\]",
        ),
    ],
)
def test_hard_inter_pod_rules_are_refused_with_the_field_named(
    spec: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        build_gang("g", [pod("a", **spec)], needed=1, policy=GangPolicy(), levels=LEVELS)


def test_soft_inter_pod_rules_are_left_out() -> None:
    soft = pod(
        "a",
        affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{}]}},
        topologySpreadConstraints=[
            {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway"}
        ],
    )
    request = build_gang("g", [soft], needed=1, policy=GangPolicy(), levels=LEVELS)
    assert request.gang["tasks"][0]["replicas"] == 1


def test_the_gang_carries_its_requests_in_milli_units_and_compiles_with_them() -> None:
    pods = [
        pod("job-master-0", role="Master", gpu=0),
        *(pod(f"job-worker-{i}", role="Worker") for i in range(2)),
    ]
    request = build_gang("g", pods, needed=3, policy=GangPolicy(min_member=3), levels=LEVELS)
    assert request.milli == {
        "master": {"cpu": 8000, "nvidia.com/gpu": 0},
        "worker": {"cpu": 8000, "nvidia.com/gpu": 8000},
    }
    cluster = Cluster(LEVELS)
    assert cluster.compile(request.gang, milli=request.milli) == cluster.compile(request.gang)


def ranked_pod(name: str, role: str, selector: dict[str, str], gpu: int = 1) -> Pod:
    """A pod of job ``llama`` with a one-rank-per-node rule over ``selector``."""
    made = pod(
        name,
        gpu=gpu,
        role=role,
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": selector},
                    }
                ]
            }
        },
    )
    made.metadata.labels["job"] = "llama"
    return made


def test_a_rank_rule_over_one_task_limits_that_task_and_over_the_gang_limits_the_gang() -> None:
    workers = {"job": "llama", "training.kubeflow.org/replica-type": "Worker"}
    pods = [
        pod("llama-master-0", role="Master", gpu=1),
        *(ranked_pod(f"llama-worker-{i}", "Worker", workers) for i in range(3)),
    ]
    pods[0].metadata.labels["job"] = "llama"
    request = build_gang("g", pods, needed=4, policy=GangPolicy(), levels=LEVELS)
    tasks = {t["name"]: t for t in request.gang["tasks"]}
    assert tasks["worker"]["maxPerNode"] == 1
    assert "maxPerNode" not in tasks["master"]
    assert "maxPerNode" not in request.gang
    assert set(request.rules) == {"worker"}

    everyone = [ranked_pod(f"llama-{r}-0", r, {"job": "llama"}) for r in ("Master", "Worker")]
    request = build_gang("g", everyone, needed=2, policy=GangPolicy(), levels=LEVELS)
    assert request.gang["maxPerNode"] == 1
    assert all("maxPerNode" not in t for t in request.gang["tasks"])
    # The limits reach the placer: two one-GPU pods, one per node.
    cluster = Cluster.from_snapshot(
        {
            "levels": LEVELS,
            "nodes": [
                {
                    "name": n,
                    "labels": {"example.com/block": "b", "example.com/rack": "r"},
                    "allocatable": {"cpu": "96", "nvidia.com/gpu": 8},
                }
                for n in ("n1", "n2")
            ],
        }
    )
    placement = cluster.place(request.gang)
    assert sorted(a.node for a in placement.assignments) == ["n1", "n2"]


def test_a_rank_rule_over_part_of_a_gang_is_refused_naming_the_pod_and_field() -> None:
    # The workers' rule names the master too (same job), but not the other worker task.
    pods = [
        pod("llama-master-0", role="Master", gpu=1),
        ranked_pod("llama-worker-0", "Worker", {"job": "llama", "tier": "a"}),
        ranked_pod("llama-worker-1", "Worker", {"job": "llama", "tier": "a"}, gpu=2),
    ]
    pods[0].metadata.labels.update({"job": "llama", "tier": "a"})
    for worker in pods[1:]:
        worker.metadata.labels["tier"] = "a"
    pods.append(pod("llama-ps-0", role="PS", gpu=0))
    with pytest.raises(ValueError, match=r"^pod ml/llama-worker-0: spec\.affinity\.podAnti"):
        build_gang("g", pods, needed=4, policy=GangPolicy(), levels=LEVELS)
