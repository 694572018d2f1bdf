"""``Store``: an in-memory cache of objects keyed by ``namespace/name``, with indexes.

An informer writes it; reconcilers read it instead of the apiserver. Indexes answer "which
objects have X" without a scan — the pods on a node, the objects a Job owns, everything with a
label — which is what controllers ask on every reconcile::

    store = Store(indexers={
        NAMESPACE_INDEX: index_namespace,
        OWNER_INDEX: index_owner_uid,
        "node": index_field(lambda pod: pod.spec.node_name),
    })
    store.by_index("node", "gpu-node-7")

An index function returns every value an object is filed under (none, one or many). The store
remembers the values each key was filed under, so an update or delete unfiles exactly those,
even when the function's answer for the old object would differ now.

With a ``codec`` the store is *compact*: it keeps each object as its JSON bytes (as the
server sent them when available) and decodes a fresh object on every read. An informer's
store is compact by default, because a Python object tree costs about ten times the JSON it
came from (measured: ~15 KB of pydantic models, or ~11 KB of kubernetes-asyncio models, for
a 1.6 KB custom resource), and large clusters make that the operator's whole memory budget.
A read costs one validation (tens of microseconds per object), which buys what
controller-runtime pays a deep copy for: a reconciler may mutate what it read without
corrupting the cache. Without a codec, objects are kept and returned as they are.

The store is not thread-safe: it lives on the event loop that runs its informer.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from crdkit.client.objects import (
    labels_of,
    namespace_of,
    object_key,
    owner_uids_of,
    resource_version_of,
)

if TYPE_CHECKING:
    from crdkit.client.codec import Codec

__all__ = [
    "LABEL_INDEX",
    "NAMESPACE_INDEX",
    "OWNER_INDEX",
    "IndexFunc",
    "Store",
    "StoreChanges",
    "index_field",
    "index_labels",
    "index_namespace",
    "index_owner_uid",
]

T = TypeVar("T")

IndexFunc = Callable[[T], Iterable[str]]
"""Every value an object is filed under in one index (an empty iterable: not indexed)."""

NAMESPACE_INDEX = "namespace"
OWNER_INDEX = "owner-uid"
LABEL_INDEX = "labels"


def index_namespace(obj: Any) -> list[str]:
    """The object's namespace (cluster-scoped objects are not indexed)."""
    namespace = namespace_of(obj)
    return [namespace] if namespace else []


def index_owner_uid(obj: Any) -> list[str]:
    """The uid of every owner in ``metadata.ownerReferences``."""
    return owner_uids_of(obj)


def index_labels(obj: Any) -> list[str]:
    """``key=value`` for every label, so ``by_index(LABEL_INDEX, "app=web")`` finds them."""
    return [f"{key}={value}" for key, value in labels_of(obj).items()]


def index_field(getter: Callable[[T], Any]) -> IndexFunc[T]:
    """An index on any value, e.g. ``index_field(lambda pod: pod.spec.node_name)``.

    ``None`` or ``""`` means "not indexed"; a list or set files the object under each element.
    """

    def index(obj: T) -> list[str]:
        value = getter(obj)
        if value is None or value == "":
            return []
        if isinstance(value, str):
            return [value]
        if isinstance(value, Iterable):
            return [str(v) for v in value if v is not None and v != ""]
        return [str(value)]

    return index


@dataclass
class StoreChanges(Generic[T]):
    """What ``Store.replace`` changed: the events an informer emits after a relist."""

    added: list[T] = field(default_factory=list)
    updated: list[tuple[T, T]] = field(default_factory=list)
    deleted: list[T] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.deleted)


