"""The scheduler's tier labels read from a ConfigMap on the real apiserver."""

from __future__ import annotations

import pytest
from examples.gang_scheduler.run import load_topology
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.client import Client, NotFound
from crdkit.testing import ControlPlane

pytestmark = pytest.mark.integration


async def test_tiers_come_from_the_configmap(control_plane: ControlPlane, namespace: str) -> None:
    wanted = TopologyConfig(("example.com/tor", "example.com/spine", "example.com/pod"))
    async with Client.from_control_plane(control_plane) as client:
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "topology", "namespace": namespace},
                "data": wanted.to_config_map_data(),
            }
        )
        assert await load_topology(client, [], f"{namespace}/topology") == wanted
        assert await load_topology(client, ["a/leaf"], None) == TopologyConfig(("a/leaf",))
        with pytest.raises(ValueError, match="give one or the other"):
            await load_topology(client, ["a/leaf"], f"{namespace}/topology")
        with pytest.raises(ValueError, match="is not NAMESPACE/NAME"):
            await load_topology(client, [], "topology")
        with pytest.raises(NotFound):
            await load_topology(client, [], f"{namespace}/missing")


async def test_a_bad_configmap_names_the_key(control_plane: ControlPlane, namespace: str) -> None:
    async with Client.from_control_plane(control_plane) as client:
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "bad", "namespace": namespace},
                "data": {"tier1": "leaf", "tier3": "zone"},
            }
        )
        with pytest.raises(ValueError, match=rf"ConfigMap {namespace}/bad data\.tier2: missing"):
            await load_topology(client, [], f"{namespace}/bad")
