"""``Context``: what a reconcile gets besides the object — client, logger, and helpers.

The helpers do the common writes the way controller-runtime operators do them: children by
server-side apply with a controller reference to the reconciled object, status through the
status subresource with conflict retry, and Events about the reconciled object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from crdkit.resources import KubernetesObject
from crdkit.runtime.owners import set_controller_reference
from crdkit.runtime.status import update_status

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from crdkit.client import Client
    from crdkit.runtime.cache import CacheReader
    from crdkit.runtime.events import EventRecorder, EventType
    from crdkit.runtime.logs import ReconcileLogger
    from crdkit.runtime.result import Request

__all__ = ["Context"]

K = TypeVar("K", bound=KubernetesObject)


@dataclass
class Context:
    """One reconcile's context. ``obj`` is the object being reconciled (as read from the cache);
    ``cache`` reads other objects from the shared informers (``get``/``list`` like the client)."""

    client: Client
    request: Request
    controller: str
    reconcile_id: str
    log: ReconcileLogger
    field_manager: str
    recorder: EventRecorder
    cache: CacheReader
    obj: KubernetesObject
    child_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels :meth:`apply` puts on the reconciled object's children: a shard's own, so that
    a child's first events already reach the shard (the sharder would add it a moment later)."""

    async def apply(
        self, child: K, *, owner: KubernetesObject | None = None, force: bool = True
    ) -> K:
        """Server-side apply ``child`` as this controller, controlled by ``owner`` (default: the
        reconciled object), and return it as stored.

        Only the fields set on ``child`` are sent, so fields other managers own are left alone;
        ``force`` takes over fields this controller is meant to own (the usual choice for a
        controller). Changes to the child then reconcile the owner (``owns``).
        """
        set_controller_reference(owner if owner is not None else self.obj, child)
        if owner is None and self.child_labels:
            # Assigned, not updated in place: apply sends only the fields that were set.
            child.metadata.labels = {**self.child_labels, **child.metadata.labels}
        return await self.client.apply(child, field_manager=self.field_manager, force=force)

    async def update_status(self, obj: K, mutate: Callable[[K], None] | None = None) -> K:
        """Write ``obj``'s status with conflict retry; see :func:`crdkit.runtime.update_status`."""
        return await update_status(
            self.client, obj, mutate=mutate, field_manager=self.field_manager
        )

    async def event(
        self,
        type_: EventType,
        reason: str,
        note: str = "",
        *,
        regarding: KubernetesObject | None = None,
        action: str = "Reconcile",
    ) -> None:
        """Record an Event about the reconciled object (or ``regarding``); never raises."""
        await self.recorder.event(
            regarding if regarding is not None else self.obj, type_, reason, note, action=action
        )
