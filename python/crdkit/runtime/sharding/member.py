"""One shard of a ring: its Lease, and the gate in front of its reconciles.

The shard holds ``<ring>-shard-<id>`` (a Lease labelled with its ring and id) for as long as it
runs, renewed like a leader's; if it cannot renew within the renew deadline it stops its
controllers at once, before the sharder (which waits the whole lease duration) gives its
objects away. Its informers see only objects labelled for it.

The gate runs in the worker, where the work queue already guarantees that no two reconciles of
one object overlap. An object the sharder asked to drain is not reconciled: the shard drops
its labels instead (guarded by the resourceVersion it saw), which is the acknowledgement the
sharder waits for before it gives the object to another shard. An object whose cached copy no
longer names this shard (a stale cache after the hand-off) is not reconciled either.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from crdkit.client.errors import Conflict, NotFound
from crdkit.runtime.leader import LeaderElectionConfig, LeaderElector
from crdkit.runtime.result import Request
from crdkit.runtime.sharding.labels import (
    RING_LABEL,
    SHARD_ID_LABEL,
    drain_label,
    labels_of,
    lease_name,
    shard_label,
    shard_selector,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from prometheus_client import CollectorRegistry

    from crdkit.client import Client
    from crdkit.runtime.controller import Controller
    from crdkit.runtime.ratelimit import Clock

__all__ = ["ShardMember"]

log = logging.getLogger("crdkit.runtime.sharding")


class ShardMember:
    """``shard`` of ``ring``: its Lease (:attr:`elector`) and the gate of its controllers."""

    def __init__(
        self,
        client: Client,
        *,
        ring: str,
        shard: str,
        identity: str,
        lease_namespace: str,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        registry: CollectorRegistry | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.client = client
        self.ring = ring
        self.shard = shard
        self.label = shard_label(ring)
        self.drain = drain_label(ring)
        self.selector = shard_selector(ring, shard)
        self.handed_off = 0
        """Objects this shard let go on the sharder's request."""
        self.elector = LeaderElector(
            client,
            LeaderElectionConfig(
                lease_name=lease_name(ring, shard),
                lease_namespace=lease_namespace,
                identity=identity,
                lease_duration=lease_duration,
                renew_deadline=renew_deadline,
                retry_period=retry_period,
                labels=((RING_LABEL, ring), (SHARD_ID_LABEL, shard)),
            ),
            registry=registry,
            clock=clock,
        )

    def admit_for(self, kind: type[Any]) -> Callable[[Any], Any]:
        """The gate of a controller of ``kind``: ``await gate(obj)`` says whether to reconcile."""

        async def admit(obj: Any) -> bool:
            labels = labels_of(obj)
            if labels.get(self.label) != self.shard:
                return False  # a stale copy: the object has moved on
            if not labels.get(self.drain):
                return True
            await self._acknowledge(kind, obj)
            return False

        return admit

    async def _acknowledge(self, kind: type[Any], obj: Any) -> None:
        metadata = obj.metadata
        patch = {
            "metadata": {
                "labels": {self.label: None, self.drain: None},
                "resourceVersion": metadata.resource_version,
            }
        }
        try:
            await self.client.patch(kind, metadata.name, patch, namespace=metadata.namespace)
        except (Conflict, NotFound):
            # Changed since this copy (the change's event brings it back here if it is still
            # ours to let go) or gone: nothing to acknowledge now.
            return
        self.handed_off += 1
        log.debug(
            "handed off %s/%s",
            metadata.namespace,
            metadata.name,
            extra={"fields": {"shard": self.shard}},
        )

    def drain_handlers(
        self, controller: Controller[Any]
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None]]:
        """Handlers that queue an object as soon as it is asked to drain, whatever the
        controller's own predicates think of a label change."""
        namespaced = controller.info.namespaced

        def request(obj: Any) -> None:
            if labels_of(obj).get(self.drain):
                metadata = obj.metadata
                controller.queue.add(
                    Request(metadata.namespace if namespaced else None, metadata.name)
                )

        def on_update(_old: Any, new: Any) -> None:
            request(new)

        return request, on_update
