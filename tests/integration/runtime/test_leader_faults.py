"""Leader election through partitions, each replica behind its own fault proxy.

- A partition shorter than the renew deadline costs nothing: the stuck renewal is abandoned
  after its attempt timeout and the next one, on a fresh connection, gets through.
- A partition longer than the lease makes the leader give up before anyone else can take
  over; the follower then does, and no reconcile of one ever overlaps one of the other. Both
  managers run in this process, so one list records every reconcile start and end in the
  order they happened: overlap is checked by ordering, not by clocks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest
from _runtime_support import new_manager, three_hellos
from examples.hello.operator import Hello
from prometheus_client import CollectorRegistry

from crdkit import Context, Reconciler, Result
from crdkit.client import Client
from crdkit.resources import Lease
from crdkit.runtime import LeaderElectionConfig, LeaderElectionLost, LeaderElector
from crdkit.testing import ControlPlane, TcpFaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s")
        await asyncio.sleep(0.05)


async def renew_time(client: Client, name: str, namespace: str) -> datetime | None:
    lease = await client.get(Lease, name, namespace=namespace)
    return lease.spec.renew_time


async def test_a_partition_shorter_than_the_renew_deadline_keeps_the_lease(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    # controller-runtime's timings: lease 15 s, renew deadline 10 s, retry 2 s.
    config = LeaderElectionConfig("keep", namespace, "leader")
    async with (
        TcpFaultProxy.for_control_plane(control_plane) as proxy,
        Client(proxy.client_config()) as client,
    ):
        elector = LeaderElector(client, config, registry=CollectorRegistry())
        await asyncio.wait_for(elector.acquire(), 30)
        holding = asyncio.create_task(elector.hold())
        try:
            acquired = await renew_time(crdkit_client, "keep", namespace)

            async def renewed_since(moment: datetime | None) -> bool:
                if holding.done():
                    holding.result()  # surface a lost lease at once
                current = await renew_time(crdkit_client, "keep", namespace)
                return current is not None and moment is not None and current > moment

            # Right after a renewal, so the partition spans the next ones.
            await eventually(lambda: renewed_since(acquired), within=30)
            # Connections from before the partition stay dead after it (resume=False): the
            # renewal in flight can only succeed by giving up on its connection.
            proxy.hold(resume=False)
            await asyncio.sleep(5.0)
            proxy.pass_through()
            healed = datetime.now(UTC)
            await eventually(lambda: renewed_since(healed), within=30)
            assert not holding.done(), "the lease was lost to a 5 s partition"
            assert elector.is_leader
        finally:
            holding.cancel()
            await asyncio.gather(holding, return_exceptions=True)
    lease = await crdkit_client.get(Lease, "keep", namespace=namespace)
    assert lease.spec.holder_identity == "leader"
    assert lease.spec.lease_transitions == 0


TIMINGS = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.5}


class Logging(Reconciler[Hello]):
    """Logs each reconcile's start and end (also when cancelled) into a shared list."""

    name = "failover"

    def __init__(self, who: str, log: list[tuple[str, str, str]]) -> None:
        self.who = who
        self.log = log

    async def reconcile(self, ctx: Context, obj: Hello) -> Result:
        name = obj.metadata.name or "?"
        self.log.append((self.who, "start", name))
        try:
            await asyncio.sleep(0.1)
        finally:
            self.log.append((self.who, "end", name))
        return Result(requeue_after=0.05)  # keep reconciling: the log shows who is active


def assert_never_both_active(log: list[tuple[str, str, str]]) -> None:
    active = {"a": 0, "b": 0}
    for index, (who, event, name) in enumerate(log):
        if event == "start":
            other = "b" if who == "a" else "a"
            assert active[other] == 0, f"entry {index}: {who} started {name} while {other} ran"
            active[who] += 1
        else:
            active[who] -= 1


async def test_a_partitioned_leader_fails_over_without_overlapping_reconciles(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await three_hellos(control_plane, crdkit_client, namespace)
    log: list[tuple[str, str, str]] = []

    def started(who: str) -> Callable[[], Awaitable[bool]]:
        async def check() -> bool:
            return any(entry[0] == who for entry in log)

        return check

    options = {"leader_election": True, "leader_election_id": "failover", **TIMINGS}
    async with (
        TcpFaultProxy.for_control_plane(control_plane) as proxy_a,
        TcpFaultProxy.for_control_plane(control_plane) as proxy_b,
        Client(proxy_a.client_config()) as client_a,
        Client(proxy_b.client_config()) as client_b,
    ):
        manager_a = new_manager(client_a, namespace, identity="a", **options)
        manager_b = new_manager(client_b, namespace, identity="b", **options)
        manager_a.add(Logging("a", log))
        manager_b.add(Logging("b", log))
        run_a = asyncio.create_task(manager_a.run())
        run_b: asyncio.Task[None] | None = None
        try:
            await eventually(started("a"))
            run_b = asyncio.create_task(manager_b.run())

            async def b_ready() -> bool:
                return manager_b.ready

            await eventually(b_ready)
            await asyncio.sleep(TIMINGS["lease_duration"])  # longer than a lease: b waits
            assert not any(who == "b" for who, _, _ in log), "b reconciled while a led"

            proxy_a.hold()  # a is cut off from the apiserver; b is not
            with pytest.raises(LeaderElectionLost):
                await asyncio.wait_for(run_a, 30)  # a gives up at its renew deadline
            a_stopped = len(log)
            await eventually(started("b"))
            await asyncio.sleep(1.0)  # b at work for a while
            proxy_a.pass_through()  # the partition heals after b took over
            await asyncio.sleep(1.0)
        finally:
            manager_b.stop()
            if run_b is not None:
                await asyncio.wait_for(run_b, 30)
            if not run_a.done():
                run_a.cancel()
            await asyncio.gather(run_a, return_exceptions=True)
    lease = await crdkit_client.get(Lease, "failover", namespace=namespace)
    assert lease.spec.lease_transitions == 1
    assert_never_both_active(log)
    first_b = next(i for i, (who, _, _) in enumerate(log) if who == "b")
    assert first_b >= a_stopped  # b started only after a had stopped every reconcile
    assert not any(who == "a" for who, _, _ in log[a_stopped:])
    a_entries = [e for e in log if e[0] == "a"]
    assert a_entries[-1][1] == "end"  # a's last reconcile was ended (cancelled), not left open
