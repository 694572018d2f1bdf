"""``GangScheduler``'s reservations on the fake cluster: the head gang that does not fit holds
the leaf it fits in soonest, smaller pods arriving after it go elsewhere or wait, it binds there
once the leaf drains, pods that declare they end in time may backfill its held nodes, and the
hold goes when the gang is deleted. Checked by the order things happen in, not by time."""

from __future__ import annotations

from typing import Any

from _fake_scheduling import NAMESPACE, SCHEDULER, add_node, gpu_pod, scheduling

from crdkit.client import Client
from crdkit.resources import Event, Pod, Queue
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.gangs import KUEUE_REQUIRED
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.queues.gate import QUEUE_LABEL
from crdkit.testing import eventually
from factories import coscheduling_podgroup, pod

LEAF = "topology.crdkit.io/leaf"
HOST = "kubernetes.io/hostname"


async def node_of(client: Client, name: str) -> str | None:
    return (await client.get(Pod, name, namespace=NAMESPACE)).spec.node_name


async def leaf_of(client: Client, name: str) -> str | None:
    node = await node_of(client, name)
    return None if node is None else node[0]  # nodes are named <leaf><n>


async def two_leaves(client: Client) -> None:
    """Leaves ``a`` and ``b`` of two 8-GPU nodes each."""
    for leaf in ("a", "b"):
        for index in (1, 2):
            await add_node(client, f"{leaf}{index}", labels={LEAF: leaf})


async def bound(client: Client, name: str, **spec: Any) -> None:
    """A one-node pod created and bound by the scheduler."""
    await client.create(gpu_pod(name, **spec))

    async def placed() -> bool:
        return await node_of(client, name) is not None

    await eventually(placed, what=f"{name} bound")


async def whole_leaf_gang(client: Client, name: str) -> list[str]:
    """A coscheduling gang of two 8-GPU pods that requires one leaf."""
    await client.create(coscheduling_podgroup(name, 2))
    names = [f"{name}-0", f"{name}-1"]
    for pod_name in names:
        member = pod(
            pod_name,
            gpus=8,
            scheduler=SCHEDULER,
            pod_group=("coscheduling", name),
            annotations={KUEUE_REQUIRED: LEAF},
        )
        await client.create(member)
    return names


async def gang_behind_small_pods(client: Client) -> list[str]:
    """`two_leaves` with a small pod bound in each (no leaf is free), then `whole_leaf_gang`
    ``big``: the gang that must hold a leaf while the small pods run; its pods' names."""
    await two_leaves(client)
    await bound(client, "small-1", nodeSelector={HOST: "a1"})
    await bound(client, "small-2", nodeSelector={HOST: "b1"})
    return await whole_leaf_gang(client, "big")


async def told_to_wait(client: Client, *names: str) -> None:
    """Until each pod has a FailedScheduling Event: the scheduler tried it and it waits."""

    async def all_told() -> bool:
        events = (await client.list(Event, namespace=NAMESPACE)).items
        told = {e.regarding.name for e in events if e.reason == "FailedScheduling" and e.regarding}
        return told.issuperset(names)

    await eventually(all_told, what=f"{', '.join(names)} waiting")


def sample(metric: Any, *labels: str) -> float:
    """A metric child's value, read through the registry's public collect()."""
    for family in metric.collect():
        for found in family.samples:
            if tuple(found.labels.values()) == labels and not found.name.endswith("_created"):
                return float(found.value)
    raise AssertionError(f"no sample {labels}")


async def reserved_leaf(scheduler: GangScheduler) -> str:
    async def held() -> bool:
        return bool(scheduler.reservations)

    await eventually(held, what="the waiting gang given a reservation")
    (reservation,) = scheduler.reservations.values()
    assert reservation.level == LEAF
    assert reservation.domain is not None
    return reservation.domain


async def test_a_whole_leaf_gang_is_not_starved_by_smaller_pods_behind_it() -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF]) as (scheduler, client):
        big = await gang_behind_small_pods(client)
        leaf = await reserved_leaf(scheduler)
        other = "b" if leaf == "a" else "a"

        # Behind the reservation, a small pod takes the free node outside the held leaf...
        await bound(client, "small-3")
        assert await leaf_of(client, "small-3") == other
        # ...and the next one waits rather than take the held leaf's free node.
        await client.create(gpu_pod("small-4"))

        await told_to_wait(client, "small-4")
        assert await node_of(client, "small-4") is None
        metrics = scheduler.metrics
        assert metrics is not None
        assert sample(metrics.reservations, scheduler.name) == 1
        assert sample(metrics.reserved_nodes, scheduler.name) == 2
        assert sample(metrics.pending_gangs, scheduler.name, "0") == 2

        # The held leaf drains: the gang binds there, whole, before small-4.
        in_leaf = "small-1" if await leaf_of(client, "small-1") == leaf else "small-2"
        await client.delete(Pod, in_leaf, namespace=NAMESPACE, grace_period_seconds=0)

        async def gang_bound() -> bool:
            return None not in [await node_of(client, n) for n in big]

        await eventually(gang_bound, what="the gang bound in its reserved leaf")
        assert {await leaf_of(client, n) for n in big} == {leaf}
        assert await node_of(client, "small-4") is None
        # The gang's hold is gone; small-4, now first in line, holds room of its own.
        assert [r.holder for r in scheduler.reservations.values()] == [f"pod/{NAMESPACE}/small-4"]


