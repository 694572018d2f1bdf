"""The runtime on FakeCluster: informers, the cache and a whole Manager, no control plane."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import pytest
from examples.hello.operator import Hello, HelloReconciler, HelloSpec
from prometheus_client import CollectorRegistry

from _hello import hello_greeted
from crdkit.client import Client, NotFound, object_key
from crdkit.resources import ConfigMap, Event, Lease, ObjectMeta
from crdkit.runtime import Context, Informer, Manager
from crdkit.runtime.http import parse_bind_address
from crdkit.runtime.manager import default_metrics_address
from crdkit.testing import FakeCluster, eventually
from crdkit.testing.reconcile import reconcile_context

NS = "ns"


def configmap(name: str, value: str = "1") -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=NS), data={"v": value})


def hello_named(name: str) -> Hello:
    return Hello(metadata=ObjectMeta(name=name, namespace=NS), spec=HelloSpec(target=name))


def hello_manager(client: Client, reconciler: HelloReconciler, **options: Any) -> Manager:
    """A Manager on NS running ``reconciler``: no ports open and a metrics registry of its own,
    unless ``options`` say otherwise."""
    defaults: dict[str, Any] = {
        "metrics_bind_address": "0",
        "health_probe_bind_address": "0",
        "registry": CollectorRegistry(),
    }
    manager = Manager(client, namespace=NS, **{**defaults, **options})
    manager.add(reconciler)
    return manager


async def store_matches(informer: Informer[ConfigMap], client: Client) -> bool:
    server = {
        object_key(o): o.metadata.resource_version
        for o in (await client.list(ConfigMap, namespace=NS)).items
    }
    cached = {object_key(o): o.metadata.resource_version for o in informer.store.list()}
    return server == cached


async def test_an_informer_syncs_follows_and_relists_after_gone() -> None:
    cluster = FakeCluster([configmap("a"), configmap("b")])
    async with cluster.client() as client:
        informer = Informer(client, ConfigMap, namespace=NS)
        added: list[str] = []
        informer.add_event_handler(on_add=lambda o: added.append(object_key(o)))
        await informer.start()
        try:
            assert await informer.wait_for_sync(30)
            assert await store_matches(informer, client)
            await client.create(configmap("c"))
            await client.delete(ConfigMap, "a", namespace=NS)
            await eventually(lambda: store_matches(informer, client), 30, "store follows")
            # The history is compacted and the watch ends: the informer's rewatch gets 410
            # and it lists again, missing nothing written meanwhile.
            cluster.compact()
            cluster.end_watches()
            await client.create(configmap("d"))
            await eventually(lambda: store_matches(informer, client), 30, "store relisted")
        finally:
            await informer.stop()
    await eventually(lambda: set(added) >= {"ns/a", "ns/b", "ns/c", "ns/d"}, 30, "adds")


@contextlib.asynccontextmanager
async def running(manager: Manager) -> AsyncIterator[None]:
    task = asyncio.create_task(manager.run())
    try:
        yield
    finally:
        manager.stop()
        await asyncio.wait_for(task, 60)
        task.result()


async def test_a_manager_runs_the_hello_operator_on_the_fake_cluster() -> None:
    cluster = FakeCluster(kinds=[Hello])
    async with cluster.client() as client, running(hello_manager(client, HelloReconciler())):
        await client.create(hello_named("w"))

        def greeted() -> Awaitable[bool]:
            return hello_greeted(client, NS, "Hello, w!", name="w")

        await eventually(greeted, 30, "greeting and Ready")
        # the owned ConfigMap is deleted: the controller (owns=ConfigMap) recreates it
        await client.delete(ConfigMap, "w-greeting", namespace=NS)
        await eventually(greeted, 30, "greeting recreated")


class CleaningHello(HelloReconciler):
    """Hello's reconciler with a finalizer: records what it cleaned up."""

    name = "cleaning-hello"

    def __init__(self) -> None:
        self.finalized: list[str] = []

    async def finalize(self, ctx: Context, obj: Hello) -> None:
        self.finalized.append(obj.metadata.name or "")


async def test_a_finalizing_reconciler_holds_deletion_until_it_cleaned_up() -> None:
    cluster = FakeCluster(kinds=[Hello])
    reconciler = CleaningHello()
    async with cluster.client() as client, running(hello_manager(client, reconciler)):
        await client.create(hello_named("w"))

        async def finalizer_added() -> bool:
            hello = await client.get(Hello, "w", namespace=NS)
            return reconciler.finalizer_name() in hello.metadata.finalizers

        await eventually(finalizer_added, 30, "the finalizer added")
        deleting = await client.delete(Hello, "w", namespace=NS)
        assert deleting is not None
        assert deleting.metadata.deletion_timestamp is not None  # held by the finalizer

        async def gone() -> bool:
            try:
                await client.get(Hello, "w", namespace=NS)
            except NotFound:
                return True
            return False

        await eventually(gone, 30, "the Hello gone after finalize")
    assert set(reconciler.finalized) == {"w"}  # finalize may run again: it is idempotent


async def test_leader_election_takes_a_lease_on_the_fake_cluster() -> None:
    cluster = FakeCluster(kinds=[Hello])
    async with cluster.client() as client:
        manager = hello_manager(
            client,
            HelloReconciler(),
            leader_election=True,
            leader_election_id="hello-leader",
            leader_election_namespace=NS,
            identity="me",
        )
        async with running(manager):

            async def leading() -> bool:
                try:
                    lease = await client.get(Lease, "hello-leader", namespace=NS)
                except NotFound:
                    return False
                return lease.spec.holder_identity == "me"

            await eventually(leading, 30, "the lease held")


async def test_the_reconcile_context_cache_reads_the_fake_cluster() -> None:
    cluster = FakeCluster([hello_named("w"), configmap("seen")])
    async with cluster.client() as client:
        current = await client.get(Hello, "w", namespace=NS)
        async with reconcile_context(HelloReconciler(), client, current) as ctx:
            cached = await ctx.cache.get(ConfigMap, "seen", namespace=NS)
            assert ctx.field_manager == "hello"
            assert ctx.request.name == "w"
            await ctx.event("Normal", "Tested", "from a unit test")
        events = await client.list(Event, namespace=NS)
    assert cached.data == {"v": "1"}
    [event] = events.items
    assert (event.reason, event.note, event.reporting_controller) == (
        "Tested",
        "from a unit test",
        "hello.example.com/hello",
    )


def test_metrics_are_off_the_network_unless_asked() -> None:
    # Plain HTTP on loopback only; HTTPS (tokens RBAC allows) on every interface.
    assert default_metrics_address(secure=False) == "127.0.0.1:8080"
    assert default_metrics_address(secure=True) == ":8443"
    assert parse_bind_address(default_metrics_address(secure=False)) == ("127.0.0.1", 8080)


@pytest.mark.parametrize(("address", "warned"), [("0.0.0.0:0", True), ("127.0.0.1:0", False)])
async def test_plain_metrics_open_to_the_network_are_warned_about(
    address: str, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = FakeCluster(kinds=[Hello])
    async with cluster.client() as client:
        manager = hello_manager(client, HelloReconciler(), metrics_bind_address=address)
        with caplog.at_level(logging.WARNING, logger="crdkit.runtime.manager"):
            async with running(manager):
                await manager.wait_ready()
                assert manager.metrics_port
    said = [r.getMessage() for r in caplog.records if "plain HTTP" in r.getMessage()]
    assert bool(said) == warned
    if warned:
        assert said[0].startswith(
            "serving /metrics over plain HTTP to anyone who can reach 0.0.0.0:"
        )
