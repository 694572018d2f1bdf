"""The informer against a real apiserver: it converges after restarts, compaction and outages.

Every test ends by comparing the store with a fresh list (same keys, same resourceVersions)
and checking the handlers saw what changed.
"""

from __future__ import annotations

import pytest
from _runtime_support import Recorder, configmap, eventually, store_matches_server

from crdkit.client import Client, Gone, object_key
from crdkit.resources import ConfigMap, PartialObjectMetadata
from crdkit.runtime.informer import Backoff, Informer, strip_managed_fields
from crdkit.runtime.store import LABEL_INDEX, index_labels
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def make_informer(client: Client, namespace: str) -> Informer[ConfigMap]:
    return Informer(
        client,
        ConfigMap,
        namespace=namespace,
        indexers={LABEL_INDEX: index_labels},
        backoff=Backoff(0.1, 2.0),
    )


async def recorded_informer(
    client: Client, namespace: str, *existing: str
) -> tuple[Informer[ConfigMap], Recorder]:
    """A ConfigMap made for each name of ``existing``, then an informer (not started) whose
    handlers a Recorder is."""
    for name in existing:
        await client.create(configmap(namespace, name))
    informer = make_informer(client, namespace)
    seen = Recorder()
    informer.add_event_handler(seen.on_add, seen.on_update, seen.on_delete)
    return informer, seen


async def change_one_of_each(
    client: Client, namespace: str, *, create: str, patch: str, delete: str
) -> None:
    """An add, an update and a delete, in that order: what the handlers must all be told."""
    await client.create(configmap(namespace, create))
    await client.patch(ConfigMap, patch, {"data": {"v": "2"}}, namespace=namespace)
    await client.delete(ConfigMap, delete, namespace=namespace)


async def synced_then_stopped(informer: Informer[ConfigMap]) -> None:
    """Disconnected after a full sync: the store and its resourceVersion stay."""
    await informer.start()
    assert await informer.wait_for_sync(timeout=30)
    await informer.stop()


async def test_lists_then_follows_changes(crdkit_client: Client, namespace: str) -> None:
    informer, seen = await recorded_informer(crdkit_client, namespace, "before")
    async with informer:
        assert await informer.wait_for_sync(timeout=30)
        assert informer.store.get(f"{namespace}/before") is not None
        await change_one_of_each(
            crdkit_client, namespace, create="after", patch="before", delete="after"
        )
        await eventually(lambda: _has(seen.deleted, f"{namespace}/after"))
        await informer.drain()
    assert seen.added == [f"{namespace}/before", f"{namespace}/after"]
    assert f"{namespace}/before" in seen.updated
    assert await store_matches_server(informer, crdkit_client, namespace)
    assert [object_key(o) for o in informer.store.by_index(LABEL_INDEX, "app=x")] == [
        f"{namespace}/before"
    ]


async def _has(items: list[str], key: str) -> bool:
    return key in items


