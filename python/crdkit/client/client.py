"""``Client``: typed CRUD, list and watch against the apiserver.

Typed calls take a resource class (``Pod``, a ``CustomResource`` subclass) and return instances
of it, validated from the response bytes. Untyped calls take a ``GroupVersionKind`` (or a dict
with ``apiVersion``/``kind``) and return JSON dicts; their REST names come from discovery.

    async with await Client.from_kubeconfig() as client:
        pod = await client.get(Pod, "web-0", namespace="default")
        jobs = await client.list(TrainingJob, namespace="ml", label_selector="team=a")
        await client.apply(job, field_manager="my-operator", force=True)
"""

from __future__ import annotations

import asyncio
import enum
import json
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Self, TypeVar, overload

from crdkit.client.codec import (
    Codec,
    DictCodec,
    ListPage,
    RawListPage,
    codec_for,
    split_list,
)
from crdkit.client.config import ClientConfig
from crdkit.client.discovery import Discovery, GroupVersionKind
from crdkit.client.errors import Gone
from crdkit.client.exec_plugin import DEFAULT_EXEC_TIMEOUT
from crdkit.client.objects import name_of, namespace_of
from crdkit.client.transport import JSON, ApiTransport, Transport
from crdkit.client.watch import WatchEvent, WatchParser
from crdkit.resources import (
    METADATA_ACCEPT,
    METADATA_LIST_ACCEPT,
    KubernetesObject,
    PartialObjectMetadata,
    Pod,
    ResourceInfo,
    resource_info,
)

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

    from crdkit.client.config import AdminEndpoint
    from crdkit.client.retry import RetryPolicy

__all__ = [
    "Client",
    "ContinueExpired",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "ResolvedResource",
]

T = TypeVar("T")
K = TypeVar("K", bound=KubernetesObject)

Untyped = dict[str, Any]
Resource = type[KubernetesObject] | GroupVersionKind | Mapping[str, Any] | KubernetesObject
"""What a verb addresses: a kind (a class, or a ``GroupVersionKind`` for untyped calls), or an
object (a model, or a dict with ``apiVersion`` and ``kind``) whose kind, and for ``get`` and
``delete`` whose name and namespace, are taken from it."""
DEFAULT_PAGE_SIZE = 500
_LIST_RESTARTS = 3
_SEND_TURNS = 4


class ContinueExpired(Gone):
    """A later page of a list answered 410: its continue token is too old; list again."""

    def __init__(self, gone: Gone) -> None:
        super().__init__(
            gone.message,
            code=gone.code,
            reason=gone.reason,
            details=gone.details,
            status=gone.status,
        )


class PatchType(enum.StrEnum):
    """The patch formats the apiserver accepts, by content type."""

    MERGE = "application/merge-patch+json"
    JSON = "application/json-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"
    APPLY = "application/apply-patch+yaml"


class PropagationPolicy(enum.StrEnum):
    """What happens to dependents of a deleted object (with a garbage collector running)."""

    ORPHAN = "Orphan"
    BACKGROUND = "Background"
    FOREGROUND = "Foreground"


