"""``GangScheduler``'s behaviour on the fake cluster, through each gang API's adapter: a gang
binds whole or not at all, its PodGroup's status says where it stands (the coscheduling one
through the status subresource, Volcano's on the object, with conditions), and a gang left
partly bound is rolled back. Milliseconds each; the same flows on the real apiserver are in
tests/integration/scheduling/."""

from __future__ import annotations

from typing import Any

import pytest
from _fake_scheduling import NAMESPACE, SCHEDULER, add_node, scheduling

from crdkit.client import Client
from crdkit.resources import Event, Pod
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.groups import GROUP_APIS, POD_GROUP_APIS, group_api
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.groups.volcano import VolcanoPodGroup
from crdkit.testing import eventually
from factories import coscheduling_podgroup, pod, volcano_podgroup


def coscheduling_member(name: str, group: str, **spec: Any) -> Pod:
    return pod(name, gpus=8, scheduler=SCHEDULER, pod_group=("coscheduling", group), **spec)


def volcano_member(name: str, group: str, **spec: Any) -> Pod:
    return pod(name, gpus=8, scheduler=SCHEDULER, pod_group=("volcano", group), **spec)


async def nodes_of(client: Client, names: list[str]) -> list[str | None]:
    return [(await client.get(Pod, n, namespace=NAMESPACE)).spec.node_name for n in names]


async def reasons(client: Client) -> list[str]:
    return [event.reason or "" for event in (await client.list(Event, namespace=NAMESPACE)).items]


async def test_a_coscheduling_gang_binds_whole_once_it_fits_and_its_status_follows() -> None:
    async with scheduling(pod_groups=("coscheduling",)) as (scheduler, client):
        group = coscheduling_podgroup("job", 3)
        await client.create(group)
        for node in ("n1", "n2"):
            await add_node(client, node)
        names = ["job-0", "job-1", "job-2"]
        for name in names:
            await client.create(coscheduling_member(name, "job"))

        async def pending_with_a_reason() -> bool:
            found = await client.get(CoschedulingPodGroup, "job", namespace=NAMESPACE)
            return (
                found.status is not None
                and found.status.phase == "Pending"
                and "FailedScheduling" in await reasons(client)
            )

        await eventually(pending_with_a_reason, what="the gang waiting, said so")
        assert await nodes_of(client, names) == [None, None, None]  # two fit: none is bound

        await add_node(client, "n3")

        async def all_bound() -> bool:
            return None not in await nodes_of(client, names)

        await eventually(all_bound, what="the whole gang bound")
        assert len(set(await nodes_of(client, names))) == 3
        assert scheduler.bound_gangs == 1

        async def scheduling_phase() -> bool:
            found = await client.get(CoschedulingPodGroup, "job", namespace=NAMESPACE)
            assert found.status is not None
            return (
                found.status.phase == "Scheduling" and found.status.schedule_start_time is not None
            )

        await eventually(scheduling_phase, what="the PodGroup in phase Scheduling")
        assert (await reasons(client)).count("Scheduled") == 3


async def test_a_volcano_gang_that_cannot_fit_gets_an_unschedulable_condition() -> None:
    async with scheduling(pod_groups=("volcano",)) as (_, client):
        group = volcano_podgroup("big", 2)
        await client.create(group)
        await add_node(client, "n1")
        for name in ("big-0", "big-1"):
            await client.create(volcano_member(name, "big"))

        async def unschedulable() -> bool:
            found = await client.get(VolcanoPodGroup, "big", namespace=NAMESPACE)
            if found.status is None:
                return False
            conditions = {c.type: c for c in found.status.conditions or []}
            condition = conditions.get("Unschedulable")
            return (
                found.status.phase == "Pending"
                and condition is not None
                and condition.status == "True"
                and condition.reason == "Unschedulable"
            )

        # Volcano's CRD has no status subresource: the adapter writes the object's status.
        await eventually(unschedulable, what="an Unschedulable condition on the PodGroup")
        assert await nodes_of(client, ["big-0", "big-1"]) == [None, None]

        await add_node(client, "n2")

        async def scheduled() -> bool:
            found = await client.get(VolcanoPodGroup, "big", namespace=NAMESPACE)
            assert found.status is not None
            types = {c.type: c.status for c in found.status.conditions or []}
            return found.status.phase == "Running" and types.get("Scheduled") == "True"

        await eventually(scheduled, what="the PodGroup Running, its condition Scheduled")
        assert None not in await nodes_of(client, ["big-0", "big-1"])


async def test_a_gang_left_partly_bound_that_cannot_be_completed_is_rolled_back() -> None:
    async with scheduling(pod_groups=("coscheduling",)) as (_, client):
        group = coscheduling_podgroup("torn", 3)
        await client.create(group)
        await add_node(client, "n1")
        # What a scheduler that stopped mid-bind leaves: one pod bound, none running, and
        # the other two cannot fit (the only node is full).
        await client.create(coscheduling_member("torn-0", "torn", nodeName="n1"))
        for name in ("torn-1", "torn-2"):
            await client.create(coscheduling_member(name, "torn"))

        async def rolled_back() -> bool:
            pods = (await client.list(Pod, namespace=NAMESPACE)).items
            names = {p.metadata.name for p in pods}
            return "torn-0" not in names and "GangRolledBack" in await reasons(client)

        await eventually(rolled_back, what="the bound pod deleted, the rollback recorded")


def test_every_gang_api_is_declared_once_by_its_adapter() -> None:
    assert set(GROUP_APIS) == {*POD_GROUP_APIS, "pod"}
    assert all(api.name == name for name, api in GROUP_APIS.items())
    # The scheduler's RBAC is the pods' and nodes' plus each adapter's own.
    for name in POD_GROUP_APIS:
        for rule in GROUP_APIS[name].rbac:
            assert rule in GangScheduler.rbac
    with pytest.raises(ValueError, match=r"pod_groups: unknown PodGroup API 'kueue'"):
        group_api("kueue")
    with pytest.raises(ValueError, match="pod_groups"):
        GangScheduler(SCHEDULER, pod_groups=("pod",))  # type: ignore[arg-type]
