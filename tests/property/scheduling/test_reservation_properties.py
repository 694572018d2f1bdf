"""Property tests of the reservation rules (`crdkit.scheduling.reservations`) on a mirror of
random nodes and bound pods with random declared ends.

- ``ready_by`` is the first declared end after which the gang fits, found by a plain scan that
  rebuilds the nodes' usage from the pods that are left (not from the mirror's ledger);
- ``choose_room`` never picks a taken node, picks room the gang fits in when empty, and with a
  required level no free domain is sure to fit it sooner.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from crdkit.placer import Cluster
from crdkit.scheduling.mirror import ClusterMirror
from crdkit.scheduling.room import choose_room, ready_by
from factories import gang, node, pod, task

LEAF = "example.com/leaf"
NOW = 1_000_000.0


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterMirror, dict[str, float | None], dict[str, Any]]:
    mirror = ClusterMirror([LEAF])
    gpus: dict[str, int] = {}
    for leaf in ("a", "b", "c")[: draw(st.integers(1, 3))]:
        for index in range(draw(st.integers(1, 3))):
            name = f"{leaf}{index}"
            gpus[name] = draw(st.sampled_from([4, 8]))
            mirror.set_node(node(name, rack=None, labels={LEAF: leaf}, gpus=gpus[name], pods=16))
    names = sorted(gpus)
    ends: dict[str, float | None] = {}
    for index in range(draw(st.integers(0, 8))):
        on = draw(st.sampled_from(names))
        free = gpus[on] - mirror.used(on).get("nvidia.com/gpu", 0) // 1000
        if free <= 0:
            continue
        key = f"ns/p{index}"
        gpus_of_pod = draw(st.integers(1, min(free, 4)))
        mirror.set_pod(
            pod(
                f"p{index}",
                namespace="ns",
                uid=f"p{index}",
                node=on,
                gpus=gpus_of_pod,
                phase="Running",
            )
        )
        ends[key] = draw(st.one_of(st.none(), st.floats(NOW - 10, NOW + 1000)))
    made = gang(task("w", draw(st.integers(1, 3)), draw(st.integers(1, 8))))
    if draw(st.booleans()):
        made["topology"] = {"mode": "required", "level": LEAF}
    return mirror, ends, made


def fits_without(
    mirror: ClusterMirror, nodes: list[str], gang: dict[str, Any], gone: set[str], pods: list[str]
) -> bool:
    """The gang on ``nodes`` with every pod but ``gone`` counted one by one."""
    cluster = Cluster([LEAF])
    for name in nodes:
        entry = mirror.node(name)
        assert entry is not None
        cluster.add_node(entry)
    for key in pods:
        on = mirror.node_of(key)
        milli = mirror.requests_of(key)
        if key not in gone and on in nodes and milli is not None:
            cluster.add_pods(on, milli)
    return cluster.place(gang).status != "unschedulable"


@settings(max_examples=150, deadline=None)
@given(clusters())
def test_ready_by_is_the_first_declared_end_after_which_the_gang_fits(
    world: tuple[ClusterMirror, dict[str, float | None], dict[str, Any]],
) -> None:
    mirror, ends, gang = world
    nodes = mirror.node_names()
    pods = sorted(ends)
    got = ready_by(mirror, nodes, gang, ends.get, NOW)
    if fits_without(mirror, nodes, gang, set(), pods):
        assert got == NOW
        return
    expected: float | None = None
    gone: set[str] = set()
    for end, key in sorted((e, k) for k, e in ends.items() if e is not None):
        gone.add(key)
        if fits_without(mirror, nodes, gang, gone, pods):
            expected = max(NOW, end)
            break
    assert got == expected


@settings(max_examples=150, deadline=None)
@given(clusters(), st.data())
def test_the_chosen_room_is_free_fits_when_empty_and_is_soonest(
    world: tuple[ClusterMirror, dict[str, float | None], dict[str, Any]], data: st.DataObject
) -> None:
    mirror, ends, gang = world
    names = mirror.node_names()
    taken = frozenset(data.draw(st.sets(st.sampled_from(names), max_size=len(names) - 1)))
    room = choose_room(mirror, gang, taken=taken, end_of=ends.get, now=NOW)
    if room is None:
        return
    level, domain, nodes, when = room
    assert not nodes & taken
    assert fits_without(mirror, sorted(nodes), gang, set(ends), sorted(ends))
    assert when == ready_by(mirror, nodes, gang, ends.get, NOW)
    if level is None:
        return
    assert {(mirror.node(n) or {})["labels"][LEAF] for n in nodes} == {domain}
    if when is None:
        return
    for other in {(mirror.node(n) or {})["labels"][LEAF] for n in names} - {domain}:
        members = [n for n in names if (mirror.node(n) or {})["labels"][LEAF] == other]
        if set(members) & taken:
            continue
        sooner = ready_by(mirror, members, gang, ends.get, NOW)
        assert sooner is None or sooner >= when