async def test_converges_after_apiserver_restart_mid_watch(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    informer, seen = await recorded_informer(crdkit_client, namespace, "a", "b", "c")
    async with informer:
        assert await informer.wait_for_sync(timeout=30)
        watches_before = informer.watch_count
        await control_plane.restart_apiserver()
        await change_one_of_each(crdkit_client, namespace, create="d", patch="a", delete="b")
        await eventually(lambda: store_matches_server(informer, crdkit_client, namespace))
        await informer.drain()
        assert informer.watch_count > watches_before  # it did reconnect
    assert f"{namespace}/d" in seen.added
    assert f"{namespace}/a" in seen.updated
    assert seen.deleted == [f"{namespace}/b"]


async def test_relists_after_compaction_while_disconnected(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    informer, seen = await recorded_informer(crdkit_client, namespace, "keep", "change", "drop")
    await synced_then_stopped(informer)
    stale_version = informer.resource_version

    await change_one_of_each(crdkit_client, namespace, create="new", patch="change", delete="drop")
    await control_plane.compact_etcd()

    # The version the informer holds is gone from etcd's history.
    with pytest.raises(Gone):
        async for _ in crdkit_client.watch(
            ConfigMap, namespace=namespace, resource_version=stale_version, timeout_seconds=5
        ):
            pass

    lists_before = informer.list_count
    async with informer:
        await eventually(lambda: store_matches_server(informer, crdkit_client, namespace))
        await informer.drain()
    assert informer.list_count == lists_before + 1  # 410 → exactly one relist
    assert isinstance(informer.last_error, Gone)
    assert f"{namespace}/new" in seen.added
    assert f"{namespace}/change" in seen.updated
    assert f"{namespace}/keep" not in seen.updated  # unchanged objects are not re-announced
    assert seen.deleted == [f"{namespace}/drop"]


async def test_replays_changes_made_while_disconnected(
    crdkit_client: Client, namespace: str
) -> None:
    informer, seen = await recorded_informer(crdkit_client, namespace, "keep", "change", "drop")
    await synced_then_stopped(informer)

    await change_one_of_each(crdkit_client, namespace, create="new", patch="change", delete="drop")

    lists_before = informer.list_count
    async with informer:
        await eventually(lambda: store_matches_server(informer, crdkit_client, namespace))
        await informer.drain()
    assert informer.list_count == lists_before  # resumed the watch; no relist needed
    assert seen.added[-1] == f"{namespace}/new"
    assert f"{namespace}/change" in seen.updated
    assert seen.deleted == [f"{namespace}/drop"]


async def test_metadata_only_informer(crdkit_client: Client, namespace: str) -> None:
    await crdkit_client.create(configmap(namespace, "meta"))
    informer = Informer.for_metadata(crdkit_client, ConfigMap, namespace=namespace)
    async with informer:
        assert await informer.wait_for_sync(timeout=30)
        cached = informer.store.get(f"{namespace}/meta")
        assert isinstance(cached, PartialObjectMetadata)
        assert cached.metadata.labels == {"app": "x"}
        assert "data" not in cached.model_dump(by_alias=True)
        await crdkit_client.patch(
            ConfigMap, "meta", {"metadata": {"labels": {"app": "y"}}}, namespace=namespace
        )

        async def relabelled() -> bool:
            obj = informer.store.get(f"{namespace}/meta")
            return obj is not None and obj.metadata.labels == {"app": "y"}

        await eventually(relabelled)


async def test_resync_replays_and_late_handlers_catch_up(
    crdkit_client: Client, namespace: str
) -> None:
    await crdkit_client.create(configmap(namespace, "steady"))
    informer = Informer(crdkit_client, ConfigMap, namespace=namespace, resync_period=0.3)
    resynced: list[tuple[str, str]] = []

    def on_update(old: ConfigMap, new: ConfigMap) -> None:
        # A resync hands over the stored object as both old and new: nothing changed.
        if old.metadata.resource_version == new.metadata.resource_version:
            resynced.append((object_key(old), object_key(new)))

    informer.add_event_handler(on_update=on_update)
    async with informer:
        assert await informer.wait_for_sync(timeout=30)
        late: list[str] = []
        informer.add_event_handler(on_add=lambda obj: late.append(object_key(obj)))

        async def resynced_twice() -> bool:
            return len(resynced) >= 2

        await eventually(resynced_twice, within=60)
        await informer.drain()
    assert set(resynced) == {(f"{namespace}/steady", f"{namespace}/steady")}
    assert late == [f"{namespace}/steady"]  # registered after the sync: sees the store as adds


async def test_transform_applies_to_listed_and_watched_objects(
    crdkit_client: Client, namespace: str
) -> None:
    await crdkit_client.create(configmap(namespace, "listed"))
    informer = Informer(
        crdkit_client, ConfigMap, namespace=namespace, transform=strip_managed_fields
    )
    async with informer:
        assert await informer.wait_for_sync(timeout=30)
        await crdkit_client.create(configmap(namespace, "watched"))
        await eventually(lambda: store_matches_server(informer, crdkit_client, namespace))
    live = await crdkit_client.get(ConfigMap, "watched", namespace=namespace)
    assert live.metadata.managed_fields  # the server keeps them ...
    for obj in informer.store.list():
        assert obj.metadata.managed_fields is None  # ... the cache does not
