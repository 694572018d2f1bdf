"""Hypothesis: the milli-unit requests a gang carries compile to the record its quantity
strings compile to, whatever the pods' requests are (so the scheduler, which compiles with
them, places exactly the contract gang that status and explanations show)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pod_strategies import pods

from crdkit.placer import Cluster
from crdkit.resources import Pod
from crdkit.scheduling.gangs import GangPolicy, build_gang

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
