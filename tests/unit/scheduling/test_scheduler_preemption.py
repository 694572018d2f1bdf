"""``GangScheduler``'s gang preemption on the fake cluster: a waiting gang of higher priority
evicts whole gangs of lower priority in one leaf (the fewest GPUs, the lowest priority), binds
there, and says so on the victims; equal priority and ``preemptionPolicy: Never`` evict none."""

from __future__ import annotations

from typing import Any

import pytest
from _fake_scheduling import NAMESPACE, SCHEDULER, add_node, exists, gpu_pod, scheduling

from crdkit.client import Client
from crdkit.resources import Event, Pod, PodDisruptionBudget
from crdkit.scheduling.gangs import KUEUE_REQUIRED
from crdkit.testing import eventually
from factories import coscheduling_podgroup, pod

LEAF = "topology.crdkit.io/leaf"
HOST = "kubernetes.io/hostname"


async def two_leaves(client: Client) -> None:
    for leaf in ("a", "b"):
        for index in (1, 2):
            await add_node(client, f"{leaf}{index}", labels={LEAF: leaf})


async def node_of(client: Client, name: str) -> str | None:
    return (await client.get(Pod, name, namespace=NAMESPACE)).spec.node_name


async def running(client: Client, name: str, **spec: Any) -> None:
    await client.create(gpu_pod(name, **spec))

    async def bound() -> bool:
        return await node_of(client, name) is not None

    await eventually(bound, what=f"{name} bound")


async def gang(client: Client, name: str, pods: int, priority: int, **spec: Any) -> list[str]:
    await client.create(coscheduling_podgroup(name, pods))
    names = [f"{name}-{i}" for i in range(pods)]
    for pod_name in names:
        member = pod(
            pod_name,
            gpus=8,
            scheduler=SCHEDULER,
            priority=priority,
            pod_group=("coscheduling", name),
            annotations={KUEUE_REQUIRED: LEAF},
            **spec,
        )
        await client.create(member)
    return names


async def kubelet_ends(client: Client, names: list[str]) -> None:
    """Until each pod is terminating, then end it as its kubelet would (with no kubelet, a
    bound pod deleted with a grace period stays until one confirms)."""

    async def terminating() -> bool:
        pods = [await client.get(Pod, n, namespace=NAMESPACE) for n in names]
        return all(p.metadata.deletion_timestamp is not None for p in pods)

    await eventually(terminating, what=f"{', '.join(names)} evicted")
    for name in names:
        await client.delete(Pod, name, namespace=NAMESPACE, grace_period_seconds=0)


async def told(client: Client, pod: str, reason: str) -> bool:
    events = (await client.list(Event, namespace=NAMESPACE)).items
    return any(e.reason == reason and e.regarding and e.regarding.name == pod for e in events)


@pytest.mark.parametrize(
    ("a_priority", "b_priority", "evicted"),
    [
        (0, 0, "b"),  # equal priority: leaf b's victim holds fewer GPUs (one pod, not two)
        (0, 50, "a"),  # the lowest priority goes first, whatever its GPUs
    ],
)
async def test_a_higher_priority_gang_evicts_whole_lower_gangs_in_one_leaf(
    a_priority: int, b_priority: int, evicted: str
) -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF]) as (scheduler, client):
        await two_leaves(client)
        # Leaf a: a two-pod gang; leaf b: one pod, and one node free.
        low_a = await gang(client, "low-a", 2, a_priority, nodeSelector={LEAF: "a"})

        async def a_bound() -> bool:
            return None not in [await node_of(client, n) for n in low_a]

        await eventually(a_bound, what="low-a bound")
        await running(client, "low-b", priority=b_priority, nodeSelector={HOST: "b1"})
        big = await gang(client, "big", 2, 100)
        victims = low_a if evicted == "a" else ["low-b"]
        spared = ["low-b"] if evicted == "a" else low_a
        await kubelet_ends(client, victims)

        async def big_bound() -> bool:
            return all([await exists(client, n) for n in big]) and None not in [
                await node_of(client, n) for n in big
            ]

        await eventually(big_bound, what="the preemptor bound")
        leaves = {(await node_of(client, n) or "?")[0] for n in big}
        assert leaves == {evicted}
        assert [await exists(client, n) for n in victims] == [False] * len(victims)
        assert [await exists(client, n) for n in spared] == [True] * len(spared)
        events = (await client.list(Event, namespace=NAMESPACE)).items
        preempted = {e.regarding.name for e in events if e.reason == "Preempted" and e.regarding}
        assert preempted == set(victims)
        assert scheduler.reservations == {}


@pytest.mark.parametrize("spec", [{"priority": 0}, {"priority": 100, "preemptionPolicy": "Never"}])
async def test_no_eviction_for_equal_priority_or_preemption_policy_never(
    spec: dict[str, Any],
) -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF]) as (_, client):
        await two_leaves(client)
        for node in ("a1", "b1"):
            await running(client, f"low-{node}", priority=0, nodeSelector={HOST: node})
        big = await gang(client, "big", 2, **spec)

        async def waiting() -> bool:
            return await told(client, big[0], "FailedScheduling")

        await eventually(waiting, what="the gang waiting")
        assert await exists(client, "low-a1")
        assert await exists(client, "low-b1")
        assert [await node_of(client, n) for n in big] == [None, None]


async def test_a_victim_a_disruption_budget_covers_is_spared_when_others_make_room() -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF]) as (_, client):
        await two_leaves(client)
        # Leaf a: one pod (the cheaper victim), covered by a budget allowing no disruption;
        # leaf b: a two-pod gang with none.
        protected = gpu_pod("protected", priority=0, nodeSelector={HOST: "a1"})
        protected.metadata.labels = {"app": "serving"}
        await client.create(protected)
        await client.create(
            PodDisruptionBudget.model_validate(
                {
                    "metadata": {"name": "serving", "namespace": NAMESPACE},
                    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "serving"}}},
                }
            )
        )
        low_b = await gang(client, "low-b", 2, 0, nodeSelector={LEAF: "b"})

        async def placed() -> bool:
            names = ["protected", *low_b]
            return None not in [await node_of(client, n) for n in names]

        await eventually(placed, what="both victims-to-be bound")
        big = await gang(client, "big", 2, 100)
        await kubelet_ends(client, low_b)

        async def big_bound() -> bool:
            return None not in [await node_of(client, n) for n in big]

        await eventually(big_bound, what="the preemptor bound in leaf b")
        assert {(await node_of(client, n) or "?")[0] for n in big} == {"b"}
        assert (
            await client.get(Pod, "protected", namespace=NAMESPACE)
        ).metadata.deletion_timestamp is None
