"""The Lease elector (and a Manager using it) on the real apiserver, with short timings."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from _runtime_support import HELLO_CRD, new_manager
from examples.hello.operator import Hello, HelloSpec
from prometheus_client import CollectorRegistry

from crdkit import Context, Reconciler
from crdkit.client import Client
from crdkit.resources import Lease, ObjectMeta
from crdkit.runtime import LeaderElectionConfig, LeaderElectionLost, LeaderElector
from crdkit.testing import ControlPlane

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
    assert await first.release()
    # How soon the successor takes a released lease is checked on a virtual clock in
    # tests/unit/runtime/test_leader.py; here only that it does.
    await waiting
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
    # Someone takes the lease by force: every renewal now fails.
    lease = await crdkit_client.get(Lease, "elect", namespace=namespace)
    lease.spec.holder_identity = "usurper"
    lease.spec.renew_time = datetime.now(UTC)
    await crdkit_client.replace(lease)
    with pytest.raises(LeaderElectionLost):
        await leader.hold()
    # When it gives up (renew_deadline after its last renewal, before the lease can expire for
    # anyone else) is checked exactly on a virtual clock in tests/unit/runtime/test_leader.py.
    assert not leader.is_leader


class Endless(Reconciler[Hello]):
    """Reconciles forever, to show that losing the lease cancels in-flight work at once."""

    name = "endless"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def reconcile(self, ctx: Context, obj: Hello) -> None:
        self.started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


async def test_manager_that_loses_its_lease_stops_controllers_at_once(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    reconciler = Endless()
    manager = new_manager(
        crdkit_client,
        namespace,
        leader_election=True,
        leader_election_id="endless",
        graceful_shutdown_timeout=3600.0,
        **TIMINGS,
    )
    manager.add(reconciler)
    run = asyncio.create_task(manager.run())
    await crdkit_client.create(
        Hello(metadata=ObjectMeta(name="e", namespace=namespace), spec=HelloSpec(target="x"))
    )
    await asyncio.wait_for(reconciler.started.wait(), 30)
    assert (
        manager.registry.get_sample_value("leader_election_master_status", {"name": "endless"}) == 1
    )
    lease = await crdkit_client.get(Lease, "endless", namespace=namespace)
    lease.spec.holder_identity = "usurper"
    await crdkit_client.replace(lease)
    with pytest.raises(LeaderElectionLost):
        await run
    # The in-flight reconcile was cancelled, not waited for: the grace period (an hour) would
    # outlast the test's timeout.
    assert reconciler.cancelled.is_set()
    assert (
        manager.registry.get_sample_value("leader_election_master_status", {"name": "endless"}) == 0
    )
