"""The store and its indexes against a plain model: a dict of key → object.

Random sequences of upserts, deletes, replaces and late-added indexers; after every step each
read (get, list, keys, by_index, index_keys, index_values) must agree with what the plain dict
says. Run for a plain store and for a compact one (objects kept as JSON bytes).
"""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from crdkit.client.codec import DictCodec
from crdkit.client.objects import object_key
from crdkit.runtime.store import (
    LABEL_INDEX,
    NAMESPACE_INDEX,
    OWNER_INDEX,
    IndexFunc,
    Store,
    index_field,
    index_labels,
    index_namespace,
    index_owner_uid,
)

NAMES = st.sampled_from(["a", "b", "c", "d", "e"])
NAMESPACES = st.sampled_from([None, "ns1", "ns2"])
LABELS = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["x", "y"]), max_size=2)
OWNERS = st.lists(st.sampled_from(["u1", "u2", "u3"]), max_size=2)
NODES = st.sampled_from([None, "", "n1", "n2"])


@st.composite
def objects(draw: st.DrawFn) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": draw(NAMES),
        "resourceVersion": str(draw(st.integers(1, 5))),
        "labels": draw(LABELS),
        "ownerReferences": [{"uid": uid} for uid in draw(OWNERS)],
    }
    namespace = draw(NAMESPACES)
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata, "spec": {"nodeName": draw(NODES)}}


def node_of(obj: dict[str, Any]) -> Any:
    return obj["spec"].get("nodeName")


INDEXERS: dict[str, IndexFunc[Any]] = {
    NAMESPACE_INDEX: index_namespace,
    OWNER_INDEX: index_owner_uid,
    LABEL_INDEX: index_labels,
}
LATE_INDEX = "node"
LATE_FUNC = index_field(node_of)


class StoreMachine(RuleBasedStateMachine):
    compact = False

    def __init__(self) -> None:
        super().__init__()
        self.store: Store[dict[str, Any]] = Store(
            dict(INDEXERS), codec=DictCodec() if self.compact else None
        )
        self.model: dict[str, dict[str, Any]] = {}
        self.indexers: dict[str, IndexFunc[Any]] = dict(INDEXERS)

    @rule(obj=objects())
    def upsert(self, obj: dict[str, Any]) -> None:
        key = object_key(obj)
        old = self.store.upsert(obj)
        assert old == self.model.get(key)
        self.model[key] = obj

    @rule(obj=objects())
    def upsert_quietly(self, obj: dict[str, Any]) -> None:
        key = object_key(obj)
        assert self.store.upsert(obj, return_old=False) is None
        self.model[key] = obj

    @rule(name=NAMES, namespace=NAMESPACES)
    def delete(self, name: str, namespace: str | None) -> None:
        key = f"{namespace}/{name}" if namespace else name
        assert self.store.delete(key) == self.model.pop(key, None)

    @rule(batch=st.lists(objects(), max_size=6))
    def replace(self, batch: list[dict[str, Any]]) -> None:
        fresh = {object_key(obj): obj for obj in batch}
        changes = self.store.replace(batch)
        expected_deleted = [self.model[k] for k in self.model if k not in fresh]
        assert sorted(map(object_key, changes.deleted)) == sorted(map(object_key, expected_deleted))
        assert sorted(map(object_key, changes.added)) == sorted(
            k for k in fresh if k not in self.model
        )
        changed = [
            k
            for k, obj in fresh.items()
            if k in self.model
            and obj["metadata"]["resourceVersion"] != self.model[k]["metadata"]["resourceVersion"]
        ]
        assert sorted(object_key(new) for _, new in changes.updated) == sorted(changed)
        for old, new in changes.updated:
            assert old == self.model[object_key(new)]
        # Unchanged objects (same version) keep what was stored before.
        self.model = {
            k: (obj if k not in self.model or k in changed else self.model[k])
            for k, obj in fresh.items()
        }

    @precondition(lambda self: LATE_INDEX not in self.indexers)
    @rule()
    def add_late_indexer(self) -> None:
        self.store.add_indexer(LATE_INDEX, LATE_FUNC)
        self.store.add_indexer(LATE_INDEX, LATE_FUNC)  # same function again: a no-op
        self.indexers[LATE_INDEX] = LATE_FUNC

    @invariant()
    def reads_match_the_model(self) -> None:
        assert len(self.store) == len(self.model)
        assert sorted(self.store.keys()) == sorted(self.model)
        for key, obj in self.model.items():
            assert key in self.store
            assert self.store.get(key) == obj
            assert self.store.version_of(key) == obj["metadata"]["resourceVersion"]
        assert sorted(map(object_key, self.store.list())) == sorted(self.model)

    @invariant()
    def indexes_match_the_model(self) -> None:
        for name, func in self.indexers.items():
            expected: dict[str, set[str]] = {}
            for key, obj in self.model.items():
                for value in func(obj):
                    expected.setdefault(value, set()).add(key)
            assert self.store.index_values(name) == sorted(expected)
            for value, keys in expected.items():
                assert self.store.index_keys(name, value) == sorted(keys)
                assert [object_key(o) for o in self.store.by_index(name, value)] == sorted(keys)
            assert self.store.by_index(name, "no-such-value") == []


class CompactStoreMachine(StoreMachine):
    compact = True


TestStore = StoreMachine.TestCase
TestStore.settings = settings(stateful_step_count=30)
TestCompactStore = CompactStoreMachine.TestCase
TestCompactStore.settings = settings(stateful_step_count=30)
