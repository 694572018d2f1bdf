"""``Runnable``: a long-running part of an operator that is not a reconcile loop.

A scheduler's binding loop, a periodic garbage collector, a webhook server: the manager starts
them once the caches are synced (and, for ``needs_leader`` ones, once this replica holds the
Lease), cancels them on shutdown after the controllers had their grace period, and stops with
their exception if one fails, as controller-runtime's ``Runnable`` does::

    class Binder(Runnable):
        rbac = (("", "pods/binding", ["create"]),)

        def setup(self, manager: Manager) -> None:
            self.pods = manager.informers.informer(Pod)   # started with the other caches

        async def run(self, manager: Manager) -> None:
            while True:
                ...

    manager.add_runnable(Binder())

``rbac`` is what ``crdkit gen-rbac`` grants for it: list the class in a reconciler's
``runnables``, or name it on the command line (``crdkit gen-rbac mod:Binder``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.runtime.manager import Manager
    from crdkit.runtime.reconciler import RbacRule

__all__ = ["Runnable"]


class Runnable:
    """Base class of runnables; see the module docstring."""

    needs_leader: ClassVar[bool] = True
    """Start only while this replica holds the Lease (when leader election is on)."""

    rbac: ClassVar[Sequence[RbacRule]] = ()
    """What it touches, for ``crdkit gen-rbac``: ``(api_group, resource, verbs)``; a resource
    may be a subresource, like ``"pods/binding"``."""
    home_rbac: ClassVar[Sequence[RbacRule]] = ()
    """What it touches in the operator's own namespace (where its Lease is: the manager's
    ``home_namespace``), granted by ``crdkit gen-rbac`` in the Lease's Role rather than
    everywhere: a scheduler's published queue, a status ConfigMap."""

    def setup(self, manager: Manager) -> None:
        """Called by :meth:`Manager.add_runnable`: register informers and handlers here, so
        that they start (and sync) with the manager's caches."""

    async def run(self, manager: Manager) -> None:
        """Run until cancelled (or return when done); raising stops the manager."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement run()")
