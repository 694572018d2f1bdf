"""Property test of sharding: shards join, die and drain while objects churn, and whatever the
order, the ring's invariants hold. Hypothesis also draws how long each replica's writes of
objects take (Leases are written at once): slow relabelling leaves the survivors of a death
reconciling orphans, by their old label, while the sharder is still moving them. Real managers
(``sharding=True``) on one FakeCluster, on a virtual clock (controller-runtime's lease timings:
15 s, 10 s, 2 s cost no real time).

Hypothesis draws a sequence of steps: a shard joins; a shard dies (its connection cut, then its
task cancelled: no Lease released, no label dropped, as SIGKILL leaves it); a shard drains (a
graceful stop); an object is created, changed or deleted; time passes. Every reconcile appends
its start and end to one shared log. Afterwards, with at least one shard alive, the ring gets
time to settle, and then:

- no object was ever being reconciled by two shards at once (by order in the log; a dead
  shard's open reconcile ends where it died);
- a shard reconciled an object labelled for another only once that one had died or drained,
  and no two live shards took the same orphan over;
- every object was reconciled, to the end, at its last change;
- every object sits on the shard the hash ring of the live shards names, with no drain left.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from _shard_managers import shard_manager
from _slow_writes import slow_object_writes
from crdkit.client import Client
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime import Context, Manager, Reconciler
from crdkit.runtime.sharding import HashRing, drain_label, object_key, shard_label
from crdkit.testing import FakeCluster
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

NS = "ns"
RING = "ring"
SHARDS = ("a", "b", "c", "d")
NAMES = tuple(f"cm-{i}" for i in range(8))
EVERY = "*"  # a write to every object at once: many reconciles in flight for a hand-off to race

STEPS = st.one_of(
    st.tuples(st.just("join"), st.sampled_from(SHARDS)),
    st.tuples(st.just("die"), st.sampled_from(SHARDS)),
    st.tuples(st.just("drain"), st.sampled_from(SHARDS)),
    st.tuples(st.just("create"), st.sampled_from((*NAMES, EVERY))),
    st.tuples(st.just("change"), st.sampled_from((*NAMES, EVERY))),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("wait"), st.sampled_from([0.1, 0.5, 3.0, 20.0])),
)


@dataclass
class Log:
    entries: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(event, shard, key, version): ``start``/``end`` of a reconcile, ``died``."""
    gone: set[str] = field(default_factory=set)
    """Shards that died or drained so far (one may have come back since)."""
    taken_over: list[tuple[str, str, str, frozenset[str]]] = field(default_factory=list)
    """(shard, key, label): a reconcile of an object labelled for another shard, and the
    shards gone by then."""


class LoggingReconciler(Reconciler[ConfigMap]):
    name = "sharded"

    def __init__(self, shard: str, log: Log) -> None:
        self.shard, self.log = shard, log

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        key = f"{obj.metadata.namespace}/{obj.metadata.name}"
        version = (obj.data or {}).get("v", "0")
        self.log.entries.append(("start", self.shard, key, version))
        label = obj.metadata.labels.get(shard_label(RING))
        if label != self.shard:
            self.log.taken_over.append((self.shard, key, label or "", frozenset(self.log.gone)))
        await asyncio.sleep(0.3)  # reconciles take time: a hand-off can race one
        self.log.entries.append(("end", self.shard, key, version))


@dataclass
class Replica:
    manager: Manager
    client: Client
    task: asyncio.Task[None]


