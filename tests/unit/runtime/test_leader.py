"""The Lease elector's timing on a virtual clock: hand-over, giving up, and replacing a dead leader.

The Lease lives in a small in-memory store with the apiserver's optimistic concurrency (a
resourceVersion per write, 409 on a stale replace, 409 AlreadyExists on a second create), so
these are unit tests of the elector's logic. Time is virtual (crdkit.testing.sim.virtual_time), so
the bounds below are exact and hold on any machine; the same scenario on the real apiserver is in
tests/integration/runtime/, and its real-time figures in benches/leader_failover.py.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import cast
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from crdkit.client import Client
from crdkit.client.errors import AlreadyExists, Conflict, NotFound, TransportError
from crdkit.resources import Lease
from crdkit.runtime import LeaderElectionConfig, LeaderElectionLost, LeaderElector
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 15.0, 10.0, 2.0


class LeaseStore:
    """One namespace's Leases, as the apiserver keeps them."""

    def __init__(self) -> None:
        self.leases: dict[str, Lease] = {}
        self.version = 0

    def stored(self, lease: Lease) -> Lease:
        self.version += 1
        kept = lease.model_copy(deep=True)
        kept.metadata.resource_version = str(self.version)
        self.leases[kept.metadata.name or ""] = kept
        return kept.model_copy(deep=True)


class LeaseClient:
    """The three calls the elector makes, against a :class:`LeaseStore`. ``partitioned``
    refuses every call at once; ``hang`` makes the next that many reads never answer, as a
    request on a dead connection does (``stuck`` counts those the caller gave up on)."""

    def __init__(self, store: LeaseStore) -> None:
        self.store = store
        self.partitioned = False
        self.hang = 0
        self.stuck = 0
        self.renewals = 0

    def _reach(self) -> None:
        if self.partitioned:
            raise TransportError("connection refused (partitioned)")

    async def get(self, kind: type[Lease], name: str, *, namespace: str) -> Lease:
        self._reach()
        if self.hang:
            self.hang -= 1
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.stuck += 1
                raise
        if name not in self.store.leases:
            raise NotFound(f"leases {name!r} not found", code=404, reason="NotFound")
        return self.store.leases[name].model_copy(deep=True)

    async def create(self, lease: Lease) -> Lease:
        self._reach()
        if (lease.metadata.name or "") in self.store.leases:
            raise AlreadyExists("already exists", code=409, reason="AlreadyExists")
        return self.store.stored(lease)

    async def replace(self, lease: Lease) -> Lease:
        self._reach()
        current = self.store.leases[lease.metadata.name or ""]
        if current.metadata.resource_version != lease.metadata.resource_version:
            raise Conflict("the object has been modified", code=409, reason="Conflict")
        self.renewals += 1
        return self.store.stored(lease)


def new_elector(
    client: LeaseClient, identity: str, attempt_timeout: float | None = None
) -> LeaderElector:
    config = LeaderElectionConfig(
        "lead",
        "ns",
        identity,
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY_PERIOD,
        attempt_timeout=attempt_timeout,
    )
    loop = asyncio.get_running_loop()
    return LeaderElector(
        cast(Client, client), config, registry=CollectorRegistry(), clock=loop.time
    )


async def acquired_at(elector: LeaderElector) -> float:
    await elector.acquire()
    return asyncio.get_running_loop().time()


@dataclass
class Contest:
    """Two electors on one store: ``leader`` (``a``) holds the lease, ``holding`` renewing it,
    while ``follower`` (``b``) waits for it, ``waiting`` ending at the time it acquired it.
    ``leader_client`` is the leader's own client, to cut it off."""

    store: LeaseStore
    leader_client: LeaseClient
    leader: LeaderElector
    follower: LeaderElector
    holding: asyncio.Task[None]
    waiting: asyncio.Task[float]


