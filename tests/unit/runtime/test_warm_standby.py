"""A standby replica is warm: its caches sync before it holds the Lease and its queue fills
from them, so once it takes over, its first reconcile comes at once and it lists nothing again.
On FakeCluster and a virtual clock (lease 15 s, retry 2 s, controller-runtime's defaults)."""

from __future__ import annotations

import asyncio

from _recording import NS, Recorder, recording_manager

from crdkit.client import Client
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime import Manager
from crdkit.testing import FakeCluster, eventually
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

OBJECTS = 1_000


def replica(client: Client, identity: str, recorder: Recorder) -> Manager:
    return recording_manager(
        client,
        recorder,
        leader_election=True,
        leader_election_id="recorder-leader",
        leader_election_namespace=NS,
        identity=identity,
        clock=asyncio.get_running_loop().time,
    )


async def _take_over() -> tuple[float, float, int, int]:
    cluster = FakeCluster(
        [ConfigMap(metadata=ObjectMeta(name=f"cm-{i}", namespace=NS)) for i in range(OBJECTS)]
    )
    loop = asyncio.get_running_loop()
    first, second = Recorder(), Recorder()
    async with cluster.client() as client:
        leader, standby = replica(client, "a", first), replica(client, "b", second)
        leading = asyncio.create_task(leader.run())
        await eventually(lambda: len(first.at) >= OBJECTS, 600, "the leader's reconciles")
        waiting = asyncio.create_task(standby.run())
        await eventually(lambda: standby.ready, 600, "the standby's caches synced")
        assert not second.at  # it reconciles nothing while it does not lead
        leader.stop()  # releases the Lease on its way out
        await asyncio.wait_for(leading, 600)
        # Polled every 10 ms of virtual time: the elector has no event to wait on, and the poll
        # is the measurement (when it took over, to within 10 ms).
        while standby.elector is None or not standby.elector.is_leader:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        took_over = loop.time()
        await eventually(lambda: len(second.at) >= OBJECTS, 600, "the new leader's work")
        informer = standby.informers.informer(ConfigMap, namespace=NS)
        standby.stop()
        await asyncio.wait_for(waiting, 600)
    return took_over, second.at[0][0], informer.list_count, len({k for _, k in second.at})


def test_a_standby_takes_over_warm() -> None:
    took_over, first_reconcile, lists, reconciled = run_on_virtual_clock(_take_over())
    # The first reconcile is within the 10 ms poll of the takeover (it may come first).
    assert -0.01 <= first_reconcile - took_over <= 0.5, first_reconcile - took_over
    assert lists == 1  # the cache it synced as a standby, not a second list
    assert reconciled == OBJECTS


async def _cold_take_over() -> tuple[int, int, int]:
    """With ``warm_standby=False``: what the standby listed before and after it took over."""
    cluster = FakeCluster(
        [ConfigMap(metadata=ObjectMeta(name=f"cm-{i}", namespace=NS)) for i in range(OBJECTS)]
    )
    first, second = Recorder(), Recorder()
    async with cluster.client() as client:
        leader = replica(client, "a", first)
        standby = recording_manager(
            client,
            second,
            leader_election=True,
            leader_election_id="recorder-leader",
            leader_election_namespace=NS,
            identity="b",
            warm_standby=False,
            clock=asyncio.get_running_loop().time,
        )
        leading = asyncio.create_task(leader.run())
        await eventually(lambda: len(first.at) >= OBJECTS, 600, "the leader's reconciles")
        waiting = asyncio.create_task(standby.run())
        await asyncio.sleep(30)  # two lease durations: a warm standby would have listed
        informer = standby.informers.informer(ConfigMap, namespace=NS)
        listed_while_standing_by = informer.list_count
        assert not standby.ready
        assert not second.at
        leader.stop()
        await asyncio.wait_for(leading, 600)
        await eventually(lambda: len(second.at) >= OBJECTS, 600, "the new leader's work")
        standby.stop()
        await asyncio.wait_for(waiting, 600)
    return listed_while_standing_by, informer.list_count, len({k for _, k in second.at})


def test_a_cold_standby_lists_only_once_it_holds_the_lease() -> None:
    before, after, reconciled = run_on_virtual_clock(_cold_take_over())
    assert (before, after) == (0, 1)
    assert reconciled == OBJECTS