class World:
    def __init__(self, cluster: FakeCluster, log: Log, write_delay: float = 0.0) -> None:
        self.cluster, self.log, self.write_delay = cluster, log, write_delay
        self.replicas: dict[str, Replica] = {}
        self.versions: dict[str, int] = {}  # name: last version written

    async def join(self, shard: str) -> None:
        if shard in self.replicas:
            return
        client = self.cluster.client()
        await client.__aenter__()
        if self.write_delay:
            slow_object_writes(client, self.write_delay)
        manager = shard_manager(
            client,
            NS,
            RING,
            shard,
            identity=f"{shard}-{len(self.log.entries)}",
            max_concurrent_reconciles=4,  # more in flight: more for a hand-off to race
        )
        manager.add(LoggingReconciler(shard, self.log))
        self.replicas[shard] = Replica(manager, client, asyncio.create_task(manager.run()))

    async def die(self, shard: str) -> None:
        replica = self.replicas.pop(shard, None)
        if replica is None:
            return
        # Cut first, so that nothing it does on its way out reaches the cluster.
        await replica.client.transport.close()
        replica.task.cancel()
        with contextlib.suppress(BaseException):
            await replica.task
        self.log.entries.append(("died", shard, "", ""))
        self.log.gone.add(shard)

    async def drain(self, shard: str) -> None:
        replica = self.replicas.pop(shard, None)
        if replica is None:
            return
        self.log.gone.add(shard)  # its Lease released: its objects are orphans at once
        replica.manager.stop()
        await replica.task
        await replica.client.__aexit__(None, None, None)

    async def write(self, op: str, name: str, admin: Client) -> None:
        if name == EVERY:
            for each in NAMES:
                await self.write(op, each, admin)
            return
        exists = name in self.versions
        if op == "create" and not exists:
            self.versions[name] = 1
            await admin.create(
                ConfigMap(metadata=ObjectMeta(name=name, namespace=NS), data={"v": "1"})
            )
        elif op == "change" and exists:
            self.versions[name] += 1
            await admin.patch(
                ConfigMap, name, {"data": {"v": str(self.versions[name])}}, namespace=NS
            )
        elif op == "delete" and exists:
            del self.versions[name]
            await admin.delete(ConfigMap, name, namespace=NS)

    async def settled(self, admin: Client) -> bool:
        ring = HashRing(self.replicas)
        objects = (await admin.list(ConfigMap, namespace=NS)).items
        for obj in objects:
            labels = obj.metadata.labels
            want = ring.shard_for(object_key("", "ConfigMap", NS, obj.metadata.name or ""))
            if labels.get(shard_label(RING)) != want or drain_label(RING) in labels:
                return False
        done = {(key, version) for event, _, key, version in self.log.entries if event == "end"}
        return all((f"{NS}/{name}", str(v)) in done for name, v in self.versions.items())


def bad_takeovers(log: Log) -> list[str]:
    """A shard reconciles an object labelled for another only when that one is gone, and
    never beside another live shard taking the same orphan over."""
    problems = []
    by_orphan: dict[tuple[str, str], str] = {}  # (key, label): the last shard to take it
    for shard, key, label, gone in log.taken_over:
        if label not in gone:
            problems.append(f"{shard} reconciled {key} while labelled for {label or 'none'}")
            continue
        before = by_orphan.get((key, label))
        if before is not None and before != shard and before not in gone:
            problems.append(f"{key} of {label}: taken over by {before}, then by {shard}")
        by_orphan[(key, label)] = shard
    return problems


def overlaps(entries: list[tuple[str, str, str, str]]) -> list[str]:
    busy: dict[str, str] = {}
    problems = []
    for event, shard, key, _ in entries:
        if event == "died":
            busy = {k: s for k, s in busy.items() if s != shard}
        elif event == "start":
            if busy.get(key, shard) != shard:
                problems.append(f"{key}: {shard} started while {busy[key]} reconciled it")
            busy[key] = shard
        elif busy.get(key) == shard:
            del busy[key]
    return problems


async def scenario(steps: list[tuple[str, Any]], write_delay: float = 0.0) -> tuple[World, bool]:
    cluster = FakeCluster()
    log = Log()
    world = World(cluster, log, write_delay)
    async with cluster.client() as admin:
        try:
            for op, arg in steps:
                if op in ("join", "die", "drain"):
                    await getattr(world, op)(arg)
                elif op == "wait":
                    await asyncio.sleep(arg)
                else:
                    await world.write(op, arg, admin)
                await asyncio.sleep(0.05)
            if not world.replicas:
                await world.join("a")
            # Two lease durations and then some: a dead sharder's Lease, then a dead shard's.
            settled = False
            for _ in range(1200):
                if await world.settled(admin):
                    settled = True
                    break
                await asyncio.sleep(0.25)
        finally:
            for shard in list(world.replicas):
                await world.drain(shard)
    return world, settled


# A death while the relabelling is slow, with a joiner arriving meanwhile, or the dead shard
# coming back under its id: a random draw of twenty steps seldom lines these up, and they are
# what a wrong takeover breaks.
TAKEOVER = [("join", "a"), ("join", "b"), ("join", "c"), ("create", EVERY), ("wait", 20.0)]


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@example([*TAKEOVER, ("die", "a"), ("change", EVERY), ("wait", 20.0)], 1.5)
@example([*TAKEOVER, ("die", "a"), ("join", "d"), ("change", EVERY), ("wait", 20.0)], 1.5)
@example([*TAKEOVER, ("die", "a"), ("wait", 16.0), ("join", "a"), ("change", EVERY)], 1.5)
@given(st.lists(STEPS, min_size=1, max_size=20), st.sampled_from([0.0, 1.5]))
def test_no_overlap_every_change_reconciled_and_the_ring_settles(
    steps: list[tuple[str, Any]], write_delay: float
) -> None:
    world, settled = run_on_virtual_clock(scenario(steps, write_delay))
    assert overlaps(world.log.entries) == []
    assert bad_takeovers(world.log) == []
    assert settled, f"did not settle: {world.log.entries[-10:]}"
