"""CacheReader scoping: which shared informer serves a read, and reads outside the scope."""

from __future__ import annotations

import pytest

from crdkit.client import Client, ClientConfig
from crdkit.resources import ConfigMap, Node, ObjectMeta, Pod
from crdkit.runtime.cache import CacheReader
from crdkit.runtime.factory import SharedInformerFactory
from crdkit.testing import FakeCluster


def factory() -> SharedInformerFactory:
    return SharedInformerFactory(Client(ClientConfig(server="https://127.0.0.1:1")))


async def test_namespaced_reader_uses_namespaced_informers() -> None:
    shared = factory()
    reader = CacheReader(shared, namespace="ml")
    reader.index_field(Pod, "spec.nodeName", lambda p: p.spec.node_name)
    reader.index_field(Node, "spec.providerID", lambda n: n.spec.provider_id)
    keys = {(key.resource, key.namespace) for key in shared.informers}
    assert keys == {(Pod, "ml"), (Node, None)}  # nodes are cluster-scoped
    with pytest.raises(ValueError, match="holds namespace 'ml' only"):
        await reader.get(Pod, "x", namespace="other")
    with pytest.raises(ValueError, match="holds namespace 'ml' only"):
        await reader.list(Pod, namespace="other")


def test_index_field_needs_a_path() -> None:
    with pytest.raises(ValueError, match="path"):
        CacheReader(factory()).index_field(Pod, "", lambda p: None)


async def test_a_selected_kind_is_read_from_its_selectors_informer_only() -> None:
    # A shard reads its ring's kinds from its own share, not from a second, whole cache.
    mine = ConfigMap(metadata=ObjectMeta(name="mine", namespace="ml", labels={"shard": "a"}))
    theirs = ConfigMap(metadata=ObjectMeta(name="theirs", namespace="ml", labels={"shard": "b"}))
    cluster = FakeCluster([mine, theirs])
    async with cluster.client() as client:
        shared = SharedInformerFactory(client)
        reader = CacheReader(shared, namespace="ml")
        reader.select(ConfigMap, "shard=a")
        assert [c.metadata.name for c in (await reader.list(ConfigMap)).items] == ["mine"]
        assert {key.label_selector for key in shared.informers} == {"shard=a"}
        await shared.stop()
