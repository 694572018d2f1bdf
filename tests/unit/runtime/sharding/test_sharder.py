"""The ``Sharder`` alone on FakeCluster and a virtual clock: the shards are Leases written by
hand (nothing renews them unless the test does), the ring's objects ConfigMaps, and the owned
kind Secrets with a controller reference to a ConfigMap. A test plays the shards' side of the
handshake itself, by dropping an object's labels as ``ShardMember`` does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import CollectorRegistry

from _slow_writes import slow_object_writes
from crdkit.client import Client, NotFound
from crdkit.resources import ConfigMap, Lease, LeaseSpec, ObjectMeta, OwnerReference, Secret
from crdkit.runtime.informer import Informer
from crdkit.runtime.sharding import (
    RING_LABEL,
    SHARD_ID_LABEL,
    HashRing,
    Membership,
    Sharder,
    drain_label,
    lease_name,
    members_lease_name,
    object_key,
    shard_label,
)
from crdkit.testing import FakeCluster
from crdkit.testing.polling import holds
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

NS = "ns"
RING = "jobs"
SHARD = shard_label(RING)
DRAIN = drain_label(RING)
NAMES = [f"cm-{i}" for i in range(24)]
DURATION = 15


def now() -> float:
    return asyncio.get_running_loop().time()


def ring_for(*shards: str) -> dict[str, str | None]:
    ring = HashRing(shards)
    return {name: ring.shard_for(object_key("", "ConfigMap", NS, name)) for name in NAMES}


async def add_lease(
    client: Client, shard: str, *, holder: str | None = "pod", renewed_ago: float = 0.0
) -> None:
    await client.create(
        Lease(
            metadata=ObjectMeta(
                name=lease_name(RING, shard),
                namespace=NS,
                labels={RING_LABEL: RING, SHARD_ID_LABEL: shard},
            ),
            spec=LeaseSpec(
                holder_identity=holder,
                lease_duration_seconds=DURATION,
                renew_time=datetime.now(UTC) - timedelta(seconds=renewed_ago),
            ),
        )
    )


async def renew(client: Client, shard: str) -> None:
    renewed = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    await client.patch(
        Lease, lease_name(RING, shard), {"spec": {"renewTime": renewed}}, namespace=NS
    )


async def release(client: Client, shard: str) -> None:
    await client.patch(
        Lease, lease_name(RING, shard), {"spec": {"holderIdentity": None}}, namespace=NS
    )


async def keep_renewing(client: Client, shard: str) -> None:
    while True:
        await asyncio.sleep(2.0)
        await renew(client, shard)


async def add_configmaps(client: Client) -> dict[str, str]:
    """The ConfigMaps of NAMES; their uids by name."""
    uids = {}
    for name in NAMES:
        created = await client.create(ConfigMap(metadata=ObjectMeta(name=name, namespace=NS)))
        assert created.metadata.uid is not None
        uids[name] = created.metadata.uid
    return uids


async def labels(client: Client, kind: type[ConfigMap] | type[Secret] = ConfigMap) -> dict:
    objects = (await client.list(kind, namespace=NS)).items
    return {obj.metadata.name: dict(obj.metadata.labels or {}) for obj in objects}


async def shards_of(client: Client) -> dict[str, str | None]:
    return {name: got.get(SHARD) for name, got in (await labels(client)).items()}


async def until(check: Callable[[], bool | Awaitable[bool]], within: float = 10.0) -> float:
    """Poll ``check`` every 50 ms of virtual time; the virtual seconds it took."""
    started = now()
    while not await holds(check):
        assert now() - started < within, "not within the time given"
        await asyncio.sleep(0.05)
    return now() - started


@contextlib.asynccontextmanager
async def running(client: Client, *, owned: bool = False) -> AsyncIterator[Sharder]:
    sharder = Sharder(
        client,
        ring=RING,
        lease_namespace=NS,
        primary_kinds=[ConfigMap],
        owned_kinds=[Secret] if owned else (),
        namespace=NS,
        registry=CollectorRegistry(),
        clock=asyncio.get_running_loop().time,
    )
    task = asyncio.create_task(sharder.run())
    try:
        yield sharder
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def spread_over(client: Client, *shards: str) -> AsyncIterator[Sharder]:
    """Leases for ``shards``, the ConfigMaps, and a sharder that has labelled them all by the
    ring of those shards."""
    for shard in shards:
        await add_lease(client, shard)
    await add_configmaps(client)
    async with running(client) as sharder:
        await until(lambda: _equal(shards_of(client), ring_for(*shards)))
        yield sharder


def test_unassigned_objects_are_labelled_by_the_ring_of_live_shards() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client, spread_over(client, "a", "b") as sharder:
            assert set(ring_for("a", "b").values()) == {"a", "b"}  # both get some
            assert sharder.live == {"a", "b"}
            assert sharder.stats.writes == {"assign": len(NAMES), "drain": 0, "undrain": 0}
            assert sharder.stats.conflicts == 0
            registry = sharder.registry
            assert registry is not None
            writes = {"ring": RING, "op": "assign"}
            assert registry.get_sample_value("crdkit_sharder_writes_total", writes) == len(NAMES)
            assert registry.get_sample_value("crdkit_sharder_live_shards", {"ring": RING}) == 2
            # one created afterwards is labelled too, and nothing else is written again
            await client.create(ConfigMap(metadata=ObjectMeta(name="late", namespace=NS)))
            late = HashRing({"a", "b"}).shard_for(object_key("", "ConfigMap", NS, "late"))
            await until(lambda: _has_shard(client, "late", late))
            await asyncio.sleep(1.0)
            assert sharder.stats.writes["assign"] == len(NAMES) + 1
            assert not any(DRAIN in got for got in (await labels(client)).values())

    run_on_virtual_clock(main())


def test_with_no_live_shard_nothing_is_labelled() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            await add_lease(client, "a", holder=None)
            await add_configmaps(client)
            async with running(client) as sharder:
                await asyncio.sleep(5.0)
                assert sharder.live == frozenset()
                assert set((await shards_of(client)).values()) == {None}
                assert sharder.stats.writes["assign"] == 0
                # the first shard to come up gets everything
                await add_lease(client, "b")
                await until(lambda: _equal(shards_of(client), dict.fromkeys(NAMES, "b")))

    run_on_virtual_clock(main())


def test_a_shard_not_renewed_is_dead_after_its_lease_duration_and_its_objects_move() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            renewing = asyncio.create_task(keep_renewing(client, "a"))
            try:
                async with spread_over(client, "a", "b") as sharder:
                    # Its last renewal, as the sharder's clock sees it (the first sighting is
                    # aged by the wall clock's renewTime: see the tests below).
                    await renew(client, "b")
                    renewed = now()
                    # Within its lease duration "b" is still live and keeps its objects ...
                    await asyncio.sleep(DURATION - 0.5)
                    assert sharder.live == {"a", "b"}
                    assert await shards_of(client) == ring_for("a", "b")
                    # ... then it is dead, and its objects go to "a" at once, with no drain.
                    await until(lambda: _equal(shards_of(client), dict.fromkeys(NAMES, "a")))
                    assert sharder.live == {"a"}
                    died = sharder.stats.last_membership_change
                    assert died is not None
                    assert DURATION <= died - renewed <= DURATION + 0.1
                    moved = sum(shard == "b" for shard in ring_for("a", "b").values())
                    assert sharder.stats.writes == {
                        "assign": len(NAMES) + moved,
                        "drain": 0,
                        "undrain": 0,
                    }
                    assert sharder.stats.membership_changes == 2
            finally:
                renewing.cancel()

    run_on_virtual_clock(main())


def test_a_renewed_shard_stays_live_past_its_lease_duration() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            renewing = [asyncio.create_task(keep_renewing(client, shard)) for shard in ("a", "b")]
            try:
                async with spread_over(client, "a", "b") as sharder:
                    await asyncio.sleep(3 * DURATION)
                    assert sharder.live == {"a", "b"}
                    assert sharder.stats.membership_changes == 1
                    assert sharder.stats.writes["assign"] == len(NAMES)
            finally:
                for task in renewing:
                    task.cancel()

    run_on_virtual_clock(main())


def test_a_released_lease_is_dead_at_once() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client, spread_over(client, "a", "b") as sharder:
            await release(client, "b")
            took = await until(lambda: _equal(shards_of(client), dict.fromkeys(NAMES, "a")))
            assert took < 1.0  # not a lease duration
            assert sharder.live == {"a"}
            assert sharder.stats.writes["drain"] == 0

    run_on_virtual_clock(main())


def test_a_lease_first_seen_long_expired_is_dead_at_once() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            await add_lease(client, "a")
            await add_lease(client, "b", renewed_ago=10 * DURATION)  # its shard died long ago
            await add_configmaps(client)
            async with running(client) as sharder:
                took = await until(lambda: _equal(shards_of(client), dict.fromkeys(NAMES, "a")))
                assert took < 1.0
                assert sharder.live == {"a"}
                assert sharder.stats.membership_changes == 1  # "b" was never counted live

    run_on_virtual_clock(main())


def test_a_lease_first_seen_part_expired_lives_only_what_is_left_of_it() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            await add_lease(client, "a")
            await add_lease(client, "b", renewed_ago=DURATION - 5.0)
            await add_configmaps(client)
            renewing = asyncio.create_task(keep_renewing(client, "a"))
            try:
                async with running(client) as sharder:
                    await until(lambda: _equal(shards_of(client), ring_for("a", "b")))
                    first_seen = sharder.stats.last_membership_change
                    assert first_seen is not None
                    await until(lambda: _equal(shards_of(client), dict.fromkeys(NAMES, "a")))
                    died = sharder.stats.last_membership_change
                    assert died is not None
                    # about 5 s left of its 15 (the wall clock moved a little since)
                    assert 4.0 <= died - first_seen <= 5.1
            finally:
                renewing.cancel()

    run_on_virtual_clock(main())


def test_a_join_drains_the_objects_the_ring_gives_the_new_shard_and_nothing_else() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client, spread_over(client, "a") as sharder:
            after = ring_for("a", "b")
            joining = sorted(name for name, shard in after.items() if shard == "b")
            assert 0 < len(joining) < len(NAMES)
            await add_lease(client, "b")

            async def drained() -> bool:
                got = await labels(client)
                return sorted(n for n, ls in got.items() if ls.get(DRAIN)) == joining

            await until(drained)
            await asyncio.sleep(1.0)
            got = await labels(client)
            # Asked to drain, not moved: each is still on "a" until "a" lets it go.
            assert {n: ls.get(SHARD) for n, ls in got.items()} == dict.fromkeys(NAMES, "a")
            assert sorted(n for n, ls in got.items() if ls.get(DRAIN)) == joining
            assert sharder.stats.writes == {
                "assign": len(NAMES),
                "drain": len(joining),
                "undrain": 0,
            }
            # "a" acknowledges (as ShardMember does): now they are given to "b".
            for name in joining:
                await client.patch(
                    ConfigMap,
                    name,
                    {"metadata": {"labels": {SHARD: None, DRAIN: None}}},
                    namespace=NS,
                )
            await until(lambda: _equal(shards_of(client), after))
            assert not any(DRAIN in ls for ls in (await labels(client)).values())
            assert sharder.stats.writes["assign"] == len(NAMES) + len(joining)

    run_on_virtual_clock(main())


def test_a_drain_not_acknowledged_is_taken_back_when_the_joiner_leaves() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client, spread_over(client, "a") as sharder:
            joining = [name for name, shard in ring_for("a", "b").items() if shard == "b"]
            await add_lease(client, "b")
            await until(lambda: _count_draining(client, len(joining)))
            await release(client, "b")
            await until(lambda: _count_draining(client, 0))
            assert await shards_of(client) == dict.fromkeys(NAMES, "a")
            assert sharder.stats.writes["undrain"] == len(joining)

    run_on_virtual_clock(main())


def test_owned_objects_carry_their_owners_shard() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            await add_lease(client, "a")
            await add_lease(client, "b")
            uids = await add_configmaps(client)
            for name in NAMES:
                await client.create(secret(f"{name}-secret", Owner("ConfigMap", name, uids[name])))
            orphan = await client.create(secret("orphan"))
            cm0 = Owner("ConfigMap", "cm-0", uids["cm-0"])
            await client.create(secret("not-controlled", cm0, controller=False))
            # owned by an object of a kind the ring does not shard (a Secret, owned itself)
            assert orphan.metadata.uid is not None
            await client.create(
                secret("other-kind", Owner("Secret", "orphan", orphan.metadata.uid))
            )
            async with running(client, owned=True) as sharder:
                want = {f"{name}-secret": shard for name, shard in ring_for("a", "b").items()}
                assert set(want.values()) == {"a", "b"}

                async def secrets_placed() -> bool:
                    got = await labels(client, Secret)
                    return all(got[name].get(SHARD) == shard for name, shard in want.items())

                await until(secrets_placed)
                await until(lambda: _equal(shards_of(client), ring_for("a", "b")))
                got = await labels(client, Secret)
                for name in ("orphan", "not-controlled", "other-kind"):
                    assert SHARD not in got[name], name
                assert sharder.stats.writes["assign"] == 2 * len(NAMES)
                # When "b" dies its owners' Secrets move with them (directly: owned objects
                # need no handshake).
                await release(client, "b")

                async def all_on_a() -> bool:
                    got = await labels(client, Secret)
                    return all(got[name].get(SHARD) == "a" for name in want)

                await until(all_on_a)
                assert sharder.stats.writes["drain"] == 0

    run_on_virtual_clock(main())


def test_owned_objects_follow_their_owner_once_it_has_moved_never_drained() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            await add_lease(client, "a")
            uids = await add_configmaps(client)
            for name in NAMES:
                await client.create(secret(f"{name}-secret", Owner("ConfigMap", name, uids[name])))
            async with running(client, owned=True):

                async def secrets_on(want: dict[str, str | None]) -> bool:
                    got = await labels(client, Secret)
                    return all(got[f"{n}-secret"].get(SHARD) == s for n, s in want.items())

                await until(lambda: secrets_on(dict.fromkeys(NAMES, "a")))
                after = ring_for("a", "b")
                joining = [name for name, shard in after.items() if shard == "b"]
                await add_lease(client, "b")
                await until(lambda: _count_draining(client, len(joining)))
                # While their owners drain, the owned objects stay with the shard holding them.
                await asyncio.sleep(1.0)
                assert await secrets_on(dict.fromkeys(NAMES, "a"))
                for name in joining:  # "a" lets the owners go, as ShardMember does
                    await client.patch(
                        ConfigMap,
                        name,
                        {"metadata": {"labels": {SHARD: None, DRAIN: None}}},
                        namespace=NS,
                    )
                await until(lambda: secrets_on(after))
                got = await labels(client, Secret)
                assert not any(DRAIN in ls for ls in got.values())

    run_on_virtual_clock(main())


def test_a_sharder_needs_a_kind_and_a_worker() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            with pytest.raises(ValueError, match="primary_kinds"):
                Sharder(client, ring=RING, lease_namespace=NS, primary_kinds=[])
            with pytest.raises(ValueError, match="concurrency"):
                Sharder(
                    client, ring=RING, lease_namespace=NS, primary_kinds=[ConfigMap], concurrency=0
                )
            # an owned kind that is also primary is primary only
            both = Sharder(
                client,
                ring=RING,
                lease_namespace=NS,
                primary_kinds=[ConfigMap],
                owned_kinds=[ConfigMap, Secret],
            )
            assert [(k.kind, k.primary) for k in both.kinds] == [
                (ConfigMap, True),
                (Secret, False),
            ]

    run_on_virtual_clock(main())


@dataclass(frozen=True)
class Owner:
    kind: str
    name: str
    uid: str


def secret(name: str, owner: Owner | None = None, *, controller: bool = True) -> Secret:
    refs = None
    if owner is not None:
        refs = [
            OwnerReference(
                api_version="v1",
                kind=owner.kind,
                name=owner.name,
                uid=owner.uid,
                controller=controller,
            )
        ]
    return Secret(metadata=ObjectMeta(name=name, namespace=NS, owner_references=refs))


async def _equal(got: Awaitable[dict[str, str | None]], want: dict[str, str | None]) -> bool:
    return await got == want


async def _has_shard(client: Client, name: str, shard: str | None) -> bool:
    return (await shards_of(client)).get(name) == shard


async def _count_draining(client: Client, count: int) -> bool:
    return sum(bool(ls.get(DRAIN)) for ls in (await labels(client)).values()) == count


class MembershipLog:
    """Every membership the sharder publishes, in order, read through a watch."""

    def __init__(self, client: Client) -> None:
        self.seen: list[Membership] = []
        self.informer: Informer[Lease] = Informer(
            client,
            Lease,
            namespace=NS,
            field_selector=f"metadata.name={members_lease_name(RING)}",
            resync_period=None,
        )
        self.informer.add_event_handler(self._see, lambda _old, new: self._see(new))

    def _see(self, lease: Lease) -> None:
        membership = Membership.from_annotations(lease.metadata.annotations)
        if not self.seen or self.seen[-1] != membership:
            self.seen.append(membership)


@contextlib.asynccontextmanager
async def membership_log(client: Client) -> AsyncIterator[MembershipLog]:
    log = MembershipLog(client)
    await log.informer.start()
    try:
        yield log
    finally:
        await log.informer.stop()


@contextlib.asynccontextmanager
async def published_ring(*shards: str) -> AsyncIterator[tuple[Client, MembershipLog, Sharder]]:
    """``spread_over(shards)`` on a fresh cluster, once the sharder has published them as the
    ring's members, with the log of what it publishes."""
    async with (
        FakeCluster().client() as client,
        membership_log(client) as published,
        spread_over(client, *shards) as sharder,
    ):
        await until(lambda: published.seen[-1:] == [Membership(frozenset(shards))])
        yield client, published, sharder


