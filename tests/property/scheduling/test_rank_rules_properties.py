"""Hypothesis: whatever rank rules a gang's pods carry, `build_gang` either refuses them
(naming the field) or gives the placer limits under which no placement puts two pods on one
node where a rule of either names the other, with both engines."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crdkit.placer import Cluster, ReferenceCluster
from crdkit.resources import Pod
from crdkit.scheduling.gangs import GangPolicy, build_gang
from factories import placer_node, pod

LEVELS = ["example.com/rack"]
LABELS = {"job": ("a", "b"), "role": ("master", "worker")}


@st.composite
def ranked_pods(draw: st.DrawFn) -> list[Pod]:
    """Pods of two roles with a few labels, some carrying a rule over a drawn selector."""
    members = []
    for index in range(draw(st.integers(1, 5))):
        labels = {key: draw(st.sampled_from(values)) for key, values in LABELS.items()}
        gpus = draw(st.integers(1, 3))
        spec: dict[str, Any] = {}
        if draw(st.booleans()):
            keys = draw(st.lists(st.sampled_from(sorted(LABELS)), unique=True, max_size=2))
            selector = {key: labels[key] for key in keys}  # one that names the pod itself
            spec["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": selector},
                        }
                    ]
                }
            }
        labels["training.kubeflow.org/replica-type"] = labels["role"]
        members.append(pod(f"p{index}", labels=labels, gpus=gpus, **spec))
    return members


@pytest.mark.parametrize("engine", [Cluster, ReferenceCluster])
@given(members=ranked_pods(), racks=st.integers(1, 2), per_rack=st.integers(1, 4))
def test_no_placement_puts_a_rule_beside_a_pod_it_names(
    engine: type[Cluster], members: list[Pod], racks: int, per_rack: int
) -> None:
    try:
        request = build_gang("g", members, needed=len(members), policy=GangPolicy(), levels=LEVELS)
    except ValueError as error:
        refused = str(error)
    else:
        refused = ""
    if refused:
        # Only a rule over part of the gang is refused here, and it says which field.
        assert "spec.affinity.podAntiAffinity" in refused
        return
    nodes = [
        placer_node(f"r{r}n{n}", {"example.com/rack": f"r{r}"}, cpu=None)
        for r in range(racks)
        for n in range(per_rack)
    ]
    cluster = engine.from_snapshot({"levels": LEVELS, "nodes": nodes})
    placement = cluster.place(request.gang)
    if placement.status == "unschedulable":
        return
    # Which pod of a task goes to which node is the binder's choice: check every choice.
    on_node: dict[str, Counter[str]] = {}
    for assignment in placement.assignments:
        on_node.setdefault(assignment.node, Counter())[assignment.task] += assignment.count
    for tasks in on_node.values():
        for task, count in tasks.items():
            for rule in request.rules.get(task, ()):
                for other, other_count in tasks.items():
                    named = [p for p in request.pods[other] if rule.matches(p)]
                    # Pods of the node besides the rule's own carrier that it names.
                    room = other_count - (1 if other == task else 0)
                    assert not named or room <= 0, (task, other, count, other_count)
