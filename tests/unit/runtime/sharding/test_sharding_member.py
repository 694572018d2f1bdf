"""``ShardMember``: a shard's Lease, and the gate in front of its reconciles, on FakeCluster
through a real ``Client``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from prometheus_client import CollectorRegistry

from crdkit.client import Client, NotFound
from crdkit.resources import ConfigMap, Lease, ObjectMeta
from crdkit.runtime.informer import Informer
from crdkit.runtime.queue import QueueEmpty, WorkQueue
from crdkit.runtime.result import Request
from crdkit.runtime.sharding import (
    RING_LABEL,
    SHARD_ID_LABEL,
    HashRing,
    Membership,
    ShardMember,
    drain_label,
    members_lease_name,
    object_key,
    shard_label,
)
from crdkit.testing import FakeCluster, eventually

NS = "ns"
RING = "jobs"
MINE = shard_label(RING)
DRAIN = drain_label(RING)


async def publish(client: Client, members: tuple[str, ...], orphans: tuple[str, ...] = ()) -> None:
    """Write the ring's membership as the sharder does."""
    annotations = Membership(frozenset(members), frozenset(orphans)).annotations()
    name = members_lease_name(RING)
    try:
        await client.patch(Lease, name, {"metadata": {"annotations": annotations}}, namespace=NS)
    except NotFound:
        await client.create(
            Lease(metadata=ObjectMeta(name=name, namespace=NS, annotations=annotations))
        )


async def settle(shard: ShardMember) -> None:
    """Until the shard has taken in the membership on the server."""
    informer = shard.members_informer
    await informer.wait_for_sync()
    await asyncio.sleep(0)
    await informer.drain()


@contextlib.asynccontextmanager
async def member(
    client: Client,
    shard: str = "web-0",
    *,
    members: tuple[str, ...] | None = ("web-0", "web-1"),
    orphans: tuple[str, ...] = (),
) -> AsyncIterator[ShardMember]:
    """A shard following the ring's membership (``members=None``: none published)."""
    if members is not None:
        await publish(client, members, orphans)
    one = ShardMember(
        client,
        ring=RING,
        shard=shard,
        identity=f"{shard}-pod",
        lease_namespace=NS,
        lease_duration=15.0,
        renew_deadline=10.0,
        retry_period=2.0,
        registry=CollectorRegistry(),
    )
    await one.start()
    try:
        await settle(one)
        yield one
    finally:
        await one.stop()


async def configmap(client: Client, name: str, labels: dict[str, str] | None) -> ConfigMap:
    return await client.create(
        ConfigMap(metadata=ObjectMeta(name=name, namespace=NS, labels=labels), data={"v": "1"})
    )


async def labels_on_server(client: Client, name: str) -> dict[str, str]:
    obj = await client.get(ConfigMap, name, namespace=NS)
    return dict(obj.metadata.labels or {})


async def test_an_object_labelled_for_the_shard_is_admitted() -> None:
    async with FakeCluster().client() as client, member(client) as shard:
        obj = await configmap(client, "mine", {MINE: "web-0", "app": "x"})
        assert await shard.admit_for(ConfigMap)(obj) is True
        assert await labels_on_server(client, "mine") == {MINE: "web-0", "app": "x"}
        assert shard.handed_off == 0


async def test_an_object_labelled_for_another_shard_or_none_is_refused() -> None:
    async with FakeCluster().client() as client, member(client) as shard:
        admit = shard.admit_for(ConfigMap)
        other = await configmap(client, "other", {MINE: "web-1"})
        elsewhere = await configmap(client, "elsewhere", {shard_label("other-ring"): "web-0"})
        bare = await configmap(client, "bare", None)
        assert await admit(other) is False
        assert await admit(elsewhere) is False
        assert await admit(bare) is False
        # A stale copy is simply refused: nothing is written.
        assert await labels_on_server(client, "other") == {MINE: "web-1"}
        # Even when it asks to drain: it is not this shard's to let go.
        draining_elsewhere = await configmap(client, "de", {MINE: "web-1", DRAIN: "true"})
        assert await admit(draining_elsewhere) is False
        assert await labels_on_server(client, "de") == {MINE: "web-1", DRAIN: "true"}
        assert shard.handed_off == 0