def test_a_death_is_published_with_its_orphans_until_they_are_relabelled() -> None:
    async def main() -> None:
        async with published_ring("a", "b") as (client, published, sharder):
            await release(client, "b")
            await until(lambda: _equal(shards_of(client), dict.fromkeys(NAMES, "a")))
            await until(lambda: published.seen[-1] == Membership(frozenset("a")))
            assert published.seen == [
                Membership(frozenset("ab")),
                Membership(frozenset("a"), frozenset("b")),
                Membership(frozenset("a")),
            ]
            assert sharder.published == Membership(frozenset("a"))
            assert sharder.stats.publications == 3
            registry = sharder.registry
            assert registry is not None
            ring = {"ring": RING}
            assert registry.get_sample_value("crdkit_sharder_members", ring) == 1
            assert registry.get_sample_value("crdkit_sharder_orphans", ring) == 0
            assert registry.get_sample_value("crdkit_sharder_live_shards", ring) == 1

    run_on_virtual_clock(main())


def test_a_joiner_and_a_returning_shard_wait_until_no_object_is_an_orphan() -> None:
    async def main() -> None:
        async with published_ring("a", "b") as (client, published, sharder):
            slow_object_writes(client, 2.0)
            await release(client, "b")
            await until(lambda: bool(published.seen[-1].orphans))
            # While "b"'s objects are relabelled, "c" joins and "b" comes back.
            await add_lease(client, "c")
            await client.patch(
                Lease, lease_name(RING, "b"), {"spec": {"holderIdentity": "b2"}}, namespace=NS
            )
            await asyncio.sleep(0.5)
            assert sharder.alive == {"a", "b", "c"}
            assert sharder.live == {"a"}
            await until(lambda: _equal(shards_of(client), dict.fromkeys(NAMES, "a")), 30)
            await until(lambda: published.seen[-1].members == {"a", "b", "c"}, 30)
            # Never a member while an orphan was left, and the returning "b" never a member
            # while its old objects were orphans.
            assert all(not m.orphans or m.members == {"a"} for m in published.seen[1:])
            assert published.seen[-1].orphans == frozenset()

    run_on_virtual_clock(main())


