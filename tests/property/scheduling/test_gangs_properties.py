"""Hypothesis: the milli-unit requests a gang carries compile to the record its quantity
strings compile to, whatever the pods' requests are (so the scheduler, which compiles with
them, places exactly the contract gang that status and explanations show)."""

from __future__ import annotations

from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st
from pod_strategies import pods

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
    task_entry,
)

LEVELS = ["example.com/rack"]
ROLES = ("master", "worker")


@given(st.lists(st.tuples(pods(), st.sampled_from(ROLES)), min_size=1, max_size=6), st.data())
def test_the_milli_units_compile_to_what_the_strings_compile_to(
    drawn: list[tuple[dict[str, Any], str]], data: st.DataObject
) -> None:
    members = []
    for index, (body, role) in enumerate(drawn):
        metadata = {
            "name": f"p{index}",
            "namespace": "default",
            "labels": {"training.kubeflow.org/replica-type": role},
        }
        members.append(Pod.model_validate({**body, "metadata": metadata}))
    needed = data.draw(st.integers(1, len(members)))
    request = build_gang(
        "g", members, needed=needed, policy=GangPolicy(min_member=needed), levels=LEVELS
    )
    assert set(request.milli) == {task["name"] for task in request.gang["tasks"]}
    cluster = Cluster(LEVELS)
    assert cluster.compile(request.gang, milli=request.milli) == cluster.compile(request.gang)
    assert request.record == cluster.compile(request.gang)


LEAVES = ["example.com/block", "example.com/rack"]
TOLERATIONS = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "key": st.sampled_from(["gpu", "spot", ""]),
            "operator": st.sampled_from(["Equal", "Exists"]),
            "value": st.sampled_from(["h100", "yes", ""]),
            "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
        },
    ),
    max_size=2,
)
ANNOTATIONS = st.fixed_dictionaries(
    {},
    optional={
        KUEUE_REQUIRED: st.sampled_from(LEAVES),
        KUEUE_PREFERRED: st.sampled_from(LEAVES),
        KUEUE_SLICE_REQUIRED: st.sampled_from(LEAVES),
        KUEUE_SLICE_SIZE: st.sampled_from(["1", "2", "3"]),
    },
)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(ROLES),
            st.sampled_from(["1", "2"]),
            TOLERATIONS,
            st.dictionaries(st.sampled_from(["gpu", "pool"]), st.sampled_from(["a", "b"])),
        ),
        min_size=1,
        max_size=6,
    ),
    ANNOTATIONS,
    st.data(),
)
def test_the_records_are_what_the_contract_compiles_to(
    drawn: list[tuple[str, str, list[dict[str, str]], dict[str, str]]],
    annotations: dict[str, str],
    data: st.DataObject,
) -> None:
    """The scheduler places the records `build_gang` makes straight from the pods; whatever
    the pods ask, they are the records the contract's own compiler makes of the gang the pods
    describe, and of the gang people are shown (its `gang`), or the pods are refused with a
    reason."""
    members = []
    for index, (role, gpus, tolerations, selector) in enumerate(drawn):
        members.append(
            Pod.model_validate(
                {
                    "metadata": {
                        "name": f"p{index}",
                        "namespace": "default",
                        "labels": {"training.kubeflow.org/replica-type": role},
                        "annotations": annotations,
                    },
                    "spec": {
                        "containers": [
                            {"name": "c", "resources": {"requests": {"nvidia.com/gpu": gpus}}}
                        ],
                        "tolerations": tolerations,
                        "nodeSelector": selector,
                    },
                }
            )
        )
    needed = data.draw(st.integers(1, len(members)))
    refused = None
    try:
        request = build_gang(
            "g", members, needed=needed, policy=GangPolicy(min_member=needed), levels=LEAVES
        )
    except ValueError as error:
        refused = str(error)
    if refused is not None:
        # Only what the contract refuses too: a slice that does not divide its task, or one
        # wider than the required level.
        assert "slice" in refused, refused
        event("refused")
        return
    event("compiled")
    # The contract gang, written independently: each task as `task_entry` reads its first pod
    # (requests, selector, tolerations, slice), the counts the gang builder chose, and the
    # topology of Kueue's annotations.
    tasks = []
    for task in request.record.tasks:
        _, entry = task_entry(request.pods[task.name][0], LEAVES)
        tasks.append(
            {
                "name": task.name,
                "replicas": len(request.pods[task.name]),
                "minAvailable": task.min_available,
                **entry,
            }
        )
    topology = kueue_topology(members[0], LEAVES)[0]
    written = {"name": "g", "tasks": tasks, **({"topology": topology} if topology else {})}
    assert request.record == Cluster(LEAVES).compile(written)
    assert request.record == Cluster(LEAVES).compile(request.gang)
