"""All-or-nothing binding on the real apiserver: a failure mid-gang undoes the whole attempt."""

from __future__ import annotations

import pytest
from _cluster import LEVELS, create_all, pods_of, pool_with_nodes, pytorchjob_pods

from crdkit.client import Client, NotFound
from crdkit.resources import Node, Pod
from crdkit.scheduling import Binder, BindError, ClusterMirror, PodBinding, pod_requests
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def mirror_of(client: Client, pool: str) -> ClusterMirror:
    mirror = ClusterMirror(LEVELS)
    for node in (await client.list(Node, label_selector=f"crdkit.io/test-pool={pool}")).items:
        mirror.set_node(node)
    return mirror


def binding(pod: Pod, node: str, uid: str | None = None) -> PodBinding:
    return PodBinding(
        pod.metadata.namespace or "",
        pod.metadata.name or "",
        node,
        pod_requests(pod),
        uid if uid is not None else pod.metadata.uid,
    )


async def pending_gang(
    client: Client, plane: ControlPlane, nodes: int, job: str
) -> tuple[str, list[str], list[Pod], ClusterMirror, Binder]:
    """A namespace (the pool's name), ``nodes`` nodes, a pending gang of one master and
    ``nodes - 1`` workers that no scheduler places, and a Binder over a mirror of the nodes."""
    pool, names, _ = await pool_with_nodes(client, plane, {"a": nodes})
    await create_all(
        client, pytorchjob_pods(job, pool, nodes - 1, scheduler="nobody", group="none")
    )
    mirror = await mirror_of(client, pool)
    return pool, names, await pods_of(client, pool, job), mirror, Binder(client, mirror)


async def test_a_bind_that_fails_mid_gang_deletes_what_it_bound_and_frees_the_room(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, nodes, pods, mirror, binder = await pending_gang(client, scheduling_plane, 3, "job")
        # The last pod's uid is stale (the name now holds another pod): its bind is refused.
        plan = [
            binding(pods[0], nodes[0]),
            binding(pods[1], nodes[1]),
            binding(pods[2], nodes[2], "0" * 36),
        ]
        reservation = binder.reserve(plan)
        assert all(mirror.is_assumed(b.key) for b in plan)
        assert mirror.used(nodes[0])["nvidia.com/gpu"] == 8000
        with pytest.raises(BindError) as raised:
            await binder.bind(reservation)
        assert list(raised.value.failures) == [plan[2].key]
        assert "rolled back" in str(raised.value)
        for pod in pods[:2]:  # bound in the attempt, so deleted with it
            with pytest.raises(NotFound):
                await client.get(Pod, pod.metadata.name or "", namespace=pool)
        survivor = await client.get(Pod, pods[2].metadata.name or "", namespace=pool)
        assert survivor.spec.node_name is None
        assert all(mirror.used(node) == {} for node in nodes)
        assert not any(mirror.is_counted(b.key) for b in plan)


async def test_a_bind_that_succeeds_binds_every_pod_and_keeps_the_assumptions(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, nodes, pods, mirror, binder = await pending_gang(client, scheduling_plane, 2, "ok")
        plan = [binding(pod, node) for pod, node in zip(pods, nodes, strict=True)]
        await binder.bind(binder.reserve(plan))
        assert [p.spec.node_name for p in await pods_of(client, pool, "ok")] == nodes
        assert all(mirror.is_assumed(b.key) for b in plan)  # until the pods' events confirm


async def test_create_bound_rolls_back_the_created_pods_when_one_create_fails(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, nodes, _ = await pool_with_nodes(client, scheduling_plane, {"a": 2})
        mirror = await mirror_of(client, pool)
        binder = Binder(client, mirror)
        good, bad = pytorchjob_pods("mk", pool, 1, scheduler="nobody", group="none")
        bad.spec.containers[0].name = "Not_A_DNS_Label"  # the apiserver refuses this pod
        plan = [binding(good, nodes[0]), binding(bad, nodes[1])]
        manifests = {plan[0].key: good, plan[1].key: bad}
        with pytest.raises(BindError):
            await binder.create_bound(binder.reserve(plan), manifests)
        assert await pods_of(client, pool, "mk") == []
        assert all(mirror.used(node) == {} for node in nodes)
        # And the same gang without the bad pod is created, bound.
        fixed = pytorchjob_pods("mk", pool, 1, scheduler="nobody", group="none")
        await binder.create_bound(binder.reserve(plan), dict(zip(manifests, fixed, strict=True)))
        assert [p.spec.node_name for p in await pods_of(client, pool, "mk")] == nodes
