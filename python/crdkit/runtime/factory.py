"""``SharedInformerFactory``: one informer per (kind, namespace, selectors), however many ask.

Ten controllers that all watch Pods must not open ten watches and keep ten copies of every
Pod: each asks the factory, and the factory hands out the same ``Informer``. Handlers and
indexes are added to the shared informer; each handler registration gets its own queue, so
consumers still cannot slow each other down.

    factory = SharedInformerFactory(client)
    pods = factory.informer(Pod)
    owners = factory.metadata_informer(Secret, namespace="ml")
    await factory.start()
    await factory.wait_for_sync()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from crdkit._lifecycle import StartStop
from crdkit.runtime.informer import DEFAULT_RESYNC, Backoff, Informer
from crdkit.runtime.store import NAMESPACE_INDEX, index_namespace

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from crdkit.client.client import Client
    from crdkit.client.discovery import GroupVersionKind
    from crdkit.resources import KubernetesObject, PartialObjectMetadata
    from crdkit.runtime.events import EventRecorder

__all__ = ["InformerKey", "SharedInformerFactory"]

K = TypeVar("K", bound="KubernetesObject")


@dataclass(frozen=True)
class InformerKey:
    """What makes two informers the same: they would list and watch the same objects."""

    resource: type[Any] | GroupVersionKind
    namespace: str | None
    label_selector: str | None
    field_selector: str | None
    metadata_only: bool


class SharedInformerFactory(StartStop):
    """Creates informers on demand, shares them by ``InformerKey``, starts and stops them.

    Every informer it creates records Warning Events about objects its type refuses with
    ``event_recorder`` (none: it only logs them) and counts them in ``registry``.
    """

    def __init__(
        self,
        client: Client,
        *,
        resync_period: float | None = DEFAULT_RESYNC,
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        event_recorder: EventRecorder | None = None,
        registry: CollectorRegistry | None = None,
        watch_list: bool = False,
    ) -> None:
        self.client = client
        self.resync_period = resync_period
        self.watch_list = watch_list
        self.event_recorder = event_recorder
        self.registry = registry
        self._backoff = (backoff_initial, backoff_max)
        self._informers: dict[InformerKey, Informer[Any]] = {}
        self._started = False

    @overload
    def informer(
        self,
        resource: type[K],
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Informer[K]: ...
    @overload
    def informer(
        self,
        resource: GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Informer[dict[str, Any]]: ...
    def informer(
        self,
        resource: type[KubernetesObject] | GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Informer[Any]:
        """The shared informer of whole objects of ``resource``; created on first request.

        Once the factory is started, call ``await factory.start()`` again to start informers
        requested since (it starts only those).
        """
        key = InformerKey(
            resource, namespace, label_selector or None, field_selector or None, False
        )
        return self._get_or_create(key)

    def metadata_informer(
        self,
        resource: type[KubernetesObject] | GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> Informer[PartialObjectMetadata]:
        """The shared informer of ``PartialObjectMetadata`` of ``resource`` (metadata only)."""
        key = InformerKey(resource, namespace, label_selector or None, field_selector or None, True)
        informer: Informer[PartialObjectMetadata] = self._get_or_create(key)
        return informer

    def _get_or_create(self, key: InformerKey) -> Informer[Any]:
        informer = self._informers.get(key)
        if informer is None:
            options: dict[str, Any] = {
                "namespace": key.namespace,
                "label_selector": key.label_selector,
                "field_selector": key.field_selector,
                "indexers": {NAMESPACE_INDEX: index_namespace},
                "resync_period": self.resync_period,
                "backoff": Backoff(*self._backoff),
                "event_recorder": self.event_recorder,
                "registry": self.registry,
                "watch_list": self.watch_list,
            }
            if key.metadata_only:
                informer = Informer.for_metadata(self.client, key.resource, **options)
            else:
                informer = Informer(self.client, key.resource, **options)
            self._informers[key] = informer
        return informer

    @property
    def informers(self) -> dict[InformerKey, Informer[Any]]:
        return dict(self._informers)

    async def start(self) -> None:
        """Start every informer not yet running."""
        self._started = True
        for informer in self._informers.values():
            if not informer.running:
                await informer.start()

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until every started informer has listed once; ``False`` on timeout."""
        import asyncio

        try:
            async with asyncio.timeout(timeout):
                for informer in list(self._informers.values()):
                    if informer.running or informer.has_synced:
                        await informer.wait_for_sync()
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        self._started = False
        for informer in self._informers.values():
            await informer.stop()

    @property
    def started(self) -> bool:
        return self._started
