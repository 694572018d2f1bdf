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
    create_job,
    has_event,
    pods_of,
    pool_with_nodes,
    running_scheduler,
)

from crdkit.client import Client
from crdkit.resources import Pod
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
        wanted = await create_job(admin, pool, "job", 3, scheduler=name)
        async with HttpFaultProxy.for_control_plane(scheduling_plane) as proxy:
            refused = proxy.fail(
                500, methods=["POST"], path=r"/pods/job-worker-1/binding$", times=1
            )
            async with (
                Client(proxy.client_config()) as client,
                running_scheduler(client, pool, name),
            ):
                await eventually(
                    lambda: has_event(admin, pool, note="binding rejected"),
                    what="the rollback reported",
                )
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
        pods = await create_job(client, pool, job, 3, scheduler=name)
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


@pytest.mark.parametrize(
    ("racks", "bound_on", "rack_after"),
    [
        # Both bound pods fill rack a: the other two cannot join them there.
        pytest.param({"a": 2, "b": 4}, (0, 1), "b", id="rest-cannot-fit-beside-it"),
        # Bound in two racks, though the gang must keep to one: the rest fits beside neither.
        pytest.param({"a": 4, "b": 4}, (0, 4), None, id="split-across-racks"),
    ],
)
async def test_a_half_bound_gang_that_cannot_be_adopted_is_rolled_back_and_placed_whole(
    scheduling_plane: ControlPlane,
    racks: dict[str, int],
    bound_on: tuple[int, int],
    rack_after: str | None,
) -> None:
    async with half_bound_gang(scheduling_plane, racks, "rolled", bound_on) as gang:
        placed = await gang.rolled_back_and_placed_again()
        racks_used = {node.split("-")[1] for node in placed.values()}
        assert len(racks_used) == 1
        assert rack_after is None or racks_used == {rack_after}
        assert gang.scheduler.bound_gangs == 1


async def test_a_gang_bound_at_its_minimum_is_kept_and_grows_as_room_allows(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 4})
        # A master and 5 workers of 8 GPUs on four 8-GPU nodes: the gang (minMember 3, at least
        # 2 workers) starts at its minimum, then one more worker fits; none of it is undone.
        await create_job(
            client, pool, "grow", 5, scheduler=name, min_member=3, min_task_member={"worker": 2}
        )
        async with running_scheduler(client, pool, name):
            await eventually(lambda: bound_count_is(client, pool, "grow", 4), what="4 bound")
            first = {p.metadata.name: p.metadata.uid for p in await pods_of(client, pool, "grow")}
            await asyncio.sleep(1.0)  # no rollback, no more binds: the other two wait
            now = {p.metadata.name: p.metadata.uid for p in await pods_of(client, pool, "grow")}
            assert now == first
            assert len(await bound(client, pool, "grow")) == 4
            assert "grow-master-0" in await bound(client, pool, "grow")
