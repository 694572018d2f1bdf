"""The informer's streamed list (``watch_list``) against a real apiserver (WatchList, which
the local control plane's kube-apiserver 1.37.2 serves): it syncs from one watch and follows on
it, and after a compaction while disconnected it streams the list again, announcing only what
changed."""

from __future__ import annotations

import pytest
from _runtime_support import Recorder, configmap, eventually, store_matches_server

from crdkit.client import Client, Gone
from crdkit.resources import ConfigMap
from crdkit.runtime.informer import Backoff, Informer
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def streamed_informer(
    client: Client, namespace: str, *existing: str
) -> tuple[Informer[ConfigMap], Recorder]:
    for name in existing:
        await client.create(configmap(namespace, name))
    informer = Informer(
        client, ConfigMap, namespace=namespace, backoff=Backoff(0.1, 2.0), watch_list=True
    )
    seen = Recorder()
    informer.add_event_handler(seen.on_add, seen.on_update, seen.on_delete)
    return informer, seen


async def test_a_streamed_list_syncs_and_follows_on_one_watch(
    crdkit_client: Client, namespace: str
) -> None:
    informer, seen = await streamed_informer(crdkit_client, namespace, "a", "b")
    async with informer:
        assert await informer.wait_for_sync(timeout=30)
        assert (informer.list_count, informer.stream_count, informer.watch_count) == (1, 1, 1)
        await crdkit_client.create(configmap(namespace, "c"))
        await crdkit_client.patch(ConfigMap, "a", {"data": {"v": "2"}}, namespace=namespace)
        await crdkit_client.delete(ConfigMap, "b", namespace=namespace)
        await eventually(lambda: store_matches_server(informer, crdkit_client, namespace))
        await informer.drain()
        assert informer.watch_count == 1  # the changes came on the stream that listed
    assert seen.added == [f"{namespace}/a", f"{namespace}/b", f"{namespace}/c"]
    assert seen.updated == [f"{namespace}/a"]
    assert seen.deleted == [f"{namespace}/b"]


async def test_after_compaction_the_list_is_streamed_again(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    informer, seen = await streamed_informer(crdkit_client, namespace, "keep", "change", "drop")
    await informer.start()
    assert await informer.wait_for_sync(timeout=30)
    await informer.stop()
    await crdkit_client.create(configmap(namespace, "new"))
    await crdkit_client.patch(ConfigMap, "change", {"data": {"v": "2"}}, namespace=namespace)
    await crdkit_client.delete(ConfigMap, "drop", namespace=namespace)
    await control_plane.compact_etcd()
    async with informer:
        await eventually(lambda: store_matches_server(informer, crdkit_client, namespace))
        await informer.drain()
    assert informer.stream_count == 2  # 410, then one more streamed list
    assert isinstance(informer.last_error, Gone)
    assert f"{namespace}/new" in seen.added
    assert f"{namespace}/change" in seen.updated
    assert f"{namespace}/keep" not in seen.updated  # unchanged objects are not re-announced
    assert seen.deleted == [f"{namespace}/drop"]
