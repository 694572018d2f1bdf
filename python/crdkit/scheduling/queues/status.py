"""The `Queue` status, reconciled by crdkit's own runtime from what the scheduler's last pass
saw: per flavor and resource its nominal quota, what it uses, borrows and lends; its weighted
share; its gangs waiting and admitted; and whether the scheduler can admit through it at all
(``Ready``, False with the reason when its parent is missing or its parents form a cycle).

The figures change with every pass, not with the `Queue` object, so each queue is looked at
again every `REFRESH_S` seconds; a status is written only when it changed.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crdkit.placer.quantity import format_quantity
from crdkit.resources.queues import (
    Queue,
    QueueCondition,
    QueueFlavorUsage,
    QueueResourceUsage,
    QueueStatus,
)
from crdkit.runtime.reconciler import Reconciler
from crdkit.runtime.result import Result

if TYPE_CHECKING:
    from collections.abc import Callable

    from crdkit.runtime.context import Context
    from crdkit.scheduling.queues.gate import QueueGate

__all__ = ["REFRESH_S", "QueueStatusReconciler", "queue_status"]

REFRESH_S = 5.0
"""How often a queue's figures are written again, at most (when they changed)."""


def queue_status(gate: QueueGate, queue: Queue, now: datetime) -> QueueStatus:
    """What ``queue``'s status says, from the gate's last pass."""
    name = queue.metadata.name or ""
    tree, usage = gate.tree, gate.usage
    flavors: list[QueueFlavorUsage] = []
    for flavor in queue.spec.flavors or ():
        resources = [
            QueueResourceUsage(
                name=resource.name,
                nominal=format_quantity(tree.own_nominal(name, (flavor.name, resource.name))),
                used=format_quantity(tree.usage_of(name, (flavor.name, resource.name), usage)),
                borrowed=format_quantity(tree.borrowed(name, (flavor.name, resource.name), usage)),
                lent=format_quantity(tree.lent(name, (flavor.name, resource.name), usage)),
            )
            for resource in flavor.resources
        ]
        flavors.append(QueueFlavorUsage(name=flavor.name, resources=resources))
    broken = tree.broken.get(name)
    if broken is not None:
        ready = ("False", "InvalidTree", f"gangs of this queue wait: {broken}")
    elif not tree.is_leaf(name):
        under = ", ".join(tree.children.get(name, []))
        ready = ("True", "Cohort", f"a cohort of {under}: gangs name the queues under it")
    else:
        ready = ("True", "Admitting", "the scheduler admits gangs by this queue's quota")
    share = tree.share(name, usage)
    return QueueStatus(
        observed_generation=queue.metadata.generation,
        conditions=[_condition(queue, *ready, now)],
        flavors=flavors,
        weighted_share=round(share, 6) if math.isfinite(share) else None,
        pending_gangs=gate.pending().get(name, 0),
        admitted_gangs=gate.admitted.get(name, 0),
    )


def _condition(queue: Queue, status: str, reason: str, message: str, now: datetime) -> Any:
    """The Ready condition, keeping its transition time while its status holds."""
    previous = next(
        (c for c in (queue.status.conditions if queue.status else []) if c.type == "Ready"), None
    )
    since = previous.last_transition_time if previous and previous.status == status else now
    return QueueCondition(
        type="Ready",
        status=status,
        reason=reason,
        message=message,
        last_transition_time=since,
        observed_generation=queue.metadata.generation,
    )


class QueueStatusReconciler(Reconciler[Queue]):
    """Writes each `Queue`'s status from ``gate()`` (None until the scheduler is set up)."""

    name = "crdkit-queue-status"

    def __init__(self, gate: Callable[[], QueueGate | None]) -> None:
        self._gate = gate

    async def reconcile(self, ctx: Context, obj: Queue) -> Result:
        gate = self._gate()
        if gate is None or obj.metadata.deletion_timestamp is not None:
            return Result(requeue_after=REFRESH_S)
        status = queue_status(gate, obj, datetime.now(UTC).replace(microsecond=0))
        if obj.status != status:

            def record(queue: Queue) -> None:
                queue.status = status

            await ctx.update_status(obj, record)
        return Result(requeue_after=REFRESH_S)
