"""The Lease elector on the real apiserver, in one process with short timings."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pytest
from prometheus_client import CollectorRegistry

from crdkit.client import Client
from crdkit.resources import Lease
from crdkit.runtime import LeaderElectionConfig, LeaderElectionLost, LeaderElector

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

TIMINGS = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.5}


def elector(client: Client, namespace: str, identity: str) -> LeaderElector:
    config = LeaderElectionConfig("elect", namespace, identity, **TIMINGS)
    return LeaderElector(client, config, registry=CollectorRegistry())


async def test_one_leader_release_hands_over_at_once(crdkit_client: Client, namespace: str) -> None:
    first = elector(crdkit_client, namespace, "first")
    second = elector(crdkit_client, namespace, "second")
    await asyncio.wait_for(first.acquire(), 10)
    assert first.is_leader
    waiting = asyncio.create_task(second.acquire())
    holding = asyncio.create_task(first.hold())
    await asyncio.sleep(TIMINGS["lease_duration"] + 1)  # renewals keep the lease alive
    assert not waiting.done(), "a live lease must not be taken"
    lease = await crdkit_client.get(Lease, "elect", namespace=namespace)
    assert lease.spec.holder_identity == "first"
    holding.cancel()
    await asyncio.gather(holding, return_exceptions=True)
    released_at = time.monotonic()
    assert await first.release()
    await asyncio.wait_for(waiting, 5)
    assert time.monotonic() - released_at < TIMINGS["retry_period"] + 0.5, "released: no wait"
    lease = await crdkit_client.get(Lease, "elect", namespace=namespace)
    assert lease.spec.holder_identity == "second"
    assert lease.spec.lease_transitions == 1
    assert second.is_leader
    assert not first.is_leader


async def test_leader_that_cannot_renew_gives_up_before_the_lease_expires(
    crdkit_client: Client, namespace: str
) -> None:
    leader = elector(crdkit_client, namespace, "leader")
    await leader.acquire()
    started = time.monotonic()  # the last successful renewal was just before this
    # Someone takes the lease by force: every renewal now fails.
    lease = await crdkit_client.get(Lease, "elect", namespace=namespace)
    lease.spec.holder_identity = "usurper"
    lease.spec.renew_time = datetime.now(UTC)
    await crdkit_client.replace(lease)
    with pytest.raises(LeaderElectionLost):
        await asyncio.wait_for(leader.hold(), 10)
    elapsed = time.monotonic() - started
    assert TIMINGS["renew_deadline"] - 0.05 <= elapsed < TIMINGS["lease_duration"]
    assert not leader.is_leader
