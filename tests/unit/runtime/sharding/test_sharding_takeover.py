"""A dead shard's objects have a live owner within its lease duration, however slow the
relabelling: real managers (``sharding=True``) on one FakeCluster, on a virtual clock with
controller-runtime's lease timings (15 s, 10 s, 2 s)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from _shard_managers import shard_manager
from _slow_writes import slow_object_writes
from crdkit.client import Client
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime import Context, Manager, Reconciler
from crdkit.runtime.sharding import HashRing, object_key, shard_label
from crdkit.testing import FakeCluster, eventually
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

NS = "ns"
RING = "takeover"
LABEL = shard_label(RING)
NAMES = [f"cm-{i}" for i in range(24)]
LEASE_DURATION = 15.0


@dataclass(frozen=True)
class Seen:
    shard: str
    name: str
    version: str
    label: str | None
    """The object's shard label as the reconcile saw it."""
    at: float


class Recording(Reconciler[ConfigMap]):
    name = "takeover"

    def __init__(self, shard: str, seen: list[Seen]) -> None:
        self.shard, self.seen = shard, seen

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        self.seen.append(
            Seen(
                self.shard,
                obj.metadata.name or "",
                (obj.data or {}).get("v", "0"),
                obj.metadata.labels.get(LABEL),
                asyncio.get_running_loop().time(),
            )
        )


@dataclass
class Replica:
    manager: Manager
    client: Client
    task: asyncio.Task[None]


async def start(cluster: FakeCluster, shard: str, seen: list[Seen]) -> Replica:
    client = cluster.client()
    await client.__aenter__()
    manager = shard_manager(client, NS, RING, shard)
    manager.add(Recording(shard, seen))
    return Replica(manager, client, asyncio.create_task(manager.run()))


async def labels(client: Client) -> dict[str, str | None]:
    items = (await client.list(ConfigMap, namespace=NS)).items
    return {obj.metadata.name or "": obj.metadata.labels.get(LABEL) for obj in items}


async def _takeover() -> None:
    cluster = FakeCluster(
        [ConfigMap(metadata=ObjectMeta(name=n, namespace=NS), data={"v": "1"}) for n in NAMES]
    )
    seen: list[Seen] = []
    replicas: dict[str, Replica] = {}
    async with cluster.client() as admin:
        try:
            replicas["s1"] = await start(cluster, "s1", seen)
            await eventually(
                lambda: replicas["s1"].manager.sharder is not None, 60, "s1 the sharder"
            )
            for shard in ("s2", "s3"):
                replicas[shard] = await start(cluster, shard, seen)
            ring = HashRing({"s1", "s2", "s3"})
            want = {n: ring.shard_for(object_key("", "ConfigMap", NS, n)) for n in NAMES}

            async def settled() -> bool:
                return await labels(admin) == want and {s.name for s in seen} == set(NAMES)

            await eventually(settled, 600, "the ring settled")
            victims = sorted(n for n, s in want.items() if s == "s3")
            assert victims
            # The sharder's relabelling now takes 5 s an object, 16 at a time.
            slow_object_writes(replicas["s1"].client, 5.0)
            victim = replicas.pop("s3")
            await victim.client.transport.close()  # SIGKILL: no Lease released
            victim.task.cancel()
            with contextlib.suppress(BaseException):
                await victim.task
            killed = asyncio.get_running_loop().time()
            for name in victims:
                await admin.patch(ConfigMap, name, {"data": {"v": "2"}}, namespace=NS)

            def first_at_2(name: str) -> Seen | None:
                return next((s for s in seen if s.name == name and s.version == "2"), None)

            await eventually(
                lambda: all(first_at_2(n) is not None for n in victims),
                600,
                "every change to the dead shard's objects reconciled",
            )
            after = HashRing({"s1", "s2"})
            for name in victims:
                first = first_at_2(name)
                assert first is not None
                # by the shard the ring of the survivors names, within the lease duration
                # (and the 2 s of the target) of the death ...
                assert first.shard == after.shard_for(object_key("", "ConfigMap", NS, name))
                assert first.at - killed <= LEASE_DURATION + 2.0, (name, first.at - killed)
            # ... while most were still labelled for the dead shard: taken over, not moved.
            taken_over = [n for n in victims if (s := first_at_2(n)) and s.label == "s3"]
            assert len(taken_over) > len(victims) // 2
            # The relabelling catches up, and the survivors let the old label go.
            final = {n: after.shard_for(object_key("", "ConfigMap", NS, n)) for n in NAMES}
            await eventually(lambda: _labels_are(admin, final), 600, "relabelled")
            for replica in replicas.values():
                shard = replica.manager.shard
                assert shard is not None
                await eventually(
                    lambda shard=shard: (  # type: ignore[misc]
                        shard.membership is not None and not shard.membership.orphans
                    ),
                    600,
                    "no orphan left",
                )
                assert shard.orphans_admitted > 0 or shard.shard not in {
                    first.shard for n in victims if (first := first_at_2(n))
                }
        finally:
            for replica in replicas.values():
                replica.manager.stop()
            await asyncio.gather(*(r.task for r in replicas.values()), return_exceptions=True)
            for replica in replicas.values():
                await replica.client.__aexit__(None, None, None)


async def _labels_are(client: Client, want: dict[str, str | None]) -> bool:
    return await labels(client) == want


def test_a_dead_shards_objects_are_taken_over_within_its_lease_duration() -> None:
    run_on_virtual_clock(_takeover())
