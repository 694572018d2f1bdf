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

The shard follows the membership the sharder publishes (:class:`~.plan.Membership`, on the
Lease ``<ring>-members``). Until the shard is a member it reconciles nothing: a shard that
died and came back under the same id must not take up the objects the survivors took over.
While there are orphans (objects still labelled for a dead shard), its informers select
them too, and it reconciles, before the sharder has relabelled them, the orphans the ring of
the members gives it: a dead shard's objects have a live owner as soon as the membership
says it is dead, however long the relabelling takes.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from crdkit.client.errors import Conflict, NotFound
from crdkit.client.objects import split_key
from crdkit.resources import Lease, resource_info
from crdkit.runtime.informer import Informer
from crdkit.runtime.leader import LeaderElectionConfig, LeaderElector
from crdkit.runtime.result import Request
from crdkit.runtime.sharding.labels import (
    RING_LABEL,
    SHARD_ID_LABEL,
    drain_label,
    labels_of,
    lease_name,
    members_lease_name,
    shard_label,
    shard_selector,
)
from crdkit.runtime.sharding.plan import Membership
from crdkit.runtime.sharding.ring import HashRing, object_key

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
        """The selector the shard's informers are made under (and shared by, in the cache);
        while there are orphans they select those too."""
        self.handed_off = 0
        """Objects this shard let go on the sharder's request."""
        self.orphans_admitted = 0
        """Reconciles of orphans this shard took over before the sharder relabelled them."""
        self.membership: Membership | None = None
        """The membership as last published (``None``: not read yet)."""
        self._ring = HashRing(())
        self._followers: list[Informer[Any]] = []
        self._served: list[tuple[Controller[Any], Informer[Any]]] = []
        self.members_informer: Informer[Lease] = Informer(
            client,
            Lease,
            namespace=lease_namespace,
            field_selector=f"metadata.name={members_lease_name(ring)}",
            resync_period=None,
            registry=registry,
        )
        self.members_informer.add_event_handler(
            self._see, lambda _old, new: self._see(new), self._gone, reads_old=False
        )
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

    # -- membership ---------------------------------------------------------------------------

    def follow(self, informer: Informer[Any]) -> None:
        """Let ``informer`` (one of the ring's kinds, made under :attr:`selector`) select the
        orphans too while there are any."""
        if all(informer is not known for known in self._followers):
            self._followers.append(informer)

    def serve(self, controller: Controller[Any], informer: Informer[Any]) -> None:
        """Queue every object of ``informer`` (``controller``'s primary kind) again when the
        membership changes: the gate may answer otherwise now."""
        self._served.append((controller, informer))

    async def start(self) -> None:
        """Follow the published membership (until :meth:`stop`)."""
        await self.members_informer.start()

    async def stop(self) -> None:
        await self.members_informer.stop()

    @property
    def is_member(self) -> bool:
        return self.membership is not None and self.shard in self.membership.members

    def _gone(self, _lease: Lease) -> None:
        self._take(Membership())

    def _see(self, lease: Lease) -> None:
        self._take(Membership.from_annotations(lease.metadata.annotations))

    def _take(self, membership: Membership) -> None:
        if membership == self.membership:
            return
        log.info(
            "ring %s: members %s, orphans %s",
            self.ring,
            ", ".join(sorted(membership.members)) or "none",
            ", ".join(sorted(membership.orphans)) or "none",
            extra={"fields": {"ring": self.ring, "shard": self.shard}},
        )
        was_member = self.is_member
        before = self.membership
        self.membership = membership
        self._ring = HashRing(membership.members)
        member = self.shard in membership.members
        selector = shard_selector(self.ring, self.shard, membership.orphans if member else ())
        for informer in self._followers:
            # Orphans newly selected arrive as additions, and are queued as such.
            informer.reselect(selector)
        if not member:
            return
        if not was_member:
            self._requeue(everything=True)  # the gate refused them all until now
        elif membership.orphans and before is not None and before.members != membership.members:
            self._requeue(everything=False)  # the ring changed: which orphans are whose too

    def _requeue(self, *, everything: bool) -> None:
        """Queue the served objects again: all of them, or the orphans in the store (the
        gate answers for them by the ring)."""
        for controller, informer in self._served:
            namespaced = controller.info.namespaced
            if everything:
                for key in informer.store.keys():  # noqa: SIM118 - iterating decodes objects
                    namespace, name = split_key(key)
                    controller.queue.add(Request.scoped(namespace, name, namespaced=namespaced))
                continue
            orphans = self.membership.orphans if self.membership is not None else frozenset()
            for obj in informer.store:
                if labels_of(obj).get(self.label) in orphans:
                    metadata = obj.metadata
                    request = Request.scoped(
                        metadata.namespace, metadata.name, namespaced=namespaced
                    )
                    controller.queue.add(request)

    # -- the gate -----------------------------------------------------------------------------

    def admit_for(self, kind: type[Any]) -> Callable[[Any], Any]:
        """The gate of a controller of ``kind``: ``await gate(obj)`` says whether to reconcile."""
        info = resource_info(kind)

        async def admit(obj: Any) -> bool:
            membership = self.membership
            if membership is None or self.shard not in membership.members:
                return False  # not (or no longer, or not yet again) a member of the ring
            labels = labels_of(obj)
            holder = labels.get(self.label)
            if holder != self.shard:
                # An orphan the ring gives this shard is taken over; anything else is a stale
                # copy (the object has moved on) or another shard's orphan.
                if holder not in membership.orphans:
                    return False
                metadata = obj.metadata
                key = object_key(info.group, info.kind, metadata.namespace, metadata.name)
                if self._ring.shard_for(key) != self.shard:
                    return False
                self.orphans_admitted += 1
                return True
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
                    Request.scoped(metadata.namespace, metadata.name, namespaced=namespaced)
                )

        def on_update(_old: Any, new: Any) -> None:
            request(new)

        return request, on_update