async def test_a_draining_object_is_let_go_on_the_server_and_refused() -> None:
    async with FakeCluster().client() as client, member(client) as shard:
        obj = await configmap(client, "going", {MINE: "web-0", DRAIN: "true", "app": "x"})
        assert await shard.admit_for(ConfigMap)(obj) is False
        after = await client.get(ConfigMap, "going", namespace=NS)
        assert after.metadata.labels == {"app": "x"}  # both ring labels gone, the rest kept
        assert after.metadata.resource_version != obj.metadata.resource_version
        assert after.data == {"v": "1"}
        assert shard.handed_off == 1


async def test_a_stale_copy_of_a_draining_object_lets_nothing_go() -> None:
    async with FakeCluster().client() as client, member(client) as shard:
        stale = await configmap(client, "busy", {MINE: "web-0", DRAIN: "true"})
        # changed on the server after the copy was cached
        await client.patch(ConfigMap, "busy", {"data": {"v": "2"}}, namespace=NS)
        assert await shard.admit_for(ConfigMap)(stale) is False  # the Conflict is swallowed
        assert await labels_on_server(client, "busy") == {MINE: "web-0", DRAIN: "true"}
        assert shard.handed_off == 0
        # The fresh copy (what the change's event brings back) is let go.
        fresh = await client.get(ConfigMap, "busy", namespace=NS)
        assert await shard.admit_for(ConfigMap)(fresh) is False
        assert await labels_on_server(client, "busy") == {}
        assert shard.handed_off == 1


async def test_a_draining_object_already_deleted_is_refused_quietly() -> None:
    async with FakeCluster().client() as client, member(client) as shard:
        obj = await configmap(client, "gone", {MINE: "web-0", DRAIN: "true"})
        await client.delete(ConfigMap, "gone", namespace=NS)
        assert await shard.admit_for(ConfigMap)(obj) is False
        assert shard.handed_off == 0


async def test_handed_off_counts_each_object_let_go() -> None:
    async with FakeCluster().client() as client, member(client) as shard:
        admit = shard.admit_for(ConfigMap)
        for i in range(3):
            obj = await configmap(client, f"cm-{i}", {MINE: "web-0", DRAIN: "true"})
            assert await admit(obj) is False
            assert shard.handed_off == i + 1
        kept = await configmap(client, "kept", {MINE: "web-0"})
        assert await admit(kept) is True
        assert shard.handed_off == 3


async def test_the_shards_lease_carries_its_ring_and_id() -> None:
    async with FakeCluster().client() as client, member(client, "web-0") as shard:
        await shard.elector.acquire()
        lease = await client.get(Lease, "jobs-shard-web-0", namespace=NS)
        assert lease.metadata.labels == {RING_LABEL: RING, SHARD_ID_LABEL: "web-0"}
        assert lease.spec.holder_identity == "web-0-pod"
        assert lease.spec.lease_duration_seconds == 15
        assert shard.selector == f"{MINE}=web-0"
        assert await shard.elector.release()
        released = await client.get(Lease, "jobs-shard-web-0", namespace=NS)
        assert released.spec.holder_identity is None
        assert released.metadata.labels == {RING_LABEL: RING, SHARD_ID_LABEL: "web-0"}


def _taken(queue: WorkQueue[Request]) -> list[Request]:
    taken = []
    while True:
        try:
            taken.append(queue.get_nowait())
        except QueueEmpty:
            return taken


def _with_labels(name: str, labels: dict[str, str] | None) -> Any:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=NS, labels=labels))


async def test_the_drain_handlers_queue_an_object_asked_to_drain() -> None:
    async with FakeCluster().client() as client, member(client) as shard:
        queue: WorkQueue[Request] = WorkQueue("drain", metrics=False)
        controller: Any = SimpleNamespace(info=SimpleNamespace(namespaced=True), queue=queue)
        on_add, on_update = shard.drain_handlers(controller)
        on_add(_with_labels("plain", {MINE: "web-0"}))
        on_add(_with_labels("bare", None))
        on_update(_with_labels("d", {MINE: "web-0", DRAIN: "true"}), _with_labels("d", None))
        assert _taken(queue) == []  # only the new copy counts: it no longer drains
        on_add(_with_labels("a", {MINE: "web-0", DRAIN: "true"}))
        on_update(_with_labels("u", {MINE: "web-0"}), _with_labels("u", {DRAIN: "true"}))
        assert _taken(queue) == [Request(NS, "a"), Request(NS, "u")]
        # A cluster-scoped kind's request has no namespace.
        cluster_scoped: Any = SimpleNamespace(info=SimpleNamespace(namespaced=False), queue=queue)
        on_add, _ = shard.drain_handlers(cluster_scoped)
        on_add(_with_labels("c", {DRAIN: "true"}))
        assert _taken(queue) == [Request(None, "c")]