async def contest() -> Contest:
    """A leader that has acquired the lease and holds it, and a follower waiting for it."""
    store = LeaseStore()
    leader_client = LeaseClient(store)
    leader, follower = new_elector(leader_client, "a"), new_elector(LeaseClient(store), "b")
    await leader.acquire()
    holding = asyncio.create_task(leader.hold())
    waiting = asyncio.create_task(acquired_at(follower))
    return Contest(store, leader_client, leader, follower, holding, waiting)


def test_a_released_lease_is_taken_within_one_retry_period() -> None:
    async def main() -> None:
        started = await contest()
        store, first, second = started.store, started.leader, started.follower
        holding, waiting = started.holding, started.waiting
        await asyncio.sleep(10 * LEASE_DURATION)  # renewals keep the lease alive all along
        assert not waiting.done(), "a live lease must not be taken"
        holding.cancel()
        await asyncio.gather(holding, return_exceptions=True)
        assert await first.release()
        released = asyncio.get_running_loop().time()
        took = await waiting - released
        assert 0 < took <= RETRY_PERIOD
        lease = store.leases["lead"]
        assert lease.spec.holder_identity == "b"
        assert lease.spec.lease_transitions == 1
        assert second.is_leader
        assert not first.is_leader

    run_on_virtual_clock(main())


@given(seed=st.integers(0, 2**32 - 1), killed_after=st.floats(0, 3 * LEASE_DURATION))
def test_a_dead_leader_is_replaced_within_lease_duration_plus_retry_period(
    seed: int, killed_after: float
) -> None:
    """SIGKILL: the leader stops renewing and never releases. Whatever the retry jitter, the
    follower takes over no sooner than ``lease_duration`` after the last renewal it could have
    seen and no later than ``lease_duration + retry_period`` after the death."""

    async def main() -> None:
        random.seed(seed)  # the elector jitters its retries with the module-level generator
        loop = asyncio.get_running_loop()
        started = await contest()
        store, holding, waiting = started.store, started.holding, started.waiting
        await asyncio.sleep(killed_after)
        renewals_before_death = store.version
        last_renewal = store.leases["lead"].spec.renew_time
        holding.cancel()  # no release: the process is gone
        await asyncio.gather(holding, return_exceptions=True)
        died = loop.time()
        assert store.version == renewals_before_death
        assert last_renewal is not None
        took_over = await waiting
        assert took_over - died <= LEASE_DURATION + RETRY_PERIOD
        # The follower can only have seen a renewal that happened before the death.
        assert took_over - died > LEASE_DURATION - RETRY_PERIOD
        assert store.leases["lead"].spec.holder_identity == "b"

    run_on_virtual_clock(main())


def test_a_leader_that_cannot_renew_gives_up_before_anyone_can_take_over() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        started = await contest()
        leader, leader_client = started.leader, started.leader_client
        holding, waiting = started.holding, started.waiting
        await asyncio.sleep(3 * RETRY_PERIOD + 0.5)
        leader_client.partitioned = True
        cut = loop.time()
        with pytest.raises(LeaderElectionLost):
            await holding
        lost = loop.time()
        assert not leader.is_leader
        took_over = await waiting
        # The leader's last renewal was at most one retry period before the cut; it gives up
        # renew_deadline after that renewal, strictly before the lease can expire for others.
        assert cut - RETRY_PERIOD <= lost - RENEW_DEADLINE <= cut
        assert lost < took_over
        assert took_over - lost >= LEASE_DURATION - RENEW_DEADLINE - RETRY_PERIOD

    run_on_virtual_clock(main())


def test_a_partition_shorter_than_the_renew_deadline_keeps_the_lease() -> None:
    async def main() -> None:
        started = await contest()
        store, leader, leader_client = started.store, started.leader, started.leader_client
        holding, waiting = started.holding, started.waiting
        await asyncio.sleep(RETRY_PERIOD + 0.5)
        leader_client.partitioned = True
        await asyncio.sleep(RENEW_DEADLINE - 2 * RETRY_PERIOD - 0.1)
        leader_client.partitioned = False
        await asyncio.sleep(5 * LEASE_DURATION)
        assert not holding.done(), "the leader must renew again once the partition heals"
        assert leader.is_leader
        assert not waiting.done()
        assert store.leases["lead"].spec.lease_transitions == 0
        for task in (holding, waiting):
            task.cancel()
        await asyncio.gather(holding, waiting, return_exceptions=True)

    run_on_virtual_clock(main())


