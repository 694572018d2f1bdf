"""Where each run of a scenario happens: a clean cluster (FakeCluster) or a clean namespace
(a real apiserver), made anew for every run so that no run sees another's objects."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Protocol

from crdkit.client import Client
from crdkit.testing.fake.cluster import FakeCluster

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from crdkit.resources import KubernetesObject
    from crdkit.testing.envtest.control_plane import ControlPlane
    from crdkit.testing.fake.kinds import FakeKind

__all__ = ["ControlPlaneSite", "CrashSite", "CrashTarget", "FakeClusterSite"]


class CrashSite(Protocol):
    """One run's place: its namespace, and new (unopened) clients on it."""

    @property
    def namespace(self) -> str: ...

    def client(self) -> Client: ...

    async def close(self) -> None: ...


class CrashTarget(Protocol):
    """Makes a clean :class:`CrashSite` for each run."""

    async def site(self) -> CrashSite: ...

    @property
    def virtual_time(self) -> bool:
        """Whether runs are on a virtual clock where waiting costs nothing (FakeCluster)."""
        ...


class _FakeSite:
    def __init__(self, cluster: FakeCluster, namespace: str) -> None:
        self.cluster = cluster
        self.namespace = namespace

    def client(self) -> Client:
        return self.cluster.client()

    async def close(self) -> None:
        return None


class FakeClusterSite:
    """A new :class:`~crdkit.testing.FakeCluster` for every run, serving ``kinds`` and seeded
    with ``objects`` (a function of the namespace, or a list)."""

    virtual_time = True

    def __init__(
        self,
        kinds: Iterable[type[KubernetesObject] | FakeKind] = (),
        *,
        objects: Callable[[str], Iterable[KubernetesObject | dict[str, Any]]]
        | Iterable[KubernetesObject | dict[str, Any]] = (),
        namespace: str = "crash",
    ) -> None:
        self.kinds = list(kinds)
        self.objects = objects
        self.namespace = namespace

    async def site(self) -> CrashSite:
        seeds = self.objects(self.namespace) if callable(self.objects) else self.objects
        return _FakeSite(FakeCluster(seeds, kinds=self.kinds), self.namespace)


class _PlaneSite:
    def __init__(self, plane: ControlPlane, namespace: str) -> None:
        self.plane = plane
        self.namespace = namespace

    def client(self) -> Client:
        return Client.from_control_plane(self.plane)

    async def close(self) -> None:
        # With no controller-manager it stays Terminating; no later run reads it.
        await self.plane.delete_namespace(self.namespace)


class ControlPlaneSite:
    """A fresh namespace on a real apiserver (``crdkit.testing.ControlPlane``) for every run.

    Cluster-scoped objects are shared by the runs: a scenario should keep to its namespace.
    """

    virtual_time = False

    def __init__(self, plane: ControlPlane, *, prefix: str = "crash") -> None:
        self.plane = plane
        self.prefix = prefix

    async def site(self) -> CrashSite:
        namespace = f"{self.prefix}-{uuid.uuid4().hex[:8]}"
        await self.plane.create_namespace(namespace)
        return _PlaneSite(self.plane, namespace)
