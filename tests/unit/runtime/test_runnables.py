"""The Manager's runnables and ``wait_ready``, without a cluster: a manager with runnables only
has no informers to sync, and its Lease lives in a small in-memory store whose create can be
held back. Every test runs on a virtual clock and asserts the order of events, never durations.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, cast

import pytest
from prometheus_client import CollectorRegistry

from crdkit.client import Client
from crdkit.client.errors import NotFound, TransportError
from crdkit.resources import Lease, Secret
from crdkit.runtime import LeaderElectionLost, Manager, Runnable
from crdkit.testing.sim.virtual_time import run_on_virtual_clock


class GatedLeases:
    """The elector's three calls on one Lease; ``create`` waits for ``gate``, so a test decides
    when this replica becomes leader. ``partitioned`` refuses everything (the lease is lost)."""

    def __init__(self, journal: list[str]) -> None:
        self.journal = journal
        self.gate = asyncio.Event()
        self.asked = asyncio.Event()
        self.lease: Lease | None = None
        self.partitioned = False
        self.version = 0

    def _stored(self, lease: Lease) -> Lease:
        if self.partitioned:
            raise TransportError("partitioned")
        self.version += 1
        lease = lease.model_copy(deep=True)
        lease.metadata.resource_version = str(self.version)
        self.lease = lease
        return lease.model_copy(deep=True)

    async def get(self, kind: type[Lease], name: str, *, namespace: str) -> Lease:
        if self.partitioned:
            raise TransportError("partitioned")
        if self.lease is None:
            raise NotFound("not found", code=404, reason="NotFound")
        return self.lease.model_copy(deep=True)

    async def create(self, lease: Lease) -> Lease:
        self.asked.set()
        await self.gate.wait()
        self.journal.append("lease acquired")
        return self._stored(lease)

    async def replace(self, lease: Lease) -> Lease:
        if lease.spec.holder_identity is None:
            self.journal.append("lease released")
        return self._stored(lease)


def new_manager(client: Any = None, **options: Any) -> Manager:
    settings: dict[str, Any] = {
        "metrics_bind_address": "0",
        "health_probe_bind_address": "0",
        "registry": CollectorRegistry(),
        "clock": asyncio.get_running_loop().time,
        "identity": "me",
        **options,
    }
    return Manager(cast(Client, client), **settings)


class Recording(Runnable):
    """Journals its start and its cancellation; runs until cancelled."""

    def __init__(self, name: str, journal: list[str]) -> None:
        self.name = name
        self.journal = journal
        self.started = asyncio.Event()
        self.set_up = False

    def setup(self, manager: Manager) -> None:
        self.set_up = True

    async def run(self, manager: Manager) -> None:
        self.journal.append(f"start {self.name}")
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.journal.append(f"cancel {self.name}")
            raise


class Follower(Recording):
    needs_leader: ClassVar[bool] = False


def test_without_leader_election_all_start_after_sync_and_stop_before_the_informers() -> None:
    async def main() -> None:
        journal: list[str] = []
        manager = new_manager()
        follower, leader = Follower("follower", journal), Recording("leader", journal)
        manager.add_runnable(follower)
        manager.add_runnable(leader)
        called = asyncio.Event()

        async def bare() -> None:
            journal.append("start bare")
            called.set()

        manager.add_runnable(bare)
        assert follower.set_up, "setup runs in add_runnable"
        assert leader.set_up
        stop_informers = manager.informers.stop

        async def informers_stopped() -> None:
            journal.append("informers stopped")
            await stop_informers()

        manager.informers.stop = informers_stopped  # type: ignore[method-assign]
        task = asyncio.create_task(manager.run())
        await manager.wait_ready()
        await asyncio.gather(follower.started.wait(), leader.started.wait(), called.wait())
        assert journal == ["start follower", "start leader", "start bare"]
        manager.stop()
        await task
        assert journal[3:] == ["cancel follower", "cancel leader", "informers stopped"]

    run_on_virtual_clock(main())


class JournalingController:
    """Stands in for a started controller: its stop journals the grace it was given."""

    name = "fake"

    def __init__(self, journal: list[str]) -> None:
        self.journal = journal
        self.started = False

    def start(self) -> None:
        self.started = True
        self.journal.append("controller started")

    async def stop(self, grace: float = 30.0) -> bool:
        await asyncio.sleep(0)  # a drain that takes a turn of the loop
        self.journal.append(f"controller stopped, grace {grace:g}")
        self.started = False
        return True


def test_runnables_are_cancelled_after_the_controllers_had_their_grace() -> None:
    async def main() -> None:
        journal: list[str] = []
        manager = new_manager(graceful_shutdown_timeout=7)
        manager.controllers.append(JournalingController(journal))  # type: ignore[arg-type]
        runnable = Recording("runnable", journal)
        manager.add_runnable(runnable)
        task = asyncio.create_task(manager.run())
        await runnable.started.wait()
        manager.stop()
        await task
        assert journal == [
            "controller started",
            "start runnable",
            "controller stopped, grace 7",
            "cancel runnable",
        ]

    run_on_virtual_clock(main())


def test_with_leader_election_only_followers_run_until_the_lease_is_held() -> None:
    async def main() -> None:
        journal: list[str] = []
        leases = GatedLeases(journal)
        manager = new_manager(leases, leader_election=True, leader_election_namespace="ns")
        follower, leader = Follower("follower", journal), Recording("leader", journal)
        manager.add_runnable(leader)
        manager.add_runnable(follower)
        task = asyncio.create_task(manager.run())
        await manager.wait_ready()
        await follower.started.wait()
        await leases.asked.wait()  # the elector is waiting for the lease now
        assert journal == ["start follower"]
        assert not leader.started.is_set()
        leases.gate.set()
        await leader.started.wait()
        assert journal == ["start follower", "lease acquired", "start leader"]
        manager.stop()
        await task
        assert journal[3:] == ["cancel follower", "cancel leader", "lease released"]

    run_on_virtual_clock(main())


def test_needs_leader_can_be_overridden_per_registration() -> None:
    async def main() -> None:
        journal: list[str] = []
        leases = GatedLeases(journal)
        manager = new_manager(leases, leader_election=True, leader_election_namespace="ns")
        leader = Recording("overridden", journal)
        manager.add_runnable(leader, needs_leader=False)
        task = asyncio.create_task(manager.run())
        await leader.started.wait()
        assert not leases.gate.is_set()
        manager.stop()
        await task

    run_on_virtual_clock(main())


def test_losing_the_lease_cancels_runnables_and_raises() -> None:
    async def main() -> None:
        journal: list[str] = []
        leases = GatedLeases(journal)
        leases.gate.set()
        manager = new_manager(leases, leader_election=True, leader_election_namespace="ns")
        leader = Recording("leader", journal)
        manager.add_runnable(leader)
        task = asyncio.create_task(manager.run())
        await leader.started.wait()
        leases.partitioned = True
        with pytest.raises(LeaderElectionLost):
            await task
        assert journal == ["lease acquired", "start leader", "cancel leader"]

    run_on_virtual_clock(main())


class Boom(Exception):
    pass


def test_a_failing_runnable_stops_the_manager_and_run_raises_it() -> None:
    async def main() -> None:
        journal: list[str] = []
        manager = new_manager()
        other = Follower("other", journal)
        manager.add_runnable(other)
        error = Boom("binder broke")

        async def failing() -> None:
            await other.started.wait()
            raise error

        manager.add_runnable(failing, needs_leader=False)
        with pytest.raises(Boom) as raised:
            await manager.run()
        assert raised.value is error
        assert journal == ["start other", "cancel other"]

    run_on_virtual_clock(main())


def test_wait_ready_raises_when_run_ends_before_ready() -> None:
    class NeedsSecrets(Runnable):
        def setup(self, manager: Manager) -> None:
            # No client: the informer's list fails forever, so the cache never syncs.
            manager.informers.informer(Secret, namespace="ns")

        async def run(self, manager: Manager) -> None:
            raise AssertionError("must not start: the caches never synced")

    async def main() -> None:
        manager = new_manager(cache_sync_timeout=30)
        manager.add_runnable(NeedsSecrets())
        task = asyncio.create_task(manager.run())
        with pytest.raises(RuntimeError, match=r"run\(\) ended before it was ready"):
            await manager.wait_ready()
        with pytest.raises(TimeoutError, match=r"caches did not sync within 30s: Secret ns=ns"):
            await task
        with pytest.raises(RuntimeError, match="before it was ready"):
            await manager.wait_ready()

    run_on_virtual_clock(main())


def test_runnables_are_added_before_run_and_must_be_runnable() -> None:
    async def main() -> None:
        manager = new_manager()
        with pytest.raises(TypeError, match="expected a Runnable or an async function"):
            manager.add_runnable(42)  # type: ignore[arg-type]
        done = asyncio.Event()

        async def once() -> None:
            done.set()  # returning is fine: the manager runs on

        manager.add_runnable(once)
        task = asyncio.create_task(manager.run())
        await done.wait()
        with pytest.raises(RuntimeError, match="before the manager runs"):
            manager.add_runnable(once)
        assert not task.done()
        manager.stop()
        await task

    run_on_virtual_clock(main())
