"""benches/queues_kueue.py's pure pieces: the Kueue objects that carry the queues bench's quotas
(the cohort's and the teams' nominal quotas add up to the cluster, the weights are the stream's,
TAS or not), the pods of a job (one Kueue pod group per job, replacements in the same group),
Kueue's configuration (fair sharing on, the install's client limits), and the
admitted-but-not-placeable count on hand-made attempts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _benches import load_bench

kueue = load_bench("queues_kueue")
stream = load_bench("_queue_stream")


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def gpu_quota(obj: dict[str, Any]) -> int:
    [group] = obj["spec"]["resourceGroups"]
    [flavor] = group["flavors"]
    [resource] = flavor["resources"]
    assert resource["name"] == "nvidia.com/gpu"
    assert flavor["name"] == kueue.FLAVOR
    return int(resource["nominalQuota"])


def test_the_cohort_and_the_teams_quotas_add_up_to_the_cluster() -> None:
    for nodes in (32, 256, 1024):
        objects = kueue.queue_objects(nodes)
        [cohort] = by_kind(objects, "Cohort")
        queues = by_kind(objects, "ClusterQueue")
        assert [q["metadata"]["name"] for q in queues] == [t.name for t in stream.TEAMS]
        quarter = stream.nominal_gpus(nodes)
        assert gpu_quota(cohort) == quarter
        assert all(gpu_quota(q) == quarter for q in queues)
        assert gpu_quota(cohort) + sum(gpu_quota(q) for q in queues) == nodes * 8


def test_every_team_queue_is_in_the_cohort_with_its_weight_and_reclaims() -> None:
    objects = kueue.queue_objects(64)
    for team, queue in zip(stream.TEAMS, by_kind(objects, "ClusterQueue"), strict=True):
        spec = queue["spec"]
        assert spec["cohortName"] == stream.COHORT
        assert float(spec["fairSharing"]["weight"]) == team.weight
        assert spec["preemption"] == {
            "reclaimWithinCohort": "Any",
            "withinClusterQueue": "LowerPriority",
        }
    local = by_kind(objects, "LocalQueue")
    assert [(q["metadata"]["name"], q["spec"]["clusterQueue"]) for q in local] == [
        (t.name, t.name) for t in stream.TEAMS
    ]
    assert {q["metadata"]["namespace"] for q in local} == {"jobs"}
    assert all(o["apiVersion"] == "kueue.x-k8s.io/v1beta2" for o in objects)


def test_the_flavor_has_the_leaf_topology_only_with_tas() -> None:
    objects = kueue.queue_objects(32)
    [topology] = by_kind(objects, "Topology")
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    # Kueue allows the hostname only as the lowest level.
    assert levels == ["topology.crdkit.io/leaf", "kubernetes.io/hostname"]
    [flavor] = by_kind(objects, "ResourceFlavor")
    assert flavor["spec"]["topologyName"] == topology["metadata"]["name"]
    assert flavor["spec"]["nodeLabels"]  # Kueue requires them of a flavor with a topology
    # The Topology is created before the flavor that names it.
    assert objects.index(topology) < objects.index(flavor)
    plain = kueue.queue_objects(32, tas=False)
    assert not by_kind(plain, "Topology")
    [flavor] = by_kind(plain, "ResourceFlavor")
    assert "topologyName" not in flavor["spec"]


def test_a_job_is_one_pod_group_in_its_teams_queue() -> None:
    job = stream.TeamJob("team-c-j0003", 8, 30.0, team="team-c")
    pods = kueue.pod_manifests(job)
    assert [p["metadata"]["name"] for p in pods] == [f"team-c-j0003-{i}" for i in range(8)]
    for pod in pods:
        labels, notes = pod["metadata"]["labels"], pod["metadata"]["annotations"]
        assert labels["kueue.x-k8s.io/queue-name"] == "team-c"
        assert labels["kueue.x-k8s.io/pod-group-name"] == "team-c-j0003"
        assert notes["kueue.x-k8s.io/pod-group-total-count"] == "8"
        # 8 pods: one leaf required.
        assert notes["kueue.x-k8s.io/podset-required-topology"] == "topology.crdkit.io/leaf"
        [container] = pod["spec"]["containers"]
        assert container["resources"]["requests"] == {"nvidia.com/gpu": "8"}
        assert "schedulerName" not in pod["spec"]  # kube-scheduler's
    small = kueue.pod_manifests(stream.TeamJob("team-a-j0000", 2, 30.0, team="team-a"))
    notes = small[0]["metadata"]["annotations"]
    assert notes["kueue.x-k8s.io/podset-preferred-topology"] == "topology.crdkit.io/leaf"
    assert "kueue.x-k8s.io/podset-required-topology" not in notes
    plain = kueue.pod_manifests(job, tas=False)[0]["metadata"]["annotations"]
    assert set(plain) == {"kueue.x-k8s.io/pod-group-total-count"}


def test_replacements_join_the_same_group_under_new_names() -> None:
    job = stream.TeamJob("team-a-j0001", 4, 30.0, team="team-a")
    again = kueue.pod_manifests(job, 2, indices=[1, 3])
    assert [p["metadata"]["name"] for p in again] == ["team-a-j0001-r2-1", "team-a-j0001-r2-3"]
    assert {p["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] for p in again} == {
        "team-a-j0001"
    }
    assert {
        p["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] for p in again
    } == {"4"}


def test_the_configuration_turns_fair_sharing_on_with_the_installs_limits() -> None:
    shipped = {"clientConnection": {"qps": 50, "burst": 100}, "controller": {"x": 1}, "other": 2}
    config = kueue.kueue_configuration(9555, Path("/tmp/certs"), shipped)
    assert config["fairSharing"]["preemptionStrategies"]
    assert config["webhook"]["port"] == 9555
    assert config["webhook"]["certDir"] == "/tmp/certs"
    assert config["clientConnection"] == {"qps": 50, "burst": 100}
    assert config["controller"] == {"x": 1}
    assert "other" not in config
    assert config["integrations"]["frameworks"] == ["pod"]
    hooks = kueue.pod_webhook(9555, b"CA")["webhooks"]
    assert hooks[0]["clientConfig"]["url"] == "https://127.0.0.1:9555/mutate--v1-pod"


def test_admitted_but_not_placeable_counts_stuck_or_unschedulable_attempts() -> None:
    attempt = kueue.Attempt
    placed = attempt(["a"], all_ungated=10.0, all_bound=11.0)
    slow = attempt(["b"], all_ungated=10.0, all_bound=16.5)
    refused = attempt(["c"], all_ungated=10.0, all_bound=10.5, unschedulable=True)
    never_admitted = attempt(["d"])
    evicted_soon = attempt(["e"], all_ungated=10.0, evicted=12.0)
    still_waiting = attempt(["f"], all_ungated=10.0)
    attempts = [placed, slow, refused, never_admitted, evicted_soon, still_waiting]
    # slow (6.5 s), refused, and still_waiting at the end (20 s): three.
    assert kueue.not_placeable(attempts, end=30.0) == 3
    assert kueue.not_placeable(attempts, end=14.0) == 2
