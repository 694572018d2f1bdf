"""``FakeCluster``: an in-memory apiserver for unit tests, used through the real ``Client``.

::

    cluster = FakeCluster([Hello(metadata=ObjectMeta(name="w", namespace="ns"), spec=...)],
                          kinds=[Hello])
    async with cluster.client() as client:
        hello = await client.get(Hello, "w", namespace="ns")

The client is a real :class:`~crdkit.client.Client` whose transport is answered in memory
(:mod:`crdkit.testing.fake.transport`), so everything above HTTP is the code that runs against
a cluster, and what the fake answers follows kube-apiserver (:mod:`crdkit.testing.fake.server`):
one resourceVersion counter, ``Conflict`` on a stale write, ``generation`` bumped by spec
changes only, the status subresource, finalizers holding a deleted object with its
``deletionTimestamp`` set, delete preconditions, label and field selectors, watches from any
version (so informers, caches and a whole ``Manager`` run on it), and garbage collection of
dependents through owner references.

What it does not do: defaulting beyond a few fields (:mod:`crdkit.testing.fake.defaults`),
admission and validation (no webhooks, no OpenAPI or CEL checks, namespaces need not exist),
``managedFields`` (server-side apply tracks only what each applier applied: no conflicts, see
:mod:`crdkit.testing.fake.patch`), strategic merge by list keys (a strategic patch is a merge
patch), a consistent snapshot across list pages, bookmarks, watch timeouts, and conversion
between versions of one kind.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crdkit.client import Client, ClientConfig
from crdkit.resources import CustomResource, KubernetesObject
from crdkit.testing.fake.kinds import FakeKind, KindRegistry
from crdkit.testing.fake.server import FakeApiServer
from crdkit.testing.fake.transport import FakeTransport

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["FakeCluster"]

FAKE_SERVER = "https://fake-cluster.invalid"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class FakeCluster:
    """An in-memory cluster: seed it with ``objects``, talk to it with :meth:`client`.

    ``kinds`` registers custom resource classes (their CRD's scope, plural and status
    subresource come from the class, as ``crdkit gen-crd`` writes them) or
    :class:`~crdkit.testing.FakeKind` descriptions; the built-in kinds of
    :mod:`crdkit.resources` are always served, and a seeded custom resource registers its
    class. ``clock`` gives the timestamps it writes; ``history`` is how many writes a watch
    can replay (older resourceVersions answer 410 Gone, see :meth:`compact`).
    """

    def __init__(
        self,
        objects: Iterable[KubernetesObject | dict[str, Any]] = (),
        *,
        kinds: Iterable[type[KubernetesObject] | FakeKind] = (),
        clock: Callable[[], datetime] = _utc_now,
        history: int = 10_000,
    ) -> None:
        if history < 1:
            raise ValueError(f"history must be at least 1, got {history}")
        self.kinds = KindRegistry()
        self.kinds.register(kinds)
        self.server = FakeApiServer(clock=clock, history=history)
        self._transports: list[FakeTransport] = []
        for obj in objects:
            self.add(obj)

    def client(self) -> Client:
        """A new real ``Client`` on this cluster; open it with ``async with``."""
        transport = FakeTransport(self.server, self.kinds)
        self._transports.append(transport)
        return Client(ClientConfig(server=FAKE_SERVER), transport=transport)

    def add(self, obj: KubernetesObject | dict[str, Any]) -> dict[str, Any]:
        """Store ``obj`` now; the stored object as JSON.

        Unlike ``client.create`` it keeps the ``status``, ``uid``, ``creationTimestamp`` and
        ``generation`` it is given (so owner references between seeds can name uids, and a
        reconciler can be tested against any status), and a ``deletionTimestamp`` while it has
        finalizers (an object being deleted)."""
        if isinstance(obj, CustomResource):
            info = type(obj).__resource__
            if info is not None and self.kinds.by_kind(info.group, info.version, info.kind) is None:
                self.kinds.register([type(obj)])
        data = obj.to_dict() if isinstance(obj, KubernetesObject) else dict(obj)
        api_version, kind_name = data.get("apiVersion"), data.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind_name, str):
            raise ValueError("objects: each needs apiVersion and kind")
        kind = self.kinds.for_kind(api_version, kind_name)
        namespace = (data.get("metadata") or {}).get("namespace")
        if kind.info.namespaced and not namespace:
            name = (data.get("metadata") or {}).get("name")
            raise ValueError(f"objects: {kind_name} {name!r} is namespaced: set metadata.namespace")
        return self.server.create(
            kind, namespace if kind.info.namespaced else None, data, seed=True
        )

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest write."""
        return str(self.server.revision)

    def end_watches(self) -> None:
        """End every open watch as the apiserver does at a watch's timeout: watchers resume
        from their last resourceVersion (informers do so by themselves)."""
        for transport in self._transports:
            transport.end_watches()

    def compact(self) -> None:
        """Forget the write history, as an etcd compaction does: a watch from an older
        resourceVersion gets 410 Gone (an informer then relists)."""
        self.server.compact()
