"""The Job controller's pure parts: the PodGroup it asks for, which jobs are its own, and that
a Job's tier means the same label to the controller and to crdkit's scheduler. (The whole loop
runs on the real apiserver in tests/integration/examples.)"""

from __future__ import annotations

from typing import Any

import pytest
from examples.gang_scheduler.job_stream import LLAMA3_8B_FINETUNE, manifest
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.operator import (
    POD_SCHEDULER_NAME,
    VolcanoJobReconciler,
    check_tiers,
    honored_condition,
    podgroup_spec,
)
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.deploy.rbac import rbac_rules
from crdkit.scheduling import GangScheduler, VolcanoPodGroup
from crdkit.scheduling.gangs import tier_level

TOPOLOGY = TopologyConfig()
LEAF, SPINE, ZONE = TOPOLOGY.tier_labels


def _job(**spec: Any) -> Job:
    data = manifest(LLAMA3_8B_FINETUNE)
    data["metadata"] = {"name": "j", "namespace": "ns", "uid": "u1"}
    data["spec"].update(spec)
    return Job.model_validate(data)


def test_the_finalizer_name_is_domain_qualified() -> None:
    assert VolcanoJobReconciler.finalizer_name() == "batch.volcano.sh/gang-scheduler"


def test_the_podgroup_carries_the_jobs_gang_rules() -> None:
    spec = podgroup_spec(_job())
    assert spec == {
        "minMember": 16,
        "minTaskMember": {"master": 1, "worker": 15},
        "queue": "default",
        "priorityClassName": "training-high",
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }
    VolcanoPodGroup.model_validate({"metadata": {"name": "j"}, "spec": spec})  # a valid one


def test_the_job_minimum_and_a_soft_topology_reach_the_podgroup() -> None:
    spec = podgroup_spec(
        _job(minAvailable=4, networkTopology={"mode": "soft"}, priorityClassName=None)
    )
    assert spec["minMember"] == 4
    assert spec["networkTopology"] == {"mode": "soft"}
    assert spec["queue"] == "default"  # the CRD's default, as on every stored Job
    assert "priorityClassName" not in spec
    no_topology = dict(manifest(LLAMA3_8B_FINETUNE)["spec"])
    del no_topology["networkTopology"]
    assert "networkTopology" not in podgroup_spec(
        Job.model_validate({"metadata": {"name": "j"}, "spec": no_topology})
    )


@pytest.mark.parametrize("tier", [1, 2, 3])
def test_a_jobs_tier_is_the_same_label_for_the_controller_and_the_scheduler(tier: int) -> None:
    reconciler = VolcanoJobReconciler(TOPOLOGY)
    assert reconciler.scheduler.levels == [ZONE, SPINE, LEAF]  # widest first
    assert tier_level(reconciler.scheduler.levels, tier, "t") == TOPOLOGY.label_for_tier(tier)


def test_a_tier_numbering_the_scheduler_would_read_differently_is_refused() -> None:
    # The scheduler leaves the hostname out of its tiers; the example would count it as tier 1.
    odd = TopologyConfig(("kubernetes.io/hostname", "example.com/rack"))
    with pytest.raises(ValueError, match=r"tier 1: the scheduler reads it as 'example\.com/rack'"):
        check_tiers(odd, odd.placer_levels)


def test_the_scheduler_is_in_process_and_named_in_every_pod() -> None:
    reconciler = VolcanoJobReconciler(TOPOLOGY, node_selector="pool=a")
    assert isinstance(reconciler.scheduler, GangScheduler)
    assert reconciler.scheduler.name == POD_SCHEDULER_NAME
    assert reconciler.scheduler.pod_groups == ("volcano",)
    assert reconciler.scheduler.node_selector == "pool=a"
    assert VolcanoJobReconciler.runnables == (GangScheduler,)