async def test_a_shard_that_is_not_a_member_admits_nothing() -> None:
    async with FakeCluster().client() as client:
        mine = await configmap(client, "mine", {MINE: "web-0"})
        # Nothing published yet, then a membership without it (it died and came back).
        async with member(client, members=None) as shard:
            assert shard.membership is None
            assert await shard.admit_for(ConfigMap)(mine) is False
        async with member(client, members=("web-1",), orphans=("web-0",)) as shard:
            assert shard.is_member is False
            assert await shard.admit_for(ConfigMap)(mine) is False
        async with member(client, members=("web-0", "web-1")) as shard:
            assert shard.is_member is True
            assert await shard.admit_for(ConfigMap)(mine) is True


async def test_orphans_the_ring_gives_the_shard_are_taken_over_and_no_others() -> None:
    async with FakeCluster().client() as client:
        names = [f"cm-{i}" for i in range(16)]
        ring = HashRing({"web-0", "web-1"})
        ours = {n for n in names if ring.shard_for(object_key("", "ConfigMap", NS, n)) == "web-0"}
        assert ours
        assert ours != set(names)
        copies = {n: await configmap(client, n, {MINE: "web-2"}) for n in names}
        async with member(client, members=("web-0", "web-1"), orphans=("web-2",)) as shard:
            admit = shard.admit_for(ConfigMap)
            admitted = {n for n, obj in copies.items() if await admit(obj)}
            assert admitted == ours
            assert shard.orphans_admitted == len(ours)
            # A label of a live member is never an orphan's, whatever the ring says.
            live = await configmap(client, "live", {MINE: "web-1"})
            assert await admit(live) is False


async def test_while_there_are_orphans_the_followed_informers_select_them_too() -> None:
    async with FakeCluster().client() as client:
        await configmap(client, "mine", {MINE: "web-0"})
        await configmap(client, "orphan", {MINE: "web-2"})
        await configmap(client, "theirs", {MINE: "web-1"})
        async with member(client, members=("web-0", "web-1", "web-2")) as shard:
            informer: Informer[ConfigMap] = Informer(
                client, ConfigMap, namespace=NS, label_selector=shard.selector
            )
            added: list[str] = []
            informer.add_event_handler(lambda obj: added.append(obj.metadata.name or ""))
            shard.follow(informer)
            await informer.start()
            try:
                await informer.wait_for_sync()
                assert set(informer.store.keys()) == {f"{NS}/mine"}
                await publish(client, ("web-0", "web-1"), ("web-2",))
                await eventually(
                    lambda: set(informer.store.keys()) == {f"{NS}/mine", f"{NS}/orphan"},
                    60,
                    "the orphan selected",
                )
                assert informer.label_selector == f"{MINE} in (web-0,web-2)"
                # Relabelled for its new shard, it leaves; with no orphan left, the selector
                # narrows again.
                await client.patch(
                    ConfigMap, "orphan", {"metadata": {"labels": {MINE: "web-1"}}}, namespace=NS
                )
                await publish(client, ("web-0", "web-1"))
                await eventually(
                    lambda: informer.label_selector == f"{MINE}=web-0",
                    60,
                    "the selector narrowed",
                )
                await eventually(
                    lambda: set(informer.store.keys()) == {f"{NS}/mine"},
                    60,
                    "the orphan gone",
                )
                assert added.count("orphan") == 1
            finally:
                await informer.stop()


async def test_a_change_of_membership_queues_every_object_again() -> None:
    async with FakeCluster().client() as client:
        await configmap(client, "a", {MINE: "web-0"})
        await configmap(client, "b", {MINE: "web-0"})
        async with member(client, members=None) as shard:
            informer: Informer[ConfigMap] = Informer(
                client, ConfigMap, namespace=NS, label_selector=shard.selector
            )
            await informer.start()
            try:
                await informer.wait_for_sync()
                queue: WorkQueue[Request] = WorkQueue("members", metrics=False)
                controller: Any = SimpleNamespace(
                    info=SimpleNamespace(namespaced=True), queue=queue
                )
                shard.serve(controller, informer)
                await publish(client, ("web-0",))
                await settle(shard)
                await eventually(lambda: shard.is_member, 60, "a member")
                assert sorted(_taken(queue), key=lambda r: r.name) == [
                    Request(NS, "a"),
                    Request(NS, "b"),
                ]
            finally:
                await informer.stop()
