"""A small operator of the shape a gang scheduler has, for the runtime-extension tests:
a reconciler with a ``Watch`` and a runnable it adds in ``setup``, and a reconciler of Pods
(``crdkit run`` of it with a role that cannot list Pods must fail cleanly)."""

from __future__ import annotations

from typing import ClassVar

from crdkit import Context, Manager, Reconciler, Runnable, Watch
from crdkit.resources import ConfigMap, Node, Pod


class Binder(Runnable):
    """Would bind Pods to Nodes; here it only needs the rights to."""

    rbac: ClassVar = (("", "pods/binding", ["create"]), ("", "pods", ["get", "list", "watch"]))

    async def run(self, manager: Manager) -> None:
        return None


class GangReconciler(Reconciler[ConfigMap]):
    name = "gang"
    watches = (Watch(Node, metadata_only=True),)
    runnables = (Binder,)

    def setup(self, manager: Manager) -> None:
        manager.add_runnable(Binder())

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        return None


class PodReconciler(Reconciler[Pod]):
    name = "pods"

    async def reconcile(self, ctx: Context, obj: Pod) -> None:
        return None
