"""The queues as the view shows them (with ``--queues``): each queue's quota and use by
flavor and resource, its weighted share, and its gangs, from the quota gate's last pass."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crdkit.scheduling.queues.gate import QueueGate
    from crdkit.scheduling.view.format import QueueResourceView, QueueView

__all__ = ["queue_views"]


def queue_views(gate: QueueGate | None) -> list[QueueView]:
    """Every queue the gate knows, by name; none without queues."""
    if gate is None:
        return []
    tree, usage = gate.tree, gate.usage
    pending = gate.pending()
    views: list[QueueView] = []
    for name, queue in sorted(tree.queues.items()):
        resources: list[QueueResourceView] = [
            {
                "flavor": flavor.name,
                "resource": resource,
                "nominal": tree.own_nominal(name, (flavor.name, resource)) // 1000,
                "used": tree.usage_of(name, (flavor.name, resource), usage) // 1000,
                "borrowed": tree.borrowed(name, (flavor.name, resource), usage) // 1000,
            }
            for flavor in queue.flavors
            for resource in sorted(flavor.limits)
        ]
        share = tree.share(name, usage)
        views.append(
            {
                "name": name,
                "parent": queue.parent,
                "weight": queue.weight,
                "share": round(share * 100, 2) if math.isfinite(share) else None,
                "pending": pending.get(name, 0),
                "admitted": gate.admitted.get(name, 0),
                "resources": resources,
            }
        )
    return views
