"""``--shard-role``: a replica that is a shard only never runs the sharder, and one that only
stands for the sharder holds no shard. Real managers on FakeCluster, on a virtual clock."""

from __future__ import annotations

import asyncio

from _shard_managers import shard_manager
from crdkit.client import Client
from crdkit.resources import ConfigMap, Lease, ObjectMeta
from crdkit.runtime import Context, Manager, Reconciler
from crdkit.runtime.sharding import HashRing, object_key, shard_label
from crdkit.testing import FakeCluster, eventually
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

NS = "ns"
RING = "roles"
NAMES = [f"cm-{i}" for i in range(12)]


class Quiet(Reconciler[ConfigMap]):
    name = "roles"

    def __init__(self) -> None:
        self.seen: set[str] = set()

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        self.seen.add(obj.metadata.name or "")


def replica(client: Client, shard: str, role: str, reconciler: Quiet) -> Manager:
    manager = shard_manager(client, NS, RING, shard, shard_role=role)
    manager.add(reconciler)
    return manager


async def _roles() -> None:
    cluster = FakeCluster([ConfigMap(metadata=ObjectMeta(name=n, namespace=NS)) for n in NAMES])
    async with cluster.client() as client:
        first, second, spare = Quiet(), Quiet(), Quiet()
        managers = [
            replica(client, "s1", "shard", first),
            replica(client, "s2", "shard", second),
            replica(client, "boss", "sharder", spare),
        ]
        tasks = [asyncio.create_task(m.run()) for m in managers]
        ring = HashRing({"s1", "s2"})
        want = {n: ring.shard_for(object_key("", "ConfigMap", NS, n)) for n in NAMES}
        await eventually(
            lambda: (
                first.seen == {n for n, s in want.items() if s == "s1"}
                and second.seen == {n for n, s in want.items() if s == "s2"}
            ),
            120,
            "each shard reconciled its share",
        )
        labels = {
            c.metadata.name: c.metadata.labels.get(shard_label(RING))
            for c in (await client.list(ConfigMap, namespace=NS)).items
        }
        assert labels == want
        leases = {lease.metadata.name for lease in (await client.list(Lease, namespace=NS)).items}
        # none for boss; the members are published on a Lease of their own
        assert leases == {"roles-shard-s1", "roles-shard-s2", "roles-sharder", "roles-members"}
        holder = await client.get(Lease, "roles-sharder", namespace=NS)
        assert holder.spec.holder_identity == "boss"
        assert not spare.seen  # the sharder's replica reconciles nothing
        assert managers[0].sharder is None  # the shards never stood for the sharder
        assert managers[1].sharder is None
        for manager in managers:
            manager.stop()
        await asyncio.gather(*tasks)


def test_shard_only_replicas_and_a_sharder_only_replica_split_the_work() -> None:
    run_on_virtual_clock(_roles())
