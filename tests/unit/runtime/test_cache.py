"""CacheReader scoping: which shared informer serves a read, and reads outside the scope."""

from __future__ import annotations

import pytest

from crdkit.client import Client, ClientConfig
from crdkit.resources import Node, Pod
from crdkit.runtime.cache import CacheReader
from crdkit.runtime.factory import SharedInformerFactory


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
