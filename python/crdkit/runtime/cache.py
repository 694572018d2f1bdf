"""``CacheReader``: the client's ``get``/``list`` answered from shared informers' stores.

Reconcilers read far more than they write; reading from the cache costs no request and sees
the same world the watch delivered. The first read of a kind starts its (cluster-wide) shared
informer and waits for it to sync, as controller-runtime's cache does.

Field selectors work on ``metadata.name``, ``metadata.namespace``, and on any path indexed
with :meth:`CacheReader.index_field` (the cache cannot evaluate arbitrary paths)::

    reader.index_field(Pod, "spec.nodeName", lambda pod: pod.spec.node_name)
    await reader.list(Pod, field_selector="spec.nodeName=gpu-7")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, overload

from crdkit.client.codec import ListPage
from crdkit.client.errors import NotFound
from crdkit.client.objects import labels_of, name_of, namespace_of, object_key
from crdkit.client.selectors import FieldSelector, LabelSelector
from crdkit.resources import resource_info
from crdkit.runtime.store import NAMESPACE_INDEX, index_field

if TYPE_CHECKING:
    from collections.abc import Callable

    from crdkit.client.discovery import GroupVersionKind
    from crdkit.resources import KubernetesObject
    from crdkit.runtime.factory import SharedInformerFactory
    from crdkit.runtime.informer import Informer

__all__ = ["FIELD_INDEX_PREFIX", "CacheReader"]

K = TypeVar("K", bound="KubernetesObject")
FIELD_INDEX_PREFIX = "field:"


class CacheReader:
    """Reads from a ``SharedInformerFactory``'s informers with the ``Client``'s call shapes."""

    def __init__(
        self,
        factory: SharedInformerFactory,
        *,
        namespace: str | None = None,
        sync_timeout: float = 60.0,
    ) -> None:
        """``namespace`` scopes the cache of namespaced kinds to one namespace (an operator
        with namespaced RBAC); cluster-scoped kinds are always cached cluster-wide."""
        self.factory = factory
        self.namespace = namespace
        self.sync_timeout = sync_timeout
        self._selectors: dict[type[Any] | GroupVersionKind, str] = {}

    def select(self, resource: type[Any] | GroupVersionKind, label_selector: str) -> None:
        """Read ``resource`` through the informer of ``label_selector`` from now on: a shard
        reads its ring's kinds from its own share of them, not from a second, whole cache."""
        self._selectors[resource] = label_selector

    def _informer(self, resource: type[Any] | GroupVersionKind) -> Informer[Any]:
        scope = self.namespace
        if (
            scope is not None
            and isinstance(resource, type)
            and not resource_info(resource).namespaced
        ):
            scope = None
        informer: Informer[Any] = self.factory.informer(
            resource, namespace=scope, label_selector=self._selectors.get(resource)
        )
        return informer

    def _check_namespace(self, namespace: str | None) -> None:
        if self.namespace is not None and namespace not in (None, self.namespace):
            raise ValueError(
                f"namespace: this cache holds namespace {self.namespace!r} only, got {namespace!r}"
            )

    async def _synced(self, resource: type[Any] | GroupVersionKind) -> Informer[Any]:
        informer = self._informer(resource)
        if not informer.running and not informer.has_synced:
            await informer.start()
        if not await informer.wait_for_sync(self.sync_timeout):
            raise TimeoutError(
                f"the cache of {informer.description} did not sync in {self.sync_timeout}s"
                f" (last error: {informer.last_error})"
            )
        return informer

    def index_field(
        self, resource: type[Any] | GroupVersionKind, path: str, getter: Callable[[Any], Any]
    ) -> None:
        """Index ``path`` (e.g. ``spec.nodeName``) so field selectors on it can be answered."""
        if not path:
            raise ValueError("path must not be empty")
        self._informer(resource).store.add_indexer(FIELD_INDEX_PREFIX + path, index_field(getter))

    @overload
    async def get(self, resource: type[K], name: str, *, namespace: str | None = None) -> K: ...
    @overload
    async def get(
        self, resource: GroupVersionKind, name: str, *, namespace: str | None = None
    ) -> dict[str, Any]: ...
    async def get(
        self, resource: type[Any] | GroupVersionKind, name: str, *, namespace: str | None = None
    ) -> Any:
        """The cached object; ``NotFound`` (as from the client) when the cache has none."""
        self._check_namespace(namespace)
        informer = await self._synced(resource)
        obj = informer.store.get_by_name(name, namespace)
        if obj is None:
            where = f"{namespace}/{name}" if namespace else name
            raise NotFound(f"{where} not found in the cache", code=404, reason="NotFound")
        return obj

    @overload
    async def list(
        self,
        resource: type[K],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> ListPage[K]: ...
    @overload
    async def list(
        self,
        resource: GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> ListPage[dict[str, Any]]: ...
    async def list(
        self,
        resource: type[Any] | GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> ListPage[Any]:
        """Cached objects matching the namespace and selectors, sorted by key."""
        self._check_namespace(namespace)
        labels = LabelSelector.parse(label_selector)
        fields = FieldSelector.parse(field_selector)
        informer = await self._synced(resource)
        store = informer.store
        candidates = store.by_index(NAMESPACE_INDEX, namespace) if namespace else store.list()
        for path, operator, value in fields.terms:
            candidates = _filter_field(informer, candidates, path, operator, value)
        items = [obj for obj in candidates if labels.matches(labels_of(obj))]
        items.sort(key=lambda obj: (namespace_of(obj) or "", name_of(obj) or ""))
        return ListPage(items, informer.resource_version or "", None)


def _filter_field(
    informer: Informer[Any], objects: list[Any], path: str, operator: str, value: str
) -> list[Any]:
    def keep(actual: str | None) -> bool:
        return (actual == value) if operator == "=" else (actual != value)

    if path == "metadata.name":
        return [obj for obj in objects if keep(name_of(obj))]
    if path == "metadata.namespace":
        return [obj for obj in objects if keep(namespace_of(obj) or "")]
    index = FIELD_INDEX_PREFIX + path
    if index not in informer.store.indexer_names:
        raise ValueError(
            f"field_selector: {path!r} is not indexed in the cache of {informer.description};"
            f" call index_field(..., {path!r}, ...) first"
        )
    # By key, not identity: a compact store decodes a fresh object on every read.
    matching = set(informer.store.index_keys(index, value))
    if operator == "=":
        return [obj for obj in objects if object_key(obj) in matching]
    return [obj for obj in objects if object_key(obj) not in matching]
