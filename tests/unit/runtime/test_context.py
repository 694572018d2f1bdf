"""``Context.apply``: a child gets the controller reference and, in a shard, the shard's label
from its first write. A sharded manager on FakeCluster, on a virtual clock."""

from __future__ import annotations

import asyncio

from crdkit.resources import ConfigMap, ObjectMeta, Secret
from crdkit.runtime import Context, Reconciler
from crdkit.runtime.sharding import shard_label
from crdkit.testing import FakeCluster, eventually, virtual_clock_manager
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

NS = "ns"


class WithChild(Reconciler[ConfigMap]):
    name = "parents"
    owns = (Secret,)

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        child = Secret(metadata=ObjectMeta(name=f"{obj.metadata.name}-child", namespace=NS))
        await ctx.apply(child)


async def _child_labels() -> dict[str, str]:
    cluster = FakeCluster([ConfigMap(metadata=ObjectMeta(name="parent", namespace=NS))])
    async with cluster.client() as client:
        manager = virtual_clock_manager(
            client,
            namespace=NS,
            sharding=True,
            shard_id="only",
            leader_election_namespace=NS,
        )
        manager.add(WithChild())
        running = asyncio.create_task(manager.run())

        async def child_exists() -> bool:
            return bool((await client.list(Secret, namespace=NS)).items)

        await eventually(child_exists, 60, "the child applied")
        (child,) = (await client.list(Secret, namespace=NS)).items
        sharder = manager.sharder
        assert sharder is not None
        # Its label came with its first write: the sharder had nothing to write on it.
        assert sharder.assignments(Secret) == {(NS, "parent-child"): "only"}
        writes = sharder.stats.writes["assign"]
        manager.stop()
        await running
        assert writes == 1  # the parent only
        return dict(child.metadata.labels)


def test_a_shards_children_carry_its_label_from_their_first_write() -> None:
    labels = run_on_virtual_clock(_child_labels())
    assert labels == {shard_label("parents"): "only"}
