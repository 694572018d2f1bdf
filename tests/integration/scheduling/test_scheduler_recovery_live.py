"""The gang scheduler when things go wrong: a bind refused mid-gang, and a restart that finds a
gang half bound (what a scheduler killed mid-bind leaves behind)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
from _cluster import (
    bound_count_is,
    create_all,
    pods_of,
    pool_with_nodes,
    pytorchjob_pods,
    running_scheduler,
    volcano_podgroup,
)

from crdkit.client import Client
from crdkit.resources import Event, Pod
from crdkit.scheduling import GangScheduler
from crdkit.testing import ControlPlane, HttpFaultProxy, eventually

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def bound(client: Client, namespace: str, prefix: str) -> dict[str, str]:
    return {
        p.metadata.name or "": p.spec.node_name
        for p in await pods_of(client, namespace, prefix)
        if p.spec.node_name
    }


async def recreate_missing(client: Client, namespace: str, wanted: list[Pod]) -> None:
    """What the pods' controller does: make again any pod that is gone."""
    have = {p.metadata.name for p in await pods_of(client, namespace)}
    await create_all(client, [p for p in wanted if p.metadata.name not in have])


async def test_a_bind_refused_mid_gang_rolls_the_gang_back_and_a_retry_binds_it_whole(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as admin:
        pool, _, name = await pool_with_nodes(admin, scheduling_plane, {"a": 4})
        wanted = pytorchjob_pods("job", pool, 3, scheduler=name, group="volcano")
        await create_all(admin, [volcano_podgroup("job", pool, 4, tier=1), *wanted])
        async with HttpFaultProxy.for_control_plane(scheduling_plane) as proxy:
            refused = proxy.fail(
                500, methods=["POST"], path=r"/pods/job-worker-1/binding$", times=1
            )
            async with (
                Client(proxy.client_config()) as client,
                running_scheduler(client, pool, name),
            ):

                async def rolled_back() -> bool:
                    events = await admin.list(Event, namespace=pool)
                    return any("binding rejected" in (e.note or "") for e in events.items)

                await eventually(rolled_back, what="the rollback reported")
                assert refused.hits == 1
                # Whatever the failed attempt bound is gone, never left bound alone.
                after = await bound(admin, pool, "job")
                assert len(after) in (0, 4)
                # The training operator makes its deleted pods again; the retry binds all.
                for _ in range(2):
                    await recreate_missing(admin, pool, wanted)
                await eventually(
                    lambda: bound_count_is(admin, pool, "job", 4), what="the gang bound whole"
                )


@dataclass
class HalfBound:
    """A gang of `half_bound_gang` with a scheduler running on it."""

    client: Client
    pool: str
    """The pool, also the namespace."""
    job: str
    nodes: list[str]
    pods: list[Pod]
    scheduler: GangScheduler

    async def bound(self) -> dict[str, str]:
        return await bound(self.client, self.pool, self.job)

    async def rolled_back_and_placed_again(self) -> dict[str, str]:
        """Waits until the scheduler deletes the two pods bound before it started, makes them
        again as their controller would, and waits until the gang is bound whole. Returns
        where its pods are bound."""
        client, pool, job = self.client, self.pool, self.job

        async def bound_ones_deleted() -> bool:
            names = {p.metadata.name for p in await pods_of(client, pool, job)}
            return f"{job}-master-0" not in names and f"{job}-worker-0" not in names

        await eventually(bound_ones_deleted, what=f"the half-bound pods of {job} deleted")
        await recreate_missing(client, pool, self.pods)
        await eventually(lambda: bound_count_is(client, pool, job, 4), what=f"{job} placed again")
        return await self.bound()


@asynccontextmanager
async def half_bound_gang(
    plane: ControlPlane, racks: dict[str, int], job: str, bound_on: tuple[int, int]
) -> AsyncIterator[HalfBound]:
    """A master and 3 workers in one Volcano gang (minMember 4, one rack), and what a scheduler
    killed mid-bind leaves: the master and the first worker bound to the nodes at ``bound_on``;
    then a scheduler runs on it."""
    async with Client.from_control_plane(plane) as client:
        pool, nodes, name = await pool_with_nodes(client, plane, racks)
        pods = pytorchjob_pods(job, pool, 3, scheduler=name, group="volcano")
        await create_all(client, [volcano_podgroup(job, pool, 4, tier=1), *pods])
        await client.bind(f"{job}-master-0", nodes[bound_on[0]], namespace=pool)
        await client.bind(f"{job}-worker-0", nodes[bound_on[1]], namespace=pool)
        async with running_scheduler(client, pool, name) as scheduler:
            yield HalfBound(client, pool, job, nodes, pods, scheduler)


async def test_a_half_bound_gang_is_adopted_when_the_rest_fits_beside_it(
    scheduling_plane: ControlPlane,
) -> None:
    # A scheduler bound two pods to rack a, then died.
    async with half_bound_gang(scheduling_plane, {"a": 4, "b": 4}, "half", (0, 1)) as gang:
        await eventually(lambda: bound_count_is(gang.client, gang.pool, "half", 4), what="adopted")
        placed = await gang.bound()
        assert placed["half-master-0"] == gang.nodes[0]  # the bound pods were kept
        assert all(f"{gang.pool}-a-" in node for node in placed.values())


async def test_a_half_bound_gang_whose_rest_cannot_fit_beside_it_is_rolled_back(
    scheduling_plane: ControlPlane,
) -> None:
    # Both bound pods fill rack a: the other two cannot join them there.
    async with half_bound_gang(scheduling_plane, {"a": 2, "b": 4}, "stuck", (0, 1)) as gang:
        placed = await gang.rolled_back_and_placed_again()
        assert all(f"{gang.pool}-b-" in node for node in placed.values())


async def test_a_half_bound_gang_split_across_racks_is_rolled_back_and_placed_whole(
    scheduling_plane: ControlPlane,
) -> None:
    # Bound in two racks, though the gang must keep to one: the rest fits beside neither.
    async with half_bound_gang(scheduling_plane, {"a": 4, "b": 4}, "split", (0, 4)) as gang:
        placed = await gang.rolled_back_and_placed_again()
        racks = {node.split("-")[1] for node in placed.values()}
        assert len(racks) == 1
        assert gang.scheduler.bound_gangs == 1


async def test_a_gang_bound_at_its_minimum_is_kept_and_grows_as_room_allows(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 4})
        # A master and 5 workers of 8 GPUs on four 8-GPU nodes: the gang (minMember 3, at least
        # 2 workers) starts at its minimum, then one more worker fits; none of it is undone.
        pods = pytorchjob_pods("grow", pool, 5, scheduler=name, group="volcano")
        group = volcano_podgroup("grow", pool, 3, tier=1)
        group.spec.min_task_member = {"worker": 2}
        await create_all(client, [group, *pods])
        async with running_scheduler(client, pool, name):
            await eventually(lambda: bound_count_is(client, pool, "grow", 4), what="4 bound")
            first = {p.metadata.name: p.metadata.uid for p in await pods_of(client, pool, "grow")}
            await asyncio.sleep(1.0)  # no rollback, no more binds: the other two wait
            now = {p.metadata.name: p.metadata.uid for p in await pods_of(client, pool, "grow")}
            assert now == first
            assert len(await bound(client, pool, "grow")) == 4
            assert "grow-master-0" in await bound(client, pool, "grow")