async def test_only_pods_that_declare_they_end_in_time_backfill_held_nodes() -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF]) as (scheduler, client):
        await two_leaves(client)
        # Every small pod declares its run time, so the reservation knows when it is sure to fit.
        await bound(client, "long-1", activeDeadlineSeconds=3600, nodeSelector={HOST: "a1"})
        await bound(client, "long-2", activeDeadlineSeconds=3600, nodeSelector={HOST: "b1"})
        await whole_leaf_gang(client, "big")
        leaf = await reserved_leaf(scheduler)
        (reservation,) = scheduler.reservations.values()
        assert reservation.ready_by is not None  # the long pods end within the hour
        await bound(client, "fill", activeDeadlineSeconds=7200)  # the free node outside
        assert await leaf_of(client, "fill") != leaf

        # Only the held node is free now: a pod that ends after the hour must not take it...
        await client.create(gpu_pod("too-long", activeDeadlineSeconds=7200))
        undeclared = gpu_pod("undeclared")
        await client.create(undeclared)

        await told_to_wait(client, "too-long", "undeclared")
        assert await node_of(client, "too-long") is None
        assert await node_of(client, "undeclared") is None
        # ...one that ends well before may.
        await bound(client, "short", activeDeadlineSeconds=60)
        assert await leaf_of(client, "short") == leaf


async def test_deleting_the_waiting_gang_gives_its_held_nodes_back() -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF]) as (scheduler, client):
        big = await gang_behind_small_pods(client)
        await reserved_leaf(scheduler)
        await bound(client, "small-3")
        await client.create(gpu_pod("small-4"))

        await told_to_wait(client, "small-4")
        assert await node_of(client, "small-4") is None
        for name in big:
            await client.delete(Pod, name, namespace=NAMESPACE, grace_period_seconds=0)
        await client.delete(CoschedulingPodGroup, "big", namespace=NAMESPACE)

        async def small_4_bound() -> bool:
            return await node_of(client, "small-4") is not None

        await eventually(small_4_bound, what="small-4 bound on the node that was held")
        assert scheduler.reservations == {}


async def test_the_waiting_gangs_event_names_its_reservation_and_what_it_waits_for() -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF]) as (scheduler, client):
        await gang_behind_small_pods(client)
        leaf = await reserved_leaf(scheduler)
        expected = f"reserved {LEAF}={leaf}: 1 of 2 held nodes free, 1 still held by other pods"

        async def event_says_reserved() -> bool:
            events = (await client.list(Event, namespace=NAMESPACE)).items
            return any(expected in (event.note or "") for event in events)

        await eventually(event_says_reserved, what="the gang's Event naming its reservation")
        events = (await client.list(Event, namespace=NAMESPACE)).items
        notes = [event.note or "" for event in events if expected in (event.note or "")]
        assert all(note.endswith("[in line: 1 of 1 at priority 0]") for note in notes), notes
        assert scheduler.queue() == [(f"coscheduling/{NAMESPACE}/big", 0)]


def test_a_mirror_given_with_no_nodes_yet_is_the_one_used() -> None:
    from crdkit.scheduling.mirror import ClusterMirror

    mirror = ClusterMirror([LEAF])  # empty, so falsy: it must still be the scheduler's
    assert GangScheduler("gangs", [LEAF], mirror=mirror).mirror is mirror


def run_time_queue(name: str, seconds: int) -> Queue:
    """A queue of 64 GPUs whose gangs run at most ``seconds``."""
    return Queue.model_validate(
        {
            "metadata": {"name": name},
            "spec": {
                "maxRunSeconds": seconds,
                "flavors": [
                    {"name": "any", "resources": [{"name": "nvidia.com/gpu", "nominal": 64}]}
                ],
            },
        }
    )


async def test_a_queues_max_run_time_stands_in_for_pods_that_declare_none() -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF], queues=True) as (
        scheduler,
        client,
    ):
        for name, seconds in (("default", 3600), ("quick", 60), ("slow", 7200)):
            await client.create(run_time_queue(name, seconds))
        await two_leaves(client)
        # No pod declares a run time: their queue's maximum is the estimate.
        await bound(client, "long-1", nodeSelector={HOST: "a1"})
        await bound(client, "long-2", nodeSelector={HOST: "b1"})
        await whole_leaf_gang(client, "big")
        leaf = await reserved_leaf(scheduler)
        (reservation,) = scheduler.reservations.values()
        assert reservation.ready_by is not None  # the long pods end within their queue's hour
        await bound(client, "fill")  # the free node outside the hold
        assert await leaf_of(client, "fill") != leaf

        slow = gpu_pod("slow-pod")
        slow.metadata.labels = {QUEUE_LABEL: "slow"}
        await client.create(slow)
        await told_to_wait(client, "slow-pod")
        assert await node_of(client, "slow-pod") is None  # its queue's 2 h end after the hold
        quick = gpu_pod("quick-pod")
        quick.metadata.labels = {QUEUE_LABEL: "quick"}
        await client.create(quick)

        async def placed() -> bool:
            return await node_of(client, "quick-pod") is not None

        await eventually(placed, what="the quick queue's pod backfilled")
        assert await leaf_of(client, "quick-pod") == leaf
