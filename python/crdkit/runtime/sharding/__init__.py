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

# Lazy: the options module checks names with ``labels`` alone, without the sharder's imports.
if TYPE_CHECKING:
    from crdkit.runtime.sharding.labels import MEMBERS_ANNOTATION as MEMBERS_ANNOTATION
    from crdkit.runtime.sharding.labels import ORPHANS_ANNOTATION as ORPHANS_ANNOTATION
    from crdkit.runtime.sharding.labels import RING_LABEL as RING_LABEL
    from crdkit.runtime.sharding.labels import SHARD_ID_LABEL as SHARD_ID_LABEL
    from crdkit.runtime.sharding.labels import default_shard_id as default_shard_id
    from crdkit.runtime.sharding.labels import drain_label as drain_label
    from crdkit.runtime.sharding.labels import lease_name as lease_name
    from crdkit.runtime.sharding.labels import members_lease_name as members_lease_name
    from crdkit.runtime.sharding.labels import shard_label as shard_label
    from crdkit.runtime.sharding.labels import shard_selector as shard_selector
    from crdkit.runtime.sharding.member import ShardMember as ShardMember
    from crdkit.runtime.sharding.plan import Action as Action
    from crdkit.runtime.sharding.plan import Membership as Membership
    from crdkit.runtime.sharding.plan import Placement as Placement
    from crdkit.runtime.sharding.plan import next_membership as next_membership
    from crdkit.runtime.sharding.plan import next_step as next_step
    from crdkit.runtime.sharding.ring import HashRing as HashRing
    from crdkit.runtime.sharding.ring import object_key as object_key
    from crdkit.runtime.sharding.sharder import Sharder as Sharder
    from crdkit.runtime.sharding.sharder import SharderStats as SharderStats

__getattr__, __dir__ = lazy_namespace(__name__, globals())
