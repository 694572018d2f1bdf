"""Sharded controllers on the apiserver's own Leases: several replicas share a ring's objects.

Turned on with ``Manager(client, sharding=True)`` (``crdkit run --shards``). Every replica is
a shard: it holds a Lease labelled with its ring, its informers see only the objects labelled
for it, and its controllers reconcile only those. One replica, elected on ``<ring>-sharder``,
also runs the :class:`Sharder`, which labels objects with consistent hashing over the live
shards and moves them with a drain handshake when shards join, leave or die. The ring's
elected replica also runs the manager's ``needs_leader`` runnables.

- :mod:`~crdkit.runtime.sharding.labels`: the labels and names;
- :mod:`~crdkit.runtime.sharding.ring`: the hash ring;
- :mod:`~crdkit.runtime.sharding.plan`: the rules for one object and for the membership, pure;
- :mod:`~crdkit.runtime.sharding.member`: a shard's Lease and its reconcile gate;
- :mod:`~crdkit.runtime.sharding.sharder`: the sharder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.runtime.sharding.labels import (
        MEMBERS_ANNOTATION,
        ORPHANS_ANNOTATION,
        RING_LABEL,
        SHARD_ID_LABEL,
        default_shard_id,
        drain_label,
        lease_name,
        members_lease_name,
        shard_label,
        shard_selector,
    )
    from crdkit.runtime.sharding.member import ShardMember
    from crdkit.runtime.sharding.plan import (
        Action,
        Membership,
        Placement,
        next_membership,
        next_step,
    )
    from crdkit.runtime.sharding.ring import HashRing, object_key
    from crdkit.runtime.sharding.sharder import Sharder, SharderStats

# Lazy: the options module checks names with ``labels`` alone, without the sharder's imports.
_HOMES = {
    "crdkit.runtime.sharding.labels": (
        "MEMBERS_ANNOTATION",
        "ORPHANS_ANNOTATION",
        "RING_LABEL",
        "SHARD_ID_LABEL",
        "default_shard_id",
        "drain_label",
        "lease_name",
        "members_lease_name",
        "shard_label",
        "shard_selector",
    ),
    "crdkit.runtime.sharding.member": ("ShardMember",),
    "crdkit.runtime.sharding.plan": (
        "Action",
        "Membership",
        "Placement",
        "next_membership",
        "next_step",
    ),
    "crdkit.runtime.sharding.ring": ("HashRing", "object_key"),
    "crdkit.runtime.sharding.sharder": ("Sharder", "SharderStats"),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "MEMBERS_ANNOTATION",
    "ORPHANS_ANNOTATION",
    "RING_LABEL",
    "SHARD_ID_LABEL",
    "Action",
    "HashRing",
    "Membership",
    "Placement",
    "ShardMember",
    "Sharder",
    "SharderStats",
    "default_shard_id",
    "drain_label",
    "lease_name",
    "members_lease_name",
    "next_membership",
    "next_step",
    "object_key",
    "shard_label",
    "shard_selector",
]