class Store(Generic[T]):
    """Objects by key, plus named indexes from value to keys."""

    def __init__(
        self,
        indexers: Mapping[str, IndexFunc[T]] | None = None,
        *,
        codec: Codec[T] | None = None,
    ) -> None:
        self.codec = codec
        # key -> object, or its JSON bytes when compact
        self._items: dict[str, Any] = {}
        self._versions: dict[str, str | None] = {}
        self._indexers: dict[str, IndexFunc[T]] = {}
        # index name -> value -> keys, and index name -> key -> values it is filed under
        self._indices: dict[str, dict[str, set[str]]] = {}
        self._filed: dict[str, dict[str, tuple[str, ...]]] = {}
        for name, func in (indexers or {}).items():
            self.add_indexer(name, func)

    # -- indexes ---------------------------------------------------------------------------

    def add_indexer(self, name: str, func: IndexFunc[T]) -> None:
        """Add an index; objects already stored are indexed at once.

        Adding the same function under the same name again is a no-op (consumers of a shared
        informer may each ask for the index they need); another function under a taken name
        is an error.
        """
        if not name:
            raise ValueError("indexer name must not be empty")
        if name in self._indexers:
            if self._indexers[name] is func:
                return
            raise ValueError(f"indexer {name!r} already exists with another function")
        self._indexers[name] = func
        self._indices[name] = {}
        self._filed[name] = {}
        for key, value in self._items.items():
            self._file(name, key, self._load(value))

    @property
    def compact(self) -> bool:
        """Whether objects are kept as JSON bytes (decoded on each read)."""
        return self.codec is not None

    def _load(self, value: Any) -> T:
        if self.codec is None:
            loaded: T = value
            return loaded
        return self.codec.decode(value)

    def _pack(self, obj: T, raw: bytes | None) -> Any:
        if self.codec is None:
            return obj
        return raw if raw is not None else self.codec.encode(obj)

    @property
    def indexer_names(self) -> builtins.list[str]:
        return list(self._indexers)

    def by_index(self, name: str, value: str) -> builtins.list[T]:
        """The objects filed under ``value`` in index ``name``, by key."""
        return [self._load(self._items[key]) for key in self.index_keys(name, value)]

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        """The keys filed under ``value`` in index ``name``, sorted."""
        return sorted(self._index(name).get(value, ()))

    def index_values(self, name: str) -> builtins.list[str]:
        """Every value that at least one object is filed under, sorted."""
        return sorted(self._index(name))

    def _index(self, name: str) -> dict[str, set[str]]:
        try:
            return self._indices[name]
        except KeyError:
            raise KeyError(
                f"no indexer named {name!r} (have: {', '.join(self._indexers) or 'none'})"
            ) from None

    def _file(self, name: str, key: str, obj: T) -> None:
        values = tuple(dict.fromkeys(self._indexers[name](obj)))
        if values:
            self._filed[name][key] = values
            index = self._indices[name]
            for value in values:
                index.setdefault(value, set()).add(key)

    def _unfile(self, name: str, key: str) -> None:
        values = self._filed[name].pop(key, ())
        index = self._indices[name]
        for value in values:
            keys = index.get(value)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del index[value]

    # -- writes ----------------------------------------------------------------------------

    def upsert(self, obj: T, raw: bytes | None = None, *, return_old: bool = True) -> T | None:
        """Add or replace the object under its key; return what was there before.

        ``raw`` is the object's JSON if the caller has it (a compact store then keeps it as
        is). ``return_old=False`` skips decoding the previous object in a compact store and
        returns ``None``: for callers that only need to know whether the key existed.
        """
        key = object_key(obj)
        old = self._items.get(key)
        self._items[key] = self._pack(obj, raw)
        self._versions[key] = resource_version_of(obj)
        for name in self._indexers:
            if old is not None:
                self._unfile(name, key)
            self._file(name, key, obj)
        if old is None or not return_old:
            return None
        return self._load(old)

    def delete(self, key: str, *, return_old: bool = True) -> T | None:
        """Remove the object with this key; return it (``None`` if there was none)."""
        old = self._items.pop(key, None)
        if old is None:
            return None
        self._versions.pop(key, None)
        for name in self._indexers:
            self._unfile(name, key)
        return self._load(old) if return_old else None

    def replace(self, objects: Iterable[T]) -> StoreChanges[T]:
        """Make the store hold exactly ``objects`` and say what that changed.

        An object counts as updated when its resourceVersion differs (or either has none).
        Only changed objects are decoded for the result; unchanged ones cost nothing.
        """
        fresh: dict[str, T] = {object_key(obj): obj for obj in objects}
        changes: StoreChanges[T] = StoreChanges()
        for key in [k for k in self._items if k not in fresh]:
            gone = self.delete(key)
            if gone is not None:
                changes.deleted.append(gone)
        for key, obj in fresh.items():
            if key not in self._items:
                self.upsert(obj)
                changes.added.append(obj)
                continue
            version = resource_version_of(obj)
            if version is None or version != self._versions.get(key):
                old = self.upsert(obj)
                assert old is not None
                changes.updated.append((old, obj))
        return changes

    def version_of(self, key: str) -> str | None:
        """The stored resourceVersion of ``key`` (``None`` if absent or unversioned)."""
        return self._versions.get(key)

    def clear(self) -> None:
        self._items.clear()
        self._versions.clear()
        for name in self._indexers:
            self._indices[name].clear()
            self._filed[name].clear()

    # -- reads -----------------------------------------------------------------------------

    def get(self, key: str) -> T | None:
        value = self._items.get(key)
        return None if value is None else self._load(value)

    def get_by_name(self, name: str, namespace: str | None = None) -> T | None:
        return self.get(f"{namespace}/{name}" if namespace else name)

    def private_copy(self, key: str) -> T | None:
        """The object under ``key`` as one the caller may change freely without touching the
        cache. A compact store decodes a new object on every read already, so this costs
        nothing extra there; a plain store makes a deep copy."""
        value = self._items.get(key)
        if value is None:
            return None
        if self.codec is not None:
            return self._load(value)
        copied: T = value.model_copy(deep=True)
        return copied

    def private_copy_by_name(self, name: str, namespace: str | None = None) -> T | None:
        return self.private_copy(f"{namespace}/{name}" if namespace else name)

    def list(self) -> builtins.list[T]:
        return [self._load(value) for value in self._items.values()]

    def keys(self) -> builtins.list[str]:
        return builtins.list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[T]:
        """Every object, as of the call; a compact store decodes each only when it is reached,
        so a loop over a large store never holds all of them decoded at once."""
        for value in builtins.list(self._items.values()):
            yield self._load(value)
