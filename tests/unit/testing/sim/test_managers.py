"""``virtual_clock_manager``: no servers and a registry of its own (the loop clock it hands
the Manager is exercised by every virtual-clock test of managers, e.g. the sharding ones)."""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry

from crdkit.testing import FakeCluster, run_on_virtual_clock, virtual_clock_manager


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
