"""`GangScheduler` holds the node a gang's first ending pod frees until the rest of the gang
has ended (on the fake cluster): a waiting pod is not placed there meanwhile, and is once the
gang is over; with ``settle_seconds=0`` it is placed as soon as the node frees."""

from __future__ import annotations

import pytest
from _fake_scheduling import NAMESPACE, SCHEDULER, add_node, gpu_pod, scheduling

from crdkit.client import Client
from crdkit.resources import Event, Pod
from crdkit.scheduling import GangScheduler
from crdkit.testing import eventually
from factories import coscheduling_podgroup, pod


async def running_gang(client: Client) -> None:
    """Gang "job" of two pods, bound to n1 and n2 and running; the only nodes there are."""
    await client.create(coscheduling_podgroup("job", 2))
    for index, node in enumerate(("n1", "n2")):
        await add_node(client, node)
        member = pod(
            f"job-{index}",
            gpus=8,
            scheduler=SCHEDULER,
            node=node,
            pod_group=("coscheduling", "job"),
        )
        await client.create(member)
        await set_phase(client, f"job-{index}", "Running")


async def small_pod_behind_running_gang(client: Client) -> None:
    """`running_gang`, then pod ``small`` told that it waits: every node is taken."""
    await running_gang(client)
    await client.create(gpu_pod("small"))
    await eventually(lambda: waits_for(client, "Insufficient"), what="no room at first")


async def set_phase(client: Client, name: str, phase: str) -> None:
    await client.patch(
        Pod, name, {"status": {"phase": phase}}, namespace=NAMESPACE, subresource="status"
    )


async def node_of(client: Client, name: str) -> str | None:
    return (await client.get(Pod, name, namespace=NAMESPACE)).spec.node_name


async def waits_for(client: Client, text: str) -> bool:
    events = (await client.list(Event, namespace=NAMESPACE)).items
    return any(
        e.reason == "FailedScheduling"
        and text in (e.note or "")
        and e.regarding is not None
        and e.regarding.name == "small"
        for e in events
    )


async def test_a_waiting_pod_gets_the_node_once_the_whole_gang_has_ended() -> None:
    # No reservations: the small pod, first in line, would hold n1 for itself, and settling
    # leaves a reserved node to its reservation.
    options = {"settle_seconds": 3600.0, "reservations_per_priority": 0}
    async with scheduling(pod_groups=("coscheduling",), **options) as (scheduler, client):
        await small_pod_behind_running_gang(client)
        await set_phase(client, "job-0", "Succeeded")  # n1 frees; job-1 still runs on n2

        async def held_and_passed() -> bool:
            # The hold is made in the same event handler that wakes the pass; once the
            # scheduler is idle after it, the pass that could have placed the pod has run.
            held = scheduler.settling.held() == {"coscheduling/ml/job": {"n1"}}
            return held and scheduler.idle

        await eventually(held_and_passed, what="n1 held for the ending gang, a pass run")
        assert await node_of(client, "small") is None
        await client.delete(Pod, "job-1", namespace=NAMESPACE, grace_period_seconds=0)  # the last

        async def placed() -> bool:
            return await node_of(client, "small") is not None

        await eventually(placed, what="the small pod bound once the gang ended")


async def test_without_settling_the_freed_node_is_taken_at_once() -> None:
    options = {"settle_seconds": 0.0, "reservations_per_priority": 0}
    async with scheduling(pod_groups=("coscheduling",), **options) as (_, client):
        await small_pod_behind_running_gang(client)
        await set_phase(client, "job-0", "Succeeded")

        async def on_n1() -> bool:
            return await node_of(client, "small") == "n1"

        await eventually(on_n1, what="the small pod bound to the node job-0 freed")
        assert (await client.get(Pod, "job-1", namespace=NAMESPACE)).spec.node_name == "n2"


@pytest.mark.parametrize("option", ["settle_seconds", "pass_pause"])
def test_a_negative_figure_is_refused_naming_the_option(option: str) -> None:
    with pytest.raises(ValueError, match=option):
        GangScheduler("gangs", **{option: -1.0})
