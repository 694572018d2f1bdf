"""crdkit.scheduling.groups: the upstream example PodGroups read typed and written back
unchanged, and which PodGroup a pod joins."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError

import factories
from crdkit.resources import KubernetesObject, ObjectMeta, Pod
from crdkit.scheduling.groups import pod_group_of
from crdkit.scheduling.groups.coscheduling import (
    COSCHEDULING_PHASES,
    COSCHEDULING_POD_GROUP_LABEL,
    CoschedulingPodGroup,
    CoschedulingPodGroupSpec,
    CoschedulingPodGroupStatus,
)
from crdkit.scheduling.groups.volcano import (
    VOLCANO_GROUP_NAME_ANNOTATION,
    VOLCANO_LEGACY_GROUP_NAME_ANNOTATION,
    VOLCANO_PHASES,
    VolcanoPodGroup,
    VolcanoPodGroupCondition,
    VolcanoPodGroupSpec,
    VolcanoPodGroupStatus,
)

EXAMPLES = Path(__file__).parents[2] / "data" / "podgroups"
CRDS = Path(__file__).parents[2] / "data" / "crds"


def example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((EXAMPLES / name).read_text())
    return loaded


def model_for(manifest: dict[str, Any]) -> type[CoschedulingPodGroup] | type[VolcanoPodGroup]:
    if manifest["apiVersion"] == "scheduling.x-k8s.io/v1alpha1":
        return CoschedulingPodGroup
    return VolcanoPodGroup


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_example_is_read_and_written_back_unchanged(name: str) -> None:
    manifest = example(name)
    group = model_for(manifest).model_validate(manifest)
    # The fields the manifest set, and nothing else: what a read-modify-write sends back.
    assert group.to_merge_patch() == manifest
    # The full body adds only empty metadata collections.
    body = group.to_dict()
    assert body["spec"] == manifest["spec"]
    assert body.get("status") == manifest.get("status")


def test_the_coscheduling_example_reads_typed() -> None:
    group = CoschedulingPodGroup.model_validate(example("coscheduling_pg1-status.yaml"))
    assert group.spec.min_member == 3
    assert group.spec.schedule_timeout_seconds == 10
    assert group.status is not None
    assert group.status.phase == "Running"
    assert group.status.running == 3
    assert group.status.schedule_start_time == datetime(2022, 2, 8, 19, 55, 24, tzinfo=UTC)
    # Written by an older release; not modelled, and kept.
    assert group.status.model_extra == {"scheduled": 3}


def test_the_volcano_examples_read_typed() -> None:
    plain = VolcanoPodGroup.model_validate(example("volcano_test-pg.yaml"))
    assert plain.spec.min_resources == {"cpu": "1000m", "memory": "2G"}
    assert plain.spec.queue == "default"
    subgroups = VolcanoPodGroup.model_validate(example("volcano_network-topology-subgroups.yaml"))
    topology = subgroups.spec.network_topology
    assert topology is not None
    assert (topology.mode, topology.highest_tier_allowed) == ("hard", 2)
    policies = subgroups.spec.sub_group_policy
    assert policies is not None
    assert [(p.name, p.sub_group_size) for p in policies] == [("task0", 3), ("task1", 2)]
    assert policies[0].match_label_keys == ["volcano.sh/partition-id"]
    assert policies[0].label_selector == {"matchLabels": {"volcano.sh/task-spec": "task0"}}


def test_unknown_fields_survive_at_every_level() -> None:
    manifest = example("volcano_test-pg.yaml")
    manifest["spec"]["futureField"] = {"a": 1}
    manifest["spec"]["networkTopology"] = {"mode": "soft", "highestTierName": "spine", "x": 1}
    manifest["status"] = {
        "phase": "Inqueue",
        "conditions": [{"type": "Scheduled", "status": "True", "transitionID": "t1", "y": 2}],
        "z": 3,
    }
    group = VolcanoPodGroup.model_validate(manifest)
    assert group.spec.network_topology is not None
    assert group.spec.network_topology.highest_tier_name == "spine"
    assert group.status is not None
    assert group.status.conditions is not None
    assert group.status.conditions[0].transition_id == "t1"
    assert group.to_merge_patch() == manifest


def test_the_condition_spells_transition_id_as_volcano_does() -> None:
    condition = VolcanoPodGroupCondition(
        type="Unschedulable",
        status="True",
        transition_id="abc",
        last_transition_time=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        reason="NotEnoughResources",
        message="2/4 tasks in gang unschedulable",
    )
    status = VolcanoPodGroupStatus(phase="Pending", conditions=[condition])
    assert status.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "phase": "Pending",
        "conditions": [
            {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": "abc",
                "lastTransitionTime": "2026-01-02T03:04:05Z",
                "reason": "NotEnoughResources",
                "message": "2/4 tasks in gang unschedulable",
            }
        ],
    }


def test_new_objects_carry_their_identity() -> None:
    group = CoschedulingPodGroup(metadata=ObjectMeta(name="g", namespace="n"))
    assert (group.api_version, group.kind) == ("scheduling.x-k8s.io/v1alpha1", "PodGroup")
    assert group.to_dict()["spec"] == {}
    volcano = VolcanoPodGroup(metadata=ObjectMeta(name="g"))
    assert volcano.api_version == "scheduling.volcano.sh/v1beta1"
    with pytest.raises(ValidationError, match="apiVersion must be"):
        VolcanoPodGroup.model_validate(example("coscheduling_nginx.yaml"))


@pytest.mark.parametrize(
    ("model", "spec", "field"),
    [
        (CoschedulingPodGroup, {"minMember": 0}, "minMember"),
        (VolcanoPodGroup, {"minMember": -1}, "minMember"),
        (VolcanoPodGroup, {"networkTopology": {"mode": "strict"}}, "networkTopology.mode"),
        (VolcanoPodGroup, {"networkTopology": {"highestTierAllowed": -1}}, "highestTierAllowed"),
        (VolcanoPodGroup, {"subGroupPolicy": [{"subGroupSize": 0}]}, "subGroupSize"),
    ],
)
def test_the_crds_bounds_are_checked_and_name_the_field(
    model: type[CoschedulingPodGroup] | type[VolcanoPodGroup], spec: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError, match=field):
        model.model_validate({"metadata": {"name": "g"}, "spec": spec})


def test_the_phase_constants_are_the_crds_and_upstreams() -> None:
    assert {"Pending", "Running", "Scheduling", "Unknown", "Finished", "Failed"} == (
        COSCHEDULING_PHASES
    )
    assert {"Pending", "Running", "Unknown", "Inqueue", "Completed"} == VOLCANO_PHASES
    # A phase of another release is read, not refused.
    group = CoschedulingPodGroup.model_validate({"status": {"phase": "PreScheduling"}})
    assert group.status is not None
    assert group.status.phase == "PreScheduling"


@pytest.mark.parametrize(
    ("crd_file", "model", "spec_model", "status_model"),
    [
        (
            "scheduler-plugins_scheduling.x-k8s.io_podgroups.yaml",
            CoschedulingPodGroup,
            CoschedulingPodGroupSpec,
            CoschedulingPodGroupStatus,
        ),
        (
            "volcano_scheduling.volcano.sh_podgroups.yaml",
            VolcanoPodGroup,
            VolcanoPodGroupSpec,
            VolcanoPodGroupStatus,
        ),
    ],
)
def test_the_stored_crds_are_the_kinds_modelled(
    crd_file: str,
    model: type[KubernetesObject],
    spec_model: type[BaseModel],
    status_model: type[BaseModel],
) -> None:
    crd = yaml.safe_load((CRDS / crd_file).read_text())
    info = model.__resource__
    assert info is not None
    assert crd["spec"]["group"] == info.group
    assert crd["spec"]["names"]["plural"] == info.plural
    assert [v["name"] for v in crd["spec"]["versions"]] == [info.version]
    properties = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    for part, part_model in [("spec", spec_model), ("status", status_model)]:
        declared = {field.alias or name for name, field in part_model.model_fields.items()}
        # Every modelled field is one the CRD declares (a typo would be pruned by the apiserver).
        assert declared <= set(properties[part]["properties"]), part


def pod(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> Pod:
    return factories.pod(labels=labels, annotations=annotations)


def test_pod_group_of() -> None:
    assert pod_group_of(pod({COSCHEDULING_POD_GROUP_LABEL: "pg1"})) == ("coscheduling", "pg1")
    assert pod_group_of(pod(annotations={VOLCANO_GROUP_NAME_ANNOTATION: "job-1"})) == (
        "volcano",
        "job-1",
    )
    assert pod_group_of(pod(annotations={VOLCANO_LEGACY_GROUP_NAME_ANNOTATION: "old"})) == (
        "volcano",
        "old",
    )
    both = {VOLCANO_GROUP_NAME_ANNOTATION: "new", VOLCANO_LEGACY_GROUP_NAME_ANNOTATION: "old"}
    assert pod_group_of(pod(annotations=both)) == ("volcano", "new")
    assert pod_group_of(pod()) is None
    # An empty name is no group, as upstream reads it.
    assert pod_group_of(pod({COSCHEDULING_POD_GROUP_LABEL: ""})) is None
    # Coscheduling's label names the group: it is the one a plugin would hold the pod for.
    assert pod_group_of(
        pod({COSCHEDULING_POD_GROUP_LABEL: "a"}, {VOLCANO_GROUP_NAME_ANNOTATION: "b"})
    ) == ("coscheduling", "a")
    # As a label, Volcano's key is not read: Volcano reads the annotation only.
    assert pod_group_of(pod({VOLCANO_GROUP_NAME_ANNOTATION: "x"})) is None


def test_pod_group_of_json() -> None:
    raw = {"metadata": {"name": "p", "annotations": {VOLCANO_GROUP_NAME_ANNOTATION: "j"}}}
    assert pod_group_of(raw) == ("volcano", "j")
    assert pod_group_of({"metadata": {"labels": {COSCHEDULING_POD_GROUP_LABEL: "g"}}}) == (
        "coscheduling",
        "g",
    )
    assert pod_group_of({}) is None
    assert pod_group_of({"metadata": {"labels": None, "annotations": None}}) is None
