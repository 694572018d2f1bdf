"""The queues as the scheduler reads them: the `Queue` informer's store, decoded into the
quota tree's `QueueDef` records once per change of any queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit.scheduling.queues.tree import FlavorDef, Limits, QueueDef

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from crdkit.resources.queues import Queue
    from crdkit.runtime.store import Store

__all__ = ["StoreBook", "queue_def"]


def queue_def(queue: Queue) -> QueueDef:
    """The quota record of one `Queue` object."""
    spec = queue.spec
    flavors = tuple(
        FlavorDef(
            flavor.name,
            dict(flavor.node_labels or {}),
            {
                resource: Limits(quota.nominal, quota.borrowing_limit, quota.lending_limit)
                for resource, quota in flavor.quotas_milli().items()
            },
        )
        for flavor in spec.flavors or ()
    )
    return QueueDef(
        queue.metadata.name or "",
        spec.parent,
        float(spec.weight),
        flavors,
        spec.preemption.within_queue,
        spec.preemption.fair_share,
        spec.max_run_seconds,
        spec.enforce_max_run_time,
    )


class StoreBook:
    """`crdkit.scheduling.queues.gate.QueueBook` over the `Queue` informer's store."""

    def __init__(self, store: Store[Queue]) -> None:
        self._store = store

    def version(self) -> Hashable:
        keys = self._store.keys()
        return tuple(sorted((key, self._store.version_of(key)) for key in keys))

    def queues(self) -> Sequence[QueueDef]:
        """Every queue not being deleted, decoded (the gate asks once `version` changed)."""
        return [queue_def(q) for q in self._store.list() if q.metadata.deletion_timestamp is None]
