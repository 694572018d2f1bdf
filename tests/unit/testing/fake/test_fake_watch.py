"""FakeCluster's watches: replay from a version, live events, selectors, 410, ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from examples.hello.operator import Hello, HelloSpec

from crdkit.client import Client, Gone, WatchEvent
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.testing import FakeCluster

NS = "ns"


def configmap(name: str, **labels: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=NS, labels=labels))


async def take(events: AsyncIterator[WatchEvent[Any]], count: int) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    async with asyncio.timeout(10):  # a hang guard: the events are already queued
        async for event in events:
            seen.append((event.type, event.object.metadata.name))
            if len(seen) == count:
                break
    return seen


async def drain(events: AsyncIterator[WatchEvent[Any]]) -> None:
    async with asyncio.timeout(10):  # a hang guard: the answer is immediate
        async for _ in events:
            pass


async def test_a_watch_without_version_starts_with_what_exists_then_follows() -> None:
    cluster = FakeCluster([configmap("a"), configmap("b")])
    async with cluster.client() as client:
        events = client.watch(ConfigMap, namespace=NS)
        assert await take(events, 2) == [("ADDED", "a"), ("ADDED", "b")]
        await client.patch(ConfigMap, "a", {"data": {"k": "v"}}, namespace=NS)
        await client.delete(ConfigMap, "b", namespace=NS)
        assert await take(events, 2) == [("MODIFIED", "a"), ("DELETED", "b")]
        await events.aclose()  # type: ignore[attr-defined]


async def test_a_watch_from_a_version_replays_what_followed_it() -> None:
    cluster = FakeCluster([configmap("a")])
    start = cluster.resource_version
    async with cluster.client() as client:
        await client.create(configmap("b"))
        await client.delete(ConfigMap, "a", namespace=NS)
        events = client.watch(ConfigMap, namespace=NS, resource_version=start)
        seen = await take(events, 2)
        await events.aclose()  # type: ignore[attr-defined]
    assert seen == [("ADDED", "b"), ("DELETED", "a")]


async def test_events_carry_increasing_versions_and_the_deleted_object() -> None:
    cluster = FakeCluster([configmap("a")])
    async with cluster.client() as client:
        events = client.watch(ConfigMap, namespace=NS, resource_version="1")
        await client.delete(ConfigMap, "a", namespace=NS)
        async with asyncio.timeout(10):
            event = await anext(events)
        await events.aclose()  # type: ignore[attr-defined]
    assert event.type == "DELETED"
    assert int(event.resource_version or 0) == 2
    assert event.object is not None
    assert event.object.metadata.name == "a"


async def test_selector_watches_see_objects_enter_and_leave() -> None:
    cluster = FakeCluster([configmap("a", x="1")])
    async with cluster.client() as client:
        events = client.watch(ConfigMap, namespace=NS, label_selector="x=1", resource_version="1")
        await client.patch(ConfigMap, "a", {"metadata": {"labels": {"x": "2"}}}, namespace=NS)
        await client.create(configmap("b", x="2"))
        await client.patch(ConfigMap, "b", {"metadata": {"labels": {"x": "1"}}}, namespace=NS)
        seen = await take(events, 2)
        await events.aclose()  # type: ignore[attr-defined]
    assert seen == [("DELETED", "a"), ("ADDED", "b")]


async def test_namespaces_and_kinds_are_kept_apart() -> None:
    cluster = FakeCluster(kinds=[Hello])
    async with cluster.client() as client:
        events = client.watch(ConfigMap, namespace=NS, resource_version="0")
        await client.create(ConfigMap(metadata=ObjectMeta(name="elsewhere", namespace="other")))
        await client.create(
            Hello(metadata=ObjectMeta(name="h", namespace=NS), spec=HelloSpec(target="t"))
        )
        await client.create(configmap("mine"))
        seen = await take(events, 1)
        await events.aclose()  # type: ignore[attr-defined]
    assert seen == [("ADDED", "mine")]


async def test_a_compacted_version_answers_gone() -> None:
    cluster = FakeCluster([configmap("a")])
    async with cluster.client() as client:
        await client.create(configmap("b"))
        cluster.compact()
        with pytest.raises(Gone, match="too old resource version"):
            await drain(client.watch(ConfigMap, namespace=NS, resource_version="1"))
        # the current version is still fine
        events = client.watch(ConfigMap, namespace=NS, resource_version=cluster.resource_version)
        await client.create(configmap("c"))
        assert await take(events, 1) == [("ADDED", "c")]
        await events.aclose()  # type: ignore[attr-defined]


async def test_a_bounded_history_forgets_old_versions() -> None:
    cluster = FakeCluster([configmap(f"c{i}") for i in range(5)], history=2)
    async with cluster.client() as client:
        with pytest.raises(Gone):
            await drain(client.watch(ConfigMap, namespace=NS, resource_version="1"))
        events = client.watch(ConfigMap, namespace=NS, resource_version="3")
        assert await take(events, 2) == [("ADDED", "c3"), ("ADDED", "c4")]
        await events.aclose()  # type: ignore[attr-defined]


async def test_end_watches_ends_them_as_a_server_timeout_does() -> None:
    cluster = FakeCluster([configmap("a")])
    async with cluster.client() as client:
        seen: list[str] = []
        first = asyncio.Event()

        async def consume(c: Client) -> None:
            async for event in c.watch(ConfigMap, namespace=NS):
                seen.append(event.type)
                first.set()

        task = asyncio.create_task(consume(client))
        await asyncio.wait_for(first.wait(), 10)
        cluster.end_watches()
        await asyncio.wait_for(task, 10)  # the iteration ended by itself
    assert seen == ["ADDED"]


async def test_closing_the_client_ends_its_watches() -> None:
    cluster = FakeCluster([configmap("a")])
    client = cluster.client()
    await client.__aenter__()
    events = client.watch(ConfigMap, namespace=NS)
    assert await take(events, 1) == [("ADDED", "a")]
    await client.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(anext(events), 10)
