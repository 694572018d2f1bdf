"""The sharder: the one replica of a ring (elected on ``<ring>-sharder``) that assigns objects.

It watches the ring's shard Leases and, metadata only and unfiltered, the ring's primary and
owned kinds. A shard is live while its Lease has a holder and keeps being renewed: as leader
election does, the sharder notes *its own* clock time whenever a Lease's record changes and
counts the shard dead ``leaseDurationSeconds`` after that (a released Lease, with no holder,
is dead at once). Each object then gets the step :func:`~crdkit.runtime.sharding.plan.next_step`
names, written as a merge patch of its labels guarded by the resourceVersion the sharder saw:

- a new object is labelled for its shard on the hash ring of live shards;
- when a shard joins, the objects the ring now gives it are drained from their live shards
  (each lets go itself, then the sharder labels it for the new one);
- when a shard dies, its objects are labelled for their new shards at once;
- an owned object (a controller reference to a primary kind of the ring) carries the shard its
  owner's label names, relabelled when the owner moves, so its events reach the shard that
  reconciles the owner.

The ring is built from the *members* the sharder publishes on the Lease ``<ring>-members``
(:func:`~crdkit.runtime.sharding.plan.next_membership`), written before any label that
follows from it. A dead shard leaves the members at once, with its label among the orphans,
which the survivors take over while their labels are rewritten; a live shard joins only once
no object carries an orphan's label.

Only the objects whose shard changes are written. The work goes through a work queue (one key
per object, deduplicated, retried with backoff on a conflict), ``concurrency`` writes at a time,
a quarter of that for orphans (the survivors already reconcile them). Looking at every object
(after the sync, and when the members change) is a sweep over the stores' keys that feeds the
queue a few at a time; the sharder queues an object otherwise only when its ring labels or its
controller reference change.
A replica that is not the sharder holds none of this: its informers start when it is elected.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import Counter, Gauge

from crdkit.client.discovery import GroupVersionKind
from crdkit.client.errors import Conflict, KubernetesError, NotFound
from crdkit.client.objects import split_key
from crdkit.resources import Lease, ObjectMeta, PartialObjectMetadata, resource_info
from crdkit.runtime.factory import SharedInformerFactory
from crdkit.runtime.informer import Informer
from crdkit.runtime.informer_handlers import event_origin
from crdkit.runtime.metrics import families_in
from crdkit.runtime.owners import controller_of
from crdkit.runtime.queue import QueueShutDown, WorkQueue
from crdkit.runtime.sharding.labels import (
    RING_LABEL,
    SHARD_ID_LABEL,
    drain_label,
    labels_of,
    members_lease_name,
    shard_label,
)
from crdkit.runtime.sharding.plan import (
    Action,
    Membership,
    Placement,
    next_membership,
    next_step,
)
from crdkit.runtime.sharding.ring import DEFAULT_TOKENS, HashRing, object_key

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from prometheus_client import CollectorRegistry

    from crdkit.client import Client
    from crdkit.resources import KubernetesObject, ResourceInfo

__all__ = ["Sharder", "SharderStats"]

log = logging.getLogger("crdkit.runtime.sharding")

_NO_WRITE = object()

_Key = tuple[int, str | None, str]
"""(index of the kind in :attr:`Sharder.kinds`, namespace, name)."""


@dataclass
class SharderStats:
    """What the sharder did, for its tests and the sharding bench."""

    writes: dict[str, int] = field(default_factory=lambda: {"assign": 0, "drain": 0, "undrain": 0})
    conflicts: int = 0
    membership_changes: int = 0
    last_membership_change: float | None = None
    """When (the sharder's clock) the members last changed."""
    publications: int = 0
    """Writes of the members Lease."""


@dataclass(frozen=True)
class _SharderMetrics:
    live_shards: Gauge
    members: Gauge
    orphans: Gauge
    writes: Counter
    conflicts: Counter


def _create_metrics(registry: CollectorRegistry) -> _SharderMetrics:
    return _SharderMetrics(
        live_shards=Gauge(
            "crdkit_sharder_live_shards",
            "Shards of the ring whose Leases the sharder counts as live (joiners included)",
            ("ring",),
            registry=registry,
        ),
        members=Gauge(
            "crdkit_sharder_members",
            "Shards the ring is built from, as published",
            ("ring",),
            registry=registry,
        ),
        orphans=Gauge(
            "crdkit_sharder_orphans",
            "Shards outside the ring whose labels objects still carry (taken over, not yet "
            "relabelled)",
            ("ring",),
            registry=registry,
        ),
        writes=Counter(
            "crdkit_sharder_writes_total",
            "Label writes of the sharder by step: assign, drain or undrain",
            ("ring", "op"),
            registry=registry,
        ),
        conflicts=Counter(
            "crdkit_sharder_conflicts_total",
            "Label writes refused for a stale resourceVersion (retried)",
            ("ring",),
            registry=registry,
        ),
    )


@dataclass(frozen=True)
class _Kind:
    kind: type[KubernetesObject]
    primary: bool
    info: ResourceInfo
    untyped: GroupVersionKind
    """The kind, untyped: a patch's answer is then not validated into the model, which the
    sharder never reads (a third of its CPU per write, for a small CRD)."""

    @classmethod
    def of(cls, kind: type[KubernetesObject], *, primary: bool) -> _Kind:
        info = resource_info(kind)
        return cls(kind, primary, info, GroupVersionKind(info.group, info.version, info.kind))


def _slimmer(*keep: str) -> Callable[[PartialObjectMetadata], PartialObjectMetadata]:
    """What the sharder keeps of an object: its name, namespace and version, the labels
    ``keep`` names (the ring's) and its controller reference. The rest (managed fields,
    annotations, the uid, other labels) is most of the metadata's bytes, and the sharder's
    replica holds every object of the ring."""

    def slim(obj: PartialObjectMetadata) -> PartialObjectMetadata:
        metadata = obj.metadata
        metadata.managed_fields = None
        metadata.annotations = {}
        metadata.uid = None
        metadata.generation = None
        metadata.creation_timestamp = None
        metadata.finalizers = []
        labels = metadata.labels
        metadata.labels = {key: labels[key] for key in keep if key in labels}
        metadata.owner_references = [ref for ref in metadata.owner_references if ref.controller]
        return obj

    return slim


class Sharder:
    """Assigns the objects of ``ring``; :meth:`run` until cancelled (see the module docstring)."""

    def __init__(
        self,
        client: Client,
        *,
        ring: str,
        lease_namespace: str,
        primary_kinds: Sequence[type[KubernetesObject]],
        owned_kinds: Sequence[type[KubernetesObject]] = (),
        namespace: str | None = None,
        concurrency: int = 16,
        tokens: int = DEFAULT_TOKENS,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if not primary_kinds:
            raise ValueError("primary_kinds: a ring needs at least one kind to shard")
        self.client = client
        self.ring = ring
        self.lease_namespace = lease_namespace
        self.namespace = namespace
        self.concurrency = concurrency
        self.tokens = tokens
        self.label = shard_label(ring)
        self.drain = drain_label(ring)
        self.registry = registry
        self._clock = clock
        owned = [kind for kind in dict.fromkeys(owned_kinds) if kind not in primary_kinds]
        self.kinds = [
            *(_Kind.of(k, primary=True) for k in dict.fromkeys(primary_kinds)),
            *(_Kind.of(k, primary=False) for k in owned),
        ]
        # An owner reference names (apiVersion group, kind): which primary kind it is.
        self._primary_index = {
            (k.info.group, k.info.kind): index for index, k in enumerate(self.kinds) if k.primary
        }
        # Owner key: the keys of the owned objects that name it, and back.
        self._owned_by: dict[_Key, set[_Key]] = {}
        self._owner_key: dict[_Key, _Key] = {}
        self.stats = SharderStats()
        self._metrics = families_in(registry, _create_metrics)
        self.live: frozenset[str] = frozenset()
        """The members: the shards the ring is built from (see :attr:`published`)."""
        self.alive: frozenset[str] = frozenset()
        """The shards whose Leases are live (a joiner is alive before it is a member)."""
        self.published = Membership()
        """The membership on the members Lease, as last read or written."""
        self.members_lease = members_lease_name(ring)
        self._held: dict[str, int] = {}  # shard label: how many objects carry it
        self._orphan_writes = asyncio.Semaphore(max(1, concurrency // 4))
        self._sweep: Iterator[tuple[int, str]] | None = None  # (kind index, store key)
        self._swept = False  # since the informers synced
        # The version of the members Lease this sharder's last write replaced (None: it
        # created the Lease), until its cache shows a newer one.
        self._overwritten: str | object | None = _NO_WRITE
        self._ring = HashRing((), tokens)
        self._seen: dict[str, tuple[str | None, float]] = {}  # lease name: (version, seen at)
        self._stores: list[Informer[Any]] = []
        self._leases: Informer[Lease] | None = None
        self._membership_changed = asyncio.Event()
        self.queue: WorkQueue[_Key] = WorkQueue(f"sharder-{ring}", registry=registry, max_wait=None)

    # -- membership ---------------------------------------------------------------------------

    def _live_shards(self, now: float) -> tuple[frozenset[str], float | None, dict[str, str]]:
        """The live shards, when (this clock) the next of them expires if not renewed, and the
        Leases (name: shard) of live shards that just ran out, still to be confirmed."""
        assert self._leases is not None
        live = set()
        next_expiry: float | None = None
        names = set()
        expired: dict[str, str] = {}
        for lease in self._leases.store.list():
            name = lease.metadata.name or ""
            if name == self.members_lease:
                continue
            names.add(name)
            version = lease.metadata.resource_version
            seen = self._seen.get(name)
            if seen is None:
                seen = (version, now - self._age_at_first_sight(lease))
                self._seen[name] = seen
            elif seen[0] != version:
                seen = (version, now)
                self._seen[name] = seen
            shard = labels_of(lease).get(SHARD_ID_LABEL)
            if not shard or not lease.spec.holder_identity:
                continue
            expires = seen[1] + float(lease.spec.lease_duration_seconds or 0)
            if expires <= now:
                if shard in self.live:
                    expired[name] = shard
                continue
            live.add(shard)
            next_expiry = expires if next_expiry is None else min(next_expiry, expires)
        for gone in set(self._seen) - names:
            del self._seen[gone]
        return frozenset(live), next_expiry, expired

    async def _renewed_after_all(self, expired: dict[str, str]) -> bool:
        """Read each Lease that ran out from the apiserver itself before its shard's objects
        are given away: a watch that fell behind (a slow or broken connection) must not make
        a live shard look dead. Whether any was renewed after all (its new version counts as
        seen now)."""
        renewed = False
        for name in expired:
            try:
                lease = await self.client.get(Lease, name, namespace=self.lease_namespace)
            except NotFound:
                continue
            except KubernetesError as error:
                # Unconfirmed either way: the Lease ran out as far as anyone here can tell,
                # and a shard that cannot renew stops before its lease duration.
                log.warning("ring %s: could not read Lease %s: %s", self.ring, name, error)
                continue
            version = lease.metadata.resource_version
            if version != self._seen.get(name, (None, 0.0))[0] and lease.spec.holder_identity:
                self._seen[name] = (version, self._clock())
                renewed = True
        return renewed

    @staticmethod
    def _age_at_first_sight(lease: Lease) -> float:
        """How long ago a Lease seen for the first time was renewed, by its ``renewTime``.

        Only then is the shard's wall clock trusted (afterwards, as in leader election, only
        this process's clock counts): a sharder elected after its predecessor died with a
        shard would otherwise give every dead shard a whole lease duration more.
        """
        renewed = lease.spec.renew_time
        if renewed is None:
            return 0.0
        return max(0.0, (datetime.now(UTC) - renewed).total_seconds())

    async def _update_membership(self) -> float | None:
        """Bring the members up to date (published first); when to look again at the latest
        (``None``: not before a Lease or an orphan count changes)."""
        live, next_expiry, expired = self._live_shards(self._clock())
        if expired and await self._renewed_after_all(expired):
            live, next_expiry, _ = self._live_shards(self._clock())
        self.alive = live
        self._metrics.live_shards.labels(self.ring).set(len(live))
        self._read_published()
        target = next_membership(self.published, live, frozenset(self._held))
        if target != self.published and not await self._publish(target):
            retry = self._clock() + 1.0  # the apiserver refused: try again shortly
            return retry if next_expiry is None else min(next_expiry, retry)
        self._metrics.members.labels(self.ring).set(len(target.members))
        self._metrics.orphans.labels(self.ring).set(len(target.orphans))
        members = target.members
        if members == self.live:
            if not self._swept:
                self._enqueue_everything()  # the first round looks at every object
            return next_expiry
        joined, left = sorted(members - self.live), sorted(self.live - members)
        log.info(
            "ring %s: %d members (joined %s, left %s; orphans %s)",
            self.ring,
            len(members),
            ", ".join(joined) or "none",
            ", ".join(left) or "none",
            ", ".join(sorted(target.orphans)) or "none",
            extra={"fields": {"ring": self.ring, "shards": sorted(members)}},
        )
        self.live = members
        self._ring = HashRing(members, self.tokens)
        self.stats.membership_changes += 1
        self.stats.last_membership_change = self._clock()
        self._enqueue_everything()
        return next_expiry

    def _read_published(self) -> None:
        assert self._leases is not None
        lease = self._leases.store.get_by_name(self.members_lease, self.lease_namespace)
        version = lease.metadata.resource_version if lease is not None else None
        if version == self._overwritten:
            return  # the cache has not seen this sharder's last write yet: that write holds
        self._overwritten = _NO_WRITE
        # Deleted (by hand): nothing is published, and the shards, which now count themselves
        # out of the ring, wait for it to be written again.
        annotations = lease.metadata.annotations if lease is not None else None
        self.published = Membership.from_annotations(annotations)

    async def _publish(self, membership: Membership) -> bool:
        """Write ``membership`` on the members Lease; whether it was written."""
        assert self._leases is not None
        lease = self._leases.store.get_by_name(self.members_lease, self.lease_namespace)
        annotations = membership.annotations()
        try:
            if lease is None:
                await self.client.create(
                    Lease(
                        metadata=ObjectMeta(
                            name=self.members_lease,
                            namespace=self.lease_namespace,
                            labels={RING_LABEL: self.ring},
                            annotations=annotations,
                        )
                    )
                )
            else:
                # An update (the ring's RBAC grants the Lease verbs an elector uses), guarded
                # by the resourceVersion the cache holds.
                changed = lease.model_copy(deep=True)
                changed.metadata.annotations = {**changed.metadata.annotations, **annotations}
                await self.client.replace(changed)
        except KubernetesError as error:
            # A conflict or a create that lost a race: the cache catches up and the next
            # round reads what is there.
            log.warning(
                "ring %s: could not publish the members on Lease %s: %s",
                self.ring,
                self.members_lease,
                error,
            )
            return False
        self.published = membership
        self._overwritten = lease.metadata.resource_version if lease is not None else None
        self.stats.publications += 1
        return True

    def _enqueue_everything(self) -> None:
        """Look at every object again: a sweep over the stores' keys, fed to the queue a few
        at a time (:meth:`_refill`), so that ten thousand objects are never ten thousand
        queue entries at once. A new sweep replaces one under way."""
        # By key: decoding every object to read its name would hold the whole ring decoded.
        self._swept = True
        self._sweep = (
            (index, key)
            for index, store in enumerate(self._stores)
            for key in store.store.keys()  # noqa: SIM118 - iterating a Store decodes objects
        )
        self._refill()

    def _refill(self) -> None:
        """Top the queue up from the sweep, to a few keys for each worker."""
        if self._sweep is None:
            return
        room = 4 * self.concurrency - len(self.queue)
        for index, key in self._sweep:
            self.queue.add((index, *split_key(key)))
            room -= 1
            if room <= 0:
                return
        self._sweep = None

    def assignments(self, kind: type[KubernetesObject]) -> dict[tuple[str | None, str], str | None]:
        """``(namespace, name)`` of every object of ``kind`` the sharder sees: the shard its
        label names (``None``: unassigned), as of the sharder's cache; empty before it runs."""
        for index, spec in enumerate(self.kinds):
            if spec.kind is kind and index < len(self._stores):
                return {
                    (o.metadata.namespace, o.metadata.name or ""): labels_of(o).get(self.label)
                    for o in self._stores[index].store
                }
        if any(spec.kind is kind for spec in self.kinds):
            return {}
        raise ValueError(f"{kind.__name__} is not a kind of ring {self.ring}")

    # -- decisions -----------------------------------------------------------------------------

    def desired_shard(self, index: int, obj: Any) -> str | None:
        """The live shard the object belongs on (``None``: none yet, or not of this ring).

        A primary object's is the ring's answer; an owned object's is its owner's shard as the
        owner's label names it now, so that the owned object's events follow the owner only
        once the owner itself has moved (not while it drains)."""
        spec = self.kinds[index]
        if spec.primary:
            info = spec.info
            return self._ring.shard_for(
                object_key(info.group, info.kind, obj.metadata.namespace, obj.metadata.name)
            )
        owner = self._owner_of(obj)
        if owner is None:
            return None
        owner_index, namespace, name = owner
        holder = self._stores[owner_index].store.get_by_name(name, namespace)
        shard = labels_of(holder).get(self.label) if holder is not None else None
        return shard if shard in self.live else None

    def _owner_of(self, obj: Any) -> _Key | None:
        """The key of the primary object a controller reference of ``obj`` names, if any."""
        ref = controller_of(obj)
        if ref is None:
            return None
        index = self._primary_index.get((ref.api_version.rpartition("/")[0], ref.kind))
        return None if index is None else (index, obj.metadata.namespace, ref.name)

    def step_for(self, index: int, obj: Any) -> Action | None:
        """What to write on ``obj`` now (``None``: nothing)."""
        labels = labels_of(obj)
        placement = Placement(labels.get(self.label) or None, bool(labels.get(self.drain)))
        desired = self.desired_shard(index, obj)
        if desired is None and placement.shard is None:
            return None
        primary = self.kinds[index].primary
        if not primary and placement.shard not in self.live and self._without_owner(obj):
            # An owned object of a dead shard whose owner is gone (the garbage collector's
            # to delete) would be an orphan for ever, and hold every joiner back.
            return Action("assign", None)
        return next_step(placement, desired, self.live, handshake=primary)

    def _without_owner(self, obj: Any) -> bool:
        owner = self._owner_of(obj)
        if owner is None:
            return True
        owner_index, namespace, name = owner
        return self._stores[owner_index].store.get_by_name(name, namespace) is None

    async def _process(self, key: _Key) -> None:
        index, namespace, name = key
        spec = self.kinds[index]
        obj = self._stores[index].store.get_by_name(name, namespace)
        if obj is None:
            self._forget_owned(key)
            self.queue.forget(key)
            return
        action = self.step_for(index, obj)
        if action is None:
            self.queue.forget(key)
            return
        labels: dict[str, str | None]
        if action.op == "assign":
            labels = {self.label: action.shard, self.drain: None}
        elif action.op == "drain":
            labels = {self.drain: "true"}
        else:
            labels = {self.drain: None}
        patch = {"metadata": {"labels": labels, "resourceVersion": obj.metadata.resource_version}}
        held = labels_of(obj).get(self.label)
        # An orphan is already being reconciled by the survivor that took it over: its new
        # label is bookkeeping, so it leaves most of the apiserver to the survivors' work.
        pace = self._orphan_writes if held and held not in self.live else contextlib.nullcontext()
        try:
            async with pace:
                await self.client.patch(spec.untyped, name, patch, namespace=namespace)
        except NotFound:
            self.queue.forget(key)
            return
        except Conflict:
            # Changed since the cached copy (a shard let it go, a user edited it): the new
            # version's event queues it again, and the backoff bounds a hot object's retries.
            self.stats.conflicts += 1
            self._metrics.conflicts.labels(self.ring).inc()
            self.queue.add_rate_limited(key)
            return
        except KubernetesError as error:
            log.warning("ring %s: could not label %s/%s: %s", self.ring, namespace, name, error)
            self.queue.add_rate_limited(key)
            return
        self.stats.writes[action.op] += 1
        self._metrics.writes.labels(self.ring, action.op).inc()
        self.queue.forget(key)

    # -- running -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Watch, assign and move until cancelled."""
        factory = SharedInformerFactory(self.client, registry=self.registry)
        self._leases = factory.informer(
            Lease, namespace=self.lease_namespace, label_selector=f"{RING_LABEL}={self.ring}"
        )
        self._leases.add_event_handler(
            lambda _lease: self._membership_changed.set(),
            lambda _old, _new: self._membership_changed.set(),
            lambda _lease: self._membership_changed.set(),
            reads_old=False,
        )
        informers: list[Informer[PartialObjectMetadata]] = []
        self._stores = []
        for spec in self.kinds:
            namespace = self.namespace if spec.info.namespaced else None
            informer = Informer.for_metadata(
                self.client,
                spec.kind,
                namespace=namespace,
                transform=_slimmer(self.label, self.drain),
                # Nothing to re-check: every decision follows from an event or a change of
                # the members, and each of those is acted on (or retried) already.
                resync_period=None,
                registry=self.registry,
            )
            informers.append(informer)
            informer.add_event_handler(*self._handlers(len(self._stores)))
            self._stores.append(informer)
        workers: list[asyncio.Task[None]] = []
        try:
            await factory.start()
            for informer in informers:
                await informer.start()
            await factory.wait_for_sync()
            for informer in informers:
                await informer.wait_for_sync()
                # The counts of labels too: the first decision on the members reads them.
                await informer.drain()
            log.info("sharder of ring %s synced", self.ring)
            workers = [
                asyncio.create_task(self._worker(), name=f"sharder-{self.ring}-{i}")
                for i in range(self.concurrency)
            ]
            await self._watch_membership()
        finally:
            self.queue.shut_down()
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            for informer in informers:
                await informer.stop()
            await factory.stop()

    def _handlers(
        self, index: int
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        primary = self.kinds[index].primary

        def on_add(obj: Any) -> None:
            key = (index, obj.metadata.namespace, obj.metadata.name)
            self._count(labels_of(obj).get(self.label), 1)
            if not primary:
                self._note_owner(key, obj)
            if event_origin() == "initial-list":
                return  # the sweep after the sync looks at each
            self.queue.add(key)
            if primary:
                self._enqueue_owned(key)

        def on_update(old: Any, new: Any) -> None:
            key = (index, new.metadata.namespace, new.metadata.name)
            before, after = labels_of(old), labels_of(new)
            was, now = before.get(self.label), after.get(self.label)
            if was != now:
                self._count(was, -1)
                self._count(now, 1)
            # Only the ring's labels and the controller reference bear on a decision: a
            # change of spec or status (most updates, every reconcile's status write) is no
            # news to the sharder.
            relabelled = was != now or before.get(self.drain) != after.get(self.drain)
            if primary:
                # Most relabellings are the echo of the sharder's own write, with nothing
                # left to do: decided here, they never fill the queue.
                if relabelled and self.step_for(index, new) is not None:
                    self.queue.add(key)
                if was != now:
                    self._enqueue_owned(key)  # the owner moved: its owned objects follow
            elif self._note_owner(key, new) or relabelled:
                self.queue.add(key)

        def on_delete(obj: Any) -> None:
            self._count(labels_of(obj).get(self.label), -1)

        return on_add, on_update, on_delete

    def _count(self, shard: str | None, delta: int) -> None:
        """Keep :attr:`_held` (objects by shard label); when a label appears or disappears
        the orphans (and whether a joiner may join) may have changed."""
        if not shard:
            return
        held = self._held.get(shard, 0) + delta
        if held > 0:
            self._held[shard] = held
        else:
            self._held.pop(shard, None)
        if held <= 0 or held == delta:
            self._membership_changed.set()

    def _note_owner(self, key: _Key, obj: Any) -> bool:
        """Remember whose ``obj`` is; whether that changed."""
        owner = self._owner_of(obj)
        if self._owner_key.get(key) == owner:
            return False
        self._forget_owned(key)
        if owner is not None:
            self._owner_key[key] = owner
            self._owned_by.setdefault(owner, set()).add(key)
        return True

    def _forget_owned(self, key: _Key) -> None:
        owner = self._owner_key.pop(key, None)
        if owner is not None:
            owned = self._owned_by.get(owner)
            if owned is not None:
                owned.discard(key)
                if not owned:
                    del self._owned_by[owner]

    def _enqueue_owned(self, owner: _Key) -> None:
        for key in self._owned_by.get(owner, ()):
            self.queue.add(key)

    async def _watch_membership(self) -> None:
        while True:
            self._membership_changed.clear()
            next_expiry = await self._update_membership()
            timeout = None if next_expiry is None else max(0.0, next_expiry - self._clock())
            try:
                async with asyncio.timeout(timeout):
                    await self._membership_changed.wait()
            except TimeoutError:
                pass  # a Lease ran out: look again

    async def _worker(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except QueueShutDown:
                return
            try:
                await self._process(key)
            finally:
                self.queue.done(key)
                self._refill()