def test_jobs_of_other_schedulers_are_left_alone() -> None:
    reconciler = VolcanoJobReconciler(TOPOLOGY)
    assert reconciler._ours(_job())
    assert reconciler._ours(_job(schedulerName=None))  # Volcano's default
    assert not reconciler._ours(_job(schedulerName="default-scheduler"))


def test_a_tier_the_cluster_lacks_names_the_field() -> None:
    job = _job(networkTopology={"mode": "hard", "highestTierAllowed": 4})
    with pytest.raises(
        ValueError, match=r"spec\.networkTopology\.highestTierAllowed: tier 4 does not exist"
    ):
        VolcanoJobReconciler(TOPOLOGY)._validate(job)


def test_a_job_asking_for_what_the_controller_does_not_do_is_told_so() -> None:
    job = _job(
        ttlSecondsAfterFinished=30, policies=[{"event": "PodEvicted", "action": "RestartJob"}]
    )
    job.metadata.generation = 2
    condition = honored_condition(job)
    assert (condition.type, condition.status, condition.reason) == (
        "Honored",
        "False",
        "NotHonored",
    )
    assert condition.message == (
        "kept, but not acted on by this controller: spec.policies, spec.ttlSecondsAfterFinished"
    )
    assert condition.observed_generation == 2


def test_a_job_the_controller_fully_acts_on_is_honored() -> None:
    condition = honored_condition(_job())
    assert (condition.status, condition.reason) == ("True", "Honored")
    assert condition.message == "every field set is acted on"


def test_a_job_without_tasks_is_invalid_naming_the_field() -> None:
    job = Job.model_validate({"metadata": {"name": "j"}, "spec": {}})
    with pytest.raises(ValueError, match=r"spec\.tasks: the Job has no tasks"):
        VolcanoJobReconciler(TOPOLOGY)._validate(job)


def test_gen_rbac_grants_what_the_controller_and_its_scheduler_do() -> None:
    granted: dict[tuple[str, str], set[str]] = {}
    for rule in rbac_rules([VolcanoJobReconciler])[""]:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                granted.setdefault((group, resource), set()).update(rule["verbs"])
    assert {"create", "delete", "watch"} <= granted[("", "pods")]
    assert "create" in granted[("", "pods/binding")]
    assert {"create", "patch", "delete", "watch"} <= granted[("scheduling.volcano.sh", "podgroups")]
    assert "update" in granted[("batch.volcano.sh", "jobs/status")]


class _Added:
    """What a Manager is given by ``setup``: the runnables it would run."""

    def __init__(self) -> None:
        self.runnables: list[object] = []

    def add_runnable(self, runnable: object) -> None:
        self.runnables.append(runnable)


def test_the_in_process_scheduler_is_added_by_default() -> None:
    reconciler = VolcanoJobReconciler(TOPOLOGY)
    manager = _Added()
    reconciler.setup(manager)  # type: ignore[arg-type]  # only add_runnable is called
    assert manager.runnables == [reconciler.scheduler]


def test_without_its_scheduler_the_pods_name_the_platforms_and_nothing_is_added() -> None:
    reconciler = VolcanoJobReconciler(
        TOPOLOGY, pod_scheduler_name="crdkit-gang", run_scheduler=False
    )
    assert reconciler.scheduler is None
    manager = _Added()
    reconciler.setup(manager)  # type: ignore[arg-type]
    assert manager.runnables == []
    assert reconciler.pod_scheduler_name == "crdkit-gang"
    # A Job naming the scheduler its pods go to is ours, as are Volcano's default names.
    assert reconciler._ours(_job(schedulerName="crdkit-gang"))
    assert reconciler._ours(_job(schedulerName="volcano"))
    assert not reconciler._ours(_job(schedulerName="default-scheduler"))


def test_a_node_selector_without_the_in_process_scheduler_is_refused() -> None:
    with pytest.raises(ValueError, match="node_selector: only the in-process scheduler"):
        VolcanoJobReconciler(TOPOLOGY, node_selector="pool=a", run_scheduler=False)
