"""crdkit.scheduling.groups.kubernetes: which pods join Kubernetes' PodGroup, the policy read
from it and its Workload template (each bad field refused by name), and the
PodGroupInitiallyScheduled condition it is given."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

import factories
from crdkit.client.errors import ConfigError
from crdkit.resources import PodGroup, Workload
from crdkit.scheduling.cli import _pod_group_apis
from crdkit.scheduling.gangs import PriorityRule
from crdkit.scheduling.groups import GROUP_APIS, GroupCounts, pod_group_of
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL
from crdkit.scheduling.groups.crds import pod_group_crd_text, pod_group_crds
from crdkit.scheduling.groups.kubernetes import INITIALLY_SCHEDULED, KubernetesApi
from crdkit.testing import FakeCluster
from factories import kubernetes_podgroup

API = KubernetesApi()
LEVELS = ["example.com/spine", "example.com/leaf"]
LEAF = "example.com/leaf"


def workload(name: str = "train", **template: Any) -> Workload:
    return Workload.model_validate(
        {
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {
                "podGroupTemplates": [
                    {"name": "other", "schedulingPolicy": {"basic": {}}},
                    {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}}, **template},
                ]
            },
        }
    )


REF = {"workloadName": "train", "templateName": "workers"}


def test_a_pod_joins_by_its_spec_and_the_older_signals_still_win() -> None:
    assert GROUP_APIS["kubernetes"] is not None
    joined = factories.pod("p", pod_group=("kubernetes", "g"))
    assert pod_group_of(joined) == ("kubernetes", "g")
    assert pod_group_of({"spec": {"schedulingGroup": {"podGroupName": "g"}}}) == ("kubernetes", "g")
    # An empty name is no group, as upstream reads it.
    assert pod_group_of({"spec": {"schedulingGroup": {"podGroupName": ""}}}) is None
    assert pod_group_of({"spec": {"schedulingGroup": {}}}) is None
    both = factories.pod(
        "p", labels={COSCHEDULING_POD_GROUP_LABEL: "c"}, pod_group=("kubernetes", "g")
    )
    assert pod_group_of(both) == ("coscheduling", "c")


def test_a_gang_needs_min_count_and_a_basic_group_one_pod() -> None:
    assert API.policy(kubernetes_podgroup("g", 3), LEVELS).min_member == 3
    basic = API.policy(kubernetes_podgroup("g", None, topology=LEAF), LEVELS)
    assert (basic.min_member, basic.topology) == (1, {"mode": "required", "level": LEAF})


def test_the_topology_key_is_a_required_level() -> None:
    policy = API.policy(kubernetes_podgroup("g", 2, topology=LEAF), LEVELS)
    assert policy.topology == {"mode": "required", "level": LEAF}
    host = API.policy(kubernetes_podgroup("g", 2, topology="kubernetes.io/hostname"), LEVELS)
    assert host.topology == {"mode": "required", "level": "kubernetes.io/hostname"}
    assert API.policy(kubernetes_podgroup("g", 2), LEVELS).topology is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"schedulingConstraints": {"topology": [{"key": LEAF}, {"key": "example.com/spine"}]}},
            r"^spec\.schedulingConstraints\.topology: 2 constraints",
        ),
        (
            {"schedulingConstraints": {"topology": [{"key": "example.com/rack"}]}},
            r"^spec\.schedulingConstraints\.topology\[0\]\.key: 'example\.com/rack' is not one "
            r"of the scheduler's levels \(example\.com/spine, example\.com/leaf\)",
        ),
        (
            {"schedulingConstraints": {"topology": [{}]}},
            r"^spec\.schedulingConstraints\.topology\[0\]\.key: a node label key is required",
        ),
        ({"schedulingPolicy": {}}, r"^spec\.schedulingPolicy: exactly one of basic and gang"),
        (
            {"schedulingPolicy": {"basic": {}, "gang": {"minCount": 2}}},
            r"^spec\.schedulingPolicy: exactly one",
        ),
        ({"workloadRef": REF}, r"^spec\.workloadRef: Workload ml/train does not exist"),
    ],
)
def test_bad_input_is_refused_naming_the_field(spec: dict[str, Any], message: str) -> None:
    podgroup = PodGroup.model_validate(
        {
            "metadata": {"name": "g", "namespace": "ml"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, **spec},
        }
    )
    with pytest.raises(ValueError, match=message):
        API.policy(podgroup, LEVELS)


def test_the_workload_template_fills_in_what_the_podgroup_leaves_unset() -> None:
    template = workload(
        schedulingConstraints={"topology": [{"key": LEAF}]}, priorityClassName="train-high"
    )
    podgroup = kubernetes_podgroup("g", 4, workloadRef=REF)
    assert API.companion_of(podgroup) == "train"
    policy = API.policy(podgroup, LEVELS, template)
    assert policy.topology == {"mode": "required", "level": LEAF}
    assert policy.priority == PriorityRule(
        "Workload ml/train spec.podGroupTemplates[workers].priorityClassName", "train-high"
    )
    # The PodGroup is the instance: its own fields win over its template's.
    own = kubernetes_podgroup(
        "g",
        4,
        topology="example.com/spine",
        workloadRef=REF,
        priorityClassName="low",
        priority=10,
    )
    policy = API.policy(own, LEVELS, template)
    assert policy.topology == {"mode": "required", "level": "example.com/spine"}
    assert policy.priority == PriorityRule("spec.priorityClassName", "low", 10)


def test_a_bad_template_is_refused_naming_where_it_is() -> None:
    podgroup = kubernetes_podgroup("g", 4, workloadRef={**REF, "templateName": "ps"})
    with pytest.raises(
        ValueError, match=r"^spec\.workloadRef\.templateName: Workload ml/train has no template "
    ):
        API.policy(podgroup, LEVELS, workload())
    bad_key = workload(schedulingConstraints={"topology": [{"key": "example.com/rack"}]})
    with pytest.raises(
        ValueError,
        match=r"^Workload ml/train spec\.podGroupTemplates\[workers\]\.schedulingConstraints"
        r"\.topology\[0\]\.key: 'example\.com/rack'",
    ):
        API.policy(kubernetes_podgroup("g", 4, workloadRef=REF), LEVELS, bad_key)


def test_the_pods_must_have_the_groups_priority() -> None:
    rule = API.policy(
        kubernetes_podgroup("g", 2, priorityClassName="high", priority=1000), LEVELS
    ).priority
    assert rule is not None
    same = factories.pod("a", priority=1000, priorityClassName="high")
    assert rule.refusal([same]) is None
    other_class = factories.pod("b", priority=1000, priorityClassName="also-high")
    refusal = rule.refusal([same, other_class])
    assert refusal is not None
    assert refusal.startswith(
        "spec.priorityClassName: the group's priority class is 'high' and pod ml/b's is 'also-high'"
    )
    changed_value = factories.pod("c", priority=7, priorityClassName="high")
    assert rule.refusal([changed_value]) == (
        "spec.priorityClassName: the group's priority is 1000 and pod ml/c's is 7: a gang has "
        "one priority"
    )
    # A group that names no class takes its pods' priority.
    assert API.policy(kubernetes_podgroup("g", 2, priority=0), LEVELS).priority is None


def condition(podgroup: PodGroup, **counts: int) -> dict[str, Any]:
    waiting = counts.pop("waiting", 0)
    told = ("Unschedulable", "no leaf fits the gang") if waiting else None
    status = API.status(podgroup, GroupCounts(**counts), False, told)
    found = [c for c in status.get("conditions", []) if c["type"] == INITIALLY_SCHEDULED]
    assert len(found) <= 1
    return found[0] if found else {}


def test_the_condition_says_why_the_gang_waits_and_then_that_it_is_scheduled() -> None:
    podgroup = kubernetes_podgroup("g", 2)
    assert condition(podgroup, pods=2) == {}  # nothing said yet: nothing written
    waiting = condition(podgroup, pods=2, waiting=1)
    assert (waiting["status"], waiting["reason"], waiting["message"]) == (
        "False",
        "Unschedulable",
        "Unschedulable: no leaf fits the gang",
    )
    scheduled = condition(podgroup, pods=2, bound=2)
    assert (scheduled["status"], scheduled["reason"]) == ("True", "Scheduled")
    assert scheduled["lastTransitionTime"].endswith("Z")


def test_scheduled_is_for_good_and_other_conditions_are_kept() -> None:
    stamp = "2026-01-02T03:04:05Z"
    podgroup = kubernetes_podgroup("g", 2)
    podgroup = PodGroup.model_validate(
        {
            **podgroup.to_dict(),
            "status": {
                "conditions": [
                    {
                        "type": INITIALLY_SCHEDULED,
                        "status": "True",
                        "reason": "Scheduled",
                        "message": "2 pods bound",
                        "lastTransitionTime": stamp,
                    },
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "PreemptionByScheduler",
                        "message": "m",
                        "lastTransitionTime": stamp,
                    },
                ]
            },
        }
    )
    # The gang lost a pod and waits again: upstream never turns the condition back to False.
    status = API.status(podgroup, GroupCounts(pods=2, bound=1), False, ("Unschedulable", "x"))
    assert [c["type"] for c in status["conditions"]] == [INITIALLY_SCHEDULED, "DisruptionTarget"]
    assert status["conditions"][0]["status"] == "True"


def test_a_condition_that_stays_keeps_its_transition_time() -> None:
    stamp = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    podgroup = kubernetes_podgroup("g", 2)
    podgroup = PodGroup.model_validate(
        {
            **podgroup.to_dict(),
            "status": {
                "conditions": [
                    {
                        "type": INITIALLY_SCHEDULED,
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "old",
                        "lastTransitionTime": stamp.isoformat(),
                    }
                ]
            },
        }
    )
    again = condition(podgroup, pods=2, waiting=1)
    assert (again["message"], again["lastTransitionTime"]) == (
        "Unschedulable: no leaf fits the gang",
        "2026-01-02T03:04:05Z",
    )


def test_the_built_in_api_has_no_crd_and_says_how_to_turn_it_on() -> None:
    assert API.crd_file is None
    assert "GenericWorkload=true" in API.unserved_hint
    with pytest.raises(ValueError, match=r"^kubernetes: turn it on in kube-apiserver"):
        pod_group_crd_text("kubernetes")
    assert pod_group_crds(["kubernetes"]) == []
    assert ("scheduling.k8s.io", "workloads", ("get", "list", "watch")) in API.rbac


async def test_asking_for_it_where_it_is_not_served_says_what_to_turn_on_in_one_line() -> None:
    async with FakeCluster().client() as client:
        with pytest.raises(ConfigError) as refused:
            await _pod_group_apis(client, ["kubernetes"])
    message = str(refused.value)
    assert "\n" not in message
    assert message == (
        "--pod-groups: the cluster does not serve the kubernetes PodGroup API "
        "(scheduling.k8s.io/v1beta1); turn it on in kube-apiserver v1.37+ (built in, no CRD: "
        "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true "
        "--runtime-config=scheduling.k8s.io/v1beta1=true) or leave it out"
    )
