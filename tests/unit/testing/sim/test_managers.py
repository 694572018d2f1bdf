"""``virtual_clock_manager``: no servers and a registry of its own (the loop clock it hands
the Manager is exercised by every virtual-clock test of managers, e.g. the sharding ones);
``running_manager``: its runnables run for the block, and a failure is not lost."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import REGISTRY, CollectorRegistry

from crdkit.runtime import Manager, Runnable
from crdkit.testing import FakeCluster, run_on_virtual_clock, running_manager, virtual_clock_manager


async def _built() -> None:
    async with FakeCluster().client() as client:
        first = virtual_clock_manager(client, namespace="ns", leader_election=True)
        second = virtual_clock_manager(client, namespace="ns", leader_election=True)
        assert first.registry is not second.registry
        assert first.registry is not REGISTRY
        assert first.options.metrics.address == "0"
        assert first.options.health_probe_bind_address == "0"
        assert first.options.leader_election.enabled
        given = CollectorRegistry()
        assert virtual_clock_manager(client, registry=given).registry is given


def test_a_virtual_clock_manager_has_no_servers_and_a_registry_of_its_own() -> None:
    run_on_virtual_clock(_built())


class _Waits(Runnable):
    """Runs until the Manager stops; says whether it ran."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, manager: Manager) -> None:
        self.started.set()
        await asyncio.Event().wait()


class _Fails(Runnable):
    async def run(self, manager: Manager) -> None:
        raise RuntimeError("broken runnable")


async def test_running_manager_runs_its_runnables_for_the_block() -> None:
    waits = _Waits()
    async with FakeCluster().client() as client, running_manager(client, waits) as manager:
        await asyncio.wait_for(waits.started.wait(), 5)
        assert manager.options.metrics.address == "0"
    assert not manager.ready


async def test_running_manager_raises_what_a_runnable_failed_with() -> None:
    with pytest.raises(RuntimeError, match="broken runnable"):
        async with FakeCluster().client() as client, running_manager(client, _Fails()):
            await asyncio.sleep(0.2)
