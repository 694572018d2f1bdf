"""The shared factory and the cache reader against the real apiserver."""

from __future__ import annotations

import asyncio
import time

import pytest

import factories
from crdkit.client import Client, NotFound, object_key
from crdkit.resources import ConfigMap, Pod
from crdkit.runtime.cache import CacheReader
from crdkit.runtime.factory import SharedInformerFactory

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def pod(namespace: str, name: str, node: str, **labels: str) -> Pod:
    return factories.pod(
        name, namespace=namespace, node=node, labels=labels, container="main", image="busybox"
    )


async def test_cache_reader_mirrors_the_client(crdkit_client: Client, namespace: str) -> None:
    await crdkit_client.create(pod(namespace, "a", "gpu-1", app="train", tier="x"))
    await crdkit_client.create(pod(namespace, "b", "gpu-1", app="train", tier="y"))
    await crdkit_client.create(pod(namespace, "c", "gpu-2", app="serve"))
    factory = SharedInformerFactory(crdkit_client)
    reader = CacheReader(factory)
    reader.index_field(Pod, "spec.nodeName", lambda p: p.spec.node_name)
    try:
        got = await reader.get(Pod, "a", namespace=namespace)
        assert got == await crdkit_client.get(Pod, "a", namespace=namespace)
        with pytest.raises(NotFound):
            await reader.get(Pod, "zzz", namespace=namespace)

        for selector in ("app=train", "app=train,tier!=y", "tier", "app in (serve,x)"):
            cached = await reader.list(Pod, namespace=namespace, label_selector=selector)
            live = await crdkit_client.list(Pod, namespace=namespace, label_selector=selector)
            assert [object_key(p) for p in cached.items] == sorted(
                object_key(p) for p in live.items
            ), selector

        on_node = await reader.list(Pod, namespace=namespace, field_selector="spec.nodeName=gpu-1")
        assert [p.metadata.name for p in on_node.items] == ["a", "b"]
        named = await reader.list(Pod, namespace=namespace, field_selector="metadata.name=c")
        assert [p.metadata.name for p in named.items] == ["c"]
        with pytest.raises(ValueError, match=r"status\.phase"):
            await reader.list(Pod, field_selector="status.phase=Running")

        # One informer for Pods, however many reads.
        assert len(factory.informers) == 1

        await crdkit_client.delete(Pod, "b", namespace=namespace, grace_period_seconds=0)
        deadline = time.monotonic() + 30
        while True:
            remaining = await reader.list(Pod, namespace=namespace, label_selector="app=train")
            if [p.metadata.name for p in remaining.items] == ["a"]:
                break
            assert time.monotonic() < deadline, "the cache never saw the delete"
            await asyncio.sleep(0.1)
    finally:
        await factory.stop()


async def test_factory_starts_syncs_and_shares(crdkit_client: Client, namespace: str) -> None:
    await crdkit_client.create(
        ConfigMap.model_validate({"metadata": {"name": "shared", "namespace": namespace}})
    )
    factory = SharedInformerFactory(crdkit_client)
    full = factory.informer(ConfigMap, namespace=namespace)
    meta = factory.metadata_informer(ConfigMap, namespace=namespace)
    seen_by: dict[str, list[str]] = {"one": [], "two": []}
    full.add_event_handler(on_add=lambda obj: seen_by["one"].append(object_key(obj)))
    full.add_event_handler(on_add=lambda obj: seen_by["two"].append(object_key(obj)))
    async with factory:
        assert await factory.wait_for_sync(timeout=30)
        assert full.store.keys() == meta.store.keys() == [f"{namespace}/shared"]
        await full.drain()
        assert seen_by == {"one": [f"{namespace}/shared"], "two": [f"{namespace}/shared"]}
        assert full.watch_count <= 1  # one watch each, however many handlers
        assert meta.watch_count <= 1