def test_a_renewal_stuck_on_a_dead_connection_is_abandoned_and_retried() -> None:
    async def main() -> None:
        client = LeaseClient(LeaseStore())
        leader = new_elector(client, "a")
        await leader.acquire()
        client.hang = 1  # the next read never answers
        holding = asyncio.create_task(leader.hold())
        await asyncio.sleep(5 * LEASE_DURATION)
        assert not holding.done(), "one stuck request must not cost the lease"
        assert leader.is_leader
        assert client.stuck == 1
        assert client.renewals >= 30
        holding.cancel()
        await asyncio.gather(holding, return_exceptions=True)

    run_on_virtual_clock(main())


def test_an_unreachable_apiserver_costs_the_lease_after_the_renew_deadline() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        client = LeaseClient(LeaseStore())
        leader = new_elector(client, "a")
        await leader.acquire()
        acquired = loop.time()
        client.hang = 1000  # every read from now on hangs
        with pytest.raises(LeaderElectionLost):
            await leader.hold()
        # The last renewal was the acquire; the deadline runs from it.
        assert loop.time() - acquired == pytest.approx(RENEW_DEADLINE)
        # Attempts of a quarter of the deadline each, one after another, all abandoned.
        assert client.stuck == 4
        assert not leader.is_leader

    run_on_virtual_clock(main())


def test_attempt_timeout_defaults_to_a_quarter_of_the_renew_deadline() -> None:
    assert LeaderElectionConfig("l", "ns").effective_attempt_timeout == 2.5
    assert LeaderElectionConfig("l", "ns", attempt_timeout=1.0).effective_attempt_timeout == 1.0
    with pytest.raises(ValueError, match="attempt_timeout"):
        LeaderElectionConfig("l", "ns", attempt_timeout=11.0)
    with pytest.raises(ValueError, match="attempt_timeout"):
        LeaderElectionConfig("l", "ns", attempt_timeout=0.0)


def test_release_does_not_hang_on_a_dead_connection() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        client = LeaseClient(LeaseStore())
        leader = new_elector(client, "a", attempt_timeout=0.2)
        await leader.acquire()
        client.hang = 1
        started = loop.time()
        assert not await leader.release()  # gave up; the lease expires instead
        assert loop.time() - started == pytest.approx(0.2)
        assert client.stuck == 1
        assert not leader.is_leader

    run_on_virtual_clock(main())


def test_acquire_attempts_are_bounded_too() -> None:
    async def main() -> None:
        store = LeaseStore()
        client = LeaseClient(store)
        client.hang = 1
        await new_elector(client, "a").acquire()
        assert client.stuck == 1
        assert store.leases["lead"].spec.holder_identity == "a"

    run_on_virtual_clock(main())


@pytest.mark.timeout(60)
@given(
    start=st.floats(min_value=0.0, max_value=1e7, allow_nan=False),
    jitter=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
)
@example(start=22.961186437535975, jitter=0.0)  # the deadline lands an ulp after "now"
def test_a_leader_cut_off_gives_up_at_its_renew_deadline_whatever_its_clock_reads(
    start: float, jitter: float
) -> None:
    """The renew deadline is checked one way only: on some clock readings, "no time left to
    try" and "the deadline has not passed" were both true, and the elector slept 0 s over and
    over (on a virtual clock, a loop that never idles, so time stood still for good)."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        client = LeaseClient(LeaseStore())
        leader = new_elector(client, "a")
        await leader.acquire()
        acquired = loop.time()
        client.partitioned = True
        with pytest.raises(LeaderElectionLost):
            await leader.hold()
        assert loop.time() - acquired == pytest.approx(RENEW_DEADLINE, abs=1e-6)

    with mock.patch.object(random, "random", return_value=jitter):
        run_on_virtual_clock(main(), start=start)
