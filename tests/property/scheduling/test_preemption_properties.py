"""Property tests of `crdkit.scheduling.preemption.choose_victims` on random small clusters of
running gangs: every victim has strictly lower priority, is whole and is needed (putting any one
back leaves the preemptor without room), the preemptor fits once they are gone, the domain is
one of its level and holds no protected node; and when it returns None, no single domain can
be freed by evicting every lower-priority gang there."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from crdkit.scheduling.mirror import ClusterMirror
from crdkit.scheduling.preemption import RunningGang, VictimPod, choose_victims
from crdkit.scheduling.room import fits_without
from factories import gang, node, task

LEAF = "example.com/leaf"
GPU = "nvidia.com/gpu"


@st.composite
def worlds(draw: st.DrawFn) -> tuple[ClusterMirror, list[RunningGang], dict[str, Any], int]:
    mirror = ClusterMirror([LEAF])
    names = [f"{leaf}{i}" for leaf in "ab"[: draw(st.integers(1, 2))] for i in range(2)]
    for name in names:
        mirror.set_node(node(name, rack=None, labels={LEAF: name[0]}, pods=16))
    free = dict.fromkeys(names, 8)
    gangs: list[RunningGang] = []
    for index in range(draw(st.integers(0, 5))):
        pods = []
        for pod_index in range(draw(st.integers(1, 2))):
            on = draw(st.sampled_from(names))
            gpus = draw(st.sampled_from([2, 4, 8]))
            if free[on] < gpus:
                continue
            free[on] -= gpus
            key = f"ns/g{index}-{pod_index}"
            milli = {GPU: gpus * 1000}
            mirror.assume_pod(key, on, milli)
            pods.append(VictimPod(key, on, milli, None))
        if pods:
            created = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=draw(st.integers(0, 9)))
            gangs.append(
                RunningGang(f"g{index}", draw(st.sampled_from([0, 5, 10])), created, tuple(pods))
            )
    preemptor = gang(
        task("w", draw(st.integers(1, 2)), draw(st.sampled_from([4, 8]))), name="preemptor"
    )
    if draw(st.booleans()):
        preemptor["topology"] = {"mode": "required", "level": LEAF}
    return mirror, gangs, preemptor, draw(st.sampled_from([5, 10]))


def removed(victims: list[RunningGang] | tuple[RunningGang, ...]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for victim in victims:
        for pod in victim.pods:
            out.setdefault(pod.node, []).append(pod.milli)
    return out


@settings(max_examples=200, deadline=None)
@given(worlds(), st.data())
def test_victims_are_lower_whole_needed_and_make_room(
    world: tuple[ClusterMirror, list[RunningGang], dict[str, Any], int], data: st.DataObject
) -> None:
    mirror, gangs, gang, priority = world
    names = mirror.node_names()
    protected = frozenset(data.draw(st.sets(st.sampled_from(names), max_size=1)))
    choice = choose_victims(mirror, gang, priority, gangs, protected=protected)
    required = (gang.get("topology") or {}).get("mode") == "required"
    leaves = sorted({n[0] for n in names})
    if required:  # each leaf with no protected node
        leaf_nodes = {leaf: [n for n in names if n[0] == leaf] for leaf in leaves}
        open_domains = [v for v in leaf_nodes.values() if not set(v) & protected]
    else:  # the rest of the cluster
        open_domains = [[n for n in names if n not in protected]]
    if choice is None:
        if any(fits_without(mirror, members, gang, {}) for members in open_domains):
            return  # it fits now: nothing to preempt
        lower = [g for g in gangs if g.priority < priority]
        for members in open_domains:
            assert not fits_without(mirror, members, gang, removed(lower)), members
        return
    assert choice.victims
    assert all(v.priority < priority for v in choice.victims)
    assert not choice.nodes & protected
    if required:
        assert {n[0] for n in choice.nodes} == {choice.domain}
        members = sorted(choice.nodes)
    else:
        members = [n for n in names if n not in protected]
    assert fits_without(mirror, members, gang, removed(choice.victims))
    for victim in choice.victims:
        rest = [v for v in choice.victims if v is not victim]
        assert not fits_without(mirror, members, gang, removed(rest)), f"{victim.ref} not needed"
