"""``GangScheduler`` on the fake cluster, on a manual clock: a waiting gang is explained once,
and again only when its gang or the placer's reason changed, or the explanation grew old; its
passes stay cheap however often capacity events wake it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from _fake_scheduling import NAMESPACE, add_node, gpu_pod, scheduling

from crdkit.resources import Event
from crdkit.testing import eventually

if TYPE_CHECKING:
    from crdkit.client import Client
    from crdkit.scheduling import GangScheduler


async def explained_again_once_old(
    scheduler: GangScheduler, client: Client, now: list[float], node: str
) -> None:
    """With one explanation made, moves the manual clock past ``explain_refresh`` (10 s) and
    wakes the scheduler with a capacity event (node ``node``): one new explanation follows."""
    assert scheduler.reporter.explanations == 1
    now[0] = 11.0

    async def explained_again() -> bool:
        return scheduler.reporter.explanations == 2

    await add_node(client, node)
    await eventually(explained_again, what="explained again once old")


async def test_a_waiting_gang_is_explained_again_only_when_it_can_have_changed() -> None:
    now = [0.0]
    async with scheduling(clock=lambda: now[0]) as (scheduler, client):
        await add_node(client, "n1")
        await client.create(gpu_pod("huge", 16))  # more than any node: never fits

        async def explained_once() -> bool:
            return scheduler.reporter.explanations == 1

        await eventually(explained_once, what="the huge pod explained")
        passes = scheduler.passes
        for i in range(2, 7):  # capacity events wake it; nothing it waits on changed
            await add_node(client, f"n{i}")

        async def woken() -> bool:
            # Capacity events between two passes make one pass: at least one ran.
            return len(scheduler.mirror.node_names()) == 6 and scheduler.passes > passes

        await eventually(woken, what="the new nodes seen and the gang placed again")
        await explained_again_once_old(scheduler, client, now, "n7")


async def test_alike_waiting_gangs_share_one_explanation_and_each_is_told() -> None:
    now = [0.0]
    async with scheduling(clock=lambda: now[0]) as (scheduler, client):
        await add_node(client, "n1")
        names = [f"huge-{i}" for i in range(5)]
        for name in names:
            await client.create(gpu_pod(name, 16))  # alike but for their names: none fits

        async def all_told() -> bool:
            events = (await client.list(Event, namespace=NAMESPACE)).items
            told = {
                e.regarding.name for e in events if e.reason == "FailedScheduling" and e.regarding
            }
            return told == set(names)

        await eventually(all_told, what="every waiting pod told why")
        await explained_again_once_old(scheduler, client, now, "n2")  # one for all five
        events = (await client.list(Event, namespace=NAMESPACE)).items
        notes = {e.note for e in events if e.reason == "FailedScheduling"}
        assert all("never fits" in (n or "") for n in notes), notes
