"""Store behaviour the stateful property test does not spell out."""

from __future__ import annotations

import pytest

import factories
from crdkit.client.codec import codec_for
from crdkit.resources import Pod
from crdkit.runtime.store import Store, index_field


def pod(name: str, node: str | None, version: str = "1") -> Pod:
    return factories.pod(name, namespace="ns", node=node, resource_version=version)


def test_compact_store_returns_fresh_equal_objects() -> None:
    store: Store[Pod] = Store(codec=codec_for(Pod))
    original = pod("a", "n1")
    store.upsert(original)
    first = store.get("ns/a")
    assert first == original
    assert first is not original
    assert first is not None
    first.spec.node_name = "mutated"  # a reconciler scribbling on what it read
    again = store.get("ns/a")
    assert again is not None
    assert again.spec.node_name == "n1"  # the cache is unharmed


def test_compact_store_keeps_raw_bytes_as_given() -> None:
    store: Store[Pod] = Store(codec=codec_for(Pod))
    raw = pod("a", "n1").model_dump_json(by_alias=True).encode()
    store.upsert(pod("a", "n1"), raw)
    assert store._items["ns/a"] is raw


def test_field_index_of_pods_by_node() -> None:
    store: Store[Pod] = Store({"node": index_field(lambda p: p.spec.node_name)})
    store.upsert(pod("a", "n1"))
    store.upsert(pod("b", "n1"))
    store.upsert(pod("c", None))
    assert [p.metadata.name for p in store.by_index("node", "n1")] == ["a", "b"]
    store.upsert(pod("a", "n2", "2"))  # rescheduled: refiled
    assert store.index_keys("node", "n1") == ["ns/b"]
    assert store.index_values("node") == ["n1", "n2"]


def test_indexer_name_rules() -> None:
    store: Store[Pod] = Store()
    with pytest.raises(ValueError, match="empty"):
        store.add_indexer("", lambda p: [])
    store.add_indexer("x", lambda p: [])
    with pytest.raises(ValueError, match="already exists"):
        store.add_indexer("x", lambda p: [])
    with pytest.raises(KeyError, match="no indexer named 'y'"):
        store.by_index("y", "v")


def test_objects_need_a_name() -> None:
    with pytest.raises(ValueError, match=r"metadata\.name"):
        Store[dict[str, object]]().upsert({"metadata": {}})


@pytest.mark.parametrize("compact", [True, False])
def test_private_copy_may_be_changed_without_touching_the_cache(compact: bool) -> None:
    store: Store[Pod] = Store(codec=codec_for(Pod) if compact else None)
    store.upsert(pod("a", "n1"))
    mine = store.private_copy_by_name("a", "ns")
    assert mine == pod("a", "n1")
    assert mine is not None
    mine.spec.node_name = "mutated"
    mine.spec.containers.append(mine.spec.containers[0])
    kept = store.get("ns/a")
    assert kept is not None
    assert kept.spec.node_name == "n1"
    assert len(kept.spec.containers) == 1
    assert store.private_copy("ns/missing") is None