def test_an_owned_object_of_a_dead_shard_whose_owner_is_gone_loses_its_label() -> None:
    async def main() -> None:
        async with FakeCluster().client() as client:
            await add_lease(client, "a")
            await client.create(
                Secret(metadata=ObjectMeta(name="stray", namespace=NS, labels={SHARD: "gone"}))
            )
            left = secret("left", Owner("ConfigMap", "missing", "uid-0"))
            left.metadata.labels = {SHARD: "gone"}
            await client.create(left)
            async with running(client, owned=True) as sharder:

                async def unlabelled() -> bool:
                    got = await labels(client, Secret)
                    return SHARD not in got["stray"] and SHARD not in got["left"]

                await until(unlabelled)
                assert sharder.published.orphans == frozenset()

    run_on_virtual_clock(main())


def test_a_deleted_members_lease_is_published_again() -> None:
    async def main() -> None:
        async with published_ring("a", "b") as (client, _, sharder):
            await client.delete(Lease, members_lease_name(RING), namespace=NS)

            async def republished() -> bool:
                try:
                    lease = await client.get(Lease, members_lease_name(RING), namespace=NS)
                except NotFound:
                    return False
                return Membership.from_annotations(lease.metadata.annotations) == Membership(
                    frozenset("ab")
                )

            await until(republished)
            assert sharder.stats.publications == 2
            assert await shards_of(client) == ring_for("a", "b")  # nothing moved meanwhile

    run_on_virtual_clock(main())