@dataclass(frozen=True)
class Preconditions:
    """Delete only if the object still has this uid and/or resourceVersion (else Conflict)."""

    uid: str | None = None
    resource_version: str | None = None

    def to_dict(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.uid is not None:
            out["uid"] = self.uid
        if self.resource_version is not None:
            out["resourceVersion"] = self.resource_version
        return out


@dataclass(frozen=True)
class ResolvedResource(Generic[T]):
    """A kind resolved for REST: where it lives, how to decode it, what to ask for.

    Informers hold one of these so each relist and rewatch skips resolution.
    """

    info: ResourceInfo
    codec: Codec[T]
    accept: str = JSON
    list_accept: str = JSON


class Client:
    """An async Kubernetes client. Use as ``async with``: it owns an HTTP connection pool."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        transport: ApiTransport | None = None,
    ) -> None:
        """``retry`` says which failed attempts are sent again (default :class:`RetryPolicy`:
        throttling after ``Retry-After``, connection failures with backoff, at most 5
        retries); ``max_retries`` overrides just its bound.

        ``transport`` replaces the HTTP layer with anything that answers the same requests
        (:class:`~crdkit.client.transport.ApiTransport`), e.g. the in-memory apiserver of
        :class:`crdkit.testing.FakeCluster`; ``retry`` and ``max_retries`` then do not apply.
        """
        if transport is not None and (retry is not None or max_retries is not None):
            raise ValueError("retry, max_retries: they configure the HTTP transport, not transport")
        self.config = config
        self.transport: ApiTransport = (
            transport
            if transport is not None
            else Transport(config, retry=retry, max_retries=max_retries)
        )
        self.discovery = Discovery(self._get_bytes)

    # -- construction ----------------------------------------------------------------------

    @classmethod
    async def from_kubeconfig(
        cls,
        path: str | Path | Sequence[str | Path] | None = None,
        *,
        context: str | None = None,
        exec_timeout: float = DEFAULT_EXEC_TIMEOUT,
    ) -> Client:
        """A client for a kubeconfig context (see :meth:`ClientConfig.from_kubeconfig`)."""
        config = await ClientConfig.from_kubeconfig(
            path, context=context, exec_timeout=exec_timeout
        )
        return cls(config)

    @classmethod
    def from_incluster(cls) -> Client:
        return cls(ClientConfig.from_incluster())

    @classmethod
    def from_control_plane(cls, plane: AdminEndpoint) -> Client:
        return cls(ClientConfig.from_control_plane(plane))

    @classmethod
    async def load(
        cls, *, context: str | None = None, exec_timeout: float = DEFAULT_EXEC_TIMEOUT
    ) -> Client:
        """In-cluster configuration inside a pod, the default kubeconfig elsewhere."""
        return cls(await ClientConfig.load(context=context, exec_timeout=exec_timeout))

    async def __aenter__(self) -> Self:
        await self.transport.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def connection_problem(self) -> str | None:
        """Why the apiserver cannot be reached right now (``cannot reach https://...:
        connection refused``), or ``None``: the HTTP transport's, when it tracks it."""
        problem = getattr(self.transport, "connection_problem", None)
        return problem if isinstance(problem, str) else None

    async def close(self) -> None:
        await self.transport.close()

    async def _get_bytes(self, path: str) -> bytes:
        return await self.transport.request("GET", path)

    # -- resolution ------------------------------------------------------------------------

    @overload
    async def resolve(
        self, resource: type[K], *, metadata_only: Literal[False] = False
    ) -> ResolvedResource[K]: ...
    @overload
    async def resolve(
        self, resource: K, *, metadata_only: Literal[False] = False
    ) -> ResolvedResource[K]: ...
    @overload
    async def resolve(
        self,
        resource: GroupVersionKind | Mapping[str, Any],
        *,
        metadata_only: Literal[False] = False,
    ) -> ResolvedResource[Untyped]: ...
    @overload
    async def resolve(
        self, resource: Resource, *, metadata_only: Literal[True]
    ) -> ResolvedResource[PartialObjectMetadata]: ...
    @overload
    async def resolve(
        self, resource: Resource, *, metadata_only: bool = False
    ) -> ResolvedResource[Any]: ...
    async def resolve(self, resource: Resource, *, metadata_only: bool = False) -> Any:
        """How to address and decode ``resource`` (discovery for a ``GroupVersionKind``).

        ``metadata_only`` asks the apiserver for ``PartialObjectMetadata`` instead of whole
        objects: for caches that only need names, labels and owners.
        """
        if isinstance(resource, Mapping):  # an untyped object or {"apiVersion", "kind"}
            resource = GroupVersionKind.of(resource)
        elif isinstance(resource, KubernetesObject):
            resource = type(resource)
        if isinstance(resource, GroupVersionKind):
            info = await self.discovery.resolve(resource)
            codec: Codec[Any] = DictCodec()
        elif isinstance(resource, type) and issubclass(resource, KubernetesObject):
            info = resource_info(resource)
            codec = codec_for(resource)
        else:
            raise TypeError(
                "resource must be a KubernetesObject class, a GroupVersionKind, an object or a "
                f"dict with apiVersion and kind, got {resource!r}"
            )
        if metadata_only:
            return ResolvedResource(
                info, codec_for(PartialObjectMetadata), METADATA_ACCEPT, METADATA_LIST_ACCEPT
            )
        return ResolvedResource(info, codec)

    async def _resolve_object(self, obj: KubernetesObject | Untyped) -> ResolvedResource[Any]:
        if isinstance(obj, KubernetesObject):
            return await self.resolve(type(obj))
        if isinstance(obj, Mapping):
            return await self.resolve(GroupVersionKind.of(obj))
        raise TypeError(f"expected a KubernetesObject or a dict, got {type(obj).__name__}")

    @staticmethod
    def _namespace_for(info: ResourceInfo, namespace: str | None, obj: Any = None) -> str | None:
        if not info.namespaced:
            if namespace is not None:
                raise ValueError(f"namespace: {info.kind} is cluster-scoped, got {namespace!r}")
            return None
        value = namespace or (namespace_of(obj) if obj is not None else None)
        if not value:
            raise ValueError(f"namespace: {info.kind} is namespaced and no namespace was given")
        return value

    @staticmethod
    def _name_for(obj: Any) -> str:
        name = name_of(obj)
        if not name:
            raise ValueError("metadata.name: the object has no name")
        return name

    # -- read ------------------------------------------------------------------------------

    @overload
    async def get(self, resource: type[K], name: str, *, namespace: str | None = None) -> K: ...
    @overload
    async def get(
        self, resource: K, name: str | None = None, *, namespace: str | None = None
    ) -> K: ...
    @overload
    async def get(
        self,
        resource: GroupVersionKind | Mapping[str, Any],
        name: str | None = None,
        *,
        namespace: str | None = None,
    ) -> Untyped: ...
    async def get(
        self, resource: Resource, name: str | None = None, *, namespace: str | None = None
    ) -> Any:
        """One object by name; ``NotFound`` when it does not exist. Given an object (a model
        or a dict), its current version: name and namespace default to the object's."""
        name, namespace = _object_address(resource, name, namespace)
        target: ResolvedResource[Any] = await self.resolve(resource)
        return await self.get_resolved(target, name, namespace=namespace)

    async def get_resolved(
        self, target: ResolvedResource[T], name: str, *, namespace: str | None = None
    ) -> T:
        if not name:
            raise ValueError("name must not be empty")
        ns = self._namespace_for(target.info, namespace)
        body = await self.transport.request(
            "GET", target.info.path(namespace=ns, name=name), accept=target.accept
        )
        return target.codec.decode(body)

    @overload
    async def list(
        self,
        resource: type[K],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> ListPage[K]: ...
    @overload
    async def list(
        self,
        resource: GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> ListPage[Untyped]: ...
    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> ListPage[Any]:
        """Every matching object, fetched in pages of ``page_size``, as one consistent list.

        ``namespace=None`` lists a namespaced kind across all namespaces. The result's
        ``resource_version`` is where a watch should start to miss nothing.
        """
        target: ResolvedResource[Any] = await self.resolve(resource)
        return await self.list_resolved(
            target,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            page_size=page_size,
        )

    async def list_resolved(
        self,
        target: ResolvedResource[T],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> ListPage[T]:
        """``list`` for an already resolved resource.

        If a later page's continue token has expired (etcd compacted meanwhile), the list
        starts over, up to three times.
        """
        for attempt in range(_LIST_RESTARTS):
            items: list[T] = []
            try:
                async for page in self.list_pages(
                    target,
                    namespace=namespace,
                    label_selector=label_selector,
                    field_selector=field_selector,
                    page_size=page_size,
                ):
                    items.extend(page.items)
                    if page.continue_token is None:
                        return ListPage(items, page.resource_version, None)
            except ContinueExpired:
                if attempt == _LIST_RESTARTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def list_pages(
        self,
        target: ResolvedResource[T],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> AsyncIterator[ListPage[T]]:
        """The decoded pages of one consistent list; the last has no continue token.

        Consumers that store page by page never hold the whole list as objects.
        ``ContinueExpired`` (a ``Gone``) means a later page's token outlived etcd's history:
        start over.
        """
        async for raw_page in self.list_raw_pages(
            target,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            page_size=page_size,
        ):
            yield target.codec.decode_page(raw_page)

    async def list_raw_pages(
        self,
        target: ResolvedResource[Any],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> AsyncIterator[RawListPage]:
        """The pages of one consistent list, each split into its items' JSON, undecoded.

        The next page is requested as soon as this page is split (a cheap scan that builds
        no items and yields its continue token), before this page is handed out: the
        apiserver prepares page k+1 while the caller decodes page k. Informers decode the
        items themselves, so decoding and storing a page share one pause of the garbage
        collector, and a compact store keeps each item's bytes as the server sent them.
        """
        if page_size < 0:
            raise ValueError(f"page_size must be >= 0 (0: no paging), got {page_size}")
        if namespace is not None and not target.info.namespaced:
            raise ValueError(f"namespace: {target.info.kind} is cluster-scoped")
        path = target.info.path(namespace=namespace)

        async def fetch(token: str | None) -> bytes:
            params = _selector_params(label_selector, field_selector)
            if page_size:
                params.append(("limit", str(page_size)))
            if token:
                params.append(("continue", token))
            try:
                return await self.transport.request(
                    "GET", path, params=params, accept=target.list_accept
                )
            except Gone as gone:
                if token:
                    raise ContinueExpired(gone) from gone
                raise

        body = await fetch(None)
        while True:
            page = split_list(body)
            del body  # the page holds copies of the items; the response can go
            token = page.continue_token
            upcoming = asyncio.ensure_future(fetch(token)) if token else None
            try:
                if upcoming is not None:
                    for _ in range(_SEND_TURNS):  # let the next request reach the wire
                        await asyncio.sleep(0)
                yield page
            except BaseException:
                if upcoming is not None:
                    upcoming.cancel()
                    await asyncio.gather(upcoming, return_exceptions=True)
                raise
            if upcoming is None:
                return
            body = await upcoming

    # -- write -----------------------------------------------------------------------------

    @overload
    async def create(
        self, obj: K, *, namespace: str | None = None, field_manager: str | None = None
    ) -> K: ...
    @overload
    async def create(
        self, obj: Untyped, *, namespace: str | None = None, field_manager: str | None = None
    ) -> Untyped: ...
    async def create(
        self,
        obj: KubernetesObject | Untyped,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
    ) -> Any:
        """Create ``obj`` (``AlreadyExists`` if the name is taken) and return it as stored."""
        target = await self._resolve_object(obj)
        ns = self._namespace_for(target.info, namespace, obj)
        body = await self.transport.request(
            "POST",
            target.info.path(namespace=ns),
            params=_manager_params(field_manager),
            body=target.codec.encode(obj),
            content_type=JSON,
        )
        return target.codec.decode(body)

    async def bind(
        self,
        pod: str,
        node: str,
        *,
        namespace: str,
        uid: str | None = None,
        field_manager: str | None = None,
    ) -> None:
        """Bind a pending pod to ``node`` through its ``pods/<name>/binding`` subresource, as
        kube-scheduler does (``Conflict`` if it is already bound; with ``uid``, ``Conflict``
        too when the name now belongs to another pod, so a recreated pod is never bound
        blindly)."""
        binding: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        if uid is not None:
            binding["metadata"]["uid"] = uid
        pods = await self.resolve(Pod)
        await self.transport.request(
            "POST",
            pods.info.path(namespace=namespace, name=pod, subresource="binding"),
            params=_manager_params(field_manager),
            body=json.dumps(binding).encode(),
            content_type=JSON,
        )

    @overload
    async def replace(self, obj: K, *, field_manager: str | None = None) -> K: ...
    @overload
    async def replace(self, obj: Untyped, *, field_manager: str | None = None) -> Untyped: ...
    async def replace(
        self, obj: KubernetesObject | Untyped, *, field_manager: str | None = None
    ) -> Any:
        """PUT the whole object. Its resourceVersion makes this fail with ``Conflict`` if stale."""
        return await self._put(obj, None, field_manager)

    @overload
    async def replace_status(self, obj: K, *, field_manager: str | None = None) -> K: ...
    @overload
    async def replace_status(
        self, obj: Untyped, *, field_manager: str | None = None
    ) -> Untyped: ...
    async def replace_status(
        self, obj: KubernetesObject | Untyped, *, field_manager: str | None = None
    ) -> Any:
        """PUT to the ``status`` subresource: only ``status`` changes, spec edits are ignored."""
        return await self._put(obj, "status", field_manager)

    async def _put(
        self, obj: KubernetesObject | Untyped, subresource: str | None, field_manager: str | None
    ) -> Any:
        target = await self._resolve_object(obj)
        ns = self._namespace_for(target.info, None, obj)
        body = await self.transport.request(
            "PUT",
            target.info.path(namespace=ns, name=self._name_for(obj), subresource=subresource),
            params=_manager_params(field_manager),
            body=target.codec.encode(obj),
            content_type=JSON,
        )
        return target.codec.decode(body)

    @overload
    async def patch(
        self,
        resource: type[K],
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]] | KubernetesObject,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        subresource: str | None = None,
    ) -> K: ...
    @overload
    async def patch(
        self,
        resource: GroupVersionKind,
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]] | KubernetesObject,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        subresource: str | None = None,
    ) -> Untyped: ...
    async def patch(
        self,
        resource: Resource,
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]] | KubernetesObject,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        subresource: str | None = None,
    ) -> Any:
        """Patch one object: JSON merge patch (default), JSON patch (a list of operations),
        strategic merge patch (built-in kinds only) or server-side apply.

        A model as ``patch`` becomes ``to_merge_patch()`` (merge) or ``to_apply()`` (apply).
        Server-side apply needs ``field_manager``; ``force`` takes over conflicting fields.
        """
        target: ResolvedResource[Any] = await self.resolve(resource)
        return await self._patch(
            target, name, patch, namespace, patch_type, field_manager, force, subresource
        )

    async def _patch(
        self,
        target: ResolvedResource[Any],
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]] | KubernetesObject,
        namespace: str | None,
        patch_type: PatchType,
        field_manager: str | None,
        force: bool | None,
        subresource: str | None,
    ) -> Any:
        patch_type = PatchType(patch_type)
        if not name:
            raise ValueError("name must not be empty")
        if patch_type is PatchType.APPLY and not field_manager:
            raise ValueError("field_manager: server-side apply needs a field manager")
        if force is not None and patch_type is not PatchType.APPLY:
            raise ValueError("force: only server-side apply (PatchType.APPLY) takes force")
        if isinstance(patch, KubernetesObject):
            if patch_type is PatchType.JSON:
                raise TypeError("patch: a JSON patch is a list of operations, not an object")
            data: Any = (
                patch.to_apply() if patch_type is PatchType.APPLY else patch.to_merge_patch()
            )
        elif patch_type is PatchType.JSON:
            if not isinstance(patch, Sequence) or isinstance(patch, str | bytes):
                raise TypeError("patch: a JSON patch must be a list of operations")
            data = list(patch)
        else:
            if not isinstance(patch, Mapping):
                raise TypeError(f"patch: a {patch_type.name} patch must be a JSON object")
            data = dict(patch)
        ns = self._namespace_for(target.info, namespace)
        params = _manager_params(field_manager)
        if force is not None:
            params.append(("force", "true" if force else "false"))
        body = await self.transport.request(
            "PATCH",
            target.info.path(namespace=ns, name=name, subresource=subresource),
            params=params,
            body=json.dumps(data, separators=(",", ":")).encode(),
            content_type=patch_type.value,
        )
        return target.codec.decode(body)

    @overload
    async def apply(
        self,
        obj: K,
        *,
        field_manager: str,
        force: bool = False,
        subresource: str | None = None,
    ) -> K: ...
    @overload
    async def apply(
        self,
        obj: Untyped,
        *,
        field_manager: str,
        force: bool = False,
        subresource: str | None = None,
    ) -> Untyped: ...
    async def apply(
        self,
        obj: KubernetesObject | Untyped,
        *,
        field_manager: str,
        force: bool = False,
        subresource: str | None = None,
    ) -> Any:
        """Server-side apply: create or update the fields this manager owns.

        For a model only the fields set on it are sent (``to_apply``), so defaults it never
        set do not take ownership of fields other managers own.
        """
        target = await self._resolve_object(obj)
        ns = self._namespace_for(target.info, None, obj)
        patch: Any = obj.to_apply() if isinstance(obj, KubernetesObject) else obj
        return await self._patch(
            target,
            self._name_for(obj),
            patch,
            ns,
            PatchType.APPLY,
            field_manager,
            force,
            subresource,
        )

    @overload
    async def delete(
        self,
        resource: type[K],
        name: str,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy | str | None = None,
        grace_period_seconds: int | None = None,
    ) -> K | None: ...
    @overload
    async def delete(
        self,
        resource: K,
        name: str | None = None,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy | str | None = None,
        grace_period_seconds: int | None = None,
    ) -> K | None: ...
    @overload
    async def delete(
        self,
        resource: GroupVersionKind | Mapping[str, Any],
        name: str | None = None,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy | str | None = None,
        grace_period_seconds: int | None = None,
    ) -> Untyped | None: ...
    async def delete(
        self,
        resource: Resource,
        name: str | None = None,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy | str | None = None,
        grace_period_seconds: int | None = None,
    ) -> Any:
        """Delete one object and return it as the server last had it.

        The returned object still exists if finalizers or a grace period hold it (its
        ``deletionTimestamp`` is set). ``None`` when the server answered with a bare Status.

        ``preconditions`` make the delete fail with ``Conflict`` if the object was replaced
        or changed; ``NotFound`` if it does not exist. Given an object (a model or a dict),
        name and namespace default to the object's (controller-runtime's ``Delete(obj)``).
        """
        name, namespace = _object_address(resource, name, namespace)
        target: ResolvedResource[Any] = await self.resolve(resource)
        ns = self._namespace_for(target.info, namespace)
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if preconditions is not None:
            options["preconditions"] = preconditions.to_dict()
        if propagation_policy is not None:
            options["propagationPolicy"] = PropagationPolicy(propagation_policy).value
        if grace_period_seconds is not None:
            if grace_period_seconds < 0:
                raise ValueError("grace_period_seconds must be >= 0")
            options["gracePeriodSeconds"] = grace_period_seconds
        body = await self.transport.request(
            "DELETE",
            target.info.path(namespace=ns, name=name),
            body=json.dumps(options).encode(),
            content_type=JSON,
        )
        if _is_status(body):
            return None
        return target.codec.decode(body)

    # -- watch -----------------------------------------------------------------------------

    @overload
    def watch(
        self,
        resource: type[K],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncIterator[WatchEvent[K]]: ...
    @overload
    def watch(
        self,
        resource: GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncIterator[WatchEvent[Untyped]]: ...
    async def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncIterator[WatchEvent[Any]]:
        """Changes from ``resource_version`` on, bookmarks included, until the server ends it.

        ``timeout_seconds`` (default: random 5-10 min) is when the server closes the watch;
        ``idle_timeout`` (default ``Timeouts.watch_idle``, 90 s) is how long silence is
        tolerated before ``RequestTimeout``: bookmarks are asked for, and the apiserver sends
        one about every minute, so a healthy watch is never silent that long. An ERROR event
        raises (``Gone`` when ``resource_version`` is too old: relist).
        """
        target: ResolvedResource[Any] = await self.resolve(resource)
        async for event in self.watch_resolved(
            target,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
            timeout_seconds=timeout_seconds,
            idle_timeout=idle_timeout,
        ):
            yield event

    async def watch_resolved(
        self,
        target: ResolvedResource[T],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        idle_timeout: float | None = None,
        lenient: bool = False,
        send_initial_events: bool = False,
    ) -> AsyncIterator[WatchEvent[T]]:
        """``watch`` for an already resolved resource.

        ``lenient``: an object the resource's type refuses comes as an event with ``invalid``
        set instead of failing the watch (see :class:`~crdkit.client.watch.WatchParser`).
        ``send_initial_events``: the apiserver first streams every object as an ADDED event
        (not older than ``resource_version``; without one, as a fresh list would see them),
        then a BOOKMARK with ``initial_events_end`` set, then the changes: client-go's
        WatchList. An apiserver that does not allow it answers with an error (``Invalid``
        or ``BadRequest``).
        """
        if namespace is not None and not target.info.namespaced:
            raise ValueError(f"namespace: {target.info.kind} is cluster-scoped")
        server_timeout = timeout_seconds or random.randint(300, 600)
        params = _selector_params(label_selector, field_selector)
        params += [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(server_timeout)),
        ]
        if send_initial_events:
            params += [("sendInitialEvents", "true"), ("resourceVersionMatch", "NotOlderThan")]
        if resource_version:
            params.append(("resourceVersion", resource_version))
        parser = WatchParser(target.codec, resource_version, lenient=lenient)
        idle = idle_timeout or self.config.timeouts.watch_idle
        async with self.transport.stream(
            "GET",
            target.info.path(namespace=namespace),
            params=params,
            accept=target.accept,
            idle_timeout=idle,
        ) as stream:
            async for event in parser.events(stream, idle_timeout=idle):
                yield event


def _selector_params(
    label_selector: str | None, field_selector: str | None
) -> list[tuple[str, str]]:
    params: list[tuple[str, str]] = []
    if label_selector:
        params.append(("labelSelector", label_selector))
    if field_selector:
        params.append(("fieldSelector", field_selector))
    return params


def _manager_params(field_manager: str | None) -> list[tuple[str, str]]:
    return [("fieldManager", field_manager)] if field_manager else []


def _is_status(body: bytes) -> bool:
    # Some kinds answer a delete with a Status instead of the object.
    try:
        value = json.loads(body)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("kind") == "Status"


def _object_address(
    resource: Resource, name: str | None, namespace: str | None
) -> tuple[str, str | None]:
    """The name and namespace a ``get`` or ``delete`` addresses: as given, else the object's
    own when ``resource`` is an object; a clear error when there is no name."""
    is_object = isinstance(resource, Mapping | KubernetesObject)
    if name is None and is_object:
        name = name_of(resource)
        if not name:
            raise ValueError("metadata.name: the object has no name, and no name was given")
    if not name:
        raise ValueError("name must not be empty")
    if namespace is None and is_object:
        namespace = namespace_of(resource)
    return name, namespace
