"""The Lease elector against an in-memory Lease whose reads can hang (a dead connection)."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from crdkit.client.errors import Conflict, NotFound
from crdkit.resources import Lease
from crdkit.runtime.leader import LeaderElectionConfig, LeaderElectionLost, LeaderElector


class LeaseServer:
    """One Lease with optimistic concurrency; ``hang`` makes the next reads never answer."""

    def __init__(self) -> None:
        self.lease: Lease | None = None
        self.version = 0
        self.hang = 0
        self.gets = 0
        self.stuck = 0  # reads that hung and were abandoned by their caller
        self.renewals = 0

    async def get(self, kind: type[Lease], name: str, *, namespace: str) -> Lease:
        self.gets += 1
        if self.hang:
            self.hang -= 1
            try:
                await asyncio.Event().wait()  # a request on a dead connection
            except asyncio.CancelledError:
                self.stuck += 1
                raise
        if self.lease is None:
            raise NotFound("no lease", code=404)
        return self.lease.model_copy(deep=True)

    async def create(self, lease: Lease) -> Lease:
        return self._store(lease)

    async def replace(self, lease: Lease) -> Lease:
        assert self.lease is not None
        if lease.metadata.resource_version != self.lease.metadata.resource_version:
            raise Conflict("stale", code=409)
        self.renewals += 1
        return self._store(lease)

    def _store(self, lease: Lease) -> Lease:
        self.version += 1
        stored = lease.model_copy(deep=True)
        stored.metadata.resource_version = str(self.version)
        self.lease = stored
        return stored.model_copy(deep=True)


def elector(server: LeaseServer, **timings: float) -> LeaderElector:
    config = LeaderElectionConfig("l", "ns", "me", **timings)  # type: ignore[arg-type]
    return LeaderElector(server, config, registry=CollectorRegistry())  # type: ignore[arg-type]


TIMINGS = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.2}


async def test_a_renewal_stuck_on_a_dead_connection_is_abandoned_and_retried() -> None:
    server = LeaseServer()
    leader = elector(server, **TIMINGS)
    await leader.acquire()
    server.hang = 1  # the next read never answers
    holding = asyncio.create_task(leader.hold())
    for _ in range(300):
        if server.renewals >= 3:
            break
        await asyncio.sleep(0.01)
    assert not holding.done(), "one stuck request must not cost the lease"
    holding.cancel()
    await asyncio.gather(holding, return_exceptions=True)
    assert server.stuck == 1
    assert server.renewals >= 3
    assert leader.is_leader


async def test_the_lease_is_lost_only_after_the_renew_deadline() -> None:
    server = LeaseServer()
    leader = elector(server, **TIMINGS)
    await leader.acquire()
    server.hang = 1000  # the apiserver is unreachable for good
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(LeaderElectionLost):
        await asyncio.wait_for(leader.hold(), 10)
    assert loop.time() - started >= TIMINGS["renew_deadline"] - 0.05
    # Attempts of half a second each (a quarter of the deadline), one after another.
    assert server.stuck >= 3
    assert not leader.is_leader


def test_attempt_timeout_defaults_to_a_quarter_of_the_renew_deadline() -> None:
    assert LeaderElectionConfig("l", "ns").effective_attempt_timeout == 2.5
    assert LeaderElectionConfig("l", "ns", attempt_timeout=1.0).effective_attempt_timeout == 1.0
    with pytest.raises(ValueError, match="attempt_timeout"):
        LeaderElectionConfig("l", "ns", attempt_timeout=11.0)
    with pytest.raises(ValueError, match="attempt_timeout"):
        LeaderElectionConfig("l", "ns", attempt_timeout=0.0)


async def test_release_does_not_hang_on_a_dead_connection() -> None:
    server = LeaseServer()
    leader = elector(server, **TIMINGS, attempt_timeout=0.2)
    await leader.acquire()
    server.hang = 1
    assert not await asyncio.wait_for(leader.release(), 5)  # gave up; the lease expires
    assert server.stuck == 1
    assert not leader.is_leader


def lease_holder(server: LeaseServer) -> str | None:
    assert server.lease is not None
    return server.lease.spec.holder_identity


async def test_acquire_attempts_are_bounded_too() -> None:
    server = LeaseServer()
    server.hang = 1
    candidate = elector(server, **TIMINGS)
    await asyncio.wait_for(candidate.acquire(), 5)
    assert server.stuck == 1
    assert lease_holder(server) == "me"
