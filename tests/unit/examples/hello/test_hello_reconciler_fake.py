"""The hello operator's reconciler, unit-tested on an in-memory cluster (no control plane)."""

from __future__ import annotations

from examples.hello.operator import Hello, HelloReconciler, HelloSpec

from _hello import controller_of
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime import is_condition_true
from crdkit.testing import FakeCluster
from crdkit.testing.reconcile import reconcile_once


def hello(name: str = "world", target: str = "world") -> Hello:
    return Hello(metadata=ObjectMeta(name=name, namespace="ns"), spec=HelloSpec(target=target))


async def test_reconcile_writes_the_configmap_and_a_ready_status() -> None:
    cluster = FakeCluster([hello()])
    async with cluster.client() as client:
        assert await reconcile_once(HelloReconciler(), client, "world", namespace="ns") is None
        cm = await client.get(ConfigMap, "world-greeting", namespace="ns")
        current = await client.get(Hello, "world", namespace="ns")
    assert cm.data == {"message": "Hello, world!"}
    # The ConfigMap is controlled by its Hello, so the Hello's controller hears of changes.
    assert controller_of(cm) == ("Hello", "world", current.metadata.uid, True)
    assert current.status is not None
    assert current.status.config_map == "world-greeting"
    assert current.status.observed_generation == current.metadata.generation == 1
    assert is_condition_true(current.status.conditions, "Ready")


async def test_a_second_reconcile_writes_nothing() -> None:
    cluster = FakeCluster([hello()])
    async with cluster.client() as client:
        await reconcile_once(HelloReconciler(), client, "world", namespace="ns")
        settled = cluster.resource_version
        await reconcile_once(HelloReconciler(), client, "world", namespace="ns")
    # Neither the apply of an unchanged ConfigMap nor the status is a new write: the
    # operator does not wake itself up.
    assert cluster.resource_version == settled


async def test_a_spec_change_reaches_the_configmap_and_observed_generation() -> None:
    cluster = FakeCluster([hello()])
    async with cluster.client() as client:
        await reconcile_once(HelloReconciler(), client, "world", namespace="ns")
        current = await client.get(Hello, "world", namespace="ns")
        current.spec.greeting = "Bonjour"
        changed = await client.replace(current)
        assert changed.metadata.generation == 2
        await reconcile_once(HelloReconciler(), client, "world", namespace="ns")
        cm = await client.get(ConfigMap, "world-greeting", namespace="ns")
        after = await client.get(Hello, "world", namespace="ns")
    assert cm.data == {"message": "Bonjour, world!"}
    assert after.status is not None
    assert after.status.observed_generation == 2


async def test_deleting_the_hello_collects_its_configmap() -> None:
    cluster = FakeCluster([hello()])
    async with cluster.client() as client:
        await reconcile_once(HelloReconciler(), client, "world", namespace="ns")
        await client.delete(Hello, "world", namespace="ns")
        left = await client.list(ConfigMap, namespace="ns")
    assert left.items == []  # the fake's garbage collector follows the owner reference
