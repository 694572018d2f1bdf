"""``GangScheduler``'s queue on the fake cluster: within a priority the gang that arrived first
goes first, whatever its name, a bigger gang moved ahead by its size credit, and a pod held by
scheduling gates waits until they are gone."""

from __future__ import annotations

import asyncio

import pytest
from _fake_scheduling import NAMESPACE, SCHEDULER, add_node, gpu_pod, scheduling

from crdkit.client import Client
from crdkit.resources import Event, Pod
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL
from crdkit.testing import eventually
from factories import coscheduling_podgroup, pod


async def node_of(client: Client, name: str) -> str | None:
    return (await client.get(Pod, name, namespace=NAMESPACE)).spec.node_name


async def test_within_a_priority_the_first_to_arrive_goes_first_not_the_first_name() -> None:
    async with scheduling() as (scheduler, client):
        first = await client.create(gpu_pod("zz-first"))
        # creationTimestamp has whole seconds: the second pod is made a second later.
        probes = 0
        while True:
            probes += 1
            probe = await client.create(gpu_pod(f"probe-{probes}", schedulerName="other"))
            if probe.metadata.creation_timestamp != first.metadata.creation_timestamp:
                break
            await asyncio.sleep(0.2)
        await client.create(gpu_pod("aa-later"))

        async def both_waiting() -> bool:
            return len(scheduler.queue()) == 2

        await eventually(both_waiting, what="both pods waiting for a node")
        await add_node(client, "n1")  # room for one

        async def one_bound() -> bool:
            return await node_of(client, "zz-first") is not None

        await eventually(one_bound, what="the first to arrive bound")
        assert await node_of(client, "aa-later") is None


async def test_a_gated_pod_waits_for_its_gates_to_be_removed() -> None:
    async with scheduling() as (_, client):
        await add_node(client, "n1")
        gate = {"name": "kueue.x-k8s.io/admission"}
        await client.create(gpu_pod("gated", schedulingGates=[gate]))
        await client.create(gpu_pod("free"))

        async def free_bound() -> bool:
            return await node_of(client, "free") is not None

        await eventually(free_bound, what="the ungated pod bound")
        assert await node_of(client, "gated") is None
        await client.delete(Pod, "free", namespace=NAMESPACE, grace_period_seconds=0)
        await client.patch(Pod, "gated", {"spec": {"schedulingGates": None}}, namespace=NAMESPACE)

        async def gated_bound() -> bool:
            return await node_of(client, "gated") is not None

        await eventually(gated_bound, what="the pod bound once its gate is removed")


async def test_a_gang_ungated_one_pod_at_a_time_is_bound_only_once_whole() -> None:
    # Kueue admits a pod group by lifting its gate from one pod after another (an update each):
    # the pods ungated first must not be placed before the rest, though they fit.
    async with scheduling(pod_groups=("coscheduling",)) as (_, client):
        for node in ("n1", "n2", "n3"):
            await add_node(client, node)
        await client.create(coscheduling_podgroup("train", 3))
        names = [f"train-{i}" for i in range(3)]
        for name in names:
            gated = gpu_pod(name, schedulingGates=[{"name": "kueue.x-k8s.io/admission"}])
            gated.metadata.labels = {COSCHEDULING_POD_GROUP_LABEL: "train"}
            await client.create(gated)
        for lifted, name in enumerate(names[:-1], start=1):
            await client.patch(Pod, name, {"spec": {"schedulingGates": None}}, namespace=NAMESPACE)
            held = f"{len(names) - lifted} of the gang's pods are held by scheduling gates"

            async def told_held(held: str = held) -> bool:
                # The scheduler's verdict after it saw this gate go: the gang still waits.
                events = (await client.list(Event, namespace=NAMESPACE)).items
                return any(held in (e.note or "") for e in events)

            await eventually(told_held, what=f"the gang told {held}")
            assert [await node_of(client, n) for n in names] == [None, None, None]
        await client.patch(Pod, names[-1], {"spec": {"schedulingGates": None}}, namespace=NAMESPACE)

        async def all_bound() -> bool:
            return None not in [await node_of(client, n) for n in names]

        await eventually(all_bound, what="the whole gang bound once its last gate is lifted")


async def test_a_bigger_gang_moves_ahead_by_its_size_credit_and_not_without_it() -> None:
    for credit, expected in ((10.0, ["z-big", "a-single"]), (0.0, ["a-single", "z-big"])):
        async with scheduling(pod_groups=("coscheduling",), size_credit=credit) as (
            scheduler,
            client,
        ):
            await client.create(gpu_pod("a-single"))  # first, and first by name too
            await client.create(coscheduling_podgroup("z-big", 4))
            for index in range(4):
                member = pod(
                    f"z-big-{index}",
                    gpus=8,
                    scheduler=SCHEDULER,
                    pod_group=("coscheduling", "z-big"),
                )
                await client.create(member)

            async def both_waiting() -> bool:
                return len(scheduler.queue()) == 2

            await eventually(both_waiting, what="both gangs waiting for nodes")
            # 4 pods are two doublings: 20 s of credit, more than any gap between the creates.
            assert [name.rsplit("/", 1)[1] for name, _ in scheduler.queue()] == expected


def test_a_size_credit_must_be_a_finite_number_of_seconds() -> None:
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match=r"^size_credit: "):
            GangScheduler("s", size_credit=bad)
