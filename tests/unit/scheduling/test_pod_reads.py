"""`PodReads`: a compact store's pods decoded once per resourceVersion, decoded again when they
change, dropped when forgotten; a plain store's objects are handed out as they are."""

from __future__ import annotations

import factories
from crdkit.client.codec import codec_for
from crdkit.resources import Pod
from crdkit.runtime.store import Store
from crdkit.scheduling.pod_reads import PodReads


def pod(name: str, version: str, group: str = "g") -> Pod:
    return factories.pod(name, namespace="ns", resource_version=version, labels={"group": group})


def by_group(obj: Pod) -> list[str]:
    return [obj.metadata.labels["group"]]


def test_an_unchanged_pod_is_decoded_once_and_a_changed_one_again() -> None:
    store: Store[Pod] = Store({"group": by_group}, codec=codec_for(Pod))
    store.upsert(pod("a", "1"))
    store.upsert(pod("b", "1"))
    reads = PodReads(store)
    first = reads.get("ns/a")
    assert first is not None
    assert reads.get("ns/a") is first  # the same decoded object
    assert store.get("ns/a") is not first  # the store itself decodes anew
    assert [p.metadata.name for p in reads.by_index("group", "g")] == ["a", "b"]
    assert reads.by_index("group", "g")[0] is first
    store.upsert(pod("a", "2"))
    again = reads.get("ns/a")
    assert again is not first
    assert again is not None
    assert again.metadata.resource_version == "2"
    store.delete("ns/b")
    assert reads.get("ns/b") is None
    assert len(reads) == 1
    reads.forget("ns/a")
    assert len(reads) == 0


def test_a_plain_store_is_read_as_it_is() -> None:
    store: Store[Pod] = Store()
    stored = pod("a", "1")
    store.upsert(stored)
    reads = PodReads(store)
    assert reads.get("ns/a") is stored
    assert len(reads) == 0
