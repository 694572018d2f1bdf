"""The informer's streamed list (``watch_list``, client-go's WatchList) on FakeCluster: one
watch brings the initial objects and goes on with the changes; an apiserver that refuses it
is listed and watched instead. (A relist after 410 streams again: the live test.)"""

from __future__ import annotations

from typing import Any

import pytest

from crdkit.client import object_key
from crdkit.client.errors import Invalid
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime import Informer
from crdkit.runtime.informer_handlers import event_origin
from crdkit.testing import FakeCluster, eventually

NS = "ns"


def configmap(name: str, value: str = "1") -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=NS), data={"v": value})


async def test_a_streamed_list_syncs_and_follows_on_the_same_stream() -> None:
    cluster = FakeCluster([configmap("a"), configmap("b")])
    async with cluster.client() as client:
        informer = Informer(client, ConfigMap, namespace=NS, watch_list=True)
        seen: list[tuple[str, str]] = []
        informer.add_event_handler(on_add=lambda o: seen.append((object_key(o), event_origin())))
        await informer.start()
        try:
            assert await informer.wait_for_sync(30)
            assert (informer.list_count, informer.stream_count) == (1, 1)
            assert sorted(informer.store.keys()) == ["ns/a", "ns/b"]
            await client.create(configmap("c"))  # on the same stream, after the bookmark
            await eventually(lambda: "ns/c" in informer.store, 30, "c followed")
            assert informer.watch_count == 1
            await client.delete(ConfigMap, "a", namespace=NS)
            cluster.compact()
            cluster.end_watches()  # the informer watches again from where it was, or relists
            await client.create(configmap("d"))
            await eventually(
                lambda: sorted(informer.store.keys()) == ["ns/b", "ns/c", "ns/d"],
                30,
                "the store after the watch ended",
            )
        finally:
            await informer.stop()
    assert seen[:3] == [("ns/a", "initial-list"), ("ns/b", "initial-list"), ("ns/c", "change")]


async def test_an_apiserver_that_refuses_the_stream_is_listed_instead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = FakeCluster([configmap("a")])
    async with cluster.client() as client:
        stream = client.transport.stream

        def refusing(method: str, path: str, **kwargs: Any) -> Any:
            if ("sendInitialEvents", "true") in list(kwargs.get("params") or []):
                raise Invalid(
                    "sendInitialEvents: Forbidden: not allowed", code=422, reason="Invalid"
                )
            return stream(method, path, **kwargs)

        monkeypatch.setattr(client.transport, "stream", refusing)
        informer = Informer(client, ConfigMap, namespace=NS, watch_list=True)
        await informer.start()
        try:
            assert await informer.wait_for_sync(30)
            assert (informer.list_count, informer.stream_count) == (1, 0)
            await client.create(configmap("b"))
            await eventually(lambda: "ns/b" in informer.store, 30, "b watched")
        finally:
            await informer.stop()


async def test_the_manager_option_starts_its_informers_from_streamed_lists() -> None:
    from prometheus_client import CollectorRegistry

    from crdkit.runtime import Manager

    cluster = FakeCluster([configmap("a")])
    async with cluster.client() as client:
        manager = Manager(client, namespace=NS, watch_list=True, registry=CollectorRegistry())
        informer = manager.informers.informer(ConfigMap, namespace=NS)
        assert informer.watch_list
        await informer.start()
        try:
            assert await informer.wait_for_sync(30)
            assert informer.stream_count == 1
        finally:
            await informer.stop()
